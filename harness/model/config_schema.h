#pragma once
/// Config fields declared as rows {name, type, description, required} (cf. CUTLASS's
/// ArgumentDescription): one name serves as struct field, JSON key, CLI text and report column.
/// The schema turns JSON into a typed config and back, rejecting unknown keys, missing required
/// keys and mistyped values with a config_error that names the key.
#include <nlohmann/json.hpp>

#include <string>
#include <variant>
#include <vector>

#include "reference/common.h"

namespace fb {

using json = nlohmann::json;

/// The JSON type of a config field.
enum class field_type { integer, real, boolean };

/// A type-erased description of one config field, for `list` and reports.
struct field_info {
  std::string name;
  field_type type;
  std::string description;
  bool required;       ///< true: the key must be given (no default in the PyTorch signature)
  json default_value;  ///< KernelBench's default
};

/// One row of a typed schema: a field of config struct C.
template <class C>
struct field {
  std::string name;
  std::variant<int64_t C::*, double C::*, bool C::*> member;
  std::string description;
  bool required = true;
};

/// Builds a row; `required=false` means the PyTorch signature has a default for it.
template <class C, class T>
field<C> make_field(std::string name, T C::*member, std::string description, bool required = true) {
  return field<C>{std::move(name), member, std::move(description), required};
}

/// The schema of config struct C: parse, print, describe.
template <class C>
class config_schema {
 public:
  explicit config_schema(std::vector<field<C>> rows) : m_rows(std::move(rows)) {}

  /// JSON object -> C. Starts from C{} (KernelBench defaults) for optional keys.
  /// Throws ref::config_error naming the key for unknown, missing or mistyped keys.
  [[nodiscard]] C from_json(const json& j) const {
    if (!j.is_object()) throw ref::config_error("config", j.dump(), "must be a JSON object of constructor arguments");
    for (const auto& [key, value] : j.items()) {
      if (!find(key)) throw ref::config_error(key, value.dump(), "is not a key of this model (keys: " + key_list() + ")");
    }
    C c{};
    for (const field<C>& f : m_rows) {
      auto it = j.find(f.name);
      if (it == j.end()) {
        if (f.required) throw ref::config_error(f.name, "(missing)", "is required: " + f.description);
        continue;
      }
      std::visit([&](auto member) { assign(c.*member, *it, f.name); }, f.member);
    }
    return c;
  }

  /// C -> JSON object with every key.
  [[nodiscard]] json to_json(const C& c) const {
    json j = json::object();
    for (const field<C>& f : m_rows) std::visit([&](auto member) { j[f.name] = c.*member; }, f.member);
    return j;
  }

  /// Type-erased rows with defaults taken from C{}.
  [[nodiscard]] std::vector<field_info> describe() const {
    const json defaults = to_json(C{});
    std::vector<field_info> out;
    for (const field<C>& f : m_rows) {
      const field_type t = std::visit([](auto member) { return type_of(member); }, f.member);
      out.push_back({f.name, t, f.description, f.required, defaults.at(f.name)});
    }
    return out;
  }

 private:
  [[nodiscard]] const field<C>* find(const std::string& key) const {
    for (const field<C>& f : m_rows)
      if (f.name == key) return &f;
    return nullptr;
  }
  [[nodiscard]] std::string key_list() const {
    std::string s;
    for (const field<C>& f : m_rows) s += (s.empty() ? "" : ", ") + f.name;
    return s;
  }
  static field_type type_of(int64_t C::*) { return field_type::integer; }
  static field_type type_of(double C::*) { return field_type::real; }
  static field_type type_of(bool C::*) { return field_type::boolean; }

  static void assign(int64_t& dst, const json& v, const std::string& key) {
    if (!v.is_number_integer()) throw ref::config_error(key, v.dump(), "must be an integer");
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw ref::config_error(key, v.dump(), "is too large for a 64-bit integer");
    dst = v.get<int64_t>();
  }
  static void assign(double& dst, const json& v, const std::string& key) {
    if (!v.is_number()) throw ref::config_error(key, v.dump(), "must be a number");
    dst = v.get<double>();
  }
  static void assign(bool& dst, const json& v, const std::string& key) {
    if (!v.is_boolean()) throw ref::config_error(key, v.dump(), "must be true or false");
    dst = v.get<bool>();
  }

  std::vector<field<C>> m_rows;
};

}  // namespace fb
