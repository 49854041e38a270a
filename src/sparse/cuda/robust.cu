// SPDX-License-Identifier: Apache-2.0
// Sparse FFT, CUDA: ROBUST location by votes over loops, candidate selection, and the refinement rounds
// (median estimates over every loop, then subtraction of the change from every hashing); the noise energy per
// bucket each pass decodes against, and the report's sums (docs/sparse-noise.md: the CPU backend's design,
// the same digits of the same energies).
#include "sparse/cuda/internal.cuh"

namespace sfft::sparse::cuda_stages {
namespace {

constexpr unsigned kNoiseBlocks = 64;  // histogram blocks at most (they stride over the buckets)
constexpr unsigned kNoiseMedianThreads = 1024;
static_assert(kNoiseDigits % kNoiseMedianThreads == 0, "whole digits per median thread");

// Sum of v over the block (kBlock threads), returned to thread 0; `scratch` holds kWarpsPerBlock entries.
template <class T>
__device__ T block_sum(T v, T *scratch) {
  for (unsigned offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  T total = 0;
  if (threadIdx.x == 0)
    for (unsigned w = 0; w < blockDim.x / 32; ++w) total += scratch[w];
  return total;
}

// Noise measurement, step 1: the digits of |z|^2 over the reference hashing of every loop into the histogram
// (a block's own in shared memory first), and their energy into noise->signal or noise->residual.
template <class Real>
__global__ void __launch_bounds__(kBlock)
    noise_histogram_kernel(const Cplx<Real> *z, const std::size_t *first_hashing, int total_loops, uint64_t buckets,
                           NoiseSum sum, NoiseState *noise) {
  __shared__ unsigned local[kNoiseDigits];
  __shared__ double scratch[kWarpsPerBlock];
  for (unsigned i = threadIdx.x; i < kNoiseDigits; i += blockDim.x) local[i] = 0;
  cuda::wait_for_previous_kernel();
  __syncthreads();
  const std::size_t count = static_cast<std::size_t>(total_loops) * buckets;
  double energy = 0;
  for (std::size_t id = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; id < count;
       id += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t l = id / buckets;
    const double e = cabs2(load_bucket(z, first_hashing[l], id - l * buckets, buckets));
    energy += e;
    atomicAdd(&local[noise_digit(e)], 1u);
  }
  const double block_energy = block_sum(energy, scratch);  // its barrier also orders the shared histogram
  for (unsigned i = threadIdx.x; i < kNoiseDigits; i += blockDim.x)
    if (local[i] != 0) atomicAdd(&noise->histogram[i], local[i]);
  if (threadIdx.x == 0 && sum != NoiseSum::None)
    atomicAdd(sum == NoiseSum::Signal ? &noise->signal : &noise->residual, block_energy);
}

// Noise measurement, step 2 (one block): nu from the digit that holds the median (the entry of rank count/2,
// as the CPU's nth_element picks); after the last refinement also the report's outlier limit, the residual
// buckets above it, and |v|^2 of every candidate, summed, with those above the limit (the top-k step sums the
// returned ones; the difference is what was found but not returned). Clears the histogram for the next
// measurement.
__global__ void __launch_bounds__(kNoiseMedianThreads)
    noise_median_kernel(NoiseState *noise, std::size_t count, NoiseSum sum, double accuracy, int loops, Table table,
                        const Counters *counters) {
  constexpr unsigned kPer = kNoiseDigits / kNoiseMedianThreads;
  __shared__ unsigned warp_totals[kNoiseMedianThreads / 32];
  __shared__ unsigned median_digit;
  __shared__ unsigned scratch[kNoiseMedianThreads / 32];
  __shared__ double energy_scratch[kNoiseMedianThreads / 32];
  cuda::wait_for_previous_kernel();
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  unsigned mine[kPer], total = 0;
  for (unsigned q = 0; q < kPer; ++q) {
    mine[q] = noise->histogram[t * kPer + q];
    total += mine[q];
  }
  unsigned scan = total;  // inclusive prefix over the warp's threads, then over the warps
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    const unsigned v = __shfl_up_sync(0xffffffffu, scan, offset);
    if (lane >= offset) scan += v;
  }
  if (lane == 31) warp_totals[warp] = scan;
  if (t == 0) median_digit = 0;
  __syncthreads();
  if (warp == 0) {
    unsigned v = warp_totals[lane];
    for (unsigned offset = 1; offset < 32; offset *= 2) {
      const unsigned u = __shfl_up_sync(0xffffffffu, v, offset);
      if (lane >= offset) v += u;
    }
    warp_totals[lane] = v;
  }
  __syncthreads();
  const std::size_t rank = count / 2;
  std::size_t before = scan - total + (warp > 0 ? warp_totals[warp - 1] : 0u);
  for (unsigned q = 0; q < kPer; ++q) {
    if (before <= rank && rank < before + mine[q]) median_digit = t * kPer + q;  // one thread writes
    before += mine[q];
  }
  __syncthreads();
  const double nu = noise_from_median_digit(median_digit);
  if (sum == NoiseSum::Residual) {
    const unsigned limit = noise_digit(outlier_limit2(accuracy, nu, noise->signal / loops));
    unsigned above = 0;
    for (unsigned q = 0; q < kPer; ++q) above += t * kPer + q > limit ? mine[q] : 0u;
    const unsigned outliers = block_sum(above, scratch);
    __syncthreads();  // scratch is read by thread 0 above and written again below
    double found = 0;
    unsigned found_over = 0;
    const unsigned candidates = counters->candidates;
    for (unsigned i = t; i < candidates; i += kNoiseMedianThreads) {
      const double e = cabs2(table.value[table.candidates[i]]);
      found += e;
      found_over += noise_digit(e) > limit ? 1u : 0u;
    }
    const double found_energy = block_sum(found, energy_scratch);
    const unsigned found_outliers = block_sum(found_over, scratch);
    if (t == 0) {
      noise->limit_digit = limit;
      noise->outliers = outliers;
      noise->found = found_energy;
      noise->found_outliers = found_outliers;
    }
  }
  for (unsigned q = 0; q < kPer; ++q) noise->histogram[t * kPer + q] = 0;
  if (t == 0) noise->nu = nu;
}

// ROBUST, pass `pass`: decodes every bucket of every location loop against the noise the pass measured (the
// floor and the noise-scaled consistency bound, bucket_math.hpp); each frequency found gets its find's votes
// (two when the bucket stands out of the noise), unless the comb pre-pass is on (approved != nullptr) and did
// not approve its residue freq & comb_mask.
template <class Real, bool kPowerOfTwo>
__global__ void vote_kernel(const Cplx<Real> *z, const LoopParams *loops, const NoiseState *noise, int location_loops,
                            int pass, Geometry g, Table t, Counters *counters, const uint32_t *approved,
                            uint64_t comb_mask) {
  specialise<kPowerOfTwo>(g);
  cuda::wait_for_previous_kernel();
  std::size_t id = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (id >= static_cast<std::size_t>(location_loops) * g.buckets) return;
  int l = static_cast<int>(div_b(id, g));
  uint64_t b = mod_b(id, g);
  std::size_t h0 = static_cast<std::size_t>(l) * g.hashings_per_loop;
  auto load = [&](int j) { return load_bucket(z, h0 + j, b, g.buckets); };
  const double nu = noise->nu;
  Decoded d = decode_bucket(b, load, loops[l], noise_floor_magnitude(nu), g, noise_robust_limit2(nu));
  if (!d.found) return;
  if (approved != nullptr && !comb_approved(approved, d.freq & comb_mask)) return;
  atomicAdd(&t.votes[static_cast<std::size_t>(pass) * t.size + table_insert(t, d.freq, counters)],
            find_votes(cabs2(load(0)), nu));  // soft votes (bucket_math.hpp)
}

// ROBUST, pass `pass`: every listed frequency with >= min_votes votes in this pass that is not yet a
// candidate becomes one (each slot is listed once, so the flag needs no atomics).
__global__ void select_kernel(Table t, int pass, int min_votes, Counters *counters) {
  cuda::wait_for_previous_kernel();
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= counters->distinct) return;
  unsigned slot = t.slots[i];
  const unsigned votes = t.votes[static_cast<std::size_t>(pass) * t.size + slot];
  if (t.is_candidate[slot] || votes < static_cast<unsigned>(min_votes)) return;
  t.is_candidate[slot] = 1;
  t.candidates[atomicAdd(&counters->candidates, 1u)] = slot;
}

// Median of the warp's `count` values in v[0..count) (shared memory), every lane returning it: each lane
// ranks its entries against all (ties broken by index), and the one or two middle ranks are summed.
__device__ double warp_median(const double *v, int count, unsigned lane) {
  double sum = 0;
  const int lower = (count - 1) / 2, upper = count / 2;
  for (int a = static_cast<int>(lane); a < count; a += 32) {
    int rank = 0;
    for (int b = 0; b < count; ++b) rank += v[b] < v[a] || (v[b] == v[a] && b < a);
    if (rank == lower) sum += v[a];
    if (rank == upper) sum += v[a];
  }
  for (unsigned offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  return 0.5 * sum;
}

// ROBUST refinement, step 1: value = applied + median over all loops of the residual's estimate.
template <class Real, bool kPowerOfTwo>
__global__ void __launch_bounds__(kBlock)
    estimate_kernel(Table t, const Counters *counters, const Cplx<Real> *z, const LoopParams *loops,
                    const std::size_t *first_hashing, int total_loops, Geometry g) {
  __shared__ double re[kWarpsPerBlock][kMaxLoops], im[kWarpsPerBlock][kMaxLoops];
  specialise<kPowerOfTwo>(g);
  cuda::wait_for_previous_kernel();
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned candidates = counters->candidates;
  for (unsigned i = blockIdx.x * kWarpsPerBlock + warp; i < candidates; i += gridDim.x * kWarpsPerBlock) {
    const unsigned slot = t.candidates[i];
    const uint64_t freq = t.keys[slot];
    for (int l = static_cast<int>(lane); l < total_loops; l += 32) {
      int64_t offset = 0;
      uint64_t b = home_bucket(mul_mod(loops[l].sigma, freq, g), g, &offset);
      Cplx<double> e =
          estimate(load_bucket(z, first_hashing[l], b, g.buckets), freq, loops[l], static_cast<double>(offset), g);
      re[warp][l] = e.re;
      im[warp][l] = e.im;
    }
    __syncwarp();
    double median_re = warp_median(re[warp], total_loops, lane);
    double median_im = warp_median(im[warp], total_loops, lane);
    if (lane == 0) {
      Cplx<double> applied = t.applied[slot];
      t.value[slot] = {applied.re + median_re, applied.im + median_im};
    }
    __syncwarp();  // the next candidate overwrites re/im
  }
}

// ROBUST refinement, step 2: subtract (value - applied) from every hashing of every loop; applied = value.
template <class Real, bool kPowerOfTwo>
__global__ void __launch_bounds__(kBlock)
    subtract_kernel(Table t, const Counters *counters, const LoopParams *loops, const std::size_t *first_hashing,
                    int location_loops, int total_loops, Geometry g, Cplx<Real> *z) {
  specialise<kPowerOfTwo>(g);
  cuda::wait_for_previous_kernel();
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned candidates = counters->candidates;
  for (unsigned i = blockIdx.x * kWarpsPerBlock + warp; i < candidates; i += gridDim.x * kWarpsPerBlock) {
    const unsigned slot = t.candidates[i];
    const uint64_t freq = t.keys[slot];
    const Cplx<double> value = t.value[slot], applied = t.applied[slot];
    const Cplx<double> delta{value.re - applied.re, value.im - applied.im};
    for (int l = static_cast<int>(lane); l < total_loops; l += 32) {
      Cplx<Real> *zl = z + first_hashing[l] * g.buckets;
      for_each_contribution(
          freq, delta, loops[l], l < location_loops ? g.hashings_per_loop : 1, g,
          [&](int j, uint64_t b, Cplx<double> c) { atomic_sub(zl + static_cast<std::size_t>(j) * g.buckets + b, c); });
    }
    __syncwarp();  // every lane has read `applied`
    if (lane == 0) t.applied[slot] = value;
  }
}

}  // namespace

template <class Real>
void launch_noise(const Cplx<Real> *z, const std::size_t *first_hashing, int total_loops, const Geometry &g,
                  NoiseSum sum, double accuracy, const Table &t, const Counters *counters, NoiseState *noise,
                  cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(total_loops) * g.buckets;
  cuda::launch_overlapped(noise_histogram_kernel<Real>, std::min(blocks_for(count), kNoiseBlocks), kBlock, stream, z,
                          first_hashing, total_loops, g.buckets, sum, noise);
  cuda::launch_overlapped(noise_median_kernel, 1, kNoiseMedianThreads, stream, noise, count, sum, accuracy, total_loops,
                          t, counters);
}

template <class Real>
void launch_vote(bool power_of_two, const Cplx<Real> *z, const LoopParams *loops, const NoiseState *noise,
                 int location_loops, int pass, const Geometry &g, const Table &t, Counters *counters,
                 const uint32_t *approved, uint64_t comb_mask, cudaStream_t stream) {
  const std::size_t decoders = static_cast<std::size_t>(location_loops) * g.buckets;
  cuda::launch_overlapped(power_of_two ? vote_kernel<Real, true> : vote_kernel<Real, false>, blocks_for(decoders),
                          kBlock, stream, z, loops, noise, location_loops, pass, g, t, counters, approved, comb_mask);
}

Report robust_report(const Design &d, const Result &r) {
  const ReportSums &s = r.report;
  Report report;
  report.variant = Variant::Robust;
  report.count = r.count;
  report.significant = s.significant;
  const double unscale2 = s.unscale * s.unscale;
  finish_report(report, d, s.signal * unscale2, s.residual * unscale2, s.outliers, d.total_loops(), s.nu * unscale2,
                s.kept * unscale2, s.dropped * unscale2, s.dropped_outliers);
  return report;
}

void launch_select(const Table &t, int pass, int min_votes, Counters *counters, std::size_t distinct_capacity,
                   cudaStream_t stream) {
  cuda::launch_overlapped(select_kernel, blocks_for(distinct_capacity), kBlock, stream, t, pass, min_votes, counters);
}

template <class Real>
void launch_refine_round(bool power_of_two, unsigned blocks, const Table &t, Counters *counters, Cplx<Real> *z,
                         const LoopParams *loops, const std::size_t *first_hashing, int location_loops, int total_loops,
                         const Geometry &g, cudaStream_t stream) {
  cuda::launch_overlapped(power_of_two ? estimate_kernel<Real, true> : estimate_kernel<Real, false>, blocks, kBlock,
                          stream, t, counters, z, loops, first_hashing, total_loops, g);
  cuda::launch_overlapped(power_of_two ? subtract_kernel<Real, true> : subtract_kernel<Real, false>, blocks, kBlock,
                          stream, t, counters, loops, first_hashing, location_loops, total_loops, g, z);
}

template void launch_noise<float>(const Cplx<float> *, const std::size_t *, int, const Geometry &, NoiseSum, double,
                                  const Table &, const Counters *, NoiseState *, cudaStream_t);
template void launch_noise<double>(const Cplx<double> *, const std::size_t *, int, const Geometry &, NoiseSum, double,
                                   const Table &, const Counters *, NoiseState *, cudaStream_t);
template void launch_vote<float>(bool, const Cplx<float> *, const LoopParams *, const NoiseState *, int, int,
                                 const Geometry &, const Table &, Counters *, const uint32_t *, uint64_t, cudaStream_t);
template void launch_refine_round<float>(bool, unsigned, const Table &, Counters *, Cplx<float> *, const LoopParams *,
                                         const std::size_t *, int, int, const Geometry &, cudaStream_t);
template void launch_vote<double>(bool, const Cplx<double> *, const LoopParams *, const NoiseState *, int, int,
                                  const Geometry &, const Table &, Counters *, const uint32_t *, uint64_t,
                                  cudaStream_t);
template void launch_refine_round<double>(bool, unsigned, const Table &, Counters *, Cplx<double> *, const LoopParams *,
                                          const std::size_t *, int, int, const Geometry &, cudaStream_t);

}  // namespace sfft::sparse::cuda_stages
