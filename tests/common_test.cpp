// SPDX-License-Identifier: Apache-2.0
// The common part of the C API: status strings, options, version, last-error semantics, plan handles.
#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

TEST(Common, EveryStatusHasItsOwnName) {
  const sfft_status all[] = {
      SFFT_SUCCESS,         SFFT_ERROR_INVALID_ARGUMENT, SFFT_ERROR_UNSUPPORTED, SFFT_ERROR_OUT_OF_MEMORY,
      SFFT_ERROR_NO_DEVICE, SFFT_ERROR_DEVICE,           SFFT_ERROR_INTERNAL};
  const char *names[] = {
      "SFFT_SUCCESS",         "SFFT_ERROR_INVALID_ARGUMENT", "SFFT_ERROR_UNSUPPORTED", "SFFT_ERROR_OUT_OF_MEMORY",
      "SFFT_ERROR_NO_DEVICE", "SFFT_ERROR_DEVICE",           "SFFT_ERROR_INTERNAL"};
  for (int i = 0; i < 7; ++i) {
    std::string s = sfft_status_string(all[i]);
    EXPECT_EQ(s.rfind(names[i], 0), 0u) << s;
    EXPECT_EQ(s.rfind(std::string(names[i]) + "_", 0), std::string::npos) << "prefix clash: " << s;
  }
  EXPECT_NE(std::string(sfft_status_string(static_cast<sfft_status>(1234))).find("unknown"), std::string::npos);
}

TEST(Common, OptionsDefaults) {
  sfft_options o;
  std::memset(&o, 0xAB, sizeof o);
  sfft_options_init(&o);
  EXPECT_EQ(o.struct_size, sizeof o);
  EXPECT_EQ(o.backend, SFFT_BACKEND_AUTO);
  EXPECT_EQ(o.device, 0);
  EXPECT_EQ(o.stream, nullptr);
  EXPECT_EQ(o.threads, 0);
  EXPECT_EQ(o.seed, 0u);
  sfft_options_init(nullptr);  // must not crash
}

TEST(Common, Version) {
  EXPECT_EQ(sfft_version(), SFFT_VERSION_NUMBER);
  std::string v = std::to_string(SFFT_VERSION_MAJOR) + "." + std::to_string(SFFT_VERSION_MINOR) + "." +
                  std::to_string(SFFT_VERSION_PATCH);
  EXPECT_EQ(v, sfft_version_string());
}

TEST(Common, DeviceCountIsNonNegative) { EXPECT_GE(sfft_cuda_device_count(), 0); }

// An older caller's shorter struct (only struct_size + backend) is accepted; fields it lacks default.
TEST(Common, OlderShorterOptionsStruct) {
  struct OldOptions {
    size_t struct_size;
    sfft_backend backend;
  } old = {sizeof(OldOptions), SFFT_BACKEND_CPU};
  float in[4] = {1, 2, 3, 4}, out[4] = {};
  int64_t shape[1] = {4};
  ASSERT_EQ(fftshift_nd(out, in, 1, shape, 0, SFFT_FLOAT32, reinterpret_cast<const sfft_options *>(&old)), SFFT_SUCCESS)
      << sfft_last_error();
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[3], 2);
}

// The last error is per thread and is cleared by the next successful call of that thread.
TEST(Common, LastErrorIsThreadLocal) {
  int64_t shape[1] = {4};
  float buf[4] = {};
  ASSERT_EQ(fftshift_nd(buf, nullptr, 1, shape, 0, SFFT_FLOAT32, nullptr), SFFT_ERROR_INVALID_ARGUMENT);
  std::string mine = sfft_last_error();
  ASSERT_NE(mine.find("fftshift_nd"), std::string::npos) << mine;
  std::string other = "unset";
  std::thread t([&] {
    other = sfft_last_error();
    float b[4] = {};
    (void)ifftshift_nd(b, b, 0, shape, 0, SFFT_FLOAT32, nullptr);
  });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_EQ(mine, sfft_last_error()) << "another thread's failure changed this thread's last error";
  ASSERT_EQ(fftshift_nd(buf, buf, 1, shape, 0, SFFT_FLOAT32, nullptr), SFFT_SUCCESS);
  EXPECT_STREQ(sfft_last_error(), "");
}

// Issue 26 #8: a destroyed handle stays dead for every family, also when the allocator hands the destroyed
// plan's memory to the next plan of the same size (which the old address-keyed registry then took the dead
// handle for); and a handle of one family is not a plan of another.
template <class Plan, class Create, class Use, class Destroy>
void expect_dead_handles_stay_dead(Create create, Use use, Destroy destroy) {
  std::vector<Plan> dead;
  for (int i = 0; i < 20; ++i) {
    Plan p = nullptr;
    ASSERT_EQ(create(&p), SFFT_SUCCESS) << sfft_last_error();
    for (Plan d : dead) {
      EXPECT_NE(d, p) << "a destroyed handle was handed out again";
      EXPECT_EQ(use(d), SFFT_ERROR_INVALID_ARGUMENT) << "a destroyed handle reached plan " << i;
    }
    EXPECT_EQ(use(p), SFFT_SUCCESS) << sfft_last_error();
    ASSERT_EQ(destroy(p), SFFT_SUCCESS);
    EXPECT_EQ(destroy(p), SFFT_ERROR_INVALID_ARGUMENT);
    dead.push_back(p);
  }
}

sfft_options cpu_options() {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  o.threads = 1;
  return o;
}

#if SFFT_TEST_FAMILY_sparse
TEST(Handles, DestroyedSparsePlansStayDead) {
  const sfft_options o = cpu_options();
  std::vector<std::complex<double>> x(64, {1.0, 0.0});
  expect_dead_handles_stay_dead<sfft_plan>([&](sfft_plan *p) { return sfft_create(p, 64, 1, SFFT_COMPLEX128, &o); },
                                           [&](sfft_plan p) {
                                             uint64_t f[1], count = 1;
                                             std::complex<double> v[1];
                                             return sfft_exec(p, x.data(), f, v, &count);
                                           },
                                           sfft_destroy);
}
#endif

#if SFFT_TEST_FAMILY_spfft2d
TEST(Handles, DestroyedSpfft2dPlansStayDead) {
  const sfft_options o = cpu_options();
  const int64_t r[] = {0}, c[] = {1};
  expect_dead_handles_stay_dead<spfft2d_plan>(
      [&](spfft2d_plan *p) { return spfft2d_create(p, 2, 2, 1, r, c, nullptr, SFFT_COMPLEX64, &o); },
      [](spfft2d_plan p) { return spfft2d_get_info(p, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr); },
      spfft2d_destroy);
}
#endif

#if SFFT_TEST_FAMILY_nufft3
TEST(Handles, DestroyedNufft3PlansStayDead) {
  const sfft_options o = cpu_options();
  expect_dead_handles_stay_dead<nufft3_plan>(
      [&](nufft3_plan *p) { return nufft3_create(p, 1, SFFT_COMPLEX128, -1, 1e-6, &o); },
      [](nufft3_plan p) { return nufft3_set_options(p, nullptr); }, nufft3_destroy);
}
#endif

#if SFFT_TEST_FAMILY_sparse && SFFT_TEST_FAMILY_nufft3
TEST(Handles, AHandleOfOneFamilyIsNotAPlanOfAnother) {
  const sfft_options o = cpu_options();
  nufft3_plan n = nullptr;
  ASSERT_EQ(nufft3_create(&n, 1, SFFT_COMPLEX128, -1, 1e-6, &o), SFFT_SUCCESS);
  EXPECT_EQ(sfft_destroy(reinterpret_cast<sfft_plan>(n)), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nufft3_destroy(n), SFFT_SUCCESS);
}
#endif

// Device memory of another GPU than the plan's is refused with the array's name (its kernels would fault, and
// a fault poisons the process's CUDA context), and the plan stays usable.
#define SFFT_SKIP_WITHOUT_TWO_GPUS()                                                                      \
  do {                                                                                                    \
    SFFT_SKIP_WITHOUT_GPU();                                                                              \
    if (sfft_cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device here; this test needs two or more"; \
  } while (0)

sfft_options cuda_options_on_device_0() {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  o.device = 0;
  return o;
}

#if SFFT_TEST_FAMILY_sparse
TEST(OtherGpu, SparseExecRefusesSamplesOfAnotherGpu) {
  SFFT_SKIP_WITHOUT_TWO_GPUS();
  const sfft_options o = cuda_options_on_device_0();
  const std::size_t n = 1024;
  std::vector<std::complex<double>> x(n, {0.0, 0.0});
  for (std::size_t i = 0; i < n; ++i) x[i] = std::polar(1.0 / n, 2 * M_PI * 37.0 * i / n);  // one tone at f = 37
  sfft_test::DeviceMemory on_plan(n * sizeof(x[0]), 0), elsewhere(n * sizeof(x[0]), 1);
  on_plan.upload(x.data(), n * sizeof(x[0]));
  elsewhere.upload(x.data(), n * sizeof(x[0]));
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, n, 1, SFFT_COMPLEX128, &o), SFFT_SUCCESS) << sfft_last_error();
  uint64_t f[1], count = 1;
  std::complex<double> v[1];
  EXPECT_EQ(sfft_exec(plan, elsewhere.get(), f, v, &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("x is memory of CUDA device 1 but the plan runs on device 0"),
            std::string::npos)
      << sfft_last_error();
  count = 1;
  EXPECT_EQ(sfft_exec(plan, on_plan.get(), f, v, &count), SFFT_SUCCESS) << sfft_last_error();
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(f[0], 37u);
  EXPECT_NEAR(std::abs(v[0] - std::complex<double>(1.0, 0.0)), 0.0, 1e-9);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}
#endif

TEST(OtherGpu, ShiftRefusesArraysOfAnotherGpuThanOptsDevice) {
  SFFT_SKIP_WITHOUT_TWO_GPUS();
  const int64_t shape[1] = {1001};
  const std::size_t bytes = 1001 * sizeof(float);
  std::vector<float> a(1001);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  sfft_test::DeviceMemory in(bytes, 1), out(bytes, 1);
  in.upload(a.data(), bytes);
  sfft_options o;
  sfft_options_init(&o);  // AUTO on device 0: the arrays of device 1 are refused
  EXPECT_EQ(fftshift_nd(out.get(), in.get(), 1, shape, 0, SFFT_FLOAT32, &o), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("is memory of CUDA device 1 but the plan runs on device 0"),
            std::string::npos)
      << sfft_last_error();
  o.device = 1;
  ASSERT_EQ(fftshift_nd(out.get(), in.get(), 1, shape, 0, SFFT_FLOAT32, &o), SFFT_SUCCESS) << sfft_last_error();
  std::vector<float> b(1001);
  out.download(b.data(), bytes);
  for (std::size_t j = 0; j < b.size(); ++j)  // numpy.fft.fftshift: out[j] = in[(j - 500) mod 1001]
    ASSERT_EQ(b[j], static_cast<float>((j + 501) % 1001)) << "j = " << j;
}

#if SFFT_TEST_FAMILY_nufft3
TEST(OtherGpu, Nufft3ExecRefusesArraysOfAnotherGpu) {
  SFFT_SKIP_WITHOUT_TWO_GPUS();
  const sfft_options o = cuda_options_on_device_0();
  nufft3_plan plan = nullptr;
  ASSERT_EQ(nufft3_create(&plan, 1, SFFT_COMPLEX128, -1, 1e-9, &o), SFFT_SUCCESS) << sfft_last_error();
  const std::vector<double> x = {-1.0, 0.5, 2.0}, s = {0.0, 1.0};
  ASSERT_EQ(nufft3_setpts(plan, 3, x.data(), nullptr, nullptr, 2, s.data(), nullptr, nullptr), SFFT_SUCCESS)
      << sfft_last_error();
  const std::vector<std::complex<double>> c = {{1, 0}, {0, 1}, {2, 0}};
  sfft_test::DeviceMemory c_here(3 * sizeof(c[0]), 0), c_there(3 * sizeof(c[0]), 1), f_here(2 * sizeof(c[0]), 0);
  c_here.upload(c.data(), 3 * sizeof(c[0]));
  c_there.upload(c.data(), 3 * sizeof(c[0]));
  EXPECT_EQ(nufft3_exec(plan, c_there.get(), f_here.get()), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("f is memory of CUDA device 1 but the plan runs on device 0"),
            std::string::npos)
      << sfft_last_error();
  ASSERT_EQ(nufft3_exec(plan, c_here.get(), f_here.get()), SFFT_SUCCESS) << sfft_last_error();
  std::vector<std::complex<double>> F(2);
  f_here.download(F.data(), 2 * sizeof(F[0]));
  for (std::size_t k = 0; k < s.size(); ++k) {  // the direct sum F_k = sum_j c_j e^{-i s_k x_j}
    std::complex<double> direct = 0;
    for (std::size_t j = 0; j < x.size(); ++j) direct += c[j] * std::polar(1.0, -s[k] * x[j]);
    EXPECT_LT(std::abs(F[k] - direct), 1e-7 * std::abs(direct) + 1e-9) << "k = " << k;
  }
  EXPECT_EQ(nufft3_destroy(plan), SFFT_SUCCESS);
}
#endif

#if SFFT_TEST_FAMILY_spfft2d
TEST(OtherGpu, Spfft2dExecRefusesOutputOfAnotherGpu) {
  SFFT_SKIP_WITHOUT_TWO_GPUS();
  const sfft_options o = cuda_options_on_device_0();
  const int64_t r[] = {0}, cidx[] = {0};
  spfft2d_plan plan = nullptr;
  ASSERT_EQ(spfft2d_create(&plan, 4, 4, 1, r, cidx, nullptr, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  const std::size_t bytes = 4 * 3 * 2 * sizeof(float);  // rows x (cols/2 + 1) complex64
  sfft_test::DeviceMemory here(bytes, 0), there(bytes, 1);
  EXPECT_EQ(spfft2d_exec(plan, there.get()), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("out is memory of CUDA device 1 but the plan runs on device 0"),
            std::string::npos)
      << sfft_last_error();
  ASSERT_EQ(spfft2d_exec(plan, here.get()), SFFT_SUCCESS) << sfft_last_error();
  std::vector<std::complex<float>> out(12);
  here.download(out.data(), bytes);
  for (const std::complex<float> &v : out) EXPECT_EQ(v, std::complex<float>(1.0f, 0.0f));  // FFT of a delta at (0, 0)
  EXPECT_EQ(spfft2d_destroy(plan), SFFT_SUCCESS);
}
#endif
