/* fusebench plug-in ABI: how a shared library outside this tree hands its implementations of the
 * registry's models to `fusebench verify|bench --plugin LIB.so`, to be judged by the same equivalence
 * contract and timed by the same bench as the in-tree fused kernels (README "Judge your own kernel").
 *
 * Pure C (C99 and C++), no fusebench, torch or CUDA header needed. A plug-in:
 *   1. defines its ABI version with FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION() (once, in one source file);
 *   2. defines `int fusebench_plugin_init(const fusebench_host* host)`, which calls
 *      host->add_implementation(host, &impl) once per implementation and returns 0 (or non-zero to
 *      refuse to load: fusebench then exits 2 with the message it left through host->set_error).
 * fusebench checks fusebench_plugin_abi_version() against FUSEBENCH_PLUGIN_ABI_VERSION before it calls
 * anything else: a library built against another version is refused (exit 2), never half-read.
 *
 * Every call is synchronous from fusebench's side except CUDA work, which must be enqueued on the given
 * stream (fusebench synchronises it). A run() must: write every element of the output (fusebench poisons
 * it with NaN and guards it with canaries), update the BatchNorm buffers in training mode, leave inputs,
 * parameters and everything else untouched, be deterministic, and keep no state between calls.
 */
#ifndef FUSEBENCH_PLUGIN_H
#define FUSEBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes. Bumped on any change to the structs or calls below. */
#define FUSEBENCH_PLUGIN_ABI_VERSION 1

#if defined(_WIN32)
#define FUSEBENCH_PLUGIN_EXPORT __declspec(dllexport)
#else
#define FUSEBENCH_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Element types of a tensor descriptor. */
typedef enum fusebench_dtype {
  FUSEBENCH_FLOAT32 = 0,
  FUSEBENCH_FLOAT64 = 1,
  FUSEBENCH_INT64 = 2
} fusebench_dtype;

/* Where a tensor lives and an implementation runs. */
typedef enum fusebench_device {
  FUSEBENCH_DEVICE_CPU = 0,
  FUSEBENCH_DEVICE_CUDA = 1
} fusebench_device;

/* Bits of fusebench_implementation::devices. */
#define FUSEBENCH_DEVICES_CPU (1u << FUSEBENCH_DEVICE_CPU)
#define FUSEBENCH_DEVICES_CUDA (1u << FUSEBENCH_DEVICE_CUDA)

/* A tensor: `data` points at element [0,...,0]; strides are in elements. fusebench passes contiguous
 * (row-major) tensors today; a plug-in that relies on it should still check the strides. */
typedef struct fusebench_tensor {
  const char* name;        /* "input", "output", or the PyTorch state_dict key ("conv_transpose.weight") */
  void* data;              /* const for the input and the parameters */
  fusebench_dtype dtype;
  int32_t ndim;
  const int64_t* shape;    /* ndim sizes */
  const int64_t* strides;  /* ndim strides [elements] */
  fusebench_device device;
} fusebench_tensor;

/* One config field (the model's constructor arguments and input sizes, SPEC.md); integers and
 * booleans (0/1) are exact in a double. */
typedef struct fusebench_config_field {
  const char* name;  /* "kernel_size", "batch_size", "training", ... */
  double value;
} fusebench_config_field;

/* A model's config: the canonical JSON text and the same fields as (name, value) rows. */
typedef struct fusebench_config {
  const char* model;  /* the registry id, e.g. "convt2d_mul_gap" */
  const char* json;   /* e.g. {"batch_size":16,"height":128,...} */
  const fusebench_config_field* fields;
  int32_t num_fields;
} fusebench_config;

/* Everything one call reads and writes. */
typedef struct fusebench_call {
  fusebench_config config;
  fusebench_device device;
  const fusebench_tensor* input;      /* the model's input x */
  const fusebench_tensor* params;     /* parameters and buffers of the state_dict, by name */
  int32_t num_params;
  const fusebench_tensor* buffers;    /* in-place buffers (training-mode BatchNorm running statistics) */
  int32_t num_buffers;
  const fusebench_tensor* output;     /* preallocated, poisoned; write every element */
  void* workspace;                    /* workspace_bytes() bytes on `device` (NULL when 0) */
  size_t workspace_bytes;
  void* stream;                       /* cudaStream_t on CUDA (enqueue there, do not synchronise); NULL on CPU */
} fusebench_call;

/* One implementation of one model. Zero-initialise it, then fill the fields. */
typedef struct fusebench_implementation {
  const char* model;   /* registry id or KernelBench number: "convt2d_mul_gap" or "44" */
  const char* name;    /* shown as plugin:<name>; letters, digits, '_', '-', '.' */
  uint32_t devices;    /* FUSEBENCH_DEVICES_CPU | FUSEBENCH_DEVICES_CUDA */
  /* Computes the model. Returns 0, or non-zero after writing a one-line reason into `error` (at most
   * error_size bytes, NUL-terminated): the case is then recorded as failed with that reason. */
  int (*run)(const fusebench_call* call, void* user_data, char* error, size_t error_size);
  /* Optional: scratch bytes a call of this config needs on `device` (NULL: none). */
  size_t (*workspace_bytes)(const fusebench_config* config, fusebench_device device, void* user_data);
  /* Optional: 1 when this implementation handles the config on `device`; 0 to decline it (outside the
   * plug-in's own limits), after writing why into `reason`. A declined case is counted and shown as
   * declined, never as passed. NULL: every config is supported. */
  int (*supports)(const fusebench_config* config, fusebench_device device, void* user_data, char* reason,
                  size_t reason_size);
  void* user_data;     /* handed back to every call */
} fusebench_implementation;

/* What fusebench hands to fusebench_plugin_init. */
typedef struct fusebench_host {
  int32_t abi_version;  /* FUSEBENCH_PLUGIN_ABI_VERSION of the fusebench that loads the plug-in */
  void* context;        /* fusebench's; pass `host` back unchanged */
  /* Registers an implementation (copied: `impl` and its strings may be temporaries). Returns 0, or
   * non-zero when fusebench refuses it (unknown model, bad name or devices, no run). */
  int (*add_implementation)(const struct fusebench_host* host, const fusebench_implementation* impl);
  /* Sets the one-line message fusebench prints when fusebench_plugin_init returns non-zero. */
  void (*set_error)(const struct fusebench_host* host, const char* message);
} fusebench_host;

/* The two symbols fusebench looks up. */
typedef int32_t (*fusebench_plugin_abi_version_fn)(void);
typedef int (*fusebench_plugin_init_fn)(const fusebench_host* host);

/* Defines fusebench_plugin_abi_version() as the version of the header the plug-in was built against. */
#define FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()                                  \
  FUSEBENCH_PLUGIN_EXPORT int32_t fusebench_plugin_abi_version(void) {         \
    return FUSEBENCH_PLUGIN_ABI_VERSION;                                       \
  }

/* The plug-in's ABI version (defined by FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()) and registration entry
 * point (defined by the plug-in). */
FUSEBENCH_PLUGIN_EXPORT int32_t fusebench_plugin_abi_version(void);
FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host);

/* Helpers for plug-in code. */

/* The tensor called `name` among `n` tensors, or NULL. */
static inline const fusebench_tensor* fusebench_find_tensor(const fusebench_tensor* tensors, int32_t n,
                                                            const char* name) {
  for (int32_t i = 0; i < n; ++i) {
    const char* a = tensors[i].name;
    const char* b = name;
    while (*a != '\0' && *a == *b) {
      ++a;
      ++b;
    }
    if (*a == *b) return &tensors[i];
  }
  return NULL;
}

/* The config field `name` into *value; returns 1 when found, 0 otherwise. */
static inline int fusebench_config_value(const fusebench_config* config, const char* name, double* value) {
  for (int32_t i = 0; i < config->num_fields; ++i) {
    const char* a = config->fields[i].name;
    const char* b = name;
    while (*a != '\0' && *a == *b) {
      ++a;
      ++b;
    }
    if (*a == *b) {
      *value = config->fields[i].value;
      return 1;
    }
  }
  return 0;
}

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* FUSEBENCH_PLUGIN_H */
