// SPDX-License-Identifier: Apache-2.0
// sfft_get_build_info: what a build contains, written within the caller's struct size, and what the
// host provides (no CUDA library or device here unless the machine has one).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "sfft/sfft.h"

namespace {

TEST(BuildInfo, DescribesThisBuild) {
  sfft_build_info info;
  ASSERT_EQ(sfft_get_build_info(&info, sizeof info), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(info.struct_size, sizeof info);
  EXPECT_EQ(info.version, SFFT_VERSION_NUMBER);
  EXPECT_EQ(info.families, static_cast<uint32_t>(SFFT_TEST_FAMILY_BITS));
  EXPECT_EQ(info.cuda_compiled, SFFT_HAVE_CUDA);
  EXPECT_EQ(std::string(info.fft_library).rfind("fftw-3", 0), 0u) << info.fft_library;
  EXPECT_EQ(info.cuda_device_count, sfft_cuda_device_count());
  if (info.cuda_loaded) {
    EXPECT_STREQ(info.cuda_unavailable, "");
    EXPECT_GT(info.cuda_runtime_version, 0);
    EXPECT_GT(info.cufft_version, 0);
  } else {
    EXPECT_NE(std::string(info.cuda_unavailable), "");
    EXPECT_EQ(info.cuda_device_count, 0);
  }
  EXPECT_EQ(std::string(info.cuda_architectures).empty(), !SFFT_HAVE_CUDA) << info.cuda_architectures;
}

TEST(BuildInfo, WritesOnlyTheCallersSize) {
  // A caller from an older release whose struct ended after `families`.
  const std::size_t old_size = offsetof(sfft_build_info, cuda_compiled);
  unsigned char buffer[sizeof(sfft_build_info) + 16];
  std::memset(buffer, 0x5A, sizeof buffer);
  auto *info = reinterpret_cast<sfft_build_info *>(buffer);
  ASSERT_EQ(sfft_get_build_info(info, old_size), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(info->struct_size, old_size);
  EXPECT_EQ(info->version, SFFT_VERSION_NUMBER);
  for (std::size_t i = old_size; i < sizeof buffer; ++i) ASSERT_EQ(buffer[i], 0x5A) << "byte " << i;

  // A newer caller's larger struct: the tail past the library's fields is zeroed, nothing beyond it touched.
  std::memset(buffer, 0x5A, sizeof buffer);
  ASSERT_EQ(sfft_get_build_info(info, sizeof(sfft_build_info) + 8), SFFT_SUCCESS) << sfft_last_error();
  for (std::size_t i = sizeof(sfft_build_info); i < sizeof(sfft_build_info) + 8; ++i) ASSERT_EQ(buffer[i], 0);
  for (std::size_t i = sizeof(sfft_build_info) + 8; i < sizeof buffer; ++i) ASSERT_EQ(buffer[i], 0x5A);
}

TEST(BuildInfo, RefusesNullAndTinySizes) {
  EXPECT_EQ(sfft_get_build_info(nullptr, sizeof(sfft_build_info)), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("info is NULL"), std::string::npos) << sfft_last_error();
  sfft_build_info info;
  EXPECT_EQ(sfft_get_build_info(&info, 8), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("too small"), std::string::npos) << sfft_last_error();
}

TEST(BuildInfo, CudaBackendWithoutDeviceNamesTheReason) {
  sfft_build_info info;
  ASSERT_EQ(sfft_get_build_info(&info, sizeof info), SFFT_SUCCESS);
  if (info.cuda_device_count > 0) GTEST_SKIP() << "a CUDA device is present";
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  float in[4] = {0, 1, 2, 3}, out[4];
  const int64_t shape[1] = {4};
  const sfft_status s = fftshift_nd(out, in, 1, shape, 0u, SFFT_FLOAT32, &opts);
  EXPECT_EQ(s, SFFT_HAVE_CUDA ? SFFT_ERROR_NO_DEVICE : SFFT_ERROR_UNSUPPORTED) << sfft_last_error();
  if (!info.cuda_loaded) EXPECT_NE(std::string(sfft_last_error()).find(info.cuda_unavailable), std::string::npos);
}

}  // namespace
