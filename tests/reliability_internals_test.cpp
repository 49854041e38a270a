// SPDX-License-Identifier: Apache-2.0
// Internals behind issue 26 that the C API cannot reach on this machine: FFTW plans whose batch distance
// exceeds 2^31 elements (a nufft3 grid of that size needs 64 GB), the memory ceiling read from made-up
// /proc and cgroup files, and the bound on nufft3's kernel-design memo; nufft3's fit of the kernel's
// Fourier transform, which the C API shows only as setpts time; and strided FFT lines run through buffers
// (every block size and a short last block, against textbook sums). The units are compiled into the test (the
// library exports only the C API).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "common/fftw_bluestein.hpp"
#include "common/fftw_columns.hpp"
#include "common/fftw_lines.hpp"
#include "common/fftw_plan.hpp"
#include "common/host_buffer.hpp"
#include "common/kept_scratch.hpp"
#include "common/process.hpp"
#include "common/smooth.hpp"
#if SFFT_TEST_FAMILY_nufft3
#include "nufft3/cpu_phase.hpp"
#include "nufft3/params.hpp"
#endif

namespace {

namespace fs = std::filesystem;

// ------------------------------------------------------------------------------- FFTW 64-bit sizes

// Two 8-point transforms 2^31 + 64 elements apart (nufft3's ntransf grids laid end to end): the second must
// land at its own offset. With the batch distance passed as an int it wrapped to a negative offset. The
// mapping reserves no memory; only the two touched pages are backed.
TEST(FftwPlan, BatchDistanceBeyondInt) {
  using C = std::complex<double>;
  const std::ptrdiff_t dist = (std::ptrdiff_t{1} << 31) + 64;
  const std::size_t bytes = static_cast<std::size_t>(dist + 8) * sizeof(C);
  void *map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) GTEST_SKIP() << "cannot reserve " << bytes << " bytes of address space";
  C *data = static_cast<C *>(map);
  for (int i = 0; i < 8; ++i) {
    data[i] = i == 1 ? 1 : 0;
    data[dist + i] = i == 2 ? 1 : 0;
  }
  const int n[1] = {8};
  {
    auto plan = sfft::fftw::Plan<double>::many_dft(1, n, 2, data, nullptr, 1, dist, data, nullptr, 1, dist,
                                                   FFTW_FORWARD, FFTW_ESTIMATE, 1);
    plan.execute_dft(data, data);
  }
  for (int k = 0; k < 8; ++k) {
    EXPECT_NEAR(std::abs(data[k] - std::polar(1.0, -2 * M_PI * k / 8)), 0, 1e-12) << k;
    EXPECT_NEAR(std::abs(data[dist + k] - std::polar(1.0, -2 * M_PI * 2 * k / 8)), 0, 1e-12) << k;
  }
  munmap(map, bytes);
}

// An embedded 2-D real-to-complex transform (spfft2d's DENSE layout: rows padded to 2 (cols/2 + 1) reals,
// in place) against the textbook sum.
TEST(FftwPlan, EmbeddedInPlaceRealToComplex) {
  constexpr int R = 3, Cn = 5, W = Cn / 2 + 1;
  auto *buf = static_cast<std::complex<double> *>(fftw_malloc(sizeof(std::complex<double>) * R * W));
  double *real = reinterpret_cast<double *>(buf);
  auto value = [](int r, int c) { return std::cos(1.0 + r * 0.7 + c * 1.3); };
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < Cn; ++c) real[r * 2 * W + c] = value(r, c);
  const int n[2] = {R, Cn}, in_embed[2] = {R, 2 * W}, out_embed[2] = {R, W};
  {
    auto plan =
        sfft::fftw::Plan<double>::many_r2c(2, n, 1, real, in_embed, 1, 0, buf, out_embed, 1, 0, FFTW_ESTIMATE, 1);
    plan.execute_r2c(real, buf);
  }
  for (int u = 0; u < R; ++u)
    for (int v = 0; v < W; ++v) {
      std::complex<double> want = 0;
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < Cn; ++c)
          want += value(r, c) * std::polar(1.0, -2 * M_PI * (double(r * u) / R + double(c * v) / Cn));
      EXPECT_NEAR(std::abs(buf[u * W + v] - want), 0, 1e-12) << u << "," << v;
    }
  fftw_free(buf);
}

// Strided lines through buffers: 1-D DFTs along a strided axis over a sub-block of lines (one to three batch
// dimensions), against textbook sums line by line; every element outside the lines must keep its value. Shapes
// give full blocks and a short last block (inner counts 21 and 37 against 16-line blocks), a single line, and
// lines too long for 16 of them in the buffer (3000 points: blocks of 5 or 10; 5000 doubles: 4).
template <class Real>
void check_buffered_lines(const std::vector<std::ptrdiff_t> &shape, int axis, std::vector<std::ptrdiff_t> first,
                          std::vector<std::ptrdiff_t> count, int sign, int threads, double tol,
                          sfft::fftw::FftRoute route = sfft::fftw::FftRoute::kFastest) {
  using C = std::complex<Real>;
  const int rank = static_cast<int>(shape.size());  // the leading dimension is the batch of transforms
  std::vector<std::ptrdiff_t> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape[d + 1];
  const std::size_t total = static_cast<std::size_t>(stride[0] * shape[0]);
  std::vector<C> data(total), before;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (C &z : data) z = C(static_cast<Real>(u(rng)), static_cast<Real>(u(rng)));
  before = data;
  // The batch dimensions are every dimension but `axis`, in order; `first`/`count` select lines in each.
  std::vector<std::ptrdiff_t> bc, bd;
  std::ptrdiff_t origin = 0;
  for (int d = 0, b = 0; d < rank; ++d) {
    if (d == axis) continue;
    bc.push_back(count[b]);
    bd.push_back(stride[d]);
    origin += first[b] * stride[d];
    ++b;
  }
  const std::ptrdiff_t n = shape[axis];
  sfft::fftw::BufferedLines<Real> lines(n, stride[axis], static_cast<int>(bc.size()), bc.data(), bd.data(), sign,
                                        threads, route);
  lines.execute(data.data() + origin);
  std::vector<std::complex<double>> twiddle(static_cast<std::size_t>(n));
  for (std::ptrdiff_t m = 0; m < n; ++m)
    twiddle[m] = std::polar(1.0, sign * 2 * M_PI * static_cast<double>(m) / static_cast<double>(n));
  std::vector<bool> in_lines(total, false);
  double worst = 0, scale = 0;
  std::vector<std::ptrdiff_t> idx(bc.size(), 0);
  for (bool more = true; more;) {
    std::ptrdiff_t base = origin;
    for (std::size_t b = 0; b < bc.size(); ++b) base += idx[b] * bd[b];
    for (std::ptrdiff_t k = 0; k < n; ++k) {
      std::complex<double> want = 0;
      for (std::ptrdiff_t j = 0; j < n; ++j)
        want += std::complex<double>(before[base + j * stride[axis]]) * twiddle[(j * k) % n];
      const std::size_t at = static_cast<std::size_t>(base + k * stride[axis]);
      worst = std::max(worst, std::abs(std::complex<double>(data[at]) - want));
      scale = std::max(scale, std::abs(want));
      in_lines[at] = true;
    }
    more = false;
    for (std::size_t b = bc.size(); b-- > 0;) {
      if (++idx[b] < bc[b]) {
        more = true;
        break;
      }
      idx[b] = 0;
    }
  }
  EXPECT_LE(worst / scale, tol) << "n " << n << " axis " << axis << " threads " << threads;
  std::size_t changed = 0;
  for (std::size_t i = 0; i < total; ++i) changed += !in_lines[i] && data[i] != before[i];
  EXPECT_EQ(changed, 0u) << "elements outside the lines were written";
}

TEST(FftwLines, BufferedStridedLinesMatchTextbookSums) {
  for (int threads : {1, 2, 3}) {
    // 2 transforms of 5 x 7 x 37: along dimension 1 over 3 planes x 21 columns, along dimension 0 over all.
    check_buffered_lines<double>({2, 5, 7, 37}, 2, {0, 1, 9}, {2, 3, 21}, FFTW_FORWARD, threads, 1e-13);
    check_buffered_lines<float>({2, 5, 7, 37}, 2, {0, 1, 9}, {2, 3, 21}, FFTW_BACKWARD, threads, 2e-6);
    check_buffered_lines<double>({2, 5, 7, 37}, 1, {0, 0, 0}, {2, 7, 37}, FFTW_BACKWARD, threads, 1e-13);
    check_buffered_lines<float>({2, 5, 7, 37}, 1, {1, 2, 3}, {1, 4, 34}, FFTW_FORWARD, threads, 2e-6);
    // One batch dimension: the columns of an 11 x 40 array, and a single column.
    check_buffered_lines<double>({11, 40}, 0, {0}, {40}, FFTW_FORWARD, threads, 1e-13);
    check_buffered_lines<float>({11, 40}, 0, {39}, {1}, FFTW_FORWARD, threads, 2e-6);
    // Lines of 3000 points: fewer than 16 fit the buffer.
    check_buffered_lines<double>({3000, 13}, 0, {1}, {11}, FFTW_BACKWARD, threads, 1e-12);
    check_buffered_lines<float>({3000, 13}, 0, {0}, {13}, FFTW_FORWARD, threads, 1e-5);
  }
  // Lines of 5000 doubles: not even 4 fit 256 KiB; a cache line's worth (4) are taken together anyway.
  check_buffered_lines<double>({5000, 6}, 0, {0}, {6}, FFTW_FORWARD, 2, 1e-12);
}

// Each route of the contiguous line DFTs (fftw_bluestein.hpp) through the buffered lines: FFTW's plan and
// Bluestein's, at prime lengths and at one with a factor above 7 (2 x 3 x 7 x 11 = 462).
TEST(FftwLines, BothRoutesMatchTextbookSums) {
  using Route = sfft::fftw::FftRoute;
  for (int threads : {1, 2}) {
    for (Route route : {Route::kFftw, Route::kBluestein}) {
      check_buffered_lines<double>({2, 5, 7, 37}, 2, {0, 1, 9}, {2, 3, 21}, FFTW_FORWARD, threads, 1e-13, route);
      check_buffered_lines<double>({1031, 13}, 0, {1}, {11}, FFTW_BACKWARD, threads, 1e-12, route);
      check_buffered_lines<double>({462, 3}, 0, {0}, {3}, FFTW_FORWARD, threads, 1e-13, route);
    }
    for (Route route : {Route::kFftw, Route::kBluestein}) {
      check_buffered_lines<float>({2, 5, 7, 37}, 1, {1, 2, 3}, {1, 4, 34}, FFTW_BACKWARD, threads, 2e-6, route);
      check_buffered_lines<float>({2053, 9}, 0, {0}, {9}, FFTW_FORWARD, threads, 4e-6, route);
    }
  }
}

// Bluestein's transform alone: every length from 1 to 40 and a few primes, both signs, complex and real input,
// the first `count` outputs only, in place (out = in) and into another array, against textbook sums in double.
template <class Real>
void check_bluestein(std::ptrdiff_t n, int sign, bool real_input, std::ptrdiff_t count, bool in_place, double tol) {
  using C = std::complex<Real>;
  std::mt19937 rng(static_cast<unsigned>(n * 4 + (sign > 0) * 2 + real_input));
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<C> data(static_cast<std::size_t>(n) + 1), out(static_cast<std::size_t>(count) + 1, C(7, 7));
  for (C &z : data) z = C(static_cast<Real>(u(rng)), real_input ? Real(0) : static_cast<Real>(u(rng)));
  std::vector<Real> reals(static_cast<std::size_t>(n));
  for (std::ptrdiff_t j = 0; j < n; ++j) reals[j] = data[j].real();
  const std::vector<C> before = data;
  const sfft::fftw::Bluestein<Real> b(n, sign);
  sfft::HostBuffer<C> work(static_cast<std::size_t>(b.work_size()));
  ASSERT_GE(b.work_size(), 2 * n - 1);
  C *dst = in_place ? data.data() : out.data();
  if (real_input)
    b.transform(in_place ? reinterpret_cast<const Real *>(data.data()) : reals.data(), dst, count, work.get());
  else
    b.transform(static_cast<const C *>(data.data()), dst, count, work.get());
  if (in_place && real_input) {  // the reals were read from the complex array's storage: redo the reference input
    for (std::ptrdiff_t j = 0; j < n; ++j) reals[j] = reinterpret_cast<const Real *>(before.data())[j];
  }
  double worst = 0, scale = 0;
  for (std::ptrdiff_t k = 0; k < count; ++k) {
    std::complex<double> want = 0;
    for (std::ptrdiff_t j = 0; j < n; ++j) {
      const std::complex<double> x = real_input ? std::complex<double>(reals[j], 0) : std::complex<double>(before[j]);
      want += x * std::polar(1.0, sign * 2 * M_PI * static_cast<double>((j * k) % n) / static_cast<double>(n));
    }
    worst = std::max(worst, std::abs(std::complex<double>(dst[k]) - want));
    scale = std::max(scale, std::abs(want));
  }
  EXPECT_LE(worst / std::max(scale, 1e-300), tol) << "n " << n << " sign " << sign << " real " << real_input;
  if (in_place)
    EXPECT_EQ(data[static_cast<std::size_t>(n)], before[static_cast<std::size_t>(n)]) << "written past the line";
  else
    EXPECT_EQ(out[static_cast<std::size_t>(count)], C(7, 7)) << "written past count";
}

TEST(FftwBluestein, MatchesTextbookSums) {
  for (std::ptrdiff_t n = 1; n <= 40; ++n)
    for (int sign : {FFTW_FORWARD, FFTW_BACKWARD}) {
      check_bluestein<double>(n, sign, false, n, n % 2 == 0, 1e-13);
      check_bluestein<float>(n, sign, n % 3 == 0, n / 2 + 1, n % 2 == 1, 2e-6);
    }
  for (std::ptrdiff_t n : {521, 1031, 4099}) {
    check_bluestein<double>(n, FFTW_FORWARD, true, n / 2 + 1, true, 1e-12);
    check_bluestein<float>(n, FFTW_BACKWARD, false, n, false, 4e-6);
    check_bluestein<float>(n, FFTW_FORWARD, true, n / 2 + 1, false, 4e-6);
  }
}

TEST(FftwBluestein, ConvolutionLengthIsSevenSmoothAndAMultipleOf32) {
  EXPECT_EQ(sfft::fftw::bluestein_fftw_length(1), 32);
  EXPECT_EQ(sfft::fftw::bluestein_fftw_length(8219), 16800);  // 2 n - 1 = 16437; 16464 = 2^4 3 7^3 is not 32 x smooth
  for (std::ptrdiff_t n : {2, 17, 100, 1031, 5003, 12329, 65537}) {
    const std::ptrdiff_t m = sfft::fftw::bluestein_fftw_length(n);
    EXPECT_GE(m, 2 * n - 1);
    EXPECT_EQ(m % 32, 0);
    EXPECT_TRUE(sfft::seven_smooth(static_cast<uint64_t>(m)));
    for (std::ptrdiff_t smaller = m - 32; smaller >= 2 * n - 1; smaller -= 32)
      EXPECT_FALSE(sfft::seven_smooth(static_cast<uint64_t>(smaller))) << "n " << n << ": " << smaller << " fits";
  }
}

// The timed choice: 7-smooth lengths take FFTW's plan untimed; others time both routes and keep one.
TEST(FftwBluestein, LineDftsTimeOnlyLengthsThatAreNotSmooth) {
  sfft::HostBuffer<std::complex<float>> planning(4 * 1031);
  const sfft::fftw::LineDfts<float> smooth(1000, 4, FFTW_FORWARD, planning.get());
  EXPECT_EQ(smooth.line_ns(), 0.0);
  EXPECT_EQ(smooth.bluestein(), nullptr);
  EXPECT_EQ(smooth.work_size(), 0);
  const sfft::fftw::LineDfts<float> prime(1031, 4, FFTW_FORWARD, planning.get());
  EXPECT_GT(prime.line_ns(), 0.0);
  EXPECT_EQ(prime.work_size(), prime.bluestein() ? prime.bluestein()->work_size() : 0);
  // Up to 2^20 points only: longer lengths keep FFTW's plan untimed (a fuzzed 1199728613-row matrix).
  EXPECT_TRUE(sfft::fftw::route_is_timed(8219));
  EXPECT_TRUE(sfft::fftw::route_is_timed((uint64_t{1} << 20) - 3));
  EXPECT_FALSE(sfft::fftw::route_is_timed(8192));
  EXPECT_FALSE(sfft::fftw::route_is_timed((uint64_t{1} << 20) + 7));
  EXPECT_FALSE(sfft::fftw::route_is_timed(1199728613));
}

TEST(FftwLines, NoLinesLeaveTheDataAlone) {
  std::vector<std::complex<double>> data(64, {1.5, -2.0});
  const std::ptrdiff_t none[2] = {3, 0}, dist[2] = {16, 1};
  sfft::fftw::BufferedLines<double> lines(4, 8, 2, none, dist, FFTW_FORWARD, 2);
  lines.execute(data.data());
  for (const auto &z : data) EXPECT_EQ(z, std::complex<double>(1.5, -2.0));
}

TEST(FftwLines, RefusesContiguousOrScatteredLines) {
  const std::ptrdiff_t count[1] = {4}, scattered[1] = {2}, adjacent[1] = {1};
  EXPECT_THROW(sfft::fftw::BufferedLines<double>(8, 1, 1, count, adjacent, FFTW_FORWARD, 1), sfft::Error);
  EXPECT_THROW(sfft::fftw::BufferedLines<double>(8, 8, 1, count, scattered, FFTW_FORWARD, 1), sfft::Error);
}

// Column DFTs of a rows x width array (fftw_columns.hpp), in place, against FFTW's own 1-D DFT of each column in
// double. `offset` elements before the array move its start off FFTW's planning alignment (the FFTW_UNALIGNED
// steps); elements before it must keep their values.
template <class Real>
void check_column_dfts(std::ptrdiff_t rows, std::ptrdiff_t width, std::ptrdiff_t offset, int sign, int threads,
                       double tol) {
  using C = std::complex<Real>;
  std::vector<C> storage(static_cast<std::size_t>(offset + rows * width));
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (C &z : storage) z = C(static_cast<Real>(u(rng)), static_cast<Real>(u(rng)));
  const std::vector<C> before = storage;
  sfft::fftw::ColumnDfts<Real> columns(rows, width, sign, threads);
  columns.execute(storage.data() + offset);
  std::vector<fftw_complex> line(static_cast<std::size_t>(rows));
  fftw_plan dft = fftw_plan_dft_1d(static_cast<int>(rows), line.data(), line.data(), sign, FFTW_ESTIMATE);
  double worst = 0, scale = 0;
  for (std::ptrdiff_t c = 0; c < width; ++c) {
    for (std::ptrdiff_t r = 0; r < rows; ++r) {
      const C z = before[static_cast<std::size_t>(offset + r * width + c)];
      line[r][0] = z.real();
      line[r][1] = z.imag();
    }
    fftw_execute(dft);
    for (std::ptrdiff_t r = 0; r < rows; ++r) {
      const std::complex<double> want(line[r][0], line[r][1]);
      worst = std::max(worst, std::abs(std::complex<double>(storage[offset + r * width + c]) - want));
      scale = std::max(scale, std::abs(want));
    }
  }
  fftw_destroy_plan(dft);
  EXPECT_LE(worst / scale, tol) << rows << " x " << width << " offset " << offset << " threads " << threads;
  for (std::ptrdiff_t i = 0; i < offset; ++i) EXPECT_EQ(storage[i], before[i]) << "written before the array";
}

TEST(FftwColumns, FourStepAndBufferedColumnsMatchFftw) {
  ASSERT_TRUE(sfft::fftw::ColumnDfts<float>::four_step(256));
  ASSERT_TRUE(sfft::fftw::ColumnDfts<double>::four_step(8192));
  ASSERT_FALSE(sfft::fftw::ColumnDfts<float>::four_step(1536));
  ASSERT_FALSE(sfft::fftw::ColumnDfts<float>::four_step(16384));
  for (int threads : {1, 2, 3}) {
    // 16 x 16 and 16 x 32 splits, one block narrower than the block width.
    check_column_dfts<double>(256, 37, 0, FFTW_FORWARD, threads, 1e-14);
    check_column_dfts<double>(512, 5, 1, FFTW_BACKWARD, threads, 1e-14);
    // 32 x 32 in blocks of 32 complex64 columns and a tail of 6, on aligned and unaligned starts.
    check_column_dfts<float>(1024, 70, 0, FFTW_FORWARD, threads, 2e-6);
    check_column_dfts<float>(1024, 70, 1, FFTW_FORWARD, threads, 2e-6);
    // Blocks of 16 complex128 columns (the least), a tail of 8; 64 x 128 with a tail of 4.
    check_column_dfts<double>(2048, 40, 1, FFTW_FORWARD, threads, 1e-14);
    check_column_dfts<float>(8192, 20, 0, FFTW_BACKWARD, threads, 4e-6);
    // Row counts without the four-step path (BufferedLines).
    check_column_dfts<float>(1536, 9, 0, FFTW_FORWARD, threads, 2e-6);
    check_column_dfts<double>(300, 17, 1, FFTW_BACKWARD, threads, 1e-14);
    // A prime row count: the faster of FFTW's plan and Bluestein's route (timed).
    check_column_dfts<float>(1031, 9, 1, FFTW_FORWARD, threads, 4e-6);
  }
}

// ------------------------------------------------------------------------------------ memory ceiling

class MemoryCeiling : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sfft_ceiling_" + std::to_string(getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string &path, const std::string &text) {
    const fs::path p = root_ / path;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  double ceiling() const { return sfft::available_host_memory(root_.string()); }
  fs::path root_;
};

constexpr double kKiB = 1024, kGiB = 1024.0 * 1024 * 1024;

TEST_F(MemoryCeiling, MemAvailableNotMemTotal) {
  write("proc/meminfo", "MemTotal:       64000000 kB\nMemFree:         1000000 kB\nMemAvailable:    2000000 kB\n");
  EXPECT_EQ(ceiling(), 2000000 * kKiB);
}

// cgroup v2: a job's limit two levels up applies; file cache it may reclaim counts as room.
TEST_F(MemoryCeiling, CgroupV2LimitOfAnAncestor) {
  write("proc/meminfo", "MemTotal: 64000000 kB\nMemAvailable: 60000000 kB\n");
  write("proc/self/cgroup", "0::/job/step\n");
  write("sys/fs/cgroup/job/memory.max", std::to_string(static_cast<long long>(8 * kGiB)) + "\n");
  write("sys/fs/cgroup/job/memory.current", std::to_string(static_cast<long long>(6 * kGiB)) + "\n");
  write("sys/fs/cgroup/job/memory.stat",
        "anon 1\ninactive_file " + std::to_string(static_cast<long long>(kGiB)) + "\n");
  write("sys/fs/cgroup/job/step/memory.max", "max\n");
  write("sys/fs/cgroup/job/step/memory.current", "100\n");
  EXPECT_EQ(ceiling(), 3 * kGiB);
}

// cgroup v1 (memory among several controllers' lines); the "unlimited" value is no limit.
TEST_F(MemoryCeiling, CgroupV1) {
  write("proc/meminfo", "MemTotal: 64000000 kB\nMemAvailable: 60000000 kB\n");
  write("proc/self/cgroup", "5:cpu,cpuacct:/x\n4:memory:/docker/abc\n");
  write("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "4294967296\n");
  write("sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", "1073741824\n");
  write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  write("sys/fs/cgroup/memory/memory.usage_in_bytes", "5000000000\n");
  EXPECT_EQ(ceiling(), 3 * kGiB);
}

// Inside a container the host's cgroup path may not exist below the mount; the mount's own files apply.
TEST_F(MemoryCeiling, CgroupMountedAtTheContainersOwnGroup) {
  write("proc/meminfo", "MemTotal: 64000000 kB\nMemAvailable: 60000000 kB\n");
  write("proc/self/cgroup", "0::/system.slice/container-17.scope\n");
  write("sys/fs/cgroup/memory.max", "2147483648\n");
  write("sys/fs/cgroup/memory.current", "1073741824\n");
  EXPECT_EQ(ceiling(), kGiB);
}

TEST_F(MemoryCeiling, NothingReadableIsNoLimit) { EXPECT_TRUE(std::isinf(ceiling())); }

// Host buffers of 4 MiB or more are whole 2 MiB pages with the kernel's huge-page advice on their mapping (VmFlags
// "hg" in /proc/self/smaps), both the HostBuffer and the HostVector allocator's; smaller ones keep 64-byte alignment.
// Where the kernel has no transparent huge pages the advice is refused, so only the alignment is checked there.
bool advised_huge(const void *p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2)  // a mapping's first line
      inside = at >= lo && at < hi;
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.find(" hg") != std::string::npos;
  }
  return false;
}

TEST(HostBuffers, LargeOnesAreAdvisedHugePages) {
  sfft::HostBuffer<float> small(1000);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.get()) % 64, 0u);
  sfft::HostBuffer<std::complex<double>> large((std::size_t{5} << 20) / 16 + 3);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.get()) % sfft::kHugePageBytes, 0u);
  large[large.size() - 1] = 1.0;
  sfft::HostVector<double> vec(std::size_t{6} << 20 >> 3);
  if (!fs::exists("/sys/kernel/mm/transparent_hugepage/enabled")) GTEST_SKIP() << "no transparent huge pages";
  EXPECT_TRUE(advised_huge(large.get()));
  // The vector's first whole 2 MiB page is advised.
  const auto first = (reinterpret_cast<std::uintptr_t>(vec.data()) + sfft::kHugePageBytes - 1) / sfft::kHugePageBytes *
                     sfft::kHugePageBytes;
  EXPECT_TRUE(advised_huge(reinterpret_cast<const void *>(first)));
  EXPECT_FALSE(advised_huge(small.get()));
}

// The host scratch of plan-less calls (fftshift_nd in place) waits for the next call when at most 64 MiB: the
// next call of no more bytes gets the same block (already mapped), a larger call a new one (the waiting one
// freed); two calls at once each get a block of their own.
TEST(KeptScratch, TheLastBlockWaitsForTheNextCall) {
  unsigned char *first = nullptr;
  {
    const sfft::KeptScratch a(std::size_t{3} << 20);
    first = a.get();
    std::memset(first, 7, std::size_t{3} << 20);
  }
  {
    const sfft::KeptScratch b(std::size_t{1} << 20);
    EXPECT_EQ(b.get(), first);
    EXPECT_EQ(b.get()[(std::size_t{1} << 20) - 1], 7);  // the same mapped bytes
    const sfft::KeptScratch c(std::size_t{1} << 20);    // while b is out: a block of its own
    EXPECT_NE(c.get(), b.get());
  }
  unsigned char *grown = nullptr;
  {
    const sfft::KeptScratch d(std::size_t{5} << 20);  // more than the waiting block holds
    grown = d.get();
    grown[(std::size_t{5} << 20) - 1] = 1;
  }
  {
    const sfft::KeptScratch e(std::size_t{4} << 20);
    EXPECT_EQ(e.get(), grown);
  }
  {
    const sfft::KeptScratch big(sfft::kKeptScratchBytes + 1);  // the waiting block freed for it; big freed after
    big.get()[sfft::kKeptScratchBytes] = 1;
    const sfft::KeptScratch small(16);  // nothing waits while big is out
    EXPECT_NE(small.get(), grown);
  }
}

// ----------------------------------------------------------------------------------- design memo

#if SFFT_TEST_FAMILY_nufft3
// Every distinct upsampfac added its kernel designs to a memo that never shrank (+5 kB, +25 ms each).
TEST(DesignMemo, BoundedOverManyUpsampfacs) {
  using namespace sfft::nufft3;
  const KernelSpec first = make_kernel(KernelKind::ExpSemicircle, 1e-4, 1.25, 1, true);
  for (int i = 1; i < 40; ++i) (void)make_kernel(KernelKind::ExpSemicircle, 1e-4, 1.25 + 0.05 * i, 1, true);
  EXPECT_GT(design_memo_size(), 0u);
  EXPECT_LE(design_memo_size(), kDesignMemoSigmas * static_cast<std::size_t>(kMaxShapedWidth));
  // The evicted first sigma is designed again, identically.
  const KernelSpec again = make_kernel(KernelKind::ExpSemicircle, 1e-4, 1.25, 1, true);
  EXPECT_EQ(again.width, first.width);
  EXPECT_EQ(again.beta, first.beta);
}

// The CPU's source phase factors in blocks (unit_phases, a vectorised loop in single precision) against the one
// at a time path (sinf/cosf of the same reduced phase) and, where the double reduction is exact enough, against
// exp(i sign phase) in double: every quadrant, both signs, zero, phases past kReducedPhase and NaN.
TEST(UnitPhases, MatchTheScalarFactorsAndTheExactOnes) {
  using sfft::nufft3::cpu::kReducedPhase;
  std::mt19937_64 rng(5);
  std::vector<double> phase;
  for (double range : {4.0, 1e3, 1e6, 1e9, 1e11}) {
    std::uniform_real_distribution<double> u(-range, range);
    for (int i = 0; i < 2000; ++i) phase.push_back(u(rng));
  }
  for (int k = -8; k <= 8; ++k) phase.push_back(k * M_PI / 4);  // the quadrants' edges
  const std::size_t zero_at = phase.size();
  for (double p : {0.0, -0.0, 2 * kReducedPhase, -3 * kReducedPhase, 1e40, std::nan("")}) phase.push_back(p);
  for (double sign : {1.0, -1.0}) {
    std::vector<std::complex<float>> block(phase.size());
    sfft::nufft3::cpu::unit_phases<float>(phase.data(), phase.size(), sign, block.data());
    double worst_scalar = 0, worst_exact = 0;
    for (std::size_t i = 0; i < phase.size(); ++i) {
      const std::complex<float> one = sfft::nufft3::cpu::unit_phase<float>(phase[i], sign);
      if (std::isnan(phase[i])) {
        EXPECT_TRUE(std::isnan(block[i].real()) && std::isnan(block[i].imag()));
        continue;
      }
      if (!(std::fabs(phase[i]) < kReducedPhase)) {
        EXPECT_EQ(block[i], one) << phase[i];  // the double sine and cosine, as one at a time
        continue;
      }
      worst_scalar = std::max(worst_scalar, static_cast<double>(std::abs(block[i] - one)));
      if (std::fabs(phase[i]) < 1e3) {
        const std::complex<double> exact = std::polar(1.0, sign * phase[i]);
        worst_exact = std::max(worst_exact, std::abs(std::complex<double>(block[i]) - exact));
      }
    }
    EXPECT_LE(worst_scalar, 2.5e-7) << "sign " << sign;    // about a float ulp of sinf/cosf (1.3e-7 measured)
    EXPECT_LE(worst_exact, 3e-7) << "sign " << sign;       // 1.9e-7 measured (sinf/cosf: 1.6e-7)
    EXPECT_EQ(block[zero_at], std::complex<float>(1, 0));  // phase 0: no rounding at all
  }
}

// The FFT sizes: next_smooth_even enumerates smooth numbers; checked against the definition (the smallest even m
// >= n with no prime factor above 7) at small n and around large ones.
TEST(FftSize, NextSmoothEvenMatchesTheDefinition) {
  using namespace sfft::nufft3;
  auto by_definition = [](long long n) {
    for (long long m = std::max(2LL, n + (n & 1));; m += 2) {
      long long r = m;
      for (long long p : {2, 3, 5, 7})
        while (r % p == 0) r /= p;
      if (r == 1) return m;
    }
  };
  for (long long n = -3; n < 5000; ++n) ASSERT_EQ(next_smooth_even(n), by_definition(n)) << n;
  for (long long base : {600001LL, 1530900LL, 1LL << 30, (1LL << 31) - 1, 999999937LL})
    for (long long n = base - 3; n <= base + 3; ++n) ASSERT_EQ(next_smooth_even(n), by_definition(n)) << n;
}

// fft_length: without costs the next smooth length; with them, the even 7-smooth m in [next_smooth_even(n), 1.1
// times that] least in m (1 + odd_prime k + twice_odd [m = 2 mod 4]), k its distinct odd primes, checked by a search
// of every even number in the window; e.g. 2100 (= 2^2 3 5^2 7) gives way to 2304 (= 2^8 3^2), which cuFFT
// transforms in 142 us against 190 (2-D double, H200), and with a cost of twice an odd number (the CPU's single
// precision) 90 gives way to 96 and 350 to 360.
TEST(FftSize, FftLengthWeighsOddPrimesAndTwiceOdd) {
  using namespace sfft::nufft3;
  auto by_search = [](long long n, FftLengthCost cost) {
    const long long first = next_smooth_even(n), last = first + first / kFftLengthSlack;
    long long best = first;
    double best_cost = 1e300;
    for (long long m = first; m <= last; m += 2) {
      long long r = m;
      int odd = 0;
      for (long long p : {2, 3, 5, 7}) {
        if (p > 2 && r % p == 0) ++odd;
        while (r % p == 0) r /= p;
      }
      const double c = static_cast<double>(m) * (1 + cost.odd_prime * odd + (m % 4 == 2 ? cost.twice_odd : 0));
      if (r == 1 && c < best_cost) {
        best = m;
        best_cost = c;
      }
    }
    return best;
  };
  const FftLengthCost costs[] = {{0.2, 0}, {1.0, 0}, {0, 1.0}, {0.2, 1.0}};
  for (long long n = 1; n < 3000; ++n) {
    ASSERT_EQ(fft_length(n, {}), next_smooth_even(n)) << n;
    for (const FftLengthCost &c : costs)
      ASSERT_EQ(fft_length(n, c), by_search(n, c)) << n << " " << c.odd_prime << " " << c.twice_odd;
  }
  for (long long base : {600001LL, 1530900LL, 1LL << 24})
    for (long long n = base - 3; n <= base + 3; ++n)
      for (const FftLengthCost &c : costs) ASSERT_EQ(fft_length(n, c), by_search(n, c)) << n;
  EXPECT_EQ(fft_length(2100, {0.2}), 2304);
  EXPECT_EQ(fft_length(2048, {0.2}), 2048);
  EXPECT_EQ(fft_length(90, {0, 1.0}), 96);
  EXPECT_EQ(fft_length(350, {0, 1.0}), 360);
  EXPECT_EQ(fft_length(42, {0, 1.0}), 42);  // no multiple of 4 in [42, 46] is 7-smooth
  // Where the window holds a 7-smooth multiple of 4, a length twice an odd number is never taken.
  for (long long n = 40; n < 3000; ++n) {
    const long long first = next_smooth_even(n), m = fft_length(n, {0, 1.0});
    bool multiple_of_4 = false;
    for (long long q = first; q <= first + first / kFftLengthSlack; q += 2)
      multiple_of_4 = multiple_of_4 || (q % 4 == 0 && next_smooth_even(q) == q);
    if (multiple_of_4) ASSERT_EQ(m % 4, 0) << n;
  }
  // make_layout takes the smallest lengths where the longer grid would exceed the memory limit, and refuses
  // only what those cannot fit.
  const KernelSpec k = make_kernel(KernelKind::ExpSemicircle, 1e-6, 2.0, 2, true);
  bool found = false;
  for (double X = 100; X < 2000 && !found; X *= 1.07) {
    const double x_lo[2] = {-X, -X}, x_hi[2] = {X, X}, s_lo[2] = {-3, -3}, s_hi[2] = {3, 3};
    const Layout smallest = make_layout(2, k, 2.0, x_lo, x_hi, s_lo, s_hi, 16, 1e15, {});
    const Layout fast = make_layout(2, k, 2.0, x_lo, x_hi, s_lo, s_hi, 16, 1e15, {0.2});
    if (fast.n2_total == smallest.n2_total) continue;
    found = true;
    const double fits_smallest = 16.0 * static_cast<double>(smallest.n2_total);
    const Layout limited = make_layout(2, k, 2.0, x_lo, x_hi, s_lo, s_hi, 16, fits_smallest, {0.2});
    EXPECT_EQ(limited.n2_total, smallest.n2_total) << "X = " << X;
    EXPECT_EQ(limited.axis[0].n2, smallest.axis[0].n2);
    EXPECT_THROW(make_layout(2, k, 2.0, x_lo, x_hi, s_lo, s_hi, 16, fits_smallest - 1, {0.2}), GridTooLarge);
  }
  EXPECT_TRUE(found) << "no extent took a longer FFT length";
}

// The automatic sigma follows the cost model: on the CUDA backend a 2-D double transform of 1e4 sources to 1e6
// targets takes a smaller grid (and wider kernel) than the same with as many sources as targets (H200, tol 1e-5,
// between sigma = 1.25 and 2 alone: 0.28 ms against 0.33 at sigma = 2 for the first, 0.57 at sigma = 2 against
// 0.63 for the second); the CPU's choice does not depend on ntransf (its costs all scale with it).
TEST(CostModel, SigmaFollowsTheBackendsCosts) {
  using namespace sfft::nufft3;
  const double x_lo[2] = {-400, -400}, x_hi[2] = {400, 400}, s_lo[2] = {-2, -2}, s_hi[2] = {2, 2};
  auto sigma = [&](std::size_t N, std::size_t K, int ntransf, const CostModel &cost) {
    return choose_layout(2, KernelKind::ExpSemicircle, 1e-5, 0, N, K, ntransf, x_lo, x_hi, s_lo, s_hi, 16.0 * ntransf,
                         1e15, cost, true)
        .upsampfac;
  };
  EXPECT_LT(sigma(10000, 1000000, 1, kCudaCost), sigma(1000000, 1000000, 1, kCudaCost));
  for (std::size_t N : {10000, 1000000})
    EXPECT_EQ(sigma(N, 1000000, 16, kCpuCost), sigma(N, 1000000, 1, kCpuCost)) << N;
}

// The automatic sigma is the candidate of kAutoSigmas whose layout (its narrowest kernel meeting tol) the cost
// model prices lowest, the first such in kAutoSigmas' order; below the double limit (2e-8) none below 2; none above
// the backend's widest_sigma (CUDA: 2; the CPU: 3, taken somewhere here); the prolate kernel only 2 or 1.25. The
// cost is written out here from CostModel's definition (params.hpp).
TEST(CostModel, AutomaticSigmaIsTheCheapestCandidate) {
  using namespace sfft::nufft3;
  const double x_lo[3] = {-400, -40, -4}, x_hi[3] = {400, 40, 4}, s_lo[3] = {-2, -20, -50}, s_hi[3] = {2, 20, 50};
  auto modelled = [&](const Layout &L, std::size_t N, std::size_t K, int ntransf, const CostModel &c) {
    const double taps = std::pow(L.kernel.width, L.dim), cells = static_cast<double>(L.n2_total);
    const double grid = L.dim == 3 && c.line_point_3d > 0
                            ? c.cell_3d * cells + c.line_point_3d * fft_line_work(L, fft_lines(L, s_lo, s_hi))
                            : c.cell_double * cells;
    return ntransf * (c.spread_tap * static_cast<double>(N) * taps + grid) +
           (c.interp_tap + c.interp_tap_transform * ntransf) * static_cast<double>(K) * taps;
  };
  int intermediate = 0, above_two = 0;
  for (const CostModel *cost : {&kCudaCost, &kCpuCost})
    for (int dim = 1; dim <= 3; ++dim)
      for (const auto &[N, K, ntransf] : {std::tuple<std::size_t, std::size_t, int>{10000, 1000000, 1},
                                          {1000000, 1000000, 1},
                                          {1000000, 10000, 1},
                                          {250000, 250000, 16}})
        for (double tol : {1e-3, 1e-5, 3e-7, 1e-9}) {
          const FftLengthCost length_cost{dim <= 2 ? cost->fft_odd_prime : 0};  // double: no twice-odd cost
          const Layout chosen = choose_layout(dim, KernelKind::ExpSemicircle, tol, 0, N, K, ntransf, x_lo, x_hi, s_lo,
                                              s_hi, 16.0, 1e15, *cost, true);
          double best_sigma = 0, best = std::numeric_limits<double>::infinity();
          for (const double sigma : kAutoSigmas) {
            if (sigma > cost->widest_sigma || (sigma < 2.0 && tol < 2e-8)) continue;
            Layout L;
            try {
              L = make_layout(dim, make_kernel(KernelKind::ExpSemicircle, tol, sigma, dim, true), sigma, x_lo, x_hi,
                              s_lo, s_hi, 16.0, 1e15, length_cost);
            } catch (const sfft::Error &) {
              continue;  // out of reach at this sigma
            }
            const double t = modelled(L, N, K, ntransf, *cost);
            if (t < best) best = t, best_sigma = sigma;
          }
          EXPECT_EQ(chosen.upsampfac, best_sigma) << "dim " << dim << " N " << N << " K " << K << " tol " << tol;
          intermediate += chosen.upsampfac < 2.0 && chosen.upsampfac != 1.25;
          above_two += chosen.upsampfac > 2.0;
          EXPECT_LE(chosen.upsampfac, cost->widest_sigma);
          const double prolate = choose_layout(dim, KernelKind::Prolate, tol, 0, N, K, ntransf, x_lo, x_hi, s_lo, s_hi,
                                               16.0, 1e15, *cost, true)
                                     .upsampfac;
          EXPECT_TRUE(prolate == 2.0 || prolate == 1.25) << prolate;
        }
  EXPECT_GT(intermediate, 0);  // the sigmas between 1.25 and 2 are taken somewhere in this grid of cases
  EXPECT_GT(above_two, 0);     // and so are those above 2 (the CPU's)
}

// The lines of a grid FFT (fft_lines, which the CPU backend's plans transform): every line for points that fill
// the grid, fewer for sources in a box smaller than it (the pruned passes), and the work fft_line_work counts is
// each kept line's points times log2 of its length. The CPU prices 3-D grids by that work, so a 3-D double plan at
// tol 1e-9 takes a sigma above 2 (the larger grid, mostly pruned, with the narrower kernel: 1.14-1.27x faster on the
// development VM, docs/nufft3.md), and 1-D and 2-D grids by their cells.
TEST(CostModel, GridFftLinesAndTheirWork) {
  using namespace sfft::nufft3;
  const double x_lo[3] = {-60, -60, -60}, x_hi[3] = {60, 60, 60}, s_lo[3] = {-2, -2, -2}, s_hi[3] = {2, 2, 2};
  for (int dim = 1; dim <= 3; ++dim) {
    for (double sigma : {2.0, 2.5}) {
      const Layout L = make_layout(dim, make_kernel(KernelKind::ExpSemicircle, 1e-9, sigma, dim, true), sigma, x_lo,
                                   x_hi, s_lo, s_hi, 16.0, 1e15, {});
      const FftLines all = all_fft_lines(L), kept = fft_lines(L, s_lo, s_hi);
      double full = 0;  // every line of every pass
      for (int d = 0; d < dim; ++d) {
        const double n = static_cast<double>(L.axis[d].n2);
        full += static_cast<double>(L.n2_total) / n * n * std::log2(n);
      }
      EXPECT_NEAR(fft_line_work(L, all), full, 1e-9 * full) << "dim " << dim;
      EXPECT_FALSE(all.pruned);
      if (dim == 1) {
        EXPECT_EQ(fft_line_work(L, kept), fft_line_work(L, all));
        continue;
      }
      EXPECT_TRUE(kept.pruned) << "dim " << dim << " sigma " << sigma;
      EXPECT_LT(fft_line_work(L, kept), 0.75 * full) << "dim " << dim << " sigma " << sigma;
      EXPECT_LE(kept.band, all.band);
      EXPECT_LE(fft_lines_at_both_ends(L, 0, kept.rows[0]), L.axis[0].n2);
      EXPECT_EQ(kept.band_lo % kPruneRound, 0);
    }
  }
  // The benchmark's uniform 3-D points at scale 0.1 (benchmarks/nufft3_bench.py).
  const double u_lo[3] = {-27.85, -27.85, -27.85}, u_hi[3] = {27.85, 27.85, 27.85}, v_lo[3] = {-1, -1, -1},
               v_hi[3] = {1, 1, 1};
  const Layout chosen = choose_layout(3, KernelKind::ExpSemicircle, 1e-9, 0, 100000, 100000, 1, u_lo, u_hi, v_lo, v_hi,
                                      16.0, 1e15, kCpuCost, true);
  EXPECT_GT(chosen.upsampfac, 2.0);
  // And the benchmark's clustered 3-D ntransf 16 points in single precision at 1e-5 take sigma 2.5 with 6 cells
  // (4.6e-6 there) over sigma 2 with 7 (1.1e-6), 8-10 % faster on the development VM.
  const double c_lo[3] = {-11.17, -10.11, -8.81}, c_hi[3] = {11.33, 10.56, 12.0}, t_lo[3] = {-0.82, -0.85, -0.81},
               t_hi[3] = {0.64, 0.73, 0.83};  // one draw of them
  const Layout clustered = choose_layout(3, KernelKind::ExpSemicircle, 1e-5, 0, 10000, 10000, 16, c_lo, c_hi, t_lo,
                                         t_hi, 8.0 * 16, 1e15, kCpuCost, false);
  EXPECT_EQ(clustered.upsampfac, 2.5);
  EXPECT_EQ(clustered.kernel.width, 6);
}

// The sources' occupancy (sources to a cell of the source grid) from a sample: exact where the sample is every
// source, close where it is a random draw, also from sources sorted by cell; and single precision below 1e-4 takes
// sigmas under 2 by it.
TEST(CostModel, SingleSigmaBelowTwoByOccupancy) {
  using namespace sfft::nufft3;
  const double lo[3] = {-10, -10, -10}, hi[3] = {10, 10, 10}, t_lo[3] = {-1, -1, -1}, t_hi[3] = {1, 1, 1};
  const Layout L =
      make_layout(3, make_kernel(KernelKind::ExpSemicircle, 1e-5, 2, 3, false), 2, lo, hi, t_lo, t_hi, 8.0, 1e15);
  const double h = L.axis[0].h1;
  // `groups` cells (centres 3 cells apart along x) of `per` sources each, sorted by cell.
  auto grouped = [&](std::size_t groups, std::size_t per) {
    std::vector<double> x[3];
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t j = 0; j < per; ++j) {
        x[0].push_back(-9 + h * (3 * static_cast<double>(g % 6) + 0.5));
        x[1].push_back(-9 + h * (3 * static_cast<double>(g / 6 % 6) + 0.5));
        x[2].push_back(-9 + h * (3 * static_cast<double>(g / 36) + 0.5));
      }
    return std::vector<std::vector<double>>{x[0], x[1], x[2]};
  };
  auto occupancy = [&](const std::vector<std::vector<double>> &x) {
    const double *p[3] = {x[0].data(), x[1].data(), x[2].data()};
    return source_occupancy(L, sample_sources(p, 3, x[0].size()));
  };
  EXPECT_DOUBLE_EQ(occupancy(grouped(20, 100)), 100);  // 2000 sources: every one in the sample
  EXPECT_DOUBLE_EQ(occupancy(grouped(200, 1)), 1);
  const double sorted = occupancy(grouped(200, 500));  // 1e5 sources, a sample of 2048
  EXPECT_GT(sorted, 400);
  EXPECT_LT(sorted, 600);
  // A floor that grows like the square root of the occupancy, and not below the few-point term.
  const KernelSpec &k = L.kernel;
  EXPECT_DOUBLE_EQ(single_rounding_floor(k, 2, 3, 1), single_rounding_floor(k, 2, 3, 10));
  EXPECT_NEAR(single_rounding_floor(k, 2, 3, 4e4) / single_rounding_floor(k, 2, 3, 1e4), 2, 1e-12);
  EXPECT_GT(single_rounding_floor(k, 1.75, 3, 1e4), single_rounding_floor(k, 2, 3, 1e4));

  // The benchmark's clustered 3-D ntransf 16 points (one draw of their boxes) at single 5e-6: with about 150
  // sources to a cell, sigma 1.75 (7 cells, as sigma 2, on a smaller grid); with 5000 to a cell, or no sample,
  // sigma 2 (the floor of the cells' sums would take more than half of tol at 1.75).
  const double c_lo[3] = {-11.17, -10.11, -8.81}, c_hi[3] = {11.33, 10.56, 12.0}, s_lo[3] = {-0.82, -0.85, -0.81},
               s_hi[3] = {0.64, 0.73, 0.83};
  auto sample_of = [](std::size_t total, std::size_t groups) {
    SourceSample sample;  // groups of equal points, 6 apart: distinct cells at every sigma
    sample.total = total;
    for (std::size_t i = 0; i < kOccupancySample; ++i) {
      const std::size_t g = i % groups;
      sample.coord[0].push_back(-9 + 6.0 * static_cast<double>(g % 4));
      sample.coord[1].push_back(-9 + 6.0 * static_cast<double>(g / 4 % 4));
      sample.coord[2].push_back(-8 + 6.0 * static_cast<double>(g / 16));
    }
    return sample;
  };
  auto sigma_with = [&](const SourceSample *sample, std::size_t N, double tol) {
    return choose_layout(3, KernelKind::ExpSemicircle, tol, 0, N, 10000, 16, c_lo, c_hi, s_lo, s_hi, 8.0 * 16, 1e15,
                         kCpuCost, false, sample)
        .upsampfac;
  };
  const SourceSample moderate = sample_of(10000, 64), dense = sample_of(10000, 2);
  EXPECT_NEAR(source_occupancy(make_layout(3, L.kernel, 1.75, c_lo, c_hi, s_lo, s_hi, 8.0, 1e15), moderate), 152.4,
              0.1);
  EXPECT_EQ(sigma_with(&moderate, 10000, 5e-6), 1.75);
  EXPECT_GE(sigma_with(&dense, 10000, 5e-6), 2.0);
  EXPECT_GE(sigma_with(nullptr, 10000, 5e-6), 2.0);
  EXPECT_GE(sigma_with(&moderate, 10000, 5e-7), 2.0);  // the floor leaves too little of tol there
  // Nor below 2e-6 whatever the occupancy: the benchmark's uniform 1-D points (1e5 in [-6000, 6000], targets in
  // [-10, 10], one to a cell) take sigma 1.5 at 2e-6 and 2 at 1e-6.
  std::vector<double> line(100000);
  for (std::size_t i = 0; i < line.size(); ++i) line[i] = -6000 + 0.12 * static_cast<double>(i);
  const double *line_ptr[1] = {line.data()};
  const SourceSample spread = sample_sources(line_ptr, 1, line.size());
  const double x1_lo[1] = {-6000}, x1_hi[1] = {6000}, s1_lo[1] = {-10}, s1_hi[1] = {10};
  auto sigma_1d = [&](double tol) {
    return choose_layout(1, KernelKind::ExpSemicircle, tol, 0, 100000, 100000, 1, x1_lo, x1_hi, s1_lo, s1_hi, 16.0,
                         1e15, kCpuCost, false, &spread)
        .upsampfac;
  };
  EXPECT_LT(sigma_1d(2e-6), 2.0);
  EXPECT_GE(sigma_1d(1e-6), 2.0);
}

// Transforms per pass: maxbatchsize where set (capped at ntransf); automatic, at most 8, or as many grids as fit,
// in the fewest passes of near-equal sizes.
TEST(Passes, TransformsPerPass) {
  using sfft::nufft3::transforms_per_pass;
  const double any = std::numeric_limits<double>::infinity();
  EXPECT_EQ(transforms_per_pass(16, 3, any), 3);
  EXPECT_EQ(transforms_per_pass(5, 8, 1.0), 5);  // the caller's choice; memory is checked by the layout
  EXPECT_EQ(transforms_per_pass(1, 0, any), 1);
  EXPECT_EQ(transforms_per_pass(8, 0, any), 8);
  EXPECT_EQ(transforms_per_pass(16, 0, any), 8);
  EXPECT_EQ(transforms_per_pass(12, 0, any), 6);  // 2 passes of 6, not 8 + 4
  EXPECT_EQ(transforms_per_pass(17, 0, any), 6);  // 3 passes: 6 + 6 + 5
  EXPECT_EQ(transforms_per_pass(16, 0, 5.9), 4);  // 5 fit: 4 passes of 4
  EXPECT_EQ(transforms_per_pass(16, 0, 0.3), 1);  // not even one: 1 (the layout then refuses it)
  EXPECT_EQ(transforms_per_pass(16, 0, std::nan("")), 8);
  for (int ntransf = 1; ntransf <= 40; ++ntransf)
    for (double fit : {0.5, 1.0, 2.0, 3.5, 7.0, 100.0}) {
      const int batch = transforms_per_pass(ntransf, 0, fit);
      const int most = std::max(1, std::min({static_cast<int>(fit), 8, ntransf}));
      const int passes = (ntransf + batch - 1) / batch;
      EXPECT_LE(batch, most) << ntransf << " " << fit;
      EXPECT_EQ(passes, (ntransf + most - 1) / most) << ntransf << " " << fit;  // as few passes as `most` allows
      // Near-equal sizes: the smallest batch that covers ntransf in that many passes (the last pass short by
      // less than `passes`).
      EXPECT_EQ(batch, (ntransf + passes - 1) / passes) << ntransf << " " << fit;
    }
}

// Under a memory limit: a smaller sigma's grid where the free choice's does not fit, fewer grids per pass where all
// of them do not fit, and a refusal (GridTooLarge) where not even one grid fits or maxbatchsize asks for more.
TEST(Passes, LayoutWithinTheMemory) {
  using namespace sfft::nufft3;
  const double x_lo[2] = {-400, -400}, x_hi[2] = {400, 400}, s_lo[2] = {-2, -2}, s_hi[2] = {2, 2};
  constexpr double kUnlimited = std::numeric_limits<double>::infinity();
  auto layout = [&](double limit, int grids) {
    return choose_layout(2, KernelKind::ExpSemicircle, 1e-5, 0, 1000000, 1000000, 1, x_lo, x_hi, s_lo, s_hi,
                         16.0 * grids, limit, kCudaCost, true);
  };
  const Layout free_choice = layout(kUnlimited, 1);
  ASSERT_GT(free_choice.upsampfac, 1.25);
  const double grid_free = 16.0 * static_cast<double>(free_choice.n2_total);
  const Layout smaller = layout(0.9 * grid_free, 1);
  EXPECT_LT(smaller.upsampfac, free_choice.upsampfac);
  EXPECT_LT(16.0 * static_cast<double>(smaller.n2_total), 0.9 * grid_free);
  int batch = 0;
  const Layout eight = layout_for_passes(16, 0, 1e15, 16.0, layout, &batch);
  EXPECT_EQ(batch, 8);
  EXPECT_EQ(eight.upsampfac, free_choice.upsampfac);
  // Room for 5.5 grids of the free choice: the 8 of a pass fit at a smaller sigma instead.
  const Layout fitted = layout_for_passes(16, 0, 5.5 * grid_free, 16.0, layout, &batch);
  EXPECT_EQ(batch, 8);
  EXPECT_LT(fitted.upsampfac, free_choice.upsampfac);
  // Room for 2.5 grids of the smallest sigma: passes of one (half the memory holds one grid, at some sigma).
  const Layout smallest = make_layout(2, make_kernel(KernelKind::ExpSemicircle, 1e-5, 1.25, 2, true), 1.25, x_lo, x_hi,
                                      s_lo, s_hi, 16.0, kUnlimited, {kCudaCost.fft_odd_prime});
  const double grid125 = 16.0 * static_cast<double>(smallest.n2_total);
  const Layout one = layout_for_passes(16, 0, 2.5 * grid125, 16.0, layout, &batch);
  EXPECT_EQ(batch, 1);
  EXPECT_LE(16.0 * static_cast<double>(one.n2_total), 2.5 * grid125);
  EXPECT_THROW(layout_for_passes(16, 0, 0.5 * grid125, 16.0, layout, &batch), GridTooLarge);
  EXPECT_THROW(layout_for_passes(16, 8, 2.5 * grid125, 16.0, layout, &batch), GridTooLarge);
}

// Every kernel a plan can pick gets a Chebyshev fit of phihat within fourier_fit_error(tol), checked here at
// points the fit did not see against the quadrature. At a fixed 2e-14 the fit missed at W = 12, sigma = 1.25
// (3.0e-14 at 48 terms) and setpts fell back to the quadrature at every target and grid cell: 65 ms instead of
// 15 (2-D double, 1e5 targets, tol 1e-6 to 3e-8).
TEST(FourierFit, EveryKernelIsFittedWithinItsBound) {
  using namespace sfft::nufft3;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  int kernels = 0;
  for (const KernelKind kind : {KernelKind::ExpSemicircle, KernelKind::Prolate}) {
    for (const bool is_double : {false, true}) {
      for (double tol = 1e-1; tol >= (is_double ? 1e-14 : 1e-6); tol /= 3) {
        for (const double sigma : {1.25, 2.0}) {
          for (int dim = 1; dim <= 3; ++dim) {
            KernelSpec k;
            try {
              k = make_kernel(kind, tol, sigma, dim, is_double);
            } catch (const std::exception &) {
              continue;  // out of reach at this sigma; choose_layout takes the other
            }
            ++kernels;
            const double bound = fourier_fit_error(tol);
            const FourierFit fit = fit_fourier(k, sigma, bound);
            ASSERT_GT(fit.terms, 0) << "W = " << k.width << ", sigma = " << sigma << ", tol = " << tol;
            EXPECT_LE(fit.terms, kMaxFourierTerms);
            double worst = 0;
            for (int i = 0; i < 200; ++i) {
              const double w = M_PI / sigma * unit(rng);
              worst = std::max(worst, std::fabs(fourier_at(k, fit, w) / kernel_fourier(k, w) - 1));
            }
            EXPECT_LE(worst, 2 * bound) << "W = " << k.width << ", sigma = " << sigma << ", tol = " << tol;
          }
        }
      }
    }
  }
  EXPECT_GT(kernels, 200);
  // A loose tol takes fewer terms than the tightest bound.
  const KernelSpec k = make_kernel(KernelKind::ExpSemicircle, 1e-3, 2.0, 2, false);
  EXPECT_LT(fit_fourier(k, 2.0, fourier_fit_error(1e-3)).terms, fit_fourier(k, 2.0, kFourierFitError).terms);
}

// The prolate kernel is psi_0 of bandwidth c, which its own Fourier transform reproduces: the integral of
// psi_0(z) e^{i c z v} over [-1, 1] is lambda psi_0(v) for |v| <= 1, so phihat(w) / phihat(0) = phi(u) at
// u = w half_width^2 / c. phihat comes from the Gauss-Legendre quadrature of the kernel's values and phi from its
// Legendre series (the eigenvector of the prolate operator): they agree only if that vector is psi_0's.
TEST(ProlateKernel, IsItsOwnFourierTransform) {
  using namespace sfft::nufft3;
  for (const double sigma : {1.25, 2.0}) {
    for (double tol = 1e-2; tol >= 1e-14; tol /= 10) {
      KernelSpec k;
      try {
        k = make_kernel(KernelKind::Prolate, tol, sigma, 1, true);
      } catch (const std::exception &) {
        continue;
      }
      ASSERT_GT(k.nlegendre, 0);
      ASSERT_LT(k.nlegendre, kMaxLegendre) << "the series is cut where it is below rounding, not at its capacity";
      EXPECT_NEAR(kernel_value(k, 0.0), 1.0, 1e-14);
      const double c = k.beta, hw = k.half_width, peak = kernel_fourier(k, 0);
      double worst = 0;
      for (double v = 0; v <= 1.0; v += 1.0 / 64) {
        worst = std::max(worst, std::fabs(kernel_fourier(k, v * c / hw) / peak - kernel_value(k, v * hw)));
      }
      EXPECT_LT(worst, 1e-12) << "W = " << k.width << ", c = " << c << ", sigma = " << sigma;
      // Even, and positive inside its support.
      for (double u = 0; u < hw; u += 0.125) {
        EXPECT_EQ(kernel_value(k, u), kernel_value(k, -u));
        EXPECT_GT(kernel_value(k, u), 0.0) << "u = " << u;
      }
    }
  }
}

// A centre within kCentreSnap of the half-width is taken as 0, the half-width growing to cover the points; a
// larger offset is kept.
TEST(Layout, CentresNearZeroAreSnapped) {
  using namespace sfft::nufft3;
  const KernelSpec k = make_kernel(KernelKind::ExpSemicircle, 1e-6, 2.0, 1, true);
  const double x_lo[1] = {-99}, x_hi[1] = {101}, s_lo[1] = {-1.2}, s_hi[1] = {0.8};  // offsets 1 % and 20 %
  const Layout L = make_layout(1, k, 2.0, x_lo, x_hi, s_lo, s_hi, 16, 1e12);
  EXPECT_EQ(L.axis[0].src_center, 0.0);
  EXPECT_DOUBLE_EQ(L.axis[0].tgt_center, -0.2);
  // The snapped side's grid covers [-101, 101]: n1 / 2 cells of h1 reach past 101.
  EXPECT_GE(L.axis[0].n1 / 2 * L.axis[0].h1, 101.0);
}
#endif

}  // namespace
