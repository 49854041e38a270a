// SPDX-License-Identifier: Apache-2.0
// 1-D complex DFTs of lengths with a prime factor above 7 by Bluestein's algorithm over FFTW transforms of a
// 7-smooth length, and the choice between that and FFTW's own plan by timing both. FFTW_ESTIMATE transforms such
// lengths by Rader's algorithm recursively or by generic O(p^2) codelets, whose time depends on how p - 1 factors:
// single precision, one thread, batches of 8 (development VM), 8219 (prime) 213 us a line against 110 by
// Bluestein, 8201 = 59 x 139 206 against 117, 8200 = 2^3 5^2 41 160 against 118, 16411 805 against 251, but
// 8203 = 13 x 631 (630 is 7-smooth) 85 against 117 and 4099 58 against 64 (docs/spfft2d.md, "Bluestein columns").
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "common/checked.hpp"
#include "common/env.hpp"
#include "common/error.hpp"
#include "common/fftw_plan.hpp"
#include "common/host_buffer.hpp"
#include "common/smooth.hpp"

namespace sfft::fftw {

// The circular convolution length of a Bluestein transform of n points on FFTW: the smallest 7-smooth
// M >= 2n - 1 that 32 divides (FFTW_ESTIMATE near 16.4k points, single precision: 16800 = 2^5 3 5^2 7 and
// 17280 = 2^7 3^3 5 took 107-113 us a line, 16464 = 2^4 3 7^3 115, 17496 = 2^3 3^7 139, 16875 = 3^3 5^4 228).
inline std::ptrdiff_t bluestein_fftw_length(std::ptrdiff_t n) {
  std::ptrdiff_t m = std::max<std::ptrdiff_t>(32, (2 * n - 1 + 31) / 32 * 32);
  while (!seven_smooth(static_cast<uint64_t>(m / 32))) m += 32;
  return m;
}

// How a length that is not 7-smooth is transformed: the faster of the two routes on this host, or one of them.
enum class FftRoute { kFastest, kFftw, kBluestein };
// The diagnostic switch SFFT_FFT_ROUTE=fftw|bluestein fixes the route of such lengths for A/B runs and tests; unset
// (or anything else), each plan times both.
inline FftRoute route_from_environment() {
  const std::string v = env_value("SFFT_FFT_ROUTE");
  return v == "fftw" ? FftRoute::kFftw : v == "bluestein" ? FftRoute::kBluestein : FftRoute::kFastest;
}

// Lengths whose route is timed: not 7-smooth, and at most 2^20 points. Longer ones keep FFTW's plan untimed: a
// timing run would cost more than planning should, and Bluestein's arrays hold 2n values and more (a fuzzed
// 1199728613 x 3 matrix had planned arrays of gigabytes for its column pass).
constexpr uint64_t kMaxTimedLength = uint64_t{1} << 20;
inline bool route_is_timed(uint64_t n) { return n <= kMaxTimedLength && !seven_smooth(n); }

// The fastest of `runs` calls of fn, in ns.
template <class Fn>
double best_time_ns(int runs, Fn &&fn) {
  double best = std::numeric_limits<double>::infinity();
  for (int run = 0; run < runs; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// The timed choice between FFTW's plan and Bluestein's route for one transform: the fastest of `runs` calls of
// each (only the one `route` fixes, where it is not kFastest), in ns, and whether Bluestein's was the faster.
struct TimedRoute {
  double ns = 0;
  bool bluestein = false;
};
template <class ByFftw, class ByBluestein>
TimedRoute time_routes(FftRoute route, int runs, ByFftw &&by_fftw, ByBluestein &&by_bluestein) {
  const double inf = std::numeric_limits<double>::infinity();
  const double fftw_ns = route == FftRoute::kBluestein ? inf : best_time_ns(runs, by_fftw);
  const double bluestein_ns = route == FftRoute::kFftw ? inf : best_time_ns(runs, by_bluestein);
  return {std::min(fftw_ns, bluestein_ns), bluestein_ns < fftw_ns};
}

// One line's DFT of n points, X[k] = sum_j x[j] e^{sign 2 pi i j k / n}, as Bluestein's chirp convolution:
// X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]) with c[j] = e^{sign pi i j^2 / n}, the sum a circular
// convolution of length M = bluestein_fftw_length(n) by a forward FFT, a product with the kernel's spectrum
// (made once, in double) and a backward FFT. Plans single-threaded; transforms from several threads at once are
// safe, each with a work array of its own.
template <class Real>
class Bluestein {
 public:
  using Complex = std::complex<Real>;

  Bluestein() = default;
  Bluestein(std::ptrdiff_t n, int sign) : n_(n), m_(bluestein_fftw_length(n)) {
    require(n >= 1, "a Bluestein transform needs at least one point");
    const auto un = static_cast<uint64_t>(n);
    const double pi = 3.14159265358979323846, turn = (sign == FFTW_FORWARD ? -pi : pi) / static_cast<double>(n);
    chirp_.allocate(static_cast<std::size_t>(n));
    HostBuffer<std::complex<double>> kernel(static_cast<std::size_t>(m_));
    std::fill(kernel.get(), kernel.get() + m_, std::complex<double>(0));
    for (uint64_t j = 0; j < un; ++j) {
      const double angle = turn * static_cast<double>(j * j % (2 * un));  // j^2 mod 2n keeps the angle exact
      const std::complex<double> c(std::cos(angle), std::sin(angle));
      chirp_[j] = Complex(static_cast<Real>(c.real()), static_cast<Real>(c.imag()));
      kernel[j] = std::conj(c);
      if (j > 0) kernel[static_cast<uint64_t>(m_) - j] = std::conj(c);
    }
    const std::ptrdiff_t m = m_;
    Plan<double>::many_dft(1, &m, 1, kernel.get(), nullptr, 1, m, kernel.get(), nullptr, 1, m, FFTW_FORWARD,
                           FFTW_ESTIMATE, 1)
        .execute_dft(kernel.get(), kernel.get());
    kernel_.allocate(static_cast<std::size_t>(m_));
    const double scale = 1.0 / static_cast<double>(m_);  // the backward FFT's 1 / M
    for (std::ptrdiff_t k = 0; k < m_; ++k)
      kernel_[static_cast<std::size_t>(k)] =
          Complex(static_cast<Real>(kernel[static_cast<std::size_t>(k)].real() * scale),
                  static_cast<Real>(kernel[static_cast<std::size_t>(k)].imag() * scale));
    HostBuffer<Complex> planning(static_cast<std::size_t>(m_));
    forward_ = Plan<Real>::many_dft(1, &m, 1, planning.get(), nullptr, 1, m, planning.get(), nullptr, 1, m,
                                    FFTW_FORWARD, FFTW_ESTIMATE, 1);
    backward_ = Plan<Real>::many_dft(1, &m, 1, planning.get(), nullptr, 1, m, planning.get(), nullptr, 1, m,
                                     FFTW_BACKWARD, FFTW_ESTIMATE, 1);
  }

  explicit operator bool() const noexcept { return n_ > 0; }
  std::ptrdiff_t length() const noexcept { return n_; }
  // Complex values of the work array a transform needs (64-byte aligned, as HostBuffer's are).
  std::ptrdiff_t work_size() const noexcept { return m_; }
  std::size_t buffer_bytes() const noexcept { return (chirp_.size() + kernel_.size()) * sizeof(Complex); }

  // out[k] = X[k] for k < count (<= n) from the n values in[] (complex, or real: the DFT of a real line); in may
  // be out, or overlap it (it is read whole before out is written).
  template <class In>
  void transform(const In *in, Complex *out, std::ptrdiff_t count, Complex *work) const {
    static_assert(std::is_same_v<In, Complex> || std::is_same_v<In, Real>, "complex or real input");
    const Complex *c = chirp_.get();
    Real *w = reinterpret_cast<Real *>(work);
    for (std::ptrdiff_t j = 0; j < n_; ++j) {
      // Products written out: std::complex's operator* checks its result for NaN and calls __mulsc3.
      if constexpr (std::is_same_v<In, Complex>) {
        const Real re = in[j].real(), im = in[j].imag();
        w[2 * j] = re * c[j].real() - im * c[j].imag();
        w[2 * j + 1] = re * c[j].imag() + im * c[j].real();
      } else {
        w[2 * j] = in[j] * c[j].real();
        w[2 * j + 1] = in[j] * c[j].imag();
      }
    }
    std::fill(work + n_, work + m_, Complex(0));
    forward_.execute_dft(work, work);
    const Real *kr = reinterpret_cast<const Real *>(kernel_.get());
    for (std::ptrdiff_t k = 0; k < m_; ++k) {
      const Real re = w[2 * k], im = w[2 * k + 1];
      w[2 * k] = re * kr[2 * k] - im * kr[2 * k + 1];
      w[2 * k + 1] = re * kr[2 * k + 1] + im * kr[2 * k];
    }
    backward_.execute_dft(work, work);
    Real *o = reinterpret_cast<Real *>(out);
    for (std::ptrdiff_t k = 0; k < count; ++k) {
      const Real re = w[2 * k], im = w[2 * k + 1];
      o[2 * k] = re * c[k].real() - im * c[k].imag();
      o[2 * k + 1] = re * c[k].imag() + im * c[k].real();
    }
  }

 private:
  std::ptrdiff_t n_ = 0, m_ = 0;
  HostBuffer<Complex> chirp_, kernel_;  // c[j], j < n; the kernel's spectrum / M
  Plan<Real> forward_, backward_;       // one line of M, in place
};

// `lines` contiguous DFTs of n points (lines n apart) in place: FFTW's plan of the batch, or, where n's route is
// timed (route_is_timed) and Bluestein's route measured faster on this host (one thread, the fastest of two runs
// of each on the batch), Bluestein line by line. Either route computes the same DFT to within its rounding; which one a
// plan takes may differ between hosts and runs (route_from_environment fixes it; `route` other than kFastest too).
template <class Real>
class LineDfts {
 public:
  using Complex = std::complex<Real>;

  LineDfts() = default;
  // planning: lines x n values aligned as every later execute's data (overwritten while timing).
  LineDfts(std::ptrdiff_t n, std::ptrdiff_t lines, int sign, Complex *planning, FftRoute route = FftRoute::kFastest)
      : n_(n), lines_(lines) {
    // route_is_timed lengths are timed (both routes, or the one the environment fixes).
    const bool timed = route == FftRoute::kFastest && route_is_timed(static_cast<uint64_t>(n));
    if (route == FftRoute::kFastest) route = timed ? route_from_environment() : FftRoute::kFftw;
    if (route != FftRoute::kBluestein)
      plan_ =
          Plan<Real>::many_dft(1, &n, lines, planning, nullptr, 1, n, planning, nullptr, 1, n, sign, FFTW_ESTIMATE, 1);
    if (route != FftRoute::kFftw) bluestein_ = Bluestein<Real>(n, sign);
    if (!timed) return;
    const std::size_t values = checked_mul(static_cast<std::size_t>(n), static_cast<std::size_t>(lines), "FFT lines");
    std::fill(planning, planning + values, Complex(0));
    HostBuffer<Complex> work(static_cast<std::size_t>(bluestein_.work_size()));
    const TimedRoute timed_route = time_routes(
        route, 2, [&] { plan_.execute_dft(planning, planning); }, [&] { run_bluestein(planning, work.get()); });
    line_ns_ = timed_route.ns / static_cast<double>(lines);
    if (timed_route.bluestein)
      plan_.reset();
    else
      bluestein_ = Bluestein<Real>();
  }

  explicit operator bool() const noexcept { return lines_ > 0; }
  // Bluestein's transform where it is the route (its work_size() per concurrent execute), else null.
  const Bluestein<Real> *bluestein() const noexcept { return bluestein_ ? &bluestein_ : nullptr; }
  // One line's measured time on one thread (ns) where the routes were timed, else 0.
  double line_ns() const noexcept { return line_ns_; }
  std::ptrdiff_t work_size() const noexcept { return bluestein_ ? bluestein_.work_size() : 0; }
  std::size_t buffer_bytes() const noexcept { return bluestein_.buffer_bytes(); }

  // The batch in place; data aligned like the planning array, work of work_size() values.
  void execute(Complex *data, Complex *work) const {
    if (bluestein_)
      run_bluestein(data, work);
    else
      plan_.execute_dft(data, data);
  }

 private:
  void run_bluestein(Complex *data, Complex *work) const {
    for (std::ptrdiff_t l = 0; l < lines_; ++l) bluestein_.transform(data + l * n_, data + l * n_, n_, work);
  }

  std::ptrdiff_t n_ = 0, lines_ = 0;
  double line_ns_ = 0;
  Plan<Real> plan_;
  Bluestein<Real> bluestein_;
};

}  // namespace sfft::fftw
