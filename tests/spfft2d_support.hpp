// SPDX-License-Identifier: Apache-2.0
// What the spfft2d test programs share: COO matrices and their generators, the independent reference (FFTW's
// dense r2c_2d in double), and the Spfft2d fixture that runs each test body for every backend, precision,
// output memory and method (each program instantiates it over kBackends x kMethods).
#pragma once

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
#include <list>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "sfft/sfft.h"
#include "test_support.hpp"

namespace spfft2d_test {

using cd = std::complex<double>;

struct Coo {
  uint64_t rows = 0, cols = 0;
  std::vector<int64_t> r, c;
  std::vector<double> v;  // empty: binary
};

// Dense real matrix of a COO description: binary repeats count once, values repeats add up.
inline std::vector<double> dense_of(const Coo &m) {
  std::vector<double> a(m.rows * m.cols, 0.0);
  for (std::size_t k = 0; k < m.r.size(); ++k) {
    double &x = a[static_cast<std::size_t>(m.r[k]) * m.cols + static_cast<std::size_t>(m.c[k])];
    x = m.v.empty() ? 1.0 : x + m.v[k];
  }
  return a;
}

// The independent reference: FFTW's dense r2c_2d in double.
inline std::vector<cd> reference(const Coo &m) {
  std::vector<double> a = dense_of(m);
  std::vector<cd> y(m.rows * (m.cols / 2 + 1));
  fftw_plan p = fftw_plan_dft_r2c_2d(static_cast<int>(m.rows), static_cast<int>(m.cols), a.data(),
                                     reinterpret_cast<fftw_complex *>(y.data()), FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return y;
}

inline Coo random_matrix(uint64_t rows, uint64_t cols, double density, uint64_t seed, bool values = false) {
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

inline Coo banded(uint64_t n, int half_width) {
  Coo m{n, n, {}, {}, {}};
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i)
    for (int64_t j = std::max<int64_t>(0, i - half_width); j <= std::min<int64_t>(n - 1, i + half_width); ++j) {
      m.r.push_back(i);
      m.c.push_back(j);
    }
  return m;
}

inline void expect_error(sfft_status got, sfft_status want, const char *needle) {
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

inline std::string name_of(const testing::TestParamInfo<Param> &info) {
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
    // Every output byte starts as 0xff (NaN in either precision), so a method that leaves an entry unwritten or
    // adds into what the array held fails the comparison.
    std::vector<unsigned char> raw(n * elem(), 0xff);
    sfft_status s;
    if (backend().device_out) {
      sfft_test::DeviceMemory d(raw.size());
      d.upload(raw.data(), raw.size());
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

inline const Backend kBackends[] = {
    {SFFT_BACKEND_CPU, SFFT_COMPLEX64, false, "Cpu_c64"},
    {SFFT_BACKEND_CPU, SFFT_COMPLEX128, false, "Cpu_c128"},
    {SFFT_BACKEND_CUDA, SFFT_COMPLEX64, false, "Cuda_c64_hostout"},
    {SFFT_BACKEND_CUDA, SFFT_COMPLEX128, false, "Cuda_c128_hostout"},
    {SFFT_BACKEND_CUDA, SFFT_COMPLEX64, true, "Cuda_c64_deviceout"},
    {SFFT_BACKEND_CUDA, SFFT_COMPLEX128, true, "Cuda_c128_deviceout"},
};
inline const Method kMethods[] = {
    {SPFFT2D_METHOD_AUTO, "auto"},
    {SPFFT2D_METHOD_DIRECT, "direct"},
    {SPFFT2D_METHOD_DIRECT_ROWS, "directrows"},
    {SPFFT2D_METHOD_DENSE, "dense"},
    {SPFFT2D_METHOD_PRUNED, "pruned"},
};

inline sfft_options cpu_options() {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  return o;
}

}  // namespace spfft2d_test
