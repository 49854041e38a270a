// SPDX-License-Identifier: Apache-2.0
// spfft2d's whole-spectrum methods: the CPU's DENSE plans, PRUNED's row and column passes of every kind, the
// method reported and kept across a failed set, the whole workspace's out-of-memory path, AUTO's choice by cost.
#include "spfft2d_support.hpp"

namespace {

using namespace spfft2d_test;

// The CPU's DENSE on small grids scatters into an array of the plan and runs FFTW's out-of-place r2c, with one
// plan for outputs aligned like FFTW's planning arrays and one for any other (src/spfft2d/cpu.cpp): an output
// starting one element past an aligned address takes the second. Grids above 2^21 cells transform in place. The
// column pass of DIRECT_ROWS and PRUNED (and AUTO's) on 512 rows runs FFTW's four-step blocks in place in the
// output, with FFTW_UNALIGNED plans made by the first call whose output needs them (common/fftw_columns.hpp).
// Outputs 0, 8 and one element's bytes past a 64-byte boundary, each against FFTW's dense r2c_2d in double.
TEST_P(Spfft2d, CpuOutputOfAnyAlignment) {
  if (backend().backend != SFFT_BACKEND_CPU || method() == SPFFT2D_METHOD_DIRECT)
    GTEST_SKIP() << "the CPU's whole-spectrum FFTW plans";
  const std::vector<Coo> matrices =
      method() == SPFFT2D_METHOD_DENSE
          ? std::vector<Coo>{random_matrix(96, 130, 0.05, 41, true), random_matrix(1500, 1501, 0.0004, 42)}
          : std::vector<Coo>{random_matrix(512, 130, 0.05, 43, true)};
  for (const Coo &m : matrices) {
    spfft2d_plan p = make(m);
    ASSERT_NE(p, nullptr);
    const std::size_t n = m.rows * (m.cols / 2 + 1);
    for (std::size_t shift : {std::size_t{0}, std::size_t{8}, elem(), std::size_t{0}}) {
      SCOPED_TRACE(std::to_string(m.rows) + "x" + std::to_string(m.cols) + ", output " + std::to_string(shift) +
                   " bytes past an aligned address");
      // 64-byte aligned storage (operator new of an over-aligned type), the output `shift` bytes into it.
      struct alignas(64) Line {
        unsigned char bytes[64];
      };
      std::vector<Line> storage((n + 1) * elem() / 64 + 2);
      unsigned char *out = reinterpret_cast<unsigned char *>(storage.data()) + shift;
      ASSERT_EQ(spfft2d_exec(p, out), SFFT_SUCCESS) << sfft_last_error();
      check(m, widen(std::vector<unsigned char>(out, out + n * elem()), n));
    }
    EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
  }
}

// Matrices that take each of PRUNED's passes (every method checks them): few nonempty rows, each with many
// nonzeros (FFT rows, direct column sums), many nonempty rows mixing single nonzeros and full rows (direct and
// FFT rows, FFT column pass) with empty rows and columns, on prime, odd and rectangular shapes; a single
// nonempty row, a single column, and full matrices.
TEST_P(Spfft2d, SparseRowsOfEveryKind) {
  const auto few_full_rows = [](uint64_t rows, uint64_t cols, std::vector<int64_t> which, bool values) {
    Coo m{rows, cols, {}, {}, {}};
    for (int64_t r : which)
      for (uint64_t c = 0; c < cols; c += 2) {
        m.r.push_back(r);
        m.c.push_back(static_cast<int64_t>(c));
        if (values) m.v.push_back(0.25 + static_cast<double>((r * 7 + static_cast<int64_t>(c)) % 5));
      }
    return m;
  };
  check_matrix(few_full_rows(211, 257, {0, 17, 210}, false));
  check_matrix(few_full_rows(96, 130, {5}, true));
  check_matrix(few_full_rows(1, 64, {0}, false));
  Coo mixed = random_matrix(101, 96, 0.01, 70, true);
  Coo extra = few_full_rows(101, 96, {3, 50, 99}, true);
  mixed.r.insert(mixed.r.end(), extra.r.begin(), extra.r.end());
  mixed.c.insert(mixed.c.end(), extra.c.begin(), extra.c.end());
  mixed.v.insert(mixed.v.end(), extra.v.begin(), extra.v.end());
  check_matrix(mixed);
  check_matrix(random_matrix(255, 37, 0.3, 71));
  check_matrix(random_matrix(64, 1, 0.5, 72, true));
  check_matrix(random_matrix(7, 5, 1.0, 73));
  check_matrix(Coo{1, 1, {0}, {0}, {2.5}});
}

// The CPU's direct sums in their task structure: rows and columns of 1 to about a dozen nonzeros (groups of four
// and the rest), outputs across several 128-output tasks (301 columns of output, 151 rows), binary and valued;
// and rows longer than the CPU's single twiddle table (2^22 columns: the split table), with five and nine valued
// nonzeros.
TEST_P(Spfft2d, DirectSumsInGroupsTasksAndSplitTables) {
  check_matrix(random_matrix(300, 601, 0.012, 74, true));
  check_matrix(random_matrix(300, 601, 0.012, 75));
  Coo wide{3, (uint64_t{1} << 22) + 4096, {}, {}, {}};
  const int64_t cols[] = {0, 1, 2097152, 4000037, 4198399, 3, 77, 1048576, 4194304, 4194305, 4198398, 12345, 999};
  for (int k = 0; k < 13; ++k) {
    wide.r.push_back(k < 5 ? 0 : 2);
    wide.c.push_back(cols[k]);
    wide.v.push_back(0.25 * (k + 1) * (k % 3 == 1 ? -1 : 1));
  }
  check_matrix(wide);
}

// Runs of adjacent nonzeros of equal weight, which PRUNED's direct rows on the CPU sum through a table of the run's
// length (up to kCpuRunTables lengths, the rest as single nonzeros): 40 lengths, runs at the first and the last
// column, split by a change of weight, beside up to six single nonzeros a row (the groups of four), an odd column
// count, binary and valued; and runs on rows longer than 2^22 columns (split twiddle tables), across 2^22.
TEST_P(Spfft2d, RunsOfAdjacentNonzeros) {
  for (const bool valued : {false, true}) {
    Coo m{300, 601, {}, {}, {}};
    const auto add = [&](int64_t r, int64_t c, double v) {
      m.r.push_back(r);
      m.c.push_back(c);
      if (valued) m.v.push_back(v);
    };
    for (int64_t i = 0; i < 300; ++i) {
      const int64_t len = 3 + i % 40;
      const int64_t start = i % 3 == 0 ? 0 : i % 3 == 1 ? 601 - len : (7 * i) % (601 - len);
      for (int64_t k = 0; k < len; ++k) add(i, start + k, k < len / 2 ? 1.5 : -0.5);
      const int64_t singles_from = start >= 300 ? 5 : 520;  // clear of the run, 13 apart
      for (int64_t k = 0; k < i % 7; ++k) add(i, singles_from + 13 * k, 0.75 + static_cast<double>(k));
    }
    SCOPED_TRACE(valued ? "valued" : "binary");
    check_matrix(m);
  }
  Coo wide{3, (uint64_t{1} << 22) + 4096, {}, {}, {}};
  const int64_t runs[][2] = {{0, 0}, {0, 4194300}, {1, 2097150}, {1, 4198390}, {2, 12345}};
  for (const auto &run : runs)
    for (int64_t k = 0; k < 6; ++k) {
      wide.r.push_back(run[0]);
      wide.c.push_back(run[1] + k);
      wide.v.push_back(0.5 + static_cast<double>(run[0]));
    }
  check_matrix(wide);
}

// Power-of-two row counts, where PRUNED's CUDA column pass is the four-step FFT (pruned_shape): every length of
// its two passes (R = P x Q, pass 1 of length Q: 16 = 4 x 4 up to 65536 = 256 x 256, odd powers 32 = 4 x 8,
// 128 = 8 x 16, 8192 = 64 x 128 and 32768 = 128 x 256),
// widths that end inside a 256-byte column tile (1, 2, 17, 66, 129 columns of output), prime, odd and even
// column counts, empty rows, binary and valued, rows far longer than the others (the pass reads their R2C
// spectra while it sums the other rows itself) and bands.
TEST_P(Spfft2d, PowerOfTwoRowsOfEveryFourStepSplit) {
  check_matrix(random_matrix(16, 7, 0.4, 80));
  check_matrix(random_matrix(32, 33, 0.2, 81, true));
  check_matrix(random_matrix(64, 131, 0.05, 82));
  check_matrix(random_matrix(256, 1, 0.3, 83, true));
  check_matrix(random_matrix(1024, 257, 0.005, 84));
  check_matrix(random_matrix(4096, 40, 0.01, 85, true));
  check_matrix(random_matrix(8192, 5, 0.01, 89, true));
  check_matrix(random_matrix(32768, 3, 0.02, 86));
  check_matrix(random_matrix(65536, 2, 0.01, 87, true));
  Coo mixed = random_matrix(128, 96, 0.02, 88, true);
  for (int64_t r : {3, 64, 127})
    for (int64_t c = 0; c < 96; ++c) {
      mixed.r.push_back(r);
      mixed.c.push_back(c);
      mixed.v.push_back(0.5 + static_cast<double>((r + c) % 3));
    }
  check_matrix(mixed);
  // Bands: runs of adjacent nonzeros of equal weight, which the four-step pass sums through its run tables
  // (four_step_entries), binary and with two weights per row (runs of 20 and 21 after the edges).
  check_matrix(banded(1024, 6));
  Coo weighted = banded(2048, 20);
  for (std::size_t k = 0; k < weighted.r.size(); ++k) weighted.v.push_back(weighted.c[k] < weighted.r[k] ? 1.0 : -2.5);
  check_matrix(weighted);
  // Device outputs one element past an aligned allocation: pass 2 shifts its column tiles by the output's
  // address so that its row segments are aligned (four_step.cu).
  if (backend().device_out) {
    for (const Coo &m : {random_matrix(1024, 257, 0.005, 90), banded(512, 5)}) {
      SCOPED_TRACE(std::to_string(m.rows) + "x" + std::to_string(m.cols) + ", output one element in");
      spfft2d_plan p = make(m);
      ASSERT_NE(p, nullptr);
      const std::size_t n = m.rows * (m.cols / 2 + 1);
      sfft_test::DeviceMemory d((n + 1) * elem());
      ASSERT_EQ(spfft2d_exec(p, static_cast<unsigned char *>(d.get()) + elem()), SFFT_SUCCESS) << sfft_last_error();
      sfft_test::device_synchronize();
      std::vector<unsigned char> raw((n + 1) * elem());
      d.download(raw.data(), raw.size());
      check(m, widen(std::vector<unsigned char>(raw.begin() + static_cast<std::ptrdiff_t>(elem()), raw.end()), n));
      EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
    }
  }
}

TEST_P(Spfft2d, MethodIsReportedAndFailedSetKeepsIt) {
  const Coo m = random_matrix(30, 26, 0.1, 17);
  spfft2d_plan p = make(m);
  ASSERT_NE(p, nullptr);
  spfft2d_method got = SPFFT2D_METHOD_AUTO;
  ASSERT_EQ(spfft2d_get_method(p, &got), SFFT_SUCCESS) << sfft_last_error();
  if (method() == SPFFT2D_METHOD_AUTO)
    EXPECT_NE(got, SPFFT2D_METHOD_AUTO) << "AUTO must resolve to a concrete method";
  else
    EXPECT_EQ(got, method());
  expect_error(spfft2d_set_method(p, static_cast<spfft2d_method>(5)), SFFT_ERROR_INVALID_ARGUMENT, "method = 5");
  expect_error(spfft2d_set_method(p, static_cast<spfft2d_method>(-1)), SFFT_ERROR_INVALID_ARGUMENT, "method");
  expect_error(spfft2d_get_method(p, nullptr), SFFT_ERROR_INVALID_ARGUMENT, "method is NULL");
  spfft2d_method after = SPFFT2D_METHOD_AUTO;
  ASSERT_EQ(spfft2d_get_method(p, &after), SFFT_SUCCESS);
  EXPECT_EQ(after, got);
  check(m, exec(p, m.rows, m.cols));
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
}

// The whole-spectrum methods' workspace: a failed allocation (rows x width elements, far beyond any
// machine) reports OUT_OF_MEMORY and leaves the plan's method and results as they were.
TEST_P(Spfft2d, WorkspaceOutOfMemoryKeepsPlan) {
  if (method() == SPFFT2D_METHOD_AUTO || method() == SPFFT2D_METHOD_DIRECT) GTEST_SKIP() << "no whole workspace";
  const uint64_t rows = (1ull << 31) - 1, cols = 1ull << 20;
  const int64_t r[] = {0, 5}, c[] = {3, 7};
  spfft2d_plan p = nullptr;
  ASSERT_EQ(spfft2d_create(&p, rows, cols, 2, r, c, nullptr, backend().dtype, &opts_), SFFT_SUCCESS)
      << sfft_last_error();
  spfft2d_method before = SPFFT2D_METHOD_AUTO;
  ASSERT_EQ(spfft2d_get_method(p, &before), SFFT_SUCCESS);
  EXPECT_EQ(before, SPFFT2D_METHOD_DIRECT) << "a 2^31-1 x 2^20 matrix must not pick a whole-spectrum method";
  expect_error(spfft2d_set_method(p, method()), SFFT_ERROR_OUT_OF_MEMORY, "bytes");
  spfft2d_method after = SPFFT2D_METHOD_AUTO;
  ASSERT_EQ(spfft2d_get_method(p, &after), SFFT_SUCCESS);
  EXPECT_EQ(after, before);
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
}

// The cost model's choice on the CPU backend at the extremes: a nearly full matrix is transformed (DENSE or PRUNED's
// FFT rows, which measured within 1.11 of each other at 128^2), never summed directly; a tall matrix with a handful
// of nonzeros is never densified.
TEST(Spfft2dMethod, AutoChoosesByCost) {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  const Coo full = random_matrix(128, 128, 0.9, 18);
  spfft2d_plan p = nullptr;
  ASSERT_EQ(spfft2d_create(&p, full.rows, full.cols, full.r.size(), full.r.data(), full.c.data(), nullptr,
                           SFFT_COMPLEX64, &o),
            SFFT_SUCCESS);
  spfft2d_method got = SPFFT2D_METHOD_AUTO;
  ASSERT_EQ(spfft2d_get_method(p, &got), SFFT_SUCCESS);
  EXPECT_TRUE(got == SPFFT2D_METHOD_DENSE || got == SPFFT2D_METHOD_PRUNED) << "method " << got;
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
  const int64_t r[] = {1, 900, 4000}, c[] = {2, 30, 4095};
  ASSERT_EQ(spfft2d_create(&p, 4096, 4096, 3, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_SUCCESS);
  ASSERT_EQ(spfft2d_get_method(p, &got), SFFT_SUCCESS);
  EXPECT_NE(got, SPFFT2D_METHOD_DENSE);
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Backends, Spfft2d, testing::Combine(testing::ValuesIn(kBackends), testing::ValuesIn(kMethods)),
                         name_of);

}  // namespace
