// SPDX-License-Identifier: Apache-2.0
// Sparse FFT recovery: planted k-sparse spectra (with and without noise) checked against FFTW's full
// transform of the same samples, recovery rates over many seeded trials, the top-k ordering, AUTO's choice,
// non-finite input, capacity and scale. Every test body runs on the CPU backend and on the CUDA backend
// (host and device pointers).

#include "sparse_fixture.hpp"

namespace {

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

// The `sparse` prefix makes every test match `ctest -R sparse`.
INSTANTIATE_TEST_SUITE_P(sparse, SparseFft, testing::ValuesIn(all_cases()), case_name);

}  // namespace
