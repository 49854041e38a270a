// SPDX-License-Identifier: Apache-2.0
// AUTO's cost model (src/spfft2d/columns.cpp, estimate_costs) on the CUDA backend: the method it picks for
// representative shapes of the issue-22 suite where the H100 and H200 measurements (bench_spfft2d --device,
// 2026-11-25, 2026-11-28 and, for PRUNED's four-step pass and DENSE as they are now, 2026-11-30) separate the best
// method from the others by a wide margin, and the terms it was refitted with (the column sums' warp imbalance, the
// launches of the small transforms); and the CPU's choice of PRUNED over DENSE on sparse matrices from 256^2 up;
// picks at the H100's memory bandwidth (2026-12-06, with sizes outside the suite) and the memory scale's
// terms. Matrices are built here with the suite's families; the whole spectrum is costed as AUTO costs it, DIRECT as
// one tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spfft2d/method_names.hpp"
#include "spfft2d/plan.hpp"

namespace {

using namespace sfft::spfft2d;

struct Coo {
  uint64_t rows = 0, cols = 0;
  std::vector<int64_t> r, c;
  void add(uint64_t i, uint64_t j) {
    r.push_back(static_cast<int64_t>(i % rows));
    c.push_back(static_cast<int64_t>(j % cols));
  }
};

// The families of bench_spfft2d's suite (the same recipes, seeded here).
Coo make(const std::string &family, uint64_t n, uint64_t seed) {
  Coo m{n, family == "rectangular" ? n + n / 2 : n, {}, {}};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u01(0, 1);
  std::uniform_int_distribution<uint64_t> any_row(0, m.rows - 1), any_col(0, m.cols - 1);
  if (family == "powerlaw") {  // 8 n edges, endpoint density ~ x^-2/3, hubs scattered by a permutation
    std::vector<uint64_t> perm(n);
    for (uint64_t i = 0; i < n; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    auto end = [&] { return perm[std::min<uint64_t>(n - 1, static_cast<uint64_t>(n * std::pow(u01(rng), 3.0)))]; };
    for (uint64_t e = 0; e < 8 * n; ++e) m.add(end(), end());
  } else if (family == "banded") {  // 9 per row on a band of half-width 4
    for (uint64_t i = 0; i < n; ++i)
      for (uint64_t d = 0; d < 9; ++d)
        if (i + d >= 4 && i + d - 4 < n) m.add(i, i + d - 4);
  } else if (family == "uniform") {  // 0.1 % fill
    const auto nnz = static_cast<uint64_t>(1e-3 * static_cast<double>(n) * static_cast<double>(n));
    for (uint64_t e = 0; e < nnz; ++e) m.add(any_row(rng), any_col(rng));
  } else if (family == "rectangular") {  // 4 per row on average, n x 1.5 n
    for (uint64_t e = 0; e < 4 * n; ++e) m.add(any_row(rng), any_col(rng));
  } else if (family == "band+scattered") {  // dense band of half-width 16 plus n scattered entries
    for (uint64_t i = 0; i < n; ++i)
      for (uint64_t d = 0; d <= 32; ++d)
        if (i + d >= 16 && i + d - 16 < n) m.add(i, i + d - 16);
    for (uint64_t e = 0; e < n; ++e) m.add(any_row(rng), any_col(rng));
  }
  return m;
}

SparseColumns columns(const Coo &m) {
  return build_columns(m.rows, m.cols, m.r.size(), m.r.data(), m.c.data(), nullptr, 1, "spfft2d_cost_test");
}

MethodCosts whole_costs(const SparseColumns &m, std::size_t complex_bytes = 8, double memory_scale = 1.0) {
  Layout one(m.rows, m.cols);
  one.tile = one.half + 1;
  return estimate_costs(m, one, CostBackend::Cuda, complex_bytes, memory_scale);
}

// The H100's peak memory bandwidth as cuda::memory_bandwidth reports it (memory clock 2619 MHz, 5120-bit bus).
constexpr double kH100Bandwidth = 2.0 * 2619e6 * 5120 / 8;

struct Pick {
  std::string family;
  uint64_t n;
  spfft2d_method expected;
  // Measured times (ms; H100 unless marked H200) of the best method and the next best, for the record.
  const char *measured;
  double bandwidth = 0;  // the GPU's memory bandwidth (bytes/s) the pick is for; 0: the fitting GPU's
  double row_ns = 0;     // cuFFT's time a DIRECT row as AUTO times it on that GPU (row lengths with a factor 5 to 97)
};

class Spfft2dCost : public ::testing::TestWithParam<Pick> {};

TEST_P(Spfft2dCost, AutoPicksTheMeasuredBest) {
  const Pick &p = GetParam();
  const SparseColumns m = columns(make(p.family, p.n, 101));
  Layout one(m.rows, m.cols);
  one.tile = one.half + 1;
  MeasuredFfts measured;
  measured.row_line = p.row_ns;
  const MethodCosts c = estimate_costs(m, one, CostBackend::Cuda, 8, pruned_shape(m, CostBackend::Cuda, measured),
                                       memory_time_scale(p.bandwidth));
  EXPECT_STREQ(method_name(c.cheapest()), method_name(p.expected))
      << p.family << " " << m.rows << "x" << m.cols << " (measured: " << p.measured << "): direct " << c.direct * 1e-6
      << " ms, direct_rows " << c.direct_rows * 1e-6 << ", dense " << c.dense * 1e-6 << ", pruned " << c.pruned * 1e-6;
}

INSTANTIATE_TEST_SUITE_P(
    Suite, Spfft2dCost,
    ::testing::Values(
        // Hub rows at a power of two: the four-step generation with a 32-bit phase product and runs apart.
        Pick{"powerlaw", 16384, SPFFT2D_METHOD_PRUNED, "H200: pruned 1.58, dense 2.04"},
        // Rows of adjacent columns: the generation's run entries.
        Pick{"banded", 16384, SPFFT2D_METHOD_PRUNED, "pruned 1.90, dense 2.65; H200: pruned 1.11, dense 2.06"},
        Pick{"banded", 8192, SPFFT2D_METHOD_PRUNED, "H200: pruned 0.320, dense 0.507"},
        Pick{"band+scattered", 16384, SPFFT2D_METHOD_PRUNED, "H200: pruned 1.34, dense 2.07"},
        // A large prime: cuFFT's Bluestein makes the dense path 8.5 ms.
        Pick{"banded", 8219, SPFFT2D_METHOD_DIRECT, "one-tile direct 1.74, direct_rows 3.66, dense 8.48"},
        Pick{"band+scattered", 8219, SPFFT2D_METHOD_DIRECT, "one-tile direct 1.96, direct_rows 4.82"},
        // 1.5 n columns (2^a 3): cuFFT's 2-D R2C is 2.4x the square one for 1.5x the points.
        Pick{"rectangular", 16384, SPFFT2D_METHOD_PRUNED,
             "pruned 3.08, one-tile direct 3.17-3.20, dense 6.36; H200: pruned 2.06, direct 3.78, dense 4.92"},
        // At the H100's bandwidth (2026-12-06): PRUNED's generation overlapping its write (AUTO had run DENSE at
        // power-law 4096^2); the one-tile DIRECT at 6144^2 (a per_col_term fitted to the suite's tiled DIRECT
        // times had sent these to DENSE).
        Pick{"powerlaw", 4096, SPFFT2D_METHOD_PRUNED, "pruned 0.164, dense 0.186", kH100Bandwidth},
        Pick{"banded", 6144, SPFFT2D_METHOD_DIRECT, "one-tile direct 0.313, dense 0.673", kH100Bandwidth},
        Pick{"uniform", 6144, SPFFT2D_METHOD_DIRECT, "one-tile direct 0.316, dense 0.674", kH100Bandwidth},
        // The one tile's fixed cost (direct_call): 45 us had kept these on DENSE.
        Pick{"banded", 3000, SPFFT2D_METHOD_DIRECT, "one-tile direct 0.090, dense 0.165", kH100Bandwidth},
        Pick{"uniform", 3000, SPFFT2D_METHOD_DIRECT, "one-tile direct 0.086, dense 0.166", kH100Bandwidth},
        Pick{"banded", 16384, SPFFT2D_METHOD_PRUNED, "pruned 1.50, dense 2.65", kH100Bandwidth},
        Pick{"banded", 8219, SPFFT2D_METHOD_DIRECT, "one-tile direct 2.01, direct_rows 3.62", kH100Bandwidth},
        // 8219 x 12328 (2^3 23 67) and 10007 x 15010 (2 5 19 79): the one-tile DIRECT with cuFFT's rows
        // (2026-12-06).
        Pick{"rectangular", 8219, SPFFT2D_METHOD_DIRECT, "one-tile direct 2.03, pruned 5.45, dense 6.66",
             kH100Bandwidth},
        Pick{"rectangular", 10007, SPFFT2D_METHOD_DIRECT, "one-tile direct 3.59, pruned 8.38, dense 10.4",
             kH100Bandwidth},
        // The one-tile DIRECT's refit (2026-12-06): AUTO had run DENSE at 1.24-1.44 times the one tile's time.
        Pick{"powerlaw", 3000, SPFFT2D_METHOD_DIRECT, "one-tile direct 0.127, dense 0.168", kH100Bandwidth},
        Pick{"band+scattered", 3000, SPFFT2D_METHOD_DIRECT, "one-tile direct 0.136, dense 0.168", kH100Bandwidth},
        Pick{"band+scattered", 6144, SPFFT2D_METHOD_DIRECT, "one-tile direct 0.465, dense 0.671", kH100Bandwidth},
        // Pass 1 at 32768 rows (Q = 256) holds 2 blocks a SM, not 4: AUTO had run PRUNED at 1.20 times DENSE.
        Pick{"uniform", 32768, SPFFT2D_METHOD_DENSE, "dense 11.59, pruned 13.89, one-tile direct 15.6", kH100Bandwidth},
        Pick{"powerlaw", 32768, SPFFT2D_METHOD_PRUNED, "pruned 7.74, dense 11.51", kH100Bandwidth},
        Pick{"band+scattered", 32768, SPFFT2D_METHOD_PRUNED, "pruned 6.20, dense 11.52", kH100Bandwidth},
        // 12000 columns: AUTO times cuFFT's rows (H100: 216-224 ns a row, about 2.9 times the model's 2^a 3^b
        // length). Many scattered nonzeros: the dense path; a band: the one-tile DIRECT.
        Pick{"band+scattered", 12000, SPFFT2D_METHOD_DENSE, "dense 2.36, one-tile direct 2.51, pruned 7.08",
             kH100Bandwidth, 218},
        Pick{"banded", 12000, SPFFT2D_METHOD_DIRECT, "one-tile direct 1.97, dense 2.36", kH100Bandwidth, 218}),
    [](const ::testing::TestParamInfo<Pick> &info) {
      std::string s =
          info.param.family + "_" + std::to_string(info.param.n) + (info.param.bandwidth > 0 ? "_h100" : "");
      for (char &ch : s)
        if (ch == '+') ch = '_';
      return s;
    });

// The memory terms follow the GPU's bandwidth: DENSE (memset, scatter, cuFFT: all memory) slows by nearly the
// scale, PRUNED on power-law rows (much of it the four-step generation, arithmetic) by less (H100 against H200,
// measured at 16384^2: DENSE 1.31 times, PRUNED 1.12); the CPU ignores the scale.
TEST(Spfft2dCostTerms, CudaMemoryTermsFollowTheBandwidth) {
  EXPECT_DOUBLE_EQ(memory_time_scale(0), 1.0) << "unknown bandwidth";
  EXPECT_DOUBLE_EQ(memory_time_scale(1e9), 4.0) << "clamped";
  EXPECT_DOUBLE_EQ(memory_time_scale(1e15), 0.25) << "clamped";
  const double h100 = memory_time_scale(kH100Bandwidth);
  EXPECT_GT(h100, 1.3);
  EXPECT_LT(h100, 1.6);
  const SparseColumns m = columns(make("powerlaw", 16384, 101));
  const MethodCosts fit = whole_costs(m), slower = whole_costs(m, 8, 2.0);
  EXPECT_GT(slower.dense / fit.dense, 1.9);
  EXPECT_LE(slower.dense / fit.dense, 2.0);
  EXPECT_GT(slower.pruned / fit.pruned, 1.2);
  EXPECT_LT(slower.pruned / fit.pruned, slower.dense / fit.dense - 0.2);
  Layout one(m.rows, m.cols);
  one.tile = one.half + 1;
  const MethodCosts cpu = estimate_costs(m, one, CostBackend::Cpu, 8),
                    cpu_scaled = estimate_costs(m, one, CostBackend::Cpu, 8, 2.0);
  EXPECT_EQ(cpu.dense, cpu_scaled.dense);
  EXPECT_EQ(cpu.pruned, cpu_scaled.pruned);
  EXPECT_EQ(cpu.direct, cpu_scaled.direct);
}

// The CPU model (the development host, bench_spfft2d --cpu, 2 threads, 2026-11-30): where the spectrum leaves the
// caches, PRUNED (each row built in cache and written once, the columns through buffers) beat DENSE (zero fill,
// scatter, FFTW's 2-D R2C) on every family with every row nonempty: banded 2048^2 10.8-14.4 ms against 17.6-19.9,
// 4096^2 66-71 against 101, 8192^2 302-372 against 707. Smaller spectra keep the fitted terms, under which those
// matrices cost DENSE no more than PRUNED (512^2: within 15 % either way, measured).
// The CPU's PRUNED against DENSE's three spectra of traffic at every size: development VM, 2 threads, 2026-12-06,
// DENSE took 1.4-2.3 times PRUNED's or DIRECT_ROWS' time at 256^2 and 512^2 on these families (it had been costed as
// if in cache up to 4 MiB of spectrum, and AUTO ran it there), and more from 1024^2 up.
TEST(Spfft2dCostTerms, CpuPicksPrunedOnSparseMatricesFrom256) {
  for (const char *family : {"banded", "band+scattered", "powerlaw", "blockdiag", "rectangular"}) {
    for (uint64_t n : {256u, 512u, 2048u, 8192u}) {
      const SparseColumns m = columns(make(family, n, 101));
      Layout one(m.rows, m.cols);
      one.tile = one.half + 1;
      const MethodCosts c = estimate_costs(m, one, CostBackend::Cpu, 8);
      EXPECT_STREQ(method_name(c.cheapest()), method_name(SPFFT2D_METHOD_PRUNED))
          << family << " " << n << ": dense " << c.dense * 1e-6 << " ms, pruned " << c.pruned * 1e-6;
    }
  }
}

// The CUDA DIRECT method's route for its row FFTs: cuFFT up to prime factors of 97 (12328 = 2^3 x 23 x 67, the
// suite's rectangular 8219 x 12328; 12416 = 2^7 x 97), Bluestein past them (primes, 2^4 x 3 x 127, 2 x 131), and the
// cost model prices what the engine runs: a Bluestein row length costs DIRECT more than a cuFFT one of about the
// same length.
TEST(Spfft2dCostTerms, CudaRowsTakeBluesteinOnlyPastPrime97) {
  for (uint64_t n : {1u, 2u, 3u, 7u, 11u, 143u, 97u, 3082u, 12328u, 12416u, 15010u, 16384u, 24576u})
    EXPECT_FALSE(cuda_rows_take_bluestein(n)) << n;
  for (uint64_t n : {101u, 127u, 6096u, 262u, 211u, 1009u, 8219u, 10007u, 24588u})
    EXPECT_TRUE(cuda_rows_take_bluestein(n)) << n;
  // H100, rectangular 8219 x 12328: DIRECT 2.64 ms with Bluestein's rows, 2.03 with cuFFT's (1.30 times); cuFFT's
  // rows of such a length cost about 5 times a 2^a 3^b length's per point (generic_radix). The model puts this
  // matrix's Bluestein rows at 1.29 times cuFFT's.
  Coo smooth{512, 12288, {}, {}}, library{512, 12328, {}, {}}, bluestein{512, 12323, {}, {}};  // 12323 is prime
  for (uint64_t e = 0; e < 4096; ++e) {
    smooth.add(e * 7919, e * 104729);
    library.add(e * 7919, e * 104729);
    bluestein.add(e * 7919, e * 104729);
  }
  const double direct_smooth = whole_costs(columns(smooth)).direct,
               direct_library = whole_costs(columns(library)).direct,
               direct_bluestein = whole_costs(columns(bluestein)).direct;
  EXPECT_GT(direct_bluestein, 1.2 * direct_library) << direct_bluestein << " ns against " << direct_library;
  EXPECT_GT(direct_library, 1.5 * direct_smooth) << direct_library << " ns against " << direct_smooth;
}

// A measured row transform (the CUDA engine times cuFFT's where the row length has a prime factor from 5 to 97)
// replaces DIRECT's modelled row FFTs: the estimate moves by the measured time a row times the half spectrum's rows,
// the other methods' do not, and a slow enough row transform sends AUTO from DIRECT to DENSE.
TEST(Spfft2dCostTerms, CudaMeasuredRowTransformPricesDirect) {
  const SparseColumns m = columns(make("banded", 6000, 101));  // rows of 6000 = 2^4 x 3 x 5^3
  Layout one(m.rows, m.cols);
  one.tile = one.half + 1;
  const auto costs = [&](double row_ns) {
    MeasuredFfts measured;
    measured.row_line = row_ns;
    return estimate_costs(m, one, CostBackend::Cuda, 8, pruned_shape(m, CostBackend::Cuda, measured),
                          memory_time_scale(kH100Bandwidth));
  };
  const MethodCosts fast = costs(50), slow = costs(500), modelled = costs(0);
  EXPECT_NEAR(slow.direct - fast.direct, 450.0 * static_cast<double>(one.half + 1), 1e-9 * slow.direct);
  EXPECT_EQ(fast.dense, slow.dense);
  EXPECT_EQ(fast.pruned, slow.pruned);
  EXPECT_EQ(fast.dense, modelled.dense);
  EXPECT_STREQ(method_name(fast.cheapest()), "direct") << fast.direct << " ns against dense " << fast.dense;
  EXPECT_STREQ(method_name(slow.cheapest()), "dense") << slow.direct << " ns against dense " << slow.dense;
}

// spfft2d_direct_test's AutoWholeSpectrumAsOneDirectTile needs AUTO to pick DIRECT for its matrix (2053^2
// prime, 2 % uniform fill, the same generator as spfft2d_support.hpp's random_matrix), checked on the GPU
// there; checked here without one.
TEST(Spfft2dCostTerms, PrimeUniformTwoPercentPicksDirect) {
  Coo m{2053, 2053, {}, {}};
  std::mt19937_64 rng(63);
  std::uniform_real_distribution<double> u(0, 1);
  for (uint64_t i = 0; i < m.rows; ++i)
    for (uint64_t j = 0; j < m.cols; ++j)
      if (u(rng) < 0.02) m.add(i, j);
  const MethodCosts c = whole_costs(columns(m));
  EXPECT_STREQ(method_name(c.cheapest()), "direct") << "direct " << c.direct << " ns, direct_rows " << c.direct_rows
                                                    << ", dense " << c.dense << ", pruned " << c.pruned;
}

// The warp imbalance term: the same number of nonzeros costs DIRECT more when it sits in a few long columns
// (one thread per column, a warp as slow as its longest column) than when spread one per column, while the
// methods that do not sum down columns cost the same.
TEST(Spfft2dCostTerms, LongColumnsCostDirectMore) {
  const uint64_t n = 4096;
  Coo spread{n, n, {}, {}}, hubs{n, n, {}, {}};
  for (uint64_t e = 0; e < 8 * n; ++e) {
    spread.add(e * 7919, e / 8);     // 8 entries in every column
    hubs.add(e, (e / n) * (n / 8));  // every row of 8 columns
  }
  const MethodCosts a = whole_costs(columns(spread)), b = whole_costs(columns(hubs));
  EXPECT_GT(b.direct, 3 * a.direct) << "spread " << a.direct << " ns, hub columns " << b.direct << " ns";
  EXPECT_DOUBLE_EQ(a.dense, b.dense);
  EXPECT_DOUBLE_EQ(a.direct_rows, b.direct_rows);
}

// PRUNED's four-step column pass (CUDA only): power-of-two row counts in [16, 65536] whose column pass is an
// FFT, split R = P x Q with P = 2^floor(log2(R) / 2); its R2C rows are only the rows far longer than the
// others (above 40 nonzeros and twice the mean), the generation sums the rest.
TEST(Spfft2dCostTerms, FourStepShape) {
  const SparseColumns band = columns(make("banded", 1024, 7));
  const PrunedShape cuda = pruned_shape(band, CostBackend::Cuda), cpu = pruned_shape(band, CostBackend::Cpu);
  EXPECT_TRUE(cuda.four_step);
  EXPECT_EQ(cuda.four_step_p, 32u);
  EXPECT_EQ(cuda.fft_rows, 0u) << "9 nonzeros a row are summed by the generation";
  EXPECT_FALSE(cpu.four_step);
  EXPECT_EQ(cpu.fft_rows, 0u) << "the CPU sums a band's run of 9 through its table: 2 terms, below 5/8 log2 cols";
  EXPECT_EQ(pruned_shape(columns(make("banded", 2048, 7)), CostBackend::Cuda).four_step_p, 32u);  // 32 x 64
  EXPECT_FALSE(pruned_shape(columns(make("banded", 1000, 7)), CostBackend::Cuda).four_step);
  EXPECT_FALSE(pruned_shape(columns(make("banded", 131072, 7)), CostBackend::Cuda).four_step);
  Coo hub = make("banded", 1024, 7);
  for (uint64_t j = 0; j < 1024; j += 2) hub.add(77, j);
  const PrunedShape h = pruned_shape(columns(hub), CostBackend::Cuda);
  EXPECT_TRUE(h.four_step);
  EXPECT_EQ(h.fft_rows, 1u) << "the row of 512 nonzeros goes to the R2C";
  Coo few{1024, 1024, {}, {}};
  for (uint64_t i = 0; i < 4; ++i) few.add(i * 200, i);
  const PrunedShape f = pruned_shape(columns(few), CostBackend::Cuda);
  EXPECT_TRUE(f.direct_columns);
  EXPECT_FALSE(f.four_step) << "4 nonempty rows: direct column sums";
}

// The CPU's break-even counts a row's entries, a run with a table kCpuRunTerms and any other nonzero one: rows of
// a band take direct sums, rows of as many nonzeros apart (or runs of lengths without a table) the R2C; the terms
// of the direct rows are what the cost model prices.
TEST(Spfft2dCostTerms, CpuBreakEvenCountsRunsAsEntries) {
  Coo m{1024, 1024, {}, {}};
  for (uint64_t i = 0; i < 256; ++i)
    for (uint64_t k = 0; k < 9; ++k) m.add(i, i + k);                       // a run of 9 a row
  for (uint64_t i = 256; i < 512; ++i)
    for (uint64_t k = 0; k < 9; ++k) m.add(i, 2 * k * (i % 50 + 1));      // 9 nonzeros apart
  for (uint64_t i = 512; i < 768; ++i)
    for (uint64_t k = 0; k < 2; ++k) m.add(i, 100 * k + i % 7);            // 2 singles
  const SparseColumns c = columns(m);
  const PrunedShape s = pruned_shape(c, CostBackend::Cpu);
  ASSERT_EQ(s.fft_row.size(), 768u);
  for (std::size_t j = 0; j < 768; ++j)
    EXPECT_EQ(s.fft_row[j] != 0, j >= 256 && j < 512) << "row " << j;
  EXPECT_EQ(s.fft_rows, 256u);
  EXPECT_DOUBLE_EQ(s.direct_terms, 256 * kCpuRunTerms + 256 * 2.0);
  const FourStepEntries e = four_step_entries(c, s, kCpuRunTables, kCpuMinRun);
  ASSERT_EQ(e.run_length, std::vector<int64_t>{9});
  EXPECT_EQ(e.runs[0], 1);
  EXPECT_EQ(e.start[1] - e.start[0], 1);
  // Without a run of kCpuMinRun anywhere (runs of 4 here) the rows are counted by their nonzeros, no entries made.
  Coo short_runs{1024, 1024, {}, {}};
  for (uint64_t i = 0; i < 300; ++i)
    for (uint64_t k = 0; k < 8; ++k) short_runs.add(i, (k / 4) * 100 + k % 4 + i % 7);  // two runs of 4
  const PrunedShape t = pruned_shape(columns(short_runs), CostBackend::Cpu);
  EXPECT_TRUE(t.entries.start.empty());
  EXPECT_EQ(t.fft_rows, 300u) << "8 nonzeros > 6.25";
  EXPECT_DOUBLE_EQ(t.direct_terms, 0.0);
}

// A measured row R2C (the CPU measures it where cols is not 7-smooth) sets the rows' break-even and PRUNED's price of
// an FFT row, both at the model's threads: at 8219 columns (width 4110), one thread's 315 us a row moves the
// break-even from 5/8 log2 8219 = 8.1 nonzeros to 315e3 / 2 / 4110 = 38.3, and each remaining FFT row is priced at
// half the measured time.
TEST(Spfft2dCostTerms, MeasuredRowFftSetsTheBreakEven) {
  Coo m{1024, 8219, {}, {}};
  for (uint64_t i = 0; i < 100; ++i)
    for (uint64_t k = 0; k < 20; ++k) m.add(i, 400 * k + i);  // 20 nonzeros apart
  for (uint64_t k = 0; k < 100; ++k) m.add(100, 80 * k + 3);    // 100 nonzeros apart
  const SparseColumns c = columns(m);
  MeasuredFfts row{};
  row.row_r2c = 315e3;
  const PrunedShape modelled = pruned_shape(c, CostBackend::Cpu), measured = pruned_shape(c, CostBackend::Cpu, row);
  EXPECT_EQ(modelled.fft_rows, 101u) << "20 nonzeros > 8.1";
  EXPECT_EQ(measured.fft_rows, 1u) << "only the row of 100 nonzeros > 38.3";
  EXPECT_DOUBLE_EQ(measured.direct_terms, 100 * 20.0);
  Layout one(c.rows, c.cols);
  const MethodCosts base = estimate_costs(c, one, CostBackend::Cpu, 8, measured);
  PrunedShape slower = measured;
  slower.measured.row_r2c = 1e6;
  EXPECT_NEAR(estimate_costs(c, one, CostBackend::Cpu, 8, slower).pruned - base.pruned,
              (1e6 - 315e3) / kCpuModelThreads, 1.0)
      << "the one FFT row is priced at the measured time on the model's threads";
}

// Measured column and tile-row DFTs replace the model's FFT terms: the column pass at width x column_line, DIRECT's
// row DFTs at (half + 1) x row_line, each over the model's threads.
TEST(Spfft2dCostTerms, MeasuredLineDftsPriceTheFftPasses) {
  Coo m{8219, 12328, {}, {}};
  for (uint64_t i = 0; i < 8219; i += 3) m.add(i, (i * 7) % 12328);
  const SparseColumns c = columns(m);
  const Layout one(c.rows, c.cols);
  MeasuredFfts lines{};
  lines.column_line = 100e3;
  lines.row_line = 150e3;
  const MethodCosts base = estimate_costs(c, one, CostBackend::Cpu, 8, pruned_shape(c, CostBackend::Cpu, lines));
  MeasuredFfts slower = lines;
  slower.column_line = 200e3;
  slower.row_line = 250e3;
  const MethodCosts more = estimate_costs(c, one, CostBackend::Cpu, 8, pruned_shape(c, CostBackend::Cpu, slower));
  const double W = static_cast<double>(one.width), H = static_cast<double>(one.half + 1);
  EXPECT_NEAR(more.direct_rows - base.direct_rows, 100e3 / kCpuModelThreads * W, 1.0);
  EXPECT_NEAR(more.pruned - base.pruned, 100e3 / kCpuModelThreads * W, 1.0);
  EXPECT_NEAR(more.direct - base.direct, 100e3 / kCpuModelThreads * H, 1.0);
  EXPECT_DOUBLE_EQ(more.dense, base.dense) << "DENSE runs FFTW's 2-D R2C, not the measured lines";
}

// The four-step generation sums each row's runs (entries with a table) before its single nonzeros, in loops of
// their own (FourStepRow::runs, four_step.cu); every nonzero of a summed row is in exactly one entry.
TEST(Spfft2dCostTerms, FourStepEntriesPutEachRowsRunsFirst) {
  const SparseColumns m = columns(make("band+scattered", 1024, 7));
  const PrunedShape s = pruned_shape(m, CostBackend::Cuda);
  ASSERT_TRUE(s.four_step);
  const FourStepEntries e = four_step_entries(m, s);
  ASSERT_EQ(e.start.size(), e.runs.size() + 1);
  int64_t direct_nnz = 0, covered = 0;
  for (std::size_t j = 0; j < m.row_id.size(); ++j)
    if (!s.fft_row[j]) direct_nnz += m.row_start[j + 1] - m.row_start[j];
  std::size_t mixed = 0;
  for (std::size_t d = 0; d + 1 < e.start.size(); ++d) {
    const int64_t runs_end = e.start[d] + e.runs[d];
    ASSERT_LE(runs_end, e.start[d + 1]) << "row " << d;
    for (int64_t k = e.start[d]; k < e.start[d + 1]; ++k) {
      const FourStepEntries::Entry &x = e.entry[static_cast<std::size_t>(k)];
      if (k < runs_end) {
        ASSERT_GE(x.table, 0) << "row " << d << ", entry " << k;
        covered += e.run_length[static_cast<std::size_t>(x.table)];
      } else {
        ASSERT_EQ(x.table, -1) << "row " << d << ", entry " << k;
        covered += 1;
      }
    }
    mixed += e.runs[d] > 0 && runs_end < e.start[d + 1] ? 1 : 0;
  }
  EXPECT_EQ(covered, direct_nnz);
  EXPECT_GT(mixed, 0u) << "rows of a band run and scattered single nonzeros";
}

// complex128 doubles the memory and FFT terms, never the fixed costs: every method costs more, and less than
// twice as much.
TEST(Spfft2dCostTerms, DoublePrecisionScalesTheVolumeTerms) {
  const SparseColumns m = columns(make("banded", 1024, 7));
  const MethodCosts f = whole_costs(m, 8), d = whole_costs(m, 16);
  for (auto [x, y] : {std::pair{f.direct, d.direct}, std::pair{f.direct_rows, d.direct_rows},
                      std::pair{f.dense, d.dense}, std::pair{f.pruned, d.pruned}}) {
    EXPECT_GT(y, x);
    EXPECT_LT(y, 2 * x);
  }
}

}  // namespace
