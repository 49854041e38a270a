// SPDX-License-Identifier: Apache-2.0
// Sparse FFT, CUDA: EXACT decoding with peeling, one kernel per location loop.
#include "sparse/cuda/batch.cuh"

namespace sfft::sparse::cuda_stages {
namespace {

// w^m for a subtraction from complex64 sums: in single precision where n <= 2^24 is a power of two (m / n is then
// exact in a float, and sincospif's error, about an ulp of a float, is that of the sums it corrects), else
// root_of_unity. H200, same call, 2^20 k1000 b64 complex64: the batch 0.342-0.349 -> 0.340-0.343 ms (peel stages
// within 2 %), its largest error against the planted values 5.0e-6 -> 4.0e-6.
template <class Real, bool kPowerOfTwo>
__device__ Cplx<double> subtraction_root(uint64_t m, const Geometry &g) {
  if constexpr (sizeof(Real) == 4 && kPowerOfTwo) {
    if (g.n <= (uint64_t{1} << 24)) {
      float s, c;
      sincospif(2.0f * static_cast<float>(static_cast<double>(mod_n(m, g)) * g.inv_n), &s, &c);
      return {c, s};
    }
  }
  return root_of_unity(m, g);
}

// EXACT, location loop `loop`: a group of kPeelLanes lanes per (target, b) decodes bucket b; a coefficient
// found is added to the table (by target 0) and subtracted from the hashings of loop loop + 1 + target. Loop
// `loop` itself is only read, later loops only written, so no thread reads what another writes. The kernel
// is bound by the length of one thread's FP64 chain, so the group spreads the decoder's independent parts
// over its lanes and keeps their code convergent: every lane locates the coefficient (one atan2 per
// stage); then each lane evaluates one filter gain (lane 0: the target loop's home bucket, lane 1: its
// neighbour, lane 2: the estimate's own bucket) and, side by side, two roots of unity: its decode task
// (task i < S + 1: the consistency check of hashing 1 + i, task S + 1: the estimate; lane i takes tasks
// i, i + kPeelLanes, ...) and its first subtraction (hashing j = lane; later ones j + kPeelLanes, ...),
// which depends on the frequency alone. Shuffles combine the checks and hand out the gains and the
// estimate; the last lane inserts into the table while the others subtract. (One thread per (target, b)
// doing all of it measured slower; so did a decode staged through shared memory for several targets per
// thread.) Target 0 counts the loop's unsettled buckets; after a loop with none (or a skipped one, whose
// count stays 0) the remaining loops return at once. EXACT plans have no far location stages, so every
// hashing uses the main window's gains.
// kPerBucket (batches): one group per bucket, which subtracts what it found from every later loop, the loops
// after the first a lane each. A lone signal's kernel is one latency-bound chain, which the group per (target,
// bucket) keeps short; a batch is bound by the work instead, and that layout decodes every bucket once per later
// loop: 16 decodes per bucket over the 6 loops of the default design where this one does 6, its later targets
// costing a placement, two gains and a root per hashing each.
// Thread `id` of loop `loop`'s decode, for one signal's arrays (z, energy, t and counters are its views;
// batched: a signal of a batch). Every lane of a warp calls it with consecutive ids.
// listed (the batch peels): what list_above_floor listed, item i decoding bucket listed.bucket[i] of the loop from
// the sums listed.staged[i] instead of bucket i.
template <class Real>
struct ListedBuckets {
  const uint32_t *bucket = nullptr;  // null: not listed
  unsigned count = 0;
  const Cplx<Real> (*staged)[kPeelPreloaded] = nullptr;
};
template <class Real, bool kPowerOfTwo, bool kPerBucket>
__device__ void peel_lane(std::size_t id, Cplx<Real> *z, const LoopParams *loops, const double *energy,
                          double floor_relative, double settle_relative, int loop, int later_loops, const Geometry &g,
                          const Table &t, Counters *counters, bool batched, const ListedBuckets<Real> &listed = {}) {
  static_assert(kPeelLanes >= 3, "lanes 0-2 evaluate the three filter gains");
  const std::size_t item = id / kPeelLanes;
  const int lane = static_cast<int>(id % kPeelLanes);
  constexpr int kLanes = static_cast<int>(kPeelLanes);
  const int targets = later_loops > 0 && !kPerBucket ? later_loops : 1;
  // Items past the end still take part in the group's shuffles (whole groups share a warp).
  const bool is_listed = listed.bucket != nullptr;
  const bool active = is_listed ? item < listed.count : item < static_cast<std::size_t>(targets) * g.buckets;
  const uint64_t b = is_listed ? (active ? listed.bucket[item] : 0) : mod_b(item, g);
  const int target = active && !is_listed ? static_cast<int>(div_b(item, g)) : 0;
  const int into = later_loops > 0 ? loop + 1 + target : loop;
  const std::size_t h0 = static_cast<std::size_t>(loop) * g.hashings_per_loop;
  // Every load that does not depend on the decode is issued here, at once: each dependent global load
  // costs a round trip (~0.4 us on the H100) on the kernel's one critical chain. The bucket's first
  // kPeelPreloaded hashings are held in registers: all of them with S <= 2 stages (every default
  // complex128 plan; complex64 ones while L <= 2^23).
  // The loop before's unsettled buckets (the batch peels list nothing where there were none: no read again).
  const unsigned previous_unsettled = !is_listed && loop > 0 ? counters->unsettled[loop - 1] : 1u;
  // In a batch, a signal whose peeling has ended returns before loading its buckets: most signals settle after
  // two or three loops, and the later kernels' blocks of those then read nothing. One signal keeps the loads in
  // flight beside this check (a round trip shorter).
  if (batched && previous_unsettled == 0) return;
  const double loop_energy = energy[loop];
  const LoopParams lp = loops[loop];
  const LoopParams lp_into = loops[into];
  Cplx<double> preloaded[kPeelPreloaded];
#pragma unroll
  for (int j = 0; j < kPeelPreloaded; ++j)
    preloaded[j] = j >= g.hashings_per_loop ? Cplx<double>{0, 0}
                   : is_listed              ? widen(listed.staged[active ? item : 0][j])
                                            : load_bucket(z, h0 + j, b, g.buckets);
  if (previous_unsettled == 0) return;
  auto load = [&](int j) {
    Cplx<double> v{0, 0};
#pragma unroll
    for (int i = 0; i < kPeelPreloaded; ++i) v = i == j ? preloaded[i] : v;  // registers, not local memory
    return j < kPeelPreloaded ? v : load_bucket(z, h0 + j, b, g.buckets);
  };
  const double rms = sqrt(loop_energy);
  const Location at = active ? locate_bucket(b, load, lp, floor_relative * rms, g) : Location{};
  const Cplx<double> z0 = preloaded[0];
  // The loop's counts for a decoded bucket (lane 0 of an active group).
  auto account = [&](const Decoded &d) {
    if (later_loops == 0 && unexplained(z0, d.found, rms, g)) atomicAdd(&counters->unresolved, 1u);
    if (later_loops > 0 && target == 0 && !settled(z0, d, rms, settle_relative))
      atomicAdd(&counters->unsettled[loop], 1u);
  };
  // A warp whose buckets all located nothing (below the floor, or phases out of range: most warps after the
  // first loop's subtractions) skips the FP64 work below, whose shuffles need all its lanes; its buckets are
  // counted as the full path would (decoded_from without a location).
  if (__all_sync(0xffffffffu, !at.valid)) {
    if (active && lane == 0) account(decoded_from(at, false, 0, {0, 0}, g));
    return;
  }

  // Where the candidate lands in the target loop (bucket_math.hpp's landing() without the gains), and the
  // three gains, a lane each.
  const Placement into_at = placement(at.freq, lp_into, g);
  const double gain = filter_response(lane == 0 ? into_at.home_d : lane == 1 ? into_at.neighbour_d : at.d, g);

  // The lane's first decode task and first subtraction: independent roots of unity.
  const int checks = g.stages + 1, decode_tasks = checks + 1;
  auto decode_phase = [&](int task) {
    return task < checks ? check_phase(at.u, task + 1, g) : estimate_phase(at.freq, lp, g);
  };
  auto subtraction_phase = [&](int j) { return contribution_phase(at.freq, into_at.u, lp_into, j, g); };
  const Cplx<double> decode_root = root_of_unity(decode_phase(lane), g);
  const Cplx<double> first_subtraction_root = subtraction_root<Real, kPowerOfTwo>(subtraction_phase(lane), g);

  const double home_gain = __shfl_sync(0xffffffffu, gain, 0, kLanes);
  const double neighbour_gain = __shfl_sync(0xffffffffu, gain, 1, kLanes);
  const double estimate_gain = __shfl_sync(0xffffffffu, gain, 2, kLanes);
  const double limit2 = g.consistency * g.consistency * at.mag2;
  double mismatch2 = 0;
  bool consistent = true;
  Cplx<double> value{0, 0};
  for (int task = lane; task < decode_tasks; task += kLanes) {  // one pass unless S + 2 > kPeelLanes
    const Cplx<double> root = task == lane ? decode_root : root_of_unity(decode_phase(task), g);
    if (task < checks) {
      const double diff2 = mismatch2_from(z0, load(task + 1), root);
      consistent = consistent && diff2 <= limit2;  // false for NaN
      mismatch2 = diff2 > mismatch2 ? diff2 : mismatch2;
    } else {
      value = estimate_from(z0, root, estimate_gain);
    }
  }
  for (unsigned step = kPeelLanes / 2; step > 0; step /= 2) {
    consistent = __shfl_xor_sync(0xffffffffu, static_cast<int>(consistent), step, kPeelLanes) != 0 && consistent;
    mismatch2 = fmax(mismatch2, __shfl_xor_sync(0xffffffffu, mismatch2, step, kPeelLanes));
  }
  const int estimate_lane = checks % kLanes;
  value.re = __shfl_sync(0xffffffffu, value.re, estimate_lane, kLanes);
  value.im = __shfl_sync(0xffffffffu, value.im, estimate_lane, kLanes);
  if (!active) return;
  const Decoded d = decoded_from(at, consistent, mismatch2, value, g);
  if (lane == 0) account(d);
  if (!d.found) return;
  if (target == 0 && lane == kLanes - 1) atomic_add(&t.value[table_insert(t, d.freq, counters)], d.value);
  if (later_loops == 0) return;
  Cplx<Real> *zl = z + static_cast<std::size_t>(into) * g.hashings_per_loop * g.buckets;
  for (int j = lane; j < g.hashings_per_loop; j += kLanes) {
    const Cplx<double> c = cmul(
        d.value, j == lane ? first_subtraction_root : subtraction_root<Real, kPowerOfTwo>(subtraction_phase(j), g));
    Cplx<Real> *zj = zl + static_cast<std::size_t>(j) * g.buckets;
    atomic_sub(zj + into_at.home, Cplx<double>{c.re * home_gain, c.im * home_gain});
    atomic_sub(zj + into_at.neighbour, Cplx<double>{c.re * neighbour_gain, c.im * neighbour_gain});
  }
  if constexpr (kPerBucket) {
    // Loops loop + 2 onwards (loop + 1 was target 0 above), a loop per lane: each lane places the coefficient
    // in its loop, evaluates that loop's two gains and subtracts from all its hashings. Groups that found
    // nothing have returned, so no shuffles from here on.
    for (int next = loop + 2 + lane; next <= loop + later_loops; next += kLanes) {
      const LoopParams lp_next = loops[next];
      const Placement p = placement(d.freq, lp_next, g);
      const double hg = filter_response(p.home_d, g), ng = filter_response(p.neighbour_d, g);
      Cplx<Real> *zn = z + static_cast<std::size_t>(next) * g.hashings_per_loop * g.buckets;
      for (int j = 0; j < g.hashings_per_loop; ++j) {
        const Cplx<double> c =
            cmul(d.value, subtraction_root<Real, kPowerOfTwo>(contribution_phase(d.freq, p.u, lp_next, j, g), g));
        Cplx<Real> *zj = zn + static_cast<std::size_t>(j) * g.buckets;
        atomic_sub(zj + p.home, Cplx<double>{c.re * hg, c.im * hg});
        atomic_sub(zj + p.neighbour, Cplx<double>{c.re * ng, c.im * ng});
      }
    }
  }
}

// Lists, in bucket order, which of the buckets first + i (i < threads of the block, i < span) of loop `loop` have
// a reference sum above the loop's floor (locate_bucket's first test), into listed[], with the bucket's first
// kPeelPreloaded hashings into staged[] (what peel_lane would load again); the others are counted as
// decoded_from(an invalid location) would be. Every thread of the block calls it; returns the listed count, none
// listed nor counted where `live` is false or the loop before left the signal settled (`settled`). The loads for all
// of that are issued before the checks: each dependent round trip would lengthen the loop's one latency-bound chain.
// warp_listed: one word per warp of the block.
struct Listed {
  unsigned count;
  bool settled;  // by the loop before: this loop and the later ones have nothing to do
};
template <class Real>
__device__ Listed list_above_floor(const Cplx<Real> *z, const double *energy, double floor_relative,
                                   double settle_relative, int loop, int later_loops, const Geometry &g,
                                   Counters *counters, uint64_t first, unsigned span, uint32_t *listed,
                                   unsigned *warp_listed, Cplx<Real> (*staged)[kPeelPreloaded], bool live) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = (blockDim.x + 31) / 32;
  const unsigned previous_unsettled = loop > 0 ? counters->unsettled[loop - 1] : 1u;
  const double loop_energy = energy[loop];
  const uint64_t b = first + threadIdx.x;
  const bool in_span = threadIdx.x < span && b < g.buckets;
  const std::size_t h0 = static_cast<std::size_t>(loop) * g.hashings_per_loop;
  Cplx<Real> sums[kPeelPreloaded] = {};
#pragma unroll
  for (int j = 0; j < kPeelPreloaded; ++j)
    if (in_span && j < g.hashings_per_loop) sums[j] = z[(h0 + j) * g.buckets + b];
  if (!live || previous_unsettled == 0) return {0, previous_unsettled == 0};  // block-uniform
  const double rms = sqrt(loop_energy), floor = floor_relative * rms;
  bool above = false;
  if (in_span) {
    const Cplx<double> z0 = widen(sums[0]);
    above = cabs2(z0) > floor * floor;
    if (!above) {
      const Decoded d = decoded_from(Location{false, 0, 0, 0, cabs2(z0)}, false, 0, {0, 0}, g);
      if (later_loops == 0 && unexplained(z0, d.found, rms, g)) atomicAdd(&counters->unresolved, 1u);
      if (later_loops > 0 && !settled(z0, d, rms, settle_relative)) atomicAdd(&counters->unsettled[loop], 1u);
    }
  }
  const unsigned ballot = __ballot_sync(0xffffffffu, above);
  if (lane == 0) warp_listed[warp] = __popc(ballot);
  __syncthreads();
  unsigned offset = 0, count = 0;
  for (unsigned w = 0; w < warps; ++w) {
    offset += w < warp ? warp_listed[w] : 0;
    count += warp_listed[w];
  }
  if (above) {
    const unsigned at = offset + __popc(ballot & ((1u << lane) - 1));
    listed[at] = static_cast<uint32_t>(b);
#pragma unroll
    for (int j = 0; j < kPeelPreloaded; ++j) staged[at][j] = sums[j];
  }
  __syncthreads();
  return {count, false};
}

// One location loop: a group of lanes per (later loop, bucket) of each signal.
template <class Real, bool kPowerOfTwo>
__global__ void peel_kernel(Cplx<Real> *z, const LoopParams *loops, const double *energy, double floor_relative,
                            double settle_relative, int loop, int later_loops, Geometry g, Table t, Counters *counters,
                            Strides st, const unsigned *active_signals) {
  specialise<kPowerOfTwo>(g);
  cuda::wait_for_previous_kernel();
  if (signal_inactive(active_signals)) return;  // the whole block: blockIdx.y is its signal
  peel_lane<Real, kPowerOfTwo, false>(blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x,
                                      z + blockIdx.y * st.z, loops, energy + blockIdx.y * st.energy, floor_relative,
                                      settle_relative, loop, later_loops, g, signal_table(t, blockIdx.y, st),
                                      counters + blockIdx.y, st.z != 0);
}

// The start of a batch peel kernel for its block's signal (blockIdx.y): waits for the kernel before, points z,
// energy, t and counters at the signal's arrays (allocated for the batch capacity, so they may be read before the
// check), and returns whether the signal is in this exec's batch.
template <class Real, bool kPowerOfTwo>
__device__ bool enter_signal(Geometry &g, Cplx<Real> *&z, const double *&energy, Table &t, Counters *&counters,
                             const Strides &st, const unsigned *active_signals) {
  specialise<kPowerOfTwo>(g);
  cuda::wait_for_previous_kernel();
  z += blockIdx.y * st.z;
  energy += blockIdx.y * st.energy;
  t = signal_table(t, blockIdx.y, st);
  counters += blockIdx.y;
  return !signal_inactive(active_signals);
}

// One location loop of a batch, per bucket: a block's bucket_span buckets, those above the floor listed first
// (list_above_floor, with their sums staged for the decode: H200, same call, three rounds, 2^20 k1000 b64
// complex64 peel of all loops 0.130 -> 0.123 ms, the batch 0.337-0.341 -> 0.329-0.334; 2^16 k100 b1024 per-signal
// peel 0.157 -> 0.148), decoded in rounds of blockDim / kPeelLanes; warps past the listed groups return. Eight
// blocks per SM (64 registers, where 92 gave five): H200, same call, 2^20 k1000 b64 peel of all loops 0.169 ->
// 0.150 ms complex64, 0.171 -> 0.162 complex128 (the one-signal layout, peel_kernel, ran 5-10 % slower so bounded).
template <class Real, bool kPowerOfTwo>
__global__ void __launch_bounds__(kPeelBlock, 8)
    peel_bucket_kernel(Cplx<Real> *z, const LoopParams *loops, const double *energy, double floor_relative,
                       double settle_relative, int loop, int later_loops, Geometry g, Table t, Counters *counters,
                       Strides st, const unsigned *active_signals, unsigned bucket_span) {
  __shared__ uint32_t listed[kPeelBlock];
  __shared__ unsigned warp_listed[kPeelBlock / 32];
  __shared__ Cplx<Real> staged[kPeelBlock][kPeelPreloaded];
  const bool live = enter_signal<Real, kPowerOfTwo>(g, z, energy, t, counters, st, active_signals);
  if (threadIdx.x <= (later_loops > 0 ? 1u : 0u))  // peel_lane's LoopParams: this loop's and the next one's
    cuda::prefetch_to_l1(&loops[loop + static_cast<int>(threadIdx.x)]);
  // 0 where the signal is not in the batch or has settled (the whole block).
  const unsigned count =
      list_above_floor(z, energy, floor_relative, settle_relative, loop, later_loops, g, counters,
                       blockIdx.x * static_cast<uint64_t>(bucket_span), bucket_span, listed, warp_listed, staged, live)
          .count;
  for (unsigned first = 0; first < count * kPeelLanes; first += blockDim.x) {
    if (first + threadIdx.x / 32 * 32 >= count * kPeelLanes) return;  // whole warps past the listed groups
    peel_lane<Real, kPowerOfTwo, true>(first + threadIdx.x, z, loops, energy, floor_relative, settle_relative, loop,
                                       later_loops, g, t, counters, st.z != 0, {listed, count, staged});
  }
}

// Batches of small designs: one block per signal runs location loops first_loop onwards (per bucket, as
// kPerBucket), a barrier between loops, and stops after the loop that left its signal settled. No launch per loop,
// and a signal's later loops cost nothing once it has settled; the parallelism is the batch's.
// Each loop first lists, in bucket order, the buckets whose reference sum reaches the loop's floor (a thread a
// bucket: B <= the block), and the lane groups decode only those: after the first loop's subtractions most
// buckets fall below it, and a warp of eight buckets with one above it ran the FP64 decode with most lanes idle.
// The buckets left out are counted as the decode would count them (below the floor: never found).
// Four blocks per SM (64 registers, 136-192 bytes spilled to the L1): the H200 profile showed it latency-bound
// at 25 % occupancy with two blocks (91-94 registers) and at 33 % with three (80); the peel of 2^16 x 1024
// signals took 0.367, 0.336 and 0.294 ms (complex64; complex128 0.31 to 0.28 ms from three to four).
template <class Real, bool kPowerOfTwo>
__global__ void __launch_bounds__(kPeelPersistentBlock, 4)
    peel_signal_kernel(Cplx<Real> *z, const LoopParams *loops, const double *energy, double floor_relative,
                       double settle_relative, int first_loop, int location_loops, Geometry g, Table t,
                       Counters *counters, Strides st, const unsigned *active_signals) {
  __shared__ uint32_t listed[kPeelPersistentBlock];
  __shared__ unsigned warp_listed[kPeelPersistentBlock / 32];
  __shared__ Cplx<Real> staged[kPeelPersistentBlock][kPeelPreloaded];
  if (!enter_signal<Real, kPowerOfTwo>(g, z, energy, t, counters, st, active_signals)) return;
  for (int loop = first_loop; loop < location_loops; ++loop) {
    // After the barrier that ended loop - 1 (for the first, the kernel before): its subtractions and counts are
    // visible.
    const int later_loops = location_loops - 1 - loop;
    const Listed list = list_above_floor(z, energy, floor_relative, settle_relative, loop, later_loops, g, counters, 0,
                                         blockDim.x, listed, warp_listed, staged, true);
    if (list.settled) return;
    const unsigned count = list.count;
    for (std::size_t first = 0; first < count * kPeelLanes; first += blockDim.x)
      peel_lane<Real, kPowerOfTwo, true>(first + threadIdx.x, z, loops, energy, floor_relative, settle_relative, loop,
                                         later_loops, g, t, counters, true, {listed, count, staged});
    __syncthreads();  // this loop's subtractions and counts are visible, and its list read, before the next
  }
}

}  // namespace

template <class Real>
void launch_peel(bool power_of_two, Cplx<Real> *z, const LoopParams *loops, const double *energy, double floor_relative,
                 double settle_relative, int loop, int later, const Geometry &g, const Table &t, Counters *counters,
                 const Strides &st, unsigned signals, const unsigned *active, unsigned bucket_span,
                 cudaStream_t stream) {
  // Each peel kernel is one short latency-bound chain: overlapping its launch with the previous one's tail
  // saves the gap between them.
  if (bucket_span > 0) {
    cuda::launch_overlapped(power_of_two ? peel_bucket_kernel<Real, true> : peel_bucket_kernel<Real, false>,
                            dim3(blocks_for(g.buckets, bucket_span), signals), kPeelBlock, stream, z, loops, energy,
                            floor_relative, settle_relative, loop, later, g, t, counters, st, active, bucket_span);
  } else {
    const std::size_t threads = static_cast<std::size_t>(later > 0 ? later : 1) * g.buckets * kPeelLanes;
    cuda::launch_overlapped(power_of_two ? peel_kernel<Real, true> : peel_kernel<Real, false>,
                            dim3(blocks_for(threads, kPeelBlock), signals), kPeelBlock, stream, z, loops, energy,
                            floor_relative, settle_relative, loop, later, g, t, counters, st, active);
  }
}

template <class Real>
void launch_peel_signals(bool power_of_two, Cplx<Real> *z, const LoopParams *loops, const double *energy,
                         double floor_relative, double settle_relative, int first_loop, int location_loops,
                         const Geometry &g, const Table &t, Counters *counters, const Strides &st, unsigned signals,
                         const unsigned *active, cudaStream_t stream) {
  cuda::launch_overlapped(power_of_two ? peel_signal_kernel<Real, true> : peel_signal_kernel<Real, false>,
                          dim3(1, signals), kPeelPersistentBlock, stream, z, loops, energy, floor_relative,
                          settle_relative, first_loop, location_loops, g, t, counters, st, active);
}

template void launch_peel<float>(bool, Cplx<float> *, const LoopParams *, const double *, double, double, int, int,
                                 const Geometry &, const Table &, Counters *, const Strides &, unsigned,
                                 const unsigned *, unsigned, cudaStream_t);
template void launch_peel<double>(bool, Cplx<double> *, const LoopParams *, const double *, double, double, int, int,
                                  const Geometry &, const Table &, Counters *, const Strides &, unsigned,
                                  const unsigned *, unsigned, cudaStream_t);
template void launch_peel_signals<float>(bool, Cplx<float> *, const LoopParams *, const double *, double, double, int,
                                         int, const Geometry &, const Table &, Counters *, const Strides &, unsigned,
                                         const unsigned *, cudaStream_t);
template void launch_peel_signals<double>(bool, Cplx<double> *, const LoopParams *, const double *, double, double, int,
                                          int, const Geometry &, const Table &, Counters *, const Strides &, unsigned,
                                          const unsigned *, cudaStream_t);

}  // namespace sfft::sparse::cuda_stages
