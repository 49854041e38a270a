// CUDA backend of the sparse FFT. One thread per (hashing, bucket) folds the window with no atomics; one
// batched cuFFT call transforms every hashing; one thread per bucket decodes (bucket_math.hpp, shared with
// the CPU); found coefficients go to a compact list (atomic counter), never an n-sized array. EXACT
// subtracts the list from each loop before decoding it; ROBUST sorts the candidates (CUB radix sort),
// counts votes and takes medians one thread per candidate. Both end with a CUB radix sort by magnitude
// of the merged list and a gather of the top k. All work is on the plan's stream; the only host round
// trip is the final 8-byte header (count, non-finite flag) that sfft_exec must return.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <complex>
#include <vector>

#include "common/backend.hpp"
#include "common/cuda_util.cuh"
#include "sparse/plan.hpp"

namespace sfft::sparse {
namespace {

constexpr unsigned kBlock = 256;
constexpr int kMaxLoops = 128;  // 64 location + 64 estimation loops at most (filter.cpp)

struct Header {
  unsigned count;
  unsigned nonfinite;
};

template <class Real>
__device__ Cplx<double> load_bucket(const Cplx<Real> *z, std::size_t hashing, uint64_t b, uint64_t buckets) {
  return widen(z[hashing * buckets + b]);
}

// z[h*B + i] = sum over taps t = i (mod B) of window[t] * x[sigma_h t + base_h]; one thread per (h, i).
template <class Real>
__global__ void fold_kernel(const Cplx<Real> *__restrict__ x, const Real *__restrict__ window,
                            const uint64_t *__restrict__ bases, const uint64_t *__restrict__ sigmas,
                            std::size_t hashings, int64_t half_taps, Geometry g, Cplx<Real> *__restrict__ z,
                            Header *header) {
  std::size_t id = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (id >= hashings * g.buckets) return;
  std::size_t h = id / g.buckets;
  uint64_t i = id % g.buckets;
  uint64_t sigma = sigmas[h];
  uint64_t taps = 2 * static_cast<uint64_t>(half_taps) + 1;
  uint64_t p = (i + static_cast<uint64_t>(half_taps)) & (g.buckets - 1);
  uint64_t index = (bases[h] + sigma * (p - static_cast<uint64_t>(half_taps))) & g.mask;
  uint64_t step = (sigma * g.buckets) & g.mask;
  Real re = 0, im = 0;
  for (; p < taps; p += g.buckets) {
    Cplx<Real> v = x[index];
    Real w = window[p];
    re += w * v.re;
    im += w * v.im;
    index = (index + step) & g.mask;
  }
  z[id] = {re, im};
  if (!isfinite(re) || !isfinite(im)) atomicOr(&header->nonfinite, 1u);
}

// floors[l] = relative * rms of loop l's reference buckets; one block per loop.
template <class Real>
__global__ void floor_kernel(const Cplx<Real> *z, const std::size_t *first_hashing, uint64_t buckets, double relative,
                             double *floors) {
  __shared__ double partial[kBlock];
  std::size_t h0 = first_hashing[blockIdx.x];
  double sum = 0;
  for (uint64_t b = threadIdx.x; b < buckets; b += blockDim.x) sum += cabs2(load_bucket(z, h0, b, buckets));
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) floors[blockIdx.x] = relative * sqrt(partial[0] / static_cast<double>(buckets));
}

// EXACT: removes found[0..count) from the hashings of location loop `loop`.
template <class Real>
__global__ void subtract_kernel(const uint64_t *found_freq, const Cplx<double> *found_val, const unsigned *count,
                                LoopParams lp, std::size_t h0, Geometry g, Cplx<Real> *z) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= *count) return;
  Cplx<Real> *zl = z + h0 * g.buckets;
  for_each_contribution(found_freq[i], found_val[i], lp, g.hashings_per_loop, g,
                        [&](int j, uint64_t b, Cplx<double> c) {
                          Cplx<Real> *cell = zl + static_cast<std::size_t>(j) * g.buckets + b;
                          atomicAdd(&cell->re, static_cast<Real>(-c.re));
                          atomicAdd(&cell->im, static_cast<Real>(-c.im));
                        });
}

// Decodes the buckets of location loops [first_loop, first_loop + loops); one thread per bucket.
template <class Real>
__global__ void decode_kernel(const Cplx<Real> *z, const LoopParams *loops, const double *floors, int first_loop,
                              int loops_count, Geometry g, uint64_t *found_freq, Cplx<double> *found_val,
                              unsigned *count) {
  std::size_t id = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (id >= static_cast<std::size_t>(loops_count) * g.buckets) return;
  int l = first_loop + static_cast<int>(id / g.buckets);
  uint64_t b = id % g.buckets;
  std::size_t h0 = static_cast<std::size_t>(l) * g.hashings_per_loop;
  auto load = [&](int j) { return load_bucket(z, h0 + j, b, g.buckets); };
  Decoded d = decode_bucket(b, load, loops[l], floors[l], g);
  if (!d.found) return;
  unsigned slot = atomicAdd(count, 1u);
  found_freq[slot] = d.freq;
  found_val[slot] = d.value;
}

__device__ unsigned magnitude_key(Cplx<double> v) {
  float m = static_cast<float>(sqrt(cabs2(v)));
  return m > 0 ? __float_as_uint(m) : 0u;  // non-negative floats order like their bit patterns
}

__device__ bool run_head(const uint64_t *keys, std::size_t i, uint64_t sentinel) {
  return keys[i] != sentinel && (i == 0 || keys[i - 1] != keys[i]);
}

// EXACT: at the head of each run of equal sorted frequencies, the sum of the run's values.
__global__ void merge_kernel(const uint64_t *keys, const unsigned *order, const Cplx<double> *found_val,
                             std::size_t capacity, uint64_t sentinel, Cplx<double> *merged, unsigned *mag_keys) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= capacity) return;
  if (!run_head(keys, i, sentinel)) {
    mag_keys[i] = 0;
    return;
  }
  Cplx<double> sum{0, 0};
  for (std::size_t j = i; j < capacity && keys[j] == keys[i]; ++j) {
    Cplx<double> v = found_val[order[j]];
    sum.re += v.re;
    sum.im += v.im;
  }
  merged[i] = sum;
  mag_keys[i] = magnitude_key(sum);
}

__device__ double median_of(double *v, int count) {
  for (int a = 1; a < count; ++a) {  // insertion sort: count <= kMaxLoops
    double key = v[a];
    int b = a - 1;
    while (b >= 0 && v[b] > key) {
      v[b + 1] = v[b];
      --b;
    }
    v[b + 1] = key;
  }
  return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

// ROBUST, pass `pass`: candidate i of this pass's region is the head of a run of >= min_votes equal
// frequencies that no earlier pass's region already holds (binary search in their sorted keys).
__global__ void vote_kernel(const uint64_t *keys, std::size_t capacity, int pass, uint64_t sentinel, int min_votes,
                            unsigned *valid, Cplx<double> *values, Cplx<double> *applied) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= capacity) return;
  std::size_t at = static_cast<std::size_t>(pass) * capacity + i;
  const uint64_t *mine = keys + static_cast<std::size_t>(pass) * capacity;
  valid[at] = 0;
  values[at] = {0, 0};
  applied[at] = {0, 0};
  if (!run_head(mine, i, sentinel)) return;
  int votes = 0;
  for (std::size_t j = i; j < capacity && mine[j] == mine[i]; ++j) ++votes;
  if (votes < min_votes) return;
  uint64_t freq = mine[i];
  for (int q = 0; q < pass; ++q) {
    const uint64_t *theirs = keys + static_cast<std::size_t>(q) * capacity;
    std::size_t lo = 0, hi = capacity;
    while (lo < hi) {
      std::size_t mid = (lo + hi) / 2;
      if (theirs[mid] < freq)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < capacity && theirs[lo] == freq && valid[static_cast<std::size_t>(q) * capacity + lo]) return;
  }
  valid[at] = 1;
}

// ROBUST refinement, step 1: value = applied + median over all loops of the residual's estimate.
template <class Real>
__global__ void estimate_kernel(const uint64_t *keys, const unsigned *valid, std::size_t candidates,
                                const Cplx<Real> *z, const LoopParams *loops, const std::size_t *first_hashing,
                                int total_loops, Geometry g, const Cplx<double> *applied, Cplx<double> *values) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= candidates || !valid[i]) return;
  uint64_t freq = keys[i];
  double re[kMaxLoops], im[kMaxLoops];
  for (int l = 0; l < total_loops; ++l) {
    int64_t offset = 0;
    uint64_t b = home_bucket((loops[l].sigma * freq) & g.mask, g, &offset);
    Cplx<double> e =
        estimate(load_bucket(z, first_hashing[l], b, g.buckets), freq, loops[l], static_cast<double>(offset), g);
    re[l] = e.re;
    im[l] = e.im;
  }
  values[i] = {applied[i].re + median_of(re, total_loops), applied[i].im + median_of(im, total_loops)};
}

// ROBUST refinement, step 2: subtract (value - applied) from every hashing of every loop; applied = value.
template <class Real>
__global__ void subtract_all_kernel(const uint64_t *keys, const unsigned *valid, std::size_t candidates,
                                    const LoopParams *loops, const std::size_t *first_hashing, int location_loops,
                                    int total_loops, Geometry g, const Cplx<double> *values, Cplx<double> *applied,
                                    Cplx<Real> *z) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= candidates || !valid[i]) return;
  Cplx<double> delta{values[i].re - applied[i].re, values[i].im - applied[i].im};
  for (int l = 0; l < total_loops; ++l) {
    Cplx<Real> *zl = z + first_hashing[l] * g.buckets;
    for_each_contribution(keys[i], delta, loops[l], l < location_loops ? g.hashings_per_loop : 1, g,
                          [&](int j, uint64_t b, Cplx<double> c) {
                            Cplx<Real> *cell = zl + static_cast<std::size_t>(j) * g.buckets + b;
                            atomicAdd(&cell->re, static_cast<Real>(-c.re));
                            atomicAdd(&cell->im, static_cast<Real>(-c.im));
                          });
  }
  applied[i] = values[i];
}

__global__ void magnitude_kernel(const unsigned *valid, const Cplx<double> *values, std::size_t candidates,
                                 unsigned *mag_keys) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < candidates) mag_keys[i] = valid[i] ? magnitude_key(values[i]) : 0u;
}

// The k largest (sorted by decreasing magnitude) into the result arrays; header->count = how many.
template <class Real>
__global__ void gather_kernel(const unsigned *sorted_mags, const unsigned *rank_order, const uint64_t *keys,
                              const Cplx<double> *merged, uint64_t k, uint64_t *res_freq, Cplx<Real> *res_val,
                              Header *header) {
  std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (r >= k || sorted_mags[r] == 0) return;
  unsigned j = rank_order[r];
  res_freq[r] = keys[j];
  res_val[r] = {static_cast<Real>(merged[j].re), static_cast<Real>(merged[j].im)};
  atomicMax(&header->count, static_cast<unsigned>(r + 1));
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

unsigned blocks_for(std::size_t items) { return static_cast<unsigned>((items + kBlock - 1) / kBlock); }

template <class Real>
class CudaEngine final : public Engine {
 public:
  CudaEngine(const Design &d, const Options &opts)
      : d_(d), device_(opts.device), stream_(cuda::as_stream(opts.stream)), threads_(opts.threads) {
    cuda::DeviceScope scope(device_);
    const Geometry &g = d_.geom;
    hashings_ = d_.total_hashings();
    capacity_ = d_.candidate_capacity();
    if (capacity_ >= static_cast<std::size_t>(INT_MAX / kRobustPasses) || d_.total_loops() > kMaxLoops)
      fail(SFFT_ERROR_UNSUPPORTED, "the CUDA backend handles at most ", INT_MAX / kRobustPasses, " candidates and ",
           kMaxLoops, " loops");
    key_bits_ = 1;
    while ((uint64_t{1} << key_bits_) <= g.n) ++key_bits_;  // frequencies < n and the all-ones sentinel differ

    std::vector<Real> window(d_.window.begin(), d_.window.end());
    std::vector<uint64_t> bases(hashings_), sigmas(hashings_);
    for (std::size_t h = 0; h < hashings_; ++h) {
      bases[h] = hashing_base(d_, h);
      sigmas[h] = d_.loops[static_cast<std::size_t>(d_.loop_of(h))].sigma;
    }
    std::vector<std::size_t> first(static_cast<std::size_t>(d_.total_loops()));
    for (int l = 0; l < d_.total_loops(); ++l) first[static_cast<std::size_t>(l)] = d_.first_hashing(l);

    window_.allocate(window.size());
    bases_.allocate(hashings_);
    sigmas_.allocate(hashings_);
    loops_.allocate(d_.loops.size());
    first_hashing_.allocate(first.size());
    floors_.allocate(first.size());
    z_.allocate(hashings_ * g.buckets);
    found_freq_.allocate(capacity_);
    found_val_.allocate(capacity_);
    // The merged list has one region of `capacity_` entries per ROBUST pass (EXACT uses the first).
    std::size_t merged = static_cast<std::size_t>(kRobustPasses) * capacity_;
    sorted_keys_.allocate(merged);
    iota_.allocate(merged);
    order_.allocate(capacity_);
    merged_.allocate(merged);
    applied_.allocate(merged);
    valid_.allocate(merged);
    mag_keys_.allocate(merged);
    sorted_mags_.allocate(merged);
    rank_order_.allocate(merged);
    res_freq_.allocate(d_.k);
    res_val_.allocate(d_.k);
    counter_.allocate(1);
    header_.allocate(1);
    header_host_.allocate(1);
    host_fold_.allocate(hashings_ * g.buckets);

    int items = static_cast<int>(capacity_);
    std::size_t bytes_keys = 0, bytes_mags = 0;
    SFFT_CUDA_CHECK(cudaMemsetAsync(sorted_keys_.get(), 0xff, merged * sizeof(uint64_t), stream_));
    SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes_keys, found_freq_.get(), sorted_keys_.get(),
                                                    iota_.get(), order_.get(), items, 0, key_bits_, stream_));
    SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes_mags, mag_keys_.get(), sorted_mags_.get(),
                                                              iota_.get(), rank_order_.get(), static_cast<int>(merged),
                                                              0, 32, stream_));
    sort_temp_bytes_ = std::max(bytes_keys, bytes_mags);
    sort_temp_.allocate(sort_temp_bytes_);

    SFFT_CUDA_CHECK(
        cudaMemcpyAsync(window_.get(), window.data(), window.size() * sizeof(Real), cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(
        cudaMemcpyAsync(bases_.get(), bases.data(), hashings_ * sizeof(uint64_t), cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(
        cudaMemcpyAsync(sigmas_.get(), sigmas.data(), hashings_ * sizeof(uint64_t), cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(loops_.get(), d_.loops.data(), d_.loops.size() * sizeof(LoopParams),
                                    cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(first_hashing_.get(), first.data(), first.size() * sizeof(std::size_t),
                                    cudaMemcpyHostToDevice, stream_));
    iota_kernel<<<blocks_for(merged), kBlock, 0, stream_>>>(iota_.get(), merged);
    SFFT_CUDA_CHECK_LAUNCH();

    long long b = static_cast<long long>(g.buckets);
    fft_.make_many(1, &b, nullptr, 1, b, nullptr, 1, b, sizeof(Real) == 8 ? CUFFT_Z2Z : CUFFT_C2C,
                   static_cast<long long>(hashings_));
    fft_.set_stream(stream_);
    SFFT_CUDA_CHECK(cudaMemsetAsync(header_.get(), 0, sizeof(Header), stream_));  // the pipeline re-zeroes it
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host vectors above die with this scope
    capture_pipeline();
  }

  std::size_t run(const void *x) override {
    cuda::DeviceScope scope(device_);
    const Geometry &g = d_.geom;
    if (pointer_kind(x) == PointerKind::Host) {
      // Host input: fold on the CPU (it reads only the windowed samples) and upload the B-sized sums.
      fold_hashings(d_, static_cast<const std::complex<Real> *>(x),
                    reinterpret_cast<std::complex<Real> *>(host_fold_.get()), threads_);
      SFFT_CUDA_CHECK(cudaMemcpyAsync(z_.get(), host_fold_.get(), hashings_ * g.buckets * sizeof(Cplx<Real>),
                                      cudaMemcpyHostToDevice, stream_));
    } else {
      fold_kernel<Real><<<blocks_for(hashings_ * g.buckets), kBlock, 0, stream_>>>(
          static_cast<const Cplx<Real> *>(x), window_.get(), bases_.get(), sigmas_.get(), hashings_, d_.half_taps, g,
          z_.get(), header_.get());
      SFFT_CUDA_CHECK_LAUNCH();
    }
    if (graph_) {
      SFFT_CUDA_CHECK(cudaGraphLaunch(graph_.get(), stream_));
    } else {
      enqueue_pipeline(stream_);
    }
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    Header h = *header_host_.get();
    if (h.nonfinite != 0)
      fail(SFFT_ERROR_INVALID_ARGUMENT,
           "x holds non-finite values (NaN or Inf) among the samples read, or values "
           "so large that the windowed sums overflow");
    return h.count;
  }

  void write(uint64_t *freqs, void *values, std::size_t count) override {
    if (count == 0) return;
    cuda::DeviceScope scope(device_);
    SFFT_CUDA_CHECK(cudaMemcpyAsync(freqs, res_freq_.get(), count * sizeof(uint64_t), cudaMemcpyDefault, stream_));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(values, res_val_.get(), count * sizeof(Cplx<Real>), cudaMemcpyDefault, stream_));
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  // Everything after the fold: FFTs, decoding, peeling or voting, top-k, and the result header copied to
  // pinned host memory (then zeroed for the next fold). Launch-bound at small n, so the plan captures it
  // once into a CUDA graph; enqueued directly when capture is unavailable.
  void enqueue_pipeline(cudaStream_t s) {
    const Geometry &g = d_.geom;
    SFFT_CUDA_CHECK(cudaMemsetAsync(found_freq_.get(), 0xff, capacity_ * sizeof(uint64_t), s));
    SFFT_CUDA_CHECK(cudaMemsetAsync(counter_.get(), 0, sizeof(unsigned), s));
    fft_.set_stream(s);
    cuda::exec_c2c(fft_, cufft_ptr(z_.get()), cufft_ptr(z_.get()), CUFFT_FORWARD);
    floor_kernel<Real><<<d_.total_loops(), kBlock, 0, s>>>(z_.get(), first_hashing_.get(), g.buckets, d_.floor_relative,
                                                           floors_.get());
    SFFT_CUDA_CHECK_LAUNCH();

    const uint64_t sentinel = ~uint64_t{0};
    std::size_t candidates = capacity_;  // entries of the merged list that the magnitude sort ranks
    if (d_.variant == Variant::Exact) {
      for (int l = 0; l < d_.location_loops; ++l) {
        if (l > 0) {
          subtract_kernel<Real><<<blocks_for(capacity_), kBlock, 0, s>>>(
              found_freq_.get(), found_val_.get(), counter_.get(), d_.loops[static_cast<std::size_t>(l)],
              d_.first_hashing(l), g, z_.get());
          SFFT_CUDA_CHECK_LAUNCH();
        }
        decode_kernel<Real><<<blocks_for(g.buckets), kBlock, 0, s>>>(
            z_.get(), loops_.get(), floors_.get(), l, 1, g, found_freq_.get(), found_val_.get(), counter_.get());
        SFFT_CUDA_CHECK_LAUNCH();
      }
      sort_by_frequency(sorted_keys_.get(), s);
      merge_kernel<<<blocks_for(capacity_), kBlock, 0, s>>>(sorted_keys_.get(), order_.get(), found_val_.get(),
                                                            capacity_, sentinel, merged_.get(), mag_keys_.get());
      SFFT_CUDA_CHECK_LAUNCH();
    } else {
      candidates = static_cast<std::size_t>(kRobustPasses) * capacity_;
      for (int pass = 0; pass < kRobustPasses; ++pass) {
        if (pass > 0) {
          SFFT_CUDA_CHECK(cudaMemsetAsync(found_freq_.get(), 0xff, capacity_ * sizeof(uint64_t), s));
          SFFT_CUDA_CHECK(cudaMemsetAsync(counter_.get(), 0, sizeof(unsigned), s));
        }
        decode_kernel<Real><<<blocks_for(static_cast<std::size_t>(d_.location_loops) * g.buckets), kBlock, 0, s>>>(
            z_.get(), loops_.get(), floors_.get(), 0, d_.location_loops, g, found_freq_.get(), found_val_.get(),
            counter_.get());
        SFFT_CUDA_CHECK_LAUNCH();
        sort_by_frequency(sorted_keys_.get() + static_cast<std::size_t>(pass) * capacity_, s);
        vote_kernel<<<blocks_for(capacity_), kBlock, 0, s>>>(sorted_keys_.get(), capacity_, pass, sentinel,
                                                             d_.min_votes, valid_.get(), merged_.get(), applied_.get());
        SFFT_CUDA_CHECK_LAUNCH();
        std::size_t live = static_cast<std::size_t>(pass + 1) * capacity_;
        for (int round = 0; round < kRefineRounds; ++round) {
          estimate_kernel<Real><<<blocks_for(live), kBlock, 0, s>>>(sorted_keys_.get(), valid_.get(), live, z_.get(),
                                                                    loops_.get(), first_hashing_.get(),
                                                                    d_.total_loops(), g, applied_.get(), merged_.get());
          SFFT_CUDA_CHECK_LAUNCH();
          subtract_all_kernel<Real><<<blocks_for(live), kBlock, 0, s>>>(
              sorted_keys_.get(), valid_.get(), live, loops_.get(), first_hashing_.get(), d_.location_loops,
              d_.total_loops(), g, merged_.get(), applied_.get(), z_.get());
          SFFT_CUDA_CHECK_LAUNCH();
        }
      }
      magnitude_kernel<<<blocks_for(candidates), kBlock, 0, s>>>(valid_.get(), merged_.get(), candidates,
                                                                 mag_keys_.get());
      SFFT_CUDA_CHECK_LAUNCH();
    }
    std::size_t temp = sort_temp_bytes_;
    SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(sort_temp_.get(), temp, mag_keys_.get(),
                                                              sorted_mags_.get(), iota_.get(), rank_order_.get(),
                                                              static_cast<int>(candidates), 0, 32, s));
    gather_kernel<Real><<<blocks_for(d_.k), kBlock, 0, s>>>(sorted_mags_.get(), rank_order_.get(), sorted_keys_.get(),
                                                            merged_.get(), d_.k, res_freq_.get(), res_val_.get(),
                                                            header_.get());
    SFFT_CUDA_CHECK_LAUNCH();
    SFFT_CUDA_CHECK(cudaMemcpyAsync(header_host_.get(), header_.get(), sizeof(Header), cudaMemcpyDeviceToHost, s));
    SFFT_CUDA_CHECK(cudaMemsetAsync(header_.get(), 0, sizeof(Header), s));
  }

  // found_freq_ (sentinel-padded) sorted into `out`, with the permutation in order_.
  void sort_by_frequency(uint64_t *out, cudaStream_t s) {
    std::size_t temp = sort_temp_bytes_;
    SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.get(), temp, found_freq_.get(), out, iota_.get(),
                                                    order_.get(), static_cast<int>(capacity_), 0, key_bits_, s));
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
  }

  static cufftComplex *cufft_ptr(Cplx<float> *p) { return reinterpret_cast<cufftComplex *>(p); }
  static cufftDoubleComplex *cufft_ptr(Cplx<double> *p) { return reinterpret_cast<cufftDoubleComplex *>(p); }

  Design d_;
  int device_;
  cudaStream_t stream_;
  int threads_;
  std::size_t hashings_ = 0, capacity_ = 0, sort_temp_bytes_ = 0;
  int key_bits_ = 0;
  cuda::DeviceBuffer<Real> window_;
  cuda::DeviceBuffer<uint64_t> bases_, sigmas_;
  cuda::DeviceBuffer<LoopParams> loops_;
  cuda::DeviceBuffer<std::size_t> first_hashing_;
  cuda::DeviceBuffer<double> floors_;
  cuda::DeviceBuffer<Cplx<Real>> z_;
  cuda::DeviceBuffer<uint64_t> found_freq_, sorted_keys_;
  cuda::DeviceBuffer<Cplx<double>> found_val_, merged_, applied_;
  cuda::DeviceBuffer<unsigned> iota_, order_, valid_, mag_keys_, sorted_mags_, rank_order_, counter_;
  cuda::DeviceBuffer<uint64_t> res_freq_;
  cuda::DeviceBuffer<Cplx<Real>> res_val_;
  cuda::DeviceBuffer<Header> header_;
  cuda::PinnedBuffer<Header> header_host_;
  cuda::PinnedBuffer<Cplx<Real>> host_fold_;
  cuda::DeviceBuffer<unsigned char> sort_temp_;
  cuda::CufftPlan fft_;
  GraphExec graph_;  // declared last: destroyed before the buffers and the cuFFT plan it uses
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(const Design &d, const Options &opts, bool double_precision) {
  require_cuda_device(opts);
  if (double_precision) return std::make_unique<CudaEngine<double>>(d, opts);
  return std::make_unique<CudaEngine<float>>(d, opts);
}

}  // namespace sfft::sparse
