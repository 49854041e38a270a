// SPDX-License-Identifier: Apache-2.0
// Resource limits: sizes whose byte counts overflow size_t are SFFT_ERROR_INVALID_ARGUMENT before any
// memory is touched; requests larger than the memory the process may map are SFFT_ERROR_OUT_OF_MEMORY
// with the needed size in sfft_last_error(), and the library (and the plan) stays usable afterwards.
// Out-of-memory cases run in a child process (a gtest death test, re-executed: "threadsafe" style)
// whose address space is capped with setrlimit(RLIMIT_AS) just above what it already maps.
#include <sys/resource.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

bool mentions(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

// Virtual memory the process maps now (VmSize), in bytes.
std::size_t mapped_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmSize:") {
      std::size_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// Caps the address space at what is mapped now plus `headroom`; false (with a message) on failure.
bool cap_address_space(std::size_t headroom) {
  rlimit lim{};
  lim.rlim_cur = lim.rlim_max = mapped_bytes() + headroom;
  if (mapped_bytes() == 0 || setrlimit(RLIMIT_AS, &lim) != 0) {
    std::fprintf(stderr, "could not cap the address space\n");
    return false;
  }
  return true;
}

// The child's verdict: prints what went wrong (the death test shows the child's stderr) and exits.
[[noreturn]] void child_exit(const std::vector<std::string> &problems) {
  for (const auto &p : problems) std::fprintf(stderr, "%s\n", p.c_str());
  std::fflush(stderr);
  std::_Exit(problems.empty() ? 0 : 1);
}

class LimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    // Under AddressSanitizer an allocation the address space cannot hold must return NULL (as malloc does)
    // rather than abort; the re-executed child inherits this environment.
    const char *asan = std::getenv("ASAN_OPTIONS");
    std::string opts = asan ? std::string(asan) + ":" : std::string();
    if (!mentions(opts, "allocator_may_return_null"))
      setenv("ASAN_OPTIONS", (opts + "allocator_may_return_null=1").c_str(), 1);
  }
};

// ------------------------------------------------------------------------------------------- shift
#if SFFT_TEST_FAMILY_shift
// Every rank and dtype: extents whose element count or byte count exceeds size_t are rejected, the message
// says which product overflowed, and the buffers (far too small for the claimed shape) are not touched.
TEST_F(LimitsTest, ShiftSizeOverflow) {
  const sfft_dtype dtypes[] = {SFFT_FLOAT32, SFFT_FLOAT64, SFFT_COMPLEX64, SFFT_COMPLEX128};
  const int64_t big = INT64_C(1) << 32;
  for (sfft_dtype dtype : dtypes) {
    for (int ndim = 2; ndim <= 8; ++ndim) {
      // 2^32 * 2^32 overflows the element count; 2^31 * 2^31 = 2^62 elements (>= 4 bytes each) overflows
      // only the byte count.
      for (bool bytes_only : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "dtype " << dtype << " ndim " << ndim << " bytes_only " << bytes_only);
        std::vector<int64_t> shape(ndim, 1);
        if (bytes_only) {
          shape[0] = INT64_C(1) << 31;
          shape[ndim - 1] = INT64_C(1) << 31;
        } else {
          shape[0] = big;
          shape[ndim - 1] = big;
        }
        std::vector<unsigned char> out(64, 0xA5), in(64, 0x11);
        const std::vector<unsigned char> untouched = out;
        sfft_status s = fftshift_nd(out.data(), in.data(), ndim, shape.data(), 0, dtype, nullptr);
        EXPECT_EQ(s, SFFT_ERROR_INVALID_ARGUMENT) << sfft_last_error();
        EXPECT_TRUE(mentions(sfft_last_error(), "overflows") || mentions(sfft_last_error(), "too large"))
            << sfft_last_error();
        EXPECT_EQ(out, untouched);
      }
    }
  }
}

// Largest extents that still fit: 2^63 - 1 elements is rejected as too large for the address space.
TEST_F(LimitsTest, ShiftExtentAtInt64Max) {
  std::vector<int64_t> shape = {INT64_MAX};
  unsigned char out[16] = {}, in[16] = {};
  EXPECT_EQ(fftshift_nd(out, in, 1, shape.data(), 0, SFFT_FLOAT32, nullptr), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_STRNE(sfft_last_error(), "");
}

// An in-place rotation along an odd axis needs a scratch slab of 1/extent of the array where it cannot move
// chunks of rows (3 x 2 x 3 x 2^22 float32 shifted along its two odd axes: four dims). Under an address space cap
// below that, the call fails with OUT_OF_MEMORY naming the bytes, leaves the array as it was, and the next calls
// work: the same bytes as 3 x 2^25 shifted along its first axis only, whose chunks of rows need a 256 KiB buffer
// (so it runs under the cap), and a small rotation. Runs in the death-test child.
[[noreturn]] void shift_out_of_memory_child() {
  std::vector<std::string> problems;
  const int64_t cols = INT64_C(4) << 20;
  std::vector<int64_t> shape = {3, 2, 3, cols};
  const std::size_t bytes = 18 * static_cast<std::size_t>(cols) * sizeof(float);
  auto *data = static_cast<float *>(std::malloc(bytes));  // mapped, not touched
  if (data == nullptr) child_exit({"test setup: malloc failed"});
  const std::size_t last = bytes / sizeof(float) - 1;
  data[0] = 1.0f;
  data[last] = 2.0f;
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CPU;
  opts.threads = 1;
  if (!cap_address_space(48 * kMiB)) child_exit({"test setup: setrlimit failed"});
  sfft_status s = fftshift_nd(data, data, 4, shape.data(), 0x5, SFFT_FLOAT32, &opts);
  const std::string msg = sfft_last_error();
  const std::string need = std::to_string(bytes / 3);  // slab 0 of the 3-slab rotation
  if (s != SFFT_ERROR_OUT_OF_MEMORY) problems.push_back("status " + std::string(sfft_status_string(s)));
  if (!mentions(msg, need)) problems.push_back("message lacks the size " + need + ": " + msg);
  if (data[0] != 1.0f || data[last] != 2.0f) problems.push_back("array modified by the failed call");
  // The same bytes as 3 x (6 * 2^22) shifted along the first axis: row r to row r + 1, in chunks of rows.
  const std::vector<int64_t> rows = {3, 6 * cols};
  const std::size_t row = static_cast<std::size_t>(rows[1]);
  s = fftshift_nd(data, data, 2, rows.data(), 1, SFFT_FLOAT32, &opts);
  if (s != SFFT_SUCCESS) problems.push_back(std::string("first axis under the cap: ") + sfft_last_error());
  if (data[row] != 1.0f || data[row - 1] != 2.0f) problems.push_back("first axis under the cap: rows not rotated");
  // Still usable: a small rotation of the same kind, checked element by element.
  float small[3 * 5];
  for (int i = 0; i < 15; ++i) small[i] = static_cast<float>(i);
  std::vector<int64_t> small_shape = {3, 5};
  s = fftshift_nd(small, small, 2, small_shape.data(), 1, SFFT_FLOAT32, &opts);
  if (s != SFFT_SUCCESS) problems.push_back(std::string("small call after OOM: ") + sfft_last_error());
  for (int i = 0; i < 15; ++i)
    if (small[((i / 5 + 1) % 3) * 5 + i % 5] != static_cast<float>(i))
      problems.push_back("small call after OOM: wrong element " + std::to_string(i));
  std::free(data);
  child_exit(problems);
}

TEST_F(LimitsTest, ShiftOutOfMemoryUnderAddressSpaceLimit) {
  EXPECT_EXIT(shift_out_of_memory_child(), ::testing::ExitedWithCode(0), "");
}
#endif

// Runs `body` in the death-test child with the address space capped `headroom` above what is mapped once
// `setup` has run; the child exits 0 only if body reported no problem.
template <class Setup, class Body>
[[noreturn]] void capped_child(std::size_t headroom, Setup setup, Body body) {
  std::vector<std::string> problems;
  auto state = setup(problems);
  if (!problems.empty()) child_exit(problems);
  if (!cap_address_space(headroom)) child_exit({"test setup: setrlimit failed"});
  body(state, problems);
  child_exit(problems);
}

void expect_oom(sfft_status s, const char *call, std::vector<std::string> &problems) {
  const std::string msg = sfft_last_error();
  if (s != SFFT_ERROR_OUT_OF_MEMORY)
    problems.push_back(std::string(call) + ": status " + sfft_status_string(s) + " (" + msg + "), not OUT_OF_MEMORY");
  else if (!mentions(msg, "bytes"))
    problems.push_back(std::string(call) + ": the message does not give the size in bytes: " + msg);
}

sfft_options cpu_options_1thread() {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  o.threads = 1;
  return o;
}

// ------------------------------------------------------------------------------------------ nufft3
#if SFFT_TEST_FAMILY_nufft3
TEST_F(LimitsTest, Nufft3CountsWhoseBytesOverflow) {
  sfft_options o = cpu_options_1thread();
  nufft3_plan plan = nullptr;
  ASSERT_EQ(nufft3_create(&plan, 1, SFFT_COMPLEX128, -1, 1e-6, &o), SFFT_SUCCESS) << sfft_last_error();
  double x[4] = {0, 1, 2, 3};
  for (uint64_t huge : {uint64_t{1} << 60, uint64_t{1} << 62, uint64_t{1} << 63, UINT64_MAX}) {
    SCOPED_TRACE(huge);
    EXPECT_EQ(nufft3_setpts(plan, huge, x, nullptr, nullptr, 4, x, nullptr, nullptr), SFFT_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(mentions(sfft_last_error(), "N")) << sfft_last_error();
    EXPECT_EQ(nufft3_setpts(plan, 4, x, nullptr, nullptr, huge, x, nullptr, nullptr), SFFT_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(mentions(sfft_last_error(), "K")) << sfft_last_error();
  }
  EXPECT_EQ(nufft3_setpts(plan, 4, x, nullptr, nullptr, 4, x, nullptr, nullptr), SFFT_SUCCESS) << sfft_last_error();
  nufft3_destroy(plan);
}

// The plan of the memory-limit children below: 1-D, complex128, tol 1e-6, one CPU thread.
nufft3_plan create_1d_plan(std::vector<std::string> &problems) {
  sfft_options o = cpu_options_1thread();
  nufft3_plan plan = nullptr;
  if (nufft3_create(&plan, 1, SFFT_COMPLEX128, -1, 1e-6, &o) != SFFT_SUCCESS)
    problems.push_back(std::string("nufft3_create: ") + sfft_last_error());
  return plan;
}

// A 1-D grid of about 2^26 cells (1 GiB of complex128, less than the machine's memory, so the library
// tries) under a 64 MiB address-space margin: OUT_OF_MEMORY with the size, then the plan takes small points.
[[noreturn]] void nufft3_out_of_memory_child() {
  capped_child(64 * kMiB, create_1d_plan, [](nufft3_plan plan, std::vector<std::string> &problems) {
    double x[2] = {-5000, 5000}, s[2] = {-5000, 5000};
    expect_oom(nufft3_setpts(plan, 2, x, nullptr, nullptr, 2, s, nullptr, nullptr), "nufft3_setpts", problems);
    double sx[2] = {0.5, -1}, ss[1] = {2};
    std::complex<double> f[2] = {{1, 0}, {0, 1}}, F[1];
    if (nufft3_setpts(plan, 2, sx, nullptr, nullptr, 1, ss, nullptr, nullptr) != SFFT_SUCCESS ||
        nufft3_exec(plan, f, F) != SFFT_SUCCESS)
      problems.push_back(std::string("plan unusable after OOM: ") + sfft_last_error());
    else if (std::abs(F[0] - (std::polar(1.0, -1.0) + std::complex<double>(0, 1) * std::polar(1.0, 2.0))) > 1e-5)
      problems.push_back("plan gives a wrong result after OOM");
    nufft3_destroy(plan);
  });
}

TEST_F(LimitsTest, Nufft3OutOfMemoryUnderAddressSpaceLimit) {
  EXPECT_EXIT(nufft3_out_of_memory_child(), ::testing::ExitedWithCode(0), "");
}

// The grid is sized against what the process may still map (here RLIMIT_AS; in a container its memory
// cgroup, on a host MemAvailable), not against the machine's physical memory: a grid of about 1 GiB under a
// 256 MiB margin is refused by the size check, naming the bytes available, before anything is allocated
// (where the kernel overcommits, an allocation that succeeds can still be killed when it is touched).
[[noreturn]] void nufft3_ceiling_child() {
  capped_child(256 * kMiB, create_1d_plan, [](nufft3_plan plan, std::vector<std::string> &problems) {
    double x[2] = {-5000, 5000}, s[2] = {-5000, 5000};
    expect_oom(nufft3_setpts(plan, 2, x, nullptr, nullptr, 2, s, nullptr, nullptr), "nufft3_setpts", problems);
    if (!mentions(sfft_last_error(), "available"))
      problems.push_back(std::string("not refused by the size check: ") + sfft_last_error());
    nufft3_destroy(plan);
  });
}

TEST_F(LimitsTest, Nufft3GridSizedByAvailableMemory) {
  EXPECT_EXIT(nufft3_ceiling_child(), ::testing::ExitedWithCode(0), "");
}

// 16 transforms whose grids (7.7e5 cells at sigma = 1.25, 12 MiB each in complex128, as much again for the
// spreading's subgrids; sigma = 2's are larger) need about 400 MB under a 192 MiB margin: maxbatchsize 16 is
// refused with OUT_OF_MEMORY, the automatic choice runs them in passes of fewer grids, each output within tol of
// the direct sum.
[[noreturn]] void nufft3_passes_child() {
  capped_child(192 * kMiB, create_1d_plan, [](nufft3_plan plan, std::vector<std::string> &problems) {
    constexpr int kTransforms = 16, kN = 64, kK = 48;
    std::vector<double> x(kN), s(kK);
    for (int j = 0; j < kN; ++j) x[j] = -880 + 1760.0 * j / (kN - 1);
    for (int k = 0; k < kK; ++k) s[k] = 880 - 1760.0 * k / (kK - 1);
    std::vector<std::complex<double>> f(kTransforms * kN), F(kTransforms * kK);
    for (int i = 0; i < kTransforms * kN; ++i) f[i] = {std::cos(0.37 * i), std::sin(1.3 * i)};
    nufft3_options no;
    nufft3_options_init(&no);
    no.ntransf = kTransforms;
    no.maxbatchsize = kTransforms;
    if (nufft3_set_options(plan, &no) != SFFT_SUCCESS) problems.push_back(sfft_last_error());
    expect_oom(nufft3_setpts(plan, kN, x.data(), nullptr, nullptr, kK, s.data(), nullptr, nullptr),
               "nufft3_setpts with maxbatchsize 16", problems);
    no.maxbatchsize = 0;
    if (nufft3_set_options(plan, &no) != SFFT_SUCCESS ||
        nufft3_setpts(plan, kN, x.data(), nullptr, nullptr, kK, s.data(), nullptr, nullptr) != SFFT_SUCCESS ||
        nufft3_exec(plan, f.data(), F.data()) != SFFT_SUCCESS) {
      problems.push_back(std::string("automatic passes: ") + sfft_last_error());
    } else {
      for (int tr = 0; tr < kTransforms; ++tr) {
        double err2 = 0, ref2 = 0;
        for (int k = 0; k < kK; ++k) {
          std::complex<double> want = 0;
          for (int j = 0; j < kN; ++j) want += f[tr * kN + j] * std::polar(1.0, -x[j] * s[k]);
          err2 += std::norm(F[tr * kK + k] - want);
          ref2 += std::norm(want);
        }
        if (!(std::sqrt(err2 / ref2) <= 1e-5))
          problems.push_back("transform " + std::to_string(tr) + ": error " + std::to_string(std::sqrt(err2 / ref2)));
      }
    }
    nufft3_destroy(plan);
  });
}

TEST_F(LimitsTest, Nufft3PassesOfFewerGridsUnderAMemoryLimit) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
  constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
  constexpr bool kAddressSanitizer = false;
#endif
  // The other children here only need their refusals; this one must run its passes within the cap, where
  // AddressSanitizer's redzones and its quarantine of freed blocks (256 MiB) count too. nufft3_test's
  // PassesOfFewerTransformsMatchOnePass runs the passes under it.
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer's own memory counts against the address-space cap";
  EXPECT_EXIT(nufft3_passes_child(), ::testing::ExitedWithCode(0), "");
}

// A failed nufft3_setpts (a non-finite coordinate, a grid larger than any memory) leaves the previous points:
// exec still gives their result. It used to leave the plan without points.
TEST_F(LimitsTest, Nufft3FailedSetptsKeepsThePoints) {
  sfft_options o = cpu_options_1thread();
  nufft3_plan plan = nullptr;
  ASSERT_EQ(nufft3_create(&plan, 1, SFFT_COMPLEX128, -1, 1e-9, &o), SFFT_SUCCESS) << sfft_last_error();
  double x[3] = {0.5, -1, 2}, s[2] = {2, -3};
  std::complex<double> f[3] = {{1, 0}, {0, 1}, {-1, 2}}, want[2], got[2];
  ASSERT_EQ(nufft3_setpts(plan, 3, x, nullptr, nullptr, 2, s, nullptr, nullptr), SFFT_SUCCESS) << sfft_last_error();
  ASSERT_EQ(nufft3_exec(plan, f, want), SFFT_SUCCESS) << sfft_last_error();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const double bad_x[3][3] = {{0, nan, 1}, {0, 1, 2}, {-1e300, 0, 1e300}};
  const double bad_s[3][2] = {{1, 2}, {inf, 1}, {-1e300, 1e300}};
  const sfft_status expected[3] = {SFFT_ERROR_INVALID_ARGUMENT, SFFT_ERROR_INVALID_ARGUMENT, SFFT_ERROR_OUT_OF_MEMORY};
  for (int c = 0; c < 3; ++c) {
    SCOPED_TRACE(c);
    EXPECT_EQ(nufft3_setpts(plan, 3, bad_x[c], nullptr, nullptr, 2, bad_s[c], nullptr, nullptr), expected[c]);
    ASSERT_EQ(nufft3_exec(plan, f, got), SFFT_SUCCESS) << sfft_last_error();
    for (int k = 0; k < 2; ++k) EXPECT_EQ(got[k], want[k]) << k;
  }
  nufft3_destroy(plan);
}
#endif

// ----------------------------------------------------------------------------------------- spfft2d
#if SFFT_TEST_FAMILY_spfft2d
TEST_F(LimitsTest, Spfft2dSizesWhoseBytesOverflow) {
  sfft_options o = cpu_options_1thread();
  int64_t r[1] = {0}, c[1] = {0};
  spfft2d_plan plan = nullptr;
  EXPECT_EQ(spfft2d_create(&plan, 4, 4, uint64_t{1} << 63, r, c, nullptr, SFFT_COMPLEX64, &o),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(sfft_last_error(), "nnz")) << sfft_last_error();
  EXPECT_EQ(spfft2d_create(&plan, uint64_t{1} << 31, 4, 1, r, c, nullptr, SFFT_COMPLEX64, &o),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(sfft_last_error(), "rows")) << sfft_last_error();
  EXPECT_EQ(plan, nullptr);
  ASSERT_EQ(spfft2d_create(&plan, 8, 8, 1, r, c, nullptr, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  std::vector<std::complex<float>> out(8 * 5, {-7, -7});
  const auto untouched = out;
  EXPECT_EQ(spfft2d_exec_rows(plan, 1, UINT64_MAX, out.data()), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(spfft2d_exec_rows(plan, UINT64_MAX, 2, out.data()), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(out, untouched);
  // An absurd tile height is either clamped to the matrix or refused; either way the plan stays usable.
  if (spfft2d_set_tile_rows(plan, UINT64_MAX) == SFFT_SUCCESS) {
    uint64_t tile = 0;
    EXPECT_EQ(spfft2d_get_info(plan, nullptr, nullptr, nullptr, &tile, nullptr, nullptr), SFFT_SUCCESS);
    EXPECT_LE(tile, 8u);
  } else {
    EXPECT_STRNE(sfft_last_error(), "");
  }
  EXPECT_EQ(spfft2d_exec(plan, out.data()), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(out[0], std::complex<float>(1, 0));
  spfft2d_destroy(plan);
}

// Tiles of 2^18 rows x 4096 columns (several GiB) under a 64 MiB margin: OUT_OF_MEMORY with the size, and
// the plan keeps its previous tiles and still produces the spectrum.
[[noreturn]] void spfft2d_out_of_memory_child() {
  capped_child(
      64 * kMiB,
      [](std::vector<std::string> &problems) {
        sfft_options o = cpu_options_1thread();
        int64_t r[2] = {1, 3}, c[2] = {2, 4095};
        spfft2d_plan plan = nullptr;
        if (spfft2d_create(&plan, uint64_t{1} << 20, 4096, 2, r, c, nullptr, SFFT_COMPLEX128, &o) != SFFT_SUCCESS ||
            spfft2d_set_tile_rows(plan, 4) != SFFT_SUCCESS)
          problems.push_back(std::string("setup: ") + sfft_last_error());
        return plan;
      },
      [](spfft2d_plan plan, std::vector<std::string> &problems) {
        expect_oom(spfft2d_set_tile_rows(plan, uint64_t{1} << 18), "spfft2d_set_tile_rows", problems);
        std::vector<std::complex<double>> row(2049);
        if (spfft2d_exec_rows(plan, 5, 1, row.data()) != SFFT_SUCCESS) {
          problems.push_back(std::string("plan unusable after OOM: ") + sfft_last_error());
        } else {
          // Y[5][v] = e^{-2 pi i 5/2^20} e^{-2 pi i 2v/4096} + e^{-2 pi i 15/2^20} e^{-2 pi i 4095v/4096}.
          const double two_pi = 6.283185307179586;
          for (int v : {0, 1, 700, 2048}) {
            std::complex<double> want = std::polar(1.0, -two_pi * (5.0 / (1 << 20) + 2.0 * v / 4096)) +
                                        std::polar(1.0, -two_pi * (15.0 / (1 << 20) + 4095.0 * v / 4096));
            if (std::abs(row[v] - want) > 1e-9) problems.push_back("wrong value after OOM at v = " + std::to_string(v));
          }
        }
        spfft2d_destroy(plan);
      });
}

TEST_F(LimitsTest, Spfft2dOutOfMemoryUnderAddressSpaceLimit) {
  EXPECT_EXIT(spfft2d_out_of_memory_child(), ::testing::ExitedWithCode(0), "");
}
#endif

// ------------------------------------------------------------------------------------------ sparse
#if SFFT_TEST_FAMILY_sparse
// A plan of n = 2^40, k = 2^18 (a window of about 2.4e7 taps, hundreds of MiB; within every argument
// limit) under a 64 MiB margin: OUT_OF_MEMORY with the size, no handle, and a small plan still works.
[[noreturn]] void sparse_out_of_memory_child() {
  capped_child(
      64 * kMiB, [](std::vector<std::string> &) { return 0; },
      [](int, std::vector<std::string> &problems) {
        sfft_options o = cpu_options_1thread();
        auto *const poison = reinterpret_cast<sfft_plan>(uintptr_t{0x5A5A});
        sfft_plan plan = poison;
        expect_oom(sfft_create(&plan, uint64_t{1} << 40, uint64_t{1} << 18, SFFT_COMPLEX128, &o), "sfft_create",
                   problems);
        if (plan != poison) problems.push_back("sfft_create failed but wrote the handle");
        std::vector<std::complex<double>> x(1024);
        for (int t = 0; t < 1024; ++t) x[t] = std::polar(1.0 / 1024, 6.283185307179586 * 37 * t / 1024);
        uint64_t f[4] = {}, count = 4;
        std::complex<double> v[4];
        if (sfft_create(&plan, 1024, 4, SFFT_COMPLEX128, &o) != SFFT_SUCCESS ||
            sfft_exec(plan, x.data(), f, v, &count) != SFFT_SUCCESS) {
          problems.push_back(std::string("small plan after OOM: ") + sfft_last_error());
        } else if (count < 1 || f[0] != 37 || std::abs(v[0] - 1.0) > 1e-6) {
          problems.push_back("small plan after OOM: wrong result");
        }
        sfft_destroy(plan == poison ? nullptr : plan);
      });
}

TEST_F(LimitsTest, SparseOutOfMemoryUnderAddressSpaceLimit) {
  EXPECT_EXIT(sparse_out_of_memory_child(), ::testing::ExitedWithCode(0), "");
}
#endif

// ------------------------------------------------------------------------------------ device memory
// Requests larger than the GPU's memory (80-140 GiB on the test machines) fail with OUT_OF_MEMORY naming
// the bytes, and the plan keeps working. (The sparse FFT has none: its argument limits cap the window at 1e9
// taps and its device arrays at a few GiB.)
sfft_options cuda_options() {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  return o;
}

void expect_device_oom(sfft_status s, const char *call) {
  EXPECT_EQ(s, SFFT_ERROR_OUT_OF_MEMORY) << call << ": " << sfft_last_error();
  EXPECT_TRUE(mentions(sfft_last_error(), "bytes")) << call << ": " << sfft_last_error();
}

#if SFFT_TEST_FAMILY_nufft3
TEST(DeviceLimits, Nufft3GridLargerThanTheGpu) {
  SFFT_SKIP_WITHOUT_GPU();
  sfft_options o = cuda_options();
  nufft3_plan plan = nullptr;
  ASSERT_EQ(nufft3_create(&plan, 1, SFFT_COMPLEX128, -1, 1e-6, &o), SFFT_SUCCESS) << sfft_last_error();
  double x[2] = {-1e5, 1e5}, s[2] = {-1e5, 1e5};  // a 1-D grid of about 2.5e10 cells (400 GB)
  expect_device_oom(nufft3_setpts(plan, 2, x, nullptr, nullptr, 2, s, nullptr, nullptr), "nufft3_setpts");
  double sx[2] = {0.5, -1}, ss[1] = {2};
  std::complex<double> f[2] = {{1, 0}, {0, 1}}, F[1];
  ASSERT_EQ(nufft3_setpts(plan, 2, sx, nullptr, nullptr, 1, ss, nullptr, nullptr), SFFT_SUCCESS) << sfft_last_error();
  ASSERT_EQ(nufft3_exec(plan, f, F), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_LT(std::abs(F[0] - (std::polar(1.0, -1.0) + std::complex<double>(0, 1) * std::polar(1.0, 2.0))), 1e-5);
  nufft3_destroy(plan);
}
#endif

#if SFFT_TEST_FAMILY_spfft2d
TEST(DeviceLimits, Spfft2dTilesLargerThanTheGpu) {
  SFFT_SKIP_WITHOUT_GPU();
  sfft_options o = cuda_options();
  int64_t r[1] = {3}, c[1] = {7};
  spfft2d_plan plan = nullptr;
  ASSERT_EQ(spfft2d_create(&plan, uint64_t{1} << 24, 4096, 1, r, c, nullptr, SFFT_COMPLEX128, &o), SFFT_SUCCESS)
      << sfft_last_error();
  // 2^24 rows x 4096 columns x 16 bytes = 1 TiB of tile.
  expect_device_oom(spfft2d_set_tile_rows(plan, uint64_t{1} << 24), "spfft2d_set_tile_rows");
  std::vector<std::complex<double>> row(2049);
  ASSERT_EQ(spfft2d_exec_rows(plan, 1, 1, row.data()), SFFT_SUCCESS) << sfft_last_error();
  const double two_pi = 6.283185307179586;
  EXPECT_LT(std::abs(row[5] - std::polar(1.0, -two_pi * (3.0 / (1 << 24) + 35.0 / 4096))), 1e-9);
  spfft2d_destroy(plan);
}
#endif

}  // namespace
