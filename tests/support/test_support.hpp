// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the test executables: device detection, device memory for GPU variants of a test,
// seeded random data, and error norms.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sfft/sfft.h"

namespace sfft_test {

// True when a CUDA device can run kernels (sfft_cuda_device_count() > 0).
bool have_gpu();

// GPU tests call this first: skips the test with a clear reason when there is no device.
#define SFFT_SKIP_WITHOUT_GPU()                                                                      \
  do {                                                                                               \
    if (!::sfft_test::have_gpu()) GTEST_SKIP() << "no CUDA device (CI has none; run on a GPU host)"; \
  } while (0)

// Device allocation for tests (RAII); all functions abort the test (ADD_FAILURE + throw) on CUDA errors.
class DeviceMemory {
 public:
  explicit DeviceMemory(std::size_t bytes);
  DeviceMemory(std::size_t bytes, int device);  // on that CUDA device (the current device is kept)
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  void *get() const { return ptr_; }
  void upload(const void *host, std::size_t bytes);
  void download(void *host, std::size_t bytes) const;
  void fill_bytes(int value, std::size_t bytes);

 private:
  void *ptr_ = nullptr;
};

void device_synchronize();

// Streaming multiprocessors of the current CUDA device (the batched engine's layout choices count them).
int device_multiprocessors();

// CUDA managed allocation (host- and device-accessible), small sizes only.
class ManagedMemory {
 public:
  explicit ManagedMemory(std::size_t bytes);
  ~ManagedMemory();
  ManagedMemory(const ManagedMemory &) = delete;
  ManagedMemory &operator=(const ManagedMemory &) = delete;
  void *get() const { return ptr_; }

 private:
  void *ptr_ = nullptr;
};

// A non-blocking CUDA stream owned by the test, as a void * for sfft_options::stream.
class TestStream {
 public:
  TestStream();
  ~TestStream();
  TestStream(const TestStream &) = delete;
  TestStream &operator=(const TestStream &) = delete;
  void *get() const { return stream_; }
  void synchronize();

 private:
  void *stream_ = nullptr;
};

// A file in the test temporary directory, its name carrying the process id so that concurrent runs (ctest -j,
// two builds or CI jobs on one host) never share it; written on construction, removed on destruction.
class TempFile {
 public:
  TempFile(const std::string &name, const std::string &contents);
  ~TempFile();
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

// Environment variable `name` set to `value` for the object's life, then unset (also when a test fails): the
// library's diagnostic switches (src/common/env.hpp).
class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

 private:
  const char *name_;
};

// The path TempFile would use for `name`, for files a test makes itself (FIFOs) or expects to be absent.
std::string temp_path(const std::string &name);

// Seeded random complex vector, components uniform in [-1, 1).
template <class Real>
std::vector<std::complex<Real>> random_complex(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::complex<Real>> v(n);
  for (auto &z : v) z = {static_cast<Real>(u(rng)), static_cast<Real>(u(rng))};
  return v;
}

// ||a - b||_2 / ||b||_2 (0 when both are zero).
double relative_l2_error(const std::complex<double> *a, const std::complex<double> *b, std::size_t n);

// Forward (FFTW_FORWARD, unnormalised) DFT of complex double data in any rank, via FFTW.
std::vector<std::complex<double>> fftw_dft(const std::vector<std::complex<double>> &x, const std::vector<int> &shape,
                                           int sign = -1);

}  // namespace sfft_test
