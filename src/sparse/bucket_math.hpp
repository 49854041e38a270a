// SPDX-License-Identifier: Apache-2.0
// Per-bucket arithmetic of the sparse FFT, shared verbatim by the CPU backend (cpu.cpp) and the CUDA
// kernels (cuda.cu): locating the one coefficient a bucket holds, checking that it really is one, and
// the filter response used to estimate and subtract values.
//
// Hashing model (see plan.hpp): for loop l with odd sigma and offset tau, hashing h of that loop with
// shift s (in permuted-time units) produces B buckets
//     Z[b] = sum_g X[g] w^(g tau) w^(u s) G(u - bL),   u = sigma g mod n,  L = n/B,  w = e^(2 pi i/n),
// where G is the flat window's frequency response (~1 for |d| <= L/2, < tolerance for |d| >= L).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/host_device.hpp"

namespace sfft::sparse {

// Minimal complex type usable on host and device; layout-compatible with std::complex and cuFFT types.
template <class Real>
struct Cplx {
  Real re, im;
};

template <class Real>
SFFT_HD Cplx<double> widen(Cplx<Real> z) {
  return {static_cast<double>(z.re), static_cast<double>(z.im)};
}
SFFT_HD Cplx<double> cmul(Cplx<double> a, Cplx<double> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
SFFT_HD Cplx<double> cmul_conj(Cplx<double> a, Cplx<double> b) {  // a * conj(b)
  return {a.re * b.re + a.im * b.im, a.im * b.re - a.re * b.im};
}
SFFT_HD double cabs2(Cplx<double> a) { return a.re * a.re + a.im * a.im; }

// Scale-safe magnitudes (plan.hpp's normalise): the binary exponent of a largest component, biased so that
// 0 stands for "all zero" and unsigned maxima (atomicMax on the GPU) order like the exponents; and the shift
// 2^shift that brings a value of that exponent into [0.5, 1), within +-(max_exponent - 1) so that both
// 2^shift (in Real) and the results' unscale 2^-shift stay finite (a value near the top of the range then
// lands in [1, 2)).
constexpr int kExponentBias = 2048;
SFFT_HD unsigned biased_exponent(double largest) {
  if (!(largest > 0)) return 0;
  int exponent = 0;
  frexp(largest, &exponent);  // largest = m 2^exponent, m in [0.5, 1)
  return static_cast<unsigned>(exponent + kExponentBias);
}
template <class Real>
SFFT_HD int normalising_shift(unsigned biased) {
  constexpr int kLargestShift = sizeof(Real) == 8 ? 1023 : 127;  // max_exponent - 1
  const int shift = biased == 0 ? 0 : kExponentBias - static_cast<int>(biased);
  return shift < -kLargestShift ? -kLargestShift : shift > kLargestShift ? kLargestShift : shift;
}
SFFT_HD double floor_hd(double x) { return floor(x); }

// A window's frequency response G(d) at offset d from a bucket centre (even in d), as piecewise polynomials
// over |d| <= L: piece i covers |d| * scale in [i, i + 1], its kResponseTerms coefficients (highest power
// first) are in the local variable x = 2 (|d| scale - i) - 1 in [-1, 1]. filter.cpp fits them to the exact
// response of the window's taps; the table lives in host memory for the CPU backend and in device memory
// for the kernels (the CUDA engine's copy of the geometry points there).
constexpr int kResponseTerms = 13;
struct ResponseFit {
  const double *coeffs = nullptr;  // pieces * kResponseTerms
  double scale = 0;                // pieces / L
  int pieces = 0;
};

// Everything a bucket decoder needs, copied by value into kernels (its only pointers: the response tables).
// n = B L with B even; n, B and L need not be powers of two: then n < 2^32 (mod_n() and mul_mod() below).
struct Geometry {
  uint64_t n = 0;
  uint64_t mask = 0;          // n - 1 when n is a power of two, else 0 (arithmetic mod n by remainders)
  uint64_t buckets = 0;       // B (even, 2 <= B <= n/2, B divides n; a power of two when n is one)
  uint64_t width = 0;         // L = n / B
  int log2_width = 0;         // ceil(log2 L): the offset bits the location stages resolve (log2 L when mask != 0)
  int stages = 0;             // S: location stages per location loop
  int bits_per_stage = 0;     // q
  int hashings_per_loop = 0;  // 1 (reference) + S (location) + 1 (check) for location loops
  uint64_t check_shift = 0;   // shift of the check hashing (random, odd, inside the window's span)
  double consistency = 0;     // eta: max |Z_s - Z_0 w^(us)| / |Z_0| for a bucket to hold a single coefficient
  ResponseFit response;       // the window's frequency response (filter.cpp)
  // ROBUST: location stages first_far_stage..S (0 = none), whose shifts lie beyond the reference's span,
  // use a coarser window (same passband, tolerance kFarStageTolerance): they only need a phase, and read
  // their own samples, so fewer taps pay off there.
  int first_far_stage = 0;
  ResponseFit far_response;
  // Derived (set_derived_terms), so that the decoders carry no divisions: 1/n and 1/(2L), both exact when
  // n is a power of two; B - 1 and log2 B when B is a power of two (else 0); for the other cases the
  // reciprocals floor((2^64 - 1) / d) of d = n, L, B for integer remainders and quotients (quotient_by()).
  double inv_n = 0;
  double inv_two_width = 0;
  uint64_t bucket_mask = 0;
  int log2_buckets = 0;
  uint64_t n_reciprocal = 0, width_reciprocal = 0, buckets_reciprocal = 0;
};

// Fills the derived terms of g from n, B and L.
inline void set_derived_terms(Geometry &g) {
  g.inv_n = 1.0 / static_cast<double>(g.n);
  g.inv_two_width = 1.0 / (2.0 * static_cast<double>(g.width));
  g.bucket_mask = (g.buckets & (g.buckets - 1)) == 0 ? g.buckets - 1 : 0;
  g.log2_buckets = 0;
  while (g.bucket_mask != 0 && (uint64_t{1} << g.log2_buckets) < g.buckets) ++g.log2_buckets;
  g.n_reciprocal = ~uint64_t{0} / g.n;
  g.width_reciprocal = ~uint64_t{0} / g.width;
  g.buckets_reciprocal = ~uint64_t{0} / g.buckets;
}

// High 64 bits of a * b.
SFFT_HD uint64_t mul_high(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  __extension__ typedef unsigned __int128 Wide;
  return static_cast<uint64_t>((static_cast<Wide>(a) * b) >> 64);
#endif
}

// floor(x / d) for 1 <= d < 2^32 from reciprocal = floor((2^64 - 1) / d), without a division (Barrett): the
// estimate mul_high(x, reciprocal) is at most one short, which the remainder reveals.
SFFT_HD uint64_t quotient_by(uint64_t x, uint64_t d, uint64_t reciprocal) {
  const uint64_t q = mul_high(x, reciprocal);
  return x - q * d >= d ? q + 1 : q;
}
SFFT_HD uint64_t remainder_by(uint64_t x, uint64_t d, uint64_t reciprocal) {
  const uint64_t r = x - mul_high(x, reciprocal) * d;
  return r >= d ? r - d : r;
}

// Arithmetic modulo n: a mask when n is a power of two (the operands may then be any 64-bit values, since
// 2^64 is a multiple of n), else Barrett remainders of operands reduced first; n < 2^32 keeps their
// products in 64 bits. The branch is uniform (the CUDA kernels resolve it at compile time).
SFFT_HD uint64_t mod_n(uint64_t x, const Geometry &g) {
  return g.mask != 0 ? x & g.mask : remainder_by(x, g.n, g.n_reciprocal);
}
SFFT_HD uint64_t mul_mod(uint64_t a, uint64_t b, const Geometry &g) {
  return g.mask != 0 ? (a * b) & g.mask : mod_n(mod_n(a, g) * mod_n(b, g), g);
}
SFFT_HD uint64_t add_mod(uint64_t a, uint64_t b, const Geometry &g) {
  return g.mask != 0 ? (a + b) & g.mask : mod_n(mod_n(a, g) + mod_n(b, g), g);
}
// x mod B: a mask when B is a power of two, else a Barrett remainder.
SFFT_HD uint64_t mod_b(uint64_t x, const Geometry &g) {
  return g.bucket_mask != 0 ? x & g.bucket_mask : remainder_by(x, g.buckets, g.buckets_reciprocal);
}
// floor(x / B): a shift when B is a power of two, else a Barrett quotient.
SFFT_HD uint64_t div_b(uint64_t x, const Geometry &g) {
  return g.bucket_mask != 0 ? x >> g.log2_buckets : quotient_by(x, g.buckets, g.buckets_reciprocal);
}
// (base + sigma t) mod n for a signed tap t (base reduced).
SFFT_HD uint64_t tap_index(uint64_t base, uint64_t sigma, int64_t t, const Geometry &g) {
  if (g.mask != 0) return (base + sigma * static_cast<uint64_t>(t)) & g.mask;
  const uint64_t step = mul_mod(sigma, static_cast<uint64_t>(t < 0 ? -t : t), g);
  return mod_n(t < 0 ? base + g.n - step : base + step, g);
}
// index + step mod n for index, step < n (the folds' inner loops: no remainder).
SFFT_HD uint64_t advance_index(uint64_t index, uint64_t step, const Geometry &g) {
  index += step;
  return index >= g.n ? index - g.n : index;
}

struct LoopParams {
  uint64_t sigma = 1, sigma_inv = 1, tau = 0;
};

// Shift of location stage r (1-based): m_r * B/2 with m_r = 2^((r-1) q); stage 1 reveals u mod 2L.
SFFT_HD uint64_t stage_shift(const Geometry &g, int r) { return (g.buckets / 2) << ((r - 1) * g.bits_per_stage); }

// Shift of hashing h (0 = reference, 1..S = location stages, S+1 = check) of a location loop.
SFFT_HD uint64_t hashing_shift(const Geometry &g, int h) {
  if (h == 0) return 0;
  if (h <= g.stages) return stage_shift(g, h);
  return g.check_shift;
}

// w^m for an integer phase m (mod n), evaluated in double: m/n is exact (n a power of two) or within an
// ulp, so the angle is good to about 1 ulp.
SFFT_HD Cplx<double> root_of_unity(uint64_t m, const Geometry &g) {
  double turns = static_cast<double>(mod_n(m, g)) * g.inv_n;
#if defined(__CUDA_ARCH__)
  double s, c;
  sincospi(2.0 * turns, &s, &c);
  return {c, s};
#else
  double angle = 6.283185307179586476925286766559 * turns;
  return {std::cos(angle), std::sin(angle)};
#endif
}

// Whether hashing h of a location loop uses the coarse window of the far location stages.
SFFT_HD bool uses_far_window(const Geometry &g, int h) {
  return g.first_far_stage > 0 && h >= g.first_far_stage && h <= g.stages;
}

// G(d) for |d| <= L (the only offsets the decoders ask for: a home bucket or its neighbour); 0 beyond,
// where the window leaks less than its tolerance, and for NaN.
SFFT_HD double filter_response(double d, const ResponseFit &fit) {
  double position = fabs(d) * fit.scale;
  if (!(position <= static_cast<double>(fit.pieces))) return 0.0;
  int piece = static_cast<int>(position);
  piece = piece < fit.pieces ? piece : fit.pieces - 1;
  double x = 2.0 * (position - static_cast<double>(piece)) - 1.0;
  const double *c = fit.coeffs + static_cast<std::ptrdiff_t>(piece) * kResponseTerms;
#if defined(__CUDA_ARCH__)
  double acc = __ldg(c);
  for (int j = 1; j < kResponseTerms; ++j) acc = fma(acc, x, __ldg(c + j));
#else
  double acc = c[0];
  for (int j = 1; j < kResponseTerms; ++j) acc = std::fma(acc, x, c[j]);
#endif
  return acc;
}
SFFT_HD double filter_response(double d, const Geometry &g) { return filter_response(d, g.response); }

// Home bucket of permuted frequency u (nearest centre) and the signed offset from that centre.
SFFT_HD uint64_t home_bucket(uint64_t u, const Geometry &g, int64_t *offset) {
  const uint64_t centred = u + g.width / 2;
  uint64_t b = mod_b(g.mask != 0 ? centred >> g.log2_width : quotient_by(centred, g.width, g.width_reciprocal), g);
  uint64_t diff = mod_n(u + g.n - b * g.width, g);
  *offset = diff >= g.n / 2 ? static_cast<int64_t>(diff) - static_cast<int64_t>(g.n) : static_cast<int64_t>(diff);
  return b;
}

// Where coefficient freq lands in the hashings of one loop: its permuted frequency u, its home bucket and
// the neighbour its window overlaps (further buckets receive less than the filter tolerance), and its
// offsets from their centres, at which the window's response gives each bucket's gain. Integers only.
struct Placement {
  uint64_t u, home, neighbour;
  double home_d, neighbour_d;
};
SFFT_HD Placement placement(uint64_t freq, const LoopParams &lp, const Geometry &g) {
  Placement p{};
  int64_t offset = 0;
  p.u = mul_mod(lp.sigma, freq, g);
  p.home = home_bucket(p.u, g, &offset);
  p.neighbour = mod_b(p.home + (offset >= 0 ? 1 : g.buckets - 1), g);
  double width = static_cast<double>(g.width);
  p.home_d = static_cast<double>(offset);
  p.neighbour_d = p.home_d + (offset >= 0 ? -width : width);
  return p;
}

// The phase m of the contribution of coefficient freq (permuted frequency u in loop lp) to hashing j of that
// loop, w^m = w^(freq tau + u s_j): shared by its home and neighbour buckets there.
SFFT_HD uint64_t contribution_phase(uint64_t freq, uint64_t u, const LoopParams &lp, int j, const Geometry &g) {
  return add_mod(mul_mod(freq, lp.tau, g), mul_mod(u, hashing_shift(g, j), g), g);
}

// A placement with its buckets' filter gains (the far stages' gains only when some of the loop's `hashings`
// use that window). Depends on the frequency alone, so a decoder can evaluate it while it still checks the
// value.
struct Landing : Placement {
  double home_gain, neighbour_gain, far_home_gain, far_neighbour_gain;
};
SFFT_HD Landing landing(uint64_t freq, const LoopParams &lp, int hashings, const Geometry &g) {
  Landing s{};
  static_cast<Placement &>(s) = placement(freq, lp, g);
  s.home_gain = filter_response(s.home_d, g);
  s.neighbour_gain = filter_response(s.neighbour_d, g);
  bool far = g.first_far_stage > 0 && hashings > g.first_far_stage;
  s.far_home_gain = far ? filter_response(s.home_d, g.far_response) : 0.0;
  s.far_neighbour_gain = far ? filter_response(s.neighbour_d, g.far_response) : 0.0;
  return s;
}

// Calls sub(j, bucket, c) with the contribution c of coefficient (freq, value), landing `at` in loop lp, to
// its home and neighbour buckets of hashing j. The phase w^(freq tau + u s_j) is shared by both buckets of
// hashing j, each bucket's gain by all hashings.
template <class Sub>
SFFT_HD void contribution(const Landing &at, uint64_t freq, Cplx<double> value, const LoopParams &lp, int j,
                          const Geometry &g, Sub &&sub) {
  Cplx<double> r = cmul(value, root_of_unity(contribution_phase(freq, at.u, lp, j, g), g));
  bool far_j = uses_far_window(g, j);
  double hg = far_j ? at.far_home_gain : at.home_gain, ng = far_j ? at.far_neighbour_gain : at.neighbour_gain;
  sub(j, at.home, Cplx<double>{r.re * hg, r.im * hg});
  sub(j, at.neighbour, Cplx<double>{r.re * ng, r.im * ng});
}
// The same for hashings j = 0..hashings-1.
template <class Sub>
SFFT_HD void for_each_contribution(const Landing &at, uint64_t freq, Cplx<double> value, const LoopParams &lp,
                                   int hashings, const Geometry &g, Sub &&sub) {
  for (int j = 0; j < hashings; ++j) contribution(at, freq, value, lp, j, g, sub);
}
template <class Sub>
SFFT_HD void for_each_contribution(uint64_t freq, Cplx<double> value, const LoopParams &lp, int hashings,
                                   const Geometry &g, Sub &&sub) {
  for_each_contribution(landing(freq, lp, hashings, g), freq, value, lp, hashings, g, sub);
}

// Value estimate of coefficient `freq` from the reference hashing bucket z0 (offset d from the centre):
// z0 w^(-freq tau) / G(d). The phase, and the estimate given its root of unity and the gain, are separate so
// that a decoder can evaluate the root and the gain side by side (cuda.cu's peel kernel).
SFFT_HD uint64_t estimate_phase(uint64_t freq, const LoopParams &lp, const Geometry &g) {
  return mul_mod(freq, lp.tau, g);
}
SFFT_HD Cplx<double> estimate_from(Cplx<double> z0, Cplx<double> root, double gain) {
  Cplx<double> r = cmul_conj(z0, root);
  double inv_gain = 1.0 / gain;
  return {r.re * inv_gain, r.im * inv_gain};
}
SFFT_HD Cplx<double> estimate(Cplx<double> z0, uint64_t freq, const LoopParams &lp, double d, const Geometry &g) {
  return estimate_from(z0, root_of_unity(estimate_phase(freq, lp, g), g), filter_response(d, g));
}

// |value|^2 of a coefficient as it is returned (rounded to the output precision Real): both backends order
// their output by it, so the order holds for what the caller reads.
template <class Real>
SFFT_HD double returned_magnitude2(Cplx<double> v) {
  double re = static_cast<Real>(v.re), im = static_cast<Real>(v.im);
  return re * re + im * im;
}

// EXACT, last location loop: bucket z0 (reference hashing) holds energy that no decoded coefficient explains.
SFFT_HD bool unexplained(Cplx<double> z0, bool decoded, double rms, const Geometry &g) {
  double limit = g.consistency * rms;
  return !decoded && cabs2(z0) > limit * limit;
}

// ROBUST under noise (docs/sparse-noise.md). nu is the noise energy per bucket, measured from the buckets
// themselves (plan.hpp's noise_energy). A location bucket decodes only when |z_0|^2 > kNoiseDetect nu (a lone
// coefficient at bucket SNR 7 dB stays above it 99 % of the time), and a lone coefficient's hashings may
// mismatch its prediction by kNoiseConsistency nu: their mismatch is exponential with mean ~2 nu, so each of
// the S + 1 checks rejects it with probability e^-6 (0.25 %).
constexpr double kNoiseDetect = 0.5;
constexpr double kNoiseConsistency = 12.0;
constexpr double kNoiseRelative = 1.5;
// The report: a returned coefficient is significant when |X|^2 > kSignificant nu (a median over the loops of
// pure noise stays below it but for ~e^-10); a residual bucket is an outlier above kOutlier nu (e^-18: 5e-4
// false outliers per exec over 8 loops of 4096 buckets; 12.5 flagged a right answer in ~10 % of the execs).
constexpr double kSignificant = 4.0;
constexpr double kOutlier = 18.0;
constexpr double kLn2 = 0.69314718055994530942;
// Residual energy more than kExcess times what the noise floor accounts for is unexplained too (many small
// leftovers, none an outlier alone).
constexpr double kExcess = 1.5;
SFFT_HD double noise_robust_limit2(double nu) { return kNoiseConsistency * nu; }

// ROBUST soft votes: a find counts kStrongVotes votes when its bucket stands out of the noise, |z_0|^2 >=
// kStrongFind nu, else one; a frequency with min_votes votes becomes a candidate. At 3 dB a lone unit tone
// (|z_0|^2 ~ 5.5 nu) is located in ~60 % of the loops, so 2 finds of 6 lose ~4 % of the tones; one strong find
// keeps them. A bucket of noise alone reaches kStrongFind nu and passes its checks in ~2 % of the cases, a
// random frequency that only fills slots beyond the true support (its median estimate is ~ noise).
constexpr double kStrongFind = 4.0;
constexpr unsigned kStrongVotes = 2;
SFFT_HD unsigned find_votes(double mag2, double nu) { return nu > 0 && mag2 >= kStrongFind * nu ? kStrongVotes : 1u; }

// Bucket energies are compared at the resolution of a digit: |z|^2 rounded to float, its bits over 2^19 (the
// exponent and 4 mantissa bits, ~4 % wide; non-negative floats order like their bits), so that the CUDA
// backend's histogram of digits and the CPU's exact median land on the same digit, whose midpoint both take.
constexpr int kNoiseDigitShift = 19;
constexpr unsigned kNoiseDigits = 1u << 12;
constexpr unsigned kNoiseDigitInf = 0x7f800000u >> kNoiseDigitShift;  // Inf and NaN from here on
SFFT_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
#endif
}
SFFT_HD float bits_float(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}
SFFT_HD unsigned noise_digit(double mag2) {
  const float f = static_cast<float>(mag2);
  return f > 0 ? float_bits(f) >> kNoiseDigitShift : f == 0 ? 0u : kNoiseDigitInf;  // NaN: not > 0, not 0
}
SFFT_HD double digit_value(unsigned digit) {
  if (digit >= kNoiseDigitInf) return HUGE_VAL;
  const double lower = bits_float(digit << kNoiseDigitShift), upper = bits_float((digit + 1) << kNoiseDigitShift);
  return 0.5 * (lower + upper);
}
// A residual bucket counts as an outlier (energy the answer leaves unexplained) above this, given the noise
// per bucket nu and the mean reference energy per loop (the variant's accuracy times the signal bounds what
// the value errors of a right answer leave).
SFFT_HD double outlier_limit2(double accuracy, double nu, double loop_energy) {
  const double noise = kOutlier * nu, accurate = accuracy * accuracy * loop_energy;
  return noise > accurate ? noise : accurate;
}
// nu from the digit of the median bucket energy.
SFFT_HD double noise_from_median_digit(unsigned digit) { return digit_value(digit) / kLn2; }
SFFT_HD double noise_floor_magnitude(double nu) { return sqrt(kNoiseDetect * nu); }

// Comb pre-pass: the selection key of bin r with |bin|^2 = mag2 (finite, >= 0). |bin|^2 rounded to float
// fills the high half (non-negative floats order like their bits) and ~r the low half, so keys are distinct
// and equal magnitudes prefer the smaller residue: both backends approve the comb_keep largest keys.
SFFT_HD uint64_t comb_key(double mag2, uint64_t r) {
  float m = static_cast<float>(mag2);
#if defined(__CUDA_ARCH__)
  uint32_t bits = __float_as_uint(m);
#else
  uint32_t bits = 0;
  std::memcpy(&bits, &m, sizeof bits);
#endif
  return (static_cast<uint64_t>(bits) << 32) | (0xffffffffu - static_cast<uint32_t>(r));
}

// Whether residue r is set in an approval bitmap of 32-bit words.
SFFT_HD bool comb_approved(const uint32_t *bitmap, uint64_t r) { return (bitmap[r >> 5] >> (r & 31)) & 1u; }

struct Decoded {
  bool found;
  uint64_t freq;  // the located frequency: the coefficient when found, else the candidate the checks
                  // rejected (0 when the bucket is below the floor or its phases located none)
  Cplx<double> value;
  bool consistent;   // one coefficient explains every hashing (its home may be a neighbouring bucket)
  double mismatch2;  // consistent: max over the shifted hashings of |z_h - that coefficient's prediction|^2
};

// EXACT early stop. Bucket z0 of a location loop is settled when it holds one coefficient that every
// hashing matches to within settle * rms, or less than settle * rms: a coefficient still hiding there (a
// small one under a larger one, or a collision of small ones) is below the accuracy the variant promises.
// A loop whose buckets are all settled leaves nothing for the later loops to find: a lone coefficient seen
// from a neighbouring bucket is decoded in its home bucket, which is settled only if it holds it alone.
SFFT_HD bool settled(Cplx<double> z0, const Decoded &d, double rms, double settle) {
  double limit = settle * rms;
  return (d.consistent ? d.mismatch2 : cabs2(z0)) <= limit * limit;
}

// The first half of decode_bucket: the frequency bucket b's phases point to. valid = false when |z[0]| is
// not above min_magnitude (or NaN) or the phases locate no offset within one bucket width.
struct Location {
  bool valid;
  double d;       // offset from the bucket's centre, an integer in [-L, L)
  uint64_t u;     // permuted frequency
  uint64_t freq;  // its frequency
  double mag2;    // |z[0]|^2
};
template <class Load>
SFFT_HD Location locate_bucket(uint64_t b, Load &&z, const LoopParams &lp, double min_magnitude, const Geometry &g) {
  Location at{false, 0, 0, 0, 0};
  Cplx<double> z0 = z(0);
  at.mag2 = cabs2(z0);
  if (!(at.mag2 > min_magnitude * min_magnitude)) return at;  // also rejects NaN
  const double inv_two_pi = 0.15915494309189533577;
  const double two_l = 2.0 * static_cast<double>(g.width);
  double d_hat = 0;
  for (int r = 1; r <= g.stages; ++r) {
    Cplx<double> ratio = cmul_conj(z(r), z0);
    double turns = atan2(ratio.im, ratio.re) * inv_two_pi;
    double m = static_cast<double>(uint64_t{1} << ((r - 1) * g.bits_per_stage));
    if (r == 1 && (b & 1)) turns -= 0.5;       // stage 1 phase also carries b*m/2 turns
    double v = turns - floor_hd(turns + 0.5);  // d*m/(2L) mod 1, in [-0.5, 0.5)
    if (r == 1) {
      d_hat = v * two_l;
    } else {  // m is a power of two (its reciprocal exact), 1/(2L) exact or within an ulp
      double predicted = d_hat * m * g.inv_two_width;
      double wraps = floor_hd(predicted - v + 0.5);
      d_hat = (v + wraps) * two_l * (1.0 / m);
    }
  }
  double d_round = floor_hd(d_hat + 0.5);
  double width = static_cast<double>(g.width);
  if (!(d_round >= -width && d_round < width)) return at;  // also rejects NaN phases
  at.valid = true;
  at.d = d_round;
  const int64_t d_int = static_cast<int64_t>(d_round);
  at.u = mod_n(b * g.width + (d_int < 0 ? g.n - static_cast<uint64_t>(-d_int) : static_cast<uint64_t>(d_int)), g);
  at.freq = mul_mod(lp.sigma_inv, at.u, g);
  return at;
}

// |z_h - z_0 w^(u s_h)|^2: how far location hashing h is from what one coefficient at u predicts (the phase
// u s_h, and the mismatch given its root of unity, separate as for estimate()).
SFFT_HD uint64_t check_phase(uint64_t u, int h, const Geometry &g) { return mul_mod(u, hashing_shift(g, h), g); }
SFFT_HD double mismatch2_from(Cplx<double> z0, Cplx<double> zh, Cplx<double> root) {
  Cplx<double> predicted = cmul(z0, root);
  return cabs2(Cplx<double>{zh.re - predicted.re, zh.im - predicted.im});
}
SFFT_HD double hashing_mismatch2(Cplx<double> z0, Cplx<double> zh, uint64_t u, int h, const Geometry &g) {
  return mismatch2_from(z0, zh, root_of_unity(check_phase(u, h, g), g));
}

// The second half of decode_bucket: what a located bucket holds, given whether every shifted hashing
// matched (and the worst mismatch) and the estimate of its value.
SFFT_HD Decoded decoded_from(const Location &at, bool consistent, double mismatch2, Cplx<double> value,
                             const Geometry &g) {
  Decoded out{false, at.valid ? at.freq : 0, {0, 0}, false, 0};
  if (!at.valid || !consistent) return out;
  out.consistent = true;
  out.mismatch2 = mismatch2;
  double width = static_cast<double>(g.width);
  if (at.d < -0.5 * width || at.d >= 0.5 * width) return out;  // its home is a neighbouring bucket
  out.value = value;
  out.found = true;
  return out;
}

// Decodes bucket b of a location loop from its hashings z[0..S+1] (reference, S stages, check).
// Found when |z[0]| exceeds min_magnitude and all hashings agree with one coefficient whose home
// bucket is b; then freq is its frequency and value its estimate.
// noise_limit2 (ROBUST under noise, 0 otherwise): a mismatch up to it is accepted whatever |z[0]| is. Noise
// of energy nu per bucket moves a lone coefficient's hashings by |z_h - z_0 w|^2 ~ 2 nu (exponentially
// distributed), which the relative bound eta |z_0| alone rejects at low SNR (at 10 dB and B = 4k, 60 % of
// the lone coefficients failed one of their 5 checks): noise_robust_limit2() scales the bound with nu.
template <class Load>
SFFT_HD Decoded decode_bucket(uint64_t b, Load &&z, const LoopParams &lp, double min_magnitude, const Geometry &g,
                              double noise_limit2 = 0) {
  const Location at = locate_bucket(b, z, lp, min_magnitude, g);
  if (!at.valid) return decoded_from(at, false, 0, {0, 0}, g);
  // The checks and the estimate are independent FP64 chains: evaluated without early exits, so that
  // they overlap (the decoders are latency-bound on the GPU).
  Cplx<double> z0 = z(0);
  double limit2 = g.consistency * g.consistency * at.mag2;
  // A bucket of noise alone (|z_0|^2 ~ nu) must not pass on the noise bound: it is capped at
  // kNoiseRelative |z_0|^2, which a lone coefficient at bucket SNR 7 dB (|z_0|^2 ~ 5 nu) does not reach.
  const double noise_bound2 = noise_limit2 < kNoiseRelative * at.mag2 ? noise_limit2 : kNoiseRelative * at.mag2;
  limit2 = limit2 > noise_bound2 ? limit2 : noise_bound2;
  double mismatch2 = 0;
  bool consistent = true;
  for (int h = 1; h <= g.stages + 1; ++h) {
    double diff2 = hashing_mismatch2(z0, z(h), at.u, h, g);
    consistent = consistent && diff2 <= limit2;  // false for NaN
    mismatch2 = diff2 > mismatch2 ? diff2 : mismatch2;
  }
  return decoded_from(at, consistent, mismatch2, estimate(z0, at.freq, lp, at.d, g), g);
}

}  // namespace sfft::sparse
