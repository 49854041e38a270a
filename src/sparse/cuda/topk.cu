// SPDX-License-Identifier: Apache-2.0
// Sparse FFT, CUDA: the k largest coefficients in decreasing magnitude (by counting, or by a CUB radix sort
// for long candidate lists), written to the result or straight to device outputs; the last block finishes
// the exec (resets the counters, publishes the result header).
#include <cub/block/block_scan.cuh>

#include "sparse/cuda/batch.cuh"

namespace sfft::sparse::cuda_stages {
namespace {

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
      r = {__ldcg(&counters->count), __ldcg(&counters->nonfinite), __ldcg(&counters->unresolved), {}};
      r.report.unscale = f.outputs->unscale;
      if (f.noise != nullptr) {  // ROBUST: the report's sums (the top-k step's own just arrived, by atomics)
        NoiseState *n = f.noise;
        r.report.nu = __ldcg(&n->nu);
        r.report.signal = __ldcg(&n->signal);
        r.report.residual = __ldcg(&n->residual);
        r.report.kept = __ldcg(&n->kept);
        r.report.dropped = __ldcg(&n->found) - r.report.kept;
        r.report.outliers = __ldcg(&n->outliers);
        r.report.dropped_outliers = __ldcg(&n->found_outliers) - __ldcg(&n->kept_outliers);
        r.report.significant = __ldcg(&n->significant);
        n->signal = n->residual = n->found = n->kept = 0;
        n->outliers = n->found_outliers = n->kept_outliers = n->significant = 0;
      }
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

// ROBUST report: |v|^2 of the returned coefficients (v, where `kept`), summed over the warp (every lane calls
// this), those above the outlier limit and those above kSignificant nu (noise: nullptr for EXACT).
__device__ void note_kept(NoiseState *noise, bool kept, Cplx<double> v) {
  if (noise == nullptr) return;
  const double e = kept ? cabs2(v) : 0.0;
  double energy = e;
  for (unsigned offset = 16; offset > 0; offset /= 2) energy += __shfl_xor_sync(0xffffffffu, energy, offset);
  const unsigned over = __reduce_add_sync(0xffffffffu, kept && noise_digit(e) > noise->limit_digit ? 1u : 0u);
  const unsigned significant = __reduce_add_sync(0xffffffffu, kept && e > kSignificant * noise->nu ? 1u : 0u);
  if (threadIdx.x % 32 != 0) return;
  if (energy > 0) atomicAdd(&noise->kept, energy);
  if (over > 0) atomicAdd(&noise->kept_outliers, over);
  if (significant > 0) atomicAdd(&noise->significant, significant);
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
// entry L. The block (kThreads: kRankBlock for one signal, kRankBatchBlock in a batch) stages up to 2 kThreads
// list entries in shared memory at once (two per thread: their loads overlap, one round trip for the lot), and
// each warp counts how many of its share of them are ahead of each tile entry; the warps' counts are summed in
// shared memory. The m^2 comparisons make the step issue-bound on the few SMs it occupies, so each is one FP32
// compare of the keys rounded to float (rounding is monotone: a larger float key is a larger key) and only
// float ties compare the exact keys.
template <class Real, unsigned kThreads>
__global__ void __launch_bounds__(kThreads)
    rank_kernel(const unsigned *list, const unsigned *list_count, Table t, uint64_t k, uint64_t *res_freq,
                Cplx<Real> *res_val, Counters *counters, Finish<Real> finish, Strides st, const unsigned *active) {
  constexpr unsigned kWarps = kThreads / 32;
  constexpr unsigned kStaged = 2 * kThreads;  // list entries staged at once, two per thread
  constexpr unsigned kPerWarp = kStaged / kWarps;
  static_assert(kRankTile == 32, "a tile is one warp's entries (lanes, note_count)");
  static_assert(kThreads % 32 == 0 && kPerWarp % 4 == 0, "whole float4 groups per warp");
  struct Key {
    double mag;  // |value|^2 as returned; -1 for padding (never output, ahead of nothing)
    uint64_t freq;
  };
  __shared__ Key tile[kRankTile];
  __shared__ Cplx<double> tile_value[kRankTile];
  __shared__ Key staged[kStaged];
  __shared__ __align__(16) float staged_rounded[kStaged];  // staged[j].mag rounded to float
  __shared__ unsigned partial[kWarps][kRankTile];
  cuda::wait_for_previous_kernel();
  if (signal_inactive(active)) return;  // the whole block: blockIdx.y is its signal
  if (blockIdx.y > 0) {  // a batch's signal: its slot list (EXACT: Table::slots) and its count, results, finish
    t = signal_table(t, blockIdx.y, st);
    list = t.slots;
    counters += blockIdx.y;
    list_count = &counters->distinct;
    res_freq += blockIdx.y * st.results;
    res_val += blockIdx.y * st.results;
    finish = signal_finish(finish, blockIdx.y, st);
  }
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
    unsigned ahead = 0;                                      // for tile entry `lane`
    for (unsigned chunk = 0; chunk < m; chunk += kStaged) {  // block-uniform; one chunk while m <= kStaged
      if (chunk != 0) __syncthreads();                       // the previous chunk has been read
#pragma unroll
      for (unsigned j = threadIdx.x; j < kStaged; j += kThreads) {
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
      note_kept(finish.noise, written > 0, tile_value[lane]);
    }
    __syncthreads();  // the next tile overwrites tile, staged and partial
  }
  finish_exec(counters, finish, direct.freqs != nullptr);
}

// Top-k of a batch's signals, a block per signal (blockIdx.y), for lists whose entries fit shared memory
// (rank_batch_binned): a counting sort of the list into kRankBins bins spread evenly over the bit patterns of its
// magnitudes, between the smallest and the largest (non-negative doubles order like their bits, so a higher bin
// holds larger magnitudes), then an entry's rank is the count of the bins above its own plus the entries of its
// bin ahead of it (rank_kernel's order: |value| as returned, ties by smaller frequency). Each thread reads its
// entries' slots, frequencies and values once, in one round of independent loads, and keeps the first
// kRankCached of them in registers for every later pass (the counts, the placement and its own entries' ranks);
// entries past kRankCached x kThreads are read again in each pass. The step is one short latency-bound chain per
// signal, so the passes after the first touch only registers and shared memory (H200, same call, three rounds:
// 2^20 k1000 b64 ranking 0.022-0.023 -> 0.021-0.022 ms complex64, 0.023 -> 0.020 complex128).
constexpr unsigned kRankCached = 4;
template <class Real, unsigned kThreads>
__global__ void __launch_bounds__(kThreads)
    rank_binned_kernel(Table t, uint64_t k, uint64_t *res_freq, Cplx<Real> *res_val, Counters *counters,
                       Finish<Real> finish, Strides st, const unsigned *active) {
  extern __shared__ __align__(16) unsigned char rank_shared[];
  auto *placed = reinterpret_cast<RankPlaced *>(rank_shared);  // the list in bin order
  __shared__ unsigned bin_count[kRankBins], bin_above[kRankBins], bin_fill[kRankBins];
  using BinScan = cub::BlockScan<unsigned, kThreads>;
  __shared__ typename BinScan::TempStorage scan_storage;
  __shared__ unsigned long long bits_lo, bits_hi;
  cuda::wait_for_previous_kernel();
  if (signal_inactive(active)) return;  // the whole block: blockIdx.y is its signal
  t = signal_table(t, blockIdx.y, st);
  counters += blockIdx.y;
  res_freq += blockIdx.y * st.results;
  res_val += blockIdx.y * st.results;
  finish = signal_finish(finish, blockIdx.y, st);
  const unsigned m = counters->distinct;
  const ExecOutputs direct = direct_outputs(finish, counters, k);
  const double unscale = finish.outputs->unscale;
  const unsigned lane = threadIdx.x % 32;
  struct Entry {
    unsigned slot;
    unsigned long long bits;  // of |value|^2 as returned
    uint64_t freq;
    Cplx<double> value;
  };
  auto read_entry = [&](unsigned i) {
    Entry e;
    e.slot = t.slots[i];
    e.freq = t.keys[e.slot];
    e.value = t.value[e.slot];
    e.bits = static_cast<unsigned long long>(__double_as_longlong(returned_magnitude2<Real>(e.value)));
    return e;
  };
  // Entry i = threadIdx.x + c kThreads: cached[c] for c < kRankCached (the loops over c are unrolled, so the
  // array stays in registers), read again for later c.
  Entry cached[kRankCached];
#pragma unroll
  for (unsigned c = 0; c < kRankCached; ++c) {
    const unsigned i = threadIdx.x + c * kThreads;
    cached[c] = i < m ? read_entry(i) : Entry{0, 0, 0, {0, 0}};
  }
  constexpr unsigned kFirstUncached = kRankCached * kThreads;
  // f on each of the thread's entries (passes 1-3): the cached ones, then those read again.
  auto for_each_entry = [&](auto &&f) {
#pragma unroll
    for (unsigned c = 0; c < kRankCached; ++c)
      if (threadIdx.x + c * kThreads < m) f(cached[c]);
    for (unsigned i = threadIdx.x + kFirstUncached; i < m; i += kThreads) f(read_entry(i));
  };
  for (unsigned b = threadIdx.x; b < kRankBins; b += kThreads) bin_count[b] = bin_fill[b] = 0;
  if (threadIdx.x == 0) {
    bits_lo = ~0ull;
    bits_hi = 0;
  }
  __syncthreads();
  // Pass 1: the range of the magnitudes' bits.
  unsigned long long lo = ~0ull, hi = 0;
  for_each_entry([&](const Entry &e) {
    lo = min(lo, e.bits);
    hi = max(hi, e.bits);
  });
  for (unsigned offset = 16; offset > 0; offset /= 2) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, offset));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, offset));
  }
  if (lane == 0) {
    atomicMin(&bits_lo, lo);
    atomicMax(&bits_hi, hi);
  }
  __syncthreads();
  // Non-decreasing in the bits (IEEE division and multiplication by positive numbers are monotone).
  const unsigned long long base = bits_lo;
  const double bins_per_bit = bits_hi > bits_lo ? (kRankBins - 1) / static_cast<double>(bits_hi - bits_lo) : 0.0;
  auto bin_of = [&](unsigned long long bits) {
    return min(kRankBins - 1, static_cast<unsigned>(static_cast<double>(bits - base) * bins_per_bit));
  };
  // Pass 2: the bins' counts.
  for_each_entry([&](const Entry &e) { atomicAdd(&bin_count[bin_of(e.bits)], 1u); });
  __syncthreads();
  // The entries above each bin: an exclusive scan from the top bin down, kRankBins / kThreads bins a thread.
  constexpr unsigned kPerThread = kRankBins / kThreads;
  const unsigned first_from_top = threadIdx.x * kPerThread;
  unsigned counts[kPerThread], above[kPerThread];
#pragma unroll
  for (unsigned r = 0; r < kPerThread; ++r) counts[r] = bin_count[kRankBins - 1 - (first_from_top + r)];
  BinScan(scan_storage).ExclusiveSum(counts, above);
#pragma unroll
  for (unsigned r = 0; r < kPerThread; ++r) bin_above[kRankBins - 1 - (first_from_top + r)] = above[r];
  __syncthreads();
  // Pass 3: the list in bin order.
  for_each_entry([&](const Entry &e) {
    const unsigned b = bin_of(e.bits);
    placed[bin_above[b] + atomicAdd(&bin_fill[b], 1u)] = RankPlaced{e.bits, e.slot};
  });
  __syncthreads();
  // Pass 4: each thread ranks its own entries against their bins; every thread takes the same number of turns
  // (the warps' collectives below).
  auto rank_entry = [&](const Entry &e, bool present) {
    unsigned written = 0;
    if (present) {
      const unsigned b = bin_of(e.bits);
      unsigned rank = bin_above[b];
      for (unsigned q = bin_above[b], end = q + bin_count[b]; q < end; ++q) {
        const RankPlaced other = placed[q];
        rank += other.bits > e.bits || (other.bits == e.bits && other.slot != e.slot && t.keys[other.slot] < e.freq);
      }
      if (rank < k && e.bits != 0) {
        write_result(rank, e.freq, e.value, unscale, res_freq, res_val, direct);
        written = rank + 1;
      }
    }
    note_count(written, counters);
    note_kept(finish.noise, written > 0, e.value);
  };
#pragma unroll
  for (unsigned c = 0; c < kRankCached; ++c) rank_entry(cached[c], threadIdx.x + c * kThreads < m);
  for (unsigned first = kFirstUncached; first < m; first += kThreads) {
    const unsigned i = first + threadIdx.x;
    rank_entry(i < m ? read_entry(i) : Entry{0, 0, 0, {0, 0}}, i < m);
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
  Cplx<double> value{0, 0};
  if (r < k && sorted_mags[r] != 0) {
    unsigned slot = list[rank_order[r]];
    value = t.value[slot];
    write_result(r, t.keys[slot], value, finish.outputs->unscale, res_freq, res_val, direct);
    written = static_cast<unsigned>(r + 1);
  }
  note_count(written, counters);
  note_kept(finish.noise, written > 0, value);
  finish_exec(counters, finish, direct.freqs != nullptr);
}

__global__ void iota_kernel(unsigned *v, std::size_t count) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count) v[i] = static_cast<unsigned>(i);
}

}  // namespace

template <class Real>
void launch_rank(unsigned grid, const unsigned *list, const unsigned *list_count, const Table &t, uint64_t k,
                 uint64_t *res_freq, Cplx<Real> *res_val, Counters *counters, const Finish<Real> &finish,
                 cudaStream_t stream) {
  cuda::launch_overlapped(rank_kernel<Real, kRankBlock>, grid, kRankBlock, stream, list, list_count, t, k, res_freq,
                          res_val, counters, finish, Strides{}, static_cast<const unsigned *>(nullptr));
}

template <class Real>
void allow_rank_batch_shared(std::size_t list_capacity) {
  if (!rank_batch_binned(list_capacity)) return;
  const void *kernel = list_capacity > kRankBinnedLongList
                           ? reinterpret_cast<const void *>(rank_binned_kernel<Real, 2 * kRankBinnedBlock>)
                           : reinterpret_cast<const void *>(rank_binned_kernel<Real, kRankBinnedBlock>);
  cuda::allow_dynamic_shared(kernel, list_capacity * sizeof(RankPlaced));
}

template <class Real>
void launch_rank_batch(unsigned grid, std::size_t list_capacity, const Table &t, uint64_t k, uint64_t *res_freq,
                       Cplx<Real> *res_val, Counters *counters, const Finish<Real> &finish, const Strides &st,
                       unsigned signals, const unsigned *active, cudaStream_t stream) {
  if (rank_batch_binned(list_capacity)) {
    const bool long_list = list_capacity > kRankBinnedLongList;
    cuda::launch_overlapped_shared(
        long_list ? rank_binned_kernel<Real, 2 * kRankBinnedBlock> : rank_binned_kernel<Real, kRankBinnedBlock>,
        dim3(1, signals), long_list ? 2 * kRankBinnedBlock : kRankBinnedBlock, list_capacity * sizeof(RankPlaced),
        stream, t, k, res_freq, res_val, counters, finish, st, active);
  } else {
    cuda::launch_overlapped(rank_kernel<Real, kRankBatchBlock>, dim3(grid, signals), kRankBatchBlock, stream,
                            static_cast<const unsigned *>(t.slots), static_cast<const unsigned *>(&counters->distinct),
                            t, k, res_freq, res_val, counters, finish, st, active);
  }
}

template <class Real>
void launch_magnitudes(const unsigned *list, const unsigned *list_count, std::size_t list_capacity, const Table &t,
                       unsigned long long *mag_keys, cudaStream_t stream) {
  magnitude_kernel<Real>
      <<<blocks_for(list_capacity), kBlock, 0, stream>>>(list, list_count, list_capacity, t, mag_keys);
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void launch_gather(const unsigned long long *sorted_mags, const unsigned *rank_order, const unsigned *list,
                   const Table &t, uint64_t k, uint64_t *res_freq, Cplx<Real> *res_val, Counters *counters,
                   const Finish<Real> &finish, cudaStream_t stream) {
  gather_kernel<Real>
      <<<blocks_for(k), kBlock, 0, stream>>>(sorted_mags, rank_order, list, t, k, res_freq, res_val, counters, finish);
  SFFT_CUDA_CHECK_LAUNCH();
}

void launch_iota(unsigned *v, std::size_t count, cudaStream_t stream) {
  iota_kernel<<<blocks_for(count), kBlock, 0, stream>>>(v, count);
  SFFT_CUDA_CHECK_LAUNCH();
}

template void allow_rank_batch_shared<float>(std::size_t);
template void allow_rank_batch_shared<double>(std::size_t);
template void launch_rank_batch<float>(unsigned, std::size_t, const Table &, uint64_t, uint64_t *, Cplx<float> *,
                                       Counters *, const Finish<float> &, const Strides &, unsigned, const unsigned *,
                                       cudaStream_t);
template void launch_rank<float>(unsigned, const unsigned *, const unsigned *, const Table &, uint64_t, uint64_t *,
                                 Cplx<float> *, Counters *, const Finish<float> &, cudaStream_t);
template void launch_magnitudes<float>(const unsigned *, const unsigned *, std::size_t, const Table &,
                                       unsigned long long *, cudaStream_t);
template void launch_gather<float>(const unsigned long long *, const unsigned *, const unsigned *, const Table &,
                                   uint64_t, uint64_t *, Cplx<float> *, Counters *, const Finish<float> &,
                                   cudaStream_t);
template void launch_rank_batch<double>(unsigned, std::size_t, const Table &, uint64_t, uint64_t *, Cplx<double> *,
                                        Counters *, const Finish<double> &, const Strides &, unsigned, const unsigned *,
                                        cudaStream_t);
template void launch_rank<double>(unsigned, const unsigned *, const unsigned *, const Table &, uint64_t, uint64_t *,
                                  Cplx<double> *, Counters *, const Finish<double> &, cudaStream_t);
template void launch_magnitudes<double>(const unsigned *, const unsigned *, std::size_t, const Table &,
                                        unsigned long long *, cudaStream_t);
template void launch_gather<double>(const unsigned long long *, const unsigned *, const unsigned *, const Table &,
                                    uint64_t, uint64_t *, Cplx<double> *, Counters *, const Finish<double> &,
                                    cudaStream_t);

}  // namespace sfft::sparse::cuda_stages
