// SPDX-License-Identifier: Apache-2.0
// The CUDA engine: construction (the matrix, twiddle tables and Bluestein tables on the device), plans and
// workspaces per tile height and method, AUTO's choice, the DIRECT tiles into device memory (column sums,
// row FFTs, fold) and the whole-spectrum methods in the output layout itself (DIRECT_ROWS: row sums then an
// in-place strided cuFFT C2C down the columns; DENSE: every nonzero scattered into a real array of the plan, then
// cuFFT's 2-D R2C out of place into the output; a 1-row or 1-column matrix scatters into the output's padded rows
// and transforms them in place). AUTO computes a whole spectrum in device memory as one DIRECT tile when the cost
// model prefers DIRECT.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/checked.hpp"
#include "common/cuda_stage_timer.cuh"
#include "common/env.hpp"
#include "common/smooth.hpp"
#include "common/wall_stages.hpp"
#include "spfft2d/cuda/engine.cuh"

namespace sfft::spfft2d {
namespace gpu {

template <class Real>
CudaEngine<Real>::CudaEngine(std::shared_ptr<const SparseColumns> m, const Options &opts)
    : m_(std::move(m)), device_(opts.device), stream_(cuda::as_stream(opts.stream)), layout_(m_->rows, m_->cols) {
  DeviceScope scope(device_);
  WallStages stages(env_flag("SFFT_SPFFT2D_STAGE_TIMES"));
  // Offsets of every column (empty ones too), so the column-sum threads cover [0, cols) without a map.
  std::vector<int64_t> col_ptr(checked_add(m_->cols, 1, "cols + 1"), 0);
  for (std::size_t j = 0; j < m_->col_id.size(); ++j)
    col_ptr[static_cast<std::size_t>(m_->col_id[j]) + 1] = m_->col_start[j + 1] - m_->col_start[j];
  for (std::size_t c = 0; c < m_->cols; ++c) col_ptr[c + 1] += col_ptr[c];
  col_ptr_ = upload(col_ptr.data(), col_ptr.size());
  {
    const TwiddleMemo<Real> row_twiddle(m_->rows, 2 * m_->nnz());
    std::vector<ColumnEntry<Real>> entries(m_->nnz());
    for (std::size_t e = 0; e < entries.size(); ++e) {
      const auto r = static_cast<uint64_t>(m_->row[e]);
      entries[e] = {device_value(row_twiddle(r)), device_value(row_twiddle(r * kRunRows % m_->rows)), m_->row[e],
                    m_->binary() ? Real(1) : static_cast<Real>(m_->weight[e])};
    }
    entries_ = upload(entries.data(), entries.size());
  }
  {
    heavy_limit_ = static_cast<int64_t>(heavy_column_limit(*m_));
    std::vector<int32_t> heavy;
    for (std::size_t j = 0; j < m_->col_id.size(); ++j)
      if (m_->col_start[j + 1] - m_->col_start[j] > heavy_limit_) heavy.push_back(m_->col_id[j]);
    heavy_col_ = upload(heavy.data(), heavy.size());
  }
  row_id_ = upload(m_->row_id.data(), m_->row_id.size());
  row_start_ = upload(m_->row_start.data(), m_->row_start.size());
  row_col_ = upload(m_->row_col.data(), m_->row_col.size());
  if (!m_->binary()) {
    std::vector<Real> w(m_->row_weight.begin(), m_->row_weight.end());
    row_weight_ = upload(w.data(), w.size());
  }
  // The column sums' twiddles: two tables of about sqrt(rows) entries in shared memory when they fit in
  // kSharedTableBytes, else the global tables.
  unsigned bits = 0;
  while ((uint64_t{1} << (2 * bits)) < m_->rows) ++bits;
  const uint64_t lo_n = uint64_t{1} << bits, hi_n = (m_->rows + lo_n - 1) >> bits;
  if ((lo_n + hi_n) * sizeof(C) <= kSharedTableBytes) {
    std::vector<C> split(lo_n + hi_n);
    for (uint64_t j = 0; j < lo_n; ++j) split[j] = device_twiddle<Real>(j, m_->rows);
    for (uint64_t q = 0; q < hi_n; ++q) split[lo_n + q] = device_twiddle<Real>(q << bits, m_->rows);
    tw_split_ = upload(split.data(), split.size());
    tw_split_lo_ = static_cast<uint32_t>(lo_n);
    tw_split_bits_ = bits;
  } else {
    auto tw = make_twiddles<Real>(m_->rows);
    tw_lo_ = upload(reinterpret_cast<const C *>(tw.lo.data()), tw.lo.size());
    tw_hi_ = upload(reinterpret_cast<const C *>(tw.hi.data()), tw.hi.size());
  }
  auto tw_cols = make_twiddles<Real>(m_->cols);
  tw_cols_lo_ = upload(reinterpret_cast<const C *>(tw_cols.lo.data()), tw_cols.lo.size());
  tw_cols_hi_ = upload(reinterpret_cast<const C *>(tw_cols.hi.data()), tw_cols.hi.size());
  row_len_ = m_->cols;
  if (cuda_rows_take_bluestein(m_->cols)) {
    Bluestein<Real> b = make_bluestein<Real>(m_->cols, stream_);
    chirp_ = std::move(b.chirp);
    kernel_ = std::move(b.kernel);
    row_len_ = b.length;
  }
  stages.mark("tables");
  stages.report("sfft spfft2d CUDA engine:");
  copy_stream_ = std::make_unique<Stream>();
  for (int i = 0; i < 2; ++i) {
    folded_[i] = std::make_unique<Event>();
    copied_[i] = std::make_unique<Event>();
  }
  configure(0, SPFFT2D_METHOD_AUTO);
}

template <class Real>
CudaEngine<Real>::~CudaEngine() {
  // Pending asynchronous work may still read the workspace.
  if (stream_ready_) (void)cudaStreamSynchronize(stream_);
  if (copy_stream_) (void)cudaStreamSynchronize(copy_stream_->get());
}

template <class Real>
void CudaEngine<Real>::reconfigure(uint64_t tile, spfft2d_method method) {
  const uint64_t previous_tile = requested_tile_;
  const spfft2d_method previous_method = method_;
  try {
    configure(tile, method);
  } catch (...) {
    // Keep the plan usable: restore the previous workspace if the new one cannot be had.
    try {
      configure(previous_tile, previous_method);
    } catch (...) {
    }
    throw;
  }
}

template <class Real>
void CudaEngine<Real>::configure(uint64_t tile, spfft2d_method method) {
  DeviceScope scope(device_);
  WallStages stages(env_flag("SFFT_SPFFT2D_STAGE_TIMES"));
  SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  const std::size_t cb = sizeof(C), budget = auto_budget(layout_, cb);
  // Release the old workspace first: the new one must fit beside nothing else of this plan.
  release_workspace();
  TilePass tiled = make_pass(tile, budget, 4 * layout_.width * cb, false);
  stages.mark("tile_pass");
  const std::size_t slot = checked_mul(2 * tiled.layout.tile, layout_.width, "staging size");
  for (int s = 0; s < 2; ++s) staging_[s].allocate(slot);
  pinned_count_ = slot;
  stages.mark("staging");
  // AUTO's whole spectrum in device memory may take DIRECT as one tile: cost it that way. cuFFT's speed at row
  // lengths with a prime factor from 5 to 97 varies from length to length (H100, from the one-tile DIRECT's times:
  // 12000 points about 2.9 times the model's time for a 2^a 3^b length, 3000 and 18000 about 0.8 and 0.9, 12328 and
  // 15010 5-6 times), so AUTO times the rows' transform there (a cuFFT plan and two transforms of 2^22 points).
  Layout one = layout_;
  one.tile = layout_.half + 1;
  MeasuredFfts measured;
  if (method == SPFFT2D_METHOD_AUTO && !bluestein() && !smooth(layout_.cols, 3)) {
    measured.row_line = time_row_transform();
    if (env_flag("SFFT_SPFFT2D_STAGE_TIMES"))
      std::fprintf(stderr, "sfft spfft2d AUTO: cuFFT's C2C rows of %llu points %.1f ns a row\n",
                   static_cast<unsigned long long>(row_len_), measured.row_line);
  }
  stages.mark("timed_rows");
  spfft2d_method whole_auto =
      estimate_costs(*m_, one, CostBackend::Cuda, cb, pruned_shape(*m_, CostBackend::Cuda, measured),
                     memory_time_scale(cuda::memory_bandwidth(device_)))
          .cheapest();
  stages.mark("model");
  if (is_whole_method(method)) {
    workspace_.allocate(checked_mul(layout_.rows, layout_.width, "workspace size"));
    plan_whole(method);
  } else if (method == SPFFT2D_METHOD_AUTO) {
    whole_auto = plan_auto_whole(whole_auto, tiled.layout.tile);
  }
  tiled_ = std::move(tiled);
  requested_tile_ = tile;
  method_ = method;
  whole_auto_ = whole_auto;
  stream_ready_ = true;
  stages.mark("whole_plan");
  stages.report("sfft spfft2d configure (CUDA):");
}

template <class Real>
std::size_t CudaEngine<Real>::workspace_bytes() const {
  return tiled_.z.bytes() + tiled_.work + whole_pass_.z.bytes() + whole_pass_.padded.bytes() + whole_pass_.work +
         staging_[0].size() * sizeof(C) * 2 + col_ptr_.bytes() + entries_.bytes() + heavy_col_.bytes() +
         tw_lo_.bytes() + tw_hi_.bytes() + row_id_.bytes() + row_start_.bytes() + row_col_.bytes() +
         row_weight_.bytes() + tw_cols_lo_.bytes() + tw_cols_hi_.bytes() + tw_split_.bytes() + chirp_.bytes() +
         kernel_.bytes() + workspace_.bytes() + dense_real_.bytes() + dense_at_.bytes() + whole_work_ +
         pruned_.bytes() - pruned_.work;
}

template <class Real>
void CudaEngine<Real>::run(uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) {
  require(static_cast<bool>(tiled_.fft), "the plan has no workspace (a previous spfft2d_set_tile_rows failed)");
  DeviceScope scope(device_);
  const bool whole_native = out_on_device && sink.callback == nullptr && lo == 0 && hi == layout_.rows;
  const spfft2d_method method = method_of_call(method_, whole_auto_, whole_native);
  if (is_whole_method(method)) {
    C *b = whole_native ? static_cast<C *>(sink.out) : workspace_.get();
    compute_whole(method, b);
    if (!whole_native) deliver_whole(b, lo, hi, sink, out_on_device);
    return;
  }
  if (out_on_device && sink.callback == nullptr) {
    TilePass &pass = whole_native && whole_pass_.fft ? whole_pass_ : tiled_;
    C *out = static_cast<C *>(sink.out);
    pass.layout.for_each_tile(lo, hi, [&](uint64_t k) {
      compute_tile(pass, k);
      fold(pass, pass.layout.direct_block(k, lo, hi), k, false, out, sink.row0);
      fold(pass, pass.layout.mirror_block(k, lo, hi), k, true, out, sink.row0);
    });
    return;
  }
  try {
    stream_to_host(lo, hi, sink);
  } catch (...) {
    // Leave no copy in flight into the pinned buffers; the plan stays usable.
    (void)cudaStreamSynchronize(stream_);
    (void)cudaStreamSynchronize(copy_stream_->get());
    (void)cudaGetLastError();
    throw;
  }
}

template <class Real>
typename CudaEngine<Real>::TilePass CudaEngine<Real>::make_pass(uint64_t tile, std::size_t budget,
                                                                std::size_t extra_row_bytes, bool padded_input) {
  TilePass p;
  p.layout = layout_;
  const std::size_t buffers = padded_input && bluestein() ? 2 : 1;
  const std::size_t row_bytes = checked_mul(buffers * row_len_, sizeof(C), "row size") + extra_row_bytes;
  p.layout.tile = tile == 0 ? auto_tile(layout_, row_bytes, budget) : std::min(tile, layout_.half + 1);
  for (int attempt = 0;; ++attempt) {
    long long n = static_cast<long long>(row_len_);
    p.fft.make_many(1, &n, nullptr, 1, n, nullptr, 1, n, kC2C, static_cast<long long>(p.layout.tile));
    p.work = work_size(p.fft);
    const std::size_t total = p.layout.tile * row_bytes + p.work;
    // cuFFT's work area counts against the budget.
    if (tile != 0 || total <= budget + budget / 2 || p.layout.tile == 1 || attempt == 3) break;
    p.layout.tile =
        std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<long double>(p.layout.tile) * budget / total));
  }
  p.fft.set_stream(stream_);
  p.z.allocate(checked_mul(p.layout.tile, row_len_, "tile size"));
  if (buffers == 2) {
    p.padded.allocate(p.z.size());
    SFFT_CUDA_CHECK(cudaMemsetAsync(p.padded.get(), 0, p.padded.bytes(), stream_));
  }
  return p;
}

// cuFFT plans of a whole-spectrum method on a rows x width buffer: DENSE is cuFFT's own 2-D R2C from a real
// array of the plan (a 1-row or 1-column matrix: in-place R2C along padded rows, then the column pass);
// DIRECT_ROWS a strided C2C down the columns (advanced layout: non-NULL embeds so cuFFT honours the
// stride).
template <class Real>
void CudaEngine<Real>::plan_whole(spfft2d_method method) {
  long long R = static_cast<long long>(layout_.rows), Cn = static_cast<long long>(layout_.cols);
  long long W = static_cast<long long>(layout_.width);
  const cufftType r2c = std::is_same_v<Real, float> ? CUFFT_R2C : CUFFT_D2Z;
  const bool two_d = method == SPFFT2D_METHOD_DENSE && R >= 2 && Cn >= 2;
  if (method == SPFFT2D_METHOD_PRUNED) {
    pruned_ = make_pruned<Real>(*m_, stream_);
    whole_work_ += pruned_.work;
    if (pruned_.writes_spectrum()) return;  // direct column sums or the four-step pass: no column FFT
  }
  if (method == SPFFT2D_METHOD_DENSE) {
    long long n[2] = {R, Cn}, in_embed[2] = {R, 2 * W}, out_embed[2] = {R, W};
    if (two_d) {
      dense_real_.allocate(checked_mul(layout_.rows, layout_.cols, "DENSE input size"));
      in_embed[1] = Cn;
      dense_r2c_.make_many(2, n, in_embed, 1, R * Cn, out_embed, 1, R * W, r2c, 1);
    } else
      dense_r2c_.make_many(1, &Cn, &in_embed[1], 1, 2 * W, &out_embed[1], 1, W, r2c, R);
    dense_r2c_.set_stream(stream_);
    whole_work_ += work_size(dense_r2c_);
    // Each nonzero's index in the real rows (rows of cols reals, or the padded rows of the output), row order.
    const uint64_t pitch = two_d ? layout_.cols : 2 * layout_.width;
    std::vector<uint64_t> at(m_->nnz());
    for (std::size_t j = 0; j < m_->row_id.size(); ++j)
      for (int64_t e = m_->row_start[j]; e < m_->row_start[j + 1]; ++e)
        at[static_cast<std::size_t>(e)] = static_cast<uint64_t>(m_->row_id[j]) * pitch +
                                          static_cast<uint64_t>(m_->row_col[static_cast<std::size_t>(e)]);
    dense_at_ = upload(at.data(), at.size());
  }
  if (!two_d) {
    down_columns_.make_many(1, &R, &R, W, 1, &R, W, 1, kC2C, W);
    down_columns_.set_stream(stream_);
    whole_work_ += work_size(down_columns_);
  }
}

// AUTO takes a whole-spectrum method, or DIRECT as one tile, only where the spectrum and that workspace
// fit in half the free device memory and cuFFT can plan it (its 2-D plans refuse some huge shapes);
// otherwise the tiled DIRECT method.
template <class Real>
spfft2d_method CudaEngine<Real>::plan_auto_whole(spfft2d_method whole, uint64_t tiled_rows) {
  std::size_t free = 0, total = 0;
  SFFT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const long double spectrum = static_cast<long double>(layout_.rows) * layout_.width * sizeof(C);
  if (spectrum > free / 2) return SPFFT2D_METHOD_DIRECT;
  try {
    if (whole != SPFFT2D_METHOD_DIRECT) {
      plan_whole(whole);
      return whole;
    }
    // The buffer of one tile and as much again for cuFFT's work area.
    const long double one_tile = (bluestein() ? 3.0L : 2.0L) * (layout_.half + 1) * row_len_ * sizeof(C);
    if (tiled_rows <= layout_.half && spectrum + one_tile <= free / 2)
      whole_pass_ = make_pass(layout_.half + 1, 0, 0, true);
  } catch (const Error &) {
    dense_r2c_.reset();
    down_columns_.reset();
    dense_real_.release();
    dense_at_.release();
    pruned_ = PrunedPass<Real>{};
    whole_work_ = 0;
    whole_pass_ = TilePass{};
  }
  return SPFFT2D_METHOD_DIRECT;
}

// One transform of enough rows to fill the GPU (at most the half spectrum's, as AUTO's one tile has) to warm up,
// one timed; zeroed rows (cuFFT reads them). Where the buffer or the plan cannot be had, 0: the model's estimate.
template <class Real>
double CudaEngine<Real>::time_row_transform() {
  constexpr uint64_t kTimedPoints = uint64_t{1} << 22;
  const uint64_t rows = std::clamp<uint64_t>(kTimedPoints / row_len_, 1, layout_.half + 1);
  try {
    DeviceBuffer<C> z(checked_mul(rows, row_len_, "timed rows"));
    CufftPlan fft;
    long long n = static_cast<long long>(row_len_);
    fft.make_many(1, &n, nullptr, 1, n, nullptr, 1, n, kC2C, static_cast<long long>(rows));
    fft.set_stream(stream_);
    SFFT_CUDA_CHECK(cudaMemsetAsync(z.get(), 0, z.bytes(), stream_));
    auto *data = reinterpret_cast<CufftCplx<Real> *>(z.get());
    exec_c2c(fft, data, data, CUFFT_FORWARD);
    cuda::StageTimer timer;
    timer.begin(stream_);
    exec_c2c(fft, data, data, CUFFT_FORWARD);
    timer.mark("rows", stream_);
    return timer.total_ms() * 1e6 / static_cast<double>(rows);
  } catch (const Error &) {
    return 0;
  }
}

template <class Real>
std::size_t CudaEngine<Real>::work_size(const CufftPlan &plan) {
  std::size_t work = 0;
  SFFT_CUFFT_CHECK(cufftGetSize(plan.get(), &work));
  return work;
}

template <class Real>
void CudaEngine<Real>::compute_tile(TilePass &p, uint64_t k) {
  const uint64_t tile = p.layout.tile, s0 = k * tile;
  const C *chirp = bluestein() ? chirp_.get() : nullptr;
  const bool padded = p.padded.size() != 0;
  C *sums = padded ? p.padded.get() : p.z.get();
  ColumnTwiddles<Real> tw;
  if (tw_split_.size() != 0) {
    tw.split = tw_split_.get();
    tw.split_lo = tw_split_lo_;
    tw.split_hi = static_cast<uint32_t>(tw_split_.size()) - tw_split_lo_;
    tw.bits = tw_split_bits_;
  } else {
    tw.lo = tw_lo_.get();
    tw.hi = tw_hi_.size() ? tw_hi_.get() : nullptr;
  }
  const HeavyColumns heavy{heavy_col_.get(), heavy_col_.size(), heavy_limit_};
  launch_direct_tile<Real>(col_ptr_.get(), entries_.get(), tw, heavy, layout_.rows, layout_.cols, row_len_,
                           padded ? layout_.cols : row_len_, chirp, s0, tile, sums, stream_);
  auto *z = reinterpret_cast<CufftCplx<Real> *>(p.z.get());
  exec_c2c(p.fft, reinterpret_cast<CufftCplx<Real> *>(sums), z, CUFFT_FORWARD);
  if (chirp == nullptr) return;
  launch_multiply_rows<Real>(p.z.get(), kernel_.get(), row_len_, tile, stream_);
  exec_c2c(p.fft, z, z, CUFFT_INVERSE);
}

template <class Real>
void CudaEngine<Real>::compute_whole(spfft2d_method method, C *b) {
  const uint64_t R = layout_.rows, W = layout_.width;
  if (method == SPFFT2D_METHOD_PRUNED) {
    run_pruned<Real>(pruned_, R, layout_.cols, b, stream_);
  } else if (method == SPFFT2D_METHOD_DIRECT_ROWS) {
    if (m_->has_empty_rows()) SFFT_CUDA_CHECK(cudaMemsetAsync(b, 0, R * W * sizeof(C), stream_));
    launch_row_sums<Real>(row_id_.get(), row_start_.get(), row_col_.get(), m_->binary() ? nullptr : row_weight_.get(),
                          m_->row_id.size(), tw_cols_lo_.get(), tw_cols_hi_.size() ? tw_cols_hi_.get() : nullptr,
                          layout_.cols, W, b, stream_);
  } else {
    // The 2-D plan reads dense_real_ (rows of cols reals), the others the padded rows of b in place.
    const bool out_of_place = dense_real_.size() != 0;
    Real *real_rows = out_of_place ? dense_real_.get() : reinterpret_cast<Real *>(b);
    const uint64_t pitch = out_of_place ? layout_.cols : 2 * W;
    SFFT_CUDA_CHECK(cudaMemsetAsync(real_rows, 0, R * pitch * sizeof(Real), stream_));
    launch_scatter_at<Real>(dense_at_.get(), m_->binary() ? nullptr : row_weight_.get(), dense_at_.size(), real_rows,
                            stream_);
    if constexpr (std::is_same_v<Real, float>)
      SFFT_CUFFT_CHECK(cufftExecR2C(dense_r2c_.get(), real_rows, reinterpret_cast<cufftComplex *>(b)));
    else
      SFFT_CUFFT_CHECK(cufftExecD2Z(dense_r2c_.get(), real_rows, reinterpret_cast<cufftDoubleComplex *>(b)));
  }
  auto *y = reinterpret_cast<CufftCplx<Real> *>(b);
  if (down_columns_) exec_c2c(down_columns_, y, y, CUFFT_FORWARD);
}

template <class Real>
void CudaEngine<Real>::fold(const TilePass &p, Layout::Block blk, uint64_t k, bool mirrored, C *base,
                            uint64_t base_row) {
  if (blk.count == 0) return;
  C *out = base + (blk.first - base_row) * layout_.width;
  launch_fold<Real>(p.z.get(), row_len_, layout_.cols, layout_.width, layout_.rows, k * p.layout.tile, blk.first,
                    blk.count, mirrored, chirp_.size() != 0 ? chirp_.get() : nullptr, out, stream_);
}

template <class Real>
void CudaEngine<Real>::release_workspace() {
  tiled_ = TilePass{};
  whole_pass_ = TilePass{};
  for (int s = 0; s < 2; ++s) {
    staging_[s].release();
    pinned_[s].release();
  }
  pruned_ = PrunedPass<Real>{};
  dense_r2c_.reset();
  down_columns_.reset();
  dense_real_.release();
  dense_at_.release();
  workspace_.release();
  whole_work_ = 0;
}

template class CudaEngine<float>;
template class CudaEngine<double>;

}  // namespace gpu

template <class Real>
std::unique_ptr<Engine> make_cuda_engine(std::shared_ptr<const SparseColumns> matrix, const Options &opts) {
  return std::make_unique<gpu::CudaEngine<Real>>(std::move(matrix), opts);
}
template std::unique_ptr<Engine> make_cuda_engine<float>(std::shared_ptr<const SparseColumns>, const Options &);
template std::unique_ptr<Engine> make_cuda_engine<double>(std::shared_ptr<const SparseColumns>, const Options &);

void copy_to_host(void *dst, const void *src, std::size_t bytes) {
  if (bytes > 0) SFFT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
}

}  // namespace sfft::spfft2d
