// SPDX-License-Identifier: Apache-2.0
// C entry points of the sparse FFT: sfft_sparse_options_init, sfft_create(_ex), sfft_exec, sfft_destroy.
#include <cstring>
#include <memory>

#include "boundary.hpp"
#include "common/backend.hpp"
#include "common/checked.hpp"
#include "common/dtype.hpp"
#include "common/options.hpp"
#include "common/versioned_struct.hpp"
#include "sfft/sfft.h"
#include "sparse/plan.hpp"

namespace {

// What an sfft_plan handle stands for (boundary.hpp's HandleRegistry maps handles to plans).
struct SparsePlan {
  uint64_t n = 0;
  uint64_t k = 0;
  sfft::Backend backend = sfft::Backend::Cpu;
  std::unique_ptr<sfft::sparse::Engine> engine;       // ROBUST or EXACT as asked; AUTO: the ROBUST fallback
  std::unique_ptr<sfft::sparse::Engine> exact_first;  // AUTO: tried first, kept when it explains the signal
};

sfft::capi::HandleRegistry<sfft_plan, SparsePlan> &registry() {
  static sfft::capi::HandleRegistry<sfft_plan, SparsePlan> r;
  return r;
}

sfft::Backend plan_backend(const sfft::Options &o) {
  switch (o.backend) {
    case SFFT_BACKEND_CPU:
      return sfft::Backend::Cpu;
    case SFFT_BACKEND_CUDA:
      sfft::require_cuda_device(o);
      return sfft::Backend::Cuda;
    case SFFT_BACKEND_AUTO:
      break;
  }
  return sfft::cuda_device_count() > o.device ? sfft::Backend::Cuda : sfft::Backend::Cpu;
}

std::unique_ptr<sfft::sparse::Engine> make_engine(const sfft::sparse::Design &design, const sfft::Options &o,
                                                  sfft::Backend backend, bool dbl) {
  if (backend == sfft::Backend::Cuda) {
#if SFFT_HAVE_CUDA
    return sfft::sparse::make_cuda_engine(design, o, dbl);
#else
    sfft::fail(SFFT_ERROR_UNSUPPORTED, "this sfft was built without CUDA support");
#endif
  }
  return dbl ? sfft::sparse::make_cpu_engine<double>(design, o) : sfft::sparse::make_cpu_engine<float>(design, o);
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
    bool dbl = sfft::require_complex_dtype(dtype, "dtype");
    sfft::Options o = sfft::resolve_options(opts);
    sfft_sparse_options resolved = sfft::sparse::resolve_knobs(knobs);
    sfft::sparse::Design design = sfft::sparse::make_design(n, k, dbl, resolved, o.seed);
    auto p = std::make_unique<SparsePlan>();
    p->n = n;
    p->k = k;
    p->backend = plan_backend(o);
    p->engine = make_engine(design, o, p->backend, dbl);
    if (resolved.variant == SFFT_SPARSE_AUTO) {  // validated by make_design
      sfft_sparse_options exact = resolved;
      exact.variant = SFFT_SPARSE_EXACT;
      exact.estimation_loops = 0;  // ROBUST-only knobs stay with the fallback
      exact.min_votes = 0;
      exact.comb_loops = 0;
      exact.comb_width = 0;
      exact.comb_keep = 0;
      p->exact_first = make_engine(sfft::sparse::make_design(n, k, dbl, exact, o.seed), o, p->backend, dbl);
    }
    *plan = registry().add(std::move(p));
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
    uint64_t capacity = *count;
    sfft::require(capacity == 0 || (freqs != nullptr && values != nullptr), freqs == nullptr ? "freqs" : "values",
                  " is NULL but the capacity *count = ", capacity);
    if (p->backend == sfft::Backend::Cpu) {
      for (const void *ptr :
           {static_cast<const void *>(x), static_cast<const void *>(freqs), static_cast<const void *>(values)})
        sfft::require(sfft::pointer_kind(ptr) != sfft::PointerKind::Device,
                      ptr == x       ? "x"
                      : ptr == freqs ? "freqs"
                                     : "values",
                      " is CUDA device memory but the plan is a CPU plan (create it with SFFT_BACKEND_CUDA)");
    }
    std::size_t found = 0;
    bool exact_kept = false;
    if (p->exact_first) {
      // AUTO: the EXACT attempt writes its outputs only when it will be kept (a capacity below k could
      // otherwise leave them holding a discarded attempt when the fallback then overflows it).
      bool may_write = capacity >= p->k;
      found = p->exact_first->run(x, freqs, values, may_write ? capacity : 0);
      exact_kept = p->exact_first->unresolved() == 0;
      if (exact_kept && !may_write && found <= capacity && found > 0)
        found = p->exact_first->run(x, freqs, values, capacity);
    }
    if (!exact_kept) found = p->engine->run(x, freqs, values, capacity);
    *count = found;
    if (found > capacity)
      sfft::fail(SFFT_ERROR_INVALID_ARGUMENT, "capacity *count = ", capacity, " is smaller than the ", found,
                 " coefficients found (a capacity of k = ", p->k, " always suffices); *count now holds ", found);
  });
}

SFFT_API sfft_status sfft_destroy(sfft_plan plan) {
  return sfft::capi::guarded("sfft_destroy", [&] { registry().destroy(plan, "plan"); });
}

}  // extern "C"
