// SPDX-License-Identifier: Apache-2.0
// Sparse FFT: ROBUST's comb pre-pass (sFFT 2.0) on every backend: noisy and exactly sparse spectra, which
// residues it approves, non-finite input.

#include "sparse_fixture.hpp"

namespace {

// ---------------------------------------------------------------- ROBUST with the comb pre-pass

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

// The `sparse` prefix makes every test match `ctest -R sparse`.
INSTANTIATE_TEST_SUITE_P(sparse, SparseFft, testing::ValuesIn(all_cases()), case_name);

}  // namespace
