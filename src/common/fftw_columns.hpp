// SPDX-License-Identifier: Apache-2.0
// In-place DFTs down every column of a row-major rows x width array (a 2-D transform's column pass).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>

#include "common/checked.hpp"
#include "common/fftw_lines.hpp"
#include "common/fftw_plan.hpp"
#include "common/host_buffer.hpp"
#include "common/process.hpp"

namespace sfft::fftw {

// Row counts 2^8 to 2^13 run as a four-step FFT, rows = P x Q (P = 2^floor(log2(rows) / 2)), a block of adjacent
// columns at a time: FFTW's Q-point DFTs of the block's P interleaved row sets into a buffer of the thread's
// (vectorised across the block's columns), the twiddles e^{-+2 pi i p k / rows} there, then FFTW's P-point DFTs
// back into the array in natural order. The block is ~256 KiB of buffer, so both steps stay in the core's cache.
// Against BufferedLines (transposed blocks of 16 columns; development VM, complex64, 2 threads) the column pass
// of 1024 x 513 took 0.53 ms against 0.75, 2048 x 1025 2.5 against 3.5, 8192 x 4097 138 against 168; other row
// counts measured slower (1536 = 32 x 48: 4.9 ms against 2.0; 1000, 3000, 12000 likewise), so they, and row
// counts outside that range, go through BufferedLines.
template <class Real>
class ColumnDfts {
 public:
  using Complex = std::complex<Real>;

  ColumnDfts() = default;
  ColumnDfts(std::ptrdiff_t rows, std::ptrdiff_t width, int sign, int threads)
      : width_(width), threads_(std::max(1, threads)) {
    if (!four_step(rows)) {
      const std::ptrdiff_t one = 1;
      lines_ = BufferedLines<Real>(rows, width, 1, &width, &one, sign, threads);
      return;
    }
    p_ = std::ptrdiff_t{1} << (ilog2(rows) / 2);
    q_ = rows / p_;
    const auto per_column = static_cast<std::ptrdiff_t>(sizeof(Complex)) * rows;
    block_ = std::min(width, std::max(kMinBlock, kBlockBytes / per_column / kBlockStep * kBlockStep));
    slot_ = static_cast<std::ptrdiff_t>(aligned_slot<Complex>(static_cast<std::size_t>(rows * block_)));
    buffer_.allocate(checked_mul(static_cast<std::size_t>(slot_), static_cast<std::size_t>(threads_), "FFT buffers"));
    twiddle_.allocate(static_cast<std::size_t>(rows));
    const double turn = (sign == FFTW_FORWARD ? -2.0 : 2.0) * 3.14159265358979323846 / static_cast<double>(rows);
    for (std::ptrdiff_t p = 0; p < p_; ++p)
      for (std::ptrdiff_t k = 0; k < q_; ++k) {
        const double angle = turn * static_cast<double>(p * k % rows);
        twiddle_[static_cast<std::size_t>(p * q_ + k)] =
            Complex(static_cast<Real>(std::cos(angle)), static_cast<Real>(std::sin(angle)));
      }
    HostBuffer<Complex> planning(1);
    aligned_ = Api<Real>::alignment_of(planning.get());
    sign_ = sign;
    plan_steps(0);
  }

  // Whether `rows` takes the four-step path.
  static bool four_step(std::ptrdiff_t rows) {
    return rows >= kMinRows && rows <= kMaxRows && (rows & (rows - 1)) == 0;
  }

  explicit operator bool() const noexcept { return p_ > 0 || static_cast<bool>(lines_); }
  // One column's DFT on one thread (ns) where its routes were timed (BufferedLines::line_ns), else 0.
  double line_ns() const noexcept { return lines_.line_ns(); }
  std::size_t buffer_bytes() const noexcept {
    return (buffer_.size() + twiddle_.size()) * sizeof(Complex) + lines_.buffer_bytes();
  }

  // Every column of data (rows x width, row stride width), OpenMP threads (up to those it was made for) taking
  // blocks.
  void execute(Complex *data) const {
    if (p_ == 0) return lines_.execute(data);
    const std::ptrdiff_t blocks = (width_ + block_ - 1) / block_;
    const int a = Api<Real>::alignment_of(data) == aligned_ ? 0 : 1;  // block offsets keep data's alignment
    if (!steps_[0][a].gather) plan_steps(a);
    const int threads = static_cast<int>(std::min<std::ptrdiff_t>(usable_threads(threads_), blocks));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      Complex *buf = buffer_.get() + static_cast<std::size_t>(slot_) * static_cast<std::size_t>(omp_get_thread_num());
#pragma omp for schedule(static)
      for (std::ptrdiff_t blk = 0; blk < blocks; ++blk) {
        const std::ptrdiff_t c0 = blk * block_, columns = std::min(block_, width_ - c0);
        const Steps &s = steps_[columns == block_ ? 0 : 1][a];
        s.gather.execute_dft(data + c0, buf);
        turn(buf, columns);
        s.scatter.execute_dft(buf, data + c0);
      }
    }
  }

 private:
  static constexpr std::ptrdiff_t kMinRows = 256, kMaxRows = 8192, kBlockBytes = 256 * 1024, kMinBlock = 16,
                                  kBlockStep = 8;
  // The two FFTW steps of a block of `columns`: gather (Q-point DFTs of rows p + P r, from the array into the
  // buffer's rows p + P k) and scatter (P-point DFTs of the buffer's rows p + P k over p, to the array's rows
  // k + Q p).
  struct Steps {
    Plan<Real> gather, scatter;
  };

  static int ilog2(std::ptrdiff_t v) {
    int l = 0;
    while ((std::ptrdiff_t{1} << (l + 1)) <= v) ++l;
    return l;
  }

  // The steps of full and tail blocks for arrays aligned like FFTW's (a = 0) or not (a = 1, FFTW_UNALIGNED). The
  // unaligned ones are planned by the first execute that needs them: each step is a new problem to FFTW's
  // planner (0.5-1 ms at FFTW_ESTIMATE), and arrays are nearly always aligned.
  void plan_steps(int a) const {
    HostBuffer<Complex> planning(1);
    const unsigned flags = FFTW_ESTIMATE | (a == 0 ? 0u : FFTW_UNALIGNED);
    const std::ptrdiff_t tail = width_ % block_;
    steps_[0][a] = block_steps(block_, planning.get(), sign_, flags);
    if (tail > 0) steps_[1][a] = block_steps(tail, planning.get(), sign_, flags);
  }

  Steps block_steps(std::ptrdiff_t columns, Complex *planning, int sign, unsigned flags) const {
    const std::ptrdiff_t W = width_, P = p_, Q = q_, c = columns;
    Steps s;
    const fftw_iodim64 gather_batch[2] = {{P, W, c}, {c, 1, 1}};
    s.gather = Plan<Real>::strided({Q, P * W, P * c}, 2, gather_batch, planning, buffer_.get(), sign, flags, 1);
    const fftw_iodim64 scatter_batch[2] = {{Q, P * c, W}, {c, 1, 1}};
    s.scatter = Plan<Real>::strided({P, c, Q * W}, 2, scatter_batch, buffer_.get(), planning, sign, flags, 1);
    return s;
  }

  // buf row p + P k (of `columns` values) times e^{-+2 pi i p k / rows}; the product written out (std::complex's
  // operator* checks for NaN and calls __mulsc3).
  void turn(Complex *buf, std::ptrdiff_t columns) const {
    for (std::ptrdiff_t k = 0; k < q_; ++k)
      for (std::ptrdiff_t p = 0; p < p_; ++p) {
        const Complex w = twiddle_[static_cast<std::size_t>(p * q_ + k)];
        Real *v = reinterpret_cast<Real *>(buf + (p + p_ * k) * columns);
        for (std::ptrdiff_t j = 0; j < columns; ++j) {
          const Real re = v[2 * j], im = v[2 * j + 1];
          v[2 * j] = re * w.real() - im * w.imag();
          v[2 * j + 1] = re * w.imag() + im * w.real();
        }
      }
  }

  std::ptrdiff_t width_ = 0, p_ = 0, q_ = 0, block_ = 0, slot_ = 0;
  int threads_ = 1, aligned_ = 0, sign_ = 0;
  HostBuffer<Complex> buffer_, twiddle_;
  mutable Steps steps_[2][2];  // [full block, tail block][aligned data, FFTW_UNALIGNED]
  BufferedLines<Real> lines_;  // row counts without the four-step path
};

}  // namespace sfft::fftw
