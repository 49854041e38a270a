// SPDX-License-Identifier: Apache-2.0
// Plan-time design shared by both backends: knob defaults and validation, bucket geometry, the flat
// window, and the random permutations.
//
// The window's frequency response is a box [-a, a] (a = 3L/4) convolved with the transform of a Kaiser-Bessel
// window: its taps are 2a sinc(2a t/n) I0(beta sqrt(1 - (t/T)^2)) / I0(beta), |t| <= T (Kaiser's windowed
// sinc). beta and T come from Kaiser's formulas for a ripple `tol` and a transition band from L/2 to L, so the
// response is within tol of 1 on the home range |d| <= L/2 and below tol beyond |d| >= L; the design then
// measures the response at the band edges and lengthens the window until it holds. The fold's cost is
// proportional to the taps: 39.5 B for the EXACT complex128 default (the Gaussian-smoothed box of the first
// versions took 73 B at a 100x looser tolerance), 19.6 B for EXACT complex64, 25.3 B for ROBUST (the
// Gaussian's design formula gave ~44 B and ~38 B for those two).
// The defaults are tighter than the Gaussian's because Kaiser's stopband stays near tol for many bucket
// widths where the Gaussian's falls away: every bucket then carries ~tol of the rms bucket in leakage, and
// EXACT's peeling can only decode corrections larger than that leakage over its consistency bound (1e-5), so
// the value errors it leaves scale with tol (measured at n = 2^14, k = 64: up to 9e-9 at 1e-12, 2e-12 at 1e-14).
// The response has no closed form, so the design fits piecewise polynomials to the taps' exact response:
// the decoders evaluate that fit (bucket_math.hpp's filter_response), and its only error is the fit's, a few
// 1e-15 (sparse_window_test compares it with direct sums at every offset).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>
#include <type_traits>

#include "common/checked.hpp"
#include "common/error.hpp"
#include "common/host_buffer.hpp"
#include "common/process.hpp"
#include "common/versioned_struct.hpp"
#include "sparse/plan.hpp"

namespace sfft::sparse {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// ceil(log2 v) for v >= 1.
int log2_ceil(uint64_t v) {
  int r = 0;
  while ((uint64_t{1} << r) < v) ++r;
  return r;
}

// The largest power of two dividing v (v != 0).
uint64_t power_of_two_part(uint64_t v) { return v & (~v + 1); }

// a^-1 mod n for gcd(a, n) = 1 (extended Euclid; n < 2^63).
uint64_t inverse_mod(uint64_t a, uint64_t n) {
  int64_t r0 = static_cast<int64_t>(n), r1 = static_cast<int64_t>(a % n), t0 = 0, t1 = 1;
  while (r1 != 0) {
    const int64_t q = r0 / r1;
    int64_t next = r0 - q * r1;
    r0 = r1;
    r1 = next;
    next = t0 - q * t1;
    t0 = t1;
    t1 = next;
  }
  return static_cast<uint64_t>(t0 < 0 ? t0 + static_cast<int64_t>(n) : t0);
}

// B: the smallest even divisor of n in [factor * k, n/2] (for n a power of two: the power of two >= factor *
// k); when factor * k > n/2, the largest even divisor <= n/2 (n/2 for powers of two). 0 when there is none:
// n odd, or no even divisor between factor * k and n/2.
uint64_t buckets_for(double factor, uint64_t k, uint64_t n) {
  const double wanted = std::ceil(factor * static_cast<double>(k));
  uint64_t above = 0, below = 0;  // the smallest even divisor >= wanted, the largest one below
  auto consider = [&](uint64_t b) {
    if (b % 2 != 0 || b > n / 2) return;
    if (static_cast<double>(b) >= wanted) {
      above = above == 0 || b < above ? b : above;
    } else {
      below = b > below ? b : below;
    }
  };
  for (uint64_t d = 1; d * d <= n; ++d) {  // n <= 2^40: at most 2^20 steps, once per plan
    if (n % d != 0) continue;
    consider(d);
    consider(n / d);
  }
  if (above != 0) return above;
  return wanted > static_cast<double>(n / 2) ? below : 0;
}

// Leakage of the far location stages' window (ROBUST). 1e-2, a fifth of the taps of 1e-9 (1e-3 took a third):
// a stage needs its phase to within 1/8 turn at 2 bits per stage, and recall measured the same as with 1e-3
// (n = 2^24, k = 1000: 3 dB 0.995, log-uniform [1, 10] at 10 / 20 dB 0.871 / 1.000; 2^22 at 40 dB 1.000).
constexpr double kFarStageTolerance = 1e-2;

// Kaiser's shape parameter for a stopband attenuation of `db` decibels.
double kaiser_beta(double db) {
  if (db > 50) return 0.1102 * (db - 8.7);
  if (db >= 21) return 0.5842 * std::pow(db - 21, 0.4) + 0.07886 * (db - 21);
  return 0;
}

// I0(x) by its power series sum_j ((x/2)^2)^j / (j!)^2 (x <= ~35 here): every term is positive, so it is
// accurate to a few ulps, and ~5x faster than std::cyl_bessel_i (a window has ~20 B taps).
double bessel_i0(double x) {
  const double q = 0.25 * x * x;
  double term = 1, sum = 1;
  for (int j = 1; term > 1e-17 * sum; ++j) {
    term *= q / (static_cast<double>(j) * j);
    sum += term;
  }
  return sum;
}

// The window's taps are tap(t) = L shape(t / B), |t| <= T, with shape(tau) = 1.5 sinc(1.5 tau) kb(tau / c),
// c = T / B, kb Kaiser-Bessel of shape beta (2a sinc(2a t / n) with a = 3L/4, times the Kaiser window).
// (Kaiser's window less its pedestal, which ends at 0, was tried: its ripple needs 1.3x the taps.)
struct KaiserShape {
  double beta = 0, inv_i0_beta = 0, half_span = 0;  // half_span: c
  double operator()(double tau) const {
    const double arg = 1.5 * kPi * tau;
    const double sinc = tau == 0 ? 1.0 : std::sin(arg) / arg;
    const double r = tau / half_span;
    return 1.5 * sinc * bessel_i0(beta * std::sqrt(std::max(0.0, 1.0 - r * r))) * inv_i0_beta;
  }
};

// The taps' response at offset d = x L is (1/B) (shape(0) + 2 sum_{t=1..T} shape(t/B) cos(2 pi x t / B)): a
// Riemann sum of step 1/B of shape(tau) cos(2 pi x tau). That integrand's spectrum ends near 2.2 cycles per
// unit tau (sinc 0.75, Kaiser ~0.3, |x| <= 1.2), so by Poisson summation sums of any step 1/R (R >= ~8) agree
// but for the images of the truncation step shape(c), which fall like 1/R: with R = min(B, kResponseRate)
// samples per unit the design sums the taps themselves up to B = 1024, and beyond that a sum that costs
// the same at every B and differs from the taps' by ~1e-15 (beta of 1e-14) to ~1e-11 (1e-7): far below
// the tolerance each window is designed for. sparse_window_test checks both regimes against the taps' own
// sums at every integer offset.
constexpr uint64_t kResponseRate = 1024;
constexpr double kRippleResolution = 2e-15;  // what the design's double sums can measure of a ripple
constexpr double kFinestTolerance = 1e-15;   // the finest window designed (smaller tolerances get this one)

class ResponseSums {
 public:
  ResponseSums(const KaiserShape &shape, uint64_t buckets)
      : rate_(static_cast<double>(std::min(buckets, kResponseRate))) {
    const auto last = static_cast<int64_t>(std::floor(shape.half_span * rate_ + 1e-9));
    samples_.resize(static_cast<std::size_t>(last) + 1);
    for (int64_t t = 0; t <= last; ++t)
      samples_[static_cast<std::size_t>(t)] = shape(static_cast<double>(t) / rate_) / rate_;
  }

  // Response at d = x L. The cosines come from one angle addition per block of kBlock samples (exact cos/sin
  // at the block start and for the offsets inside a block): two FMAs per sample, a few ulps of accuracy.
  double operator()(double x) const {
    constexpr int kBlock = 64;
    const double theta = 2.0 * kPi * x / rate_;
    double cos_j[kBlock], sin_j[kBlock];
    for (int j = 0; j < kBlock; ++j) {
      cos_j[j] = std::cos(theta * j);
      sin_j[j] = std::sin(theta * j);
    }
    const int64_t last = static_cast<int64_t>(samples_.size()) - 1;
    double sum = 0;
    for (int64_t start = 1; start <= last; start += kBlock) {
      const int count = static_cast<int>(std::min<int64_t>(kBlock, last - start + 1));
      double c = 0, s = 0;
      for (int j = 0; j < count; ++j) {
        c += samples_[static_cast<std::size_t>(start + j)] * cos_j[j];
        s += samples_[static_cast<std::size_t>(start + j)] * sin_j[j];
      }
      const double angle = theta * static_cast<double>(start);
      sum += std::cos(angle) * c - std::sin(angle) * s;
    }
    return samples_[0] + 2.0 * sum;
  }

 private:
  double rate_;
  std::vector<double> samples_;
};

// Worst deviation from the ideal response (1 on |d| <= L/2, 0 on |d| >= L) near the band edges, where Kaiser's
// windowed sinc has its largest ripples: 17 integer offsets (or all of them) inside each band's eighth next
// to the transition.
double edge_ripple(const ResponseSums &response, const Geometry &g) {
  const uint64_t span = std::max<uint64_t>(g.width / 8, 1);
  const uint64_t step = std::max<uint64_t>(span / 16, 1);
  const double width = static_cast<double>(g.width);
  double worst = 0;
  for (uint64_t j = 0; j <= span; j += step) {
    worst = std::max(worst, std::fabs(response(static_cast<double>(g.width / 2 - j) / width) - 1.0));
    // The response is n-periodic: offsets past n - L lie within L of the next centre (B = 2).
    if (g.width + j <= g.n - g.width)
      worst = std::max(worst, std::fabs(response(static_cast<double>(g.width + j) / width)));
  }
  return worst;
}

// Chebyshev interpolation of the response on each piece of [0, L] (kResponseTerms nodes), stored as monomial
// coefficients in the piece's variable x in [-1, 1]. 6 pieces per unit of c: the last tap turns the
// response's phase by ~1 radian over a piece, so the Chebyshev coefficients fall like 0.26^j / j! (~1e-17 at
// j = 12).
void fit_response(const ResponseSums &response, double half_span, const Geometry &g, ResponseFit &fit,
                  std::shared_ptr<const HostVector<double>> &table) {
  constexpr int kTerms = kResponseTerms;
  const int pieces = static_cast<int>(std::max(1.0, std::ceil(6.0 * half_span)));
  auto coeffs = std::make_shared<HostVector<double>>(static_cast<std::size_t>(pieces) * kTerms);
  // Monomial coefficients of the Chebyshev polynomials T_0..T_{kTerms-1} (small integers: exact).
  double cheb_mono[kTerms][kTerms] = {};
  cheb_mono[0][0] = 1;
  cheb_mono[1][1] = 1;
  for (int m = 2; m < kTerms; ++m)
    for (int j = 0; j < kTerms; ++j) cheb_mono[m][j] = (j > 0 ? 2 * cheb_mono[m - 1][j - 1] : 0) - cheb_mono[m - 2][j];
  for (int p = 0; p < pieces; ++p) {
    double values[kTerms], cheb[kTerms];
    for (int i = 0; i < kTerms; ++i) {
      const double x = std::cos(kPi * (i + 0.5) / kTerms);
      values[i] = response((p + 0.5 * (x + 1.0)) / pieces);
    }
    for (int m = 0; m < kTerms; ++m) {
      double c = 0;
      for (int i = 0; i < kTerms; ++i) c += values[i] * std::cos(kPi * m * (i + 0.5) / kTerms);
      cheb[m] = (m == 0 ? 1.0 : 2.0) * c / kTerms;
    }
    double *out = coeffs->data() + static_cast<std::size_t>(p) * kTerms;
    for (int j = 0; j < kTerms; ++j) {  // out[0] multiplies x^(kTerms-1) (Horner order)
      double a = 0;
      for (int m = j; m < kTerms; ++m) a += cheb[m] * cheb_mono[m][j];
      out[kTerms - 1 - j] = a;
    }
  }
  fit.coeffs = coeffs->data();
  fit.scale = pieces / static_cast<double>(g.width);
  fit.pieces = pieces;
  table = std::move(coeffs);
}

// The window for ripple `tol`: its taps -T..T (window[t + T]), T, and the fit of its response.
struct WindowDesign {
  HostVector<double> window;
  int64_t half_taps = 0;
};
WindowDesign design_window(double tol, const Geometry &g, uint64_t k, ResponseFit &fit,
                           std::shared_ptr<const HostVector<double>> &table) {
  // 6 dB more attenuation than tol asks for and 2 % more taps than Kaiser's length formula: his formulas
  // undershoot at the ~240 dB of 1e-12 (measured: ripple 5.6 tol at the formula's values, 0.78 tol with
  // this margin); the loop below lengthens the window further wherever the edges still exceed tol.
  // A window cannot be flatter than the double sums that define it: tolerances under kFinestTolerance get
  // its window (a 1e-300 design would take 20x the taps and a response fit 400x longer, for nothing).
  tol = std::max(tol, kFinestTolerance);
  const double db = -20.0 * std::log10(tol) + 6.0;
  KaiserShape shape;
  shape.beta = kaiser_beta(db);
  shape.inv_i0_beta = 1.0 / bessel_i0(shape.beta);
  const double buckets = static_cast<double>(g.buckets);
  const double transition = kPi / buckets;  // L/2 of n, in radians per sample
  double half_taps_real = 1.02 * std::max(db - 8.0, 8.0) / (2.0 * 2.285 * transition);
  int64_t half_taps = 0;
  for (int attempt = 0;; ++attempt) {
    require(half_taps_real < 1e9, "the window for n = ", g.n, ", k = ", k, " and filter_tolerance = ", tol, " needs ",
            2 * half_taps_real, " taps; raise bucket_factor or the tolerance");
    half_taps = std::max<int64_t>(2, static_cast<int64_t>(std::ceil(half_taps_real)));
    shape.half_span = static_cast<double>(half_taps) / buckets;
    const ResponseSums response(shape, g.buckets);
    // Below ~2e-15 the double sums cannot resolve the ripple: such tolerances get Kaiser's length, no more.
    if (edge_ripple(response, g) <= std::max(tol, kRippleResolution) || attempt == 8) {
      fit_response(response, shape.half_span, g, fit, table);
      break;
    }
    half_taps_real *= 1.05;
  }
  WindowDesign w;
  std::size_t taps = checked_add(checked_mul(2, static_cast<std::size_t>(half_taps), "window taps"), 1, "window taps");
  w.window.resize(taps);
  const double width = static_cast<double>(g.width);
#pragma omp parallel for schedule(static) if (half_taps > 65536 && !in_forked_child())
  for (int64_t t = 0; t <= half_taps; ++t) {
    const double tap = width * shape(static_cast<double>(t) / buckets);
    w.window[static_cast<std::size_t>(half_taps + t)] = tap;
    w.window[static_cast<std::size_t>(half_taps - t)] = tap;
  }
  w.half_taps = half_taps;
  return w;
}

// ROBUST comb pre-pass knobs. W defaults to >= 128 k (at most n/16, so the comb stays sublinear) so that
// the approved residues (2 k per comb loop, as sFFT 2.0 keeps) are a small share of all W and each comb
// bin holds about one large coefficient: at n = 2^16, k = 64, 10-30 dB, min_votes = 1, W = 128 k let
// through a tenth of the false finds that W = 32 k did, at the same recovery. W <= 2^26 bounds the plan's
// comb buffers.
void set_comb(Design &d, uint64_t n, uint64_t k, bool exact, const sfft_sparse_options &knobs) {
  constexpr int kMaxCombLoops = 16;
  constexpr uint64_t kMaxCombWidth = uint64_t{1} << 26;
  require(knobs.comb_loops >= 0 && knobs.comb_loops <= kMaxCombLoops, "knobs->comb_loops = ", knobs.comb_loops,
          " is outside [0, ", kMaxCombLoops, "]");
  require(!exact || knobs.comb_loops == 0,
          "knobs->comb_loops must be 0 for SFFT_SPARSE_EXACT (the comb pre-pass is a ROBUST option)");
  require(knobs.comb_loops > 0 || (knobs.comb_width == 0 && knobs.comb_keep == 0),
          "knobs->comb_width = ", knobs.comb_width, " and knobs->comb_keep = ", knobs.comb_keep,
          " must be 0 while comb_loops = 0 (the comb pre-pass is off)");
  // The comb's stride n/W must be an integer: W a power of two dividing n.
  const uint64_t two_part = power_of_two_part(n);
  if (knobs.comb_width != 0) {
    require(is_power_of_two(knobs.comb_width), "knobs->comb_width = ", knobs.comb_width,
            " is not a power of two (the comb's stride n/comb_width must be an integer)");
    require(knobs.comb_width >= 2 && knobs.comb_width <= two_part && knobs.comb_width <= kMaxCombWidth,
            "knobs->comb_width = ", knobs.comb_width, " is outside [2, min(", two_part,
            " (the largest power of two dividing n = ", n, "), 2^26)]");
  }
  uint64_t width = knobs.comb_width;
  if (width == 0) {
    width = 2;
    while (width < 128 * k && width < n / 16 && width < kMaxCombWidth && width < two_part) width *= 2;
  }
  require(knobs.comb_keep <= width, "knobs->comb_keep = ", knobs.comb_keep, " is outside [1, comb_width = ", width,
          "]");
  if (knobs.comb_loops == 0) return;
  d.comb_loops = knobs.comb_loops;
  d.comb_width = width;
  d.comb_keep = knobs.comb_keep != 0 ? knobs.comb_keep : std::min(2 * k, width);
}

}  // namespace

sfft_sparse_options default_knobs() {
  sfft_sparse_options d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  return d;
}

sfft_sparse_options resolve_knobs(const sfft_sparse_options *knobs) {
  return read_versioned(knobs, offsetof(sfft_sparse_options, variant) + sizeof knobs->variant, default_knobs(), "knobs",
                        "sfft_sparse_options_init");
}

Design make_design(uint64_t n, uint64_t k, bool double_precision, const sfft_sparse_options &knobs, uint64_t seed) {
  require(n >= 16 && n <= (uint64_t{1} << 40), "n = ", n, " is outside the supported range [2^4, 2^40]");
  require(is_power_of_two(n) || n < (uint64_t{1} << 32), "n = ", n,
          " is not a power of two: other lengths are supported below 2^32 only");
  require(k >= 1, "k = 0: at least one coefficient must be requested");
  require(k <= n / 4, "k = ", k, " exceeds n/4 = ", n / 4, "; use a dense FFT for such dense spectra");

  // Read the enum through its representation: loading an out-of-range value as the enum type is UB.
  std::underlying_type_t<sfft_sparse_variant> variant = 0;
  std::memcpy(&variant, &knobs.variant, sizeof variant);
  require(variant == SFFT_SPARSE_AUTO || variant == SFFT_SPARSE_ROBUST || variant == SFFT_SPARSE_EXACT,
          "knobs->variant = ", variant, " is not an sfft_sparse_variant");
  Design d;
  d.variant = variant == SFFT_SPARSE_EXACT ? Variant::Exact : Variant::Robust;
  d.k = k;
  bool exact = d.variant == Variant::Exact;

  double tol = knobs.filter_tolerance;
  require(tol == 0 || (tol > 0 && tol <= 0.1), "knobs->filter_tolerance = ", tol, " is outside (0, 0.1]");
  // See the top of this file for why these are tighter than the accuracy each variant promises.
  if (tol == 0) tol = exact ? (double_precision ? 1e-14 : 1e-7) : 1e-9;
  double factor = knobs.bucket_factor;
  require(factor == 0 || (factor >= 1 && factor <= 64), "knobs->bucket_factor = ", factor, " is outside [1, 64]");
  if (factor == 0) factor = exact ? 2 : 4;  // peeling tolerates denser buckets than voting under noise
  require(knobs.location_loops >= 0 && knobs.location_loops <= 64, "knobs->location_loops = ", knobs.location_loops,
          " is outside [1, 64]");
  // EXACT: peeling over 7 loops; 6 suffice once B >= 128 (no failure in 1000-2000 seeded trials each at
  // k = 64, 256 and 1000; at k = 16 six loops failed 2 of 2000). ROBUST: 6 (8 also finds every
  // coefficient of the 20 dB test spectra, at a third more samples).
  uint64_t buckets = buckets_for(factor, k, n);
  // ROBUST's default factor is a preference: where n has no even divisor in [4k, n/2], it takes the bucket
  // count EXACT's default picks, so that AUTO's fallback exists wherever its EXACT stage does (2 x 1009, k = 1).
  if (buckets == 0 && knobs.bucket_factor == 0 && !exact) buckets = buckets_for(2, k, n);
  // The buckets must divide n (L = n/B samples per bucket period) and be even (the first location stage
  // shifts by B/2).
  require(n % 2 == 0, "n = ", n, " is odd: the sparse FFT needs an even length (its bucket count B, even, divides n)");
  require(buckets != 0, "n = ", n, " has no even divisor in [bucket_factor * k = ", factor * static_cast<double>(k),
          ", n/2 = ", n / 2, "] for the bucket count B; a smaller k or bucket_factor, or another n, is needed");
  d.location_loops = knobs.location_loops != 0 ? knobs.location_loops : !exact ? 6 : buckets >= 128 ? 6 : 7;
  require(knobs.estimation_loops >= -1 && knobs.estimation_loops <= 64,
          "knobs->estimation_loops = ", knobs.estimation_loops, " is outside [-1, 64]");
  require(!exact || knobs.estimation_loops <= 0,
          "knobs->estimation_loops must be 0 or -1 for SFFT_SPARSE_EXACT (it peels instead of voting)");
  d.estimation_loops = exact                         ? 0
                       : knobs.estimation_loops == 0 ? 2
                       : knobs.estimation_loops < 0  ? 0
                                                     : knobs.estimation_loops;
  require(knobs.bits_per_stage >= 0 && knobs.bits_per_stage <= 30, "knobs->bits_per_stage = ", knobs.bits_per_stage,
          " is outside [1, 30]");
  // ROBUST: 2 bits per stage. A stage's phase must place the offset within 2^-(q+1) of a turn, and at bucket SNR
  // ~7 dB (3 dB overall at B = 4k) the phase noise is ~0.07 turn: q = 4 located 6 % of the unit tones at
  // n = 2^22, k = 1000, q = 3 48 %, q = 2 99 % (with kNoiseConsistency); it costs 3 more far stages per loop.
  int bits = knobs.bits_per_stage != 0 ? knobs.bits_per_stage : exact ? (double_precision ? 20 : 12) : 2;
  require(knobs.min_votes >= 0 && knobs.min_votes <= d.location_loops, "knobs->min_votes = ", knobs.min_votes,
          " is outside [1, location_loops = ", d.location_loops, "]");
  d.min_votes = exact ? 1 : knobs.min_votes != 0 ? knobs.min_votes : std::min(2, d.location_loops);
  set_comb(d, n, k, exact, knobs);
  d.floor_relative = exact ? (double_precision ? 1e-12 : 1e-5) : 0.0;
  // A tenth of the relative errors EXACT promises (1e-9 / 1e-4): what a settled loop may still hide is
  // below them. The leakage and rounding that peeled coefficients leave in the buckets can exceed this
  // (up to ~1e-8 of the rms bucket in complex128 at k = 1000), and then every loop runs as before; at
  // 1e-9 / 1e-4 the early stop lost coefficients in 2-3 of 20000 seeded trials that the full loops found.
  d.settle_relative = exact ? (double_precision ? 1e-10 : 1e-5) : 0.0;

  Geometry &g = d.geom;
  g.n = n;
  g.mask = is_power_of_two(n) ? n - 1 : 0;
  g.buckets = buckets;
  g.width = n / buckets;
  g.log2_width = log2_ceil(g.width);
  g.bits_per_stage = bits;
  g.stages = (g.log2_width + 1 + bits - 1) / bits;  // resolve the offset modulo 2L (< 2^(log2_width + 1))
  g.hashings_per_loop = g.stages + 2;
  // A second coefficient of relative size rho moves the shifted hashings by up to 2 rho |Z_0|, so
  // eta bounds the contamination a decoded value can carry; it must stay above the window leakage.
  g.consistency = exact ? (double_precision ? 1e-5 : 1e-2) : 0.35;

  WindowDesign main = design_window(tol, g, k, g.response, d.response_table);
  d.window = std::move(main.window);
  d.half_taps = main.half_taps;
  // ROBUST far location stages: a phase good to ~tol times the dynamic range is plenty for q-bit stages
  // under noise, so they take a window of kFarStageTolerance (a fifth of the taps of 1e-9). That is every
  // stage beyond the reference's span, and every stage past the first kNearStages: the CUDA fold reads a
  // loop's reference, check and first two stages in one job (kJobHashings = 4, src/sparse/cuda/internal.cuh),
  // and any other hashing alone, where the coarse window costs a fifth (2 bits per stage: stage 3 at 8B).
  constexpr int kNearStages = 2;
  if (!exact && tol < kFarStageTolerance) {
    for (int r = 1; r <= g.stages; ++r) {
      if (stage_shift(g, r) > static_cast<uint64_t>(d.half_taps) || r > kNearStages) {
        g.first_far_stage = r;
        break;
      }
    }
    if (g.first_far_stage > 0) {
      WindowDesign far = design_window(kFarStageTolerance, g, k, g.far_response, d.far_response_table);
      d.far_window = std::move(far.window);
      d.far_half_taps = far.half_taps;
    }
  }
  set_derived_terms(g);
  d.accuracy = exact ? (double_precision ? 1e-9 : 1e-4) : 1e3 * tol;
  double taps2 = 0;
  for (double tap : d.window) taps2 += tap * tap;
  d.noise_gain = taps2 / static_cast<double>(n);

  // Fixed mixing constant so that seed 0 still gives a well-scrambled generator state.
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  // The check shift lies inside the window's span (at most T/2 taps), so the check hashing reads the
  // samples its loop's reference already reads (the CUDA fold shares them). A second coefficient of the
  // same bucket, dU away, then turns the check's phase by 2 pi dU s/n, dU s/n spanning s/B turns over a
  // bucket: as likely to be caught as with a shift drawn from all of [0, n). ROBUST draws s from T/4..T/2
  // (10-20 turns), since under noise it accepts phase errors up to its 0.35 consistency; EXACT's tight
  // consistency needs only a few turns, so it draws s from 2B..4B where that is shorter and reads fewer
  // samples past the reference's span. Odd, so it is no stage shift.
  uint64_t quarter = static_cast<uint64_t>(d.half_taps) / 4, half = static_cast<uint64_t>(d.half_taps) / 2;
  uint64_t lo = std::max<uint64_t>(3, exact ? std::min(2 * g.buckets, quarter) : quarter);
  uint64_t hi = std::max<uint64_t>(lo, exact ? std::min(4 * g.buckets, half) : half);
  g.check_shift = ((lo + rng() % (hi - lo + 1)) | 1) % n;
  d.loops.resize(static_cast<std::size_t>(d.total_loops()));
  // Draws mod n (a mask for powers of two, as before other lengths were supported: same plans, same
  // results). sigma must be invertible mod n: odd always (n is even), coprime to n's odd part redrawn.
  for (auto &lp : d.loops) {
    do {
      lp.sigma = (rng() % n) | 1;
    } while (std::gcd(lp.sigma, n) != 1);
    lp.sigma_inv = inverse_mod(lp.sigma, n);
    lp.tau = rng() % n;
  }
  // Drawn last, so plans without the comb keep every earlier draw (and their results).
  d.comb_offsets.resize(static_cast<std::size_t>(d.comb_loops));
  for (auto &offset : d.comb_offsets) offset = rng() % n;
  return d;
}

double noise_energy(double *e, std::size_t count) {
  if (count == 0) return 0;
  std::nth_element(e, e + count / 2, e + count);
  return noise_from_median_digit(noise_digit(e[count / 2]));
}

void finish_report(Report &r, const Design &d, double signal, double residual, uint64_t outliers, int loops, double nu,
                   double kept, double dropped, uint64_t dropped_outliers) {
  // sum_b |Z[b]|^2 over a hashing's B buckets is sum_f |X[f]|^2 sum_b G(u_f - b L)^2, whose inner sum samples
  // G^2 at spacing L: S_G / L on average over u_f, exactly so for white noise, within [1, 2] for one
  // coefficient (a coefficient between two buckets is seen by both). So the returned coefficients' energy is
  // taken as it is, and only the residual is converted: sum_f |X[f]|^2 = kept + residual L / S_G per loop.
  // A dropped coefficient v (found and subtracted, not returned) is residual energy |v|^2, and an outlier in
  // every loop when above the limit.
  const double per_loop = loops > 0 ? 1.0 / loops : 0.0;
  const double gain = d.noise_gain / static_cast<double>(d.geom.width);  // S_G / L
  const double residual_spectrum = residual * per_loop / gain + dropped;
  r.signal_energy = kept + residual_spectrum;
  r.noise_floor = nu / d.noise_gain;
  r.explained = r.signal_energy > 0 ? std::clamp(kept / r.signal_energy, 0.0, 1.0) : 1.0;
  const double residual_per_bucket = residual_spectrum * gain / static_cast<double>(d.geom.buckets);
  r.excess = nu > 0 ? residual_per_bucket / nu : residual_per_bucket > 0 ? HUGE_VAL : 1.0;
  outliers += static_cast<uint64_t>(loops) * dropped_outliers;
  // A coefficient the answer lacks is an outlier in every loop where it is alone, noise in one at a time:
  // outliers per loop, rounded to the nearest.
  r.unexplained_buckets = loops > 0 ? (outliers + static_cast<uint64_t>(loops) / 2) / static_cast<uint64_t>(loops) : 0;
  // Residual energy below what the variant's accuracy allows a right answer to leave is explained.
  const bool above_accuracy = residual_spectrum > d.accuracy * d.accuracy * r.signal_energy;
  // Nothing returned above the noise while the input holds energy: pure noise, or a spectrum too dense for k
  // (its coefficients fill most buckets and raise the median with them). Bucket statistics cannot tell the two
  // apart, and neither answer is the sparse approximation asked for.
  const bool none_significant = r.significant == 0 && signal > 0;
  r.unexplained = none_significant || (above_accuracy && (r.unexplained_buckets > 0 || r.excess > kExcess));
  if (d.variant == Variant::Exact) r.unexplained = false;  // the caller decides from its unresolved buckets
}

Report unmeasured_report(Variant variant, uint64_t count, std::size_t unresolved) {
  Report r;
  r.variant = variant;
  r.count = count;
  r.significant = count;
  r.explained = r.signal_energy = r.noise_floor = r.excess = std::nan("");
  r.unexplained_buckets = unresolved;
  r.unexplained = unresolved > 0;
  return r;
}

uint64_t hashing_base(const Design &d, std::size_t h) {
  std::size_t per_loop = static_cast<std::size_t>(d.geom.hashings_per_loop);
  std::size_t location_hashings = static_cast<std::size_t>(d.location_loops) * per_loop;
  if (h < location_hashings) {
    const LoopParams &lp = d.loops[h / per_loop];
    uint64_t shift = hashing_shift(d.geom, static_cast<int>(h % per_loop));
    return add_mod(mul_mod(lp.sigma, shift, d.geom), lp.tau, d.geom);
  }
  return d.loops[static_cast<std::size_t>(d.location_loops) + (h - location_hashings)].tau;
}

}  // namespace sfft::sparse
