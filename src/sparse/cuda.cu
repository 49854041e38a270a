// SPDX-License-Identifier: Apache-2.0
// CUDA backend of the sparse FFT. A few thousand buckets make every step after the fold latency-bound (the
// fold's random sample reads dominate only at the largest n), so the design minimises dependent steps:
//  - fold: 4 threads share each (hashing, bucket) output so that many random sample loads are in flight;
//    consecutive outputs in a warp read consecutive window taps; no atomics.
//  - normalise: the folded sums times a power of two that brings the largest near 1 (plan.hpp's normalise:
//    squared magnitudes stay in range whatever the input's scale), and the floors' energies from them; the
//    results are scaled back as they are written.
//  - one batched cuFFT call transforms every hashing.
//  - EXACT: one kernel per location loop decodes its buckets (bucket_math.hpp, shared with the CPU) and
//    subtracts each coefficient found from the hashings of all later loops at once (four lanes per
//    (bucket, later loop) share its checks, estimate and subtractions; the decode is repeated per later
//    loop rather than staged through memory and a second launch).
//  - ROBUST: per pass, one kernel decodes every location loop and votes, one selects the candidates, and
//    one estimates (median over loops) and one subtracts per refinement round, a warp per candidate and
//    a lane per loop.
//  - ROBUST comb pre-pass (option): a gather kernel (device input) or the CPU (host input) takes the strided
//    samples, one batched cuFFT call transforms them, a histogram + split + radix select (no sort) approves
//    the residues of each comb loop's largest bins in a W-bit bitmap that vote_kernel consults.
//  - duplicates merge and votes count in an open-addressing hash table keyed by frequency (sized for the
//    worst case, never n-sized); its claimed slots are listed, ranked and reset by the next exec's first
//    kernel (the fold), so it needs no per-exec memset.
//  - top-k in decreasing magnitude: each listed entry counts the entries ahead of it (O(m^2) comparisons
//    for m entries from shared memory, spread over m/32 blocks of 32 warps: one short step while m is
//    small enough to beat a sort); plans whose lists can exceed kRankLimit entries use a CUB radix sort.
// Everything after the fold is one CUDA graph on the plan's stream; its own kernels are programmatic
// dependent launches (cuda::launch_overlapped), so each is scheduled while the previous one drains. Each
// kernel is a short chain of dependent global-memory round trips (~0.4 us each on the H100), so loads
// that do not depend on one another are issued together. The last block of the top-k step fills device
// outputs (their pointers reach the graph through a descriptor the fold writes) and writes the result
// header into mapped pinned memory, so sfft_exec launches three kernels and the graph and synchronises once.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <complex>
#include <utility>
#include <vector>

#include "common/backend.hpp"
#include "common/cuda_util.cuh"
#include "sparse/plan.hpp"

namespace sfft::sparse {
namespace {

constexpr unsigned kBlock = 256;
constexpr unsigned kPeelBlock = 128;  // small blocks spread the few busy decode threads over more SMs
constexpr unsigned kPeelLanes = 4;    // lanes sharing one bucket's decode (a power of two <= 32)
constexpr int kPeelPreloaded = 4;     // hashings a peel thread loads up front: S + 2 for S <= 2 stages
constexpr unsigned kRankBlock = 1024;
constexpr unsigned kRankTile = 32;   // list entries a rank block ranks at a time (one warp's worth)
constexpr unsigned kRankGrid = 256;  // rank blocks at most (they stride over the tiles)
constexpr unsigned kRankGridMin = 16;
constexpr unsigned kRankStaged = 2 * kRankBlock;  // list entries a rank block holds in shared memory at once
constexpr unsigned kFoldOutputs = 32;             // consecutive (hashing, bucket) outputs per fold block
constexpr unsigned kFoldSlices = 4;  // threads splitting one output's taps (A/B on the H100: 4 beat 2, 8 and 16)
constexpr int kMaxLoops = 128;       // 64 location + 64 estimation loops at most (filter.cpp)
constexpr std::size_t kRankLimit = std::size_t{1} << 15;  // longest list ranked by counting
constexpr uint64_t kEmpty = ~uint64_t{0};

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

// What sfft_exec needs back: written by the device into mapped pinned memory, read after the
// synchronisation.
struct Result {
  unsigned count;
  unsigned nonfinite;
  unsigned unresolved;
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

__device__ unsigned table_insert(const Table &t, uint64_t freq, Counters *c) {
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
__device__ void reset_stale_slots(const Table &t, int passes, const Counters *counters, std::size_t thread,
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

__global__ void reset_table_kernel(Table t, int passes, const Counters *counters) {
  reset_stale_slots(t, passes, counters, blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x,
                    static_cast<std::size_t>(gridDim.x) * blockDim.x);
}

__device__ void atomic_add(Cplx<double> *cell, Cplx<double> v) {
  atomicAdd(&cell->re, v.re);
  atomicAdd(&cell->im, v.im);
}

template <class Real>
__device__ void atomic_sub(Cplx<Real> *cell, Cplx<double> v) {
  atomicAdd(&cell->re, static_cast<Real>(-v.re));
  atomicAdd(&cell->im, static_cast<Real>(-v.im));
}

template <class Real>
__device__ Cplx<double> load_bucket(const Cplx<Real> *z, std::size_t hashing, uint64_t b, uint64_t buckets) {
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

template <class Real>
__device__ void add_tap(Real w, Cplx<Real> v, Real &re, Real &im) {
  re += w * v.re;
  im += w * v.im;
}

// z[h*B + i] = sum over taps t = i (mod B) of window[t] * x[sigma_h t + base_h]. Block: kFoldOutputs
// consecutive (job, bucket) outputs (threadIdx.x) times kFoldSlices threads (threadIdx.y) taking every
// slice-th tap. The largest component's exponent goes to counters->fold_exponent for normalise_kernel.
template <class Real, bool kPowerOfTwo>
__global__ void __launch_bounds__(kFoldOutputs *kFoldSlices)
    fold_kernel(const Cplx<Real> *__restrict__ x, const Real *__restrict__ main_window,
                const Real *__restrict__ far_window, const FoldJob *__restrict__ jobs, std::size_t outputs,
                int64_t main_half_taps, int64_t far_half_taps, Geometry g, Cplx<Real> *__restrict__ z,
                Counters *counters, ExecOutputs exec_outputs, ExecOutputs *exec_outputs_slot, Table table, int passes) {
  __shared__ Real part[2 * kJobHashings][kFoldSlices][kFoldOutputs];  // re, im per hashing of the job
  specialise<kPowerOfTwo>(g);
  if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) *exec_outputs_slot = exec_outputs;
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
        add_tap(window[p], x[index], re[0], im[0]);
        index = advance_index(index, step, g);
      }
    } else {
#pragma unroll 2
      for (; p < end; p += p_step) {
        Cplx<Real> v = x[index];
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
    if (!finite) atomicOr(&counters->nonfinite, 1u);
  }
  const unsigned exponent = __reduce_max_sync(0xffffffffu, biased_exponent(largest));  // warp 0 (kFoldOutputs = 32)
  if (threadIdx.x == 0 && exponent != 0) atomicMax(&counters->fold_exponent, exponent);
}

// Device input, after the fold: scale-safe magnitudes (plan.hpp's normalise) — every folded sum times
// 2^shift from the fold's largest exponent, energy[l] = sum |z|^2 over location loop l's reference hashing
// (by Parseval, its B-point FFT has B times that energy, so the rms bucket magnitude is sqrt(energy[l]);
// only when the floor uses it), and the unscale for the results into this exec's outputs.
template <class Real>
__global__ void normalise_kernel(Cplx<Real> *z, std::size_t count, Geometry g, int location_loops, bool energies,
                                 double *energy, const Counters *counters, ExecOutputs *exec_outputs_slot) {
  const int shift = normalising_shift<Real>(counters->fold_exponent);
  const Real factor = ldexp(Real(1), shift);
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i == 0) exec_outputs_slot->unscale = ldexp(1.0, -shift);
  double e = 0;
  int loop = -1;  // the location loop whose reference hashing holds z[i], if any
  if (i < count) {
    Cplx<Real> v = z[i];
    v.re *= factor;
    v.im *= factor;
    z[i] = v;
    const std::size_t h = i / g.buckets;
    if (energies && h < static_cast<std::size_t>(location_loops) * g.hashings_per_loop &&
        h % g.hashings_per_loop == 0) {
      loop = static_cast<int>(h / g.hashings_per_loop);
      e = cabs2(widen(v));
    }
  }
  if (g.buckets % 32 == 0) {  // a warp's 32 values share one hashing: one atomic per warp
    for (unsigned offset = 16; offset > 0; offset /= 2) e += __shfl_down_sync(0xffffffffu, e, offset);
    if (threadIdx.x % 32 == 0 && loop >= 0) atomicAdd(&energy[loop], e);
  } else if (loop >= 0) {
    atomicAdd(&energy[loop], e);
  }
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
template <class Real, bool kPowerOfTwo>
__global__ void peel_kernel(Cplx<Real> *z, const LoopParams *loops, const double *energy, double floor_relative,
                            double settle_relative, int loop, int later_loops, Geometry g, Table t,
                            Counters *counters) {
  static_assert(kPeelLanes >= 3, "lanes 0-2 evaluate the three filter gains");
  specialise<kPowerOfTwo>(g);
  cuda::wait_for_previous_kernel();
  const std::size_t id = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t item = id / kPeelLanes;
  const int lane = static_cast<int>(id % kPeelLanes);
  constexpr int kLanes = static_cast<int>(kPeelLanes);
  const int targets = later_loops > 0 ? later_loops : 1;
  // Items past the end still take part in the group's shuffles (whole groups share a warp).
  const bool active = item < static_cast<std::size_t>(targets) * g.buckets;
  const uint64_t b = mod_b(item, g);
  const int target = active ? static_cast<int>(div_b(item, g)) : 0;
  const int into = later_loops > 0 ? loop + 1 + target : loop;
  const std::size_t h0 = static_cast<std::size_t>(loop) * g.hashings_per_loop;
  // Every load that does not depend on the decode is issued here, at once: each dependent global load
  // costs a round trip (~0.4 us on the H100) on the kernel's one critical chain. The bucket's first
  // kPeelPreloaded hashings are held in registers: all of them with S <= 2 stages (every default
  // complex128 plan; complex64 ones while L <= 2^23).
  const unsigned previous_unsettled = loop > 0 ? counters->unsettled[loop - 1] : 1u;
  const double loop_energy = energy[loop];
  const LoopParams lp = loops[loop];
  const LoopParams lp_into = loops[into];
  Cplx<double> preloaded[kPeelPreloaded];
#pragma unroll
  for (int j = 0; j < kPeelPreloaded; ++j)
    preloaded[j] = j < g.hashings_per_loop ? load_bucket(z, h0 + j, b, g.buckets) : Cplx<double>{0, 0};
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
  const Cplx<double> subtraction_root = root_of_unity(subtraction_phase(lane), g);

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
  if (lane == 0) {
    if (later_loops == 0 && unexplained(z0, d.found, rms, g)) atomicAdd(&counters->unresolved, 1u);
    if (later_loops > 0 && target == 0 && !settled(z0, d, rms, settle_relative))
      atomicAdd(&counters->unsettled[loop], 1u);
  }
  if (!d.found) return;
  if (target == 0 && lane == kLanes - 1) atomic_add(&t.value[table_insert(t, d.freq, counters)], d.value);
  if (later_loops == 0) return;
  Cplx<Real> *zl = z + static_cast<std::size_t>(into) * g.hashings_per_loop * g.buckets;
  for (int j = lane; j < g.hashings_per_loop; j += kLanes) {
    const Cplx<double> c = cmul(d.value, j == lane ? subtraction_root : root_of_unity(subtraction_phase(j), g));
    Cplx<Real> *zj = zl + static_cast<std::size_t>(j) * g.buckets;
    atomic_sub(zj + into_at.home, Cplx<double>{c.re * home_gain, c.im * home_gain});
    atomic_sub(zj + into_at.neighbour, Cplx<double>{c.re * neighbour_gain, c.im * neighbour_gain});
  }
}

// ROBUST comb pre-pass, device input: comb loop c's samples x[(offsets[c] + j stride) mod n], j < width,
// into comb_z[c * width + j] (then one batched cuFFT call). Non-finite samples raise the exec's flag; the
// largest sample's exponent scales the bins before they are squared (comb_bin_key).
template <class Real, bool kPowerOfTwo>
__global__ void comb_gather_kernel(const Cplx<Real> *__restrict__ x, const uint64_t *offsets, uint64_t width,
                                   uint64_t stride, int comb_loops, Geometry g, Cplx<Real> *comb_z,
                                   Counters *counters) {
  specialise<kPowerOfTwo>(g);
  const std::size_t total = static_cast<std::size_t>(comb_loops) * width;
  bool finite = true;
  Real largest = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint64_t j = i & (width - 1);
    const Cplx<Real> v = x[mod_n(offsets[i / width] + j * stride, g)];
    finite = finite && isfinite(v.re) && isfinite(v.im);
    largest = fmax(largest, fmax(fabs(v.re), fabs(v.im)));
    comb_z[i] = v;
  }
  if (!finite) atomicOr(&counters->nonfinite, 1u);
  const unsigned exponent = biased_exponent(largest);
  if (exponent != 0) atomicMax(&counters->comb_exponent, exponent);
}

// ROBUST comb pre-pass selection: the `keep` largest keys (bucket_math.hpp's comb_key) of each comb loop's
// W bins, exactly and without a sort, in three steps so that the W-sized steps spread over the whole GPU:
//  1. comb_histogram_kernel (many blocks): per comb loop, a histogram of the keys' top kCombDigitBits.
//  2. comb_split_kernel (many blocks): every block finds the boundary digit (the one holding the keep-th
//     largest key) from that histogram; keys of higher digits are approved, keys of the boundary digit are
//     listed (a small share of W for spread magnitudes).
//  3. comb_finish_kernel (one block per comb loop): an MSB-first radix select over the listed keys, a digit
//     a pass, stopping once the digit it narrows to holds exactly the keys still wanted; approves those.
constexpr int kCombDigitBits = 12;  // 4096 counters: the float exponent and 3 mantissa bits in step 1
constexpr unsigned kCombDigits = 1u << kCombDigitBits;
constexpr unsigned kCombThreads = 256;         // steps 1 and 2
constexpr uint64_t kCombChunk = 4096;          // bins per block in steps 1 and 2 (all of W when smaller)
constexpr unsigned kCombFinishThreads = 1024;  // step 3

// The bins times 2^shift before squaring (scale-safe magnitudes; the ranking needs no unscale): shift from
// the device gather's largest sample, 0 for host input (normalised on the CPU before the upload).
template <class Real>
__device__ uint64_t comb_bin_key(const Cplx<Real> *comb_z, uint64_t width, std::size_t i, double factor, bool &finite) {
  const Cplx<double> v = widen(comb_z[i]);
  const double mag2 = cabs2(Cplx<double>{v.re * factor, v.im * factor});
  finite = finite && isfinite(mag2);
  return comb_key(mag2, i & (width - 1));
}

// Block-wide: the digit (shift `low`, width digit_mask, among keys matching prefix/mask) that holds the
// wanted-th largest key, from a histogram of kCombDigits counters. Thread t owns kCombDigits / kThreads
// digits from the top down; an exclusive scan gives the keys of the digits above its own, and the thread
// whose digits hold the wanted-th key writes *digit and *above (keys in higher digits). Ends synchronised.
template <unsigned kThreads>
__device__ void comb_boundary(const unsigned *histogram, unsigned wanted, unsigned *digit, unsigned *above_out) {
  using Scan = cub::BlockScan<unsigned, kThreads>;
  __shared__ typename Scan::TempStorage scan_storage;
  constexpr unsigned kPerThread = kCombDigits / kThreads;
  unsigned counts[kPerThread], sum = 0;
#pragma unroll
  for (unsigned e = 0; e < kPerThread; ++e) {
    counts[e] = histogram[kCombDigits - 1 - kPerThread * threadIdx.x - e];
    sum += counts[e];
  }
  unsigned above = 0;
  Scan(scan_storage).ExclusiveSum(sum, above);
  if (above < wanted && wanted <= above + sum) {
    for (unsigned e = 0; e < kPerThread; ++e) {
      if (wanted <= above + counts[e]) {
        *digit = kCombDigits - 1 - kPerThread * threadIdx.x - e;
        *above_out = above;
        break;
      }
      above += counts[e];
    }
  }
  __syncthreads();
}

// Step 1: histogram[c * kCombDigits + d] = keys of comb loop c with top digit d. A block takes kCombChunk
// consecutive bins of one comb loop (W is a power of two: chunks never straddle loops).
template <class Real>
__global__ void __launch_bounds__(kCombThreads)
    comb_histogram_kernel(const Cplx<Real> *comb_z, uint64_t width, unsigned *histogram, Counters *counters) {
  __shared__ unsigned local[kCombDigits];
  for (unsigned i = threadIdx.x; i < kCombDigits; i += kCombThreads) local[i] = 0;
  __syncthreads();
  const uint64_t chunk = width < kCombChunk ? width : kCombChunk;
  const std::size_t first = blockIdx.x * chunk;
  const double factor = ldexp(1.0, normalising_shift<Real>(counters->comb_exponent));
  bool finite = true;
  for (std::size_t i = first + threadIdx.x; i < first + chunk; i += kCombThreads)
    atomicAdd(&local[comb_bin_key(comb_z, width, i, factor, finite) >> (64 - kCombDigitBits)], 1u);
  __syncthreads();
  unsigned *global = histogram + (first / width) * kCombDigits;
  for (unsigned i = threadIdx.x; i < kCombDigits; i += kCombThreads)
    if (local[i] != 0) atomicAdd(&global[i], local[i]);
  if (!finite) atomicOr(&counters->nonfinite, 1u);
}

// Step 2: approves the keys above the boundary digit and lists the boundary digit's keys (list c holds
// comb loop c's, at list[c * W], list_count[c] of them).
template <class Real>
__global__ void __launch_bounds__(kCombThreads)
    comb_split_kernel(const Cplx<Real> *comb_z, uint64_t width, uint64_t keep, const unsigned *histogram,
                      uint32_t *approved, uint64_t *list, unsigned *list_count, const Counters *counters) {
  __shared__ unsigned boundary, above;
  const uint64_t chunk = width < kCombChunk ? width : kCombChunk;
  const std::size_t first = blockIdx.x * chunk;
  const std::size_t loop = first / width;
  comb_boundary<kCombThreads>(histogram + loop * kCombDigits, static_cast<unsigned>(keep), &boundary, &above);
  const uint64_t digit = boundary;
  const double factor = ldexp(1.0, normalising_shift<Real>(counters->comb_exponent));
  bool finite = true;  // step 1 reported overflows
  for (std::size_t i = first + threadIdx.x; i < first + chunk; i += kCombThreads) {
    const uint64_t key = comb_bin_key(comb_z, width, i, factor, finite);
    const uint64_t top = key >> (64 - kCombDigitBits);
    if (top > digit) {
      const uint64_t r = i & (width - 1);
      atomicOr(&approved[r >> 5], 1u << (r & 31));
    } else if (top == digit) {
      list[loop * width + atomicAdd(&list_count[loop], 1u)] = key;
    }
  }
}

// Step 3, one block per comb loop: the keys still wanted (keep minus those above the boundary digit) are
// the largest of the listed ones, all of which share the top digit.
__global__ void __launch_bounds__(kCombFinishThreads)
    comb_finish_kernel(uint64_t width, uint64_t keep, const unsigned *histogram, const uint64_t *list,
                       const unsigned *list_count, uint32_t *approved) {
  __shared__ unsigned digits[kCombDigits];
  __shared__ unsigned digit_s, above_s;
  __shared__ uint64_t prefix_s, mask_s;
  __shared__ unsigned wanted_s;
  const std::size_t loop = blockIdx.x;
  comb_boundary<kCombFinishThreads>(histogram + loop * kCombDigits, static_cast<unsigned>(keep), &digit_s, &above_s);
  const uint64_t *keys = list + loop * width;
  const unsigned count = list_count[loop];
  if (threadIdx.x == 0) {
    prefix_s = static_cast<uint64_t>(digit_s) << (64 - kCombDigitBits);
    mask_s = ((uint64_t{1} << kCombDigitBits) - 1) << (64 - kCombDigitBits);
    wanted_s = static_cast<unsigned>(keep) - above_s;
  }
  for (int high = 64 - kCombDigitBits; high > 0; high -= kCombDigitBits) {
    const int low = high > kCombDigitBits ? high - kCombDigitBits : 0;
    const uint64_t digit_mask = (uint64_t{1} << (high - low)) - 1;
    for (unsigned i = threadIdx.x; i < kCombDigits; i += kCombFinishThreads) digits[i] = 0;
    __syncthreads();
    const uint64_t prefix = prefix_s, mask = mask_s;
    const unsigned wanted = wanted_s;
    for (unsigned i = threadIdx.x; i < count; i += kCombFinishThreads)
      if ((keys[i] & mask) == prefix) atomicAdd(&digits[(keys[i] >> low) & digit_mask], 1u);
    __syncthreads();
    comb_boundary<kCombFinishThreads>(digits, wanted, &digit_s, &above_s);
    const uint64_t digit = digit_s;
    const unsigned left = wanted - above_s;
    const bool done = digits[digit] == left;
    __syncthreads();  // every thread has read digit_s, above_s and the digit counts
    if (threadIdx.x == 0) {
      prefix_s = prefix | digit << low;
      mask_s = mask | digit_mask << low;
      wanted_s = left;
    }
    __syncthreads();
    if (done) break;
  }
  // Keys are distinct: exactly the wanted ones have (key & mask) >= prefix.
  const uint64_t prefix = prefix_s, mask = mask_s;
  for (unsigned i = threadIdx.x; i < count; i += kCombFinishThreads) {
    if ((keys[i] & mask) >= prefix) {
      const uint64_t r = 0xffffffffu - (keys[i] & 0xffffffffu);
      atomicOr(&approved[r >> 5], 1u << (r & 31));
    }
  }
}

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

// ROBUST refinement works one warp per candidate, a lane per loop (lanes take loops lane, lane + 32, ...):
// the per-loop estimates and subtractions are independent, so the chain each thread runs is one loop long.
constexpr unsigned kWarpsPerBlock = kBlock / 32;
constexpr unsigned kRefineBlocks = 256;  // grid cap: the warps stride over the candidates

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

// What the last block of the top-k step cleans up and fills (finish_exec).
template <class Real>
struct Finish {
  double *energy;  // per location loop, accumulated afresh by the next exec's normalisation
  int loops;
  const ExecOutputs *outputs;  // this exec's destination
  const uint64_t *res_freq;
  const Cplx<Real> *res_val;
  Result *result;  // mapped pinned memory
};

// Called by every thread of the top-k kernel at its end. The last block to finish (every other block has
// read the table and written its results by then) resets the floor energies and the counters for the next
// exec (which resets the table slots this one claimed: reset_stale_slots), copies the result to device
// outputs when it fits their capacity and the input was finite (unless the step wrote them directly), and
// publishes the result header. One thread per block fences, after a barrier (as cooperative groups' grid
// sync does): the fences are cumulative over the block's writes the barrier ordered before them; a fence
// in every thread cost the step ~1 us at 63 blocks of 1024 threads on the H100.
template <class Real>
__device__ void finish_exec(Counters *counters, const Finish<Real> &f, bool written_directly) {
  __shared__ bool last;
  __shared__ Result r;
  __shared__ unsigned distinct;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // release: the block's results before its ticket
    last = atomicAdd(&counters->blocks_done, 1u) == gridDim.x - 1;
    if (last) {
      __threadfence();  // acquire: every block's results (and a clean L1) before the reads below
      r = {__ldcg(&counters->count), __ldcg(&counters->nonfinite), __ldcg(&counters->unresolved)};
      distinct = __ldcg(&counters->distinct);
    }
  }
  __syncthreads();
  if (!last) return;
  for (int l = static_cast<int>(threadIdx.x); l < f.loops; l += static_cast<int>(blockDim.x)) f.energy[l] = 0;
  if (!written_directly) {
    const ExecOutputs out = *f.outputs;
    if (r.nonfinite == 0 && r.count <= out.capacity) {
      Cplx<Real> *values = static_cast<Cplx<Real> *>(out.values);
      for (unsigned i = threadIdx.x; i < r.count; i += blockDim.x) {
        out.freqs[i] = f.res_freq[i];
        values[i] = f.res_val[i];
      }
    }
  }
  for (int l = static_cast<int>(threadIdx.x); l < kMaxLoops; l += static_cast<int>(blockDim.x))
    counters->unsettled[l] = 0;
  if (threadIdx.x != 0) return;
  *f.result = r;  // visible to the host once the kernel has completed
  counters->stale = distinct;
  counters->distinct = 0;
  counters->candidates = 0;
  counters->count = 0;
  counters->nonfinite = 0;
  counters->unresolved = 0;
  counters->fold_exponent = 0;
  counters->comb_exponent = 0;
  counters->blocks_done = 0;
}

// The device outputs the top-k step writes directly: this exec's destination when it holds k entries (so
// any result fits) and the fold saw finite input, else none (the last block copies what fits, or the host
// does). Read at the start of the step: the fold wrote both.
template <class Real>
__device__ ExecOutputs direct_outputs(const Finish<Real> &f, const Counters *counters, uint64_t k) {
  const ExecOutputs out = *f.outputs;
  const bool direct = out.capacity >= k && __ldcg(&counters->nonfinite) == 0;
  return direct ? out : ExecOutputs{nullptr, nullptr, 0};
}

template <class Real>
__device__ void write_result(std::size_t rank, uint64_t freq, Cplx<double> v, double unscale, uint64_t *res_freq,
                             Cplx<Real> *res_val, const ExecOutputs &direct) {
  const Cplx<Real> value{static_cast<Real>(v.re * unscale), static_cast<Real>(v.im * unscale)};
  if (direct.freqs != nullptr) {
    direct.freqs[rank] = freq;
    static_cast<Cplx<Real> *>(direct.values)[rank] = value;
  } else {
    res_freq[rank] = freq;
    res_val[rank] = value;
  }
}

// The result's count is the largest rank written plus one: one atomic per warp (every lane calls this;
// `written` is its rank + 1, or 0), not one per coefficient on a single address.
__device__ void note_count(unsigned written, Counters *counters) {
  written = __reduce_max_sync(0xffffffffu, written);
  if (threadIdx.x % 32 == 0 && written > 0) atomicMax(&counters->count, written);
}

// Top-k by counting: entry i of the list goes to position rank(i) = #entries larger (by |value|, ties by
// smaller frequency) if rank(i) < k and its value is nonzero; positions form 0..count-1 without gaps. A block
// ranks kRankTile = 32 entries at a time (blocks stride over the tiles), lane L of every warp holding tile
// entry L. The block stages up to kRankStaged list entries in shared memory at once (two per thread: their
// loads overlap, one round trip for the lot), and each warp counts how many of its share of them are ahead
// of each tile entry; the warps' counts are summed in shared memory. The m^2 comparisons make the step
// issue-bound on the few SMs it occupies, so each is one FP32 compare of the keys rounded to float
// (rounding is monotone: a larger float key is a larger key) and only float ties compare the exact keys.
template <class Real>
__global__ void __launch_bounds__(kRankBlock)
    rank_kernel(const unsigned *list, const unsigned *list_count, Table t, uint64_t k, uint64_t *res_freq,
                Cplx<Real> *res_val, Counters *counters, Finish<Real> finish) {
  constexpr unsigned kWarps = kRankBlock / 32;
  constexpr unsigned kPerWarp = kRankStaged / kWarps;
  static_assert(kRankTile == 32, "a tile is one warp's entries (lanes, note_count)");
  static_assert(kRankStaged % kRankBlock == 0 && kPerWarp % 4 == 0, "whole float4 groups per warp");
  struct Key {
    double mag;  // |value|^2 as returned; -1 for padding (never output, ahead of nothing)
    uint64_t freq;
  };
  __shared__ Key tile[kRankTile];
  __shared__ Cplx<double> tile_value[kRankTile];
  __shared__ Key staged[kRankStaged];
  __shared__ __align__(16) float staged_rounded[kRankStaged];  // staged[j].mag rounded to float
  __shared__ unsigned partial[kWarps][kRankTile];
  cuda::wait_for_previous_kernel();
  const unsigned m = *list_count;
  const ExecOutputs direct = direct_outputs(finish, counters, k);
  const double unscale = finish.outputs->unscale;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  auto load_key = [&](unsigned j, Cplx<double> *value) {
    Key key{-1, 0};
    if (j < m) {
      const unsigned slot = list[j];
      key.freq = t.keys[slot];
      const Cplx<double> v = t.value[slot];
      key.mag = returned_magnitude2<Real>(v);
      if (value != nullptr) *value = v;
    }
    return key;
  };
  auto ahead_of = [](const Key &other, const Key &mine) {
    return other.mag > mine.mag || (other.mag == mine.mag && other.freq < mine.freq);
  };
  for (unsigned first = blockIdx.x * kRankTile; first < m; first += gridDim.x * kRankTile) {  // block-uniform
    if (warp == 0) {
      Cplx<double> value{0, 0};
      tile[lane] = load_key(first + lane, &value);
      tile_value[lane] = value;
    }
    unsigned ahead = 0;                                          // for tile entry `lane`
    for (unsigned chunk = 0; chunk < m; chunk += kRankStaged) {  // block-uniform; one chunk while m <= 2048
      if (chunk != 0) __syncthreads();                           // the previous chunk has been read
#pragma unroll
      for (unsigned j = threadIdx.x; j < kRankStaged; j += kRankBlock) {
        const Key key = load_key(chunk + j, nullptr);
        staged[j] = key;
        staged_rounded[j] = __double2float_rn(key.mag);
      }
      __syncthreads();
      const Key mine = tile[lane];
      const float mine_rounded = __double2float_rn(mine.mag);
      // This warp's share of the chunk, cut at the list's end, in float4 groups.
      const unsigned begin = warp * kPerWarp, end = min(begin + kPerWarp, m - chunk);
      for (unsigned e = begin; e < end; e += 4) {
        const float4 others = *reinterpret_cast<const float4 *>(&staged_rounded[e]);
        const float other[4] = {others.x, others.y, others.z, others.w};
#pragma unroll
        for (unsigned q = 0; q < 4; ++q) {  // entries past `end` are padding (-1): ahead of nothing
          ahead += other[q] > mine_rounded;
          if (other[q] == mine_rounded) ahead += ahead_of(staged[e + q], mine);
        }
      }
    }
    partial[warp][lane] = ahead;
    __syncthreads();
    unsigned i = first + threadIdx.x;
    if (warp == 0) {  // kRankTile = 32: the tile is warp 0's
      unsigned written = 0;
      if (i < m) {
        unsigned rank = 0;
        for (unsigned w = 0; w < kWarps; ++w) rank += partial[w][threadIdx.x];
        if (rank < k && tile[lane].mag > 0) {
          write_result(rank, tile[lane].freq, tile_value[lane], unscale, res_freq, res_val, direct);
          written = rank + 1;
        }
      }
      note_count(written, counters);
    }
    __syncthreads();  // the next tile overwrites tile, staged and partial
  }
  finish_exec(counters, finish, direct.freqs != nullptr);
}

// Top-k for long lists, step 1: sort keys (|value|^2 as returned, as double bits; 0 past the list's end).
template <class Real>
__global__ void magnitude_kernel(const unsigned *list, const unsigned *list_count, std::size_t list_capacity, Table t,
                                 unsigned long long *mag_keys) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < list_capacity)  // non-negative doubles order like their bit patterns
    mag_keys[i] = i < *list_count ? __double_as_longlong(returned_magnitude2<Real>(t.value[list[i]])) : 0ull;
}

// Top-k for long lists, step 3 (after the radix sort): the first k nonzero entries in sorted order.
template <class Real>
__global__ void gather_kernel(const unsigned long long *sorted_mags, const unsigned *rank_order, const unsigned *list,
                              Table t, uint64_t k, uint64_t *res_freq, Cplx<Real> *res_val, Counters *counters,
                              Finish<Real> finish) {
  std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const ExecOutputs direct = direct_outputs(finish, counters, k);
  unsigned written = 0;
  if (r < k && sorted_mags[r] != 0) {
    unsigned slot = list[rank_order[r]];
    write_result(r, t.keys[slot], t.value[slot], finish.outputs->unscale, res_freq, res_val, direct);
    written = static_cast<unsigned>(r + 1);
  }
  note_count(written, counters);
  finish_exec(counters, finish, direct.freqs != nullptr);
}

__global__ void iota_kernel(unsigned *v, std::size_t count) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count) v[i] = static_cast<unsigned>(i);
}

// Owning cudaGraphExec_t.
class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  }
  GraphExec(const GraphExec &) = delete;
  GraphExec &operator=(const GraphExec &) = delete;
  void instantiate(cudaGraph_t graph) {
    if (cudaGraphInstantiate(&exec_, graph, 0) != cudaSuccess) exec_ = nullptr;
  }
  cudaGraphExec_t get() const noexcept { return exec_; }
  explicit operator bool() const noexcept { return exec_ != nullptr; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

unsigned blocks_for(std::size_t items, unsigned block = kBlock) {
  return static_cast<unsigned>((items + block - 1) / block);
}

int log2_of(uint64_t power_of_two) {
  int r = 0;
  while ((uint64_t{1} << r) < power_of_two) ++r;
  return r;
}

template <class Real>
class CudaEngine final : public Engine {
 public:
  CudaEngine(const Design &d, const Options &opts)
      : d_(d),
        kernel_geom_(d.geom),
        device_(opts.device),
        stream_(cuda::as_stream(opts.stream)),
        threads_(opts.threads) {
    cuda::DeviceScope scope(device_);
    const Geometry &g = d_.geom;
    const bool robust = d_.variant == Variant::Robust;
    hashings_ = d_.total_hashings();
    // Distinct frequencies per exec: every bucket of every location loop, once per ROBUST pass.
    std::size_t capacity = d_.candidate_capacity();
    if (capacity >= static_cast<std::size_t>(INT_MAX / (2 * kRobustPasses)) || d_.total_loops() > kMaxLoops)
      fail(SFFT_ERROR_UNSUPPORTED, "the CUDA backend handles at most ", INT_MAX / (2 * kRobustPasses),
           " candidates and ", kMaxLoops, " loops");
    distinct_capacity_ = robust ? static_cast<std::size_t>(kRobustPasses) * capacity : capacity;
    // ROBUST candidates need min_votes of the location loops' finds per pass.
    ranked_capacity_ =
        robust ? static_cast<std::size_t>(kRobustPasses) * (capacity / static_cast<std::size_t>(d_.min_votes))
               : distinct_capacity_;
    uint64_t table_size = 2;
    while (table_size < 2 * distinct_capacity_) table_size *= 2;

    std::vector<Real> window(d_.window.begin(), d_.window.end());
    std::vector<Real> far_window(d_.far_window.begin(), d_.far_window.end());
    std::vector<FoldJob> jobs;
    // A job takes a loop's reference and every hashing of that loop whose shift is at most T (each costs
    // its shift in extra reads instead of 2T + 1 of its own); the other hashings get jobs of their own.
    const uint64_t share_limit = static_cast<uint64_t>(d_.half_taps);
    for (int loop = 0; loop < d_.total_loops(); ++loop) {
      std::size_t first = d_.first_hashing(loop);
      int per_loop = loop < d_.location_loops ? g.hashings_per_loop : 1;
      std::vector<std::pair<uint64_t, unsigned>> shared, alone;  // (shift, hashing)
      for (int j = 0; j < per_loop; ++j) {
        uint64_t shift = hashing_shift(g, j);
        auto &into = j == 0 || (shift <= share_limit && shared.size() < kJobHashings) ? shared : alone;
        into.push_back({shift, static_cast<unsigned>(first + static_cast<std::size_t>(j))});
      }
      std::sort(shared.begin(), shared.end());
      auto add_job = [&](const std::vector<std::pair<uint64_t, unsigned>> &members) {
        FoldJob job{};
        job.base = hashing_base(d_, members[0].second);
        job.sigma = d_.loops[static_cast<std::size_t>(loop)].sigma;
        job.count = static_cast<int>(members.size());
        for (int c = 0; c < job.count; ++c) {
          job.shift[c] = members[static_cast<std::size_t>(c)].first - members[0].first;
          job.hashing[c] = members[static_cast<std::size_t>(c)].second;
        }
        job.far = members.size() == 1 && d_.uses_far_window(members[0].second) ? 1 : 0;
        jobs.push_back(job);
      };
      add_job(shared);
      for (const auto &member : alone) add_job({member});
    }
    jobs_count_ = jobs.size();
    std::vector<std::size_t> first(static_cast<std::size_t>(d_.total_loops()));
    for (int l = 0; l < d_.total_loops(); ++l) first[static_cast<std::size_t>(l)] = d_.first_hashing(l);

    window_.allocate(window.size());
    far_window_.allocate(std::max<std::size_t>(far_window.size(), 1));
    upload_response(kernel_geom_.response, d_.response_table, response_);
    upload_response(kernel_geom_.far_response, d_.far_response_table, far_response_);
    jobs_.allocate(jobs_count_);
    loops_.allocate(d_.loops.size());
    first_hashing_.allocate(first.size());
    energy_.allocate(first.size());
    host_energy_.allocate(first.size());
    z_.allocate(hashings_ * g.buckets);
    keys_.allocate(table_size);
    value_.allocate(table_size);
    slots_.allocate(distinct_capacity_);
    if (robust) {
      applied_.allocate(table_size);
      votes_.allocate(static_cast<std::size_t>(kRobustPasses) * table_size);
      is_candidate_.allocate(table_size);
      candidates_.allocate(ranked_capacity_);
    }
    table_ = Table{keys_.get(),  value_.get(),      applied_.get(), votes_.get(),       is_candidate_.get(),
                   slots_.get(), candidates_.get(), table_size,     log2_of(table_size)};
    res_freq_.allocate(d_.k);
    res_val_.allocate(d_.k);
    counters_.allocate(1);
    result_host_.allocate(1);
    SFFT_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&result_mapped_), result_host_.get(), 0));
    outputs_.allocate(1);
    outputs_host_.allocate(1);
    host_fold_.allocate(hashings_ * g.buckets);

    SFFT_CUDA_CHECK(cudaMemsetAsync(keys_.get(), 0xff, table_size * sizeof(uint64_t), stream_));
    SFFT_CUDA_CHECK(cudaMemsetAsync(value_.get(), 0, table_size * sizeof(Cplx<double>), stream_));
    if (robust) {
      SFFT_CUDA_CHECK(cudaMemsetAsync(applied_.get(), 0, table_size * sizeof(Cplx<double>), stream_));
      SFFT_CUDA_CHECK(cudaMemsetAsync(votes_.get(), 0, kRobustPasses * table_size * sizeof(unsigned), stream_));
      SFFT_CUDA_CHECK(cudaMemsetAsync(is_candidate_.get(), 0, table_size * sizeof(unsigned), stream_));
    }
    SFFT_CUDA_CHECK(cudaMemsetAsync(counters_.get(), 0, sizeof(Counters), stream_));
    SFFT_CUDA_CHECK(cudaMemsetAsync(energy_.get(), 0, first.size() * sizeof(double), stream_));
    if (ranked_capacity_ > kRankLimit) {
      iota_.allocate(ranked_capacity_);
      mag_keys_.allocate(ranked_capacity_);
      sorted_mags_.allocate(ranked_capacity_);
      rank_order_.allocate(ranked_capacity_);
      SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_temp_bytes_, mag_keys_.get(),
                                                                sorted_mags_.get(), iota_.get(), rank_order_.get(),
                                                                static_cast<int>(ranked_capacity_), 0, 64, stream_));
      sort_temp_.allocate(sort_temp_bytes_);
      iota_kernel<<<blocks_for(ranked_capacity_), kBlock, 0, stream_>>>(iota_.get(), ranked_capacity_);
      SFFT_CUDA_CHECK_LAUNCH();
    }

    SFFT_CUDA_CHECK(
        cudaMemcpyAsync(window_.get(), window.data(), window.size() * sizeof(Real), cudaMemcpyHostToDevice, stream_));
    if (!far_window.empty())
      SFFT_CUDA_CHECK(cudaMemcpyAsync(far_window_.get(), far_window.data(), far_window.size() * sizeof(Real),
                                      cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(
        cudaMemcpyAsync(jobs_.get(), jobs.data(), jobs_count_ * sizeof(FoldJob), cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(loops_.get(), d_.loops.data(), d_.loops.size() * sizeof(LoopParams),
                                    cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(first_hashing_.get(), first.data(), first.size() * sizeof(std::size_t),
                                    cudaMemcpyHostToDevice, stream_));

    long long b = static_cast<long long>(g.buckets);
    fft_.make_many(1, &b, nullptr, 1, b, nullptr, 1, b, sizeof(Real) == 8 ? CUFFT_Z2Z : CUFFT_C2C,
                   static_cast<long long>(hashings_));
    fft_.set_stream(stream_);
    if (d_.comb_loops > 0) setup_comb();
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host vectors above die with this scope
    capture_pipeline();
  }

  std::size_t run(const void *x, uint64_t *freqs, void *values, std::size_t capacity) override {
    cuda::DeviceScope scope(device_);
    const Geometry &g = kernel_geom_;
    // Device (or managed) outputs are filled by the graph's last kernel; host outputs after the synchronisation.
    const bool device_outputs =
        capacity > 0 && pointer_kind(freqs) != PointerKind::Host && pointer_kind(values) != PointerKind::Host;
    // unscale: set by normalise_kernel (device input) or below (host input).
    ExecOutputs destination{freqs, values, device_outputs ? capacity : 0, 1.0};
    if (pointer_kind(x) == PointerKind::Host) {
      reset_table_kernel<<<blocks_for(distinct_capacity_), kBlock, 0, stream_>>>(table_, kRobustPasses,
                                                                                 counters_.get());
      SFFT_CUDA_CHECK_LAUNCH();
      // Host input: fold on the CPU (it reads only the windowed samples), normalise (scale-safe magnitudes)
      // and upload the B-sized sums.
      auto *fold = reinterpret_cast<std::complex<Real> *>(host_fold_.get());
      fold_hashings(d_, static_cast<const std::complex<Real> *>(x), fold, threads_);
      destination.unscale = std::ldexp(1.0, -normalise(fold, hashings_ * g.buckets));
      *outputs_host_.get() = destination;
      SFFT_CUDA_CHECK(
          cudaMemcpyAsync(outputs_.get(), outputs_host_.get(), sizeof(ExecOutputs), cudaMemcpyHostToDevice, stream_));
      SFFT_CUDA_CHECK(cudaMemcpyAsync(z_.get(), host_fold_.get(), hashings_ * g.buckets * sizeof(Cplx<Real>),
                                      cudaMemcpyHostToDevice, stream_));
      if (d_.floor_relative > 0) {
        for (int l = 0; l < d_.location_loops; ++l) {
          const Cplx<Real> *ref = host_fold_.get() + d_.first_hashing(l) * g.buckets;
          double e = 0;
          for (uint64_t b = 0; b < g.buckets; ++b) e += cabs2(widen(ref[b]));
          host_energy_.get()[l] = e;
        }
        SFFT_CUDA_CHECK(cudaMemcpyAsync(energy_.get(), host_energy_.get(), d_.location_loops * sizeof(double),
                                        cudaMemcpyHostToDevice, stream_));
      }
    } else {
      std::size_t outputs = jobs_count_ * g.buckets;
      auto *fold = power_of_two() ? fold_kernel<Real, true> : fold_kernel<Real, false>;
      fold<<<blocks_for(outputs, kFoldOutputs), dim3(kFoldOutputs, kFoldSlices), 0, stream_>>>(
          static_cast<const Cplx<Real> *>(x), window_.get(), far_window_.get(), jobs_.get(), outputs, d_.half_taps,
          d_.far_half_taps, g, z_.get(), counters_.get(), destination, outputs_.get(), table_, kRobustPasses);
      SFFT_CUDA_CHECK_LAUNCH();
      const std::size_t sums = hashings_ * g.buckets;
      normalise_kernel<Real><<<blocks_for(sums), kBlock, 0, stream_>>>(
          z_.get(), sums, g, d_.location_loops, d_.floor_relative > 0, energy_.get(), counters_.get(), outputs_.get());
      SFFT_CUDA_CHECK_LAUNCH();
    }
    if (d_.comb_loops > 0) gather_comb_samples(x);
    if (graph_) {
      SFFT_CUDA_CHECK(cudaGraphLaunch(graph_.get(), stream_));
    } else {
      enqueue_pipeline(stream_);
    }
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const Result r = *result_host_.get();
    unresolved_ = r.unresolved;
    if (r.nonfinite != 0)
      fail(SFFT_ERROR_INVALID_ARGUMENT,
           "x holds non-finite values (NaN or Inf) among the samples read, or values "
           "so large that the windowed sums overflow");
    if (!device_outputs && r.count > 0 && r.count <= capacity) {
      SFFT_CUDA_CHECK(cudaMemcpyAsync(freqs, res_freq_.get(), r.count * sizeof(uint64_t), cudaMemcpyDefault, stream_));
      SFFT_CUDA_CHECK(
          cudaMemcpyAsync(values, res_val_.get(), r.count * sizeof(Cplx<Real>), cudaMemcpyDefault, stream_));
      SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    return r.count;
  }

  std::size_t unresolved() const override { return unresolved_; }

 private:
  // Copies a response fit's table to the device and points a fit of kernel_geom_ at the copy.
  void upload_response(ResponseFit &fit, const std::shared_ptr<const HostVector<double>> &table,
                       cuda::DeviceBuffer<double> &device_table) {
    if (!table) return;
    device_table.allocate(table->size());
    SFFT_CUDA_CHECK(cudaMemcpyAsync(device_table.get(), table->data(), table->size() * sizeof(double),
                                    cudaMemcpyHostToDevice, stream_));
    fit.coeffs = device_table.get();
  }

  // Everything after the fold: FFTs, decoding with peeling or voting, top-k into res_* and the result
  // header; its last block also resets the table and fills device outputs. Launch-bound, so
  // the plan captures it once into a CUDA graph; enqueued directly when capture is unavailable.
  void enqueue_pipeline(cudaStream_t s) {
    const Geometry &g = kernel_geom_;
    fft_.set_stream(s);
    cuda::exec_c2c(fft_, cufft_ptr(z_.get()), cufft_ptr(z_.get()), CUFFT_FORWARD);

    const unsigned *ranked = table_.slots;
    const unsigned *ranked_count = &counters_.get()->distinct;
    if (d_.variant == Variant::Exact) {
      for (int l = 0; l < d_.location_loops; ++l) {
        int later = d_.location_loops - 1 - l;
        std::size_t threads = static_cast<std::size_t>(std::max(later, 1)) * g.buckets * kPeelLanes;
        // Each peel kernel is one short latency-bound chain: overlapping its launch with the previous one's
        // tail saves the gap between them.
        cuda::launch_overlapped(power_of_two() ? peel_kernel<Real, true> : peel_kernel<Real, false>,
                                blocks_for(threads, kPeelBlock), kPeelBlock, s, z_.get(), loops_.get(), energy_.get(),
                                d_.floor_relative, d_.settle_relative, l, later, g, table_, counters_.get());
      }
    } else {
      ranked = table_.candidates;
      ranked_count = &counters_.get()->candidates;
      std::size_t decoders = static_cast<std::size_t>(d_.location_loops) * g.buckets;
      const unsigned refine_blocks = std::min(blocks_for(ranked_capacity_, kWarpsPerBlock), kRefineBlocks);
      if (d_.comb_loops > 0) enqueue_comb_select(s);
      const uint32_t *approved = d_.comb_loops > 0 ? approved_.get() : nullptr;
      for (int pass = 0; pass < kRobustPasses; ++pass) {
        cuda::launch_overlapped(power_of_two() ? vote_kernel<Real, true> : vote_kernel<Real, false>,
                                blocks_for(decoders), kBlock, s, z_.get(), loops_.get(), energy_.get(),
                                d_.floor_relative, d_.location_loops, pass, g, table_, counters_.get(), approved,
                                d_.comb_width - 1);
        cuda::launch_overlapped(select_kernel, blocks_for(distinct_capacity_), kBlock, s, table_, pass, d_.min_votes,
                                counters_.get());
        for (int round = 0; round < kRefineRounds; ++round) {
          cuda::launch_overlapped(power_of_two() ? estimate_kernel<Real, true> : estimate_kernel<Real, false>,
                                  refine_blocks, kBlock, s, table_, counters_.get(), z_.get(), loops_.get(),
                                  first_hashing_.get(), d_.total_loops(), g);
          cuda::launch_overlapped(power_of_two() ? subtract_kernel<Real, true> : subtract_kernel<Real, false>,
                                  refine_blocks, kBlock, s, table_, counters_.get(), loops_.get(), first_hashing_.get(),
                                  d_.location_loops, d_.total_loops(), g, z_.get());
        }
      }
    }
    if (ranked_capacity_ <= kRankLimit) {
      // The list is typically about k long (its capacity, every bucket of every loop, is several times
      // that): a grid sized for 2k entries ranks it in one tile per block without launching blocks that
      // only wait to finish; longer lists are still ranked, a few tiles per block.
      const unsigned rank_grid = std::min({blocks_for(ranked_capacity_, kRankTile), kRankGrid,
                                           std::max(kRankGridMin, blocks_for(2 * d_.k, kRankTile))});
      cuda::launch_overlapped(rank_kernel<Real>, rank_grid, kRankBlock, s, ranked, ranked_count, table_, d_.k,
                              res_freq_.get(), res_val_.get(), counters_.get(), finish());
    } else {
      magnitude_kernel<Real><<<blocks_for(ranked_capacity_), kBlock, 0, s>>>(ranked, ranked_count, ranked_capacity_,
                                                                             table_, mag_keys_.get());
      SFFT_CUDA_CHECK_LAUNCH();
      std::size_t temp = sort_temp_bytes_;
      SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(sort_temp_.get(), temp, mag_keys_.get(),
                                                                sorted_mags_.get(), iota_.get(), rank_order_.get(),
                                                                static_cast<int>(ranked_capacity_), 0, 64, s));
      gather_kernel<Real><<<blocks_for(d_.k), kBlock, 0, s>>>(sorted_mags_.get(), rank_order_.get(), ranked, table_,
                                                              d_.k, res_freq_.get(), res_val_.get(), counters_.get(),
                                                              finish());
      SFFT_CUDA_CHECK_LAUNCH();
    }
  }

  // Captures enqueue_pipeline into graph_ on a private stream (the caller's may be the legacy default
  // stream, which cannot be captured). Leaves graph_ empty if this driver/cuFFT cannot capture it.
  void capture_pipeline() {
    cudaStream_t capture = nullptr;
    SFFT_CUDA_CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    bool captured = false;
    if (cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
      try {
        enqueue_pipeline(capture);
        captured = true;
      } catch (const Error &) {
        captured = false;  // fall back to direct launches
      }
      if (cudaStreamEndCapture(capture, &graph) != cudaSuccess) captured = false;
    }
    if (captured && graph != nullptr) graph_.instantiate(graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaStreamDestroy(capture);
    (void)cudaGetLastError();
    fft_.set_stream(stream_);
    if (comb_fft_) comb_fft_.set_stream(stream_);
  }

  // ---- ROBUST comb pre-pass (d_.comb_loops > 0): the samples are gathered per exec (on the CPU for host
  // input, like the fold), their W-point FFTs and the approval run at the start of the ROBUST pipeline.
  void setup_comb() {
    const std::size_t samples = static_cast<std::size_t>(d_.comb_loops) * d_.comb_width;
    comb_offsets_.allocate(d_.comb_offsets.size());
    comb_z_.allocate(samples);
    host_comb_.allocate(samples);
    approved_words_ = (d_.comb_width + 31) / 32;
    approved_.allocate(approved_words_);
    comb_histogram_.allocate(static_cast<std::size_t>(d_.comb_loops) * kCombDigits);
    comb_list_.allocate(samples);
    comb_list_count_.allocate(static_cast<std::size_t>(d_.comb_loops));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(comb_offsets_.get(), d_.comb_offsets.data(),
                                    d_.comb_offsets.size() * sizeof(uint64_t), cudaMemcpyHostToDevice, stream_));
    long long w = static_cast<long long>(d_.comb_width);
    comb_fft_.make_many(1, &w, nullptr, 1, w, nullptr, 1, w, sizeof(Real) == 8 ? CUFFT_Z2Z : CUFFT_C2C,
                        static_cast<long long>(d_.comb_loops));
    comb_fft_.set_stream(stream_);
  }

  void gather_comb_samples(const void *x) {
    const std::size_t samples = static_cast<std::size_t>(d_.comb_loops) * d_.comb_width;
    if (pointer_kind(x) == PointerKind::Host) {
      auto *comb = reinterpret_cast<std::complex<Real> *>(host_comb_.get());
      gather_comb(d_, static_cast<const std::complex<Real> *>(x), comb);
      normalise(comb, samples);  // the ranking needs no unscale
      SFFT_CUDA_CHECK(cudaMemcpyAsync(comb_z_.get(), host_comb_.get(), samples * sizeof(Cplx<Real>),
                                      cudaMemcpyHostToDevice, stream_));
      return;
    }
    auto *gather = power_of_two() ? comb_gather_kernel<Real, true> : comb_gather_kernel<Real, false>;
    gather<<<cuda::grid_for(samples, kBlock), kBlock, 0, stream_>>>(
        static_cast<const Cplx<Real> *>(x), comb_offsets_.get(), d_.comb_width, d_.comb_stride(), d_.comb_loops,
        kernel_geom_, comb_z_.get(), counters_.get());
    SFFT_CUDA_CHECK_LAUNCH();
  }

  // Part of the captured pipeline: clear the bitmap and the selection's counts, transform every comb loop,
  // approve the largest bins (the three selection steps above comb_histogram_kernel).
  void enqueue_comb_select(cudaStream_t s) {
    const auto loops = static_cast<std::size_t>(d_.comb_loops);
    SFFT_CUDA_CHECK(cudaMemsetAsync(approved_.get(), 0, approved_words_ * sizeof(uint32_t), s));
    SFFT_CUDA_CHECK(cudaMemsetAsync(comb_histogram_.get(), 0, loops * kCombDigits * sizeof(unsigned), s));
    SFFT_CUDA_CHECK(cudaMemsetAsync(comb_list_count_.get(), 0, loops * sizeof(unsigned), s));
    comb_fft_.set_stream(s);
    cuda::exec_c2c(comb_fft_, cufft_ptr(comb_z_.get()), cufft_ptr(comb_z_.get()), CUFFT_FORWARD);
    const auto blocks = static_cast<unsigned>(loops * d_.comb_width / std::min(d_.comb_width, kCombChunk));
    comb_histogram_kernel<Real>
        <<<blocks, kCombThreads, 0, s>>>(comb_z_.get(), d_.comb_width, comb_histogram_.get(), counters_.get());
    SFFT_CUDA_CHECK_LAUNCH();
    comb_split_kernel<Real><<<blocks, kCombThreads, 0, s>>>(comb_z_.get(), d_.comb_width, d_.comb_keep,
                                                            comb_histogram_.get(), approved_.get(), comb_list_.get(),
                                                            comb_list_count_.get(), counters_.get());
    SFFT_CUDA_CHECK_LAUNCH();
    comb_finish_kernel<<<static_cast<unsigned>(loops), kCombFinishThreads, 0, s>>>(
        d_.comb_width, d_.comb_keep, comb_histogram_.get(), comb_list_.get(), comb_list_count_.get(), approved_.get());
    SFFT_CUDA_CHECK_LAUNCH();
  }

  bool power_of_two() const { return d_.geom.mask != 0; }

  Finish<Real> finish() const {
    return Finish<Real>{energy_.get(),   d_.location_loops, outputs_.get(),
                        res_freq_.get(), res_val_.get(),    result_mapped_};
  }

  static cufftComplex *cufft_ptr(Cplx<float> *p) { return reinterpret_cast<cufftComplex *>(p); }
  static cufftDoubleComplex *cufft_ptr(Cplx<double> *p) { return reinterpret_cast<cufftDoubleComplex *>(p); }

  Design d_;              // host-side: its geometry's response fits stay in host memory
  Geometry kernel_geom_;  // d_.geom with the response fits in device memory (response_): for kernels only
  int device_;
  cudaStream_t stream_;
  int threads_;
  std::size_t hashings_ = 0, jobs_count_ = 0, distinct_capacity_ = 0, ranked_capacity_ = 0, sort_temp_bytes_ = 0;
  cuda::DeviceBuffer<Real> window_, far_window_;
  cuda::DeviceBuffer<double> response_, far_response_;  // kernel_geom_'s response fits point here
  cuda::DeviceBuffer<FoldJob> jobs_;
  cuda::DeviceBuffer<LoopParams> loops_;
  cuda::DeviceBuffer<std::size_t> first_hashing_;
  cuda::DeviceBuffer<double> energy_;  // per location loop: energy of its reference hashing (sets the floor)
  cuda::PinnedBuffer<double> host_energy_;
  cuda::DeviceBuffer<Cplx<Real>> z_;
  cuda::DeviceBuffer<uint64_t> keys_;
  cuda::DeviceBuffer<Cplx<double>> value_, applied_;
  cuda::DeviceBuffer<unsigned> votes_, is_candidate_, slots_, candidates_;
  Table table_{};
  cuda::DeviceBuffer<unsigned> iota_, rank_order_;
  cuda::DeviceBuffer<unsigned long long> mag_keys_, sorted_mags_;
  cuda::DeviceBuffer<unsigned char> sort_temp_;
  cuda::DeviceBuffer<uint64_t> res_freq_;
  cuda::DeviceBuffer<Cplx<Real>> res_val_;
  cuda::DeviceBuffer<Counters> counters_;
  cuda::PinnedBuffer<Result> result_host_;
  Result *result_mapped_ = nullptr;  // result_host_ as the device writes it
  cuda::DeviceBuffer<ExecOutputs> outputs_;
  cuda::PinnedBuffer<ExecOutputs> outputs_host_;
  cuda::PinnedBuffer<Cplx<Real>> host_fold_;
  cuda::CufftPlan fft_;
  // ROBUST comb pre-pass (empty when off).
  cuda::DeviceBuffer<uint64_t> comb_offsets_;
  cuda::DeviceBuffer<Cplx<Real>> comb_z_;
  cuda::PinnedBuffer<Cplx<Real>> host_comb_;
  cuda::DeviceBuffer<uint32_t> approved_;  // bit r: residue r approved by some comb loop
  std::size_t approved_words_ = 0;
  cuda::DeviceBuffer<unsigned> comb_histogram_, comb_list_count_;  // selection: top-digit counts, listed keys
  cuda::DeviceBuffer<uint64_t> comb_list_;
  cuda::CufftPlan comb_fft_;
  std::size_t unresolved_ = 0;
  GraphExec graph_;  // declared last: destroyed before the buffers and the cuFFT plan it uses
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(const Design &d, const Options &opts, bool double_precision) {
  require_cuda_device(opts);
  if (double_precision) return std::make_unique<CudaEngine<double>>(d, opts);
  return std::make_unique<CudaEngine<float>>(d, opts);
}

}  // namespace sfft::sparse
