// SPDX-License-Identifier: Apache-2.0
// C entry points of the sparse FFT: sfft_sparse_options_init, sfft_create(_ex), sfft_exec, sfft_exec_batch,
// sfft_get_report, sfft_destroy. Each
// checks its arguments and handle and forwards to sfft::sparse::Plan (src/sparse/api_plan.hpp).
#include <cstddef>
#include <memory>

#include "boundary.hpp"
#include "common/backend.hpp"
#include "common/versioned_struct.hpp"
#include "sfft/sfft.h"
#include "sparse/api_plan.hpp"

namespace {
sfft::capi::HandleRegistry<sfft_plan, sfft::sparse::Plan> &registry() {
  static sfft::capi::HandleRegistry<sfft_plan, sfft::sparse::Plan> r;
  return r;
}
}  // namespace

extern "C" {

// Callers binding the unsized symbol get sfft 0.1's layout, which ended before the comb fields.
SFFT_API void(sfft_sparse_options_init)(sfft_sparse_options *knobs) {
  sfft::init_versioned(knobs, sfft::sparse::kFirstKnobsSize, sfft::sparse::default_knobs());
}

SFFT_API void sfft_sparse_options_init_sized(sfft_sparse_options *knobs, size_t struct_size) {
  sfft::init_versioned(knobs, struct_size, sfft::sparse::default_knobs());
}

SFFT_API sfft_status sfft_create_ex(sfft_plan *plan, uint64_t n, uint64_t k, sfft_dtype dtype, const sfft_options *opts,
                                    const sfft_sparse_options *knobs) {
  return sfft::capi::guarded("sfft_create", [&] {
    sfft::require(plan != nullptr, "plan (the output handle pointer) is NULL");
    *plan = registry().add(std::make_unique<sfft::sparse::Plan>(n, k, dtype, opts, knobs));
  });
}

SFFT_API sfft_status sfft_create(sfft_plan *plan, uint64_t n, uint64_t k, sfft_dtype dtype, const sfft_options *opts) {
  return sfft_create_ex(plan, n, k, dtype, opts, nullptr);
}

SFFT_API sfft_status sfft_exec(sfft_plan plan, const void *x, uint64_t *freqs, void *values, uint64_t *count) {
  return sfft::capi::guarded("sfft_exec", [&] {
    auto p = registry().acquire(plan, "plan");
    sfft::require(x != nullptr, "x is NULL");
    sfft::require(count != nullptr, "count (capacity in, number written out) is NULL");
    sfft::require(*count == 0 || (freqs != nullptr && values != nullptr), freqs == nullptr ? "freqs" : "values",
                  " is NULL but the capacity *count = ", *count);
    p->exec(x, freqs, values, count);
  });
}

SFFT_API sfft_status sfft_exec_batch(sfft_plan plan, uint64_t batch, const void *x, uint64_t x_dist, uint64_t *freqs,
                                     void *values, uint64_t out_dist, uint64_t *counts) {
  return sfft::capi::guarded("sfft_exec_batch", [&] {
    auto p = registry().acquire(plan, "plan");
    sfft::require(batch >= 1, "batch = 0: a batch holds at least one signal");
    sfft::require(x != nullptr, "x is NULL");
    sfft::require(counts != nullptr, "counts (per signal: capacity in, number written out) is NULL");
    sfft::require(sfft::pointer_kind(counts) != sfft::PointerKind::Device,
                  "counts is CUDA device memory: it must be host memory (freqs and values may be device memory)");
    for (uint64_t i = 0; i < batch; ++i)
      sfft::require(counts[i] == 0 || (freqs != nullptr && values != nullptr), freqs == nullptr ? "freqs" : "values",
                    " is NULL but the capacity counts[", i, "] = ", counts[i]);
    p->exec_batch(batch, x, x_dist, freqs, values, out_dist, counts);
  });
}

SFFT_API sfft_status sfft_get_report(sfft_plan plan, uint64_t signal, sfft_report *report) {
  return sfft::capi::guarded("sfft_get_report", [&] {
    auto p = registry().acquire(plan, "plan");
    sfft::require(report != nullptr, "report is NULL");
    sfft::require(report->struct_size >= offsetof(sfft_report, variant) + sizeof report->variant,
                  "report->struct_size = ", report->struct_size, " is too small (set it to sizeof(sfft_report))");
    sfft::init_versioned(report, report->struct_size, p->report(signal));
  });
}

SFFT_API sfft_status sfft_destroy(sfft_plan plan) {
  return sfft::capi::guarded("sfft_destroy", [&] { registry().destroy(plan, "plan"); });
}

}  // extern "C"
