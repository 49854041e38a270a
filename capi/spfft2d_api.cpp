// SPDX-License-Identifier: Apache-2.0
// C entry points of the sparse-input 2-D FFT (spfft2d_*).
#include <memory>
#include <vector>

#include "boundary.hpp"
#include "common/backend.hpp"
#include "common/checked.hpp"
#include "common/dtype.hpp"
#include "common/options.hpp"
#include "sfft/sfft.h"
#include "spfft2d/plan.hpp"

namespace {

using sfft::require;
namespace sp = sfft::spfft2d;

// What an spfft2d_plan handle stands for (boundary.hpp's HandleRegistry maps handles to plans).
struct Spfft2dPlan {
  std::shared_ptr<const sp::SparseColumns> matrix;
  sfft::Backend backend = sfft::Backend::Cpu;
  std::unique_ptr<sp::Engine> engine;
};

sfft::capi::HandleRegistry<spfft2d_plan, Spfft2dPlan> &registry() {
  static sfft::capi::HandleRegistry<spfft2d_plan, Spfft2dPlan> r;
  return r;
}

// AUTO prefers the GPU whenever one is usable: the plan is reused, so the choice is made once.
sfft::Backend plan_backend(const sfft::Options &o, std::initializer_list<const void *> ptrs, const char *fn) {
  sfft::Backend b = sfft::choose_backend(o, ptrs, fn);
  if (o.backend == SFFT_BACKEND_AUTO && b == sfft::Backend::Cpu && sfft::cuda_device_count() > 0)
    b = sfft::Backend::Cuda;
  return b;
}

// Host view of a caller array that may live in device memory.
template <class T>
const T *host_view(const T *p, std::size_t n, std::vector<T> &copy) {
  if (p == nullptr || sfft::pointer_kind(p) != sfft::PointerKind::Device) return p;
#if SFFT_HAVE_CUDA
  copy.resize(n);
  sp::copy_to_host(copy.data(), p, n * sizeof(T));
  return copy.data();
#else
  (void)n;
  (void)copy;
  return p;
#endif
}

void make_plan(spfft2d_plan *plan, std::shared_ptr<const sp::SparseColumns> matrix, sfft::Backend backend, bool dbl,
               const sfft::Options &o, const char *fn) {
  sp::require_finite_output(*matrix, dbl, fn);
  auto p = std::make_unique<Spfft2dPlan>();
  p->matrix = std::move(matrix);
  p->backend = backend;
  if (backend == sfft::Backend::Cpu) {
    p->engine = dbl ? sp::make_cpu_engine<double>(p->matrix, o) : sp::make_cpu_engine<float>(p->matrix, o);
  } else {
#if SFFT_HAVE_CUDA
    p->engine = dbl ? sp::make_cuda_engine<double>(p->matrix, o) : sp::make_cuda_engine<float>(p->matrix, o);
#else
    sfft::fail(SFFT_ERROR_UNSUPPORTED, "this sfft was built without CUDA support");
#endif
  }
  *plan = registry().add(std::move(p));
}

void run(Spfft2dPlan &plan, uint64_t row0, uint64_t nrows, void *out) {
  require(out != nullptr, "out is NULL");
  const uint64_t rows = plan.matrix->rows;
  require(row0 <= rows && nrows <= rows - row0, "rows [", row0, ", ", row0, " + ", nrows,
          ") are outside the spectrum's ", rows, " rows");
  sfft::PointerKind kind = sfft::pointer_kind(out);
  if (plan.backend == sfft::Backend::Cpu)
    require(kind != sfft::PointerKind::Device, "out is CUDA device memory but the plan uses the CPU backend");
  sp::Sink sink;
  sink.out = out;
  sink.row0 = row0;
  if (nrows > 0) plan.engine->run(row0, row0 + nrows, sink, kind != sfft::PointerKind::Host);
}

}  // namespace

extern "C" {

SFFT_API sfft_status spfft2d_create(spfft2d_plan *plan, uint64_t rows, uint64_t cols, uint64_t nnz,
                                    const int64_t *row_idx, const int64_t *col_idx, const double *values,
                                    sfft_dtype out_dtype, const sfft_options *opts) {
  return sfft::capi::guarded("spfft2d_create", [&] {
    require(plan != nullptr, "plan is NULL");
    sfft::Options o = sfft::resolve_options(opts);
    bool dbl = sfft::require_complex_dtype(out_dtype, "out_dtype");
    sfft::Backend backend = plan_backend(o, {row_idx, col_idx, values}, "spfft2d_create");
    std::size_t n = sfft::to_size(nnz, "nnz");
    std::vector<int64_t> rows_copy, cols_copy;
    std::vector<double> values_copy;
    const int64_t *r = host_view(row_idx, n, rows_copy);
    const int64_t *c = host_view(col_idx, n, cols_copy);
    const double *v = host_view(values, n, values_copy);
    auto matrix =
        std::make_shared<const sp::SparseColumns>(sp::build_columns(rows, cols, nnz, r, c, v, "spfft2d_create"));
    make_plan(plan, std::move(matrix), backend, dbl, o, "spfft2d_create");
  });
}

SFFT_API sfft_status spfft2d_create_from_mtx(spfft2d_plan *plan, const char *path, int binary, sfft_dtype out_dtype,
                                             const sfft_options *opts) {
  return sfft::capi::guarded("spfft2d_create_from_mtx", [&] {
    require(plan != nullptr, "plan is NULL");
    require(path != nullptr, "path is NULL");
    sfft::Options o = sfft::resolve_options(opts);
    bool dbl = sfft::require_complex_dtype(out_dtype, "out_dtype");
    sfft::Backend backend = plan_backend(o, {}, "spfft2d_create_from_mtx");
    sp::MtxMatrix m = sp::read_mtx(path, binary != 0);
    auto matrix = std::make_shared<const sp::SparseColumns>(
        sp::build_columns(m.rows, m.cols, m.row.size(), m.row.data(), m.col.data(),
                          m.value.empty() ? nullptr : m.value.data(), "spfft2d_create_from_mtx"));
    make_plan(plan, std::move(matrix), backend, dbl, o, "spfft2d_create_from_mtx");
  });
}

SFFT_API sfft_status spfft2d_exec(spfft2d_plan plan, void *out) {
  return sfft::capi::guarded("spfft2d_exec", [&] {
    auto p = registry().acquire(plan, "plan");
    run(*p, 0, p->matrix->rows, out);
  });
}

SFFT_API sfft_status spfft2d_exec_rows(spfft2d_plan plan, uint64_t row0, uint64_t nrows, void *out) {
  return sfft::capi::guarded("spfft2d_exec_rows", [&] { run(*registry().acquire(plan, "plan"), row0, nrows, out); });
}

SFFT_API sfft_status spfft2d_exec_stream(spfft2d_plan plan, spfft2d_rows_callback callback, void *user) {
  return sfft::capi::guarded("spfft2d_exec_stream", [&] {
    auto p = registry().acquire(plan, "plan");
    require(callback != nullptr, "callback is NULL");
    sp::Sink sink;
    sink.callback = callback;
    sink.user = user;
    p->engine->run(0, p->matrix->rows, sink, false);
  });
}

SFFT_API sfft_status spfft2d_set_tile_rows(spfft2d_plan plan, uint64_t tile_rows) {
  return sfft::capi::guarded("spfft2d_set_tile_rows", [&] {
    auto p = registry().acquire(plan, "plan");
    p->engine->set_tile_rows(tile_rows);
  });
}

SFFT_API sfft_status spfft2d_set_method(spfft2d_plan plan, spfft2d_method method) {
  return sfft::capi::guarded("spfft2d_set_method", [&] {
    auto p = registry().acquire(plan, "plan");
    const int m = sfft::enum_value(method);  // any int may arrive from C
    require(m >= SPFFT2D_METHOD_AUTO && m <= SPFFT2D_METHOD_DENSE, "method = ", m,
            " is not an spfft2d_method (AUTO, DIRECT, DIRECT_ROWS or DENSE)");
    p->engine->set_method(method);
  });
}

SFFT_API sfft_status spfft2d_get_method(spfft2d_plan plan, spfft2d_method *method) {
  return sfft::capi::guarded("spfft2d_get_method", [&] {
    auto p = registry().acquire(plan, "plan");
    require(method != nullptr, "method is NULL");
    *method = p->engine->whole_method();
  });
}

SFFT_API sfft_status spfft2d_get_info(spfft2d_plan plan, uint64_t *rows, uint64_t *cols, uint64_t *nnz,
                                      uint64_t *tile_rows, uint64_t *workspace_bytes, sfft_backend *backend) {
  return sfft::capi::guarded("spfft2d_get_info", [&] {
    auto p = registry().acquire(plan, "plan");
    if (rows) *rows = p->matrix->rows;
    if (cols) *cols = p->matrix->cols;
    if (nnz) *nnz = p->matrix->nnz();
    if (tile_rows) *tile_rows = p->engine->tile_rows();
    if (workspace_bytes) *workspace_bytes = p->engine->workspace_bytes();
    if (backend) *backend = p->backend == sfft::Backend::Cuda ? SFFT_BACKEND_CUDA : SFFT_BACKEND_CPU;
  });
}

SFFT_API sfft_status spfft2d_destroy(spfft2d_plan plan) {
  return sfft::capi::guarded("spfft2d_destroy", [&] { registry().destroy(plan, "plan"); });
}

}  // extern "C"
