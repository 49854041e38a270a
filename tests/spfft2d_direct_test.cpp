// SPDX-License-Identifier: Apache-2.0
// spfft2d's DIRECT method: plain and Bluestein row lengths, small tiles and the one-tile whole spectrum,
// tiled row ranges and the stream bit-identical to the one-shot output, the CUDA column sums' global twiddle
// tables.
#include "spfft2d_support.hpp"

namespace {

using namespace spfft2d_test;

// Row lengths that the CUDA DIRECT method gives cuFFT (prime factors up to 97: 7-smooth, 11, 13, 143 = 11 x 13,
// 3082 = 2 x 23 x 67) and those it transforms by its Bluestein pass at a length 2^a 3^b >= 2 cols - 1 (a prime
// factor above 97: 211, 262 = 2 x 131, 1009), with odd and even row counts; 8219 is the benzene case's prime
// (length 17496).
TEST_P(Spfft2d, PlainAndBluesteinRowLengths) {
  const uint64_t widths[] = {2, 3, 11, 13, 22, 143, 210, 211, 256, 262, 1009, 3082};
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

// Hub columns: a few columns far longer than the others (heavy_column_limit: twice the mean, at least 16),
// which the CUDA column sums give a warp each, beside short ones; the first and last columns among them, a
// hub of exactly 33 entries (one more than a warp's lanes) and one of 16 (at the limit: stays on the thread
// path), with weights in one case; Bluestein rows (190 = 2 * 5 * 19) and plain ones (192), odd and even row
// counts; whole spectrum and small tiles against FFTW, and (96 rows) tiles, row ranges and the stream bit for
// bit against the one-shot output (the warps' fixed reduction order).
TEST_P(Spfft2d, HubColumnsAgainstFftw) {
  uint64_t seed = 90;
  for (uint64_t rows : {211u, 96u})
    for (uint64_t cols : {190u, 192u}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
      Coo m = random_matrix(rows, cols, 0.01, seed++, cols == 190);
      std::mt19937_64 rng(seed++);
      std::uniform_real_distribution<double> w(-2, 2);
      auto hub = [&](int64_t c, uint64_t n) {
        for (uint64_t r = 0; r < n; ++r) {
          m.r.push_back(static_cast<int64_t>((r * 37 + 5) % rows));
          m.c.push_back(c);
          if (!m.v.empty()) m.v.push_back(w(rng));
        }
      };
      hub(0, rows / 2);
      hub(static_cast<int64_t>(cols) - 1, rows - 3);
      hub(77, 33);
      hub(101, 16);
      check_matrix(m);
      spfft2d_plan p = make(m);
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(spfft2d_set_tile_rows(p, 7), SFFT_SUCCESS) << sfft_last_error();
      std::vector<cd> ranges = exec(p, m.rows, m.cols, 0, m.rows - 1), last = exec(p, m.rows, m.cols, m.rows - 1, 1);
      ranges.insert(ranges.end(), last.begin(), last.end());
      check(m, ranges);
      EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
      if (rows == 96) expect_tiles_match_one_shot(m);
    }
}

// 38 columns take the CUDA DIRECT method's Bluestein pass (38 = 2 * 19), 40 its plain length.
TEST_P(Spfft2d, TiledRowsAndStreamAreBitIdenticalToOneShot) {
  for (uint64_t cols : {38u, 40u}) {
    SCOPED_TRACE(cols);
    expect_tiles_match_one_shot(random_matrix(47, cols, 0.08, 15));
  }
}

// Y[u][v] of a rows x cols matrix's nonzeros (r[k], c[k], weight w[k], or 1 with w null) by exact direct sums:
// each phase (r u / R + c v / C) mod 1 from integers, in long double.
cd exact_entry(const int64_t *r, const int64_t *c, const double *w, int n, uint64_t R, uint64_t C, uint64_t u,
               uint64_t v) {
  const unsigned __int128 RC = static_cast<unsigned __int128>(R) * C;
  std::complex<long double> want = 0;
  for (int k = 0; k < n; ++k) {
    const unsigned __int128 ph = (static_cast<unsigned __int128>(static_cast<uint64_t>(r[k]) * u % R) * C +
                                  static_cast<unsigned __int128>(static_cast<uint64_t>(c[k]) * v % C) * R) %
                                 RC;
    const long double a = -6.283185307179586476925286766559005768L * static_cast<long double>(ph) /
                          static_cast<long double>(RC);
    want += std::complex<long double>(std::cos(a), std::sin(a)) * static_cast<long double>(w ? w[k] : 1.0);
  }
  return cd(static_cast<double>(want.real()), static_cast<double>(want.imag()));
}

// Element i of a complex64 (elem 8) or complex128 (elem 16) output.
cd output_entry(const std::vector<unsigned char> &raw, std::size_t elem, std::size_t i) {
  if (elem == 16) {
    cd got;
    std::memcpy(&got, raw.data() + i * 16, 16);
    return got;
  }
  std::complex<float> f;
  std::memcpy(&f, raw.data() + i * 8, 8);
  return cd(f.real(), f.imag());
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
        for (uint64_t v = 0; v < W; ++v)
          max_err = std::max(max_err, std::abs(output_entry(raw, elem, u * W + v) - exact_entry(r, c, nullptr, 6, R, C, u, v)));
      EXPECT_LE(max_err / 6, elem == 16 ? 1e-13 : 1e-6);
      EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
    }
}

// The CPU's column sums with a split twiddle table (more rows than its single table's 2^22): DIRECT tiles of 200
// rows (two 128-output sum tasks a tile), row ranges at sampled rows, a column of five valued nonzeros (one group
// of four and one more) and single ones, both precisions, against exact direct sums.
TEST(Spfft2dCpu, TallMatrixUsesSplitTwiddleTables) {
  const uint64_t R = (uint64_t{1} << 22) + 1, C = 6, W = C / 2 + 1;
  const int64_t r[] = {1, 77, 2097152, 3000001, 4194304, 0, 4000037, 5};
  const int64_t c[] = {1, 1, 1, 1, 1, 0, 2, 5};
  const double w[] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.0, 1.5, -2.0};
  const int n = 8;
  const uint64_t us[] = {0, 1, 130, 12345, R / 2, R / 2 + 1, 3000001, R - 1};
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  o.threads = 2;
  for (sfft_dtype dt : {SFFT_COMPLEX64, SFFT_COMPLEX128}) {
    SCOPED_TRACE(::testing::Message() << "dtype " << dt);
    const std::size_t elem = dt == SFFT_COMPLEX128 ? 16 : 8;
    spfft2d_plan p = nullptr;
    ASSERT_EQ(spfft2d_create(&p, R, C, n, r, c, w, dt, &o), SFFT_SUCCESS) << sfft_last_error();
    ASSERT_EQ(spfft2d_set_method(p, SPFFT2D_METHOD_DIRECT), SFFT_SUCCESS) << sfft_last_error();
    ASSERT_EQ(spfft2d_set_tile_rows(p, 200), SFFT_SUCCESS) << sfft_last_error();
    double max_err = 0, scale = 0;
    for (double x : w) scale += std::abs(x);
    for (uint64_t u : us) {
      std::vector<unsigned char> raw(W * elem);
      ASSERT_EQ(spfft2d_exec_rows(p, u, 1, raw.data()), SFFT_SUCCESS) << sfft_last_error();
      for (uint64_t v = 0; v < W; ++v)
        max_err = std::max(max_err, std::abs(output_entry(raw, elem, v) - exact_entry(r, c, w, n, R, C, u, v)));
    }
    EXPECT_LE(max_err / scale, elem == 16 ? 1e-13 : 1e-6);
    EXPECT_EQ(spfft2d_destroy(p), SFFT_SUCCESS);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Spfft2d, testing::Combine(testing::ValuesIn(kBackends), testing::ValuesIn(kMethods)),
                         name_of);

}  // namespace
