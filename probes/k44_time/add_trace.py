#!/usr/bin/env python3
"""Adds phase stamps to a tree's #44 kernel (fused/convt2d_mul_gap/convt2d_mul_gap.cu), in place, for
k44_time built with K44_FLAGS=-DK44_TRACE: per block and batch (<= 4), %globaltimer at kernel entry
(0) and the SM (slot 9 of batch 0), after each of the batch's first four barriers (1: items streamed and band lines summed; 2:
rectangles; 3: contributions; 4: arrivals), after the finished samples (6) and at the batch's last
barrier (5). A probe-only change: the stamps are stores by thread 0, nothing else moves.
    add_trace.py TREE"""
import sys

path = sys.argv[1] + "/fused/convt2d_mul_gap/convt2d_mul_gap.cu"
s = open(path).read()


def rep(old, new):
    global s
    if s.count(old) != 1:
        sys.exit(f"add_trace.py: {old!r} found {s.count(old)} times in {path}")
    s = s.replace(old, new)


head = s.index("__global__ void __launch_bounds__(k_block")
s = s[:head] + '''__device__ unsigned long long g_trace[4096][4][10];
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
#define STAMP(b, k) \\
  do { if (threadIdx.x == 0 && blockIdx.x < 4096 && (b) < 4) g_trace[blockIdx.x][b][k] = now_ns(); } while (0)
''' + s[head:]
rep("  __shared__ shared_state sh;\n", "  __shared__ shared_state sh;\n  STAMP(0, 0);\n  if (threadIdx.x == 0 && blockIdx.x < 4096) { unsigned sm; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(sm)); g_trace[blockIdx.x][0][9] = sm; }\n")
rep("  for (int64_t first = run_lo; first < run_hi; first += prm.batch_items) {",
    "  int batch = 0;\n  for (int64_t first = run_lo; first < run_hi; first += prm.batch_items, ++batch) {")
lines, out, n, inside = s.split("\n"), [], 0, False
for line in lines:
    out.append(line)
    if "int batch = 0;" in line:
        inside = True
    if inside and line.strip().startswith("__syncthreads();") and n < 5:
        n += 1
        out.append(f"    STAMP(batch, {n});")
s = "\n".join(out)
rep("    for (int c = 0; c < sh.n_completed; ++c) finish_sample(prm, sh, sh.completed[c], warp, lane);",
    "    for (int c = 0; c < sh.n_completed; ++c) finish_sample(prm, sh, sh.completed[c], warp, lane);\n    STAMP(batch, 6);")
rep("}  // namespace fb::fused::convt2d_mul_gap", '''void k44_trace_dump(unsigned long long* host, std::size_t bytes) {
  FB_CUDA_CHECK(cudaMemcpyFromSymbol(host, g_trace, bytes));
}
void k44_trace_clear() {
  static unsigned long long zeros[4096][4][10];
  FB_CUDA_CHECK(cudaMemcpyToSymbol(g_trace, zeros, sizeof zeros));
}

}  // namespace fb::fused::convt2d_mul_gap''')
# Where the rectangles' loop and the weight copies' wait are separate (the prefetching kernel):
# 7 after thread 0's rectangles, 8 after its wait for the weight copies.
wait = "    if (prm.weights_in_smem) arch::cp_async_wait_all();\n"
if s.count(wait) == 1:
    s = s.replace(wait, "    STAMP(batch, 7);\n" + wait + "    STAMP(batch, 8);\n")
open(path, "w").write(s)
