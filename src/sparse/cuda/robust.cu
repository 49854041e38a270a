// SPDX-License-Identifier: Apache-2.0
// Sparse FFT, CUDA: ROBUST location by votes over loops, candidate selection, and the refinement rounds
// (median estimates over every loop, then subtraction of the change from every hashing).
#include "sparse/cuda/internal.cuh"

namespace sfft::sparse::cuda_stages {
namespace {

// ROBUST, pass `pass`: decodes every bucket of every location loop; each frequency found gets a vote, unless
// the comb pre-pass is on (approved != nullptr) and did not approve its residue freq & comb_mask.
template <class Real, bool kPowerOfTwo>
__global__ void vote_kernel(const Cplx<Real> *z, const LoopParams *loops, const double *energy, double floor_relative,
                            int location_loops, int pass, Geometry g, Table t, Counters *counters,
                            const uint32_t *approved, uint64_t comb_mask) {
  specialise<kPowerOfTwo>(g);
  cuda::wait_for_previous_kernel();
  std::size_t id = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (id >= static_cast<std::size_t>(location_loops) * g.buckets) return;
  int l = static_cast<int>(div_b(id, g));
  uint64_t b = mod_b(id, g);
  std::size_t h0 = static_cast<std::size_t>(l) * g.hashings_per_loop;
  auto load = [&](int j) { return load_bucket(z, h0 + j, b, g.buckets); };
  Decoded d = decode_bucket(b, load, loops[l], floor_relative * sqrt(energy[l]), g);
  if (!d.found) return;
  if (approved != nullptr && !comb_approved(approved, d.freq & comb_mask)) return;
  atomicAdd(&t.votes[static_cast<std::size_t>(pass) * t.size + table_insert(t, d.freq, counters)], 1u);
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
void launch_vote(bool power_of_two, const Cplx<Real> *z, const LoopParams *loops, const double *energy,
                 double floor_relative, int location_loops, int pass, const Geometry &g, const Table &t,
                 Counters *counters, const uint32_t *approved, uint64_t comb_mask, cudaStream_t stream) {
  const std::size_t decoders = static_cast<std::size_t>(location_loops) * g.buckets;
  cuda::launch_overlapped(power_of_two ? vote_kernel<Real, true> : vote_kernel<Real, false>, blocks_for(decoders),
                          kBlock, stream, z, loops, energy, floor_relative, location_loops, pass, g, t, counters,
                          approved, comb_mask);
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

template void launch_vote<float>(bool, const Cplx<float> *, const LoopParams *, const double *, double, int, int,
                                 const Geometry &, const Table &, Counters *, const uint32_t *, uint64_t, cudaStream_t);
template void launch_refine_round<float>(bool, unsigned, const Table &, Counters *, Cplx<float> *, const LoopParams *,
                                         const std::size_t *, int, int, const Geometry &, cudaStream_t);
template void launch_vote<double>(bool, const Cplx<double> *, const LoopParams *, const double *, double, int, int,
                                  const Geometry &, const Table &, Counters *, const uint32_t *, uint64_t,
                                  cudaStream_t);
template void launch_refine_round<double>(bool, unsigned, const Table &, Counters *, Cplx<double> *, const LoopParams *,
                                          const std::size_t *, int, int, const Geometry &, cudaStream_t);

}  // namespace sfft::sparse::cuda_stages
