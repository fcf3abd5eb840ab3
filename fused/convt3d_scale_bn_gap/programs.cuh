#pragma once
/// The block programs of convt3d_scale_bn_gap (KernelBench #77), written once: each CUDA kernel is
/// `program(device executor, params, blockIdx.x, shared memory)` and the host executor runs the same
/// program for every block with a host executor that calls each phase for threads 0..255 in turn
/// (a barrier is then a no-op: every thread finished the phase before the next one starts). So the
/// CPU tests run the kernels' own tiling, indexing, shared-memory layouts and summation orders; only
/// scheduling differs, and no result depends on it (no atomics, every partial has one owner).
///
/// An executor `Ex` is a block executor (fused/exec/block_program.cuh): ex.threads(f) calls f(thread
/// index t) or f(t, State& thread's state) for the block's threads, ex.sync() is __syncthreads() on
/// the device and nothing on the host, where State is the program's per-thread register state
/// (registers on the device, an array of 256 on the host). Global -> shared copies go through fused/arch/cp_async.cuh (cp.async on the
/// device, completed by the same thread's wait before the next barrier; a plain copy on the host),
/// so the device can keep many in flight without registers.
///
/// Kernels, in launch order (training; eval runs prep without H1, x_program without the DFT, reduce
/// without m2, finish):
///   prep     Wsum[ci, c] (fp64) and H1[ci][fd][th][tw][c] = sum_td w[ci, c, td, th, tw] e^{-2pi i td fd/D'}
///            for fd in [0, D'/2] (the weights' depth DFT; the other half is its conjugate); in
///            training its first blocks also write each fw chunk's x tables (roots, box spectra,
///            twiddle matrices) into a workspace image, once instead of in every x block.
///   gspec    G[ci][pair][tw][c] = sum_th H1[ci][fd][th][tw][c] e^{-2pi i th fh/H'} for every row
///            pair (fd, fh) (the weights' height DFT), once.
///   x        per (ci, b, fw-chunk): x's 3-D DFT on the n' grid, half spectrum along w, separable and
///            direct (w: real -> complex; h and d: complex, two mirrored outputs per four products),
///            of x - c (c: the block's first-slab mean) plus c times the box spectrum (no fp32 sum
///            cancels an offset), into X[row = fd*H' + fh][ci][b][fw]; chunk 0 also sums x in fp64
///            (S[b, ci]). Each block starts by copying its chunk's tables image.
///   gemm     per (8 units, 32 output channels, a batch tile): Z = sum_ci X W, accumulated in
///            registers, and sum over the units of w_f |Z|^2 (fp64) -> partial[group][b][c].
///            W(f) is never stored: per input-channel chunk the block copies the X and G tiles of
///            its units and row pairs into shared memory (double-buffered, the next chunk's copies
///            in flight during this chunk's products), and each thread finishes W(row, fw) and
///            W(conj row, fw) from G and its own twiddles (4 products per tap).
///   reduce   m2[b, c] = scale^2/N' * sum over groups (fixed slices, fixed order); ybar[b, c].
///   finish   per channel: batch statistics, out, running buffers, num_batches_tracked.

#include "fused/convt3d_scale_bn_gap/finish.cuh"
#include "fused/convt3d_scale_bn_gap/gemm.cuh"
#include "fused/convt3d_scale_bn_gap/gspec.cuh"
#include "fused/convt3d_scale_bn_gap/params.cuh"
#include "fused/convt3d_scale_bn_gap/prep.cuh"
#include "fused/convt3d_scale_bn_gap/reduce.cuh"
#include "fused/convt3d_scale_bn_gap/x_spectrum.cuh"
