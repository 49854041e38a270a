// SPDX-License-Identifier: Apache-2.0
#include "sparse/api_plan.hpp"

#include <algorithm>
#include <exception>
#include <omp.h>
#include <string>

#include "common/checked.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/process.hpp"

namespace sfft::sparse {

namespace {

// Signals one pass of a CUDA batch engine takes (its workspace holds that many); larger batches run in passes.
constexpr std::size_t kCudaBatchSignals = 1024;

// A CPU plan reads x and writes freqs and values on the host; a CUDA plan reaches device memory of its own device
// only.
void require_reachable_arrays(Backend backend, const Options &opts, const void *x, const uint64_t *freqs,
                              const void *values) {
  if (backend == Backend::Cuda) {
    require_arrays_on_device(opts.device, {{x, "x"}, {freqs, "freqs"}, {values, "values"}});
    return;
  }
  for (const void *ptr : {x, static_cast<const void *>(freqs), values})
    require(pointer_kind(ptr) != PointerKind::Device,
            ptr == x       ? "x"
            : ptr == freqs ? "freqs"
                           : "values",
            " is CUDA device memory but the plan is a CPU plan (create it with SFFT_BACKEND_CUDA)");
}

}  // namespace

std::unique_ptr<Engine> make_engine(const Design &d, const Options &opts, Backend backend, bool double_precision) {
  if (backend == Backend::Cuda) return make_cuda_engine(d, opts, double_precision);
  return double_precision ? make_cpu_engine<double>(d, opts) : make_cpu_engine<float>(d, opts);
}

sfft_sparse_options exact_stage_knobs(const sfft_sparse_options &knobs) {
  sfft_sparse_options exact = knobs;
  exact.variant = SFFT_SPARSE_EXACT;
  exact.estimation_loops = 0;
  exact.min_votes = 0;
  exact.comb_loops = 0;
  exact.comb_width = 0;
  exact.comb_keep = 0;
  return exact;
}

Plan::Plan(uint64_t n, uint64_t k, const sfft_dtype &dtype, const sfft_options *opts, const sfft_sparse_options *knobs)
    : k_(k) {
  double_ = require_complex_dtype(dtype, "dtype");
  opts_ = resolve_options(opts);
  const sfft_sparse_options resolved = resolve_knobs(knobs);
  // The design validates n, k and the knobs before the backend is resolved: bad arguments are reported as
  // such on every host.
  design_ = make_design(n, k, double_, resolved, opts_.seed);
  if (resolved.variant == SFFT_SPARSE_AUTO)  // validated by make_design
    exact_design_ = std::make_unique<Design>(make_design(n, k, double_, exact_stage_knobs(resolved), opts_.seed));
  backend_ = resolve_backend(opts_, {}, "sfft_create");
  main_ = make_engines(opts_);
  reports_.resize(1);
}

Plan::Engines Plan::make_engines(const Options &o) const {
  Engines e;
  e.engine = make_engine(design_, o, backend_, double_);
  if (exact_design_) e.exact_first = make_engine(*exact_design_, o, backend_, double_);
  return e;
}

std::size_t Plan::run(Engines &e, const void *x, uint64_t *freqs, void *values, std::size_t capacity,
                      Report &report) const {
  if (e.exact_first) {
    // AUTO: the EXACT attempt writes its outputs only when it will be kept (a capacity below k could
    // otherwise leave them holding a discarded attempt when the fallback then overflows it). Its report says
    // whether it explains the signal (EXACT: no unresolved bucket in its last loop).
    const bool may_write = capacity >= k_;
    std::size_t found = e.exact_first->run(x, freqs, values, may_write ? capacity : 0);
    if (!e.exact_first->report().unexplained) {
      if (!may_write && found <= capacity && found > 0) found = e.exact_first->run(x, freqs, values, capacity);
      report = e.exact_first->report();
      return found;
    }
  }
  const std::size_t found = e.engine->run(x, freqs, values, capacity);
  report = e.engine->report();
  return found;
}

sfft_report Plan::report(uint64_t signal) const {
  require(reported_ > 0, "the plan has not run yet: sfft_get_report reads the report of the last exec");
  require(signal < reported_, "signal = ", signal, " is outside the last exec's ", reported_,
          reported_ == 1 ? " signal" : " signals");
  const Report &r = reports_[static_cast<std::size_t>(signal)];
  sfft_report out{};
  out.struct_size = sizeof out;
  out.variant = r.variant == Variant::Exact ? SFFT_SPARSE_EXACT : SFFT_SPARSE_ROBUST;
  out.unexplained = r.unexplained ? 1 : 0;
  out.count = r.count;
  out.significant = r.significant;
  out.unexplained_buckets = r.unexplained_buckets;
  out.explained = r.explained;
  out.signal_energy = r.signal_energy;
  out.noise_floor = r.noise_floor;
  out.excess = r.excess;
  return out;
}

void Plan::exec(const void *x, uint64_t *freqs, void *values, uint64_t *count) {
  const uint64_t capacity = *count;
  require_reachable_arrays(backend_, opts_, x, freqs, values);
  reported_ = 0;  // a failed exec leaves no report
  const std::size_t found = run(main_, x, freqs, values, capacity, reports_[0]);
  reported_ = 1;
  *count = found;
  if (found > capacity)
    fail(SFFT_ERROR_INVALID_ARGUMENT, "capacity *count = ", capacity, " is smaller than the ", found,
         " coefficients found (a capacity of k = ", k_, " always suffices); *count now holds ", found);
}

void Plan::reserve_batch(std::size_t batch) {
  if (batch_found_.size() < batch) batch_found_.resize(batch);
  if (reports_.size() < batch) reports_.resize(batch);
  if (backend_ == Backend::Cuda) {
    const Design *exact = exact_design_ ? exact_design_.get() : design_.variant == Variant::Exact ? &design_ : nullptr;
    const std::size_t wanted = std::min(batch, kCudaBatchSignals);
    if (exact == nullptr || batch_engine_declined_ || wanted <= 1 || batch_engine_signals_ >= wanted) return;
    // The new engine replaces the old one only once it exists: a failure leaves the plan as it was.
    std::unique_ptr<Engine> grown = make_cuda_engine(*exact, opts_, double_, wanted);
    batch_capacities_.resize(wanted);
    batch_unresolved_.resize(wanted);
    batch_engine_ = std::move(grown);
    batch_engine_signals_ = wanted;
    return;
  }
  // Threads over signals: each worker runs whole signals on an engine of its own with one thread, which
  // keeps every thread busy for any n (a single signal's parallel regions pay off only at large n).
  const std::size_t wanted = std::min<std::size_t>(static_cast<std::size_t>(usable_threads(opts_.threads)), batch);
  if (wanted <= 1 || workers_.size() >= wanted) return;
  worker_failure_.resize(wanted);  // first: a failure here leaves the plan as it was
  worker_failed_at_.resize(wanted);
  Options single = opts_;
  single.threads = 1;
  std::vector<Engines> grown;
  grown.reserve(wanted);
  for (auto &w : workers_) grown.push_back(std::move(w));
  try {
    while (grown.size() < wanted) grown.push_back(make_engines(single));
  } catch (...) {
    for (std::size_t i = 0; i < workers_.size(); ++i) workers_[i] = std::move(grown[i]);  // the plan as it was
    throw;
  }
  workers_ = std::move(grown);
}

void Plan::exec_batch(uint64_t batch, const void *x, uint64_t x_dist, uint64_t *freqs, void *values, uint64_t out_dist,
                      uint64_t *counts) {
  const std::size_t signals = to_size(batch, "batch");
  const std::size_t n = static_cast<std::size_t>(design_.geom.n);
  const std::size_t value_size = double_ ? 16 : 8;
  // The arrays' extents in bytes must be addressable: x up to the last signal's last sample, the outputs up to
  // the last signal's capacity.
  (void)checked_mul(checked_add(checked_mul(signals - 1, to_size(x_dist, "x_dist"), "(batch - 1) * x_dist"), n,
                                "(batch - 1) * x_dist + n"),
                    value_size, "the extent of x ((batch - 1) * x_dist + n samples) in bytes");
  uint64_t largest = 0;
  for (std::size_t i = 0; i < signals; ++i) largest = std::max(largest, counts[i]);
  if (signals > 1) {
    for (std::size_t i = 0; i < signals; ++i)
      require(counts[i] <= out_dist, "counts[", i, "] = ", counts[i], " exceeds out_dist = ", out_dist, ": signal ", i,
              "'s outputs would overlap signal ", i + 1, "'s (out_dist >= every capacity; k = ", k_,
              " always suffices)");
  }
  if (largest > 0) {
    const std::size_t span =
        checked_add(checked_mul(signals - 1, to_size(out_dist, "out_dist"), "(batch - 1) * out_dist"),
                    to_size(largest, "counts[i]"), "the output extent");
    const auto f0 = reinterpret_cast<std::uintptr_t>(freqs), v0 = reinterpret_cast<std::uintptr_t>(values);
    const std::size_t f_bytes = checked_mul(span, sizeof(uint64_t), "the extent of freqs in bytes");
    const std::size_t v_bytes = checked_mul(span, value_size, "the extent of values in bytes");
    require(f0 + f_bytes <= v0 || v0 + v_bytes <= f0, "freqs and values overlap (", f_bytes, " bytes of freqs and ",
            v_bytes, " bytes of values from the two pointers, for batch = ", batch, " and out_dist = ", out_dist, ")");
  }
  require_reachable_arrays(backend_, opts_, x, freqs, values);
  reserve_batch(signals);

  const auto *x_bytes = static_cast<const unsigned char *>(x);
  auto *value_bytes = static_cast<unsigned char *>(values);
  const std::size_t x_step = static_cast<std::size_t>(x_dist) * value_size;
  const std::size_t out_step = static_cast<std::size_t>(out_dist);
  auto signal = [&](Engines &e, std::size_t i) {
    batch_found_[i] = run(e, x_bytes + i * x_step, freqs == nullptr ? nullptr : freqs + i * out_step,
                          value_bytes == nullptr ? nullptr : value_bytes + i * out_step * value_size,
                          static_cast<std::size_t>(counts[i]), reports_[i]);
  };
  reported_ = 0;  // a failed exec leaves no report
  const bool batched = batch_engine_ && run_cuda_batch(signals, x_bytes, static_cast<std::size_t>(x_dist), freqs,
                                                       value_bytes, out_step, counts);
  if (batched) {
    // CUDA: every signal ran in the batch engine's kernels.
  } else if (workers_.empty()) {
    for (std::size_t i = 0; i < signals; ++i) {
      try {
        signal(main_, i);
      } catch (const Error &e) {
        fail(e.status(), "signal ", i, ": ", e.what());
      }
    }
  } else {
    // Exceptions cannot leave an OpenMP region: each worker keeps its first failure (its lowest signal, the
    // schedule hands out signals in increasing order) and the lowest over the workers is rethrown.
    const int workers = static_cast<int>(std::min(workers_.size(), signals));
    auto &failure = worker_failure_;  // reserved with the workers: exec allocates nothing
    auto &failed_at = worker_failed_at_;
    std::fill(failure.begin(), failure.end(), nullptr);
    std::fill(failed_at.begin(), failed_at.end(), signals);
    const long count = static_cast<long>(signals);
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1)
    for (long i = 0; i < count; ++i) {
      const auto w = static_cast<std::size_t>(omp_get_thread_num());
      if (failure[w]) continue;
      try {
        signal(workers_[w], static_cast<std::size_t>(i));
      } catch (...) {
        failure[w] = std::current_exception();
        failed_at[w] = static_cast<std::size_t>(i);
      }
    }
    const auto first =
        static_cast<std::size_t>(std::min_element(failed_at.begin(), failed_at.begin() + workers) - failed_at.begin());
    if (failed_at[first] < signals) {
      try {
        std::rethrow_exception(failure[first]);
      } catch (const Error &e) {
        fail(e.status(), "signal ", failed_at[first], ": ", e.what());
      }
    }
  }
  reported_ = signals;
  std::size_t short_signal = signals;
  uint64_t short_capacity = 0;
  for (std::size_t i = 0; i < signals; ++i) {
    if (batch_found_[i] > counts[i] && short_signal == signals) {
      short_signal = i;
      short_capacity = counts[i];
    }
    counts[i] = batch_found_[i];
  }
  if (short_signal < signals)
    fail(SFFT_ERROR_INVALID_ARGUMENT, "signal ", short_signal, ": capacity counts[", short_signal,
         "] = ", short_capacity, " is smaller than the ", batch_found_[short_signal],
         " coefficients found (a capacity of k = ", k_,
         " always suffices); counts[] now holds the number found for every signal, and the signals whose "
         "capacity sufficed were written");
}

bool Plan::run_cuda_batch(std::size_t signals, const unsigned char *x, std::size_t x_dist, uint64_t *freqs,
                          unsigned char *values, std::size_t out_dist, const uint64_t *counts) {
  const std::size_t value_size = double_ ? 16 : 8;
  const bool auto_variant = exact_design_ != nullptr;
  for (std::size_t first = 0; first < signals; first += batch_engine_signals_) {
    const std::size_t count = std::min(batch_engine_signals_, signals - first);
    // AUTO: the EXACT stage writes only where it may be kept whatever the fallback needs (as run()).
    for (std::size_t i = 0; i < count; ++i)
      batch_capacities_[i] = auto_variant && counts[first + i] < k_ ? 0 : counts[first + i];
    BatchIo io;
    io.batch = count;
    io.x = x + first * x_dist * value_size;
    io.x_dist = x_dist;
    io.freqs = freqs == nullptr ? nullptr : freqs + first * out_dist;
    io.values = values == nullptr ? nullptr : values + first * out_dist * value_size;
    io.out_dist = out_dist;
    io.capacities = batch_capacities_.data();
    io.found = batch_found_.data() + first;
    io.unresolved = batch_unresolved_.data();
    io.first_signal = first;
    if (!batch_engine_->run_batch(io)) {  // the design has no batched form (decided at the first pass)
      batch_engine_.reset();
      batch_engine_signals_ = 0;
      batch_engine_declined_ = true;
      return false;
    }
    // The batched kernels peel (EXACT): their report is the unresolved buckets (sfft.h).
    for (std::size_t i = 0; i < count; ++i)
      reports_[first + i] = unmeasured_report(Variant::Exact, batch_found_[first + i], batch_unresolved_[i]);
    if (!auto_variant) continue;
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t s = first + i;
      const std::size_t capacity = static_cast<std::size_t>(counts[s]);
      const unsigned char *xs = x + s * x_dist * value_size;
      uint64_t *fs = freqs == nullptr ? nullptr : freqs + s * out_dist;
      unsigned char *vs = values == nullptr ? nullptr : values + s * out_dist * value_size;
      try {
        if (batch_unresolved_[i] != 0) {
          batch_found_[s] = main_.engine->run(xs, fs, vs, capacity);
          reports_[s] = main_.engine->report();
        } else if (capacity < k_ && batch_found_[s] <= capacity && batch_found_[s] > 0) {
          batch_found_[s] = main_.exact_first->run(xs, fs, vs, capacity);
        }
      } catch (const Error &e) {
        fail(e.status(), "signal ", s, ": ", e.what());
      }
    }
  }
  return true;
}

}  // namespace sfft::sparse
