// The sparse FFT's flat window (src/sparse/filter.cpp): the response of the truncated time-domain taps,
// summed directly at every integer offset d in [-L, L] from a bucket centre, against the analytic response
// filter_response() that both backends use to estimate and subtract values. Their difference is what the
// truncation costs: recovered values converge to it (not to the filter tolerance), so the design keeps it
// about 1e-3 of the tolerance; asserted below 1e-2 of it, or 1e-13 where that is under the rounding of the
// direct sums (up to ~6e-14 for 75000 taps).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "sparse/plan.hpp"

namespace {

using sfft::sparse::Design;

// max over d in [-L, L] of |sum_t window[t] e^(-2 pi i t d / n) / n - response(d)|, window symmetric.
template <class Response>
double worst_response_error(const Design &d, const sfft::HostVector<double> &window, int64_t half_taps,
                            Response &&response) {
  const uint64_t n = d.geom.n;
  const int64_t width = static_cast<int64_t>(d.geom.width);
  double worst = 0;
  for (int64_t off = -width; off <= width; ++off) {
    double sum = window[static_cast<std::size_t>(half_taps)];
    for (int64_t t = 1; t <= half_taps; ++t) {
      // exact phase: (t * off) mod n, then one rounding to turns
      uint64_t m = (static_cast<uint64_t>(t) * static_cast<uint64_t>(off)) & (n - 1);
      double turns = static_cast<double>(m) / static_cast<double>(n);
      sum += 2.0 * window[static_cast<std::size_t>(half_taps + t)] * std::cos(6.283185307179586 * turns);
    }
    worst = std::max(worst, std::fabs(sum / static_cast<double>(n) - response(static_cast<double>(off))));
  }
  return worst;
}

struct WindowCase {
  const char *label;
  uint64_t n, k;
  sfft_sparse_variant variant;
  bool double_precision;
  double tolerance;  // the design's default for this variant and precision
};

TEST(sparse_window, TruncatedTapsMatchAnalyticResponse) {
  const WindowCase cases[] = {
      {"EXACT c128", uint64_t{1} << 10, 8, SFFT_SPARSE_EXACT, true, 1e-12},
      {"EXACT c128", uint64_t{1} << 14, 16, SFFT_SPARSE_EXACT, true, 1e-12},
      {"EXACT c128", uint64_t{1} << 16, 100, SFFT_SPARSE_EXACT, true, 1e-12},
      {"EXACT c128", uint64_t{1} << 18, 300, SFFT_SPARSE_EXACT, true, 1e-12},
      {"EXACT c64", uint64_t{1} << 16, 100, SFFT_SPARSE_EXACT, false, 1e-7},
      {"ROBUST", uint64_t{1} << 18, 64, SFFT_SPARSE_ROBUST, true, 1e-6},
  };
  for (const WindowCase &c : cases) {
    sfft_sparse_options knobs;
    sfft_sparse_options_init(&knobs);
    knobs.variant = c.variant;
    Design d = sfft::sparse::make_design(c.n, c.k, c.double_precision, sfft::sparse::resolve_knobs(&knobs), 1);
    const sfft::sparse::Geometry &g = d.geom;
    double main_error = worst_response_error(d, d.window, d.half_taps,
                                             [&](double off) { return sfft::sparse::filter_response(off, g); });
    std::printf("  %s n = 2^%d k = %llu: %lld taps (%.1f B), max |response error| %.2e (tolerance %.0e)\n", c.label,
                static_cast<int>(std::log2(static_cast<double>(c.n))), static_cast<unsigned long long>(c.k),
                static_cast<long long>(2 * d.half_taps + 1),
                static_cast<double>(2 * d.half_taps + 1) / static_cast<double>(g.buckets), main_error, c.tolerance);
    EXPECT_LE(main_error, std::max(1e-2 * c.tolerance, 1e-13)) << c.label << " n = " << c.n << " k = " << c.k;
    if (g.first_far_stage > 0) {
      double far_error = worst_response_error(d, d.far_window, d.far_half_taps, [&](double off) {
        return sfft::sparse::filter_response(off, g, g.far_gauss_scale);
      });
      std::printf("  %s far stages: %lld taps, max |response error| %.2e (tolerance 1e-3)\n", c.label,
                  static_cast<long long>(2 * d.far_half_taps + 1), far_error);
      EXPECT_LE(far_error, 1e-5) << c.label << " far window";
    }
  }
}

}  // namespace
