// SPDX-License-Identifier: Apache-2.0
// The spfft2d plan: backend resolution, host views of device COO arrays, the output checks, the engine.
#include <vector>

#include "common/checked.hpp"
#include "common/dtype.hpp"
#include "common/env.hpp"
#include "common/error.hpp"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d {
namespace {

// Host view of a caller array that may live in device memory (build_columns reads host memory; managed
// memory is readable as it is).
template <class T>
const T *host_view(const T *p, std::size_t n, std::vector<T> &copy) {
  if (p == nullptr || pointer_kind(p) != PointerKind::Device) return p;
  copy.resize(n);
  copy_to_host(copy.data(), p, n * sizeof(T));
  return copy.data();
}

}  // namespace

std::unique_ptr<Plan> Plan::from_coo(uint64_t rows, uint64_t cols, uint64_t nnz, const int64_t *row_idx,
                                     const int64_t *col_idx, const double *values, const sfft_dtype &out_dtype,
                                     const sfft_options *opts) {
  const char *fn = "spfft2d_create";
  const Options o = resolve_options(opts);
  const bool dbl = require_complex_dtype(out_dtype, "out_dtype");
  const Backend backend = resolve_backend(o, {row_idx, col_idx, values}, fn);
  const std::size_t n = to_size(nnz, "nnz");
  WallStages stages(env_flag("SFFT_SPFFT2D_STAGE_TIMES"));
  std::vector<int64_t> rows_copy, cols_copy;
  std::vector<double> values_copy;
  auto matrix = std::make_shared<const SparseColumns>(build_columns(rows, cols, nnz, host_view(row_idx, n, rows_copy),
                                                                    host_view(col_idx, n, cols_copy),
                                                                    host_view(values, n, values_copy), o.threads, fn));
  stages.mark("matrix");
  return std::unique_ptr<Plan>(new Plan(std::move(matrix), backend, dbl, o, fn, stages));
}

std::unique_ptr<Plan> Plan::from_mtx(const char *path, bool binary, const sfft_dtype &out_dtype,
                                     const sfft_options *opts) {
  const char *fn = "spfft2d_create_from_mtx";
  const Options o = resolve_options(opts);
  const bool dbl = require_complex_dtype(out_dtype, "out_dtype");
  const Backend backend = resolve_backend(o, {}, fn);
  WallStages stages(env_flag("SFFT_SPFFT2D_STAGE_TIMES"));
  MtxMatrix m = read_mtx(path, binary);
  stages.mark("file");
  auto matrix =
      std::make_shared<const SparseColumns>(build_columns(m.rows, m.cols, m.row.size(), m.row.data(), m.col.data(),
                                                          m.value.empty() ? nullptr : m.value.data(), o.threads, fn));
  stages.mark("matrix");
  return std::unique_ptr<Plan>(new Plan(std::move(matrix), backend, dbl, o, fn, stages));
}

Plan::Plan(std::shared_ptr<const SparseColumns> matrix, Backend backend, bool double_output, const Options &opts,
           const char *fn, WallStages &stages)
    : matrix_(std::move(matrix)), backend_(backend), device_(opts.device) {
  require_finite_output(*matrix_, double_output, fn);
  if (backend_ == Backend::Cpu)
    engine_ = double_output ? make_cpu_engine<double>(matrix_, opts) : make_cpu_engine<float>(matrix_, opts);
  else
    engine_ = double_output ? make_cuda_engine<double>(matrix_, opts) : make_cuda_engine<float>(matrix_, opts);
  stages.mark("engine");
  stages.report("sfft spfft2d create:");
}

void Plan::run(uint64_t row0, uint64_t nrows, void *out) {
  require(out != nullptr, "out is NULL");
  const uint64_t rows = matrix_->rows;
  require(row0 <= rows && nrows <= rows - row0, "rows [", row0, ", ", row0, " + ", nrows,
          ") are outside the spectrum's ", rows, " rows");
  const PointerKind kind = pointer_kind(out);
  if (backend_ == Backend::Cpu)
    require(kind != PointerKind::Device, "out is CUDA device memory but the plan uses the CPU backend");
  else
    require_arrays_on_device(device_, {{out, "out"}});
  Sink sink;
  sink.out = out;
  sink.row0 = row0;
  if (nrows > 0) engine_->run(row0, row0 + nrows, sink, kind != PointerKind::Host);
}

void Plan::exec_stream(spfft2d_rows_callback callback, void *user) {
  require(callback != nullptr, "callback is NULL");
  Sink sink;
  sink.callback = callback;
  sink.user = user;
  engine_->run(0, matrix_->rows, sink, false);
}

void Plan::set_method(int method) {
  require(method >= SPFFT2D_METHOD_AUTO && method <= SPFFT2D_METHOD_PRUNED, "method = ", method,
          " is not an spfft2d_method (AUTO, DIRECT, DIRECT_ROWS, DENSE or PRUNED)");
  engine_->set_method(static_cast<spfft2d_method>(method));
}

Plan::Info Plan::info() const {
  return Info{matrix_->rows,
              matrix_->cols,
              matrix_->nnz(),
              engine_->tile_rows(),
              engine_->workspace_bytes(),
              backend_ == Backend::Cuda ? SFFT_BACKEND_CUDA : SFFT_BACKEND_CPU};
}

}  // namespace sfft::spfft2d
