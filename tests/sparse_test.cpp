// SPDX-License-Identifier: Apache-2.0
// Sparse FFT tests: planted k-sparse spectra (with and without noise) checked against FFTW's full
// transform of the same samples, recovery rates over many seeded trials, and bad input. Every accuracy
// test body runs on the CPU backend and on the CUDA backend (host and device pointers).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sfft/sfft.h"
#include "sparse_support.hpp"
#include "test_support.hpp"

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

using sfft_test::planted;
using sfft_test::Signal;
using cd = std::complex<double>;

enum class Where { Cpu, CudaHost, CudaDevice };

struct Case {
  Where where;
  sfft_dtype dtype;
};

std::string case_name(const testing::TestParamInfo<Case> &info) {
  std::string w = info.param.where == Where::Cpu        ? "Cpu"
                  : info.param.where == Where::CudaHost ? "CudaHost"
                                                        : "CudaDevice";
  return w + (info.param.dtype == SFFT_COMPLEX128 ? "_c128" : "_c64");
}

struct Result {
  sfft_status status;
  std::vector<uint64_t> freqs;
  std::vector<cd> values;
};

// Runs create + exec + destroy for one signal on the case's backend and pointer kind.
class Runner {
 public:
  Runner(const Case &c, uint64_t n, uint64_t k, uint64_t seed, const sfft_sparse_options *knobs) : c_(c), n_(n), k_(k) {
    sfft_options opts;
    sfft_options_init(&opts);
    opts.backend = c.where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
    opts.seed = seed;
    status_ = sfft_create_ex(&plan_, n, k, c.dtype, &opts, knobs);
    EXPECT_EQ(status_, SFFT_SUCCESS) << sfft_last_error();
  }
  ~Runner() { EXPECT_EQ(sfft_destroy(plan_), SFFT_SUCCESS); }
  Runner(const Runner &) = delete;
  Runner &operator=(const Runner &) = delete;

  Result run(const std::vector<cd> &x) const {
    Result r;
    if (status_ != SFFT_SUCCESS) {
      r.status = status_;
      return r;
    }
    bool dbl = c_.dtype == SFFT_COMPLEX128;
    std::size_t elem = dbl ? 16 : 8;
    std::vector<unsigned char> xin(n_ * elem), vals(k_ * elem);
    for (uint64_t i = 0; i < n_; ++i) {
      if (dbl) {
        reinterpret_cast<cd *>(xin.data())[i] = x[i];
      } else {
        reinterpret_cast<std::complex<float> *>(xin.data())[i] = std::complex<float>(x[i]);
      }
    }
    std::vector<uint64_t> freqs(k_);
    uint64_t count = k_;
    if (c_.where == Where::CudaDevice) {
      sfft_test::DeviceMemory dx(xin.size()), df(k_ * 8), dv(vals.size());
      dx.upload(xin.data(), xin.size());
      r.status = sfft_exec(plan_, dx.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count);
      if (r.status == SFFT_SUCCESS) {
        df.download(freqs.data(), count * 8);
        dv.download(vals.data(), count * elem);
      }
    } else {
      r.status = sfft_exec(plan_, xin.data(), freqs.data(), vals.data(), &count);
    }
    if (r.status != SFFT_SUCCESS) return r;
    EXPECT_LE(count, k_);
    for (uint64_t i = 0; i < count; ++i) {
      r.freqs.push_back(freqs[i]);
      r.values.push_back(dbl ? reinterpret_cast<cd *>(vals.data())[i]
                             : cd(reinterpret_cast<std::complex<float> *>(vals.data())[i]));
    }
    return r;
  }

 private:
  Case c_;
  uint64_t n_, k_;
  sfft_plan plan_ = nullptr;
  sfft_status status_;
};

struct Score {
  double recovery;     // fraction of the planted support present in the output
  double l1_per_coef;  // (1/k) sum over planted f of |X[f] - y_f| (y_f = 0 when f was not returned)
  double rel_l2;       // || y - X ||_2 / || X ||_2 over the returned frequencies
  double rel_linf;     // max |y - X| / max |X| over the returned frequencies
};

Score score(const Signal &s, const Result &r) {
  std::map<uint64_t, cd> got;
  for (std::size_t i = 0; i < r.freqs.size(); ++i) got[r.freqs[i]] = r.values[i];
  Score sc{0, 0, 0, 0};
  std::size_t hits = 0;
  for (uint64_t f : s.support) {
    auto it = got.find(f);
    hits += it != got.end();
    sc.l1_per_coef += std::abs((it != got.end() ? it->second : cd(0, 0)) - s.truth[f]);
  }
  sc.recovery = static_cast<double>(hits) / static_cast<double>(s.support.size());
  sc.l1_per_coef /= static_cast<double>(s.support.size());
  std::vector<cd> est, ref;
  double max_err = 0, max_ref = 0;
  for (const auto &[f, v] : got) {
    est.push_back(v);
    ref.push_back(s.truth[f]);
    max_err = std::max(max_err, std::abs(v - s.truth[f]));
    max_ref = std::max(max_ref, std::abs(s.truth[f]));
  }
  sc.rel_l2 = est.empty() ? 1.0 : sfft_test::relative_l2_error(est.data(), ref.data(), est.size());
  sc.rel_linf = max_ref > 0 ? max_err / max_ref : 1.0;
  return sc;
}

// The returned frequencies are exactly the planted support (in any order).
void expect_same_set(std::vector<uint64_t> got, std::vector<uint64_t> want) {
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

class SparseFft : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().where != Where::Cpu) SFFT_SKIP_WITHOUT_GPU();
  }
  bool dbl() const { return GetParam().dtype == SFFT_COMPLEX128; }
  double exact_tolerance() const { return dbl() ? 1e-9 : 1e-4; }

  // One exactly sparse signal (k coefficients, dynamic range 1000, seed signal_seed) through `runner`: every
  // coefficient found, k returned, relative l2 error within the precision's tolerance. Returns the score
  // for further checks (a failed call scores recovery 0).
  Score expect_exactly_sparse(Runner &runner, uint64_t n, uint64_t k, uint64_t signal_seed) {
    Signal s = planted(n, k, signal_seed, 1000.0, INFINITY);
    Result r = runner.run(s.x);
    if (r.status != SFFT_SUCCESS) {
      ADD_FAILURE() << "sfft_exec: " << sfft_last_error();
      return Score{0, 0, 1, 1};
    }
    Score sc = score(s, r);
    EXPECT_EQ(sc.recovery, 1.0);
    EXPECT_EQ(r.freqs.size(), k);
    EXPECT_LE(sc.rel_l2, exact_tolerance());
    return sc;
  }
};

sfft_sparse_options variant_knobs(sfft_sparse_variant v) {
  sfft_sparse_options k;
  sfft_sparse_options_init(&k);
  k.variant = v;
  return k;
}

// Exactly sparse, both variants, n = 2^10 .. 2^22: every coefficient found to the precision's tolerance.
TEST_P(SparseFft, ExactlySparseAcrossSizes) {
  struct Size {
    int log2n;
    uint64_t k;
    int trials;
  };
  const Size sizes[] = {{10, 8, 4}, {12, 30, 3}, {14, 64, 3}, {16, 100, 2}, {18, 200, 1}, {20, 50, 1}, {22, 300, 1}};
  for (sfft_sparse_variant v : {SFFT_SPARSE_EXACT, SFFT_SPARSE_ROBUST}) {
    sfft_sparse_options knobs = variant_knobs(v);
    for (const Size &size : sizes) {
      uint64_t n = uint64_t{1} << size.log2n;
      Runner runner(GetParam(), n, size.k, 1000 + size.log2n, &knobs);
      for (int t = 0; t < size.trials; ++t) {
        SCOPED_TRACE(testing::Message() << "variant " << v << " n = 2^" << size.log2n << " k = " << size.k << " trial "
                                        << t);
        Score sc = expect_exactly_sparse(runner, n, size.k, 77 * size.log2n + t);
        if (t == 0)
          std::printf("  %s n = 2^%d k = %llu: recovery %.4f, rel l2 %.3g, rel linf %.3g\n",
                      v == SFFT_SPARSE_EXACT ? "EXACT " : "ROBUST", size.log2n, static_cast<unsigned long long>(size.k),
                      sc.recovery, sc.rel_l2, sc.rel_linf);
        EXPECT_LE(sc.rel_linf, 10 * exact_tolerance());
      }
    }
  }
}

// Lengths that are not powers of two (n = B L with the bucket count B, the smallest even divisor of n >=
// 2k (EXACT) / 4k (ROBUST), a power of two or not; L even or odd), both variants and ROBUST with two comb
// loops (W, a power of two, dividing n), exactly sparse: every coefficient found to the precision's
// tolerance, against FFTW's transform of the same samples. bucket_factor 0 = the variant's default.
TEST_P(SparseFft, NonPowerOfTwoLengths) {
  struct Size {
    uint64_t n, k;
    double exact_factor, robust_factor;
    int trials;
  };
  const Size sizes[] = {
      {3 * 4096, 30, 0, 0, 3},      // B = 64 / 128, L = 192 / 96
      {8000, 32, 0, 2, 3},          // 2^6 x 125: B = 64 for both, L = 125 (odd)
      {1000000, 16, 0, 0, 2},       // 2^6 x 15625: B = 32 / 64, L = 31250 / 15625 (odd)
      {105 * 1024, 100, 0, 0, 2},   // 3 x 5 x 7 x 2^10: B = 210 / 420, L = 512 / 256
      {1920 * 1080, 200, 0, 0, 1},  // 2^10 x 2025: B = 400 / 800, L = 5184 / 2592
      {1000000, 100, 0, 0, 2},      // B = 200 / 400 (not powers of two), L = 5000 / 2500
      {15750, 20, 0, 0, 3},         // 2 x 3^2 x 5^3 x 7: B = 42 / 90, L = 375 / 175 (odd)
  };
  struct Plan {
    sfft_sparse_variant variant;
    int comb_loops;
    const char *label;
  };
  for (const Plan &plan : {Plan{SFFT_SPARSE_EXACT, 0, "EXACT"}, Plan{SFFT_SPARSE_ROBUST, 0, "ROBUST"},
                           Plan{SFFT_SPARSE_ROBUST, 2, "ROBUST+comb"}}) {
    for (const Size &size : sizes) {
      sfft_sparse_options knobs = variant_knobs(plan.variant);
      knobs.bucket_factor = plan.variant == SFFT_SPARSE_EXACT ? size.exact_factor : size.robust_factor;
      knobs.comb_loops = plan.comb_loops;
      Runner runner(GetParam(), size.n, size.k, 3000 + size.n % 997, &knobs);
      for (int t = 0; t < size.trials; ++t) {
        SCOPED_TRACE(testing::Message() << plan.label << " n = " << size.n << " k = " << size.k << " trial " << t);
        Score sc = expect_exactly_sparse(runner, size.n, size.k, 91 * size.n + t);
        if (t == 0)
          std::printf("  %s n = %llu k = %llu: recovery %.4f, rel l2 %.3g, rel linf %.3g\n", plan.label,
                      static_cast<unsigned long long>(size.n), static_cast<unsigned long long>(size.k), sc.recovery,
                      sc.rel_l2, sc.rel_linf);
        EXPECT_LE(sc.rel_linf, 10 * exact_tolerance());
      }
    }
  }
}

// The rate criterion: every coefficient found with rel. error <= 1e-9 (c128) / 1e-4 (c64) in
// >= 99.9 % of 2000 seeded trials (20 plans with different seeds x 100 signals), EXACT variant, for a
// plan with 7 loops (k = 16, B = 32) and one with 6 (k = 64, B = 128), at n a power of two, and at n = 3 x
// 2^12 (k = 16, B = 32) and n = 15750 = 2 x 3^2 x 5^3 x 7 (k = 64, B = 150, L = 105). The release tier
// multiplies the plans: SFFT_SPARSE_TRIAL_SCALE=50 runs 100000 trials per case.
TEST_P(SparseFft, ExactRecoveryRateOverSeededTrials) {
  const char *scale_env = std::getenv("SFFT_SPARSE_TRIAL_SCALE");
  const int scale = scale_env != nullptr && std::atoi(scale_env) > 0 ? std::atoi(scale_env) : 1;
  const int plans = (GetParam().where == Where::Cpu ? 20 : 10) * scale, signals = 100;
  sfft_sparse_options knobs = variant_knobs(SFFT_SPARSE_EXACT);
  for (auto [n, k] : {std::pair<uint64_t, uint64_t>{1 << 12, 16}, {1 << 14, 64}, {3 << 12, 16}, {15750, 64}}) {
    int failures = 0, trials = 0;
    for (int p = 0; p < plans; ++p) {
      Runner runner(GetParam(), n, k, 5000 + p, &knobs);
      for (int t = 0; t < signals; ++t, ++trials) {
        Signal s = planted(n, k, 100000 + 1000 * p + t, 100.0, INFINITY);
        Result r = runner.run(s.x);
        ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
        Score sc = score(s, r);
        failures += !(sc.recovery == 1.0 && sc.rel_l2 <= exact_tolerance());
      }
    }
    double rate = 1.0 - static_cast<double>(failures) / trials;
    std::printf("  n = %llu k = %llu: %d of %d trials failed (success rate %.4f)\n", static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(k), failures, trials, rate);
    RecordProperty("success_rate_k" + std::to_string(k), std::to_string(rate));
    EXPECT_GE(rate, 0.999) << failures << " of " << trials << " trials failed, n = " << n << " k = " << k;
  }
}

// Additive Gaussian noise at 20, 30 and 40 dB SNR, ROBUST (default) variant, magnitudes in [1, 4].
TEST_P(SparseFft, NoisySpectraRobust) {
  struct Noisy {
    int log2n;
    uint64_t k;
    double snr_db;
    double min_recovery;
    double max_rel_l2;
    double max_l1;  // L1 error per planted coefficient (magnitudes average ~2.2)
  };
  const Noisy cases[] = {{14, 50, 40, 1.0, 0.01, 0.02},
                         {16, 100, 30, 0.99, 0.02, 0.05},
                         {18, 100, 20, 0.98, 0.06, 0.15},
                         {20, 200, 30, 0.99, 0.02, 0.05},
                         {22, 100, 30, 0.99, 0.02, 0.05}};
  for (const Noisy &c : cases) {
    uint64_t n = uint64_t{1} << c.log2n;
    Runner runner(GetParam(), n, c.k, 42 + c.log2n, nullptr);
    Signal s = planted(n, c.k, 9000 + c.log2n, 4.0, c.snr_db);
    Result r = runner.run(s.x);
    ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
    Score sc = score(s, r);
    SCOPED_TRACE(testing::Message() << "n = 2^" << c.log2n << " k = " << c.k << " SNR " << c.snr_db << " dB");
    std::printf("  n = 2^%d k = %llu SNR %2.0f dB: recovery %.4f, L1/coef %.3g, rel l2 %.3g\n", c.log2n,
                static_cast<unsigned long long>(c.k), c.snr_db, sc.recovery, sc.l1_per_coef, sc.rel_l2);
    EXPECT_GE(sc.recovery, c.min_recovery);
    EXPECT_LE(sc.rel_l2, c.max_rel_l2);
    EXPECT_LE(sc.l1_per_coef, c.max_l1);
  }
}

// Fewer nonzeros than k: EXACT returns exactly those, nothing invented from leakage.
TEST_P(SparseFft, FewerCoefficientsThanK) {
  const uint64_t n = 1 << 14;
  sfft_sparse_options knobs = variant_knobs(SFFT_SPARSE_EXACT);
  Runner runner(GetParam(), n, 64, 3, &knobs);
  Signal s = planted(n, 5, 11, 10.0, INFINITY);
  Result r = runner.run(s.x);
  ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(r.freqs.size(), 5u);
  EXPECT_EQ(score(s, r).recovery, 1.0);
  // Decreasing magnitude order.
  for (std::size_t i = 1; i < r.values.size(); ++i) EXPECT_GE(std::abs(r.values[i - 1]), std::abs(r.values[i]));
}

// Equal planted magnitudes: the returned ones agree to the estimation error (~1e-13 relative in complex128,
// below float resolution, so the CUDA rank step settles every comparison by its exact-key fallback; ~1e-6 in
// complex64), and must still come back as the whole support in non-increasing magnitude.
TEST_P(SparseFft, EqualMagnitudesKeepTheirOrder) {
  const uint64_t n = 1 << 14, k = 64;
  sfft_sparse_options knobs = variant_knobs(SFFT_SPARSE_EXACT);
  Runner runner(GetParam(), n, k, 17, &knobs);
  Signal s = planted(n, k, 23, 1.0, INFINITY);
  Result r = runner.run(s.x);
  ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
  ASSERT_EQ(r.freqs.size(), k);
  EXPECT_EQ(score(s, r).recovery, 1.0);
  // The returned order is by |v|^2 as the backend computes it (possibly with an FMA): a few ulps of slack.
  for (std::size_t i = 1; i < k; ++i)
    EXPECT_GE(std::norm(r.values[i - 1]), std::norm(r.values[i]) * (1 - 1e-15)) << "rank " << i;
}

// k large coefficients (magnitudes 100, 110, ..., in placement order) among `small` ones in [1, 2], random
// distinct frequencies and phases from `seed`; EXACT with `bucket_factor` and `loops` must return exactly
// the large ones, largest first.
void expect_top_k_of_long_list(const Case &c, uint64_t n, uint64_t k, uint64_t small, uint64_t seed,
                               double bucket_factor, int loops) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<cd> spectrum(n);
  std::vector<uint64_t> large;  // in increasing magnitude
  for (uint64_t placed = 0; placed < k + small;) {
    uint64_t f = rng() % n;
    if (spectrum[f] != cd(0, 0)) continue;
    double mag = placed < k ? 100.0 + 10.0 * static_cast<double>(placed) : 1.0 + unit(rng);
    spectrum[f] = std::polar(mag, 2 * M_PI * unit(rng));
    if (placed < k) large.push_back(f);
    ++placed;
  }
  std::vector<cd> x = sfft_test::fftw_dft(spectrum, {static_cast<int>(n)}, +1);
  for (auto &v : x) v /= static_cast<double>(n);
  sfft_sparse_options knobs = variant_knobs(SFFT_SPARSE_EXACT);
  knobs.bucket_factor = bucket_factor;
  knobs.location_loops = loops;
  Runner runner(c, n, k, 7, &knobs);
  Result r = runner.run(x);
  ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
  ASSERT_EQ(r.freqs.size(), k);
  for (std::size_t i = 0; i < k; ++i) {
    EXPECT_EQ(r.freqs[i], large[k - 1 - i]) << "rank " << i;
    EXPECT_LE(std::abs(r.values[i] - spectrum[r.freqs[i]]), 1e-2 * std::abs(spectrum[r.freqs[i]])) << "rank " << i;
  }
}

// The top-k step when the list of found frequencies is much longer than k: 16 large coefficients among 600
// (EXACT with 1024 buckets finds them all), so ~600 entries are ranked, past what one pass of the CUDA rank
// grid (sized for about 2k entries) covers.
TEST_P(SparseFft, TopKOfListMuchLongerThanK) {
  expect_top_k_of_long_list(GetParam(), 1 << 16, 16, 584, 99, 64, 10);  // B = 1024
}

// The same with a list longer than the 2048 entries a CUDA rank block stages at once (so it compares in
// two chunks) yet still ranked by counting (8 loops x 4096 buckets = 32768 = kRankLimit candidates): 2300
// small coefficients and 64 large ones, all found by EXACT (m / B = 0.58 over 8 loops).
TEST_P(SparseFft, TopKOfListLongerThanOneRankChunk) {
  expect_top_k_of_long_list(GetParam(), 1 << 16, 64, 2300, 5, 64, 8);  // B = 4096
}

// Same seed, same result; a plan gives the same result on every exec.
TEST_P(SparseFft, SeedReproducible) {
  const uint64_t n = 1 << 16, k = 40;
  Signal s = planted(n, k, 5, 10.0, 30.0);
  Runner a(GetParam(), n, k, 123, nullptr), b(GetParam(), n, k, 123, nullptr);
  Result ra = a.run(s.x), ra2 = a.run(s.x), rb = b.run(s.x);
  ASSERT_EQ(ra.status, SFFT_SUCCESS);
  EXPECT_EQ(ra.freqs, rb.freqs);
  EXPECT_EQ(ra.freqs, ra2.freqs);
  ASSERT_EQ(ra.values.size(), rb.values.size());
  // CPU: bit-identical. CUDA: atomic subtraction order may change the last bits.
  double tol = GetParam().where == Where::Cpu ? 0.0 : dbl() ? 1e-12 : 1e-5;
  for (std::size_t i = 0; i < ra.values.size(); ++i) {
    EXPECT_LE(std::abs(ra.values[i] - rb.values[i]), tol * std::abs(ra.values[i]));
    EXPECT_LE(std::abs(ra.values[i] - ra2.values[i]), tol * std::abs(ra.values[i]));
  }
}

// AUTO keeps its EXACT attempt when that explains the signal (exactly sparse input: the same output as an
// EXACT plan of the same seed) and otherwise falls back to ROBUST (noisy input: a ROBUST plan's output).
TEST_P(SparseFft, AutoChoosesExactOrRobust) {
  const uint64_t n = 1 << 16, k = 60;
  const double tol = GetParam().where == Where::Cpu ? 0.0 : dbl() ? 1e-12 : 1e-5;
  auto same = [&](const Result &a, const Result &b) {
    ASSERT_EQ(a.status, SFFT_SUCCESS);
    ASSERT_EQ(b.status, SFFT_SUCCESS);
    ASSERT_EQ(a.freqs, b.freqs);
    for (std::size_t i = 0; i < a.values.size(); ++i)
      EXPECT_LE(std::abs(a.values[i] - b.values[i]), tol * std::abs(a.values[i])) << "entry " << i;
  };
  sfft_sparse_options exact = variant_knobs(SFFT_SPARSE_EXACT), robust = variant_knobs(SFFT_SPARSE_ROBUST);
  Runner autoplan(GetParam(), n, k, 77, nullptr), exact_plan(GetParam(), n, k, 77, &exact),
      robust_plan(GetParam(), n, k, 77, &robust);
  Signal clean = planted(n, k, 1234, 10.0, INFINITY);
  Result a = autoplan.run(clean.x);
  same(a, exact_plan.run(clean.x));
  EXPECT_EQ(score(clean, a).recovery, 1.0);
  EXPECT_LE(score(clean, a).rel_l2, exact_tolerance());
  Signal noisy = planted(n, k, 1234, 10.0, 30.0);
  Result b = autoplan.run(noisy.x);
  same(b, robust_plan.run(noisy.x));
  EXPECT_GE(score(noisy, b).recovery, 0.99);
}

// A NaN sample among those read is reported; the plan stays usable.
TEST_P(SparseFft, NanInputRejectedPlanStillUsable) {
  const uint64_t n = 1 << 12, k = 8;
  Runner runner(GetParam(), n, k, 9, nullptr);
  Signal s = planted(n, k, 21, 10.0, INFINITY);
  std::vector<cd> bad(n, cd(std::numeric_limits<double>::quiet_NaN(), 0));
  Result r = runner.run(bad);
  EXPECT_EQ(r.status, SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("finite"), std::string::npos) << sfft_last_error();
  Result ok = runner.run(s.x);
  ASSERT_EQ(ok.status, SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(score(s, ok).recovery, 1.0);
}

// Capacity too small: the needed count comes back, the arrays are not written.
TEST_P(SparseFft, CapacityTooSmall) {
  const uint64_t n = 1 << 12, k = 8;
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = GetParam().where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, n, k, SFFT_COMPLEX128, &opts), SFFT_SUCCESS) << sfft_last_error();
  Signal s = planted(n, k, 4, 10.0, INFINITY);
  std::vector<uint64_t> freqs(k + 2, 999999);
  std::vector<cd> values(k + 2, cd(-7, -7));
  uint64_t count = 3;
  EXPECT_EQ(sfft_exec(plan, s.x.data(), freqs.data(), values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(count, k);
  EXPECT_NE(std::string(sfft_last_error()).find("capacity"), std::string::npos);
  for (std::size_t i = 0; i < freqs.size(); ++i) {
    EXPECT_EQ(freqs[i], 999999u);
    EXPECT_EQ(values[i], cd(-7, -7));
  }
  count = 0;  // size query with NULL arrays
  EXPECT_EQ(sfft_exec(plan, s.x.data(), nullptr, nullptr, &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(count, k);
  count = k;
  EXPECT_EQ(sfft_exec(plan, s.x.data(), freqs.data(), values.data(), &count), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(count, k);
  EXPECT_EQ(freqs[k], 999999u);  // nothing past the count
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// Long candidate lists (more than the CUDA backend ranks by counting) take the sorted top-k path; two
// execs of one plan agree (the CUDA plan's frequency table is reset between them).
TEST_P(SparseFft, LongCandidateListsSortedTopK) {
  const uint64_t n = 1 << 16;
  for (sfft_sparse_variant v : {SFFT_SPARSE_EXACT, SFFT_SPARSE_ROBUST}) {
    const uint64_t k = v == SFFT_SPARSE_EXACT ? 4096 : 2048;  // 7 x 8192 and 2 x 8 x 8192 / 2 candidates
    sfft_sparse_options knobs = variant_knobs(v);
    Runner runner(GetParam(), n, k, 31, &knobs);
    Signal s = planted(n, k, 4321 + k, 100.0, INFINITY);
    Result r = runner.run(s.x), again = runner.run(s.x);
    ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
    ASSERT_EQ(again.status, SFFT_SUCCESS) << sfft_last_error();
    SCOPED_TRACE(testing::Message() << "variant " << v << " k = " << k);
    Score sc = score(s, r);
    EXPECT_EQ(sc.recovery, 1.0);
    EXPECT_EQ(r.freqs.size(), k);
    EXPECT_LE(sc.rel_l2, exact_tolerance());
    EXPECT_EQ(r.freqs, again.freqs);
    for (std::size_t i = 1; i < r.values.size(); ++i) EXPECT_GE(std::abs(r.values[i - 1]), std::abs(r.values[i]));
  }
}

// ---------------------------------------------------------------- ROBUST with the comb pre-pass

sfft_sparse_options comb_knobs(sfft_sparse_variant v, int comb_loops, int min_votes) {
  sfft_sparse_options k = variant_knobs(v);
  k.comb_loops = comb_loops;
  k.min_votes = min_votes;
  return k;
}

// Noisy spectra (magnitudes in [1, 10]) at 20 and 30 dB SNR against FFTW's transform of the same samples,
// 10 seeded trials each, ROBUST with two comb loops (default W = 8192, keep = 128): with the default
// min_votes = 2, and with min_votes = 1, which finds more of the weakest coefficients and relies on the
// comb to keep noise out. Recovery (mean and worst trial) and the worst relative l2 error are asserted.
// The same plans without the comb, over-provisioned (k = 64 for 32 planted), count the frequencies
// returned that were not planted: min_votes = 1 lets noise through, the comb must cut that by half or more.
TEST_P(SparseFft, CombNoisySpectra) {
  struct Noisy {
    double snr_db;
    int min_votes;
    double min_mean_recovery, min_recovery, max_rel_l2;
  };
  // CPU c128 measured: 20 dB: 0.881 / 0.813 (min_votes 2), 0.958 / 0.859 (1), rel l2 <= 0.026; 30 dB:
  // 1 / 1, rel l2 <= 0.0084; not planted with / without the comb: 0 / 0 (2), 2 / 72 and 1 / 48 (1).
  const Noisy cases[] = {
      {20, 2, 0.85, 0.75, 0.05}, {20, 1, 0.93, 0.80, 0.05}, {30, 2, 0.99, 0.95, 0.02}, {30, 1, 0.99, 0.95, 0.02}};
  const uint64_t n = 1 << 17, k = 64;
  const int trials = 10;
  for (const Noisy &c : cases) {
    double recovery = 0, worst_recovery = 1, worst_l2 = 0;
    int false_with = 0, false_without = 0;
    for (int t = 0; t < trials; ++t) {
      sfft_sparse_options with = comb_knobs(SFFT_SPARSE_ROBUST, 2, c.min_votes);
      sfft_sparse_options without = comb_knobs(SFFT_SPARSE_ROBUST, 0, c.min_votes);
      Runner comb(GetParam(), n, k, 700 + t, &with), plain(GetParam(), n, k, 700 + t, &without);
      Signal s = planted(n, k, 8000 + t, 10.0, c.snr_db);
      Result r = comb.run(s.x);
      ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
      Score sc = score(s, r);
      recovery += sc.recovery;
      worst_recovery = std::min(worst_recovery, sc.recovery);
      worst_l2 = std::max(worst_l2, sc.rel_l2);
      Signal half = planted(n, k / 2, 9000 + t, 10.0, c.snr_db);
      for (auto [runner, count] : {std::pair<Runner *, int *>{&comb, &false_with}, {&plain, &false_without}}) {
        Result h = runner->run(half.x);
        ASSERT_EQ(h.status, SFFT_SUCCESS) << sfft_last_error();
        *count += static_cast<int>(h.freqs.size()) - static_cast<int>(std::lround(score(half, h).recovery * (k / 2)));
      }
    }
    recovery /= trials;
    SCOPED_TRACE(testing::Message() << "SNR " << c.snr_db << " dB, min_votes " << c.min_votes);
    std::printf(
        "  comb SNR %2.0f dB min_votes %d: mean recovery %.4f, worst %.4f, worst rel l2 %.3g; "
        "not planted (32 of k = 64): %d with the comb, %d without\n",
        c.snr_db, c.min_votes, recovery, worst_recovery, worst_l2, false_with, false_without);
    EXPECT_GE(recovery, c.min_mean_recovery);
    EXPECT_GE(worst_recovery, c.min_recovery);
    EXPECT_LE(worst_l2, c.max_rel_l2);
    EXPECT_LE(2 * false_with, std::max(false_without, 1));
  }
}

// Exactly sparse with the comb on: every coefficient found to the precision's tolerance.
TEST_P(SparseFft, CombExactlySparse) {
  struct Size {
    int log2n;
    uint64_t k;
  };
  for (const Size &size : {Size{10, 8}, Size{14, 64}, Size{18, 200}, Size{20, 50}}) {
    uint64_t n = uint64_t{1} << size.log2n;
    sfft_sparse_options knobs = comb_knobs(SFFT_SPARSE_ROBUST, 2, 0);
    Runner runner(GetParam(), n, size.k, 1100 + size.log2n, &knobs);
    SCOPED_TRACE(testing::Message() << "n = 2^" << size.log2n << " k = " << size.k);
    expect_exactly_sparse(runner, n, size.k, 55 * size.log2n);
  }
}

// The comb really restricts location: 8 coefficients with distinct residues mod W = 64, three of them
// large. With comb_keep = 3 only the three large residues are approved, so exactly those three come back
// (ROBUST on exactly sparse input, ROBUST and AUTO - whose EXACT stage cannot explain noise - at 30 dB);
// with comb_keep = 8, and without the comb, all eight do.
TEST_P(SparseFft, CombApprovesOnlyLargestResidues) {
  const uint64_t n = 1 << 12, width = 64, k = 8;
  std::mt19937_64 rng(99);
  std::vector<cd> spectrum(n);
  std::vector<uint64_t> all, large;
  const double magnitudes[] = {100, 90, 80, 5, 4, 3, 2, 1};
  for (uint64_t i = 0; i < k; ++i) {
    uint64_t f = (5 + 7 * i) % width + width * (rng() % (n / width));  // residues 5, 12, ..., 54
    spectrum[f] = std::polar(magnitudes[i], 0.7 * static_cast<double>(i));
    all.push_back(f);
    if (i < 3) large.push_back(f);
  }
  std::vector<cd> clean = sfft_test::fftw_dft(spectrum, {static_cast<int>(n)}, +1);
  for (auto &v : clean) v /= static_cast<double>(n);
  std::vector<cd> noisy = clean;
  std::normal_distribution<double> gauss(0.0, std::sqrt(24500.0 / (static_cast<double>(n) * n) / 1000.0 / 2));
  for (auto &v : noisy) v += cd(gauss(rng), gauss(rng));
  struct Run {
    sfft_sparse_variant variant;
    int comb_loops;
    uint64_t keep;
    const std::vector<cd> *x;
    const std::vector<uint64_t> *want;
  };
  const Run runs[] = {{SFFT_SPARSE_ROBUST, 1, 3, &clean, &large},
                      {SFFT_SPARSE_ROBUST, 1, 3, &noisy, &large},
                      {SFFT_SPARSE_AUTO, 1, 3, &noisy, &large},
                      {SFFT_SPARSE_ROBUST, 1, 8, &clean, &all},
                      {SFFT_SPARSE_ROBUST, 0, 0, &clean, &all}};
  for (const Run &run : runs) {
    sfft_sparse_options knobs = comb_knobs(run.variant, run.comb_loops, 0);
    knobs.comb_width = run.comb_loops > 0 ? width : 0;
    knobs.comb_keep = run.keep;
    Runner runner(GetParam(), n, k, 17, &knobs);
    Result r = runner.run(*run.x);
    ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
    SCOPED_TRACE(testing::Message() << "variant " << run.variant << " comb_loops " << run.comb_loops << " keep "
                                    << run.keep << (run.x == &noisy ? " 30 dB" : " noise-free"));
    expect_same_set(r.freqs, *run.want);
    for (std::size_t i = 0; i < r.freqs.size(); ++i)
      EXPECT_LE(std::abs(r.values[i] - spectrum[r.freqs[i]]), 0.02 * std::abs(spectrum[r.freqs[i]])) << r.freqs[i];
  }
}

// A NaN sample read by the comb (W = n: it reads every sample) is reported; the plan stays usable.
TEST_P(SparseFft, CombNanInputRejected) {
  const uint64_t n = 1 << 12, k = 8;
  sfft_sparse_options knobs = comb_knobs(SFFT_SPARSE_ROBUST, 1, 0);
  knobs.comb_width = n;
  Runner runner(GetParam(), n, k, 9, &knobs);
  Signal s = planted(n, k, 21, 10.0, INFINITY);
  std::vector<cd> bad = s.x;
  bad[1234] = cd(0, std::numeric_limits<double>::quiet_NaN());
  Result r = runner.run(bad);
  EXPECT_EQ(r.status, SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("finite"), std::string::npos) << sfft_last_error();
  Result ok = runner.run(s.x);
  ASSERT_EQ(ok.status, SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(score(s, ok).recovery, 1.0);
}

// Issue 26 #4: results scale with the input. complex128 plans returned no coefficient (SUCCESS, count 0) for
// |X| above about 1e153 or below about 1e-160, where squared bucket magnitudes overflow or underflow; now
// every variant (and the comb pre-pass, whose ranking squares too) finds the same support with the same
// relative accuracy as at unit scale, for complex64 over the range its fold can hold.
TEST_P(SparseFft, ResultsScaleWithTheInput) {
  const uint64_t n = 1 << 12, k = 8;
  const std::vector<double> scales =
      dbl() ? std::vector<double>{1e-290, 1e-200, 1e-160, 1e160, 1e200, 1e300} : std::vector<double>{1e-25, 1e25};
  const Signal s = planted(n, k, 31, 1000.0, INFINITY);
  sfft_sparse_options exact = variant_knobs(SFFT_SPARSE_EXACT), robust = variant_knobs(SFFT_SPARSE_ROBUST),
                      comb = comb_knobs(SFFT_SPARSE_ROBUST, 2, 0);
  const sfft_sparse_options *variants[] = {nullptr, &exact, &robust, &comb};  // nullptr: AUTO
  for (const sfft_sparse_options *knobs : variants) {
    Runner runner(GetParam(), n, k, 5, knobs);
    for (double scale : scales) {
      SCOPED_TRACE(testing::Message() << "variant " << (knobs ? knobs->variant : 0) << " comb "
                                      << (knobs ? knobs->comb_loops : 0) << " scale " << scale);
      std::vector<cd> x = s.x;
      for (cd &v : x) v *= scale;
      Result r = runner.run(x);
      ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
      ASSERT_EQ(r.freqs.size(), k);
      expect_same_set(r.freqs, s.support);
      for (cd &v : r.values) v /= scale;  // the scoring squares
      EXPECT_LE(score(s, r).rel_l2, exact_tolerance());
    }
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (Where w : {Where::Cpu, Where::CudaHost, Where::CudaDevice})
    for (sfft_dtype d : {SFFT_COMPLEX128, SFFT_COMPLEX64}) v.push_back({w, d});
  return v;
}

// The `sparse` prefix makes every test match `ctest -R sparse`.
INSTANTIATE_TEST_SUITE_P(sparse, SparseFft, testing::ValuesIn(all_cases()), case_name);

// ---------------------------------------------------------------- bad input (backend independent)

sfft_options cpu_options() {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  return o;
}

void expect_create_fails(uint64_t n, uint64_t k, sfft_dtype dtype, const sfft_sparse_options *knobs,
                         const char *mention) {
  sfft_options o = cpu_options();
  sfft_plan plan = reinterpret_cast<sfft_plan>(0x1);
  EXPECT_EQ(sfft_create_ex(&plan, n, k, dtype, &o, knobs), SFFT_ERROR_INVALID_ARGUMENT) << "n=" << n << " k=" << k;
  EXPECT_EQ(plan, reinterpret_cast<sfft_plan>(0x1)) << "output handle written on failure";
  EXPECT_NE(std::string(sfft_last_error()).find(mention), std::string::npos) << sfft_last_error();
}

TEST(sparse, BadCreateArguments) {
  // Other lengths than powers of two need an even divisor of n in [4k, n/2] (AUTO's ROBUST stage) for the
  // bucket count B: 2018 = 2 x 1009 has only 2 and 2018.
  expect_create_fails(2018, 8, SFFT_COMPLEX128, nullptr, "no even divisor in [bucket_factor * k = 32, n/2 = 1009]");
  expect_create_fails(1001, 4, SFFT_COMPLEX128, nullptr, "n = 1001 is odd");
  expect_create_fails(3 * (uint64_t{1} << 32), 4, SFFT_COMPLEX128, nullptr, "below 2^32");
  expect_create_fails(0, 4, SFFT_COMPLEX128, nullptr, "range");
  expect_create_fails(8, 1, SFFT_COMPLEX128, nullptr, "range");
  expect_create_fails(uint64_t{1} << 41, 4, SFFT_COMPLEX128, nullptr, "range");
  expect_create_fails(~uint64_t{0}, 4, SFFT_COMPLEX128, nullptr, "range");
  expect_create_fails(1024, 0, SFFT_COMPLEX128, nullptr, "k = 0");
  expect_create_fails(1024, 257, SFFT_COMPLEX128, nullptr, "n/4");
  expect_create_fails(1024, 2048, SFFT_COMPLEX128, nullptr, "n/4");
  expect_create_fails(1024, 4, SFFT_FLOAT64, nullptr, "dtype");
  expect_create_fails(1024, 4, static_cast<sfft_dtype>(99), nullptr, "dtype");
  sfft_options o = cpu_options();
  EXPECT_EQ(sfft_create(nullptr, 1024, 4, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("plan"), std::string::npos);
  o.struct_size = 1;
  sfft_plan plan = nullptr;
  EXPECT_EQ(sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT);
}

// The header's example "2 x 1009 with k = 1 works" under every variant's defaults: ROBUST's default buckets
// (4k) have no even divisor of 2018 in [4, 1009], so AUTO (whose fallback is ROBUST) and ROBUST used to be
// refused; they now take EXACT's default (B = 2) and find the coefficient.
TEST(sparse, TwoTimesAPrimeWithOneCoefficient) {
  const uint64_t n = 2018;
  std::vector<cd> x(n);
  for (uint64_t t = 0; t < n; ++t) x[t] = std::polar(3.0, 2 * M_PI * 737.0 * static_cast<double>(t) / n);
  const sfft_sparse_options robust = variant_knobs(SFFT_SPARSE_ROBUST), exact = variant_knobs(SFFT_SPARSE_EXACT);
  const sfft_sparse_options *variants[] = {nullptr, &robust, &exact};  // nullptr: AUTO
  for (const sfft_sparse_options *knobs : variants) {
    SCOPED_TRACE(testing::Message() << "variant " << (knobs ? knobs->variant : 0));
    Runner runner(Case{Where::Cpu, SFFT_COMPLEX128}, n, 1, 3, knobs);
    Result r = runner.run(x);
    ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
    ASSERT_EQ(r.freqs.size(), 1u);
    EXPECT_EQ(r.freqs[0], 737u);
    EXPECT_NEAR(std::abs(r.values[0] - cd(3.0 * n, 0)), 0.0, 1e-6);
  }
}

TEST(sparse, BadKnobs) {
  sfft_sparse_options k;
  sfft_sparse_options_init(&k);
  k.variant = static_cast<sfft_sparse_variant>(7);
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "variant");
  sfft_sparse_options_init(&k);
  k.filter_tolerance = 0.5;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "filter_tolerance");
  sfft_sparse_options_init(&k);
  k.filter_tolerance = std::numeric_limits<double>::quiet_NaN();
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "filter_tolerance");
  sfft_sparse_options_init(&k);
  k.bucket_factor = 0.5;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "bucket_factor");
  sfft_sparse_options_init(&k);
  k.location_loops = 65;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "location_loops");
  sfft_sparse_options_init(&k);
  k.variant = SFFT_SPARSE_EXACT;
  k.estimation_loops = 3;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "estimation_loops");
  sfft_sparse_options_init(&k);
  k.bits_per_stage = 31;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "bits_per_stage");
  sfft_sparse_options_init(&k);
  k.location_loops = 3;
  k.min_votes = 4;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "min_votes");
  sfft_sparse_options_init(&k);
  k.struct_size = 2;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "struct_size");
}

TEST(sparse, BadCombKnobs) {
  struct Bad {
    sfft_sparse_variant variant;
    uint64_t n;
    int comb_loops;
    uint64_t comb_width, comb_keep;
    const char *mention;
  };
  const Bad cases[] = {
      {SFFT_SPARSE_ROBUST, 1024, -1, 0, 0, "comb_loops = -1 is outside [0, 16]"},
      {SFFT_SPARSE_ROBUST, 1024, 17, 0, 0, "comb_loops = 17 is outside [0, 16]"},
      {SFFT_SPARSE_EXACT, 1024, 1, 0, 0, "comb_loops must be 0 for SFFT_SPARSE_EXACT"},
      {SFFT_SPARSE_ROBUST, 1024, 0, 64, 0, "while comb_loops = 0"},
      {SFFT_SPARSE_ROBUST, 1024, 0, 0, 5, "while comb_loops = 0"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 48, 0, "comb_width = 48 is not a power of two"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 1, 0, "comb_width = 1 is outside [2, min(1024 (the largest power of two"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 2048, 0, "comb_width = 2048 is outside [2, min(1024"},
      {SFFT_SPARSE_ROBUST, 3 * 1024, 1, 2048, 0, "comb_width = 2048 is outside [2, min(1024"},
      {SFFT_SPARSE_ROBUST, uint64_t{1} << 28, 1, uint64_t{1} << 27, 0, "2^26)]"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 64, 65, "comb_keep = 65 is outside [1, comb_width = 64]"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 0, 1000, "comb_keep = 1000 is outside [1, comb_width = 64]"},  // default W
  };
  for (const Bad &b : cases) {
    sfft_sparse_options k;
    sfft_sparse_options_init(&k);
    k.variant = b.variant;
    k.comb_loops = b.comb_loops;
    k.comb_width = b.comb_width;
    k.comb_keep = b.comb_keep;
    SCOPED_TRACE(b.mention);
    expect_create_fails(b.n, 4, SFFT_COMPLEX128, &k, b.mention);
  }
  // A caller compiled before the comb fields (struct_size ends at min_votes) gets the comb off.
  sfft_sparse_options k;
  sfft_sparse_options_init(&k);
  k.comb_loops = -5;  // past the caller's struct: never read
  k.struct_size = offsetof(sfft_sparse_options, min_votes) + sizeof k.min_votes;
  sfft_options o = cpu_options();
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create_ex(&plan, 1024, 4, SFFT_COMPLEX128, &o, &k), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

TEST(sparse, BadExecArgumentsAndHandles) {
  sfft_options o = cpu_options();
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  std::vector<std::complex<float>> x(1024, {1, 0});
  std::vector<uint64_t> freqs(4);
  std::vector<std::complex<float>> values(4);
  uint64_t count = 4;
  EXPECT_EQ(sfft_exec(plan, nullptr, freqs.data(), values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("x is NULL"), std::string::npos);
  EXPECT_EQ(sfft_exec(plan, x.data(), freqs.data(), values.data(), nullptr), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sfft_exec(plan, x.data(), nullptr, values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("freqs"), std::string::npos);
  EXPECT_EQ(sfft_exec(plan, x.data(), freqs.data(), nullptr, &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("values"), std::string::npos);
  EXPECT_EQ(sfft_exec(nullptr, x.data(), freqs.data(), values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  // A constant signal is one coefficient at f = 0 with value n.
  EXPECT_EQ(sfft_exec(plan, x.data(), freqs.data(), values.data(), &count), SFFT_SUCCESS) << sfft_last_error();
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(freqs[0], 0u);
  EXPECT_NEAR(values[0].real(), 1024.0f, 1e-2f);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  count = 4;
  EXPECT_EQ(sfft_exec(plan, x.data(), freqs.data(), values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("not a live handle"), std::string::npos);
  EXPECT_EQ(sfft_destroy(plan), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sfft_destroy(nullptr), SFFT_SUCCESS);
}

TEST(sparse, CudaBackendWithoutDeviceIsNoDevice) {
  if (sfft_test::have_gpu()) GTEST_SKIP() << "a GPU is present; this checks the no-device path";
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  sfft_plan plan = nullptr;
  sfft_status s = sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o);
  EXPECT_EQ(s, SFFT_HAVE_CUDA ? SFFT_ERROR_NO_DEVICE : SFFT_ERROR_UNSUPPORTED) << sfft_last_error();
  EXPECT_EQ(plan, nullptr);
  // AUTO without a device falls back to the CPU.
  o.backend = SFFT_BACKEND_AUTO;
  ASSERT_EQ(sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

#if SFFT_HAVE_CUDA
TEST(sparse_cuda, CpuPlanRejectsDevicePointer) {
  SFFT_SKIP_WITHOUT_GPU();
  sfft_options o = cpu_options();
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o), SFFT_SUCCESS);
  sfft_test::DeviceMemory dx(1024 * 8);
  std::vector<uint64_t> freqs(4);
  std::vector<std::complex<float>> values(4);
  uint64_t count = 4;
  EXPECT_EQ(sfft_exec(plan, dx.get(), freqs.data(), values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("CPU plan"), std::string::npos);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// Device outputs: a too-small capacity or a NaN input leaves them untouched; a later exec fills them.
TEST(sparse_cuda, DeviceOutputsUntouchedOnFailure) {
  SFFT_SKIP_WITHOUT_GPU();
  const uint64_t n = 1 << 12, k = 8;
  Signal s = planted(n, k, 4, 10.0, INFINITY);
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, n, k, SFFT_COMPLEX128, &o), SFFT_SUCCESS) << sfft_last_error();
  std::vector<uint64_t> sentinel_f(k, 999999), freqs(k);
  std::vector<cd> sentinel_v(k, cd(-7, -7)), values(k);
  std::vector<cd> nan(n, cd(std::numeric_limits<double>::quiet_NaN(), 0));
  sfft_test::DeviceMemory dx(n * 16), dnan(n * 16), df(k * 8), dv(k * 16);
  dx.upload(s.x.data(), n * 16);
  dnan.upload(nan.data(), n * 16);
  df.upload(sentinel_f.data(), k * 8);
  dv.upload(sentinel_v.data(), k * 16);
  uint64_t count = 3;
  EXPECT_EQ(sfft_exec(plan, dx.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(count, k);
  count = k;
  EXPECT_EQ(sfft_exec(plan, dnan.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count),
            SFFT_ERROR_INVALID_ARGUMENT);
  df.download(freqs.data(), k * 8);
  dv.download(values.data(), k * 16);
  EXPECT_EQ(freqs, sentinel_f);
  EXPECT_EQ(values, sentinel_v);
  count = k;
  ASSERT_EQ(sfft_exec(plan, dx.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count), SFFT_SUCCESS)
      << sfft_last_error();
  EXPECT_EQ(count, k);
  df.download(freqs.data(), k * 8);
  expect_same_set(freqs, s.support);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// The plan's stream: a non-default stream gives the same answer as the default one.
TEST(sparse_cuda, UserStream) {
  SFFT_SKIP_WITHOUT_GPU();
  const uint64_t n = 1 << 16, k = 20;
  Signal s = planted(n, k, 8, 10.0, INFINITY);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  o.stream = stream;
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, n, k, SFFT_COMPLEX128, &o), SFFT_SUCCESS) << sfft_last_error();
  sfft_test::DeviceMemory dx(n * 16), df(k * 8), dv(k * 16);
  dx.upload(s.x.data(), n * 16);
  uint64_t count = k;
  ASSERT_EQ(sfft_exec(plan, dx.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count), SFFT_SUCCESS)
      << sfft_last_error();
  std::vector<uint64_t> freqs(count);
  df.download(freqs.data(), count * 8);
  expect_same_set(freqs, s.support);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  cudaStreamDestroy(stream);
}
#endif

}  // namespace
