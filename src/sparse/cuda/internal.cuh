// SPDX-License-Identifier: Apache-2.0
// Internal to the sparse FFT's CUDA units (src/sparse/cuda/, README.md there): the device-side types every
// stage shares (counters, the frequency table, the exec's outputs), small device helpers, and the host
// launchers each stage unit exports to the engine (engine.cu). Every launcher enqueues on `stream` only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/cuda_util.cuh"
#include "sparse/plan.hpp"

namespace sfft::sparse::cuda_stages {

constexpr unsigned kBlock = 256;
constexpr unsigned kPeelBlock = 128;  // small blocks spread the few busy decode threads over more SMs
constexpr unsigned kPeelLanes = 4;    // lanes sharing one bucket's decode (a power of two <= 32)
constexpr int kPeelPreloaded = 4;     // hashings a peel thread loads up front: S + 2 for S <= 2 stages
constexpr unsigned kRankBlock = 1024;
constexpr unsigned kRankTile = 32;   // list entries a rank block ranks at a time (one warp's worth)
constexpr unsigned kRankGrid = 256;  // rank blocks at most (they stride over the tiles)
constexpr unsigned kRankGridMin = 16;
// Batched engines' rank blocks: a signal's list is about k long, so a 1024-thread block would leave all but
// k/64 of its warps idle, and 2 such blocks fit an SM; 128-thread blocks (16 per SM) rank a tile in k/256
// staging rounds instead of one, the batch's signals keeping the SMs busy.
constexpr unsigned kRankBatchBlock = 128;
constexpr unsigned kFoldOutputs = 32;  // consecutive (hashing, bucket) outputs per fold block
constexpr unsigned kFoldSlices = 4;    // threads splitting one output's taps (A/B on the H100: 4 beat 2, 8 and 16)
constexpr int kMaxLoops = 128;         // 64 location + 64 estimation loops at most (filter.cpp)
constexpr std::size_t kRankLimit = std::size_t{1} << 15;  // longest list ranked by counting
constexpr uint64_t kEmpty = ~uint64_t{0};

// ROBUST comb selection (comb.cu).
constexpr int kCombDigitBits = 12;  // 4096 counters: the float exponent and 3 mantissa bits in step 1
constexpr unsigned kCombDigits = 1u << kCombDigitBits;
constexpr unsigned kCombThreads = 256;         // steps 1 and 2
constexpr uint64_t kCombChunk = 4096;          // bins per block in steps 1 and 2 (all of W when smaller)
constexpr unsigned kCombFinishThreads = 1024;  // step 3

// ROBUST refinement works one warp per candidate, a lane per loop (lanes take loops lane, lane + 32, ...):
// the per-loop estimates and subtractions are independent, so the chain each thread runs is one loop long.
constexpr unsigned kWarpsPerBlock = kBlock / 32;
constexpr unsigned kRefineBlocks = 256;  // grid cap: the warps stride over the candidates

// Device-side bookkeeping of one exec. The last block of the top-k step resets it for the next exec.
struct Counters {
  unsigned distinct;              // table slots claimed (entries of Table::slots)
  unsigned candidates;            // ROBUST: entries of Table::candidates
  unsigned count;                 // coefficients in the result
  unsigned nonfinite;             // the fold saw a non-finite sum
  unsigned blocks_done;           // top-k blocks finished
  unsigned stale;                 // table slots the previous exec claimed (listed in Table::slots), reset by this one
  unsigned unresolved;            // EXACT: unexplained buckets of the last location loop (Engine::unresolved)
  unsigned fold_exponent;         // device input: biased_exponent of the largest folded component (normalise_kernel)
  unsigned comb_exponent;         // device input: biased_exponent of the largest comb sample (comb_bin_key)
  unsigned unsettled[kMaxLoops];  // EXACT: unsettled buckets per location loop; 0 ends the peeling
};

// ROBUST: the noise measurement and the report's sums (robust.cu, docs/sparse-noise.md). The histogram counts
// the digits (bucket_math.hpp's noise_digit) of the reference buckets' energies; noise_median_kernel turns it
// into nu and clears it. The sums are reset by the top-k step's last block once it has published them.
struct NoiseState {
  unsigned histogram[kNoiseDigits];
  double nu;                // noise energy per bucket: the current pass's (vote_kernel), then the residual's
  unsigned limit_digit;     // the report's outlier limit, as a digit
  double signal;            // sum of |z|^2 over every reference bucket before any subtraction
  double residual;          // the same after the last refinement
  unsigned outliers;        // residual reference buckets above the limit
  double found;             // sum of |v|^2 over every candidate
  unsigned found_outliers;  // candidates above the limit
  double kept;              // the same over the returned coefficients (top-k step)
  unsigned kept_outliers;
  unsigned significant;  // returned coefficients with |v|^2 > kSignificant nu
};

// The report's sums as the host reads them (Result; normalised units, `unscale` undoes that).
struct ReportSums {
  double nu, signal, residual, kept, dropped, unscale;
  unsigned outliers, dropped_outliers, significant;
};

// What sfft_exec needs back: written by the device into mapped pinned memory, read after the
// synchronisation.
struct Result {
  unsigned count;
  unsigned nonfinite;
  unsigned unresolved;
  ReportSums report;  // ROBUST
};

// Where one exec's result goes: device (or managed) arrays of `capacity` entries, or capacity 0 for host
// outputs (copied after the synchronisation). Written per exec by the fold kernel (device input) or a copy
// (host input), read by the last block of the top-k step.
struct ExecOutputs {
  uint64_t *freqs;
  void *values;
  uint64_t capacity;
  double unscale;  // 2^-shift: the buckets were normalised by 2^shift (plan.hpp's normalise), results are not
};

// Open-addressing table keyed by frequency (linear probing, at least half empty by construction).
struct Table {
  uint64_t *keys;          // kEmpty or a frequency
  Cplx<double> *value;     // EXACT: sum of every find; ROBUST: current estimate
  Cplx<double> *applied;   // ROBUST: value already subtracted from the hashings
  unsigned *votes;         // ROBUST: votes[pass * size + slot]
  unsigned *is_candidate;  // ROBUST
  unsigned *slots;         // claimed slots in claim order
  unsigned *candidates;    // ROBUST: candidate slots
  uint64_t size;
  int log2_size;
};

inline __device__ unsigned table_insert(const Table &t, uint64_t freq, Counters *c) {
  uint64_t slot = (freq * 0x9e3779b97f4a7c15ULL) >> (64 - t.log2_size);
  for (;;) {
    auto *cell = reinterpret_cast<unsigned long long *>(t.keys + slot);
    unsigned long long prev = atomicCAS(cell, static_cast<unsigned long long>(kEmpty), freq);
    if (prev == kEmpty) {
      t.slots[atomicAdd(&c->distinct, 1u)] = static_cast<unsigned>(slot);
      return static_cast<unsigned>(slot);
    }
    if (prev == freq) return static_cast<unsigned>(slot);
    slot = (slot + 1) & (t.size - 1);
  }
}

// Resets the table slots the previous exec claimed, for this exec. Run by the exec's first kernel (the fold,
// or reset_table_kernel for host input) over all its threads (thread of threads), so that the top-k step's
// last block does not keep the exec open for a round trip per slot (~2.8 us of the step at k = 1000 on the
// H100, by in-kernel timestamps). Nothing else touches the table while the first kernel runs.
inline __device__ void reset_stale_slots(const Table &t, int passes, const Counters *counters, std::size_t thread,
                                         std::size_t threads) {
  const unsigned stale = counters->stale;
  for (std::size_t i = thread; i < stale; i += threads) {
    const unsigned slot = t.slots[i];
    t.keys[slot] = kEmpty;
    t.value[slot] = {0, 0};
    if (t.applied == nullptr) continue;
    t.applied[slot] = {0, 0};
    t.is_candidate[slot] = 0;
    for (int p = 0; p < passes; ++p) t.votes[static_cast<std::size_t>(p) * t.size + slot] = 0;
  }
}

inline __device__ void atomic_add(Cplx<double> *cell, Cplx<double> v) {
  atomicAdd(&cell->re, v.re);
  atomicAdd(&cell->im, v.im);
}

template <class Real>
inline __device__ void atomic_sub(Cplx<Real> *cell, Cplx<double> v) {
  atomicAdd(&cell->re, static_cast<Real>(-v.re));
  atomicAdd(&cell->im, static_cast<Real>(-v.im));
}

template <class Real>
inline __device__ Cplx<double> load_bucket(const Cplx<Real> *z, std::size_t hashing, uint64_t b, uint64_t buckets) {
  return widen(z[hashing * buckets + b]);
}

// Kernels are instantiated for n a power of two (kPowerOfTwo) and for other n, so that bucket_math.hpp's
// modular arithmetic is chosen at compile time: masks (as fast as before other lengths were supported) or
// remainders. mask = n - 1 and bucket_mask = B - 1 are odd then, so `| 1` keeps their values and proves
// them nonzero; for other n, B may still be a power of two (a runtime test).
template <bool kPowerOfTwo>
__device__ __forceinline__ void specialise(Geometry &g) {
  g.mask = kPowerOfTwo ? g.mask | 1 : 0;
  if (kPowerOfTwo) g.bucket_mask |= 1;  // B divides n: a power of two too, B - 1 odd
}

// One fold job: up to kJobHashings hashings of one loop whose shifts lie within the window's span, read in
// one pass. Hashing c has shift[c] taps (shift[0] = 0: the job's first hashing); its tap t is the sample of
// the first hashing's tap t + shift[c], so each sample feeds every hashing whose window covers it.
constexpr int kJobHashings = 4;
struct FoldJob {
  uint64_t base, sigma;
  uint64_t shift[kJobHashings];
  unsigned hashing[kJobHashings];
  int count;
  int far;  // folds with the far location stages' window (a lone hashing)
};

// What the last block of the top-k step cleans up and fills (finish_exec).
template <class Real>
struct Finish {
  double *energy;  // per location loop, accumulated afresh by the next exec's normalisation
  int loops;
  const ExecOutputs *outputs;  // this exec's destination
  const uint64_t *res_freq;
  const Cplx<Real> *res_val;
  Result *result;               // mapped pinned memory
  NoiseState *noise = nullptr;  // ROBUST: the report's sums to publish and reset
};

inline unsigned blocks_for(std::size_t items, unsigned block = kBlock) {
  return static_cast<unsigned>((items + block - 1) / block);
}

inline int log2_of(uint64_t power_of_two) {
  int r = 0;
  while ((uint64_t{1} << r) < power_of_two) ++r;
  return r;
}

// ---- launchers (defined in the stage units, instantiated for float and double)

// fold.cu: the exec's first kernel for host input (reset_stale_slots), the device-input fold, normalisation.
void launch_reset_table(const Table &t, int passes, const Counters *counters, std::size_t distinct_capacity,
                        cudaStream_t stream);
template <class Real>
void launch_fold(bool power_of_two, const Cplx<Real> *x, const Real *main_window, const Real *far_window,
                 const FoldJob *jobs, std::size_t outputs, int64_t main_half_taps, int64_t far_half_taps,
                 const Geometry &g, Cplx<Real> *z, Counters *counters, const ExecOutputs &exec_outputs,
                 ExecOutputs *exec_outputs_slot, const Table &table, int passes, cudaStream_t stream);
// The same fold over a rank's block [offset, offset + length) of a distributed signal (x points at sample
// offset; taps outside read zero), leaving counters' finiteness flag and exponent alone.
template <class Real>
void launch_fold_block(bool power_of_two, const Cplx<Real> *x, uint64_t offset, uint64_t length,
                       const Real *main_window, const Real *far_window, const FoldJob *jobs, std::size_t outputs,
                       int64_t main_half_taps, int64_t far_half_taps, const Geometry &g, Cplx<Real> *z,
                       Counters *counters, const ExecOutputs &exec_outputs, ExecOutputs *exec_outputs_slot,
                       const Table &table, int passes, cudaStream_t stream);
// Distributed execution on one node: sum[i] = folds[0][i] + folds[1][i] + ... + folds[ranks - 1][i], added in
// rank order (the same bits on every rank); folds[r] is rank r's fold buffer, opened through CUDA IPC.
template <class Real>
void launch_sum_rank_folds(const Cplx<Real> *const *folds, int ranks, std::size_t count, Cplx<Real> *sum,
                           cudaStream_t stream);

// peel.cu: EXACT peeling, launch_peel (batch.cuh).

// comb.cu: the device-input gather, and the selection after the comb FFT (three kernels).
template <class Real>
void launch_comb_gather(bool power_of_two, const Cplx<Real> *x, const uint64_t *offsets, uint64_t width,
                        uint64_t stride, int comb_loops, const Geometry &g, Cplx<Real> *comb_z, Counters *counters,
                        cudaStream_t stream);
// The comb samples of a rank's block (zero where another rank owns the sample), leaving counters alone.
template <class Real>
void launch_comb_gather_block(bool power_of_two, const Cplx<Real> *x, uint64_t offset, uint64_t length,
                              const uint64_t *offsets, uint64_t width, uint64_t stride, int comb_loops,
                              const Geometry &g, Cplx<Real> *comb_z, cudaStream_t stream);
template <class Real>
void launch_comb_select(const Cplx<Real> *comb_z, uint64_t width, uint64_t keep, int comb_loops, unsigned *histogram,
                        uint32_t *approved, uint64_t *list, unsigned *list_count, Counters *counters,
                        cudaStream_t stream);

// robust.cu: the noise measurement (histogram of the reference buckets' energies, its median; `sum` adds their
// energy to noise->signal (before any subtraction) or noise->residual (after the last refinement, which also
// sets the report's outlier limit and count and sums the candidates of table t), one pass's vote and selection,
// one refinement round (estimate, subtract).
enum class NoiseSum { None, Signal, Residual };
template <class Real>
void launch_noise(const Cplx<Real> *z, const std::size_t *first_hashing, int total_loops, const Geometry &g,
                  NoiseSum sum, double accuracy, const Table &t, const Counters *counters, NoiseState *noise,
                  cudaStream_t stream);
template <class Real>
void launch_vote(bool power_of_two, const Cplx<Real> *z, const LoopParams *loops, const NoiseState *noise,
                 int location_loops, int pass, const Geometry &g, const Table &t, Counters *counters,
                 const uint32_t *approved, uint64_t comb_mask, cudaStream_t stream);
// The host's report of a ROBUST exec from its result header.
Report robust_report(const Design &d, const Result &r);
void launch_select(const Table &t, int pass, int min_votes, Counters *counters, std::size_t distinct_capacity,
                   cudaStream_t stream);
template <class Real>
void launch_refine_round(bool power_of_two, unsigned blocks, const Table &t, Counters *counters, Cplx<Real> *z,
                         const LoopParams *loops, const std::size_t *first_hashing, int location_loops, int total_loops,
                         const Geometry &g, cudaStream_t stream);

// topk.cu: the k largest by counting (rank), or by a radix sort for long lists (magnitudes, CUB, gather);
// the last kernel of either finishes the exec (finish_exec).
template <class Real>
void launch_rank(unsigned grid, const unsigned *list, const unsigned *list_count, const Table &t, uint64_t k,
                 uint64_t *res_freq, Cplx<Real> *res_val, Counters *counters, const Finish<Real> &finish,
                 cudaStream_t stream);
template <class Real>
void launch_magnitudes(const unsigned *list, const unsigned *list_count, std::size_t list_capacity, const Table &t,
                       unsigned long long *mag_keys, cudaStream_t stream);
template <class Real>
void launch_gather(const unsigned long long *sorted_mags, const unsigned *rank_order, const unsigned *list,
                   const Table &t, uint64_t k, uint64_t *res_freq, Cplx<Real> *res_val, Counters *counters,
                   const Finish<Real> &finish, cudaStream_t stream);
void launch_iota(unsigned *v, std::size_t count, cudaStream_t stream);

}  // namespace sfft::sparse::cuda_stages
