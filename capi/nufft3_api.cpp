// SPDX-License-Identifier: Apache-2.0
// C entry points of the type-3 NUFFT (nufft3_*).
#include <memory>

#include "boundary.hpp"
#include "common/dtype.hpp"
#include "common/versioned_struct.hpp"
#include "nufft3/plan.hpp"
#include "sfft/sfft.h"

namespace {
sfft::capi::HandleRegistry<nufft3_plan, sfft::nufft3::Plan> &registry() {
  static sfft::capi::HandleRegistry<nufft3_plan, sfft::nufft3::Plan> r;
  return r;
}
}  // namespace

extern "C" {

// nufft3_options has kept its sfft 0.1 layout, so callers binding the unsized symbol get every field.
SFFT_API void(nufft3_options_init)(nufft3_options *opts) {
  sfft::init_versioned(opts, sizeof(nufft3_options), sfft::nufft3::default_options());
}

SFFT_API void nufft3_options_init_sized(nufft3_options *opts, size_t struct_size) {
  sfft::init_versioned(opts, struct_size, sfft::nufft3::default_options());
}

SFFT_API sfft_status nufft3_create(nufft3_plan *plan, int dim, sfft_dtype dtype, int sign, double tol,
                                   const sfft_options *opts) {
  return sfft::capi::guarded("nufft3_create", [&] {
    sfft::require(plan != nullptr, "plan (the output pointer) is NULL");
    sfft::require_complex_dtype(dtype, "dtype");  // read as an int first: any value may arrive from C
    *plan = registry().add(std::make_unique<sfft::nufft3::Plan>(dim, dtype, sign, tol, opts));
  });
}

SFFT_API sfft_status nufft3_set_options(nufft3_plan plan, const nufft3_options *opts) {
  return sfft::capi::guarded("nufft3_set_options", [&] { registry().acquire(plan, "plan")->set_options(opts); });
}

SFFT_API sfft_status nufft3_setpts(nufft3_plan plan, uint64_t N, const void *x, const void *y, const void *z,
                                   uint64_t K, const void *s, const void *t, const void *u) {
  return sfft::capi::guarded("nufft3_setpts",
                             [&] { registry().acquire(plan, "plan")->setpts(N, x, y, z, K, s, t, u); });
}

SFFT_API sfft_status nufft3_exec(nufft3_plan plan, const void *f, void *F) {
  return sfft::capi::guarded("nufft3_exec", [&] { registry().acquire(plan, "plan")->exec(f, F); });
}

SFFT_API sfft_status nufft3_destroy(nufft3_plan plan) {
  return sfft::capi::guarded("nufft3_destroy", [&] { registry().destroy(plan, "plan"); });
}

}  // extern "C"
