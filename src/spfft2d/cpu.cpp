// CPU backend: OpenMP direct sparse DFT along the rows, threaded FFTW along the columns.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "common/checked.hpp"
#include "common/fftw_plan.hpp"
#include "common/host_buffer.hpp"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d {
namespace {

// Output rows per inner block of the direct sum: phases advance incrementally inside a block.
constexpr uint64_t kRowBlock = 16;

template <class Real>
class CpuEngine final : public Engine {
 public:
  using Complex = std::complex<Real>;

  CpuEngine(std::shared_ptr<const SparseColumns> m, const Options &opts)
      : m_(std::move(m)), threads_(opts.threads), layout_(m_->rows, m_->cols), tw_(make_twiddles<Real>(m_->rows)) {
    if (!m_->binary()) {
      weight_.allocate(m_->nnz());
      for (std::size_t k = 0; k < m_->nnz(); ++k) weight_[k] = static_cast<Real>(m_->weight[k]);
    }
    set_tile_rows(0);
  }

  void set_tile_rows(uint64_t tile) override {
    Layout next = layout_;
    std::size_t row_bytes = (layout_.cols + layout_.width) * sizeof(Complex);
    next.tile = tile == 0 ? auto_tile(layout_, row_bytes, auto_budget(layout_, sizeof(Complex)))
                          : std::min(tile, layout_.half + 1);
    HostBuffer<Complex> z(checked_mul(next.tile, layout_.cols, "tile size"));
    HostBuffer<Complex> staging(checked_mul(next.tile, layout_.width, "staging size"));
    int n = static_cast<int>(layout_.cols);
    auto plan = fftw::Plan<Real>::many_dft(1, &n, static_cast<int>(next.tile), z.get(), nullptr, 1, n, z.get(),
                                           nullptr, 1, n, FFTW_FORWARD, FFTW_ESTIMATE, threads_);
    // Commit only after every allocation succeeded: a failed re-plan leaves the plan as it was.
    layout_ = next;
    z_ = std::move(z);
    staging_ = std::move(staging);
    fft_ = std::move(plan);
  }

  uint64_t tile_rows() const override { return layout_.tile; }
  std::size_t workspace_bytes() const override {
    return (z_.size() + staging_.size()) * sizeof(Complex) + (tw_.lo.size() + tw_.hi.size()) * sizeof(Complex);
  }

  void run(uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) override {
    require(!out_on_device, "out is CUDA device memory but this plan uses the CPU backend");
    layout_.for_each_tile(lo, hi, [&](uint64_t k) {
      compute_tile(k);
      deliver(layout_.direct_block(k, lo, hi), k, false, sink);
      deliver(layout_.mirror_block(k, lo, hi), k, true, sink);
    });
  }

 private:
  Complex twiddle(uint64_t m) const {
    if (tw_.hi.empty()) return tw_.lo[m];
    return tw_.hi[m >> TwiddleTables<Real>::kSplitBits] * tw_.lo[m & ((1u << TwiddleTables<Real>::kSplitBits) - 1)];
  }

  // Z[t][c] for source rows s0 + t, t < tile, then the in-place column-axis FFT.
  void compute_tile(uint64_t k) {
    const uint64_t s0 = k * layout_.tile, tile = layout_.tile, R = layout_.rows, C = layout_.cols;
    Complex *z = z_.get();
    if (m_->has_empty_columns()) std::memset(static_cast<void *>(z), 0, z_.size() * sizeof(Complex));
    const int64_t ncols = static_cast<int64_t>(m_->col_id.size());
    const int64_t nblocks = static_cast<int64_t>((tile + kRowBlock - 1) / kRowBlock);
#pragma omp parallel for collapse(2) schedule(dynamic, 16) num_threads(threads_)
    for (int64_t j = 0; j < ncols; ++j) {
      for (int64_t b = 0; b < nblocks; ++b) {
        const uint64_t t0 = static_cast<uint64_t>(b) * kRowBlock, count = std::min(kRowBlock, tile - t0);
        Complex acc[kRowBlock] = {};
        for (int64_t e = m_->col_start[j]; e < m_->col_start[j + 1]; ++e) {
          const uint64_t r = static_cast<uint64_t>(m_->row[e]);
          uint64_t phase = r * (s0 + t0) % R;
          const Real w = weight_.size() ? weight_[e] : Real(1);
          for (uint64_t i = 0; i < count; ++i) {
            acc[i] += w * twiddle(phase);
            phase += r;
            if (phase >= R) phase -= R;
          }
        }
        const uint64_t c = static_cast<uint64_t>(m_->col_id[j]);
        for (uint64_t i = 0; i < count; ++i) z[(t0 + i) * C + c] = acc[i];
      }
    }
    fft_.execute_dft(z, z);
  }

  // Writes one block of output rows (direct, or mirrored from the tile) to the sink.
  void deliver(Layout::Block blk, uint64_t k, bool mirrored, const Sink &sink) {
    if (blk.count == 0) return;
    const uint64_t s0 = k * layout_.tile, R = layout_.rows, C = layout_.cols, W = layout_.width;
    Complex *dst = sink.callback ? staging_.get() : static_cast<Complex *>(sink.out) + (blk.first - sink.row0) * W;
    const Complex *z = z_.get();
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t i = 0; i < static_cast<int64_t>(blk.count); ++i) {
      const uint64_t u = blk.first + static_cast<uint64_t>(i);
      Complex *out = dst + static_cast<uint64_t>(i) * W;
      if (!mirrored) {
        std::memcpy(static_cast<void *>(out), z + (u - s0) * C, W * sizeof(Complex));
      } else {
        const Complex *src = z + (R - u - s0) * C;
        out[0] = std::conj(src[0]);
        for (uint64_t v = 1; v < W; ++v) out[v] = std::conj(src[C - v]);
      }
    }
    if (sink.callback) sink.callback(blk.first, blk.count, dst, sink.user);
  }

  std::shared_ptr<const SparseColumns> m_;
  int threads_;
  Layout layout_;
  TwiddleTables<Real> tw_;
  HostBuffer<Real> weight_;
  HostBuffer<Complex> z_, staging_;
  fftw::Plan<Real> fft_;
};

}  // namespace

template <class Real>
std::unique_ptr<Engine> make_cpu_engine(std::shared_ptr<const SparseColumns> matrix, const Options &opts) {
  return std::make_unique<CpuEngine<Real>>(std::move(matrix), opts);
}
template std::unique_ptr<Engine> make_cpu_engine<float>(std::shared_ptr<const SparseColumns>, const Options &);
template std::unique_ptr<Engine> make_cpu_engine<double>(std::shared_ptr<const SparseColumns>, const Options &);

}  // namespace sfft::spfft2d
