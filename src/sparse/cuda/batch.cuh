// SPDX-License-Identifier: Apache-2.0
// Batched execution of the sparse FFT's CUDA backend (sfft_exec_batch on an EXACT engine made for a batch):
// every per-exec array holds one slice per signal, Strides apart; the kernels after the fold take their
// signal from blockIdx.y, so one launch serves the whole batch. One signal: Strides{} and grid.y = 1, the
// arrays themselves.
#pragma once

#include "sparse/cuda/internal.cuh"

namespace sfft::sparse::cuda_stages {

struct Strides {
  std::size_t z = 0;        // folded sums (hashings * B)
  std::size_t table = 0;    // table slots (Table::size)
  std::size_t slots = 0;    // entries of Table::slots (the distinct capacity)
  std::size_t energy = 0;   // floor energies (one per loop)
  std::size_t results = 0;  // res_freq / res_val entries (k)
};

// Signal s's view of an EXACT table (keys, values and the claimed-slot list are per signal; the ROBUST arrays
// are absent in batched engines).
__host__ __device__ inline Table signal_table(Table t, std::size_t s, const Strides &st) {
  t.keys += s * st.table;
  t.value += s * st.table;
  t.slots += s * st.slots;
  return t;
}

// Signal s's finish descriptor: its energies, destination, results and result header.
template <class Real>
__host__ __device__ inline Finish<Real> signal_finish(Finish<Real> f, std::size_t s, const Strides &st) {
  f.energy += s * st.energy;
  f.outputs += s;
  f.res_freq += s * st.results;
  f.res_val += s * st.results;
  f.result += s;
  return f;
}

// Whether signal blockIdx.y takes part: the captured graph is launched for the engine's batch capacity, and
// *active (device memory, written before each exec; NULL for one signal) is the exec's batch.
__device__ inline bool signal_inactive(const unsigned *active) { return active != nullptr && blockIdx.y >= *active; }

// fold.cu, device input of `signals` signals x_stride samples apart (grid.y): the table resets and the folds
// (their destinations uploaded before), the normalisation into each signal's destination slot; host input:
// the table resets alone.
void launch_reset_table_batch(const Table &t, int passes, const Counters *counters, std::size_t distinct_capacity,
                              const Strides &st, unsigned signals, cudaStream_t stream);
template <class Real>
void launch_fold_batch(bool power_of_two, const Cplx<Real> *x, std::size_t x_stride, const Real *main_window,
                       const Real *far_window, const FoldJob *jobs, std::size_t outputs, int64_t main_half_taps,
                       int64_t far_half_taps, const Geometry &g, Cplx<Real> *z, Counters *counters, const Table &table,
                       int passes, const Strides &st, unsigned signals, cudaStream_t stream);

// The column fold, for batches of designs whose taps read a large part of each signal (the gather fold spends
// a 32-byte sector per tap). Seen as rows m of B residues (x[r + B m], L = n / B rows), every tap of a fold
// output (job j, bucket i) reads residue column r = sigma_j i + c_j (mod B), at rows that step by sigma_j (mod L)
// from tap to tap. A block owns a slab of kColumnBytes<Real> of consecutive residues (kColumnResidues<Real> columns)
// and one group of the jobs (job_groups of them, consecutive jobs, ceil(jobs / job_groups) each: as many groups
// as keep the block's weights within kColumnSharedBytes and its items within one pass of the block): per signal of its
// signal group it stages the slab's L rows in shared memory (cp.async in 16-byte pieces, whole sectors, each sample
// read from DRAM once), and each (column, job) item sums its outputs in registers, split over 2^phase_bits lanes that
// add their sums by shuffles (the lanes of a warp: 32 >> phase_bits items, consecutive columns, times 2^phase_bits
// phases). The window weights come from a plan-time table of the slab and job group (the weights of tap slot q of every
// hashing of a job, for each column: the weights lanes need do not lie side by side in the window), copied into shared
// memory once per block. complex64: 256 threads (two lanes per item at the default designs), whose extra warps overlap
// a block's copy and sums better than 128 did (H200, 2^16 k100 b1024: 0.19-0.20 ms against 0.21-0.23).
template <class Real>
constexpr unsigned kColumnThreads = sizeof(Real) == 4 ? 256 : 128;
// A slab row: whole 32-byte sectors. H200, 2^16 k100 b1024 (2026-11-30): complex128 folds faster with 64-byte
// rows (its six jobs in one group, four blocks per SM; 128 bytes needed two groups at three blocks per SM under the
// 70 KiB block limit of then; one group at two blocks per SM under today's limit is not measured): 0.47-0.49 ms
// against 0.52; complex64 slower with them (0.23-0.28 ms against 0.17-0.20). Rows are unpadded in shared memory: the
// lanes of a shared-memory wavefront read consecutive columns (each its own banks, whatever their rows); a padded pitch
// put lanes of different rows on the same banks.
template <class Real>
constexpr unsigned kColumnBytes = sizeof(Real) == 4 ? 128 : 64;
template <class Real>
constexpr unsigned kColumnResidues = kColumnBytes<Real> / sizeof(Cplx<Real>);
constexpr std::size_t kColumnSharedBytes = 113 * 1024;  // two blocks per SM
struct ColumnJob {
  uint64_t base, sigma;
  unsigned row_step;  // sigma * 2^phase_bits mod L: a lane's row from one tap slot to its next
  unsigned hashing[kJobHashings];
  int count;
  unsigned taps;          // tap slots q (ceil((2T + 1 + shift[count - 1]) / B))
  unsigned first_weight;  // the job's first weight row in its group's table: row first_weight + q holds slot q
};
// The weights of one tap slot and column for each hashing of a job (zero past its count) are kColumnPlanes<Real>
// 16-byte vectors, each in a plane of its own: row q, plane v, column at (q kColumnPlanes + v) kColumnResidues +
// column, so a wavefront's lanes (consecutive columns) read consecutive vectors.
template <class Real>
struct alignas(16) ColumnWeights {
  Real w[16 / sizeof(Real)];
};
template <class Real>
constexpr unsigned kColumnPlanes = kJobHashings * sizeof(Real) / 16;
// Shared memory of a column fold block: the slab (L rows of kColumnBytes<Real>) and its group's weights
// (weight_rows rows of kColumnPlanes x kColumnResidues vectors).
template <class Real>
constexpr std::size_t column_fold_shared(uint64_t rows, std::size_t weight_rows) {
  return rows * kColumnBytes<Real> + weight_rows * kColumnPlanes<Real> * kColumnResidues<Real> * 16;
}
// weights: per (slab, job group) in grid order, weight_rows rows of kColumnPlanes x kColumnResidues; buckets[j * B +
// r]: the bucket of job j's first hashing that column r feeds. `group` signals per block (grid.y = ceil(signals /
// group)). x and x_stride * sizeof(Cplx<Real>) 16-byte aligned (16-byte copies). The sums go to `by_column` in
// column order (hashing h's sum fed by column r at h B + r: a warp's stores are whole sectors, where the buckets of
// consecutive columns lie sigma^-1 apart); launch_normalise_batch puts them in bucket order.
template <class Real>
void launch_fold_column_batch(const Cplx<Real> *x, std::size_t x_stride, const ColumnJob *jobs, int job_count,
                              int job_groups, const uint32_t *buckets, const ColumnWeights<Real> *weights,
                              std::size_t weight_rows, int phase_bits, int64_t half_taps, const Geometry &g,
                              Cplx<Real> *by_column, Counters *counters, const Table &table, int passes,
                              const Strides &st, unsigned signals, unsigned group, cudaStream_t stream);
// Lets the column fold kernel take column_fold_shared(g.width, weight_rows) bytes of shared memory on the current
// device; once, when a plan's tables are uploaded (the launches then only launch).
template <class Real>
void allow_fold_column_shared(const Geometry &g, std::size_t weight_rows);

// The bucket FFTs in the normalisation's launch (fold.cu's normalise_fft_kernel) where B is a power of two of at
// most kFusedFftBuckets: the normalisation and a B-point transform in shared memory per hashing row, in place of
// launch_normalise_batch and a cuFFT plan. H200, same call, two rounds, against both launches (normalisation and
// FFT stages, ms): complex64 B = 256 / 512 / 1024 / 2048 (2^20, k 120 / 200 / 400 / 1000, 64 signals) 0.013 /
// 0.016 / 0.021 / 0.029 -> 0.010 / 0.012 / 0.015 / 0.026, complex128 B = 256 / 512 0.014 / 0.018 -> 0.011 / 0.015;
// 2^16 k100 b1024 (B = 256) 0.056 -> 0.041 and 0.090 -> 0.072 (the batch 0.411 -> 0.397-0.399 ms, 0.776 ->
// 0.756-0.761). Complex128 at B = 1024 and 2048 (17 and 34 KiB a buffer, three blocks per SM) was slower: 0.027 ->
// 0.028, 0.044 -> 0.046.
template <class Real>
constexpr uint64_t kFusedFftBuckets = sizeof(Real) == 4 ? 2048 : 512;
constexpr unsigned kFusedFftThreads = 256;
template <class Real>
bool fused_bucket_fft(const Geometry &g) {
  return g.buckets <= kFusedFftBuckets<Real> && (g.buckets & (g.buckets - 1)) == 0;
}
// twiddles[t] = exp(-2 pi i t / B), t < B. normalised (host input: the sums came up scaled, with their energies):
// the FFTs alone. Otherwise as launch_normalise_batch, for `hashings` rows of each of `signals` signals.
// allow_normalise_fft_shared: once per plan, before the launches (up to 2 B values of shared memory a block).
template <class Real>
void allow_normalise_fft_shared(const Geometry &g);
template <class Real>
void launch_normalise_fft(Cplx<Real> *z, std::size_t hashings, const Geometry &g, int location_loops, bool energies,
                          double *energy, const Counters *counters, ExecOutputs *exec_outputs_slots, const Strides &st,
                          unsigned signals, const Cplx<Real> *by_column, const uint32_t *column_of,
                          const Cplx<Real> *twiddles, bool normalised, cudaStream_t stream);

// by_column (the column fold's sums, NULL otherwise): z[i] is read from by_column[column_of[i]] (same strides as z).
template <class Real>
void launch_normalise_batch(Cplx<Real> *z, std::size_t count, const Geometry &g, int location_loops, bool energies,
                            double *energy, const Counters *counters, ExecOutputs *exec_outputs_slots,
                            const Strides &st, unsigned signals, const Cplx<Real> *by_column, const uint32_t *column_of,
                            cudaStream_t stream);

// peel.cu: EXACT, location loop `loop`, peeling into the `later` loops after it, for `signals` signals (grid.y):
// a group of lanes per (later loop, bucket) (bucket_span 0), or (batches) per bucket subtracting from every later
// loop, a block listing bucket_span buckets (at most kPeelBlock) and decoding those above the floor.
template <class Real>
void launch_peel(bool power_of_two, Cplx<Real> *z, const LoopParams *loops, const double *energy, double floor_relative,
                 double settle_relative, int loop, int later, const Geometry &g, const Table &t, Counters *counters,
                 const Strides &st, unsigned signals, const unsigned *active, unsigned bucket_span,
                 cudaStream_t stream);
// peel.cu, batches of designs of at most kPeelPersistentBlock buckets: location loops first_loop onwards in one
// launch, a block of kPeelPersistentBlock threads per signal looping over its buckets, ending after the loop that
// left the signal settled.
constexpr unsigned kPeelPersistentBlock = 256;
template <class Real>
void launch_peel_signals(bool power_of_two, Cplx<Real> *z, const LoopParams *loops, const double *energy,
                         double floor_relative, double settle_relative, int first_loop, int location_loops,
                         const Geometry &g, const Table &t, Counters *counters, const Strides &st, unsigned signals,
                         const unsigned *active, cudaStream_t stream);
// topk.cu: the top-k of `signals` EXACT signals (grid.y), their lists the tables' slots (at most list_capacity
// entries each), in launch_rank's order and with its outputs: a block per signal sorting its list into bins of
// its magnitudes where the list fits the block's shared memory (rank_batch_binned), else launch_rank's counting
// (`grid` blocks a signal). allow_rank_batch_shared: once per plan, before the launches.
constexpr unsigned kRankBins = 1024;
// Threads a signal: 256, and 512 for lists longer than kRankBinnedLongList (H200, same call: 2^20 k1000 b64
// ranking 0.024 -> 0.022 ms with 512; 2^16 k100 b1024 0.022 -> 0.031 ms).
constexpr unsigned kRankBinnedBlock = 256;
constexpr std::size_t kRankBinnedLongList = 4096;
struct RankPlaced {
  unsigned long long bits;  // of |value|^2 as returned (a non-negative double)
  unsigned slot;
};
constexpr std::size_t kRankBinnedShared = 192 * 1024;  // the placed list; the bins take 12 KiB more
inline bool rank_batch_binned(std::size_t list_capacity) {
  return list_capacity * sizeof(RankPlaced) <= kRankBinnedShared;
}
template <class Real>
void allow_rank_batch_shared(std::size_t list_capacity);
template <class Real>
void launch_rank_batch(unsigned grid, std::size_t list_capacity, const Table &t, uint64_t k, uint64_t *res_freq,
                       Cplx<Real> *res_val, Counters *counters, const Finish<Real> &finish, const Strides &st,
                       unsigned signals, const unsigned *active, cudaStream_t stream);

}  // namespace sfft::sparse::cuda_stages
