// SPDX-License-Identifier: Apache-2.0
// spfft2d: the sparse-input 2-D FFT against FFTW's dense r2c_2d in double, on both backends and both
// precisions; tiled/streamed output against the one-shot output; the Matrix Market reader; bad input.
#include <fftw3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "sfft/sfft.h"
#include "test_support.hpp"

namespace {

using cd = std::complex<double>;

struct Coo {
  uint64_t rows = 0, cols = 0;
  std::vector<int64_t> r, c;
  std::vector<double> v;  // empty: binary
};

// Dense real matrix of a COO description: binary repeats count once, values repeats add up.
std::vector<double> dense_of(const Coo &m) {
  std::vector<double> a(m.rows * m.cols, 0.0);
  for (std::size_t k = 0; k < m.r.size(); ++k) {
    double &x = a[static_cast<std::size_t>(m.r[k]) * m.cols + static_cast<std::size_t>(m.c[k])];
    x = m.v.empty() ? 1.0 : x + m.v[k];
  }
  return a;
}

// The independent reference: FFTW's dense r2c_2d in double.
std::vector<cd> reference(const Coo &m) {
  std::vector<double> a = dense_of(m);
  std::vector<cd> y(m.rows * (m.cols / 2 + 1));
  fftw_plan p = fftw_plan_dft_r2c_2d(static_cast<int>(m.rows), static_cast<int>(m.cols), a.data(),
                                     reinterpret_cast<fftw_complex *>(y.data()), FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return y;
}

Coo random_matrix(uint64_t rows, uint64_t cols, double density, uint64_t seed, bool values = false) {
  Coo m{rows, cols, {}, {}, {}};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1), w(-2, 2);
  for (uint64_t i = 0; i < rows; ++i)
    for (uint64_t j = 0; j < cols; ++j)
      if (u(rng) < density) {
        m.r.push_back(static_cast<int64_t>(i));
        m.c.push_back(static_cast<int64_t>(j));
        if (values) m.v.push_back(w(rng));
      }
  return m;
}

Coo banded(uint64_t n, int half_width) {
  Coo m{n, n, {}, {}, {}};
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i)
    for (int64_t j = std::max<int64_t>(0, i - half_width); j <= std::min<int64_t>(n - 1, i + half_width); ++j) {
      m.r.push_back(i);
      m.c.push_back(j);
    }
  return m;
}

void expect_error(sfft_status got, sfft_status want, const char *needle) {
  EXPECT_EQ(got, want) << sfft_last_error();
  EXPECT_NE(std::string(sfft_last_error()).find(needle), std::string::npos)
      << "'" << sfft_last_error() << "' should mention '" << needle << "'";
}

struct Backend {
  sfft_backend backend;
  sfft_dtype dtype;
  bool device_out;
  const char *name;
};

struct Method {
  spfft2d_method method;
  const char *name;
};

using Param = std::tuple<Backend, Method>;

std::string name_of(const testing::TestParamInfo<Param> &info) {
  return std::string(std::get<0>(info.param).name) + "_" + std::get<1>(info.param).name;
}

// Every test body runs for each backend/dtype/output kind and each method of the plan.
class Spfft2d : public testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (backend().backend == SFFT_BACKEND_CUDA) SFFT_SKIP_WITHOUT_GPU();
    sfft_options_init(&opts_);
    opts_.backend = backend().backend;
  }
  const Backend &backend() const { return std::get<0>(GetParam()); }
  spfft2d_method method() const { return std::get<1>(GetParam()).method; }
  bool dbl() const { return backend().dtype == SFFT_COMPLEX128; }
  std::size_t elem() const { return dbl() ? 16 : 8; }

  spfft2d_plan make(const Coo &m) {
    spfft2d_plan p = nullptr;
    sfft_status s = spfft2d_create(&p, m.rows, m.cols, m.r.size(), m.r.data(), m.c.data(),
                                   m.v.empty() ? nullptr : m.v.data(), backend().dtype, &opts_);
    EXPECT_EQ(s, SFFT_SUCCESS) << sfft_last_error();
    if (p != nullptr) EXPECT_EQ(spfft2d_set_method(p, method()), SFFT_SUCCESS) << sfft_last_error();
    return p;
  }

  // Runs exec (or exec_rows over [row0, row0 + nrows)) and returns the result widened to double.
  std::vector<cd> exec(spfft2d_plan p, uint64_t rows, uint64_t cols, uint64_t row0 = 0, uint64_t nrows = ~0ull) {
    if (nrows == ~0ull) nrows = rows - row0;
    const std::size_t n = nrows * (cols / 2 + 1);
    std::vector<unsigned char> raw(n * elem());
    sfft_status s;
    if (backend().device_out) {
      sfft_test::DeviceMemory d(raw.size());
      s = nrows == rows ? spfft2d_exec(p, d.get()) : spfft2d_exec_rows(p, row0, nrows, d.get());
      sfft_test::device_synchronize();
      d.download(raw.data(), raw.size());
    } else {
      s = nrows == rows ? spfft2d_exec(p, raw.data()) : spfft2d_exec_rows(p, row0, nrows, raw.data());
    }
    EXPECT_EQ(s, SFFT_SUCCESS) << sfft_last_error();
    return widen(raw, n);
  }

  std::vector<cd> widen(const std::vector<unsigned char> &raw, std::size_t n) const {
    std::vector<cd> y(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (dbl()) {
        std::memcpy(&y[i], raw.data() + i * 16, 16);
      } else {
        std::complex<float> f;
        std::memcpy(&f, raw.data() + i * 8, 8);
        y[i] = cd(f.real(), f.imag());
      }
    }
    return y;
  }

  // Asserts the stated bounds: relative l2 error and max-abs error relative to sum |w| (= max |Y|
  // possible), per precision.
  void check(const Coo &m, const std::vector<cd> &y) {
    std::vector<cd> ref = reference(m);
    ASSERT_EQ(y.size(), ref.size());
    double scale = 0, max_err = 0;
    for (double x : dense_of(m)) scale += std::abs(x);
    for (std::size_t i = 0; i < y.size(); ++i) max_err = std::max(max_err, std::abs(y[i] - ref[i]));
    const double l2 = sfft_test::relative_l2_error(y.data(), ref.data(), y.size());
    const double l2_bound = dbl() ? 1e-12 : 2e-6, max_bound = dbl() ? 1e-13 : 1e-6;
    if (scale == 0) {
      EXPECT_EQ(max_err, 0.0) << "an all-zero matrix must give an exactly zero spectrum";
      return;
    }
    EXPECT_LE(l2, l2_bound) << m.rows << "x" << m.cols << " nnz " << m.r.size();
    EXPECT_LE(max_err / scale, max_bound) << m.rows << "x" << m.cols << " nnz " << m.r.size();
  }

  void check_matrix(const Coo &m) {
    spfft2d_plan p = make(m);
    ASSERT_NE(p, nullptr);
    check(m, exec(p, m.rows, m.cols));
    EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
  }

  // Tiles of 3 rows, row ranges and the stream against the one-shot output, bit for bit.
  void expect_tiles_match_one_shot(const Coo &m) {
    spfft2d_plan p = make(m);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(spfft2d_set_tile_rows(p, 3), SFFT_SUCCESS) << sfft_last_error();
    uint64_t tile = 0;
    ASSERT_EQ(spfft2d_get_info(p, nullptr, nullptr, nullptr, &tile, nullptr, nullptr), SFFT_SUCCESS);
    EXPECT_EQ(tile, 3u);
    const uint64_t W = m.cols / 2 + 1;
    // AUTO may compute a whole native-memory spectrum by another method than its tiles: there, the row
    // ranges and the stream are compared with a row range covering the whole spectrum (DIRECT tiles).
    const std::vector<cd> one_shot = exec(p, m.rows, m.cols);
    check(m, one_shot);
    const std::vector<cd> full = method() == SPFFT2D_METHOD_AUTO ? exec(p, m.rows, m.cols, 0, m.rows - 1) : one_shot;
    if (method() == SPFFT2D_METHOD_AUTO) {
      std::vector<cd> last = exec(p, m.rows, m.cols, m.rows - 1, 1);
      std::vector<cd> joined = full;
      joined.insert(joined.end(), last.begin(), last.end());
      check(m, joined);
    }
    for (uint64_t chunk : {1u, 5u, 16u}) {
      for (uint64_t r0 = 0; r0 < full.size() / W; r0 += chunk) {
        uint64_t n = std::min(chunk, full.size() / W - r0);
        std::vector<cd> part = exec(p, m.rows, m.cols, r0, n);
        ASSERT_EQ(0, std::memcmp(part.data(), full.data() + r0 * W, n * W * sizeof(cd))) << "rows " << r0 << "+" << n;
      }
    }
    // Streamed: every row once, bit-identical.
    struct Collect {
      std::vector<unsigned char> bytes;
      std::vector<int> seen;
      std::size_t row_bytes;
    } col{std::vector<unsigned char>(m.rows * W * elem()), std::vector<int>(m.rows, 0), W * elem()};
    auto cb = [](uint64_t row0, uint64_t nrows, const void *rows, void *user) {
      auto *c = static_cast<Collect *>(user);
      std::memcpy(c->bytes.data() + row0 * c->row_bytes, rows, nrows * c->row_bytes);
      for (uint64_t i = 0; i < nrows; ++i) c->seen[row0 + i]++;
    };
    ASSERT_EQ(spfft2d_exec_stream(p, cb, &col), SFFT_SUCCESS) << sfft_last_error();
    for (uint64_t i = 0; i < m.rows; ++i) EXPECT_EQ(col.seen[i], 1) << "row " << i;
    std::vector<cd> streamed = widen(col.bytes, m.rows * W);
    EXPECT_EQ(0, std::memcmp(streamed.data(), full.data(), full.size() * sizeof(cd)));
    check(m, streamed);
    // A different tile height changes only the rounding of the batched FFT.
    ASSERT_EQ(spfft2d_set_tile_rows(p, 0), SFFT_SUCCESS);
    check(m, exec(p, m.rows, m.cols));
    EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
  }

  sfft_options opts_;
};

TEST_P(Spfft2d, RandomBinaryAtSeveralDensities) {
  const uint64_t shapes[][2] = {{64, 128}, {101, 97}, {37, 53}, {128, 40}};
  const double densities[] = {0.002, 0.02, 0.2, 0.9};
  uint64_t seed = 1;
  for (auto &s : shapes)
    for (double d : densities) check_matrix(random_matrix(s[0], s[1], d, seed++));
}

TEST_P(Spfft2d, BandedOddPrimeAndPowerOfTwoDims) {
  check_matrix(banded(64, 2));
  check_matrix(banded(127, 3));
  check_matrix(banded(211, 1));  // prime
  check_matrix(random_matrix(256, 256, 0.01, 7));
  check_matrix(random_matrix(1, 17, 0.5, 8));
  check_matrix(random_matrix(17, 1, 0.5, 9));
  check_matrix(random_matrix(2, 2, 0.7, 10));
  check_matrix(random_matrix(1, 1, 1.0, 11));
}

// Row lengths that the CUDA DIRECT method transforms at their own length (7-smooth, powers of two) and
// those it transforms by its Bluestein pass at a length 2^a 3^b >= 2 cols - 1 (primes, odd composites with
// a factor above 7), with odd and even row counts; 8219 is the benzene case's prime (length 17496).
TEST_P(Spfft2d, PlainAndBluesteinRowLengths) {
  const uint64_t widths[] = {2, 3, 11, 13, 22, 143, 210, 211, 256, 1009};
  uint64_t seed = 40;
  for (uint64_t c : widths)
    for (uint64_t r : {5u, 16u}) check_matrix(random_matrix(r, c, 0.08, seed++));
  check_matrix(random_matrix(3, 8219, 0.01, seed++));
  check_matrix(random_matrix(7, 1009, 0.02, seed++, true));
}

// A whole spectrum after the tiles were made small: under AUTO on a CUDA plan with device output, a
// DIRECT choice computes it as one tile of its own (the 1031-column case), else by the chosen method.
TEST_P(Spfft2d, WholeSpectrumAfterSmallTiles) {
  for (const Coo &m : {random_matrix(40, 1031, 0.003, 60), random_matrix(64, 256, 0.01, 61)}) {
    spfft2d_plan p = make(m);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(spfft2d_set_tile_rows(p, 2), SFFT_SUCCESS) << sfft_last_error();
    check(m, exec(p, m.rows, m.cols));
    check(m, exec(p, m.rows, m.cols));  // a second run reuses the same buffers
    EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
  }
}

// A matrix for which AUTO's cost model picks DIRECT on a CUDA plan (2053 is prime: Bluestein rows). With small
// tiles set, the whole spectrum in device memory is computed as one tile of its own (pre-zeroed Bluestein
// padding, out-of-place forward transform); both it and the small tiles (row ranges covering everything)
// match FFTW. Every method of the CUDA plan runs the same checks.
TEST_P(Spfft2d, AutoWholeSpectrumAsOneDirectTile) {
  if (backend().backend != SFFT_BACKEND_CUDA) GTEST_SKIP() << "the one-tile whole spectrum is the CUDA plan's";
  const Coo m = random_matrix(2053, 2053, 0.02, 63);
  spfft2d_plan p = make(m);
  ASSERT_NE(p, nullptr);
  if (backend().backend == SFFT_BACKEND_CUDA && method() == SPFFT2D_METHOD_AUTO) {
    spfft2d_method got = SPFFT2D_METHOD_AUTO;
    ASSERT_EQ(spfft2d_get_method(p, &got), SFFT_SUCCESS);
    EXPECT_EQ(got, SPFFT2D_METHOD_DIRECT);
  }
  ASSERT_EQ(spfft2d_set_tile_rows(p, 16), SFFT_SUCCESS) << sfft_last_error();
  check(m, exec(p, m.rows, m.cols));
  std::vector<cd> ranges = exec(p, m.rows, m.cols, 0, m.rows - 1), last = exec(p, m.rows, m.cols, m.rows - 1, 1);
  ranges.insert(ranges.end(), last.begin(), last.end());
  check(m, ranges);
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
}

TEST_P(Spfft2d, EmptyRowsAndColumnsSingleNonzeroAllZero) {
  Coo m = random_matrix(60, 70, 0.05, 12);
  Coo holes{60, 70, {}, {}, {}};
  for (std::size_t k = 0; k < m.r.size(); ++k)
    if (m.r[k] % 3 != 0 && m.c[k] % 4 != 1) holes.r.push_back(m.r[k]), holes.c.push_back(m.c[k]);
  check_matrix(holes);
  check_matrix(Coo{45, 33, {44}, {32}, {}});
  check_matrix(Coo{45, 33, {0}, {0}, {}});
  check_matrix(Coo{45, 33, {}, {}, {}});
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

TEST_P(Spfft2d, BinaryRepeatsCountOnceValueRepeatsAdd) {
  check_matrix(Coo{9, 10, {1, 1, 1, 4, 4}, {2, 2, 2, 7, 7}, {}});
  check_matrix(Coo{9, 10, {1, 1, 4, 4}, {2, 2, 7, 7}, {0.5, 0.25, -1.0, 3.0}});
}

TEST_P(Spfft2d, ValuesMode) {
  check_matrix(random_matrix(80, 96, 0.05, 13, true));
  check_matrix(random_matrix(33, 31, 0.3, 14, true));
}

// 38 columns take the CUDA DIRECT method's Bluestein pass (38 = 2 * 19), 40 its plain length.
TEST_P(Spfft2d, TiledRowsAndStreamAreBitIdenticalToOneShot) {
  for (uint64_t cols : {38u, 40u}) {
    SCOPED_TRACE(cols);
    expect_tiles_match_one_shot(random_matrix(47, cols, 0.08, 15));
  }
}

TEST_P(Spfft2d, FailedCallsLeaveOutputUntouchedAndPlanUsable) {
  const Coo m = random_matrix(20, 30, 0.1, 16);
  spfft2d_plan p = make(m);
  ASSERT_NE(p, nullptr);
  std::vector<unsigned char> out(20 * 16 * elem(), 0xab);
  EXPECT_EQ(spfft2d_exec_rows(p, 15, 6, out.data()), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("outside"), std::string::npos) << sfft_last_error();
  EXPECT_EQ(spfft2d_exec_rows(p, ~0ull, 2, out.data()), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char b) { return b == 0xab; }));
  EXPECT_EQ(spfft2d_exec(p, nullptr), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("out"), std::string::npos);
  EXPECT_EQ(spfft2d_exec_stream(p, nullptr, nullptr), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(spfft2d_exec_rows(p, 3, 0, out.data()), SFFT_SUCCESS);
  check(m, exec(p, m.rows, m.cols));
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
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

const Backend kBackends[] = {
    {SFFT_BACKEND_CPU, SFFT_COMPLEX64, false, "Cpu_c64"},
    {SFFT_BACKEND_CPU, SFFT_COMPLEX128, false, "Cpu_c128"},
    {SFFT_BACKEND_CUDA, SFFT_COMPLEX64, false, "Cuda_c64_hostout"},
    {SFFT_BACKEND_CUDA, SFFT_COMPLEX128, false, "Cuda_c128_hostout"},
    {SFFT_BACKEND_CUDA, SFFT_COMPLEX64, true, "Cuda_c64_deviceout"},
    {SFFT_BACKEND_CUDA, SFFT_COMPLEX128, true, "Cuda_c128_deviceout"},
};
const Method kMethods[] = {
    {SPFFT2D_METHOD_AUTO, "auto"},
    {SPFFT2D_METHOD_DIRECT, "direct"},
    {SPFFT2D_METHOD_DIRECT_ROWS, "directrows"},
    {SPFFT2D_METHOD_DENSE, "dense"},
    {SPFFT2D_METHOD_PRUNED, "pruned"},
};
INSTANTIATE_TEST_SUITE_P(Backends, Spfft2d, testing::Combine(testing::ValuesIn(kBackends), testing::ValuesIn(kMethods)),
                         name_of);

// The cost model's choice on the CPU backend at the extremes: a nearly full matrix goes dense, a tall
// matrix with a handful of nonzeros is never densified.
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
  EXPECT_EQ(got, SPFFT2D_METHOD_DENSE);
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
  const int64_t r[] = {1, 900, 4000}, c[] = {2, 30, 4095};
  ASSERT_EQ(spfft2d_create(&p, 4096, 4096, 3, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_SUCCESS);
  ASSERT_EQ(spfft2d_get_method(p, &got), SFFT_SUCCESS);
  EXPECT_NE(got, SPFFT2D_METHOD_DENSE);
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
}

// More rows (2^22 + 1) than the CUDA column sums' shared-memory twiddle tables cover, so they read the global
// tables; both precisions, DIRECT and AUTO, checked at sampled entries against exact direct sums.
TEST(Spfft2dCuda, TallMatrixUsesGlobalTwiddleTables) {
  SFFT_SKIP_WITHOUT_GPU();
  const uint64_t R = (uint64_t{1} << 22) + 1, C = 6, W = C / 2 + 1;
  const int64_t r[] = {0, 1, 4000037, 4194304, 2097152, 77}, c[] = {0, 5, 2, 3, 1, 1};
  const uint64_t us[] = {0, 1, 2, 12345, R / 2, R / 2 + 1, 3000001, R - 1};
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  for (sfft_dtype dt : {SFFT_COMPLEX64, SFFT_COMPLEX128})
    for (spfft2d_method method : {SPFFT2D_METHOD_DIRECT, SPFFT2D_METHOD_AUTO}) {
      SCOPED_TRACE(::testing::Message() << "dtype " << dt << " method " << method);
      const std::size_t elem = dt == SFFT_COMPLEX128 ? 16 : 8;
      spfft2d_plan p = nullptr;
      ASSERT_EQ(spfft2d_create(&p, R, C, 6, r, c, nullptr, dt, &o), SFFT_SUCCESS) << sfft_last_error();
      ASSERT_EQ(spfft2d_set_method(p, method), SFFT_SUCCESS) << sfft_last_error();
      sfft_test::DeviceMemory d(R * W * elem);
      ASSERT_EQ(spfft2d_exec(p, d.get()), SFFT_SUCCESS) << sfft_last_error();
      sfft_test::device_synchronize();
      std::vector<unsigned char> raw(R * W * elem);
      d.download(raw.data(), raw.size());
      double max_err = 0;
      for (uint64_t u : us)
        for (uint64_t v = 0; v < W; ++v) {
          std::complex<long double> want = 0;
          for (int k = 0; k < 6; ++k) {
            // Exact phase (r u / R + c v / C) mod 1 from integers.
            const unsigned __int128 RC = static_cast<unsigned __int128>(R) * C;
            const unsigned __int128 ph = (static_cast<unsigned __int128>(static_cast<uint64_t>(r[k]) * u % R) * C +
                                          static_cast<unsigned __int128>(static_cast<uint64_t>(c[k]) * v % C) * R) %
                                         RC;
            const long double a =
                -6.283185307179586476925286766559005768L * static_cast<long double>(ph) / static_cast<long double>(RC);
            want += std::complex<long double>(std::cos(a), std::sin(a));
          }
          cd got;
          if (elem == 16) {
            std::memcpy(&got, raw.data() + (u * W + v) * 16, 16);
          } else {
            std::complex<float> f;
            std::memcpy(&f, raw.data() + (u * W + v) * 8, 8);
            got = cd(f.real(), f.imag());
          }
          const cd exact(static_cast<double>(want.real()), static_cast<double>(want.imag()));
          max_err = std::max(max_err, std::abs(got - exact));
        }
      EXPECT_LE(max_err / 6, elem == 16 ? 1e-13 : 1e-6);
      EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
    }
}

// ------------------------------------------------------------------ argument checking

sfft_options cpu_options() {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  return o;
}

TEST(Spfft2dArgs, CreateRejectsBadArgumentsNamingThem) {
  sfft_options o = cpu_options();
  const int64_t r[] = {0, 1, 2}, c[] = {0, 1, 2}, bad_r[] = {0, 1, 5}, neg_c[] = {0, -1, 2};
  const double nan_v[] = {1, NAN, 2}, inf_v[] = {1, 2, INFINITY};
  spfft2d_plan p = reinterpret_cast<spfft2d_plan>(0x1);  // must stay untouched on failure
  expect_error(spfft2d_create(nullptr, 4, 4, 3, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "plan");
  expect_error(spfft2d_create(&p, 0, 4, 3, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT, "rows");
  expect_error(spfft2d_create(&p, 4, 0, 3, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT, "cols");
  expect_error(spfft2d_create(&p, 1ull << 31, 4, 3, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "rows");
  expect_error(spfft2d_create(&p, 4, ~0ull, 3, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT, "cols");
  expect_error(spfft2d_create(&p, 4, 4, ~0ull, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT, "nnz");
  expect_error(spfft2d_create(&p, 4, 4, 3, nullptr, c, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "row_idx is NULL");
  expect_error(spfft2d_create(&p, 4, 4, 3, r, nullptr, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "col_idx is NULL");
  expect_error(spfft2d_create(&p, 4, 4, 3, bad_r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "row_idx[2] = 5");
  expect_error(spfft2d_create(&p, 4, 4, 3, r, neg_c, nullptr, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "col_idx[1] = -1");
  expect_error(spfft2d_create(&p, 4, 4, 3, r, c, nan_v, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT, "values[1]");
  expect_error(spfft2d_create(&p, 4, 4, 3, r, c, inf_v, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT, "values[2]");
  expect_error(spfft2d_create(&p, 4, 4, 3, r, c, nullptr, SFFT_FLOAT32, &o), SFFT_ERROR_INVALID_ARGUMENT, "out_dtype");
  expect_error(spfft2d_create(&p, 4, 4, 3, r, c, nullptr, static_cast<sfft_dtype>(99), &o), SFFT_ERROR_INVALID_ARGUMENT,
               "out_dtype");
  sfft_options small = o;
  small.struct_size = 1;
  expect_error(spfft2d_create(&p, 4, 4, 3, r, c, nullptr, SFFT_COMPLEX64, &small), SFFT_ERROR_INVALID_ARGUMENT,
               "struct_size");
  EXPECT_EQ(p, reinterpret_cast<spfft2d_plan>(0x1));
  // nnz = 0 needs no arrays.
  ASSERT_EQ(spfft2d_create(&p, 4, 4, 0, nullptr, nullptr, nullptr, SFFT_COMPLEX64, &o), SFFT_SUCCESS);
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
}

// Issue 26 #6: finite values whose spectrum overflows (repeats merging to 2e308, or a sum beyond the float range
// with complex64 output) used to give an all-Inf spectrum with SUCCESS; create now refuses them, naming the
// entry, and accepts sums of |values| up to 0.999 times the output type's largest value.
TEST(Spfft2dArgs, SpectraThatWouldOverflowAreRefusedAtCreate) {
  sfft_options o = cpu_options();
  spfft2d_plan p = nullptr;
  const int64_t same_r[] = {1, 1}, same_c[] = {2, 2}, r[] = {0, 1}, c[] = {0, 2};
  const double huge[] = {1e308, 1e308}, big[] = {3e38, 1e38}, fits[] = {3e38, -3e37}, one[] = {1.79e308, 0};
  expect_error(spfft2d_create(&p, 4, 4, 2, same_r, same_c, huge, SFFT_COMPLEX128, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "repeated values of the nonzero at (row 1, col 2) sum to inf");
  expect_error(spfft2d_create(&p, 4, 4, 2, r, c, huge, SFFT_COMPLEX128, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "up to the nonzero at (row 1, col 2)");
  expect_error(spfft2d_create(&p, 4, 4, 2, r, c, big, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "above 0.999 times the largest complex64 value");
  EXPECT_EQ(p, nullptr);
  for (const double *v : {big, fits, one}) {
    for (sfft_dtype t : {SFFT_COMPLEX64, SFFT_COMPLEX128}) {
      if ((v == big || v == one) && t == SFFT_COMPLEX64) continue;
      ASSERT_EQ(spfft2d_create(&p, 4, 4, 2, r, c, v, t, &o), SFFT_SUCCESS) << sfft_last_error();
      std::vector<cd> y(4 * 3);
      std::vector<std::complex<float>> yf(4 * 3);
      ASSERT_EQ(spfft2d_exec(p, t == SFFT_COMPLEX64 ? static_cast<void *>(yf.data()) : y.data()), SFFT_SUCCESS);
      if (t == SFFT_COMPLEX64)
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = cd(yf[i].real(), yf[i].imag());
      const std::vector<cd> ref = reference(Coo{4, 4, {0, 1}, {0, 2}, {v[0], v[1]}});
      for (std::size_t i = 0; i < y.size(); ++i) {
        EXPECT_TRUE(std::isfinite(y[i].real()) && std::isfinite(y[i].imag())) << i;
        EXPECT_LE(std::abs(y[i] / 1e30 - ref[i] / 1e30), 1e-6 * std::abs(ref[i] / 1e30) + 1e-6) << i;
      }
      EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
      p = nullptr;
    }
  }
  // The Matrix Market path goes through the same check.
  const std::string path = testing::TempDir() + "spfft2d_overflow.mtx";
  std::ofstream(path) << "%%MatrixMarket matrix coordinate real general\n3 3 2\n2 2 1e308\n2 2 1e308\n";
  expect_error(spfft2d_create_from_mtx(&p, path.c_str(), 0, SFFT_COMPLEX128, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "(row 1, col 1) sum to inf");
  ASSERT_EQ(spfft2d_create_from_mtx(&p, path.c_str(), 1, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
}

TEST(Spfft2dArgs, DeadAndGarbageHandles) {
  sfft_options o = cpu_options();
  const int64_t r[] = {0}, c[] = {0};
  spfft2d_plan p = nullptr;
  ASSERT_EQ(spfft2d_create(&p, 3, 3, 1, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_SUCCESS);
  uint64_t rows = 0, cols = 0, nnz = 0, tile = 0, bytes = 0;
  sfft_backend b = SFFT_BACKEND_AUTO;
  ASSERT_EQ(spfft2d_get_info(p, &rows, &cols, &nnz, &tile, &bytes, &b), SFFT_SUCCESS);
  EXPECT_EQ(rows, 3u);
  EXPECT_EQ(cols, 3u);
  EXPECT_EQ(nnz, 1u);
  EXPECT_EQ(tile, 2u);  // source rows 0..rows/2
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(b, SFFT_BACKEND_CPU);
  ASSERT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
  std::complex<float> out[6];
  expect_error(spfft2d_exec(p, out), SFFT_ERROR_INVALID_ARGUMENT, "not a live handle");
  expect_error(spfft2d_destroy(p), SFFT_ERROR_INVALID_ARGUMENT, "not a live handle");
  expect_error(spfft2d_exec(nullptr, out), SFFT_ERROR_INVALID_ARGUMENT, "plan is NULL");
  int garbage = 0;
  expect_error(spfft2d_exec_rows(reinterpret_cast<spfft2d_plan>(&garbage), 0, 1, out), SFFT_ERROR_INVALID_ARGUMENT,
               "not a live handle");
  expect_error(spfft2d_set_tile_rows(nullptr, 4), SFFT_ERROR_INVALID_ARGUMENT, "plan is NULL");
  EXPECT_EQ(spfft2d_destroy(nullptr), SFFT_SUCCESS);
}

// Issue 26 #3: calls on a plan from inside its own exec_stream callback are refused (destroying it used to
// succeed and leave the stream running on freed memory; exec from the callback overwrote the rows being
// delivered); the stream still delivers every row, and the plan works afterwards.
struct ReentryProbe {
  spfft2d_plan plan = nullptr;
  std::vector<sfft_status> destroy, exec, exec_rows, info;
  uint64_t rows_seen = 0;
  std::vector<std::complex<double>> first_row;
  std::string destroy_error;
};

void reentering_callback(uint64_t row0, uint64_t nrows, const void *rows, void *user) {
  auto *probe = static_cast<ReentryProbe *>(user);
  std::vector<std::complex<double>> scratch(8 * 5);
  if (row0 == 0) {
    auto *y = static_cast<const std::complex<double> *>(rows);
    probe->first_row.assign(y, y + 5);
  }
  probe->exec.push_back(spfft2d_exec(probe->plan, scratch.data()));
  probe->exec_rows.push_back(spfft2d_exec_rows(probe->plan, 0, 1, scratch.data()));
  probe->info.push_back(spfft2d_get_info(probe->plan, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
  probe->destroy.push_back(spfft2d_destroy(probe->plan));
  probe->destroy_error = sfft_last_error();
  probe->rows_seen += nrows;
}

TEST(Spfft2dArgs, CallsFromItsOwnStreamCallbackAreRefused) {
  sfft_options o = cpu_options();
  const Coo m = random_matrix(8, 8, 0.3, 11, true);
  ReentryProbe probe;
  ASSERT_EQ(spfft2d_create(&probe.plan, 8, 8, m.r.size(), m.r.data(), m.c.data(), m.v.data(), SFFT_COMPLEX128, &o),
            SFFT_SUCCESS)
      << sfft_last_error();
  ASSERT_EQ(spfft2d_set_tile_rows(probe.plan, 1), SFFT_SUCCESS);  // several blocks: several re-entries
  ASSERT_EQ(spfft2d_exec_stream(probe.plan, reentering_callback, &probe), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(probe.rows_seen, 8u);
  ASSERT_GT(probe.destroy.size(), 1u);
  for (const auto *calls : {&probe.destroy, &probe.exec, &probe.exec_rows, &probe.info})
    for (sfft_status s : *calls) EXPECT_EQ(s, SFFT_ERROR_INVALID_ARGUMENT);
  const std::vector<cd> ref = reference(m);
  ASSERT_EQ(probe.first_row.size(), 5u);
  for (int v = 0; v < 5; ++v) EXPECT_NEAR(std::abs(probe.first_row[v] - ref[v]), 0.0, 1e-12) << v;
  std::vector<cd> y(8 * 5);
  EXPECT_EQ(spfft2d_exec(probe.plan, y.data()), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_LE(sfft_test::relative_l2_error(y.data(), ref.data(), y.size()), 1e-13);
  EXPECT_NE(probe.destroy_error.find("in use by another call"), std::string::npos) << probe.destroy_error;
  EXPECT_EQ(spfft2d_destroy(probe.plan), SFFT_SUCCESS);
}

TEST(Spfft2dArgs, CudaBackendWithoutDevice) {
  if (sfft_test::have_gpu()) GTEST_SKIP() << "a GPU is present";
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  const int64_t r[] = {0}, c[] = {0};
  spfft2d_plan p = nullptr;
  sfft_status s = spfft2d_create(&p, 3, 3, 1, r, c, nullptr, SFFT_COMPLEX64, &o);
  EXPECT_EQ(s, SFFT_HAVE_CUDA ? SFFT_ERROR_NO_DEVICE : SFFT_ERROR_UNSUPPORTED) << sfft_last_error();
  EXPECT_EQ(p, nullptr);
  // AUTO falls back to the CPU when no GPU is usable.
  o.backend = SFFT_BACKEND_AUTO;
  ASSERT_EQ(spfft2d_create(&p, 3, 3, 1, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_SUCCESS);
  sfft_backend b = SFFT_BACKEND_CUDA;
  EXPECT_EQ(spfft2d_get_info(p, nullptr, nullptr, nullptr, nullptr, nullptr, &b), SFFT_SUCCESS);
  EXPECT_EQ(b, SFFT_BACKEND_CPU);
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
}

// The one backend rule (sfft.h "Backends"): AUTO follows the COO arrays (host: the CPU, GPU present or not;
// device: CUDA), and a plan from a file, which has no arrays, takes the GPU when one is usable.
TEST(Spfft2dArgs, AutoFollowsTheArraysAndTheFileTakesTheGpu) {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_AUTO;
  const int64_t r[] = {0, 2}, c[] = {1, 2};
  auto backend_of = [](spfft2d_plan p) {
    sfft_backend b = SFFT_BACKEND_AUTO;
    EXPECT_EQ(spfft2d_get_info(p, nullptr, nullptr, nullptr, nullptr, nullptr, &b), SFFT_SUCCESS);
    EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
    return b;
  };
  spfft2d_plan p = nullptr;
  ASSERT_EQ(spfft2d_create(&p, 3, 3, 2, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(backend_of(p), SFFT_BACKEND_CPU);
  const std::string path = testing::TempDir() + "spfft2d_auto_backend.mtx";
  std::ofstream(path) << "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 3\n";
  ASSERT_EQ(spfft2d_create_from_mtx(&p, path.c_str(), 1, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(backend_of(p), sfft_test::have_gpu() ? SFFT_BACKEND_CUDA : SFFT_BACKEND_CPU);
  if (!sfft_test::have_gpu()) return;
  sfft_test::DeviceMemory dr(sizeof r), dc(sizeof c);
  dr.upload(r, sizeof r);
  dc.upload(c, sizeof c);
  ASSERT_EQ(spfft2d_create(&p, 3, 3, 2, static_cast<const int64_t *>(dr.get()), static_cast<const int64_t *>(dc.get()),
                           nullptr, SFFT_COMPLEX64, &o),
            SFFT_SUCCESS)
      << sfft_last_error();
  EXPECT_EQ(backend_of(p), SFFT_BACKEND_CUDA);
}

TEST(Spfft2dArgs, CpuPlanRejectsDeviceOutput) {
  SFFT_SKIP_WITHOUT_GPU();
  sfft_options o = cpu_options();
  const int64_t r[] = {0}, c[] = {0};
  spfft2d_plan p = nullptr;
  ASSERT_EQ(spfft2d_create(&p, 3, 3, 1, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_SUCCESS);
  sfft_test::DeviceMemory d(6 * 8);
  expect_error(spfft2d_exec(p, d.get()), SFFT_ERROR_INVALID_ARGUMENT, "device memory");
  EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
}

// ------------------------------------------------------------------ Matrix Market reader

class Mtx : public testing::Test {
 protected:
  std::string write(const std::string &name, const std::string &text) {
    std::string path = testing::TempDir() + "spfft2d_" + name + ".mtx";
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // Spectrum (complex128, CPU) of a plan from the file, or empty with the status in *status.
  std::vector<cd> spectrum_of_file(const std::string &path, int binary, sfft_status *status) {
    sfft_options o = cpu_options();
    spfft2d_plan p = nullptr;
    *status = spfft2d_create_from_mtx(&p, path.c_str(), binary, SFFT_COMPLEX128, &o);
    if (*status != SFFT_SUCCESS) return {};
    uint64_t rows = 0, cols = 0;
    spfft2d_get_info(p, &rows, &cols, nullptr, nullptr, nullptr, nullptr);
    std::vector<cd> y(rows * (cols / 2 + 1));
    EXPECT_EQ(spfft2d_exec(p, y.data()), SFFT_SUCCESS) << sfft_last_error();
    spfft2d_destroy(p);
    return y;
  }
  void expect_matches(const std::string &text, int binary, const Coo &want) {
    sfft_status s;
    std::vector<cd> y = spectrum_of_file(write("valid", text), binary, &s);
    ASSERT_EQ(s, SFFT_SUCCESS) << sfft_last_error() << "\n" << text;
    std::vector<cd> ref = reference(want);
    ASSERT_EQ(y.size(), ref.size());
    EXPECT_LE(sfft_test::relative_l2_error(y.data(), ref.data(), y.size()), 1e-13) << text;
  }
};

TEST_F(Mtx, ValidFilesOfEachKind) {
  expect_matches("%%MatrixMarket matrix coordinate pattern general\n% a comment\n\n3 4 3\n1 1\n2 4\n3 2\n", 1,
                 Coo{3, 4, {0, 1, 2}, {0, 3, 1}, {}});
  expect_matches("%%MatrixMarket matrix coordinate real general\r\n2 3 2\r\n1 3 2.5\r\n2 1 -1e0\r\n", 0,
                 Coo{2, 3, {0, 1}, {2, 0}, {2.5, -1.0}});
  // Binary mode: stored values become 1, a stored zero is dropped.
  expect_matches("%%MatrixMarket matrix coordinate real general\n2 3 3\n1 3 2.5\n2 1 -1\n2 2 0\n", 1,
                 Coo{2, 3, {0, 1}, {2, 0}, {}});
  // Symmetric: both triangles, the diagonal once.
  expect_matches("%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 4\n3 1 2\n3 2 -5\n", 0,
                 Coo{3, 3, {0, 2, 0, 2, 1}, {0, 0, 2, 1, 2}, {4, 2, 2, -5, -5}});
  expect_matches("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n", 1,
                 Coo{3, 3, {1, 0, 2}, {0, 1, 2}, {}});
  expect_matches("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n3 1 1.5\n", 0,
                 Coo{3, 3, {2, 0}, {0, 2}, {1.5, -1.5}});
  expect_matches("%%MATRIXMARKET Matrix Coordinate Pattern General\n2 2 0\n", 1, Coo{2, 2, {}, {}, {}});
}

TEST_F(Mtx, MalformedFilesGiveStatusAndLineNumber) {
  struct Case {
    const char *name, *text;
    sfft_status status;
    const char *needle;
  };
  const Case cases[] = {
      {"empty", "", SFFT_ERROR_INVALID_ARGUMENT, "line 1: empty file"},
      {"no_banner", "3 3 1\n1 1\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1: missing %%MatrixMarket"},
      {"short_banner", "%%MatrixMarket matrix coordinate\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1"},
      {"bad_object", "%%MatrixMarket vector coordinate real general\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1"},
      {"bad_field", "%%MatrixMarket matrix coordinate quaternion general\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1"},
      {"bad_symmetry", "%%MatrixMarket matrix coordinate real upper\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1"},
      {"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", SFFT_ERROR_UNSUPPORTED,
       "line 1"},
      {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n", SFFT_ERROR_UNSUPPORTED, "line 1"},
      {"array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", SFFT_ERROR_UNSUPPORTED, "line 1"},
      {"no_size", "%%MatrixMarket matrix coordinate pattern general\n% only a comment\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: file ends before the size line"},
      {"size_words", "%%MatrixMarket matrix coordinate pattern general\n3 3\n", SFFT_ERROR_INVALID_ARGUMENT, "line 2"},
      {"size_text", "%%MatrixMarket matrix coordinate pattern general\n3 x 1\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: COLS 'x'"},
      {"zero_rows", "%%MatrixMarket matrix coordinate pattern general\n0 3 0\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: ROWS = 0"},
      {"huge_dims", "%%MatrixMarket matrix coordinate pattern general\n99999999999 3 0\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: ROWS"},
      {"overflow", "%%MatrixMarket matrix coordinate pattern general\n99999999999999999999999 3 0\n",
       SFFT_ERROR_INVALID_ARGUMENT, "out of range"},
      {"negative_nnz", "%%MatrixMarket matrix coordinate pattern general\n3 3 -1\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: NNZ = -1"},
      {"huge_nnz_claim",
       "%%MatrixMarket matrix coordinate pattern general\n2000000000 2000000000 4000000000000000000\n1 1\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 3: file ends after 1 of the NNZ"},
      {"nnz_over_dense", "%%MatrixMarket matrix coordinate pattern general\n2 2 5\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: NNZ = 5 exceeds"},
      {"non_square_sym", "%%MatrixMarket matrix coordinate pattern symmetric\n2 3 1\n1 1\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 2"},
      {"truncated", "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 1\n2 2\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 4: file ends after 2 of the NNZ = 3"},
      {"too_many", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1\n2 2\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 4: more entries"},
      {"row_zero", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n0 2\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 4: row index 0"},
      {"col_big", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 4\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: column index 4"},
      {"missing_value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: entry needs 3 fields"},
      {"extra_field", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 7\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: entry needs 2 fields"},
      {"bad_value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: value 'abc'"},
      {"nan_value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 nan\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: value 'nan' is not finite"},
      {"float_integer", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 3: integer value"},
      {"skew_diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 3"},
      {"binary_junk", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n\x01\xff\x02 1\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 3"},
  };
  for (const Case &c : cases) {
    sfft_status s;
    spectrum_of_file(write(c.name, c.text), 1, &s);
    EXPECT_EQ(s, c.status) << c.name << ": " << sfft_last_error();
    EXPECT_NE(std::string(sfft_last_error()).find(c.needle), std::string::npos)
        << c.name << ": '" << sfft_last_error() << "' should contain '" << c.needle << "'";
  }
  sfft_status s;
  spectrum_of_file(testing::TempDir() + "spfft2d_does_not_exist.mtx", 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "cannot open");
  sfft_options o = cpu_options();
  spfft2d_plan p = nullptr;
  expect_error(spfft2d_create_from_mtx(&p, nullptr, 1, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "path is NULL");
}

// Issue 26 #5: a valid file read through a pipe (as from <(zcat file.mtx.gz)) or a FIFO gives the same plan as
// the regular file (the reader used to seek, failing as "empty file"); a directory says so.
std::string feed_pipe_and_path(const std::string &text, std::thread &writer) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  writer = std::thread([fd = fds[1], text] {
    for (std::size_t done = 0; done < text.size();) {
      ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    close(fd);
  });
  return "/dev/fd/" + std::to_string(fds[0]);
}

TEST_F(Mtx, PipesFifosAndDirectories) {
  // Long enough to take several reads of the reader's block and of the pipe's buffer.
  std::string text = "%%MatrixMarket matrix coordinate real general\n% comment\n300 200 3000\n";
  Coo want{300, 200, {}, {}, {}};
  std::mt19937_64 rng(5);
  for (int k = 0; k < 3000; ++k) {
    int64_t i = static_cast<int64_t>(rng() % 300), j = static_cast<int64_t>(rng() % 200);
    double v = static_cast<double>(rng() % 2001) / 100.0 - 10.0;
    want.r.push_back(i);
    want.c.push_back(j);
    want.v.push_back(v);
    text += std::to_string(i + 1) + " " + std::to_string(j + 1) + " " + std::to_string(v) + "\n";
  }
  const std::vector<cd> ref = reference(want);
  {
    std::thread writer;
    const std::string path = feed_pipe_and_path(text, writer);
    sfft_status s;
    std::vector<cd> y = spectrum_of_file(path, 0, &s);
    writer.join();
    close(std::stoi(path.substr(8)));
    ASSERT_EQ(s, SFFT_SUCCESS) << sfft_last_error();
    EXPECT_LE(sfft_test::relative_l2_error(y.data(), ref.data(), y.size()), 1e-13);
  }
  {
    const std::string fifo = testing::TempDir() + "spfft2d_fifo_" + std::to_string(getpid());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << text; });
    sfft_status s;
    std::vector<cd> y = spectrum_of_file(fifo, 0, &s);
    writer.join();
    unlink(fifo.c_str());
    ASSERT_EQ(s, SFFT_SUCCESS) << sfft_last_error();
    EXPECT_LE(sfft_test::relative_l2_error(y.data(), ref.data(), y.size()), 1e-13);
  }
  {  // an empty pipe is an empty file
    std::thread writer;
    const std::string path = feed_pipe_and_path("", writer);
    sfft_status s;
    spectrum_of_file(path, 1, &s);
    writer.join();
    close(std::stoi(path.substr(8)));
    expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 1: empty file");
  }
  sfft_status s;
  spectrum_of_file(testing::TempDir(), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "is a directory");
  spectrum_of_file("/proc/self/status", 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 1: missing %%MatrixMarket");
}

// Issue 26 #7: lines are capped (memory used to grow with a line: /dev/zero reached 1 GB), a NUL byte ends
// nothing (an index token "1<NUL>7" used to read as 1), and numbers are whole tokens.
TEST_F(Mtx, LineLimitNulBytesAndStrictTokens) {
  sfft_status s;
  spectrum_of_file("/dev/zero", 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 1: line is longer than 65536 bytes");
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  spectrum_of_file(write("long_comment", banner + "%" + std::string(70000, 'x') + "\n2 2 1\n1 1 1\n"), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 2: line is longer than 65536 bytes");
  spectrum_of_file(write("nul_index", banner + "3 3 1\n1" + std::string(1, '\0') + "7 2 1.5\n"), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 3: line holds a NUL byte");
  spectrum_of_file(write("nul_comment", banner + "% a" + std::string(1, '\0') + "b\n2 2 1\n1 1 1\n"), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 2: line holds a NUL byte");
  spectrum_of_file(write("hex_index", banner + "3 3 1\n0x1 1 1\n"), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 3: row index '0x1' is not an integer");
  spectrum_of_file(write("value_tail", banner + "3 3 1\n1 1 1.5x\n"), 0, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 3: value '1.5x' is not a number");
  spectrum_of_file(write("value_range", banner + "3 3 1\n1 1 1e999\n"), 0, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 3: value '1e999' is not finite");
  // A line just under the cap, explicit '+' signs and a value below the double range (read as 0) are fine.
  expect_matches(banner + "%" + std::string(65000, 'x') + "\n2 2 2\n+1 2 +2.5\n2 2 1e-400\n", 0,
                 Coo{2, 2, {0, 1}, {1, 1}, {2.5, 0.0}});
}

}  // namespace
