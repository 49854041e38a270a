// SPDX-License-Identifier: Apache-2.0
// CUDA backend of the sparse FFT: the engine (plan-time setup, the exec sequence, the captured graph); the
// stages live in units of their own (README.md). A few thousand buckets make every step after the fold
// latency-bound (the fold's random sample reads dominate only at the largest n), so the design minimises
// dependent steps:
//  - fold: 4 threads share each (hashing, bucket) output so that many random sample loads are in flight;
//    consecutive outputs in a warp read consecutive window taps; no atomics. Batches of designs whose gather
//    would move at least each signal's bytes fold by columns instead (batch.cuh: each sample read once,
//    coalesced; choose_batch_fold).
//  - normalise: the folded sums times a power of two that brings the largest near 1 (plan.hpp's normalise:
//    squared magnitudes stay in range whatever the input's scale), and the floors' energies from them; the
//    results are scaled back as they are written.
//  - the bucket FFTs: where B is a power of two of at most kFusedFftBuckets<Real> (batch.cuh), in the
//    normalisation's launch, a block per hashing row in shared memory (a launch of their own for sums that came up
//    from the host); otherwise one batched cuFFT call in the graph transforms every hashing.
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
// Everything after the fold (and the normalisation) is one CUDA graph on the plan's stream; its own kernels are
// programmatic dependent launches (cuda::launch_overlapped), so each is scheduled while the previous one drains. Each
// kernel is a short chain of dependent global-memory round trips (~0.4 us each on the H100), so loads
// that do not depend on one another are issued together. The last block of the top-k step fills device
// outputs (their pointers reach the graph through a descriptor the fold writes) and writes the result
// header into mapped pinned memory, so sfft_exec launches three kernels and the graph and synchronises once.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/backend.hpp"
#include "common/cuda_stage_timer.cuh"
#include "common/env.hpp"
#include "sparse/bucket_fft.hpp"
#include "sparse/cuda/batch.cuh"

namespace sfft::sparse {
namespace {

using namespace cuda_stages;

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

// Another process's device allocation, opened through CUDA IPC (cudaIpcOpenMemHandle) and closed on destruction.
class IpcMapping {
 public:
  IpcMapping() = default;
  explicit IpcMapping(void *ptr) : ptr_(ptr) {}
  ~IpcMapping() {
    if (ptr_ != nullptr) (void)cudaIpcCloseMemHandle(ptr_);
  }
  IpcMapping(IpcMapping &&o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  IpcMapping &operator=(IpcMapping &&) = delete;
  IpcMapping(const IpcMapping &) = delete;
  IpcMapping &operator=(const IpcMapping &) = delete;

 private:
  void *ptr_ = nullptr;
};

template <class Real>
class CudaEngine final : public Engine {
 public:
  // batch > 1: the per-exec arrays hold that many signals and run_batch runs them in the same kernels, where
  // the design allows (EXACT, lists ranked by counting); otherwise the engine holds one signal.
  CudaEngine(const Design &d, const Options &opts, std::size_t batch)
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
    // ROBUST candidates need min_votes votes of the location loops' finds per pass, a find counting up to
    // kStrongVotes (bucket_math.hpp's soft votes).
    const std::size_t finds_per_candidate = (static_cast<std::size_t>(d_.min_votes) + kStrongVotes - 1) / kStrongVotes;
    ranked_capacity_ =
        robust ? static_cast<std::size_t>(kRobustPasses) * (capacity / finds_per_candidate) : distinct_capacity_;
    signals_ = !robust && ranked_capacity_ <= kRankLimit ? std::max<std::size_t>(batch, 1) : 1;
    if (signals_ > 1 && env_flag("SFFT_SPARSE_STAGE_TIMES")) stage_timer_ = std::make_unique<cuda::StageTimer>();
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
        // A hashing of the coarse window (ROBUST's far stages, filter.cpp) is folded alone, with that window.
        const bool near = !d_.uses_far_window(first + static_cast<std::size_t>(j));
        auto &into = j == 0 || (near && shift <= share_limit && shared.size() < kJobHashings) ? shared : alone;
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
    if (signals_ > 1) {
      SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_));
      choose_batch_peel();
      choose_batch_fold(jobs);
    }
    std::vector<std::size_t> first(static_cast<std::size_t>(d_.total_loops()));
    for (int l = 0; l < d_.total_loops(); ++l) first[static_cast<std::size_t>(l)] = d_.first_hashing(l);

    window_.allocate(window.size());
    far_window_.allocate(std::max<std::size_t>(far_window.size(), 1));
    upload_response(kernel_geom_.response, d_.response_table, response_);
    upload_response(kernel_geom_.far_response, d_.far_response_table, far_response_);
    jobs_.allocate(jobs_count_);
    loops_.allocate(d_.loops.size());
    first_hashing_.allocate(first.size());
    // Per signal (signals_ of them, strides_ apart): energies, folds, table, results, counters, result headers
    // and destinations.
    if (signals_ > 1) strides_ = Strides{hashings_ * g.buckets, table_size, distinct_capacity_, first.size(), d_.k};
    energy_.allocate(signals_ * first.size());
    host_energy_.allocate(signals_ * first.size());
    z_.allocate(signals_ * hashings_ * g.buckets);
    keys_.allocate(signals_ * table_size);
    value_.allocate(signals_ * table_size);
    slots_.allocate(signals_ * distinct_capacity_);
    if (robust) {
      applied_.allocate(table_size);
      votes_.allocate(static_cast<std::size_t>(kRobustPasses) * table_size);
      is_candidate_.allocate(table_size);
      candidates_.allocate(ranked_capacity_);
      noise_.allocate(1);
    }
    table_ = Table{keys_.get(),  value_.get(),      applied_.get(), votes_.get(),       is_candidate_.get(),
                   slots_.get(), candidates_.get(), table_size,     log2_of(table_size)};
    res_freq_.allocate(signals_ * d_.k);
    res_val_.allocate(signals_ * d_.k);
    counters_.allocate(signals_);
    result_host_.allocate(signals_);
    SFFT_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&result_mapped_), result_host_.get(), 0));
    outputs_.allocate(signals_);
    outputs_host_.allocate(signals_);
    last_outputs_.resize(signals_);
    host_fold_.allocate(signals_ * hashings_ * g.buckets);
    if (signals_ > 1) {
      allow_rank_batch_shared<Real>(distinct_capacity_);
      active_.allocate(1);
      active_host_.allocate(1);
    }

    SFFT_CUDA_CHECK(cudaMemsetAsync(keys_.get(), 0xff, signals_ * table_size * sizeof(uint64_t), stream_));
    SFFT_CUDA_CHECK(cudaMemsetAsync(value_.get(), 0, signals_ * table_size * sizeof(Cplx<double>), stream_));
    if (robust) {
      SFFT_CUDA_CHECK(cudaMemsetAsync(applied_.get(), 0, table_size * sizeof(Cplx<double>), stream_));
      SFFT_CUDA_CHECK(cudaMemsetAsync(votes_.get(), 0, kRobustPasses * table_size * sizeof(unsigned), stream_));
      SFFT_CUDA_CHECK(cudaMemsetAsync(is_candidate_.get(), 0, table_size * sizeof(unsigned), stream_));
      SFFT_CUDA_CHECK(cudaMemsetAsync(noise_.get(), 0, sizeof(NoiseState), stream_));
    }
    SFFT_CUDA_CHECK(cudaMemsetAsync(counters_.get(), 0, signals_ * sizeof(Counters), stream_));
    SFFT_CUDA_CHECK(cudaMemsetAsync(energy_.get(), 0, signals_ * first.size() * sizeof(double), stream_));
    if (ranked_capacity_ > kRankLimit) {
      iota_.allocate(ranked_capacity_);
      mag_keys_.allocate(ranked_capacity_);
      sorted_mags_.allocate(ranked_capacity_);
      rank_order_.allocate(ranked_capacity_);
      SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_temp_bytes_, mag_keys_.get(),
                                                                sorted_mags_.get(), iota_.get(), rank_order_.get(),
                                                                static_cast<int>(ranked_capacity_), 0, 64, stream_));
      sort_temp_.allocate(sort_temp_bytes_);
      launch_iota(iota_.get(), ranked_capacity_, stream_);
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

    std::vector<Cplx<Real>> twiddles;
    fused_fft_ = fused_bucket_fft<Real>(g);
    if (fused_fft_) {  // the normalisation's launch transforms the rows (launch_normalise_fft)
      twiddles = bucket_fft_twiddles<Real>(g.buckets);
      twiddles_.allocate(twiddles.size());
      SFFT_CUDA_CHECK(cudaMemcpyAsync(twiddles_.get(), twiddles.data(), twiddles.size() * sizeof(Cplx<Real>),
                                      cudaMemcpyHostToDevice, stream_));
      allow_normalise_fft_shared<Real>(g);
    } else {
      long long b = static_cast<long long>(g.buckets);
      fft_.make_many(1, &b, nullptr, 1, b, nullptr, 1, b, sizeof(Real) == 8 ? CUFFT_Z2Z : CUFFT_C2C,
                     static_cast<long long>(signals_ * hashings_));
      fft_.set_stream(stream_);
    }
    if (d_.comb_loops > 0) setup_comb();
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host vectors above die with this scope
    capture_pipeline();
  }

  // The batch through the same kernels (sfft_exec_batch): device input is folded and normalised by one launch
  // each for every signal (host input on the CPU, as run()), then one launch of the graph runs the FFTs (where not
  // fused into the normalisation), the peeling and the top-k of every signal, and one synchronisation ends the
  // exec. The graph is sized for signals_: its kernels skip signals past the exec's batch (*active_), its cuFFT step
  // (designs without the fused bucket FFTs) transforms all.
  bool run_batch(const BatchIo &io) override {
    if (signals_ <= 1 || io.batch > signals_) return false;
    cuda::DeviceScope scope(device_);
    const Geometry &g = kernel_geom_;
    const std::size_t batch = io.batch, sums = hashings_ * g.buckets;
    bool any_output = false;
    for (std::size_t s = 0; s < batch; ++s) any_output = any_output || io.capacities[s] > 0;
    const bool device_outputs =
        any_output && pointer_kind(io.freqs) != PointerKind::Host && pointer_kind(io.values) != PointerKind::Host;
    auto *values = static_cast<unsigned char *>(io.values);
    for (std::size_t s = 0; s < batch; ++s) {
      outputs_host_.get()[s] = ExecOutputs{io.freqs == nullptr ? nullptr : io.freqs + s * io.out_dist,
                                           values == nullptr ? nullptr : values + s * io.out_dist * sizeof(Cplx<Real>),
                                           device_outputs ? io.capacities[s] : 0, 1.0};
    }
    *active_host_.get() = static_cast<unsigned>(batch);
    const bool device_input = pointer_kind(io.x) != PointerKind::Host;
    cuda::StageTimer *timer = stage_timer_.get();
    if (timer != nullptr) timer->begin(stream_);
    const auto *x = static_cast<const unsigned char *>(io.x);
    const std::size_t x_step = io.x_dist * sizeof(Cplx<Real>);
    const auto signals = static_cast<unsigned>(batch);
    if (!device_input) {  // as run(): fold on the CPU, upload the B-sized sums
      launch_reset_table_batch(table_, kRobustPasses, counters_.get(), distinct_capacity_, strides_, signals, stream_);
      auto *fold = reinterpret_cast<std::complex<Real> *>(host_fold_.get());
      for (std::size_t s = 0; s < batch; ++s) {
        try {
          fold_hashings(d_, reinterpret_cast<const std::complex<Real> *>(x + s * x_step), fold + s * sums, threads_);
        } catch (const Error &e) {
          fail(e.status(), "signal ", io.first_signal + s, ": ", e.what());
        }
        outputs_host_.get()[s].unscale = std::ldexp(1.0, -normalise(fold + s * sums, sums));
        for (int l = 0; l < d_.location_loops && d_.floor_relative > 0; ++l) {
          const Cplx<Real> *ref = host_fold_.get() + s * sums + d_.first_hashing(l) * g.buckets;
          double e = 0;
          for (uint64_t b = 0; b < g.buckets; ++b) e += cabs2(widen(ref[b]));
          host_energy_.get()[s * strides_.energy + static_cast<std::size_t>(l)] = e;
        }
      }
      SFFT_CUDA_CHECK(cudaMemcpyAsync(z_.get(), host_fold_.get(), batch * sums * sizeof(Cplx<Real>),
                                      cudaMemcpyHostToDevice, stream_));
      if (d_.floor_relative > 0)
        SFFT_CUDA_CHECK(cudaMemcpyAsync(energy_.get(), host_energy_.get(), batch * strides_.energy * sizeof(double),
                                        cudaMemcpyHostToDevice, stream_));
    }
    // The destinations go up unless this exec and the batch exec before it both read device input and the
    // first `batch` of them are the same: normalise_kernel rewrites only their unscales, before anything reads
    // them (host input sets the unscales above, so they always go up). The same for the batch size.
    if (!device_input || batch > uploaded_outputs_ ||
        std::memcmp(last_outputs_.data(), outputs_host_.get(), batch * sizeof(ExecOutputs)) != 0) {
      SFFT_CUDA_CHECK(cudaMemcpyAsync(outputs_.get(), outputs_host_.get(), batch * sizeof(ExecOutputs),
                                      cudaMemcpyHostToDevice, stream_));
      std::memcpy(last_outputs_.data(), outputs_host_.get(), batch * sizeof(ExecOutputs));
      uploaded_outputs_ = device_input ? batch : 0;
    }
    if (batch != uploaded_active_) {
      SFFT_CUDA_CHECK(
          cudaMemcpyAsync(active_.get(), active_host_.get(), sizeof(unsigned), cudaMemcpyHostToDevice, stream_));
      uploaded_active_ = batch;
    }
    if (timer != nullptr) timer->mark(device_input ? "uploads" : "host-fold+uploads", stream_);
    const bool column = device_input && use_column_fold(io);
    if (device_input) {  // one fold and one normalisation launch for every signal
      if (column) {
        launch_fold_column_batch<Real>(static_cast<const Cplx<Real> *>(io.x), io.x_dist, column_jobs_.get(),
                                       static_cast<int>(jobs_count_), column_job_groups_, column_buckets_.get(),
                                       column_weights_.get(), column_weight_rows_, column_phase_bits_, d_.half_taps, g,
                                       column_sums_.get(), counters_.get(), table_, kRobustPasses, strides_, signals,
                                       column_group(batch), stream_);
      } else {
        launch_fold_batch<Real>(power_of_two(), static_cast<const Cplx<Real> *>(io.x), io.x_dist, window_.get(),
                                far_window_.get(), jobs_.get(), jobs_count_ * g.buckets, d_.half_taps, d_.far_half_taps,
                                g, z_.get(), counters_.get(), table_, kRobustPasses, strides_, signals, stream_);
      }
      if (timer != nullptr) timer->mark("fold", stream_);
      normalise_on_device(signals, strides_, column);
      if (timer != nullptr) timer->mark(fused_fft_ ? "normalise+fft" : "normalise", stream_);
    } else {
      transform_uploaded(signals);
      if (timer != nullptr && fused_fft_) timer->mark("fft", stream_);
    }
    if (graph_ && timer == nullptr) {
      SFFT_CUDA_CHECK(cudaGraphLaunch(graph_.get(), stream_));
    } else {
      enqueue_pipeline(stream_, timer);
    }
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (timer != nullptr)
      timer->report(
          "sfft sparse batch stages (" + std::to_string(batch) + " signals, " +
          (batch_peel_ == BatchPeel::PerSignal   ? "peel per signal"
           : batch_peel_ == BatchPeel::PerBucket ? "peel per bucket (" + std::to_string(peel_bucket_span_) + " a block)"
                                                 : "peel per target") +
          (column ? ", fold column, " + std::to_string(column_job_groups_) + " job groups" : ", fold gather") +
          ", ms):");
    for (std::size_t s = 0; s < batch; ++s) {
      const Result r = result_host_.get()[s];
      if (r.nonfinite != 0)
        fail(SFFT_ERROR_INVALID_ARGUMENT, "signal ", io.first_signal + s,
             ": x holds non-finite values (NaN or Inf) among the samples read, or values so large that the windowed "
             "sums overflow");
    }
    for (std::size_t s = 0; s < batch; ++s) {
      const Result r = result_host_.get()[s];
      io.found[s] = r.count;
      io.unresolved[s] = r.unresolved;
      if (!device_outputs && r.count > 0 && r.count <= io.capacities[s]) {
        SFFT_CUDA_CHECK(cudaMemcpyAsync(io.freqs + s * io.out_dist, res_freq_.get() + s * d_.k,
                                        r.count * sizeof(uint64_t), cudaMemcpyDefault, stream_));
        SFFT_CUDA_CHECK(cudaMemcpyAsync(values + s * io.out_dist * sizeof(Cplx<Real>), res_val_.get() + s * d_.k,
                                        r.count * sizeof(Cplx<Real>), cudaMemcpyDefault, stream_));
      }
    }
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return true;
  }

  std::size_t run(const void *x, uint64_t *freqs, void *values, std::size_t capacity) override {
    cuda::DeviceScope scope(device_);
    uploaded_outputs_ = 0;  // this exec's destination goes into outputs_[0]
    const Geometry &g = kernel_geom_;
    // Device (or managed) outputs are filled by the graph's last kernel; host outputs after the synchronisation.
    const bool device_outputs =
        capacity > 0 && pointer_kind(freqs) != PointerKind::Host && pointer_kind(values) != PointerKind::Host;
    // unscale: set by normalise_kernel (device input) or below (host input).
    ExecOutputs destination{freqs, values, device_outputs ? capacity : 0, 1.0};
    if (pointer_kind(x) == PointerKind::Host) {
      launch_reset_table(table_, kRobustPasses, counters_.get(), distinct_capacity_, stream_);
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
      transform_uploaded(1);
    } else {
      std::size_t outputs = jobs_count_ * g.buckets;
      launch_fold<Real>(power_of_two(), static_cast<const Cplx<Real> *>(x), window_.get(), far_window_.get(),
                        jobs_.get(), outputs, d_.half_taps, d_.far_half_taps, g, z_.get(), counters_.get(), destination,
                        outputs_.get(), table_, kRobustPasses, stream_);
      normalise_on_device(1, Strides{}, false);
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
    report_ =
        d_.variant == Variant::Exact ? unmeasured_report(Variant::Exact, r.count, r.unresolved) : robust_report(d_, r);
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

  std::vector<unsigned char> fold_handle() override {
    try {
      cuda::DeviceScope scope(device_);
      cudaIpcMemHandle_t handle;
      if (signals_ != 1 || cudaIpcGetMemHandle(&handle, z_.get()) != cudaSuccess) {
        (void)cudaGetLastError();
        return {};
      }
      const auto *bytes = reinterpret_cast<const unsigned char *>(&handle);
      return std::vector<unsigned char>(bytes, bytes + sizeof handle);
    } catch (...) {  // no device scope, no memory: this engine's folds stay unshared
      return {};
    }
  }

  bool open_rank_folds(const std::vector<std::vector<unsigned char>> &handles, int self) override {
    close_rank_folds();
    try {
      cuda::DeviceScope scope(device_);
      std::vector<IpcMapping> mappings;
      std::vector<const Cplx<Real> *> folds(handles.size());
      for (std::size_t r = 0; r < handles.size(); ++r) {
        if (static_cast<int>(r) == self) {
          folds[r] = z_.get();
          continue;
        }
        cudaIpcMemHandle_t handle;
        if (handles[r].size() != sizeof handle) return false;
        std::memcpy(&handle, handles[r].data(), sizeof handle);
        void *peer = nullptr;
        if (cudaIpcOpenMemHandle(&peer, handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
          (void)cudaGetLastError();
          return false;
        }
        mappings.emplace_back(peer);
        folds[r] = static_cast<const Cplx<Real> *>(peer);
      }
      rank_fold_pointers_.allocate(folds.size());
      SFFT_CUDA_CHECK(
          cudaMemcpy(rank_fold_pointers_.get(), folds.data(), folds.size() * sizeof folds[0], cudaMemcpyHostToDevice));
      rank_sum_.allocate(hashings_ * d_.geom.buckets);
      rank_folds_ = std::move(mappings);
      summed_ranks_ = static_cast<int>(handles.size());
      return true;
    } catch (...) {  // a failed allocation or copy: the folds stay unshared
      close_rank_folds();
      return false;
    }
  }

  void close_rank_folds() override {
    summed_ranks_ = 0;
    rank_folds_.clear();
    rank_fold_pointers_.release();
    rank_sum_.release();
  }

  // Distributed execution (plan.hpp's Distribution): the rank's partial folds (on the CPU for host input, by
  // the fold kernel's block variant for device input) are summed over the ranks, checked and normalised on the
  // host, and continue as run()'s host input does. Only the H x B folds cross PCIe, whatever the block's length.
  // The sum: where the ranks' fold buffers are open to each other (open_rank_folds: one node, CUDA IPC), each
  // rank adds every rank's folds on its own GPU, reading the others over NVLink or PCIe peer access, between two
  // barriers; otherwise dist.reduce sums them in host memory (MPI). The comb samples always take dist.reduce.
  std::size_t run_block(const void *x, const Distribution &dist, uint64_t *freqs, void *values,
                        std::size_t capacity) override {
    cuda::DeviceScope scope(device_);
    uploaded_outputs_ = 0;  // this exec's destination goes into outputs_[0]
    const Geometry &g = kernel_geom_;
    const bool device_outputs =
        capacity > 0 && pointer_kind(freqs) != PointerKind::Host && pointer_kind(values) != PointerKind::Host;
    ExecOutputs destination{freqs, values, device_outputs ? capacity : 0, 1.0};
    const bool host_input = pointer_kind(x) == PointerKind::Host;
    const auto *samples = static_cast<const std::complex<Real> *>(x);
    const std::size_t count = hashings_ * g.buckets;
    auto *fold = reinterpret_cast<std::complex<Real> *>(host_fold_.get());
    const bool sum_on_devices = summed_ranks_ > 0;
    if (host_input) {
      launch_reset_table(table_, kRobustPasses, counters_.get(), distinct_capacity_, stream_);
      fold_block(d_, samples, dist.offset, dist.length, fold, threads_);
      if (sum_on_devices)
        SFFT_CUDA_CHECK(
            cudaMemcpyAsync(z_.get(), host_fold_.get(), count * sizeof(Cplx<Real>), cudaMemcpyHostToDevice, stream_));
    } else {  // the fold kernel resets the table, as in run()
      launch_fold_block<Real>(power_of_two(), static_cast<const Cplx<Real> *>(x), dist.offset, dist.length,
                              window_.get(), far_window_.get(), jobs_.get(), jobs_count_ * g.buckets, d_.half_taps,
                              d_.far_half_taps, g, z_.get(), counters_.get(), destination, outputs_.get(), table_,
                              kRobustPasses, stream_);
    }
    if (sum_on_devices) {
      SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      dist.barrier();  // every rank's partial folds are complete
      launch_sum_rank_folds<Real>(rank_fold_pointers_.get(), summed_ranks_, count, rank_sum_.get(), stream_);
      SFFT_CUDA_CHECK(cudaMemcpyAsync(host_fold_.get(), rank_sum_.get(), count * sizeof(Cplx<Real>),
                                      cudaMemcpyDeviceToHost, stream_));
      SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      dist.barrier();  // no rank reads this rank's folds any more: z_ may be written again
    } else {
      if (!host_input) {
        SFFT_CUDA_CHECK(
            cudaMemcpyAsync(host_fold_.get(), z_.get(), count * sizeof(Cplx<Real>), cudaMemcpyDeviceToHost, stream_));
        SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      }
      dist.reduce(fold, count);
    }
    // Device input: the culprit sample cannot be named from the host (length 0: no sample scanned).
    check_reduced_folds(d_, samples, dist.offset, host_input ? dist.length : 0, fold);
    const std::size_t comb_count = static_cast<std::size_t>(d_.comb_loops) * d_.comb_width;
    if (comb_count > 0) {
      auto *comb = reinterpret_cast<std::complex<Real> *>(host_comb_.get());
      if (host_input) {
        gather_comb_block(d_, samples, dist.offset, dist.length, comb);
      } else {
        launch_comb_gather_block<Real>(power_of_two(), static_cast<const Cplx<Real> *>(x), dist.offset, dist.length,
                                       comb_offsets_.get(), d_.comb_width, d_.comb_stride(), d_.comb_loops,
                                       kernel_geom_, comb_z_.get(), stream_);
        SFFT_CUDA_CHECK(cudaMemcpyAsync(host_comb_.get(), comb_z_.get(), comb_count * sizeof(Cplx<Real>),
                                        cudaMemcpyDeviceToHost, stream_));
        SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      }
      dist.reduce(comb, comb_count);
      check_reduced_comb(d_, comb);
      normalise(comb, comb_count);  // the ranking needs no unscale
      SFFT_CUDA_CHECK(cudaMemcpyAsync(comb_z_.get(), host_comb_.get(), comb_count * sizeof(Cplx<Real>),
                                      cudaMemcpyHostToDevice, stream_));
    }
    destination.unscale = std::ldexp(1.0, -normalise(fold, count));
    *outputs_host_.get() = destination;
    SFFT_CUDA_CHECK(
        cudaMemcpyAsync(outputs_.get(), outputs_host_.get(), sizeof(ExecOutputs), cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(
        cudaMemcpyAsync(z_.get(), host_fold_.get(), count * sizeof(Cplx<Real>), cudaMemcpyHostToDevice, stream_));
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
    transform_uploaded(1);
    if (graph_) {
      SFFT_CUDA_CHECK(cudaGraphLaunch(graph_.get(), stream_));
    } else {
      enqueue_pipeline(stream_);
    }
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const Result r = *result_host_.get();
    unresolved_ = r.unresolved;
    report_ =
        d_.variant == Variant::Exact ? unmeasured_report(Variant::Exact, r.count, r.unresolved) : robust_report(d_, r);
    if (r.nonfinite != 0)
      fail(SFFT_ERROR_INVALID_ARGUMENT, "the folds summed over the ranks hold values so large that the decoding ",
           "overflows");
    if (!device_outputs && r.count > 0 && r.count <= capacity) {
      SFFT_CUDA_CHECK(cudaMemcpyAsync(freqs, res_freq_.get(), r.count * sizeof(uint64_t), cudaMemcpyDefault, stream_));
      SFFT_CUDA_CHECK(
          cudaMemcpyAsync(values, res_val_.get(), r.count * sizeof(Cplx<Real>), cudaMemcpyDefault, stream_));
      SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    return r.count;
  }

  std::size_t unresolved() const override { return unresolved_; }
  const Report &report() const override { return report_; }

 private:
  // The batched engine's peel layout (batch.cuh): a group per bucket subtracting from every later loop (a batch is
  // bound by the decode work, not by one chain's latency); for designs of at most 4 x kPeelPersistentBlock lanes
  // and batches of at least two signals per SM, one launch for every loop with a block per signal (no launch per
  // loop, settled signals stop), and with one to two signals per SM, that launch for loops 2 onwards. The measurements
  // behind it and the fold, and what was tried and dropped: docs/sparse-gpu.md, "The batched engine". A/B overrides,
  // read when a batch engine is made (docs/sparse-gpu.md): SFFT_SPARSE_BATCH_PEEL=per-target (the one-signal layout),
  // per-bucket or per-signal (B <= 256); SFFT_SPARSE_BATCH_PEEL_SPAN=32, 64 or 128 (the per-bucket peel's buckets a
  // block).
  void choose_batch_peel() {
    const std::size_t sms = static_cast<std::size_t>(sms_);
    batch_peel_ = d_.geom.buckets * kPeelLanes <= 4 * kPeelPersistentBlock && signals_ >= 2 * sms
                      ? BatchPeel::PerSignal
                      : BatchPeel::PerBucket;
    // Per bucket: a block lists the most buckets (128, 64 or 32) that still give every SM three blocks, decoding
    // them in rounds; fewer, fuller blocks cost fewer listing passes where most buckets are below the floor (the
    // later loops). H200, same call, peel of all loops (ms) for spans 32 / 64 / 128: 2^20 k1000 b64 complex64
    // 0.208 / 0.180 / 0.166 (1024 blocks at 128); 2^16 k100 b256 0.121 / 0.107 / 0.102 (512); 2^22 k1000 b16
    // 0.103 / 0.092 / 0.106 (512 at 64); 2^16 k100 b64 0.074 / 0.079 / 0.089 (512 at 32).
    peel_bucket_span_ = kPeelBlock / kPeelLanes;
    for (unsigned span = kPeelBlock; span > kPeelBlock / kPeelLanes; span /= 2) {
      if (blocks_for(d_.geom.buckets, span) * signals_ >= 3 * sms) {
        peel_bucket_span_ = span;
        break;
      }
    }
    const std::string peel = env_value("SFFT_SPARSE_BATCH_PEEL");
    if (peel == "per-target") batch_peel_ = BatchPeel::PerTarget;
    if (peel == "per-bucket") batch_peel_ = BatchPeel::PerBucket;
    // peel_signal_kernel lists a signal's buckets a thread each: designs of at most kPeelPersistentBlock buckets.
    if (peel == "per-signal" && d_.geom.buckets <= kPeelPersistentBlock) batch_peel_ = BatchPeel::PerSignal;
    const std::string span = env_value("SFFT_SPARSE_BATCH_PEEL_SPAN");
    if (span == "32" || span == "64" || span == "128") peel_bucket_span_ = static_cast<unsigned>(std::stoul(span));
    // Per bucket, small designs with a block per SM at least: loops 2 onwards in one launch of the per-signal
    // kernel (few buckets are left above the floor by then). H200, same call, 2^16 k100 b256 complex64: peel of
    // loops 2-5 0.045 -> 0.028 ms (batch 0.19 -> 0.175 ms); 2^20 k1000 b64 (B = 2048, a 1024-thread block per
    // signal) ran slower from any loop on (loops 2-5 0.048 -> 0.064 ms, 3-5 0.032 -> 0.035, 4-5 0.019 -> 0.022).
    // SFFT_SPARSE_BATCH_PEEL=per-bucket: every loop per bucket.
    peel_tail_from_ = d_.geom.buckets <= kPeelPersistentBlock && signals_ >= sms && peel != "per-bucket"
                          ? std::min(2, d_.location_loops)
                          : d_.location_loops;
  }

  // The batched fold (batch.cuh): the column fold (each sample read once, coalesced) for designs whose gather
  // would move at least a signal's bytes (a 32-byte sector per distinct tap a job reads) and whose block fits
  // kColumnSharedBytes in some split of the jobs into groups; the gather fold otherwise (it wins where a design
  // reads little of each signal).
  // docs/sparse-gpu.md, "The batched engine", has the measurements. A/B override, read when a batch engine is
  // made: SFFT_SPARSE_BATCH_FOLD=gather, or column (wherever the design fits it, whatever the batch).
  void choose_batch_fold(const std::vector<FoldJob> &jobs) {
    const std::string fold = env_value("SFFT_SPARSE_BATCH_FOLD");
    const int groups = column_job_groups(jobs);
    if (fold == "gather" || groups == 0) return;
    constexpr std::size_t kSectorBytes = 32;
    std::size_t hits = 0;
    for (const FoldJob &job : jobs) hits += static_cast<std::size_t>(job_end(job));
    column_forced_ = fold == "column";
    if (column_forced_ || hits * kSectorBytes >= d_.geom.n * sizeof(Cplx<Real>)) upload_column_fold(jobs, groups);
  }

  // One past the last tap p a job reads (its hashings' windows, shifted), and its tap slots in a column.
  uint64_t job_end(const FoldJob &job) const {
    return 2 * static_cast<uint64_t>(d_.half_taps) + 1 + job.shift[job.count - 1];
  }
  unsigned column_taps(const FoldJob &job) const {
    return static_cast<unsigned>((job_end(job) + d_.geom.buckets - 1) / d_.geom.buckets);
  }
  // Jobs per group when the column fold splits them into `groups` groups (the kernel's rule), and the weight rows
  // of the largest group.
  static std::size_t jobs_per_group(std::size_t jobs, int groups) {
    return (jobs + static_cast<std::size_t>(groups) - 1) / static_cast<std::size_t>(groups);
  }
  std::size_t column_weight_rows(const std::vector<FoldJob> &jobs, int groups) const {
    const std::size_t per = jobs_per_group(jobs.size(), groups);
    std::size_t most = 0;
    for (std::size_t first = 0; first < jobs.size(); first += per) {
      std::size_t rows = 0;
      for (std::size_t j = first; j < std::min(jobs.size(), first + per); ++j) rows += column_taps(jobs[j]);
      most = std::max(most, rows);
    }
    return most;
  }
  // The fewest job groups whose items take one pass of a block (a thread each at least) and whose blocks fit
  // kColumnSharedBytes, none empty; 0 where the column fold does not apply (also where a signal's folded sums
  // outgrow the kernel's 32-bit destination indices).
  int column_job_groups(const std::vector<FoldJob> &jobs) const {
    if (jobs.empty() || hashings_ * d_.geom.buckets > UINT32_MAX) return 0;
    for (const FoldJob &job : jobs)
      if (job.far != 0) return 0;
    for (int groups = 1; groups <= static_cast<int>(jobs.size()); ++groups) {
      const std::size_t per = jobs_per_group(jobs.size(), groups);
      if (per * kColumnResidues<Real> <= kColumnThreads<Real> &&
          column_fold_shared<Real>(d_.geom.width, column_weight_rows(jobs, groups)) <= kColumnSharedBytes)
        return static_cast<int>((jobs.size() + per - 1) / per);
    }
    return 0;
  }

  // The column fold's plan-time tables (batch.cuh): the jobs, the bucket each column feeds, and per (slab, job
  // group) the weights of every (job, tap slot, column, hashing).
  void upload_column_fold(const std::vector<FoldJob> &jobs, int groups) {
    const Geometry &g = d_.geom;
    const uint64_t b = g.buckets, half = static_cast<uint64_t>(d_.half_taps);
    constexpr unsigned kResidues = kColumnResidues<Real>;
    const std::size_t per = jobs_per_group(jobs.size(), groups);
    // Lanes per (column, job) item: as many as keep a pass of items within the block.
    int phase_bits = 0;
    while ((kResidues * per) << (phase_bits + 1) <= kColumnThreads<Real>) ++phase_bits;
    const std::size_t slabs = column_slabs(), weight_rows = column_weight_rows(jobs, groups);
    std::vector<ColumnJob> column_jobs(jobs.size());
    std::vector<uint32_t> buckets(jobs.size() * b);
    constexpr uint32_t kUnfed = UINT32_MAX;
    std::vector<uint32_t> column_of(hashings_ * b, kUnfed);
    constexpr unsigned kPlanes = kColumnPlanes<Real>, kLanes = 16 / sizeof(Real);
    std::vector<ColumnWeights<Real>> weights(
        slabs * static_cast<std::size_t>(groups) * weight_rows * kPlanes * kResidues, ColumnWeights<Real>{});
    unsigned first_weight = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const FoldJob &job = jobs[j];
      const std::size_t group = j / per;
      if (j % per == 0) first_weight = 0;
      ColumnJob &cj = column_jobs[j];
      cj.base = job.base;
      cj.sigma = job.sigma;
      cj.row_step = static_cast<unsigned>(mul_mod(job.sigma, uint64_t{1} << phase_bits, g) % g.width);
      cj.count = job.count;
      cj.taps = column_taps(job);
      cj.first_weight = first_weight;
      for (int c = 0; c < kJobHashings; ++c) cj.hashing[c] = c < job.count ? job.hashing[c] : 0;
      // Column r's taps p = (sigma^-1 (r - base) + T) mod n + B q feed bucket (p - T) mod B = sigma^-1 (r - base)
      // mod B of the job's first hashing (launch_fold's bucket i; B divides n).
      const LoopParams &loop = d_.loops[static_cast<std::size_t>(d_.loop_of(job.hashing[0]))];
      for (uint64_t r = 0; r < b; ++r) {
        const uint64_t bucket = mul_mod(loop.sigma_inv, mod_n(r + g.n - mod_n(job.base, g), g), g) % b;
        buckets[j * b + r] = static_cast<uint32_t>(bucket);
        // Hashing c of the job: tap t is the first hashing's tap t + shift[c], so column r feeds its bucket
        // bucket - shift[c] (mod B).
        for (int c = 0; c < job.count; ++c) {
          const uint64_t row = static_cast<uint64_t>(job.hashing[c]) * b;
          column_of[row + (bucket + b - job.shift[c] % b) % b] = static_cast<uint32_t>(row + r);
        }
        const uint64_t first_tap = (bucket + half) % b;
        const std::size_t block = (r / kResidues) * static_cast<std::size_t>(groups) + group, column = r % kResidues;
        for (unsigned q = 0; q < cj.taps; ++q) {
          const std::size_t row = block * weight_rows + first_weight + q;
          for (int c = 0; c < job.count; ++c) {
            const uint64_t p = first_tap + b * q, tap = p - job.shift[c];  // wraps past the window when p < shift
            if (p < job_end(job) && tap <= 2 * half)
              weights[(row * kPlanes + c / kLanes) * kResidues + column].w[c % kLanes] =
                  static_cast<Real>(d_.window[tap]);
          }
        }
      }
      first_weight += cj.taps;
    }
    // Every hashing is in one job and each job's columns cover every residue, so every bucket is fed.
    if (std::find(column_of.begin(), column_of.end(), kUnfed) != column_of.end())
      fail(SFFT_ERROR_INTERNAL, "sparse FFT: a bucket of the column fold has no column");
    column_jobs_.allocate(column_jobs.size());
    column_buckets_.allocate(buckets.size());
    column_of_.allocate(column_of.size());
    column_sums_.allocate(signals_ * column_of.size());
    column_weights_.allocate(weights.size());
    SFFT_CUDA_CHECK(cudaMemcpyAsync(column_jobs_.get(), column_jobs.data(), column_jobs.size() * sizeof(ColumnJob),
                                    cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(column_buckets_.get(), buckets.data(), buckets.size() * sizeof(uint32_t),
                                    cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(column_of_.get(), column_of.data(), column_of.size() * sizeof(uint32_t),
                                    cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(column_weights_.get(), weights.data(), weights.size() * sizeof(ColumnWeights<Real>),
                                    cudaMemcpyHostToDevice, stream_));
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host vectors die with this scope
    allow_fold_column_shared<Real>(g, weight_rows);
    column_weight_rows_ = weight_rows;
    column_phase_bits_ = phase_bits;
    column_job_groups_ = groups;
  }

  // Whether this exec folds by columns: the tables are there, the signals are 16-byte aligned (16-byte copies),
  // and the batch gives every SM a block. The signals per block: about 16 blocks per SM over the grid.
  bool use_column_fold(const BatchIo &io) const {
    if (column_weight_rows_ == 0 || reinterpret_cast<std::uintptr_t>(io.x) % 16 != 0 ||
        io.x_dist * sizeof(Cplx<Real>) % 16 != 0)
      return false;
    return io.batch * column_blocks() >= static_cast<std::size_t>(sms_) || column_forced_;
  }
  std::size_t column_slabs() const { return blocks_for(d_.geom.buckets, kColumnResidues<Real>); }
  std::size_t column_blocks() const { return column_slabs() * static_cast<std::size_t>(column_job_groups_); }
  unsigned column_group(std::size_t batch) const {
    return static_cast<unsigned>(
        std::max<std::size_t>(1, batch * column_blocks() / (16 * static_cast<std::size_t>(sms_))));
  }

  // Copies a response fit's table to the device and points a fit of kernel_geom_ at the copy.
  void upload_response(ResponseFit &fit, const std::shared_ptr<const HostVector<double>> &table,
                       cuda::DeviceBuffer<double> &device_table) {
    if (!table) return;
    device_table.allocate(table->size());
    SFFT_CUDA_CHECK(cudaMemcpyAsync(device_table.get(), table->data(), table->size() * sizeof(double),
                                    cudaMemcpyHostToDevice, stream_));
    fit.coeffs = device_table.get();
  }

  // The device-folded sums of the exec's first `signals` signals (from the column fold's sums where `column`):
  // scale-safe, with the floors' energies, and transformed too where the bucket FFTs are fused (fused_fft_).
  void normalise_on_device(unsigned signals, const Strides &st, bool column) {
    const Cplx<Real> *by_column = column ? column_sums_.get() : nullptr;
    const uint32_t *column_of = column ? column_of_.get() : nullptr;
    if (fused_fft_)
      launch_normalise_fft<Real>(z_.get(), hashings_, kernel_geom_, d_.location_loops, d_.floor_relative > 0,
                                 energy_.get(), counters_.get(), outputs_.get(), st, signals, by_column, column_of,
                                 twiddles_.get(), false, stream_);
    else
      launch_normalise_batch<Real>(z_.get(), hashings_ * kernel_geom_.buckets, kernel_geom_, d_.location_loops,
                                   d_.floor_relative > 0, energy_.get(), counters_.get(), outputs_.get(), st, signals,
                                   by_column, column_of, stream_);
  }

  // Sums that came up from the host, normalised: where the bucket FFTs are fused (fused_fft_), they run here, before
  // the graph, for the exec's first `signals` signals.
  void transform_uploaded(unsigned signals) {
    if (!fused_fft_) return;
    launch_normalise_fft<Real>(z_.get(), hashings_, kernel_geom_, d_.location_loops, false, nullptr, nullptr, nullptr,
                               strides_, signals, nullptr, nullptr, twiddles_.get(), true, stream_);
  }

  // Everything after the fold: FFTs, decoding with peeling or voting, top-k into res_* and the result
  // header; its last block also resets the table and fills device outputs. Launch-bound, so
  // the plan captures it once into a CUDA graph; enqueued directly when capture is unavailable.
  // timer (batched execs under SFFT_SPARSE_STAGE_TIMES, never while capturing): an event after each stage.
  void enqueue_pipeline(cudaStream_t s, cuda::StageTimer *timer = nullptr) {
    const Geometry &g = kernel_geom_;
    if (!fused_fft_) {
      fft_.set_stream(s);
      cuda::exec_c2c(fft_, cufft_ptr(z_.get()), cufft_ptr(z_.get()), CUFFT_FORWARD);
      if (timer != nullptr) timer->mark("fft", s);
    }

    const unsigned *ranked = table_.slots;
    const unsigned *ranked_count = &counters_.get()->distinct;
    if (d_.variant == Variant::Exact && signals_ > 1 && batch_peel_ != BatchPeel::PerTarget) {
      const int tail = batch_peel_ == BatchPeel::PerSignal ? 0 : peel_tail_from_;
      for (int l = 0; l < tail; ++l) {
        launch_peel<Real>(power_of_two(), z_.get(), loops_.get(), energy_.get(), d_.floor_relative, d_.settle_relative,
                          l, d_.location_loops - 1 - l, g, table_, counters_.get(), strides_,
                          static_cast<unsigned>(signals_), active_.get(), peel_bucket_span_, s);
        if (timer != nullptr) timer->mark("peel" + std::to_string(l), s);
      }
      if (tail < d_.location_loops) {
        launch_peel_signals<Real>(power_of_two(), z_.get(), loops_.get(), energy_.get(), d_.floor_relative,
                                  d_.settle_relative, tail, d_.location_loops, g, table_, counters_.get(), strides_,
                                  static_cast<unsigned>(signals_), active_.get(), s);
        if (timer != nullptr) timer->mark(tail == 0 ? "peel" : "peel" + std::to_string(tail) + "+", s);
      }
    } else if (d_.variant == Variant::Exact) {
      for (int l = 0; l < d_.location_loops; ++l) {
        launch_peel<Real>(power_of_two(), z_.get(), loops_.get(), energy_.get(), d_.floor_relative, d_.settle_relative,
                          l, d_.location_loops - 1 - l, g, table_, counters_.get(), strides_,
                          static_cast<unsigned>(signals_), active_.get(), 0u, s);
        if (timer != nullptr) timer->mark("peel" + std::to_string(l), s);
      }
    } else {
      ranked = table_.candidates;
      ranked_count = &counters_.get()->candidates;
      const unsigned refine_blocks = std::min(blocks_for(ranked_capacity_, kWarpsPerBlock), kRefineBlocks);
      if (d_.comb_loops > 0) enqueue_comb_select(s);
      const uint32_t *approved = d_.comb_loops > 0 ? approved_.get() : nullptr;
      // Each pass decodes against the noise measured on the buckets as they are (robust.cu); the last
      // measurement, on the residual, and the candidates' sums feed the report.
      for (int pass = 0; pass < kRobustPasses; ++pass) {
        launch_noise<Real>(z_.get(), first_hashing_.get(), d_.total_loops(), g,
                           pass == 0 ? NoiseSum::Signal : NoiseSum::None, d_.accuracy, table_, counters_.get(),
                           noise_.get(), s);
        launch_vote<Real>(power_of_two(), z_.get(), loops_.get(), noise_.get(), d_.location_loops, pass, g, table_,
                          counters_.get(), approved, d_.comb_width - 1, s);
        launch_select(table_, pass, d_.min_votes, counters_.get(), distinct_capacity_, s);
        for (int round = 0; round < kRefineRounds; ++round)
          launch_refine_round<Real>(power_of_two(), refine_blocks, table_, counters_.get(), z_.get(), loops_.get(),
                                    first_hashing_.get(), d_.location_loops, d_.total_loops(), g, s);
      }
      launch_noise<Real>(z_.get(), first_hashing_.get(), d_.total_loops(), g, NoiseSum::Residual, d_.accuracy, table_,
                         counters_.get(), noise_.get(), s);
    }
    if (ranked_capacity_ <= kRankLimit) {
      // The list is typically about k long (its capacity, every bucket of every loop, is several times
      // that): a grid sized for 2k entries ranks it in one tile per block without launching blocks that
      // only wait to finish; longer lists are still ranked, a few tiles per block.
      const unsigned rank_grid = std::min({blocks_for(ranked_capacity_, kRankTile), kRankGrid,
                                           std::max(kRankGridMin, blocks_for(2 * d_.k, kRankTile))});
      if (signals_ > 1) {
        // A batch's parallelism comes from its signals: one tile per block for a list of k entries (blocks
        // stride over longer ones), without the kRankGridMin floor that keeps one signal's step short, whose
        // idle 1024-thread blocks a batch would pay per signal (2^16, k = 100, batch 1024: 16384 blocks, now 4096).
        const unsigned batch_grid = std::min(rank_grid, blocks_for(d_.k, kRankTile));
        launch_rank_batch<Real>(batch_grid, distinct_capacity_, table_, d_.k, res_freq_.get(), res_val_.get(),
                                counters_.get(), finish(), strides_, static_cast<unsigned>(signals_), active_.get(), s);
        if (timer != nullptr) timer->mark("rank", s);
      } else {
        launch_rank<Real>(rank_grid, ranked, ranked_count, table_, d_.k, res_freq_.get(), res_val_.get(),
                          counters_.get(), finish(), s);
      }
    } else {
      launch_magnitudes<Real>(ranked, ranked_count, ranked_capacity_, table_, mag_keys_.get(), s);
      std::size_t temp = sort_temp_bytes_;
      SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(sort_temp_.get(), temp, mag_keys_.get(),
                                                                sorted_mags_.get(), iota_.get(), rank_order_.get(),
                                                                static_cast<int>(ranked_capacity_), 0, 64, s));
      launch_gather<Real>(sorted_mags_.get(), rank_order_.get(), ranked, table_, d_.k, res_freq_.get(), res_val_.get(),
                          counters_.get(), finish(), s);
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
    if (!fused_fft_) fft_.set_stream(stream_);
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
    launch_comb_gather<Real>(power_of_two(), static_cast<const Cplx<Real> *>(x), comb_offsets_.get(), d_.comb_width,
                             d_.comb_stride(), d_.comb_loops, kernel_geom_, comb_z_.get(), counters_.get(), stream_);
  }

  // Part of the captured pipeline: clear the bitmap and the selection's counts, transform every comb loop,
  // approve the largest bins (comb.cu).
  void enqueue_comb_select(cudaStream_t s) {
    const auto loops = static_cast<std::size_t>(d_.comb_loops);
    SFFT_CUDA_CHECK(cudaMemsetAsync(approved_.get(), 0, approved_words_ * sizeof(uint32_t), s));
    SFFT_CUDA_CHECK(cudaMemsetAsync(comb_histogram_.get(), 0, loops * kCombDigits * sizeof(unsigned), s));
    SFFT_CUDA_CHECK(cudaMemsetAsync(comb_list_count_.get(), 0, loops * sizeof(unsigned), s));
    comb_fft_.set_stream(s);
    cuda::exec_c2c(comb_fft_, cufft_ptr(comb_z_.get()), cufft_ptr(comb_z_.get()), CUFFT_FORWARD);
    launch_comb_select<Real>(comb_z_.get(), d_.comb_width, d_.comb_keep, d_.comb_loops, comb_histogram_.get(),
                             approved_.get(), comb_list_.get(), comb_list_count_.get(), counters_.get(), s);
  }

  bool power_of_two() const { return d_.geom.mask != 0; }

  Finish<Real> finish() const {
    return Finish<Real>{energy_.get(),  d_.location_loops, outputs_.get(), res_freq_.get(),
                        res_val_.get(), result_mapped_,    noise_.get()};
  }

  static cufftComplex *cufft_ptr(Cplx<float> *p) { return reinterpret_cast<cufftComplex *>(p); }
  static cufftDoubleComplex *cufft_ptr(Cplx<double> *p) { return reinterpret_cast<cufftDoubleComplex *>(p); }

  Design d_;              // host-side: its geometry's response fits stay in host memory
  Geometry kernel_geom_;  // d_.geom with the response fits in device memory (response_): for kernels only
  int device_;
  cudaStream_t stream_;
  int threads_;
  std::size_t hashings_ = 0, jobs_count_ = 0, distinct_capacity_ = 0, ranked_capacity_ = 0, sort_temp_bytes_ = 0;
  std::size_t signals_ = 1;  // batch capacity (run_batch); 1: run() only
  Strides strides_;          // per-signal distances of the arrays below (zero for one signal)
  enum class BatchPeel { PerTarget, PerBucket, PerSignal };
  BatchPeel batch_peel_ = BatchPeel::PerTarget;          // batched engines: choose_batch_peel()
  unsigned peel_bucket_span_ = kPeelBlock / kPeelLanes;  // the per-bucket peel's buckets a block
  int peel_tail_from_ = 0;  // per bucket: the first loop peel_signal_kernel takes over (location_loops: none)
  // The column fold's tables (choose_batch_fold; column_weight_rows_ = 0: the gather fold) and the SM count.
  cuda::DeviceBuffer<ColumnJob> column_jobs_;
  cuda::DeviceBuffer<uint32_t> column_buckets_;
  cuda::DeviceBuffer<uint32_t> column_of_;      // per bucket of each hashing, the sum in column order feeding it
  cuda::DeviceBuffer<Cplx<Real>> column_sums_;  // the column fold's sums in column order (batch.cuh)
  cuda::DeviceBuffer<ColumnWeights<Real>> column_weights_;
  std::size_t column_weight_rows_ = 0;
  int column_phase_bits_ = 0;
  int column_job_groups_ = 1;
  bool column_forced_ = false;  // SFFT_SPARSE_BATCH_FOLD=column: whatever the batch
  int sms_ = 0;                 // batched engines: the device's multiprocessors (the batch layouts are chosen by them)
  cuda::DeviceBuffer<unsigned> active_;  // batched engines: the exec's batch, read by the graph's kernels
  cuda::PinnedBuffer<unsigned> active_host_;
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
  cuda::DeviceBuffer<NoiseState> noise_;  // ROBUST: the noise measurement and the report's sums (robust.cu)
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
  // Batched engines: what outputs_ holds for device input (its first uploaded_outputs_ entries, unscales aside;
  // 0: unknown) and the batch size active_ holds (0: none yet), so that an exec like the one before uploads neither.
  HostVector<ExecOutputs> last_outputs_;
  std::size_t uploaded_outputs_ = 0;
  std::size_t uploaded_active_ = 0;
  cuda::PinnedBuffer<Cplx<Real>> host_fold_;
  // Distributed execution on one node (open_rank_folds): the ranks whose folds each exec adds (0: the folds are
  // summed on the host), the other ranks' fold buffers as opened, the device array of every rank's fold pointer
  // in rank order, and the sum.
  int summed_ranks_ = 0;
  std::vector<IpcMapping> rank_folds_;
  cuda::DeviceBuffer<const Cplx<Real> *> rank_fold_pointers_;
  cuda::DeviceBuffer<Cplx<Real>> rank_sum_;
  cuda::CufftPlan fft_;  // the bucket FFTs, unless fused_fft_
  // B a power of two of at most kFusedFftBuckets<Real>: the normalisation's launch (or, for sums that came up from the
  // host, a launch of its own before the graph) runs the bucket FFTs, with these twiddles; the graph has no FFT.
  bool fused_fft_ = false;
  cuda::DeviceBuffer<Cplx<Real>> twiddles_;
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
  Report report_;
  // Stage times of a batched exec, for profiling (SFFT_SPARSE_STAGE_TIMES set and not "0" when the plan is
  // made; bench_sparse_batch --stages sets it): run_batch then enqueues the pipeline without its graph, with a
  // cudaEvent after each stage, and prints one line to stderr per exec. The events cost the kernels their
  // overlapped (programmatic dependent) launches, so the sum is a little above an untimed exec.
  std::unique_ptr<cuda::StageTimer> stage_timer_;
  GraphExec graph_;  // declared last: destroyed before the buffers and the cuFFT plan it uses
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(const Design &d, const Options &opts, bool double_precision,
                                         std::size_t batch) {
  require_cuda_device(opts);
  if (double_precision) return std::make_unique<CudaEngine<double>>(d, opts, batch);
  return std::make_unique<CudaEngine<float>>(d, opts, batch);
}

}  // namespace sfft::sparse
