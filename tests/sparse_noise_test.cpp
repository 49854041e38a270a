// SPDX-License-Identifier: Apache-2.0
// The sparse FFT under white noise (docs/sparse-noise.md): support recall over 100 seeded trials per row down
// to 3 dB, and the exec report (sfft_report): it flags wrong answers (pure noise, k far too small, a dense
// spectrum), reports ~1.0 explained for clean signals and SNR / (SNR + 1) with the noise floor for right
// answers under noise; its C contract (before any exec, signals of a batch, struct_size).
#include "sparse_fixture.hpp"

namespace {

// A row of the recall table: trials signals of k tones (magnitudes log-uniform in [1, range]) at snr_db, one
// ROBUST plan. recall_target: the least mean recall over the trials; a trial fails when its recall is below
// it, and at most max_failures of the trials may.
struct RecallRow {
  int log2n;
  uint64_t k;
  double range;
  double snr_db;
  double recall_target;
  double max_failures;
};

class SparseNoise : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().where != Where::Cpu) SFFT_SKIP_WITHOUT_GPU();
  }
};

// Runs `x` through a plan of the case's backend and returns the report (and the result through `out`).
sfft_report exec_report(const Case &c, uint64_t n, uint64_t k, const sfft_sparse_options &knobs,
                        const std::vector<cd> &x, Result *out = nullptr) {
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = c.where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
  opts.seed = 5;
  sfft_plan plan = nullptr;
  sfft_report rep{};
  rep.struct_size = sizeof rep;
  EXPECT_EQ(sfft_create_ex(&plan, n, k, c.dtype, &opts, &knobs), SFFT_SUCCESS) << sfft_last_error();
  if (plan == nullptr) return rep;
  // The Runner owns its own plan: run through it for the values, then read this plan's report of the same
  // signal (same seed, same design: the same answer).
  Runner runner(c, n, k, 5, &knobs);
  Result r = runner.run(x);
  EXPECT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
  std::vector<uint64_t> freqs(k);
  std::vector<unsigned char> values(k * 16);
  uint64_t count = k;
  std::vector<std::complex<float>> xf;
  const void *xp = x.data();
  if (c.dtype == SFFT_COMPLEX64) {
    xf.assign(x.begin(), x.end());
    xp = xf.data();
  }
  EXPECT_EQ(sfft_exec(plan, xp, freqs.data(), values.data(), &count), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(sfft_get_report(plan, 0, &rep), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(rep.count, count);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  if (out != nullptr) *out = r;
  return rep;
}

std::string describe(const sfft_report &r) {
  char text[320];
  std::snprintf(text, sizeof text,
                "variant %d unexplained %d count %llu significant %llu unexplained_buckets %llu explained %.4f "
                "signal %.4g noise/bin %.4g excess %.3f",
                static_cast<int>(r.variant), r.unexplained, static_cast<unsigned long long>(r.count),
                static_cast<unsigned long long>(r.significant), static_cast<unsigned long long>(r.unexplained_buckets),
                r.explained, r.signal_energy, r.noise_floor, r.excess);
  return text;
}

TEST_P(SparseNoise, RecallDownTo3dB) {
  // Bucket noise at B = 4k buckets is what sets recall (per-bucket SNR = SNR * B / (1.5 k)), so these sizes
  // see what n = 2^24, k = 1000 sees at the same SNR. The targets are the (99 % at 10 dB, 95 % at 3 dB,
  // 99 % for log-uniform magnitudes at 20 dB); the CPU measured no trial below them (mean recall 0.9999 at 3 dB,
  // 1.000 elsewhere; 4 bits per stage, the previous default, found 6 % at 3 dB and 89 % at 10 dB), so 2 % of
  // the trials may fall short.
  const std::vector<RecallRow> rows = {
      {16, 10, 1, 10, 0.99, 0.02}, {16, 10, 1, 3, 0.95, 0.02},    {17, 100, 1, 10, 0.99, 0.02},
      {17, 100, 1, 3, 0.95, 0.02}, {17, 100, 10, 20, 0.99, 0.02},
  };
  const Case c = GetParam();
  constexpr int kTrials = 100;
  for (const RecallRow &row : rows) {
    const uint64_t n = uint64_t{1} << row.log2n;
    sfft_sparse_options knobs = variant_knobs(SFFT_SPARSE_ROBUST);
    Runner runner(c, n, row.k, 11, &knobs);
    double sum = 0, worst = 1;
    int failures = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
      Signal s = planted(n, row.k, 9000 + static_cast<uint64_t>(trial) * 7 + row.log2n, row.range, row.snr_db);
      Result r = runner.run(s.x);
      ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
      const double recall = score(s, r).recovery;
      sum += recall;
      worst = std::min(worst, recall);
      failures += recall < row.recall_target;
    }
    const double mean = sum / kTrials, failure_rate = static_cast<double>(failures) / kTrials;
    std::printf(
        "  n = 2^%d, k = %llu, magnitudes [1, %g], %g dB: mean recall %.4f, worst %.2f, trials below %.2f: "
        "%d of %d (failure rate %.2f, allowed %.2f)\n",
        row.log2n, static_cast<unsigned long long>(row.k), row.range, row.snr_db, mean, worst, row.recall_target,
        failures, kTrials, failure_rate, row.max_failures);
    EXPECT_GE(mean, row.recall_target) << "n = 2^" << row.log2n << ", k = " << row.k << ", " << row.snr_db << " dB";
    EXPECT_LE(failure_rate, row.max_failures)
        << "n = 2^" << row.log2n << ", k = " << row.k << ", " << row.snr_db << " dB";
  }
}

TEST_P(SparseNoise, ReportExplainsCleanAndNoisyRightAnswers) {
  const Case c = GetParam();
  const uint64_t n = uint64_t{1} << 16, k = 20;
  for (sfft_sparse_variant v : {SFFT_SPARSE_AUTO, SFFT_SPARSE_ROBUST, SFFT_SPARSE_EXACT}) {
    SCOPED_TRACE(testing::Message() << "variant " << v);
    Signal clean = planted(n, k, 31, 10.0, INFINITY);
    sfft_report r = exec_report(c, n, k, variant_knobs(v), clean.x);
    std::printf("  clean, variant %d: %s\n", static_cast<int>(v), describe(r).c_str());
    EXPECT_EQ(r.unexplained, 0);
    EXPECT_EQ(r.count, k);
    EXPECT_EQ(r.variant, v == SFFT_SPARSE_ROBUST ? SFFT_SPARSE_ROBUST : SFFT_SPARSE_EXACT);
    // The CUDA peeling kernels measure no energies (sfft.h): NaN there.
    const bool measured = c.where == Where::Cpu || r.variant == SFFT_SPARSE_ROBUST;
    if (measured) {
      EXPECT_GT(r.explained, 0.999);
      EXPECT_EQ(r.significant, k);
      double energy = 0;
      for (uint64_t f : clean.support) energy += std::norm(clean.truth[f]);
      EXPECT_NEAR(r.signal_energy, energy, 0.15 * energy);  // the buckets' estimate, a few % off
    } else {
      EXPECT_TRUE(std::isnan(r.explained));
    }
  }
  // A right answer at 10 dB explains 10/11 of the energy, and the noise floor is the noise's.
  Signal noisy = planted(n, k, 32, 1.0, 10.0);
  Result result;
  sfft_report r = exec_report(c, n, k, variant_knobs(SFFT_SPARSE_ROBUST), noisy.x, &result);
  std::printf("  10 dB, ROBUST: %s\n", describe(r).c_str());
  EXPECT_EQ(score(noisy, result).recovery, 1.0);
  EXPECT_EQ(r.unexplained, 0);
  EXPECT_EQ(r.significant, k);
  EXPECT_NEAR(r.explained, 10.0 / 11.0, 0.03);
  const double noise_per_bin = static_cast<double>(k) / 10.0 / static_cast<double>(n);  // unit tones, 10 dB
  EXPECT_NEAR(r.noise_floor, noise_per_bin, 0.2 * noise_per_bin);
  EXPECT_NEAR(r.excess, 1.0, 0.3);
}

TEST_P(SparseNoise, ReportFlagsWrongAnswers) {
  const Case c = GetParam();
  const uint64_t n = uint64_t{1} << 16;
  std::mt19937_64 rng(77);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::vector<cd> noise(n);
  for (auto &v : noise) v = cd(gauss(rng), gauss(rng));
  const Signal dense = planted(n, n / 8, 41, 10.0, INFINITY);  // n/8 tones: no sparse approximation at k = 50
  const Signal many = planted(n, 400, 42, 1.0, 30.0);          // 400 tones for k = 4
  struct Wrong {
    const char *what;
    const std::vector<cd> *x;
    uint64_t k;
  };
  for (const Wrong &w :
       {Wrong{"pure noise", &noise, 50}, Wrong{"dense spectrum", &dense.x, 50}, Wrong{"k far too small", &many.x, 4}}) {
    for (sfft_sparse_variant v : {SFFT_SPARSE_AUTO, SFFT_SPARSE_ROBUST, SFFT_SPARSE_EXACT}) {
      SCOPED_TRACE(testing::Message() << w.what << ", variant " << v);
      sfft_report r = exec_report(c, n, w.k, variant_knobs(v), *w.x);
      std::printf("  %s, variant %d: %s\n", w.what, static_cast<int>(v), describe(r).c_str());
      EXPECT_EQ(r.unexplained, 1);
      if (c.where == Where::Cpu || r.variant == SFFT_SPARSE_ROBUST) EXPECT_LT(r.explained, 0.5);
    }
  }
}

TEST_P(SparseNoise, ReportContract) {
  const Case c = GetParam();
  const uint64_t n = uint64_t{1} << 14, k = 8;
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = c.where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, n, k, c.dtype, &opts), SFFT_SUCCESS) << sfft_last_error();
  sfft_report r{};
  r.struct_size = sizeof r;
  EXPECT_EQ(sfft_get_report(plan, 0, &r), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("has not run"), std::string::npos) << sfft_last_error();
  EXPECT_EQ(sfft_get_report(plan, 0, nullptr), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sfft_get_report(nullptr, 0, &r), SFFT_ERROR_INVALID_ARGUMENT);

  // Three signals: clean, pure noise, clean; a report each.
  const std::size_t elem = c.dtype == SFFT_COMPLEX128 ? 16 : 8;
  std::vector<unsigned char> x(3 * n * elem);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> gauss(0.0, 1.0);
  for (std::size_t s = 0; s < 3; ++s) {
    std::vector<cd> xs = s == 1 ? std::vector<cd>(n) : planted(n, k, 50 + s, 10.0, INFINITY).x;
    if (s == 1)
      for (auto &v : xs) v = cd(gauss(rng), gauss(rng));
    for (uint64_t i = 0; i < n; ++i) {
      if (elem == 16) {
        reinterpret_cast<cd *>(x.data())[s * n + i] = xs[i];
      } else {
        reinterpret_cast<std::complex<float> *>(x.data())[s * n + i] = std::complex<float>(xs[i]);
      }
    }
  }
  std::vector<uint64_t> freqs(3 * k), counts(3, k);
  std::vector<unsigned char> values(3 * k * elem);
  ASSERT_EQ(sfft_exec_batch(plan, 3, x.data(), n, freqs.data(), values.data(), k, counts.data()), SFFT_SUCCESS)
      << sfft_last_error();
  for (uint64_t s = 0; s < 3; ++s) {
    ASSERT_EQ(sfft_get_report(plan, s, &r), SFFT_SUCCESS) << sfft_last_error();
    EXPECT_EQ(r.count, counts[s]);
    EXPECT_EQ(r.unexplained, s == 1 ? 1 : 0) << "signal " << s;
  }
  EXPECT_EQ(sfft_get_report(plan, 3, &r), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("3 signals"), std::string::npos) << sfft_last_error();

  // sfft_exec replaces the batch's reports with its one.
  uint64_t count = k;
  ASSERT_EQ(sfft_exec(plan, x.data(), freqs.data(), values.data(), &count), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(sfft_get_report(plan, 0, &r), SFFT_SUCCESS);
  EXPECT_EQ(r.unexplained, 0);
  EXPECT_EQ(sfft_get_report(plan, 1, &r), SFFT_ERROR_INVALID_ARGUMENT);

  // struct_size: a caller's older (shorter) struct gets its fields only; one below the variant is refused.
  struct Older {
    size_t struct_size;
    sfft_sparse_variant variant;
    int unexplained;
    uint64_t count;
  } older{};
  std::memset(&older, 0xab, sizeof older);
  older.struct_size = sizeof older;
  ASSERT_EQ(sfft_get_report(plan, 0, reinterpret_cast<sfft_report *>(&older)), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(older.struct_size, sizeof older);
  EXPECT_EQ(older.count, count);
  EXPECT_EQ(older.unexplained, 0);
  r.struct_size = sizeof(size_t);
  EXPECT_EQ(sfft_get_report(plan, 0, &r), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(sparse_noise, SparseNoise, testing::ValuesIn(all_cases()), case_name);

}  // namespace
