// SPDX-License-Identifier: Apache-2.0
// C entry points of the sparse-input 2-D FFT (spfft2d_*): argument and handle checks, then one call into
// the plan (src/spfft2d/plan.hpp).
#include <memory>

#include "boundary.hpp"
#include "common/dtype.hpp"
#include "sfft/sfft.h"
#include "spfft2d/plan.hpp"

namespace {

using sfft::require;
using sfft::spfft2d::Plan;

sfft::capi::HandleRegistry<spfft2d_plan, Plan> &registry() {
  static sfft::capi::HandleRegistry<spfft2d_plan, Plan> r;
  return r;
}

}  // namespace

extern "C" {

SFFT_API sfft_status spfft2d_create(spfft2d_plan *plan, uint64_t rows, uint64_t cols, uint64_t nnz,
                                    const int64_t *row_idx, const int64_t *col_idx, const double *values,
                                    sfft_dtype out_dtype, const sfft_options *opts) {
  return sfft::capi::guarded("spfft2d_create", [&] {
    require(plan != nullptr, "plan is NULL");
    *plan = registry().add(Plan::from_coo(rows, cols, nnz, row_idx, col_idx, values, out_dtype, opts));
  });
}

SFFT_API sfft_status spfft2d_create_from_mtx(spfft2d_plan *plan, const char *path, int binary, sfft_dtype out_dtype,
                                             const sfft_options *opts) {
  return sfft::capi::guarded("spfft2d_create_from_mtx", [&] {
    require(plan != nullptr, "plan is NULL");
    require(path != nullptr, "path is NULL");
    *plan = registry().add(Plan::from_mtx(path, binary != 0, out_dtype, opts));
  });
}

SFFT_API sfft_status spfft2d_exec(spfft2d_plan plan, void *out) {
  return sfft::capi::guarded("spfft2d_exec", [&] { registry().acquire(plan, "plan")->exec(out); });
}

SFFT_API sfft_status spfft2d_exec_rows(spfft2d_plan plan, uint64_t row0, uint64_t nrows, void *out) {
  return sfft::capi::guarded("spfft2d_exec_rows",
                             [&] { registry().acquire(plan, "plan")->exec_rows(row0, nrows, out); });
}

SFFT_API sfft_status spfft2d_exec_stream(spfft2d_plan plan, spfft2d_rows_callback callback, void *user) {
  return sfft::capi::guarded("spfft2d_exec_stream",
                             [&] { registry().acquire(plan, "plan")->exec_stream(callback, user); });
}

SFFT_API sfft_status spfft2d_set_tile_rows(spfft2d_plan plan, uint64_t tile_rows) {
  return sfft::capi::guarded("spfft2d_set_tile_rows",
                             [&] { registry().acquire(plan, "plan")->set_tile_rows(tile_rows); });
}

SFFT_API sfft_status spfft2d_set_method(spfft2d_plan plan, spfft2d_method method) {
  return sfft::capi::guarded("spfft2d_set_method",
                             [&] { registry().acquire(plan, "plan")->set_method(sfft::enum_value(method)); });
}

SFFT_API sfft_status spfft2d_get_method(spfft2d_plan plan, spfft2d_method *method) {
  return sfft::capi::guarded("spfft2d_get_method", [&] {
    auto p = registry().acquire(plan, "plan");
    require(method != nullptr, "method is NULL");
    *method = p->method();
  });
}

SFFT_API sfft_status spfft2d_get_info(spfft2d_plan plan, uint64_t *rows, uint64_t *cols, uint64_t *nnz,
                                      uint64_t *tile_rows, uint64_t *workspace_bytes, sfft_backend *backend) {
  return sfft::capi::guarded("spfft2d_get_info", [&] {
    const Plan::Info i = registry().acquire(plan, "plan")->info();
    if (rows) *rows = i.rows;
    if (cols) *cols = i.cols;
    if (nnz) *nnz = i.nnz;
    if (tile_rows) *tile_rows = i.tile_rows;
    if (workspace_bytes) *workspace_bytes = i.workspace_bytes;
    if (backend) *backend = i.backend;
  });
}

SFFT_API sfft_status spfft2d_destroy(spfft2d_plan plan) {
  return sfft::capi::guarded("spfft2d_destroy", [&] { registry().destroy(plan, "plan"); });
}

}  // extern "C"
