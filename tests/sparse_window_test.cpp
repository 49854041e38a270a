// SPDX-License-Identifier: Apache-2.0
// The sparse FFT's flat window (src/sparse/filter.cpp): the response of its time-domain taps, summed directly
// at every integer offset d from a bucket centre, against
//  - the piecewise-polynomial fit filter_response() that both backends use to estimate and subtract values
//    (on |d| <= L, the offsets the decoders ask for): recovered values converge to its error, so it must stay
//    far below the tolerance (fit_bound); cases with B <= 1024 fit the taps' own sums, B = 2048 and 4096 the
//    design's fixed-rate sums (filter.cpp, kResponseRate);
//  - the design's promise: within the tolerance of 1 on |d| <= L/2 and below it on L <= |d| <= 3L/2 (and
//    <= n - L, which is the next centre's neighbourhood).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "sparse/plan.hpp"

namespace {

using sfft::sparse::Design;
using sfft::sparse::ResponseFit;

// sum_t window[t] e^(-2 pi i t d / n) / n for the symmetric window, with the exact phase (t d) mod n, summed
// in long double (the double sums of 160000 taps round to ~1e-13).
double direct_response(const Design &d, const sfft::HostVector<double> &window, int64_t half_taps, int64_t off) {
  const uint64_t n = d.geom.n;
  long double sum = 0;
  for (int64_t t = 1; t <= half_taps; ++t) {
    uint64_t m = (static_cast<uint64_t>(t) * static_cast<uint64_t>(off)) & (n - 1);
    long double turns = static_cast<long double>(m) / static_cast<long double>(n);
    sum += static_cast<long double>(window[static_cast<std::size_t>(half_taps + t)]) *
           std::cos(6.283185307179586476925286766559L * turns);
  }
  sum = 2 * sum + window[static_cast<std::size_t>(half_taps)];
  return static_cast<double>(sum / static_cast<long double>(n));
}

struct WindowReport {
  double fit_error = 0;        // max over |d| <= L of |fit - direct|
  double passband_ripple = 0;  // max over |d| <= L/2 of |direct - 1|
  double stopband_leak = 0;    // max over L <= |d| <= 3L/2 of |direct|
};

WindowReport measure(const Design &d, const sfft::HostVector<double> &window, int64_t half_taps,
                     const ResponseFit &fit) {
  const int64_t width = static_cast<int64_t>(d.geom.width);
  WindowReport r;
  for (int64_t off = -width - width / 2; off <= width + width / 2; ++off) {
    const double direct = direct_response(d, window, half_taps, off);
    const int64_t a = off < 0 ? -off : off;
    if (a <= width)
      r.fit_error =
          std::max(r.fit_error, std::fabs(sfft::sparse::filter_response(static_cast<double>(off), fit) - direct));
    if (2 * a <= width) r.passband_ripple = std::max(r.passband_ripple, std::fabs(direct - 1.0));
    // n-periodic: offsets past n - L lie within L of the next centre (B = 2).
    if (a >= width && static_cast<uint64_t>(a) <= d.geom.n - d.geom.width)
      r.stopband_leak = std::max(r.stopband_leak, std::fabs(direct));
  }
  return r;
}

// The fit: 1e-3 of the window's tolerance, and no worse than 5e-14 (the rounding of the design's own double
// sums and of evaluating the fit). The bands: the tolerance, plus that rounding.
double fit_bound(double tol) { return std::max(5e-14, 1e-3 * tol); }
double band_bound(double tol) { return tol + 5e-14; }

struct WindowCase {
  const char *label;
  uint64_t n, k;
  sfft_sparse_variant variant;
  bool double_precision;
  double tolerance;  // the design's default for this variant and precision
};

TEST(sparse_window, FitMatchesDirectSumsAndBandsHoldTolerance) {
  const WindowCase cases[] = {
      {"EXACT c128", uint64_t{1} << 10, 8, SFFT_SPARSE_EXACT, true, 1e-14},
      {"EXACT c128", uint64_t{1} << 14, 16, SFFT_SPARSE_EXACT, true, 1e-14},
      {"EXACT c128", uint64_t{1} << 16, 100, SFFT_SPARSE_EXACT, true, 1e-14},
      {"EXACT c128", uint64_t{1} << 18, 300, SFFT_SPARSE_EXACT, true, 1e-14},
      {"EXACT c128", uint64_t{1} << 16, 1, SFFT_SPARSE_EXACT, true, 1e-14},
      {"EXACT c128", uint64_t{1} << 16, 2048, SFFT_SPARSE_EXACT, true, 1e-14},
      {"EXACT c64", uint64_t{1} << 16, 100, SFFT_SPARSE_EXACT, false, 1e-7},
      {"EXACT c64", uint64_t{1} << 16, 2048, SFFT_SPARSE_EXACT, false, 1e-7},
      {"ROBUST", uint64_t{1} << 18, 64, SFFT_SPARSE_ROBUST, true, 1e-9},
      {"ROBUST", uint64_t{1} << 12, 4, SFFT_SPARSE_ROBUST, false, 1e-9},
      {"ROBUST", uint64_t{1} << 18, 1024, SFFT_SPARSE_ROBUST, true, 1e-9},
  };
  for (const WindowCase &c : cases) {
    sfft_sparse_options knobs;
    sfft_sparse_options_init(&knobs);
    knobs.variant = c.variant;
    Design d = sfft::sparse::make_design(c.n, c.k, c.double_precision, sfft::sparse::resolve_knobs(&knobs), 1);
    const sfft::sparse::Geometry &g = d.geom;
    WindowReport main = measure(d, d.window, d.half_taps, g.response);
    std::printf(
        "  %s n = 2^%d k = %llu: %lld taps (%.1f B), fit error %.2e, passband ripple %.2e, stopband %.2e "
        "(tolerance %.0e)\n",
        c.label, static_cast<int>(std::log2(static_cast<double>(c.n))), static_cast<unsigned long long>(c.k),
        static_cast<long long>(2 * d.half_taps + 1),
        static_cast<double>(2 * d.half_taps + 1) / static_cast<double>(g.buckets), main.fit_error, main.passband_ripple,
        main.stopband_leak, c.tolerance);
    EXPECT_LE(main.fit_error, fit_bound(c.tolerance)) << c.label << " n = " << c.n << " k = " << c.k;
    EXPECT_LE(main.passband_ripple, band_bound(c.tolerance)) << c.label << " n = " << c.n << " k = " << c.k;
    EXPECT_LE(main.stopband_leak, band_bound(c.tolerance)) << c.label << " n = " << c.n << " k = " << c.k;
    if (g.first_far_stage > 0) {
      WindowReport far = measure(d, d.far_window, d.far_half_taps, g.far_response);
      std::printf("  %s far stages: %lld taps, fit error %.2e, passband ripple %.2e, stopband %.2e (tolerance 1e-2)\n",
                  c.label, static_cast<long long>(2 * d.far_half_taps + 1), far.fit_error, far.passband_ripple,
                  far.stopband_leak);
      EXPECT_LE(far.fit_error, fit_bound(1e-2)) << c.label << " far window";
      EXPECT_LE(far.passband_ripple, 1e-2) << c.label << " far window";
      EXPECT_LE(far.stopband_leak, 1e-2) << c.label << " far window";
    }
  }
}

// A caller's tolerance anywhere in (0, 0.1] gets a window that meets it (Kaiser's formulas change form at
// 50 dB and 21 dB; the design lengthens the window where they undershoot), to the double sums' rounding for
// the smallest (1e-300 gets the 1e-15 window: as many taps as 1e-15 asks for, ripple at the rounding level).
TEST(sparse_window, CallerTolerancesAreMet) {
  for (double tol : {1e-1, 3e-2, 1e-3, 1e-9, 1e-14, 1e-300}) {
    sfft_sparse_options knobs;
    sfft_sparse_options_init(&knobs);
    knobs.variant = SFFT_SPARSE_EXACT;
    knobs.filter_tolerance = tol;
    Design d = sfft::sparse::make_design(uint64_t{1} << 14, 16, true, sfft::sparse::resolve_knobs(&knobs), 3);
    WindowReport r = measure(d, d.window, d.half_taps, d.geom.response);
    std::printf("  tolerance %.0e: %lld taps, fit error %.2e, passband ripple %.2e, stopband %.2e\n", tol,
                static_cast<long long>(2 * d.half_taps + 1), r.fit_error, r.passband_ripple, r.stopband_leak);
    EXPECT_LE(r.fit_error, fit_bound(tol)) << tol;
    EXPECT_LE(r.passband_ripple, band_bound(tol)) << tol;
    EXPECT_LE(r.stopband_leak, band_bound(tol)) << tol;
    EXPECT_TRUE(std::isfinite(d.window[static_cast<std::size_t>(d.half_taps)])) << tol;
    if (tol < 1e-15) {
      knobs.filter_tolerance = 1e-15;
      Design finest = sfft::sparse::make_design(uint64_t{1} << 14, 16, true, sfft::sparse::resolve_knobs(&knobs), 3);
      EXPECT_EQ(d.half_taps, finest.half_taps) << tol;
    }
  }
}

}  // namespace
