// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the sparse FFT (sfft_create/_ex, sfft_exec, sfft_exec_batch, sfft_destroy): arbitrary n (powers
// of two, 3, 5 or 7 times one, others, 0, beyond 2^40), k, dtype, knobs (variant, tolerances, loop counts as any int /
// double, including NaN and Inf; the comb pre-pass's loops, width and keep), options, output capacities, and
// signals that are exactly sparse, noisy, or carry a NaN/Inf sample. A successful exec must return at most
// min(k, capacity) distinct in-range frequencies, ordered by decreasing magnitude, with finite values close to
// the exact DFT at those frequencies, the same on every exec and through sfft_exec_batch; a failure must write nothing
// but the documented *count (the capacity needed).
#include "fuzz_support.hpp"

namespace {

using namespace sfft_fuzz;

constexpr uint64_t kMaxExecN = uint64_t{1} << 13;  // signals the harness builds and checks directly

uint64_t fuzz_n(Input &in) {
  uint8_t mode = in.byte();
  if (mode < 232) return uint64_t{1} << (2 + mode % 12);  // 4 .. 8192
  static const uint64_t special[] = {0,
                                     1,
                                     3,
                                     1000,
                                     8191,
                                     uint64_t{1} << 41,
                                     uint64_t{1} << 63,
                                     std::numeric_limits<uint64_t>::max(),
                                     3 * (uint64_t{1} << 32)};
  constexpr unsigned kSpecial = sizeof special / sizeof special[0];
  mode -= 232;
  if (mode < kSpecial) return special[mode];
  return (uint64_t{3} + 2 * (mode % 3)) << (4 + mode % 8);  // 3, 5 or 7 x 2^4 .. 2^11
}

// Whether filter.cpp finds a bucket count for `wanted` = factor * k: an even divisor of n in [wanted, n/2],
// or any even divisor <= n/2 once wanted > n/2.
bool has_buckets(uint64_t n, uint64_t wanted) {
  if (wanted > n / 2) return n >= 4;
  for (uint64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    for (uint64_t b : {d, n / d})
      if (b % 2 == 0 && b >= wanted && b <= n / 2) return true;
  }
  return false;
}

// Whether default knobs plan n: a power of two, or an even n < 2^32 with a bucket count for EXACT's default
// (2k; ROBUST's default takes it where 4k has none, so AUTO's two stages exist together).
bool default_plannable(uint64_t n, uint64_t k) {
  if ((n & (n - 1)) == 0) return true;
  return n < (uint64_t{1} << 32) && n % 2 == 0 && has_buckets(n, 2 * k);
}

template <class Real>
void exec_and_check(Input &in, sfft_plan plan, uint64_t n, uint64_t k) {
  using C = std::complex<Real>;
  // The spectrum: k0 <= k + 1 planted coefficients (one more than k sometimes), optional noise.
  const uint64_t k0 = static_cast<uint64_t>(in.in_range(0, static_cast<int64_t>(std::min<uint64_t>(k + 1, 64))));
  std::vector<uint64_t> where(k0);
  std::vector<std::complex<double>> what(k0);
  for (uint64_t j = 0; j < k0; ++j) {
    where[j] = in.take<uint32_t>() % n;
    what[j] = std::polar(0.5 + in.byte() / 255.0, 6.283185307179586 * in.byte() / 256.0);
  }
  const double noise = in.byte() < 192 ? 0.0 : 1e-3 * (1 + in.byte() % 100);
  std::vector<std::complex<long double>> xl(n);
  const long double two_pi = 6.283185307179586476925286766559005768L;
  for (uint64_t t = 0; t < n; ++t) {
    std::complex<long double> acc = 0;
    for (uint64_t j = 0; j < k0; ++j) {
      long double ph = two_pi * static_cast<long double>((where[j] * t) % n) / n;
      acc += std::complex<long double>(what[j].real(), what[j].imag()) *
             std::complex<long double>(std::cos(ph), std::sin(ph));
    }
    xl[t] = acc / static_cast<long double>(n);
  }
  std::vector<C> x(n);
  uint64_t state = in.take<uint64_t>() | 1;
  // One signal in eight (by the noise seed's top bits, so earlier inputs keep their bytes) is scaled by 2^s far
  // from 1: results must scale with it (magnitudes squared in double would overflow or underflow), s such that
  // the windowed samples stay normal numbers of the type.
  const int lowest = sizeof(Real) == 8 ? -800 : -60, highest = sizeof(Real) == 8 ? 900 : 100;
  const int s =
      (state >> 61) == 7 ? lowest + static_cast<int>((state >> 32) % static_cast<uint64_t>(highest - lowest + 1)) : 0;
  const long double scale = std::ldexp(1.0L, s);
  for (uint64_t t = 0; t < n; ++t) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double e =
        noise * (static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5) / std::sqrt(static_cast<double>(n));
    x[t] = C(static_cast<Real>((xl[t].real() + e) * scale), static_cast<Real>((xl[t].imag() - e) * scale));
  }
  const uint8_t poison_mode = in.byte();
  if (poison_mode >= 240) {
    const Real bad[] = {std::numeric_limits<Real>::quiet_NaN(), std::numeric_limits<Real>::infinity()};
    x[in.take<uint32_t>() % n] = C(bad[poison_mode % 2], 0);
  }

  const uint64_t capacity = in.byte() < 200 ? k : static_cast<uint64_t>(in.in_range(0, static_cast<int64_t>(k) + 2));
  Poisoned freqs(capacity * sizeof(uint64_t)), values(capacity * sizeof(C));
  uint64_t count = capacity;
  sfft_status st = sfft_exec(plan, x.data(), static_cast<uint64_t *>(freqs.get()), values.get(), &count);
  if (st != SFFT_SUCCESS) {
    check_failure(st, "sfft_exec", {&freqs, &values});
    check(st == SFFT_ERROR_INVALID_ARGUMENT, std::string("sfft_exec: unexpected status ") + sfft_status_string(st));
    const bool capacity_short = count > capacity;
    check(count == capacity || capacity_short, "sfft_exec failed and changed *count without a larger need");
    check(capacity_short || poison_mode >= 240, "sfft_exec failed on a finite signal with enough capacity");
    return;
  }
  check_success_clean("sfft_exec");
  check(count <= capacity && count <= k, "sfft_exec returned more coefficients than the capacity or k");
  const auto *f = static_cast<const uint64_t *>(freqs.get());
  const auto *v = static_cast<const C *>(values.get());
  // Exact DFT at the returned frequencies, and the energy of the whole spectrum for the error scale.
  long double energy = 0;
  for (uint64_t t = 0; t < n; ++t) energy += std::norm(std::complex<long double>(x[t].real(), x[t].imag()));
  const double spectrum_norm =
      static_cast<double>(std::sqrt(energy * n));  // squares of scaled signals need long double
  // The algorithm is randomised: on the rare trial where it fails (rates are measured in sparse_test), an
  // estimate may be off by a colliding coefficient. So values are held to within half the spectrum's norm
  // of the exact DFT, which still catches wrong scaling, wrong frequencies' values and garbage memory.
  const double bound = 0.5 * spectrum_norm + 1e-6 * static_cast<double>(scale);
  for (uint64_t i = 0; i < count; ++i) {
    check(f[i] < n, "sfft_exec returned a frequency >= n");
    for (uint64_t j = 0; j < i; ++j) check(f[j] != f[i], "sfft_exec returned a frequency twice");
    check(std::isfinite(v[i].real()) && std::isfinite(v[i].imag()), "sfft_exec returned a non-finite value");
    if (i > 0)
      check(std::abs(v[i]) <= std::abs(v[i - 1]) * (1 + 1e-6), "sfft_exec values are not ordered by magnitude");
    std::complex<long double> X = 0;
    for (uint64_t t = 0; t < n; ++t) {
      long double ph = -two_pi * static_cast<long double>((f[i] * t) % n) / n;
      X += std::complex<long double>(x[t].real(), x[t].imag()) * std::complex<long double>(std::cos(ph), std::sin(ph));
    }
    std::complex<double> exact(static_cast<double>(X.real()), static_cast<double>(X.imag()));
    check(std::abs(std::complex<double>(v[i].real(), v[i].imag()) - exact) <= bound,
          "sfft_exec value at frequency " + std::to_string(f[i]) + " is off the exact DFT by " +
              std::to_string(std::abs(std::complex<double>(v[i].real(), v[i].imag()) - exact)) + " (bound " +
              std::to_string(bound) + ")");
  }
  // A plan gives the same result on every exec.
  std::vector<uint64_t> f2(std::max<uint64_t>(capacity, 1));
  std::vector<C> v2(std::max<uint64_t>(capacity, 1));
  uint64_t count2 = capacity;
  check(sfft_exec(plan, x.data(), f2.data(), v2.data(), &count2) == SFFT_SUCCESS, "second sfft_exec failed");
  check(count2 == count && std::memcmp(f2.data(), f, count * sizeof(uint64_t)) == 0 &&
            std::memcmp(v2.data(), v, count * sizeof(C)) == 0,
        "sfft_exec is not deterministic for one plan");
  // sfft_exec_batch of two copies of the signal (x_dist = n + 1, a gap sample) gives each what sfft_exec gave:
  // the same frequencies, the values up to rounding (the batch may run on engines of its own).
  const uint64_t dist = std::max<uint64_t>(capacity, 1);
  std::vector<C> xs(2 * n + 1, C(0, 0));
  std::copy(x.begin(), x.end(), xs.begin());
  std::copy(x.begin(), x.end(), xs.begin() + static_cast<long>(n + 1));
  std::vector<uint64_t> fb(2 * dist), counts{capacity, capacity};
  std::vector<C> vb(2 * dist);
  sfft_status bst = sfft_exec_batch(plan, 2, xs.data(), n + 1, fb.data(), vb.data(), dist, counts.data());
  check(bst == SFFT_SUCCESS, std::string("sfft_exec_batch failed where sfft_exec succeeded: ") + sfft_last_error());
  std::vector<uint64_t> want(f, f + count);
  std::sort(want.begin(), want.end());
  const double largest = count > 0 ? std::abs(std::complex<double>(v[0].real(), v[0].imag())) : 0;
  for (uint64_t b = 0; b < 2; ++b) {
    check(counts[b] == count, "sfft_exec_batch found another number of coefficients than sfft_exec");
    std::vector<uint64_t> got(fb.begin() + static_cast<long>(b * dist),
                              fb.begin() + static_cast<long>(b * dist + count));
    std::sort(got.begin(), got.end());
    check(got == want, "sfft_exec_batch found other frequencies than sfft_exec");
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t j = static_cast<uint64_t>(std::find(f, f + count, fb[b * dist + i]) - f);
      const std::complex<double> d(vb[b * dist + i].real() - v[j].real(), vb[b * dist + i].imag() - v[j].imag());
      check(std::abs(d) <= (sizeof(Real) == 8 ? 1e-9 : 1e-3) * largest,
            "sfft_exec_batch value differs from sfft_exec's beyond rounding");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  Input in(data, size);
  const uint64_t n = fuzz_n(in);
  const uint64_t k = in.byte() < 224 ? 1 + in.take<uint16_t>() % std::max<uint64_t>(n / 4, 1) : in.size(64);
  const int dt = in.enumeration(0, 5);
  FuzzedOptions opts = fuzz_options(in);
  sfft_sparse_options knobs;
  sfft_sparse_options_init(&knobs);
  const bool with_knobs = in.flag();
  bool knobs_default = true;
  if (with_knobs && in.flag()) {
    knobs_default = false;
    in.enumeration_into(&knobs.variant, 0, 3);
    static const double tolerances[] = {0, 1e-12, 1e-6, 1e-3, 0.1, 0.2, -1, 1e-300};
    knobs.filter_tolerance = in.byte() < 240 ? tolerances[in.byte() % 8] : in.real(1.0);
    static const double factors[] = {0, 1, 2, 4, 8, 64, 0.5, 100};
    knobs.bucket_factor = in.byte() < 240 ? factors[in.byte() % 8] : in.real(100.0);
    knobs.location_loops = static_cast<int>(in.in_range(-1, 66));
    knobs.estimation_loops = static_cast<int>(in.in_range(-2, 66));
    knobs.bits_per_stage = static_cast<int>(in.in_range(-1, 32));
    knobs.min_votes = static_cast<int>(in.in_range(-1, 10));
    if (in.byte() < 16) knobs.struct_size = in.byte() % 2 ? 0 : 4;
    // The comb pre-pass (read last, so the seeds' earlier fields keep their bytes): mostly powers of two
    // for W, sometimes any size; keep and loops over and past their ranges.
    if (in.byte() >= 128) {
      knobs.comb_loops = static_cast<int>(in.in_range(-1, 17));
      const uint8_t width_mode = in.byte();
      knobs.comb_width = width_mode < 64 ? 0 : width_mode < 224 ? uint64_t{1} << (width_mode % 16) : in.size(1 << 14);
      knobs.comb_keep = in.byte() < 96 ? 0 : in.size(512);
    }
  }

  auto *const poison = reinterpret_cast<sfft_plan>(uintptr_t{0x5A5A5A5A});
  sfft_plan plan = poison;
  sfft_status st = fuzz_sfft_create_ex(&plan, n, k, dt, opts.get(), with_knobs ? &knobs : nullptr);
  const bool valid = n >= 16 && n <= (uint64_t{1} << 40) && k >= 1 && k <= n / 4 && default_plannable(n, k) &&
                     (dt == SFFT_COMPLEX64 || dt == SFFT_COMPLEX128) && opts.valid_cpu() && knobs_default;
  if (st != SFFT_SUCCESS) {
    check_failure(st, "sfft_create_ex", {});
    check(plan == poison, "sfft_create_ex failed but wrote the handle");
    check(!valid, std::string("sfft_create_ex rejected a valid request: ") + sfft_status_string(st));
    return 0;
  }
  check_success_clean("sfft_create_ex");
  check(plan != poison && plan != nullptr, "sfft_create_ex succeeded without a handle");
  // Valid but deliberately expensive knobs (hundreds of loops, 2^16 candidates per stage, a 1e-300 filter)
  // take seconds per exec even natively: planning them is fuzzed, executing them is not.
  const bool cheap = knobs.location_loops <= 16 && knobs.estimation_loops <= 16 && knobs.bits_per_stage <= 12 &&
                     (knobs.filter_tolerance == 0 || knobs.filter_tolerance >= 1e-14);
  if (n <= kMaxExecN && cheap) {
    if (dt == SFFT_COMPLEX128)
      exec_and_check<double>(in, plan, n, k);
    else
      exec_and_check<float>(in, plan, n, k);
  }
  // NULL outputs and count are refused without writing anything.
  std::vector<std::complex<double>> x(std::min<uint64_t>(n, kMaxExecN));
  if (n <= kMaxExecN && cheap)
    check_failure(sfft_exec(plan, x.data(), nullptr, nullptr, nullptr), "sfft_exec(NULL outputs)", {});
  check(sfft_destroy(plan) == SFFT_SUCCESS, "sfft_destroy of a live plan failed");
  check(sfft_destroy(plan) == SFFT_ERROR_INVALID_ARGUMENT, "sfft_destroy of a destroyed plan did not fail");
  check(sfft_destroy(nullptr) == SFFT_SUCCESS, "sfft_destroy(NULL) failed");
  return 0;
}
