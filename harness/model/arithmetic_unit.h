#pragma once
/// The units a fused algorithm's arithmetic runs on, so that its FLOP floor uses their measured peak
/// (harness/bench: the calibration measures each): fp32 FMAs (SIMT), or fp64 matrix multiply-adds
/// (the tensor cores' mma.sync ... f64 on the GPU; fp64 FMAs on the CPU).

namespace fb {

enum class arithmetic_unit { fp32_fma, fp64_mma };

/// The stable name of a unit in results files ("fp32_fma", "fp64_mma").
[[nodiscard]] inline const char* arithmetic_unit_name(arithmetic_unit u) {
  return u == arithmetic_unit::fp64_mma ? "fp64_mma" : "fp32_fma";
}

}  // namespace fb
