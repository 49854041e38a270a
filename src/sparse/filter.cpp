// Plan-time design shared by both backends: knob defaults and validation, bucket geometry, the flat
// window, and the random permutations.
//
// The window's frequency response is a box [-a, a] (a = 3L/4) convolved with a Gaussian of standard
// deviation sg chosen so that the response is within `tol` of 1 on the home range |d| <= L/2 and below
// `tol` beyond |d| >= L. Its time-domain taps are the exact inverse transform, 2a sinc(2a t/n)
// exp(-2 pi^2 sg^2 t^2 / n^2), truncated where the Gaussian envelope falls under tol / 10: the response of
// the truncated taps then matches filter_response() (bucket_math.hpp) to about 1e-3 tol (sparse_window_test
// measures it).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>

#include "common/checked.hpp"
#include "common/error.hpp"
#include "common/host_buffer.hpp"
#include "sparse/plan.hpp"

namespace sfft::sparse {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

int log2_exact(uint64_t v) {
  int r = 0;
  while ((uint64_t{1} << r) < v) ++r;
  return r;
}

uint64_t inverse_mod_2_64(uint64_t odd) {
  uint64_t inv = odd;  // correct to 3 bits; each Newton step doubles the correct bits
  for (int i = 0; i < 6; ++i) inv *= 2 - odd * inv;
  return inv;
}

// B: the power of two >= factor * k, in [2, n/2].
uint64_t buckets_for(double factor, uint64_t k, uint64_t n) {
  double wanted = std::ceil(factor * static_cast<double>(k));
  uint64_t buckets = 2;
  while (static_cast<double>(buckets) < wanted && buckets < n / 2) buckets *= 2;
  return buckets;
}

// Leakage of the far location stages' window (ROBUST).
constexpr double kFarStageTolerance = 1e-3;

// Gaussian smoothing of the box edges: the response is within tol of 1 for |d| <= L/2, below tol beyond L.
double smoothing_for(double tol, const Geometry &g) {
  return 0.25 * static_cast<double>(g.width) / std::sqrt(2.0 * std::log(1.0 / tol));
}

// Where the taps end: the Gaussian envelope falls under kTruncationSlack * tol there. The dropped taps,
// 2a sinc(2a t/n) times the envelope, change the response by about 0.0075-0.013 times the envelope at T
// (sparse_window_test; sinc's 1/t decay), so the truncation error is ~1e-3 tol. It must stay that far
// below tol: the values converge to the response model's error, not to tol (ROBUST's refinement reached
// 4e-8 on exactly sparse input at slack 10 (model error ~tol/10), 1.5e-10 at 0.1; EXACT complex128 5.9e-10
// at 10, 5e-16 at 0.1 for n = 2^10, k = 8). The first versions truncated at tol / L: the same errors, with
// 3-18 % more taps (the more, the larger L).
constexpr double kTruncationSlack = 0.1;

// Half length T of the taps.
int64_t half_taps_for(double tol, const Geometry &g, uint64_t k) {
  double envelope_log = std::log(1.0 / (kTruncationSlack * tol));
  double half_taps =
      static_cast<double>(g.n) * std::sqrt(envelope_log / 2.0) / (kPi * smoothing_for(tol, g));
  require(half_taps < 1e9, "the window for n = ", g.n, ", k = ", k, " and filter_tolerance = ", tol, " needs ",
          half_taps, " taps; raise bucket_factor or the tolerance");
  return static_cast<int64_t>(std::ceil(half_taps));
}

// Taps -T..T of the window: the exact inverse transform of the smoothed box.
void fill_window(double sigma, int64_t half_taps, const Geometry &g, HostVector<double> &window) {
  std::size_t taps = checked_add(checked_mul(2, static_cast<std::size_t>(half_taps), "window taps"), 1, "window taps");
  window.resize(taps);
  double nd = static_cast<double>(g.n);
  double a2 = 2.0 * g.box_half_width;
  double gauss = 2.0 * kPi * kPi * sigma * sigma / (nd * nd);
  for (int64_t t = -half_taps; t <= half_taps; ++t) {
    double td = static_cast<double>(t);
    double arg = kPi * a2 * td / nd;
    double sinc = t == 0 ? 1.0 : std::sin(arg) / arg;
    window[static_cast<std::size_t>(t + half_taps)] = a2 * sinc * std::exp(-gauss * td * td);
  }
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
  require(knobs.comb_loops > 0 || (knobs.comb_width == 0 && knobs.comb_keep == 0), "knobs->comb_width = ",
          knobs.comb_width, " and knobs->comb_keep = ", knobs.comb_keep,
          " must be 0 while comb_loops = 0 (the comb pre-pass is off)");
  if (knobs.comb_width != 0) {
    require(is_power_of_two(knobs.comb_width), "knobs->comb_width = ", knobs.comb_width,
            " is not a power of two (the comb's stride n/comb_width must be an integer)");
    require(knobs.comb_width >= 2 && knobs.comb_width <= n && knobs.comb_width <= kMaxCombWidth,
            "knobs->comb_width = ", knobs.comb_width, " is outside [2, min(n = ", n, ", 2^26)]");
  }
  uint64_t width = knobs.comb_width;
  if (width == 0) {
    width = 2;
    while (width < 128 * k && width < n / 16 && width < kMaxCombWidth) width *= 2;
  }
  require(knobs.comb_keep <= width, "knobs->comb_keep = ", knobs.comb_keep, " is outside [1, comb_width = ", width,
          "]");
  if (knobs.comb_loops == 0) return;
  d.comb_loops = knobs.comb_loops;
  d.comb_width = width;
  d.comb_keep = knobs.comb_keep != 0 ? knobs.comb_keep : std::min(2 * k, width);
}

}  // namespace

sfft_sparse_options resolve_knobs(const sfft_sparse_options *knobs) {
  sfft_sparse_options full;
  std::memset(&full, 0, sizeof full);
  full.struct_size = sizeof full;
  if (knobs == nullptr) return full;
  require(knobs->struct_size >= offsetof(sfft_sparse_options, variant) + sizeof knobs->variant,
          "knobs->struct_size = ", knobs->struct_size, " is too small; call sfft_sparse_options_init() first");
  std::size_t n = knobs->struct_size < sizeof full ? knobs->struct_size : sizeof full;
  std::memcpy(&full, knobs, n);
  full.struct_size = sizeof full;
  return full;
}

Design make_design(uint64_t n, uint64_t k, bool double_precision, const sfft_sparse_options &knobs, uint64_t seed) {
  require(is_power_of_two(n), "n = ", n, " is not a power of two (the sparse FFT needs n = 2^m)");
  require(n >= 16 && n <= (uint64_t{1} << 40), "n = ", n, " is outside the supported range [2^4, 2^40]");
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
  if (tol == 0) tol = exact ? (double_precision ? 1e-12 : 1e-7) : 1e-6;
  double factor = knobs.bucket_factor;
  require(factor == 0 || (factor >= 1 && factor <= 64), "knobs->bucket_factor = ", factor, " is outside [1, 64]");
  if (factor == 0) factor = exact ? 2 : 4;  // peeling tolerates denser buckets than voting under noise
  require(knobs.location_loops >= 0 && knobs.location_loops <= 64, "knobs->location_loops = ", knobs.location_loops,
          " is outside [1, 64]");
  // EXACT: peeling over 7 loops; 6 suffice once B >= 128 (no failure in 1000-2000 seeded trials each at
  // k = 64, 256 and 1000; at k = 16 six loops failed 2 of 2000). ROBUST: 6 (8 also finds every
  // coefficient of the 20 dB test spectra, at a third more samples).
  const uint64_t buckets = buckets_for(factor, k, n);
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
  int bits = knobs.bits_per_stage != 0 ? knobs.bits_per_stage : exact ? (double_precision ? 20 : 12) : 4;
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
  g.mask = n - 1;
  g.buckets = buckets;
  g.width = n / buckets;
  g.log2_width = log2_exact(g.width);
  g.bits_per_stage = bits;
  g.stages = (g.log2_width + 1 + bits - 1) / bits;  // resolve the offset modulo 2L
  g.hashings_per_loop = g.stages + 2;
  // A second coefficient of relative size rho moves the shifted hashings by up to 2 rho |Z_0|, so
  // eta bounds the contamination a decoded value can carry; it must stay above the window leakage.
  g.consistency = exact ? (double_precision ? 1e-5 : 1e-2) : 0.35;

  g.box_half_width = 0.75 * static_cast<double>(g.width);
  g.gauss_sigma = smoothing_for(tol, g);
  d.half_taps = half_taps_for(tol, g, k);
  fill_window(g.gauss_sigma, d.half_taps, g, d.window);
  // ROBUST far location stages: a phase good to ~tol times the dynamic range is plenty for q-bit stages
  // under noise, so they take a window of kFarStageTolerance (about 60 % of the taps of 1e-6).
  if (!exact && tol < kFarStageTolerance) {
    for (int r = 1; r <= g.stages; ++r) {
      if (stage_shift(g, r) > static_cast<uint64_t>(d.half_taps)) {
        g.first_far_stage = r;
        break;
      }
    }
    if (g.first_far_stage > 0) {
      g.far_gauss_sigma = smoothing_for(kFarStageTolerance, g);
      d.far_half_taps = half_taps_for(kFarStageTolerance, g, k);
      fill_window(g.far_gauss_sigma, d.far_half_taps, g, d.far_window);
    }
  }
  set_derived_terms(g);

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
  g.check_shift = ((lo + rng() % (hi - lo + 1)) | 1) & g.mask;
  d.loops.resize(static_cast<std::size_t>(d.total_loops()));
  for (auto &lp : d.loops) {
    lp.sigma = (rng() & g.mask) | 1;
    lp.sigma_inv = inverse_mod_2_64(lp.sigma) & g.mask;
    lp.tau = rng() & g.mask;
  }
  // Drawn last, so plans without the comb keep every earlier draw (and their results).
  d.comb_offsets.resize(static_cast<std::size_t>(d.comb_loops));
  for (auto &offset : d.comb_offsets) offset = rng() & g.mask;
  return d;
}

uint64_t hashing_base(const Design &d, std::size_t h) {
  std::size_t per_loop = static_cast<std::size_t>(d.geom.hashings_per_loop);
  std::size_t location_hashings = static_cast<std::size_t>(d.location_loops) * per_loop;
  if (h < location_hashings) {
    const LoopParams &lp = d.loops[h / per_loop];
    uint64_t shift = hashing_shift(d.geom, static_cast<int>(h % per_loop));
    return (lp.sigma * shift + lp.tau) & d.geom.mask;
  }
  return d.loops[static_cast<std::size_t>(d.location_loops) + (h - location_hashings)].tau;
}

}  // namespace sfft::sparse
