#pragma once
/// The equivalence contract's default tolerances (README "The equivalence contract"): the one place
/// they are written; verify's --atol/--rtol, check_options and replays take them from here.

namespace fb {

inline constexpr double default_atol = 1e-5;  ///< absolute tolerance
inline constexpr double default_rtol = 1e-5;  ///< relative tolerance (of |reference|)

}  // namespace fb
