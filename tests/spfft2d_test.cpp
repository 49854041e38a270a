// SPDX-License-Identifier: Apache-2.0
// spfft2d: every method against FFTW's dense r2c_2d in double, on both backends and both precisions (random,
// banded, odd/prime/degenerate shapes, empty rows and columns, repeats, values), failed calls; the C API's
// argument and handle checks and the backend rule. Stage-specific tests: spfft2d_direct_test (DIRECT tiles,
// Bluestein rows, streaming), spfft2d_whole_test (whole-spectrum methods, PRUNED, AUTO), spfft2d_mtx_test.
#include "spfft2d_support.hpp"

namespace {

using namespace spfft2d_test;

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

// Lengths with a prime factor above 7 by either route of the CPU's FFTs (SFFT_FFT_ROUTE; unset, each plan times
// both): DIRECT's tile rows, PRUNED's FFT rows (dense rows) and the column pass of DIRECT_ROWS and PRUNED.
TEST_P(Spfft2d, PrimeLengthsByEitherFftRoute) {
  for (const char *route : {"fftw", "bluestein"}) {
    sfft_test::ScopedEnv fixed("SFFT_FFT_ROUTE", route);
    SCOPED_TRACE(route);
    check_matrix(random_matrix(37, 53, 0.6, 15));
    check_matrix(random_matrix(53, 37, 0.6, 16, true));
    check_matrix(banded(211, 3));
    check_matrix(random_matrix(4, 2 * 3 * 7 * 11, 0.2, 17));
  }
}

// PRUNED's FFT rows on the CPU by either route (SFFT_SPFFT2D_SPARSE_ROWS: the sparse route's limit of nonzeros;
// unset, each plan times both): none by the sparse route (SparseRowR2c), the rows of up to 16 nonzeros by it and
// the others (the hub row) by FFTW's R2C in one plan, every FFT row by it; binary and valued.
TEST_P(Spfft2d, FftRowsByEitherRoute) {
  for (const char *sparse : {"0", "16", "1000000"}) {
    sfft_test::ScopedEnv fixed("SFFT_SPFFT2D_SPARSE_ROWS", sparse);
    SCOPED_TRACE(std::string("SFFT_SPFFT2D_SPARSE_ROWS=") + sparse);
    check_matrix(random_matrix(40, 128, 0.1, 18));
    check_matrix(random_matrix(33, 192, 0.08, 19, true));
    Coo hub = random_matrix(24, 256, 0.05, 20, true);
    for (int64_t c = 0; c < 256; c += 2) hub.r.push_back(5), hub.c.push_back(c), hub.v.push_back(0.5 + c % 3);
    check_matrix(hub);
  }
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

TEST_P(Spfft2d, BinaryRepeatsCountOnceValueRepeatsAdd) {
  check_matrix(Coo{9, 10, {1, 1, 1, 4, 4}, {2, 2, 2, 7, 7}, {}});
  check_matrix(Coo{9, 10, {1, 1, 4, 4}, {2, 2, 7, 7}, {0.5, 0.25, -1.0, 3.0}});
}

TEST_P(Spfft2d, ValuesMode) {
  check_matrix(random_matrix(80, 96, 0.05, 13, true));
  check_matrix(random_matrix(33, 31, 0.3, 14, true));
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

INSTANTIATE_TEST_SUITE_P(Backends, Spfft2d, testing::Combine(testing::ValuesIn(kBackends), testing::ValuesIn(kMethods)),
                         name_of);

// ------------------------------------------------------------------ argument checking

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
  const sfft_test::TempFile file("spfft2d_overflow.mtx",
                                 "%%MatrixMarket matrix coordinate real general\n3 3 2\n2 2 1e308\n2 2 1e308\n");
  const std::string &path = file.path();
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
  const sfft_test::TempFile file("spfft2d_auto_backend.mtx",
                                 "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 3\n");
  const std::string &path = file.path();
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

}  // namespace
