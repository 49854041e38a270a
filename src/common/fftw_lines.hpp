// SPDX-License-Identifier: Apache-2.0
// Strided 1-D DFTs (the non-contiguous axes of a multi-dimensional transform) run a block of adjacent lines at a
// time through a small contiguous buffer. FFTW_ESTIMATE plans such lines in place at their stride, which measured
// 1.2-4x slower than copying a block out, transforming it contiguously and copying it back (what FFTW_MEASURE
// plans pick, at 0.1-1.4 s of planning): docs/nufft3.md, "The CPU's strided FFT passes".
#pragma once

#include <omp.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstring>

#include "common/checked.hpp"
#include "common/error.hpp"
#include "common/fftw_bluestein.hpp"
#include "common/fftw_plan.hpp"
#include "common/host_buffer.hpp"
#include "common/process.hpp"

namespace sfft::fftw {

// In-place 1-D DFTs of n points `stride` apart over lines of one to three batch dimensions, the innermost of
// distance 1 (adjacent lines, no more of them than the stride), as Plan::lines describes them; a block's
// contiguous lines go through LineDfts (FFTW's plan, or Bluestein's route for a length with a prime factor above
// 7 where that measured faster). The buffers (threads x block x n elements, and Bluestein's work arrays) are
// allocated here, so execute allocates nothing. Either one execute at a time
// (its OpenMP threads take a buffer each), or up to `threads` execute_on at once from the caller's own threads,
// each with a buffer slot of its own.
template <class Real>
class BufferedLines {
 public:
  using Complex = std::complex<Real>;
  static constexpr int kMaxBatchRank = 3;

  BufferedLines() = default;
  BufferedLines(std::ptrdiff_t n, std::ptrdiff_t stride, int batch_rank, const std::ptrdiff_t *count,
                const std::ptrdiff_t *dist, int sign, int threads, FftRoute route = FftRoute::kFastest)
      : n_(n), stride_(stride), batch_rank_(batch_rank), threads_(std::max(1, threads)) {
    require(batch_rank >= 1 && batch_rank <= kMaxBatchRank && dist[batch_rank - 1] == 1 && n >= 1 &&
                stride >= count[batch_rank - 1],
            "buffered FFT lines need adjacent lines (innermost batch distance 1) at a stride of at least their count");
    for (int b = 0; b < batch_rank; ++b) {
      count_[b] = count[b];
      dist_[b] = dist[b];
    }
    // 16 lines a block (8 and 4 took 23 % and 31 % longer at 40^3, 32 no faster); fewer where 16 would not fit
    // kBufferBytes, but long lines still take a cache line's worth of adjacent lines while that fits kLongLineBytes
    // (every line read at the stride then uses the whole cache line it loads).
    const auto per_line = static_cast<std::ptrdiff_t>(sizeof(Complex)) * n;
    const std::ptrdiff_t fit = static_cast<std::ptrdiff_t>(kBufferBytes) / per_line;
    const std::ptrdiff_t long_fit = std::min(kCacheLineLines, static_cast<std::ptrdiff_t>(kLongLineBytes) / per_line);
    block_ = std::clamp<std::ptrdiff_t>(std::min(std::max(fit, long_fit), count_[batch_rank - 1]), 1, kBlockLines);
    // Each thread's buffer starts on a 64-byte boundary, as the planning buffer does (FFTW's SIMD codelets
    // need every executed array aligned like the planned one).
    slot_ = static_cast<std::ptrdiff_t>(aligned_slot<Complex>(static_cast<std::size_t>(block_ * n_)));
    buffer_.allocate(checked_mul(static_cast<std::size_t>(slot_), static_cast<std::size_t>(threads_), "FFT buffers"));
    dfts_ = LineDfts<Real>(n_, block_, sign, buffer_.get(), route);
    work_slot_ = static_cast<std::ptrdiff_t>(aligned_slot<Complex>(static_cast<std::size_t>(dfts_.work_size())));
    work_.allocate(checked_mul(static_cast<std::size_t>(work_slot_), static_cast<std::size_t>(threads_), "FFT work"));
    std::fill(buffer_.get(), buffer_.get() + static_cast<std::size_t>(slot_) * threads_, Complex(0));
  }

  explicit operator bool() const noexcept { return static_cast<bool>(dfts_); }
  std::size_t buffer_bytes() const noexcept {
    return (buffer_.size() + work_.size()) * sizeof(Complex) + dfts_.buffer_bytes();
  }
  // One line's DFT on one thread (ns) where the length's routes were timed (not 7-smooth), else 0.
  double line_ns() const noexcept { return dfts_.line_ns(); }

  // Every block, OpenMP threads (up to those it was made for) sharing them.
  void execute(Complex *data) const {
    const std::ptrdiff_t blocks = block_count();
    if (blocks == 0) return;
    const int threads = static_cast<int>(std::min<std::ptrdiff_t>(usable_threads(threads_), blocks));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int slot = omp_get_thread_num();
#pragma omp for schedule(static)
      for (std::ptrdiff_t blk = 0; blk < blocks; ++blk) transform_numbered_block(data, blk, slot);
    }
  }

  // Every block on the calling thread, through buffer slot `slot` (0 <= slot < the threads it was made for).
  void execute_on(Complex *data, int slot) const {
    for (std::ptrdiff_t blk = 0, blocks = block_count(); blk < blocks; ++blk) transform_numbered_block(data, blk, slot);
  }

 private:
  static constexpr std::size_t kBufferBytes = 256 * 1024, kLongLineBytes = 4 * 1024 * 1024;
  static constexpr std::ptrdiff_t kBlockLines = 16, kRowsAtOnce = 4;
  static constexpr std::ptrdiff_t kCacheLineLines = 64 / sizeof(Complex);

  std::ptrdiff_t blocks_per_run() const { return (count_[batch_rank_ - 1] + block_ - 1) / block_; }
  std::ptrdiff_t block_count() const {
    std::ptrdiff_t runs = 1;  // combinations of the outer batch indices
    for (int b = 0; b + 1 < batch_rank_; ++b) runs *= count_[b];
    return runs * blocks_per_run();
  }
  Complex *slot_buffer(int slot) const {
    return buffer_.get() + static_cast<std::size_t>(slot_) * static_cast<std::size_t>(slot);
  }
  Complex *slot_work(int slot) const {
    return work_.get() + static_cast<std::size_t>(work_slot_) * static_cast<std::size_t>(slot);
  }
  // Block blk of block_count(), in the order of the batch indices (the innermost fastest).
  void transform_numbered_block(Complex *data, std::ptrdiff_t blk, int slot) const {
    const std::ptrdiff_t per_run = blocks_per_run(), inner = count_[batch_rank_ - 1];
    std::ptrdiff_t run = blk / per_run, offset = 0;
    for (int b = batch_rank_ - 2; b >= 0; --b) {
      offset += (run % count_[b]) * dist_[b];
      run /= count_[b];
    }
    const std::ptrdiff_t first = (blk % per_run) * block_;
    transform_block(data + offset + first, std::min(block_, inner - first), slot);
  }

  // Lines at..at + lines - 1 (adjacent): gathered into buf as contiguous lines, transformed, scattered back (the
  // same transposition both ways, between lines `n` apart in buf and points `s` apart in the data). A short last
  // block transforms stale lines of the buffer too (finite values, discarded).
  void transform_block(Complex *at, std::ptrdiff_t lines, int slot) const {
    const std::ptrdiff_t n = n_, s = stride_;
    Complex *buf = slot_buffer(slot);
    transpose(at, s, buf, n, n, lines);
    dfts_.execute(buf, slot_work(slot));
    transpose(buf, n, at, s, lines, n);
  }

  // dst[j * dst_step + k] = src[k * src_step + j] for k < rows, j < cols. Four rows move together, so that every
  // write fills part of a cache line; values move whole, and single-precision ones two columns of two rows per two
  // 16-byte loads and stores (std::complex<float>'s assignment had moved each value as two separate floats: 8.9 %
  // of a clustered 3-D ntransf 16 single exec's samples on the development VM).
  static void transpose(const Complex *src, std::ptrdiff_t src_step, Complex *dst, std::ptrdiff_t dst_step,
                        std::ptrdiff_t rows, std::ptrdiff_t cols) {
    std::ptrdiff_t k = 0;
    for (; k + kRowsAtOnce <= rows; k += kRowsAtOnce) {
      const Complex *r0 = src + k * src_step, *r1 = r0 + src_step, *r2 = r1 + src_step, *r3 = r2 + src_step;
      std::ptrdiff_t j = 0;
#if defined(__SSE2__)
      if constexpr (sizeof(Complex) == 8) {
        for (; j + 2 <= cols; j += 2) {
          Complex *d0 = dst + j * dst_step + k, *d1 = d0 + dst_step;
          transpose_pair(r0 + j, r1 + j, d0, d1);
          transpose_pair(r2 + j, r3 + j, d0 + 2, d1 + 2);
        }
      }
#endif
      for (; j < cols; ++j) {
        Complex *d = dst + j * dst_step + k;
        move(d, r0 + j), move(d + 1, r1 + j), move(d + 2, r2 + j), move(d + 3, r3 + j);
      }
    }
    for (; k < rows; ++k)
      for (std::ptrdiff_t j = 0; j < cols; ++j) move(dst + j * dst_step + k, src + k * src_step + j);
  }

  // One value as a whole (a 64- or 128-bit move).
  static void move(Complex *dst, const Complex *src) { std::memcpy(static_cast<void *>(dst), src, sizeof(Complex)); }

#if defined(__SSE2__)
  // a[0], a[1] and b[0], b[1] (8-byte values) to d0 = (a[0], b[0]) and d1 = (a[1], b[1]); moves of bits only.
  static void transpose_pair(const Complex *a, const Complex *b, Complex *d0, Complex *d1) {
    const __m128d x = _mm_loadu_pd(reinterpret_cast<const double *>(a));
    const __m128d y = _mm_loadu_pd(reinterpret_cast<const double *>(b));
    _mm_storeu_pd(reinterpret_cast<double *>(d0), _mm_unpacklo_pd(x, y));
    _mm_storeu_pd(reinterpret_cast<double *>(d1), _mm_unpackhi_pd(x, y));
  }
#endif

  std::ptrdiff_t n_ = 0, stride_ = 0, block_ = 0, slot_ = 0, work_slot_ = 0;
  int batch_rank_ = 0, threads_ = 1;
  std::ptrdiff_t count_[kMaxBatchRank] = {}, dist_[kMaxBatchRank] = {};
  HostBuffer<Complex> buffer_, work_;
  LineDfts<Real> dfts_;  // block_ contiguous lines of n_, single-threaded
};

}  // namespace sfft::fftw
