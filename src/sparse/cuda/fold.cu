// SPDX-License-Identifier: Apache-2.0
// Sparse FFT, CUDA: the window-fold of every hashing from device input, the normalisation that follows it
// (scale-safe magnitudes and the floors' energies; for power-of-two bucket counts together with the bucket FFTs),
// and the table reset that starts a host-input exec.
#include <cuda_pipeline.h>

#include <algorithm>

#include "sparse/bucket_fft.hpp"
#include "sparse/cuda/batch.cuh"

namespace sfft::sparse::cuda_stages {
namespace {

__global__ void reset_table_kernel(Table t, int passes, const Counters *counters, Strides st) {
  reset_stale_slots(signal_table(t, blockIdx.y, st), passes, counters + blockIdx.y,
                    blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x,
                    static_cast<std::size_t>(gridDim.x) * blockDim.x);
}

template <class Real>
__device__ void add_tap(Real w, Cplx<Real> v, Real &re, Real &im) {
  re += w * v.re;
  im += w * v.im;
}

// Sample `index` of the signal. kPartial (distributed execution, plan.hpp's Distribution): x holds only the
// samples [offset, offset + length), and a tap outside reads zero.
template <bool kPartial, class Real>
__device__ Cplx<Real> sample(const Cplx<Real> *__restrict__ x, uint64_t index, uint64_t offset, uint64_t length) {
  if constexpr (kPartial) {
    if (index - offset >= length) return {Real(0), Real(0)};  // unsigned: below offset wraps to large
    return x[index - offset];
  } else {
    return x[index];
  }
}

// z[h*B + i] = sum over taps t = i (mod B) of window[t] * x[sigma_h t + base_h]. Block: kFoldOutputs
// consecutive (job, bucket) outputs (threadIdx.x) times kFoldSlices threads (threadIdx.y) taking every
// slice-th tap. The largest component's exponent goes to counters->fold_exponent for normalise_kernel.
// kPartial: a rank's partial folds of its block (offset, length); they are summed over the ranks on the host
// before anything reads them, so the kernel leaves the finiteness flag and the exponent to that step.
template <class Real, bool kPowerOfTwo, bool kPartial>
__global__ void __launch_bounds__(kFoldOutputs *kFoldSlices)
    fold_kernel(const Cplx<Real> *__restrict__ x, const Real *__restrict__ main_window,
                const Real *__restrict__ far_window, const FoldJob *__restrict__ jobs, std::size_t outputs,
                int64_t main_half_taps, int64_t far_half_taps, Geometry g, Cplx<Real> *__restrict__ z,
                Counters *counters, ExecOutputs exec_outputs, ExecOutputs *exec_outputs_slot, Table table, int passes,
                uint64_t block_offset, uint64_t block_length, std::size_t x_stride, Strides st) {
  __shared__ Real part[2 * kJobHashings][kFoldSlices][kFoldOutputs];  // re, im per hashing of the job
  specialise<kPowerOfTwo>(g);
  // Signal blockIdx.y of a batch (batch.cuh), whose destinations were uploaded before (exec_outputs_slot NULL).
  x += blockIdx.y * x_stride;
  z += blockIdx.y * st.z;
  counters += blockIdx.y;
  table = signal_table(table, blockIdx.y, st);
  if (exec_outputs_slot != nullptr && blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0)
    *exec_outputs_slot = exec_outputs;
  constexpr unsigned kFoldThreads = kFoldOutputs * kFoldSlices;
  reset_stale_slots(table, passes, counters,
                    blockIdx.x * static_cast<std::size_t>(kFoldThreads) + threadIdx.y * kFoldOutputs + threadIdx.x,
                    static_cast<std::size_t>(gridDim.x) * kFoldThreads);
  const std::size_t id = blockIdx.x * static_cast<std::size_t>(kFoldOutputs) + threadIdx.x;
  const uint64_t i = mod_b(id, g);
  const bool valid = id < outputs;
  FoldJob job{};
  Real re[kJobHashings] = {}, im[kJobHashings] = {};
  if (valid) {
    job = jobs[div_b(id, g)];
    const Real *__restrict__ window = job.far ? far_window : main_window;
    const int64_t half_taps = job.far ? far_half_taps : main_half_taps;
    const uint64_t taps = 2 * static_cast<uint64_t>(half_taps) + 1;
    const uint64_t end = taps + job.shift[job.count - 1];  // shifts ascend
    uint64_t p = mod_b(i + static_cast<uint64_t>(half_taps), g) + threadIdx.y * g.buckets;
    uint64_t index = tap_index(job.base, job.sigma, static_cast<int64_t>(p) - half_taps, g);
    const uint64_t p_step = g.buckets * kFoldSlices;
    const uint64_t step = mul_mod(job.sigma, p_step, g);
    if (job.count == 1) {
#pragma unroll 4
      for (; p < taps; p += p_step) {
        add_tap(window[p], sample<kPartial>(x, index, block_offset, block_length), re[0], im[0]);
        index = advance_index(index, step, g);
      }
    } else {
#pragma unroll 2
      for (; p < end; p += p_step) {
        Cplx<Real> v = sample<kPartial>(x, index, block_offset, block_length);
#pragma unroll
        for (int c = 0; c < kJobHashings; ++c) {
          uint64_t tap = p - job.shift[c];  // wraps past taps when p < shift
          if (c < job.count && tap < taps) add_tap(window[tap], v, re[c], im[c]);
        }
        index = advance_index(index, step, g);
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kJobHashings; ++c) {
    part[2 * c][threadIdx.y][threadIdx.x] = re[c];
    part[2 * c + 1][threadIdx.y][threadIdx.x] = im[c];
  }
  __syncthreads();
  if (threadIdx.y != 0) return;  // warp 0 (kFoldOutputs = 32) finishes
#pragma unroll
  for (int c = 0; c < kJobHashings; ++c) {
    for (unsigned s = 1; s < kFoldSlices; ++s) {
      re[c] += part[2 * c][s][threadIdx.x];
      im[c] += part[2 * c + 1][s][threadIdx.x];
    }
  }
  Real largest = 0;
  if (valid) {
    bool finite = true;
#pragma unroll
    for (int c = 0; c < kJobHashings; ++c) {
      if (c >= job.count) break;
      // Tap t of hashing c is the first hashing's tap t + shift[c]: bucket i - shift[c].
      const uint64_t bucket = mod_b(i + g.buckets - mod_b(job.shift[c], g), g);
      z[static_cast<std::size_t>(job.hashing[c]) * g.buckets + bucket] = {re[c], im[c]};
      finite = finite && isfinite(re[c]) && isfinite(im[c]);
      largest = fmax(largest, fmax(fabs(re[c]), fabs(im[c])));
    }
    if (!kPartial && !finite) atomicOr(&counters->nonfinite, 1u);
  }
  if constexpr (!kPartial) {
    const unsigned exponent = __reduce_max_sync(0xffffffffu, biased_exponent(largest));  // warp 0 (kFoldOutputs = 32)
    if (threadIdx.x == 0 && exponent != 0) atomicMax(&counters->fold_exponent, exponent);
  }
}

// The column fold (batch.cuh): block (slab blockIdx.x / job_groups, job group blockIdx.x % job_groups, signal
// group blockIdx.y). Per signal: the threads copy the slab's rows (cp.async, 16 bytes each: B is even, so a
// partial slab's rows are whole pieces too), reset their share of the signal's stale table slots (the fold
// kernel's duty); then the 2^phase_bits lanes of each (column, job) item sum its tap slots q = phase (mod
// 2^phase_bits), add their sums by shuffles, and write them in column order (launch_normalise_batch puts them in bucket
// order), with the gather fold's exponent and finiteness. The blocks of a slab's job groups are adjacent in the grid,
// so the groups after the first find the slab in the L2. What does not depend on the signal (each thread's item, its
// first row, weights and destinations) is set once per block, offsets within the slab are 32-bit bytes (and the
// destinations 32-bit indices: the host keeps this fold to designs whose folded sums fit them) and a tap slot's weights
// vector loads, so that the work per signal is little more than the copy and a few instructions a tap.
template <class Real>
__global__ void __launch_bounds__(kColumnThreads<Real>)
    column_fold_kernel(const Cplx<Real> *__restrict__ x, std::size_t x_stride, const ColumnJob *__restrict__ job_list,
                       int job_count, int job_groups, const uint32_t *__restrict__ buckets,
                       const ColumnWeights<Real> *__restrict__ weights, std::size_t weight_rows, int phase_bits,
                       int64_t half_taps, Geometry g, unsigned signals, unsigned group,
                       Cplx<Real> *__restrict__ by_column, Counters *counters, Table table, int passes, Strides st) {
  constexpr unsigned kResidues = kColumnResidues<Real>, kPlanes = kColumnPlanes<Real>;
  constexpr unsigned kLanes = 16 / sizeof(Real);  // weights per vector
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const unsigned rows = static_cast<unsigned>(g.width);
  auto *weight = reinterpret_cast<ColumnWeights<Real> *>(shared_bytes + rows * kColumnBytes<Real>);
  const unsigned t = threadIdx.x;
  const unsigned slab = blockIdx.x / job_groups, job_group = blockIdx.x % job_groups;
  const int jobs_per_group = (job_count + job_groups - 1) / job_groups;
  const int first_job = static_cast<int>(job_group) * jobs_per_group;
  const int group_jobs = min(jobs_per_group, job_count - first_job);
  const uint64_t first_residue = slab * static_cast<uint64_t>(kResidues);
  const unsigned columns =
      static_cast<unsigned>(g.buckets - first_residue < kResidues ? g.buckets - first_residue : kResidues);
  const unsigned row_bytes = columns * static_cast<unsigned>(sizeof(Cplx<Real>));
  const unsigned first_signal = blockIdx.y * group, last_signal = min(signals, first_signal + group);
  const std::size_t block_vectors = weight_rows * kPlanes * kResidues;
  const ColumnWeights<Real> *__restrict__ block_weights = weights + blockIdx.x * block_vectors;
  // Each thread copies piece t % kPieces of every kRowsPerCopy-th row from row t / kPieces.
  constexpr unsigned kPieces = kColumnBytes<Real> / 16, kRowsPerCopy = kColumnThreads<Real> / kPieces;
  const unsigned piece = t % kPieces, first_copy_row = t / kPieces;
  const bool copies = piece * 16 < row_bytes;
  const std::size_t row_stride = g.buckets * sizeof(Cplx<Real>);
  const auto copy_slab = [&](unsigned s) {
    if (!copies) return;
    const unsigned char *from = reinterpret_cast<const unsigned char *>(x + s * x_stride + first_residue) +
                                first_copy_row * row_stride + piece * 16;
    unsigned char *to = shared_bytes + first_copy_row * kColumnBytes<Real> + piece * 16;
    for (unsigned row = first_copy_row; row < rows; row += kRowsPerCopy) {
      __pipeline_memcpy_async(to, from, 16);
      from += kRowsPerCopy * row_stride;
      to += kRowsPerCopy * kColumnBytes<Real>;
    }
  };
  // The first signal's slab is asked for before the weights, so that its DRAM reads overlap the weights' (from
  // the L2, as large as a slab in some designs) and the items' setup below; both land by the first wait. Every
  // block has a first signal (the grid's y extent is ceil(signals / group)).
  copy_slab(first_signal);
  for (std::size_t i = t; i < block_vectors; i += kColumnThreads<Real>)
    __pipeline_memcpy_async(weight + i, block_weights + i, sizeof(ColumnWeights<Real>));
  // A warp's lanes: warp_items items (consecutive columns) times 2^phase_bits phases. The host keeps a group's
  // items within one pass of the block, so each thread's item, and everything about it that does not depend on
  // the signal, is set once here.
  const unsigned phases = 1u << phase_bits, warp_items = 32u >> phase_bits, lane = t % 32;
  const unsigned phase = lane / warp_items, item = (t / 32) * warp_items + lane % warp_items;
  const unsigned column = item % kResidues, j = item / kResidues;
  const bool valid = item < kResidues * static_cast<unsigned>(group_jobs) && column < columns;
  unsigned start = 0, step = 0, taps = 0, outputs = 0;
  const unsigned limit = rows * kColumnBytes<Real>;
  const ColumnWeights<Real> *w_start = weight;
  unsigned z_index[kJobHashings] = {};
  if (valid) {
    const ColumnJob job = job_list[first_job + static_cast<int>(j)];
    const uint64_t bucket = buckets[(first_job + j) * g.buckets + first_residue + column];
    // Tap slot q is tap p = (bucket + T) mod B + B q, which reads sample base + sigma (p - T).
    const uint64_t p = mod_b(bucket + static_cast<uint64_t>(half_taps), g) + g.buckets * phase;
    const unsigned row =
        static_cast<unsigned>(div_b(tap_index(job.base, job.sigma, static_cast<int64_t>(p) - half_taps, g), g));
    start = row * kColumnBytes<Real> + column * static_cast<unsigned>(sizeof(Cplx<Real>));
    step = job.row_step * kColumnBytes<Real>;
    taps = job.taps;
    w_start = weight + (job.first_weight + phase) * kPlanes * kResidues + column;
    if (phase == 0) outputs = static_cast<unsigned>(job.count);
#pragma unroll
    for (int c = 0; c < kJobHashings; ++c)
      z_index[c] = static_cast<unsigned>(job.hashing[c] * g.buckets + first_residue + column);
  }
  const unsigned w_step = phases * kPlanes * kResidues;
  for (unsigned s = first_signal; s < last_signal; ++s) {
    if (s != first_signal) copy_slab(s);
    __pipeline_commit();
    reset_stale_slots(signal_table(table, s, st), passes, counters + s,
                      blockIdx.x * static_cast<std::size_t>(kColumnThreads<Real>) + t,
                      static_cast<std::size_t>(gridDim.x) * kColumnThreads<Real>);
    __pipeline_wait_prior(0);
    __syncthreads();  // every thread's pieces of the slab (and, the first time, the weights)
    Real re[kJobHashings] = {}, im[kJobHashings] = {};
    unsigned offset = start;
    const ColumnWeights<Real> *w = w_start;
#pragma unroll 4
    for (unsigned q = phase; q < taps; q += phases) {
      const cuda::Vector2<Real> v = *reinterpret_cast<const cuda::Vector2<Real> *>(shared_bytes + offset);
#pragma unroll
      for (unsigned plane = 0; plane < kPlanes; ++plane) {
        const ColumnWeights<Real> wt = w[plane * kResidues];
#pragma unroll
        for (unsigned i = 0; i < kLanes; ++i) {
          re[plane * kLanes + i] += wt.w[i] * v.x;
          im[plane * kLanes + i] += wt.w[i] * v.y;
        }
      }
      w += w_step;
      offset += step;
      if (offset >= limit) offset -= limit;
    }
    for (unsigned lanes = 16; lanes >= warp_items; lanes /= 2) {
#pragma unroll
      for (int c = 0; c < kJobHashings; ++c) {
        re[c] += __shfl_xor_sync(0xffffffffu, re[c], lanes);
        im[c] += __shfl_xor_sync(0xffffffffu, im[c], lanes);
      }
    }
    Cplx<Real> *zs = by_column + s * st.z;
    bool finite = true;
    Real largest = 0;
#pragma unroll
    for (int c = 0; c < kJobHashings; ++c) {
      if (c < static_cast<int>(outputs)) {  // none where phase != 0
        zs[z_index[c]] = {re[c], im[c]};
        finite = finite && isfinite(re[c]) && isfinite(im[c]);
        largest = fmax(largest, fmax(fabs(re[c]), fabs(im[c])));
      }
    }
    if (!finite) atomicOr(&counters[s].nonfinite, 1u);
    const unsigned exponent = __reduce_max_sync(0xffffffffu, biased_exponent(largest));
    if (t % 32 == 0 && exponent != 0) atomicMax(&counters[s].fold_exponent, exponent);
    __syncthreads();  // the slab is read before the next signal's copies overwrite it
  }
}

// Device input, after the fold: scale-safe magnitudes (plan.hpp's normalise) — every folded sum times
// 2^shift from the fold's largest exponent, energy[l] = sum |z|^2 over location loop l's reference hashing
// (by Parseval, its B-point FFT has B times that energy, so the rms bucket magnitude is sqrt(energy[l]);
// only when the floor uses it), and the unscale for the results into this exec's outputs. Each thread scales
// kNormaliseValues sums kBlock apart, their loads issued together: with one sum a thread, a batch's grid ran
// many waves of one short dependent chain each.
constexpr unsigned kNormaliseValues = 4;
// The power of two a signal's folded sums are scaled by (from the fold's largest exponent); the thread that
// passes `publish` records its inverse as the signal's unscale for the results.
template <class Real>
__device__ Real normalising_factor(const Counters *counters, ExecOutputs *exec_outputs_slot, bool publish) {
  const int shift = normalising_shift<Real>(counters->fold_exponent);
  if (publish) exec_outputs_slot->unscale = ldexp(1.0, -shift);
  return ldexp(Real(1), shift);
}
// The location loop whose reference hashing h is, where the floor needs energies; -1 otherwise.
__device__ inline int reference_loop(std::size_t h, const Geometry &g, int location_loops, bool energies) {
  return energies && h < static_cast<std::size_t>(location_loops) * g.hashings_per_loop && h % g.hashings_per_loop == 0
             ? static_cast<int>(h / g.hashings_per_loop)
             : -1;
}
template <class Real>
__global__ void normalise_kernel(Cplx<Real> *z, std::size_t count, Geometry g, int location_loops, bool energies,
                                 double *energy, const Counters *counters, ExecOutputs *exec_outputs_slot, Strides st,
                                 const Cplx<Real> *by_column, const uint32_t *column_of) {
  z += blockIdx.y * st.z;  // signal blockIdx.y of a batch
  const Cplx<Real> *from = by_column != nullptr ? by_column + blockIdx.y * st.z : z;
  energy += blockIdx.y * st.energy;
  counters += blockIdx.y;
  exec_outputs_slot += blockIdx.y;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(kBlock) * kNormaliseValues + threadIdx.x;
  Cplx<Real> v[kNormaliseValues];
#pragma unroll
  for (unsigned k = 0; k < kNormaliseValues; ++k) {
    const std::size_t i = first + k * kBlock;
    v[k] = i < count ? from[by_column != nullptr ? column_of[i] : i] : Cplx<Real>{0, 0};
  }
  const Real factor = normalising_factor<Real>(counters, exec_outputs_slot, first == 0);
#pragma unroll
  for (unsigned k = 0; k < kNormaliseValues; ++k) {
    const std::size_t i = first + k * kBlock;
    double e = 0;
    int loop = -1;  // the location loop whose reference hashing holds z[i], if any
    if (i < count) {
      v[k].re *= factor;
      v[k].im *= factor;
      z[i] = v[k];
      loop = reference_loop(i / g.buckets, g, location_loops, energies);
      if (loop >= 0) e = cabs2(widen(v[k]));
    }
    if (g.buckets % 32 == 0) {  // a warp's 32 values share one hashing: one atomic per warp
      for (unsigned offset = 16; offset > 0; offset /= 2) e += __shfl_down_sync(0xffffffffu, e, offset);
      if (threadIdx.x % 32 == 0 && loop >= 0) atomicAdd(&energy[loop], e);
    } else if (loop >= 0) {
      atomicAdd(&energy[loop], e);
    }
  }
}

// The row kernels' shared steps (normalise_rows_kernel, normalise_fft_kernel; a block per hashing row of a signal):
// stage_column_row starts the 16-byte asynchronous copies of the row as the column fold wrote it (B is even: a row
// is whole 16-byte pieces, every row 16-byte aligned); scale_row scales each bucket's sum, in bucket order, hands
// it to store(b, v) and returns the thread's share of the row's energy; add_row_energy adds the block's shares
// to energy[loop] (blockDim whole warps: a warp's sum by shuffles, one atomic per warp).
template <class Real>
__device__ void stage_column_row(unsigned char *to, const Cplx<Real> *row, std::size_t buckets) {
  const auto *from = reinterpret_cast<const unsigned char *>(row);
  for (unsigned p = threadIdx.x; p < buckets * sizeof(Cplx<Real>) / 16; p += blockDim.x)
    __pipeline_memcpy_async(to + 16 * p, from + 16 * p, 16);
  __pipeline_commit();
}
template <class Real, class Load, class Store>
__device__ double scale_row(std::size_t buckets, Real factor, Load load, Store store) {
  double e = 0;
#pragma unroll 4
  for (unsigned b = threadIdx.x; b < buckets; b += blockDim.x) {
    Cplx<Real> v = load(b);
    v.re *= factor;
    v.im *= factor;
    store(b, v);
    e += cabs2(widen(v));
  }
  return e;
}
__device__ inline void add_row_energy(double e, double *energy) {
  for (unsigned offset = 16; offset > 0; offset /= 2) e += __shfl_down_sync(0xffffffffu, e, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(energy, e);
}

// The column fold's sums to bucket order, for rows that fit kNormaliseRowBytes of shared memory: a block per
// hashing row of a signal (grid (hashings, signals)) stages the row as the column fold wrote it (16-byte
// asynchronous copies, all in flight at once), then writes each bucket's sum from it, scaled as normalise_kernel
// does, with the row's energy if it is a loop's reference. normalise_kernel's gather instead reads each sum from the
// L2 alone (a sector per 8 or 16 bytes). Rows of at least kNormaliseRowMinBytes: shorter rows made too many small
// blocks (H200, same call: 2^16 k100 b1024 complex64, 2 KiB rows, 0.036 ms against the gather's 0.033; 2^20 k1000
// b64, 16 KiB rows, 0.019 against 0.025). kNormaliseRowThreads threads, so that a batch's rows (18 x 64 at 2^20
// k1000 b64) start in one wave (with 256 threads, eight blocks per SM, they took two): H200, same call, three
// rounds, complex64 0.019-0.021 -> 0.016 ms (the batch 0.341-0.346 -> 0.337-0.341), complex128 unchanged (0.026).
constexpr std::size_t kNormaliseRowBytes = 48 * 1024, kNormaliseRowMinBytes = 8 * 1024;
constexpr unsigned kNormaliseRowThreads = 128;
template <class Real>
__global__ void __launch_bounds__(kNormaliseRowThreads)
    normalise_rows_kernel(Cplx<Real> *z, Geometry g, int location_loops, bool energies, double *energy,
                          const Counters *counters, ExecOutputs *exec_outputs_slot, Strides st,
                          const Cplx<Real> *by_column, const uint32_t *column_of) {
  extern __shared__ __align__(16) unsigned char row_bytes[];
  const auto *row = reinterpret_cast<const Cplx<Real> *>(row_bytes);
  const std::size_t h = blockIdx.x, first = h * g.buckets;
  z += blockIdx.y * st.z + first;  // signal blockIdx.y of a batch, hashing h
  column_of += first;
  stage_column_row(row_bytes, by_column + blockIdx.y * st.z + first, g.buckets);
  const Real factor =
      normalising_factor<Real>(counters + blockIdx.y, exec_outputs_slot + blockIdx.y, h == 0 && threadIdx.x == 0);
  const int loop = reference_loop(h, g, location_loops, energies);
  __pipeline_wait_prior(0);
  __syncthreads();
  const double e = scale_row(
      g.buckets, factor, [&](unsigned b) { return row[column_of[b] - first]; },
      [&](unsigned b, Cplx<Real> v) { z[b] = v; });
  if (loop >= 0) add_row_energy(e, &energy[blockIdx.y * st.energy + static_cast<std::size_t>(loop)]);
}

// The normalisation and the bucket FFTs in one kernel, for power-of-two B up to kFusedFftBuckets<Real>: a block per
// hashing row of a signal (grid (hashings, signals)) brings the row into shared memory (the column fold's sums
// staged as normalise_rows_kernel does and put in bucket order through column_of, or the row of z), scales it and
// adds the row's energy as normalise_kernel does (`normalised`: host input, which came up scaled with its energies:
// neither), transforms it (../bucket_fft.hpp: radix-8 Stockham passes between two padded row buffers, like the
// cuFFT plan it replaces forward and unnormalised) and writes it to z.
template <class Real>
__global__ void __launch_bounds__(kFusedFftThreads)
    normalise_fft_kernel(Cplx<Real> *z, Geometry g, int location_loops, bool energies, double *energy,
                         const Counters *counters, ExecOutputs *exec_outputs_slot, Strides st,
                         const Cplx<Real> *by_column, const uint32_t *column_of, const Cplx<Real> *__restrict__ twiddle,
                         bool normalised) {
  extern __shared__ __align__(16) unsigned char fft_bytes[];
  const unsigned n = static_cast<unsigned>(g.buckets);
  Cplx<Real> *x = reinterpret_cast<Cplx<Real> *>(fft_bytes), *y = x + fft_slot(n);
  const std::size_t h = blockIdx.x, first = h * g.buckets;
  z += blockIdx.y * st.z + first;  // signal blockIdx.y of a batch, hashing h
  if (by_column != nullptr) {
    stage_column_row(reinterpret_cast<unsigned char *>(y), by_column + blockIdx.y * st.z + first, n);  // unpadded
    column_of += first;
  }
  Real factor = 1;
  int loop = -1;
  if (!normalised) {
    factor =
        normalising_factor<Real>(counters + blockIdx.y, exec_outputs_slot + blockIdx.y, h == 0 && threadIdx.x == 0);
    loop = reference_loop(h, g, location_loops, energies);
  }
  if (by_column != nullptr) {
    __pipeline_wait_prior(0);
    __syncthreads();
  }
  const double e = scale_row(
      n, factor, [&](unsigned b) { return by_column != nullptr ? y[column_of[b] - first] : z[b]; },
      [&](unsigned b, Cplx<Real> v) { x[fft_slot(b)] = v; });
  if (loop >= 0) add_row_energy(e, &energy[blockIdx.y * st.energy + static_cast<std::size_t>(loop)]);
  __syncthreads();
  const Cplx<Real> *result = bucket_fft_passes(
      x, y, n, twiddle,
      [](unsigned count, auto &&butterfly) {
        for (unsigned j = threadIdx.x; j < count; j += blockDim.x) butterfly(j);
      },
      [] { __syncthreads(); });
  for (unsigned b = threadIdx.x; b < n; b += blockDim.x) z[b] = result[fft_slot(b)];
}

}  // namespace

void launch_reset_table(const Table &t, int passes, const Counters *counters, std::size_t distinct_capacity,
                        cudaStream_t stream) {
  launch_reset_table_batch(t, passes, counters, distinct_capacity, Strides{}, 1, stream);
}

void launch_reset_table_batch(const Table &t, int passes, const Counters *counters, std::size_t distinct_capacity,
                              const Strides &st, unsigned signals, cudaStream_t stream) {
  reset_table_kernel<<<dim3(blocks_for(distinct_capacity), signals), kBlock, 0, stream>>>(t, passes, counters, st);
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void launch_fold(bool power_of_two, const Cplx<Real> *x, const Real *main_window, const Real *far_window,
                 const FoldJob *jobs, std::size_t outputs, int64_t main_half_taps, int64_t far_half_taps,
                 const Geometry &g, Cplx<Real> *z, Counters *counters, const ExecOutputs &exec_outputs,
                 ExecOutputs *exec_outputs_slot, const Table &table, int passes, cudaStream_t stream) {
  auto *fold = power_of_two ? fold_kernel<Real, true, false> : fold_kernel<Real, false, false>;
  fold<<<blocks_for(outputs, kFoldOutputs), dim3(kFoldOutputs, kFoldSlices), 0, stream>>>(
      x, main_window, far_window, jobs, outputs, main_half_taps, far_half_taps, g, z, counters, exec_outputs,
      exec_outputs_slot, table, passes, 0, 0, 0, Strides{});
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void launch_fold_batch(bool power_of_two, const Cplx<Real> *x, std::size_t x_stride, const Real *main_window,
                       const Real *far_window, const FoldJob *jobs, std::size_t outputs, int64_t main_half_taps,
                       int64_t far_half_taps, const Geometry &g, Cplx<Real> *z, Counters *counters, const Table &table,
                       int passes, const Strides &st, unsigned signals, cudaStream_t stream) {
  auto *fold = power_of_two ? fold_kernel<Real, true, false> : fold_kernel<Real, false, false>;
  fold<<<dim3(blocks_for(outputs, kFoldOutputs), signals), dim3(kFoldOutputs, kFoldSlices), 0, stream>>>(
      x, main_window, far_window, jobs, outputs, main_half_taps, far_half_taps, g, z, counters, ExecOutputs{}, nullptr,
      table, passes, 0, 0, x_stride, st);
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void launch_fold_block(bool power_of_two, const Cplx<Real> *x, uint64_t offset, uint64_t length,
                       const Real *main_window, const Real *far_window, const FoldJob *jobs, std::size_t outputs,
                       int64_t main_half_taps, int64_t far_half_taps, const Geometry &g, Cplx<Real> *z,
                       Counters *counters, const ExecOutputs &exec_outputs, ExecOutputs *exec_outputs_slot,
                       const Table &table, int passes, cudaStream_t stream) {
  auto *fold = power_of_two ? fold_kernel<Real, true, true> : fold_kernel<Real, false, true>;
  fold<<<blocks_for(outputs, kFoldOutputs), dim3(kFoldOutputs, kFoldSlices), 0, stream>>>(
      x, main_window, far_window, jobs, outputs, main_half_taps, far_half_taps, g, z, counters, exec_outputs,
      exec_outputs_slot, table, passes, offset, length, 0, Strides{});
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void allow_fold_column_shared(const Geometry &g, std::size_t weight_rows) {
  cuda::allow_dynamic_shared(reinterpret_cast<const void *>(column_fold_kernel<Real>),
                             column_fold_shared<Real>(g.width, weight_rows));
}

template <class Real>
void launch_fold_column_batch(const Cplx<Real> *x, std::size_t x_stride, const ColumnJob *jobs, int job_count,
                              int job_groups, const uint32_t *buckets, const ColumnWeights<Real> *weights,
                              std::size_t weight_rows, int phase_bits, int64_t half_taps, const Geometry &g,
                              Cplx<Real> *by_column, Counters *counters, const Table &table, int passes,
                              const Strides &st, unsigned signals, unsigned group, cudaStream_t stream) {
  const std::size_t shared = column_fold_shared<Real>(g.width, weight_rows);
  const dim3 grid(blocks_for(g.buckets, kColumnResidues<Real>) * static_cast<unsigned>(job_groups),
                  (signals + group - 1) / group);
  column_fold_kernel<Real><<<grid, kColumnThreads<Real>, shared, stream>>>(
      x, x_stride, jobs, job_count, job_groups, buckets, weights, weight_rows, phase_bits, half_taps, g, signals, group,
      by_column, counters, table, passes, st);
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
__global__ void sum_rank_folds_kernel(const Cplx<Real> *const *folds, int ranks, std::size_t count, Cplx<Real> *sum) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    Cplx<Real> total = folds[0][i];
    for (int r = 1; r < ranks; ++r) {
      const Cplx<Real> v = folds[r][i];
      total.re += v.re;
      total.im += v.im;
    }
    sum[i] = total;
  }
}

template <class Real>
void launch_sum_rank_folds(const Cplx<Real> *const *folds, int ranks, std::size_t count, Cplx<Real> *sum,
                           cudaStream_t stream) {
  sum_rank_folds_kernel<Real><<<blocks_for(count), kBlock, 0, stream>>>(folds, ranks, count, sum);
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void launch_normalise_batch(Cplx<Real> *z, std::size_t count, const Geometry &g, int location_loops, bool energies,
                            double *energy, const Counters *counters, ExecOutputs *exec_outputs_slots,
                            const Strides &st, unsigned signals, const Cplx<Real> *by_column, const uint32_t *column_of,
                            cudaStream_t stream) {
  const std::size_t row_bytes = g.buckets * sizeof(Cplx<Real>);
  if (by_column != nullptr && row_bytes >= kNormaliseRowMinBytes && row_bytes <= kNormaliseRowBytes) {
    normalise_rows_kernel<Real>
        <<<dim3(static_cast<unsigned>(count / g.buckets), signals), kNormaliseRowThreads, row_bytes, stream>>>(
            z, g, location_loops, energies, energy, counters, exec_outputs_slots, st, by_column, column_of);
  } else {
    normalise_kernel<Real><<<dim3(blocks_for(count, kBlock * kNormaliseValues), signals), kBlock, 0, stream>>>(
        z, count, g, location_loops, energies, energy, counters, exec_outputs_slots, st, by_column, column_of);
  }
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
std::size_t normalise_fft_shared(const Geometry &g) {
  return 2 * fft_slot(static_cast<unsigned>(g.buckets)) * sizeof(Cplx<Real>);
}

template <class Real>
void allow_normalise_fft_shared(const Geometry &g) {
  cuda::allow_dynamic_shared(reinterpret_cast<const void *>(normalise_fft_kernel<Real>), normalise_fft_shared<Real>(g));
}

template <class Real>
void launch_normalise_fft(Cplx<Real> *z, std::size_t hashings, const Geometry &g, int location_loops, bool energies,
                          double *energy, const Counters *counters, ExecOutputs *exec_outputs_slots, const Strides &st,
                          unsigned signals, const Cplx<Real> *by_column, const uint32_t *column_of,
                          const Cplx<Real> *twiddles, bool normalised, cudaStream_t stream) {
  const auto threads = static_cast<unsigned>(std::clamp<uint64_t>(g.buckets / 8, 32, kFusedFftThreads));
  normalise_fft_kernel<Real>
      <<<dim3(static_cast<unsigned>(hashings), signals), threads, normalise_fft_shared<Real>(g), stream>>>(
          z, g, location_loops, energies, energy, counters, exec_outputs_slots, st, by_column, column_of, twiddles,
          normalised);
  SFFT_CUDA_CHECK_LAUNCH();
}

template void launch_fold<float>(bool, const Cplx<float> *, const float *, const float *, const FoldJob *, std::size_t,
                                 int64_t, int64_t, const Geometry &, Cplx<float> *, Counters *, const ExecOutputs &,
                                 ExecOutputs *, const Table &, int, cudaStream_t);
template void launch_fold_block<float>(bool, const Cplx<float> *, uint64_t, uint64_t, const float *, const float *,
                                       const FoldJob *, std::size_t, int64_t, int64_t, const Geometry &, Cplx<float> *,
                                       Counters *, const ExecOutputs &, ExecOutputs *, const Table &, int,
                                       cudaStream_t);
template void launch_fold_block<double>(bool, const Cplx<double> *, uint64_t, uint64_t, const double *, const double *,
                                        const FoldJob *, std::size_t, int64_t, int64_t, const Geometry &,
                                        Cplx<double> *, Counters *, const ExecOutputs &, ExecOutputs *, const Table &,
                                        int, cudaStream_t);
template void launch_sum_rank_folds<float>(const Cplx<float> *const *, int, std::size_t, Cplx<float> *, cudaStream_t);
template void launch_sum_rank_folds<double>(const Cplx<double> *const *, int, std::size_t, Cplx<double> *,
                                            cudaStream_t);
template void launch_fold<double>(bool, const Cplx<double> *, const double *, const double *, const FoldJob *,
                                  std::size_t, int64_t, int64_t, const Geometry &, Cplx<double> *, Counters *,
                                  const ExecOutputs &, ExecOutputs *, const Table &, int, cudaStream_t);

template void launch_fold_batch<float>(bool, const Cplx<float> *, std::size_t, const float *, const float *,
                                       const FoldJob *, std::size_t, int64_t, int64_t, const Geometry &, Cplx<float> *,
                                       Counters *, const Table &, int, const Strides &, unsigned, cudaStream_t);
template void allow_normalise_fft_shared<float>(const Geometry &);
template void allow_normalise_fft_shared<double>(const Geometry &);
template void launch_normalise_fft<float>(Cplx<float> *, std::size_t, const Geometry &, int, bool, double *,
                                          const Counters *, ExecOutputs *, const Strides &, unsigned,
                                          const Cplx<float> *, const uint32_t *, const Cplx<float> *, bool,
                                          cudaStream_t);
template void launch_normalise_fft<double>(Cplx<double> *, std::size_t, const Geometry &, int, bool, double *,
                                           const Counters *, ExecOutputs *, const Strides &, unsigned,
                                           const Cplx<double> *, const uint32_t *, const Cplx<double> *, bool,
                                           cudaStream_t);
template void launch_normalise_batch<float>(Cplx<float> *, std::size_t, const Geometry &, int, bool, double *,
                                            const Counters *, ExecOutputs *, const Strides &, unsigned,
                                            const Cplx<float> *, const uint32_t *, cudaStream_t);
template void launch_fold_batch<double>(bool, const Cplx<double> *, std::size_t, const double *, const double *,
                                        const FoldJob *, std::size_t, int64_t, int64_t, const Geometry &,
                                        Cplx<double> *, Counters *, const Table &, int, const Strides &, unsigned,
                                        cudaStream_t);
template void launch_normalise_batch<double>(Cplx<double> *, std::size_t, const Geometry &, int, bool, double *,
                                             const Counters *, ExecOutputs *, const Strides &, unsigned,
                                             const Cplx<double> *, const uint32_t *, cudaStream_t);
template void allow_fold_column_shared<float>(const Geometry &, std::size_t);
template void allow_fold_column_shared<double>(const Geometry &, std::size_t);
template void launch_fold_column_batch<float>(const Cplx<float> *, std::size_t, const ColumnJob *, int, int,
                                              const uint32_t *, const ColumnWeights<float> *, std::size_t, int, int64_t,
                                              const Geometry &, Cplx<float> *, Counters *, const Table &, int,
                                              const Strides &, unsigned, unsigned, cudaStream_t);
template void launch_fold_column_batch<double>(const Cplx<double> *, std::size_t, const ColumnJob *, int, int,
                                               const uint32_t *, const ColumnWeights<double> *, std::size_t, int,
                                               int64_t, const Geometry &, Cplx<double> *, Counters *, const Table &,
                                               int, const Strides &, unsigned, unsigned, cudaStream_t);

}  // namespace sfft::sparse::cuda_stages
