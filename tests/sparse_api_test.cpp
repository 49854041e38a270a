// SPDX-License-Identifier: Apache-2.0
// Sparse FFT's C API contract: bad create/knob/exec arguments and handles (backend independent), and on the
// CUDA backend device pointers, untouched outputs on failure and the user's stream.

#include "sparse_fixture.hpp"

namespace {

// ---------------------------------------------------------------- bad input (backend independent)

sfft_options cpu_options() {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  return o;
}

void expect_create_fails(uint64_t n, uint64_t k, sfft_dtype dtype, const sfft_sparse_options *knobs,
                         const char *mention) {
  sfft_options o = cpu_options();
  sfft_plan plan = reinterpret_cast<sfft_plan>(0x1);
  EXPECT_EQ(sfft_create_ex(&plan, n, k, dtype, &o, knobs), SFFT_ERROR_INVALID_ARGUMENT) << "n=" << n << " k=" << k;
  EXPECT_EQ(plan, reinterpret_cast<sfft_plan>(0x1)) << "output handle written on failure";
  EXPECT_NE(std::string(sfft_last_error()).find(mention), std::string::npos) << sfft_last_error();
}

TEST(sparse, BadCreateArguments) {
  // Other lengths than powers of two need an even divisor of n in [4k, n/2] (AUTO's ROBUST stage) for the
  // bucket count B: 2018 = 2 x 1009 has only 2 and 2018.
  expect_create_fails(2018, 8, SFFT_COMPLEX128, nullptr, "no even divisor in [bucket_factor * k = 32, n/2 = 1009]");
  expect_create_fails(1001, 4, SFFT_COMPLEX128, nullptr, "n = 1001 is odd");
  expect_create_fails(3 * (uint64_t{1} << 32), 4, SFFT_COMPLEX128, nullptr, "below 2^32");
  expect_create_fails(0, 4, SFFT_COMPLEX128, nullptr, "range");
  expect_create_fails(8, 1, SFFT_COMPLEX128, nullptr, "range");
  expect_create_fails(uint64_t{1} << 41, 4, SFFT_COMPLEX128, nullptr, "range");
  expect_create_fails(~uint64_t{0}, 4, SFFT_COMPLEX128, nullptr, "range");
  expect_create_fails(1024, 0, SFFT_COMPLEX128, nullptr, "k = 0");
  expect_create_fails(1024, 257, SFFT_COMPLEX128, nullptr, "n/4");
  expect_create_fails(1024, 2048, SFFT_COMPLEX128, nullptr, "n/4");
  expect_create_fails(1024, 4, SFFT_FLOAT64, nullptr, "dtype");
  expect_create_fails(1024, 4, static_cast<sfft_dtype>(99), nullptr, "dtype");
  sfft_options o = cpu_options();
  EXPECT_EQ(sfft_create(nullptr, 1024, 4, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("plan"), std::string::npos);
  o.struct_size = 1;
  sfft_plan plan = nullptr;
  EXPECT_EQ(sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT);
}

// The header's example "2 x 1009 with k = 1 works" under every variant's defaults: ROBUST's default buckets
// (4k) have no even divisor of 2018 in [4, 1009], so AUTO (whose fallback is ROBUST) and ROBUST used to be
// refused; they now take EXACT's default (B = 2) and find the coefficient.
TEST(sparse, TwoTimesAPrimeWithOneCoefficient) {
  const uint64_t n = 2018;
  std::vector<cd> x(n);
  for (uint64_t t = 0; t < n; ++t) x[t] = std::polar(3.0, 2 * M_PI * 737.0 * static_cast<double>(t) / n);
  const sfft_sparse_options robust = variant_knobs(SFFT_SPARSE_ROBUST), exact = variant_knobs(SFFT_SPARSE_EXACT);
  const sfft_sparse_options *variants[] = {nullptr, &robust, &exact};  // nullptr: AUTO
  for (const sfft_sparse_options *knobs : variants) {
    SCOPED_TRACE(testing::Message() << "variant " << (knobs ? knobs->variant : 0));
    Runner runner(Case{Where::Cpu, SFFT_COMPLEX128}, n, 1, 3, knobs);
    Result r = runner.run(x);
    ASSERT_EQ(r.status, SFFT_SUCCESS) << sfft_last_error();
    ASSERT_EQ(r.freqs.size(), 1u);
    EXPECT_EQ(r.freqs[0], 737u);
    EXPECT_NEAR(std::abs(r.values[0] - cd(3.0 * n, 0)), 0.0, 1e-6);
  }
}

TEST(sparse, BadKnobs) {
  sfft_sparse_options k;
  sfft_sparse_options_init(&k);
  k.variant = static_cast<sfft_sparse_variant>(7);
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "variant");
  sfft_sparse_options_init(&k);
  k.filter_tolerance = 0.5;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "filter_tolerance");
  sfft_sparse_options_init(&k);
  k.filter_tolerance = std::numeric_limits<double>::quiet_NaN();
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "filter_tolerance");
  sfft_sparse_options_init(&k);
  k.bucket_factor = 0.5;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "bucket_factor");
  sfft_sparse_options_init(&k);
  k.location_loops = 65;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "location_loops");
  sfft_sparse_options_init(&k);
  k.variant = SFFT_SPARSE_EXACT;
  k.estimation_loops = 3;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "estimation_loops");
  sfft_sparse_options_init(&k);
  k.bits_per_stage = 31;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "bits_per_stage");
  sfft_sparse_options_init(&k);
  k.location_loops = 3;
  k.min_votes = 4;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "min_votes");
  sfft_sparse_options_init(&k);
  k.struct_size = 2;
  expect_create_fails(1024, 4, SFFT_COMPLEX64, &k, "struct_size");
}

TEST(sparse, BadCombKnobs) {
  struct Bad {
    sfft_sparse_variant variant;
    uint64_t n;
    int comb_loops;
    uint64_t comb_width, comb_keep;
    const char *mention;
  };
  const Bad cases[] = {
      {SFFT_SPARSE_ROBUST, 1024, -1, 0, 0, "comb_loops = -1 is outside [0, 16]"},
      {SFFT_SPARSE_ROBUST, 1024, 17, 0, 0, "comb_loops = 17 is outside [0, 16]"},
      {SFFT_SPARSE_EXACT, 1024, 1, 0, 0, "comb_loops must be 0 for SFFT_SPARSE_EXACT"},
      {SFFT_SPARSE_ROBUST, 1024, 0, 64, 0, "while comb_loops = 0"},
      {SFFT_SPARSE_ROBUST, 1024, 0, 0, 5, "while comb_loops = 0"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 48, 0, "comb_width = 48 is not a power of two"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 1, 0, "comb_width = 1 is outside [2, min(1024 (the largest power of two"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 2048, 0, "comb_width = 2048 is outside [2, min(1024"},
      {SFFT_SPARSE_ROBUST, 3 * 1024, 1, 2048, 0, "comb_width = 2048 is outside [2, min(1024"},
      {SFFT_SPARSE_ROBUST, uint64_t{1} << 28, 1, uint64_t{1} << 27, 0, "2^26)]"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 64, 65, "comb_keep = 65 is outside [1, comb_width = 64]"},
      {SFFT_SPARSE_ROBUST, 1024, 1, 0, 1000, "comb_keep = 1000 is outside [1, comb_width = 64]"},  // default W
  };
  for (const Bad &b : cases) {
    sfft_sparse_options k;
    sfft_sparse_options_init(&k);
    k.variant = b.variant;
    k.comb_loops = b.comb_loops;
    k.comb_width = b.comb_width;
    k.comb_keep = b.comb_keep;
    SCOPED_TRACE(b.mention);
    expect_create_fails(b.n, 4, SFFT_COMPLEX128, &k, b.mention);
  }
  // A caller compiled before the comb fields (struct_size ends at min_votes) gets the comb off.
  sfft_sparse_options k;
  sfft_sparse_options_init(&k);
  k.comb_loops = -5;  // past the caller's struct: never read
  k.struct_size = offsetof(sfft_sparse_options, min_votes) + sizeof k.min_votes;
  sfft_options o = cpu_options();
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create_ex(&plan, 1024, 4, SFFT_COMPLEX128, &o, &k), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

TEST(sparse, BadExecArgumentsAndHandles) {
  sfft_options o = cpu_options();
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  std::vector<std::complex<float>> x(1024, {1, 0});
  std::vector<uint64_t> freqs(4);
  std::vector<std::complex<float>> values(4);
  uint64_t count = 4;
  EXPECT_EQ(sfft_exec(plan, nullptr, freqs.data(), values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("x is NULL"), std::string::npos);
  EXPECT_EQ(sfft_exec(plan, x.data(), freqs.data(), values.data(), nullptr), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sfft_exec(plan, x.data(), nullptr, values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("freqs"), std::string::npos);
  EXPECT_EQ(sfft_exec(plan, x.data(), freqs.data(), nullptr, &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("values"), std::string::npos);
  EXPECT_EQ(sfft_exec(nullptr, x.data(), freqs.data(), values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  // A constant signal is one coefficient at f = 0 with value n.
  EXPECT_EQ(sfft_exec(plan, x.data(), freqs.data(), values.data(), &count), SFFT_SUCCESS) << sfft_last_error();
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(freqs[0], 0u);
  EXPECT_NEAR(values[0].real(), 1024.0f, 1e-2f);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  count = 4;
  EXPECT_EQ(sfft_exec(plan, x.data(), freqs.data(), values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("not a live handle"), std::string::npos);
  EXPECT_EQ(sfft_destroy(plan), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sfft_destroy(nullptr), SFFT_SUCCESS);
}

TEST(sparse, CudaBackendWithoutDeviceIsNoDevice) {
  if (sfft_test::have_gpu()) GTEST_SKIP() << "a GPU is present; this checks the no-device path";
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  sfft_plan plan = nullptr;
  sfft_status s = sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o);
  EXPECT_EQ(s, SFFT_HAVE_CUDA ? SFFT_ERROR_NO_DEVICE : SFFT_ERROR_UNSUPPORTED) << sfft_last_error();
  EXPECT_EQ(plan, nullptr);
  // AUTO without a device falls back to the CPU.
  o.backend = SFFT_BACKEND_AUTO;
  ASSERT_EQ(sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

#if SFFT_HAVE_CUDA
TEST(sparse_cuda, CpuPlanRejectsDevicePointer) {
  SFFT_SKIP_WITHOUT_GPU();
  sfft_options o = cpu_options();
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o), SFFT_SUCCESS);
  sfft_test::DeviceMemory dx(1024 * 8);
  std::vector<uint64_t> freqs(4);
  std::vector<std::complex<float>> values(4);
  uint64_t count = 4;
  EXPECT_EQ(sfft_exec(plan, dx.get(), freqs.data(), values.data(), &count), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("CPU plan"), std::string::npos);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// Device outputs: a too-small capacity or a NaN input leaves them untouched; a later exec fills them.
TEST(sparse_cuda, DeviceOutputsUntouchedOnFailure) {
  SFFT_SKIP_WITHOUT_GPU();
  const uint64_t n = 1 << 12, k = 8;
  Signal s = planted(n, k, 4, 10.0, INFINITY);
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, n, k, SFFT_COMPLEX128, &o), SFFT_SUCCESS) << sfft_last_error();
  std::vector<uint64_t> sentinel_f(k, 999999), freqs(k);
  std::vector<cd> sentinel_v(k, cd(-7, -7)), values(k);
  std::vector<cd> nan(n, cd(std::numeric_limits<double>::quiet_NaN(), 0));
  sfft_test::DeviceMemory dx(n * 16), dnan(n * 16), df(k * 8), dv(k * 16);
  dx.upload(s.x.data(), n * 16);
  dnan.upload(nan.data(), n * 16);
  df.upload(sentinel_f.data(), k * 8);
  dv.upload(sentinel_v.data(), k * 16);
  uint64_t count = 3;
  EXPECT_EQ(sfft_exec(plan, dx.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(count, k);
  count = k;
  EXPECT_EQ(sfft_exec(plan, dnan.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count),
            SFFT_ERROR_INVALID_ARGUMENT);
  df.download(freqs.data(), k * 8);
  dv.download(values.data(), k * 16);
  EXPECT_EQ(freqs, sentinel_f);
  EXPECT_EQ(values, sentinel_v);
  count = k;
  ASSERT_EQ(sfft_exec(plan, dx.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count), SFFT_SUCCESS)
      << sfft_last_error();
  EXPECT_EQ(count, k);
  df.download(freqs.data(), k * 8);
  expect_same_set(freqs, s.support);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// The plan's stream: a non-default stream gives the same answer as the default one.
TEST(sparse_cuda, UserStream) {
  SFFT_SKIP_WITHOUT_GPU();
  const uint64_t n = 1 << 16, k = 20;
  Signal s = planted(n, k, 8, 10.0, INFINITY);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  o.stream = stream;
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, n, k, SFFT_COMPLEX128, &o), SFFT_SUCCESS) << sfft_last_error();
  sfft_test::DeviceMemory dx(n * 16), df(k * 8), dv(k * 16);
  dx.upload(s.x.data(), n * 16);
  uint64_t count = k;
  ASSERT_EQ(sfft_exec(plan, dx.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count), SFFT_SUCCESS)
      << sfft_last_error();
  std::vector<uint64_t> freqs(count);
  df.download(freqs.data(), count * 8);
  expect_same_set(freqs, s.support);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  cudaStreamDestroy(stream);
}
#endif

}  // namespace
