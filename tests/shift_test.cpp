// fftshift_nd / ifftshift_nd against NumPy's definition (element i of a shifted axis of extent n moves
// to (i + n/2) % n for fftshift, (i + (n+1)/2) % n for ifftshift), every dtype, odd/even extents, axis
// subsets, in and out of place, on the CPU and CUDA backends; plus the bad-input contract.
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "shift/layout.hpp"
#include "shift_reference.hpp"
#include "test_support.hpp"

namespace {

using sfft_test::shift_reference;
using Shape = std::vector<int64_t>;

std::vector<unsigned char> pattern(std::size_t bytes, uint64_t seed) {
  std::vector<unsigned char> v(bytes);
  std::mt19937_64 rng(seed);
  for (auto &b : v) b = static_cast<unsigned char>(rng());
  return v;
}

std::size_t count_of(const Shape &s) {
  return std::accumulate(s.begin(), s.end(), std::size_t{1}, [](std::size_t a, int64_t b) { return a * b; });
}

struct Case {
  Shape shape;
  uint32_t mask;
};

const std::vector<Case> &cases() {
  static const std::vector<Case> c = {
      {{1}, 0},          {{2}, 0},           {{7}, 0},          {{8}, 0},           {{100003}, 0},
      {{5, 6}, 0},       {{5, 6}, 1},        {{5, 6}, 2},       {{6, 5}, 0},        {{511, 512}, 3},
      {{3, 1, 4}, 0},    {{7, 9, 11}, 0},    {{7, 9, 11}, 5},   {{8, 10, 12}, 6},   {{4, 5, 6, 7}, 0xA},
      {{2, 3, 2, 3, 2}, 0}, {{1, 1, 1}, 0},  {{3, 3, 3, 3, 3, 3, 3, 3}, 0x55},     {{64, 1000}, 2},
      {{9, 4096}, 1},    {{3, 33000}, 0},    {{70000, 3}, 2},
  };
  return c;
}

enum class Where { Cpu, CudaDevice, CudaHost };

std::string where_name(Where w) {
  return w == Where::Cpu ? "cpu" : w == Where::CudaDevice ? "cuda_device" : "cuda_staged_host";
}

class ShiftTest : public ::testing::TestWithParam<std::tuple<Where, sfft_dtype>> {};

void run_all_cases(Where where, sfft_dtype dtype) {
  const std::size_t elem = sfft_test::shift_dtype_bytes(dtype);
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
  uint64_t seed = 1;
  for (const Case &c : cases()) {
    for (bool inverse : {false, true}) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "shape rank " << c.shape.size() << " first " << c.shape[0]
                                          << " mask " << c.mask << (inverse ? " ifftshift" : " fftshift")
                                          << (in_place ? " in place" : " out of place"));
        std::size_t bytes = count_of(c.shape) * elem;
        auto in = pattern(bytes, seed++);
        auto want = shift_reference(in, c.shape, c.mask, elem, inverse);
        auto fn = inverse ? ifftshift_nd : fftshift_nd;
        std::vector<unsigned char> got(bytes);
        int nd = static_cast<int>(c.shape.size());
        if (where == Where::CudaDevice) {
          sfft_test::DeviceMemory d_in(bytes), d_out(bytes);
          d_in.upload(in.data(), bytes);
          void *dst = in_place ? d_in.get() : d_out.get();
          ASSERT_EQ(fn(dst, d_in.get(), nd, c.shape.data(), c.mask, dtype, &opts), SFFT_SUCCESS) << sfft_last_error();
          sfft_test::device_synchronize();
          (in_place ? d_in : d_out).download(got.data(), bytes);
        } else {
          std::vector<unsigned char> buf = in;
          void *dst = in_place ? static_cast<void *>(buf.data()) : static_cast<void *>(got.data());
          ASSERT_EQ(fn(dst, buf.data(), nd, c.shape.data(), c.mask, dtype, &opts), SFFT_SUCCESS) << sfft_last_error();
          if (in_place) got = buf;
          else EXPECT_EQ(buf, in) << "out-of-place shift modified its input";
        }
        ASSERT_EQ(got, want);
      }
    }
  }
}

TEST_P(ShiftTest, MatchesNumpyDefinition) {
  auto [where, dtype] = GetParam();
  if (where != Where::Cpu) SFFT_SKIP_WITHOUT_GPU();
  run_all_cases(where, dtype);
}

INSTANTIATE_TEST_SUITE_P(
    AllBackends, ShiftTest,
    ::testing::Combine(::testing::Values(Where::Cpu, Where::CudaDevice, Where::CudaHost),
                       ::testing::Values(SFFT_FLOAT32, SFFT_FLOAT64, SFFT_COMPLEX64, SFFT_COMPLEX128)),
    [](const auto &info) {
      return where_name(std::get<0>(info.param)) + "_dtype" + std::to_string(std::get<1>(info.param));
    });

// ifftshift undoes fftshift on a larger odd/even 3-D array, in place, on each backend.
TEST(ShiftRoundTrip, InPlaceLargeOddEven) {
  for (Where where : {Where::Cpu, Where::CudaDevice}) {
    if (where == Where::CudaDevice && !sfft_test::have_gpu()) continue;
    sfft_options opts;
    sfft_options_init(&opts);
    opts.backend = where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
    Shape shape = {63, 64, 65};
    std::size_t bytes = count_of(shape) * 8;
    auto in = pattern(bytes, 99);
    std::vector<unsigned char> buf = in;
    if (where == Where::Cpu) {
      ASSERT_EQ(fftshift_nd(buf.data(), buf.data(), 3, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS);
      ASSERT_NE(buf, in);
      ASSERT_EQ(ifftshift_nd(buf.data(), buf.data(), 3, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS);
    } else {
      sfft_test::DeviceMemory d(bytes);
      d.upload(in.data(), bytes);
      ASSERT_EQ(fftshift_nd(d.get(), d.get(), 3, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS);
      ASSERT_EQ(ifftshift_nd(d.get(), d.get(), 3, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS);
      sfft_test::device_synchronize();
      d.download(buf.data(), bytes);
    }
    EXPECT_EQ(buf, in) << where_name(where);
  }
}

// Managed memory (AUTO picks CUDA) and a caller's non-blocking stream (the call is asynchronous on it).
TEST(ShiftCuda, ManagedMemoryAndCallerStream) {
  SFFT_SKIP_WITHOUT_GPU();
  Shape shape = {33, 64};
  const std::size_t n = count_of(shape), bytes = n * 8;
  auto in = pattern(bytes, 17);
  auto want = shift_reference(in, shape, 0, 8, false);
  sfft_test::ManagedMemory a(bytes), b(bytes);
  std::memcpy(a.get(), in.data(), bytes);
  sfft_test::TestStream stream;
  sfft_options opts;
  sfft_options_init(&opts);
  opts.stream = stream.get();
  ASSERT_EQ(fftshift_nd(b.get(), a.get(), 2, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS) << sfft_last_error();
  ASSERT_EQ(fftshift_nd(a.get(), a.get(), 2, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS) << sfft_last_error();
  stream.synchronize();
  EXPECT_EQ(std::memcmp(b.get(), want.data(), bytes), 0) << "managed out of place";
  EXPECT_EQ(std::memcmp(a.get(), want.data(), bytes), 0) << "managed in place (odd extent: cycle waves)";
}

// The multiply-high divisor used by the in-place GPU kernel equals integer division, edge cases included.
TEST(ShiftIndexMath, FastDiv32MatchesDivision) {
  std::mt19937_64 rng(5);
  for (uint32_t d : {1u, 2u, 3u, 5u, 7u, 511u, 512u, 8191u, 65535u, 65536u, 1000003u, 2147483647u, 2147483648u}) {
    sfft::shift::FastDiv32 f(d);
    for (int i = 0; i < 200000; ++i) {
      uint32_t n = i < 1000 ? 0xFFFFFFFFu - static_cast<uint32_t>(i) : i < 2000 ? static_cast<uint32_t>(i - 1000)
                                                                              : static_cast<uint32_t>(rng());
      ASSERT_EQ(f.div(n), n / d) << "n = " << n << ", d = " << d;
    }
  }
}

// --------------------------------------------------------------------------- bad input
class ShiftBadInput : public ::testing::Test {
 protected:
  std::vector<float> in = std::vector<float>(64, 1.5f), out = std::vector<float>(64, -7.0f);
  const std::vector<float> untouched = std::vector<float>(64, -7.0f);
  Shape shape = {8, 8};

  void expect_fails(sfft_status got, sfft_status want, const char *mentions) {
    EXPECT_EQ(got, want) << sfft_last_error();
    EXPECT_NE(std::string(sfft_last_error()).find(mentions), std::string::npos) << sfft_last_error();
    EXPECT_EQ(out, untouched) << "output written by a failing call";
  }
};

TEST_F(ShiftBadInput, NullPointers) {
  expect_fails(fftshift_nd(out.data(), nullptr, 2, shape.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "in is NULL");
  expect_fails(fftshift_nd(nullptr, in.data(), 2, shape.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "out is NULL");
  expect_fails(fftshift_nd(out.data(), in.data(), 2, nullptr, 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "shape is NULL");
}

TEST_F(ShiftBadInput, Rank) {
  expect_fails(fftshift_nd(out.data(), in.data(), 0, shape.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "ndim = 0");
  Shape nine(9, 1);
  expect_fails(ifftshift_nd(out.data(), in.data(), 9, nine.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "ndim = 9");
  expect_fails(fftshift_nd(out.data(), in.data(), -3, shape.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "ndim = -3");
}

TEST_F(ShiftBadInput, NegativeExtentAndMask) {
  Shape neg = {8, -8};
  expect_fails(fftshift_nd(out.data(), in.data(), 2, neg.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "shape[1] = -8");
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0x4, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "axes_mask");
}

TEST_F(ShiftBadInput, SizeOverflow) {
  Shape huge = {INT64_C(1) << 40, INT64_C(1) << 40};
  expect_fails(fftshift_nd(out.data(), in.data(), 2, huge.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "overflows");
  Shape big = {INT64_C(1) << 62, 2};
  expect_fails(fftshift_nd(out.data(), in.data(), 2, big.data(), 0, SFFT_COMPLEX128, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "overflows");
}

TEST_F(ShiftBadInput, BadDtype) {
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, static_cast<sfft_dtype>(0), nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "dtype");
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, static_cast<sfft_dtype>(17), nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "dtype");
}

TEST_F(ShiftBadInput, PartialOverlap) {
  std::vector<float> buf(80, 2.0f);
  const std::vector<float> before = buf;
  EXPECT_EQ(fftshift_nd(buf.data() + 4, buf.data(), 2, shape.data(), 0, SFFT_FLOAT32, nullptr),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("overlap"), std::string::npos) << sfft_last_error();
  EXPECT_EQ(buf, before);
}

TEST_F(ShiftBadInput, BadOptions) {
  sfft_options opts;
  sfft_options_init(&opts);
  opts.struct_size = 0;
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, SFFT_FLOAT32, &opts),
               SFFT_ERROR_INVALID_ARGUMENT, "struct_size");
  sfft_options_init(&opts);
  opts.backend = static_cast<sfft_backend>(9);
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, SFFT_FLOAT32, &opts),
               SFFT_ERROR_INVALID_ARGUMENT, "backend");
}

TEST_F(ShiftBadInput, CudaBackendWithoutGpu) {
  if (sfft_test::have_gpu()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU error";
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  sfft_status s = fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, SFFT_FLOAT32, &opts);
  EXPECT_TRUE(s == SFFT_ERROR_NO_DEVICE || s == SFFT_ERROR_UNSUPPORTED) << sfft_status_string(s);
  EXPECT_STRNE(sfft_last_error(), "");
  EXPECT_EQ(out, untouched);
}

TEST_F(ShiftBadInput, ZeroExtentIsANoOp) {
  Shape zero = {8, 0};
  EXPECT_EQ(fftshift_nd(out.data(), in.data(), 2, zero.data(), 0, SFFT_FLOAT32, nullptr), SFFT_SUCCESS);
  EXPECT_EQ(fftshift_nd(nullptr, nullptr, 2, zero.data(), 0, SFFT_FLOAT32, nullptr), SFFT_SUCCESS);
  EXPECT_EQ(out, untouched);
  EXPECT_STREQ(sfft_last_error(), "");
}

}  // namespace
