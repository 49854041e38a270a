// SPDX-License-Identifier: Apache-2.0
#include "test_support.hpp"

#include <fftw3.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sfft_test {

bool have_gpu() { return sfft_cuda_device_count() > 0; }

std::string temp_path(const std::string &name) {
  return testing::TempDir() + "sfft-" + std::to_string(getpid()) + "-" + name;
}

TempFile::TempFile(const std::string &name, const std::string &contents) : path_(temp_path(name)) {
  std::ofstream out(path_, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) ADD_FAILURE() << "cannot write " << path_;
}

TempFile::~TempFile() { std::remove(path_.c_str()); }

namespace {
#if SFFT_HAVE_CUDA
void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    ADD_FAILURE() << what << ": " << cudaGetErrorString(e);
    throw std::runtime_error(what);
  }
}
#endif
[[noreturn]] void no_cuda() {
  ADD_FAILURE() << "test support built without CUDA";
  throw std::runtime_error("no CUDA");
}
}  // namespace

#if SFFT_HAVE_CUDA
DeviceMemory::DeviceMemory(std::size_t bytes) { check(cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes), "cudaMalloc"); }
DeviceMemory::DeviceMemory(std::size_t bytes, int device) {
  int current = 0;
  check(cudaGetDevice(&current), "cudaGetDevice");
  check(cudaSetDevice(device), "cudaSetDevice");
  const cudaError_t status = cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes);
  check(cudaSetDevice(current), "cudaSetDevice");
  check(status, "cudaMalloc");
}
DeviceMemory::~DeviceMemory() { cudaFree(ptr_); }
void DeviceMemory::upload(const void *host, std::size_t bytes) {
  check(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  // From pageable memory cudaMemcpy may return before the DMA has landed, ordered only with the legacy
  // stream; tests that then run sfft on their own non-blocking streams need the data there now.
  check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize(legacy)");
}
void DeviceMemory::download(void *host, std::size_t bytes) const {
  check(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}
void DeviceMemory::fill_bytes(int value, std::size_t bytes) { check(cudaMemset(ptr_, value, bytes), "cudaMemset"); }
void device_synchronize() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
int device_multiprocessors() {
  int device = 0, count = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return count;
}
ManagedMemory::ManagedMemory(std::size_t bytes) {
  check(cudaMallocManaged(&ptr_, bytes == 0 ? 1 : bytes), "cudaMallocManaged");
}
ManagedMemory::~ManagedMemory() { cudaFree(ptr_); }
TestStream::TestStream() {
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  stream_ = s;
}
TestStream::~TestStream() { cudaStreamDestroy(static_cast<cudaStream_t>(stream_)); }
void TestStream::synchronize() {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
}
#else
DeviceMemory::DeviceMemory(std::size_t) { no_cuda(); }
DeviceMemory::DeviceMemory(std::size_t, int) { no_cuda(); }
DeviceMemory::~DeviceMemory() = default;
void DeviceMemory::upload(const void *, std::size_t) { no_cuda(); }
void DeviceMemory::download(void *, std::size_t) const { no_cuda(); }
void DeviceMemory::fill_bytes(int, std::size_t) { no_cuda(); }
void device_synchronize() {}
int device_multiprocessors() { no_cuda(); }
ManagedMemory::ManagedMemory(std::size_t) { no_cuda(); }
ManagedMemory::~ManagedMemory() = default;
TestStream::TestStream() { no_cuda(); }
TestStream::~TestStream() = default;
void TestStream::synchronize() { no_cuda(); }
#endif

double relative_l2_error(const std::complex<double> *a, const std::complex<double> *b, std::size_t n) {
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < n; ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  if (den == 0) return num == 0 ? 0.0 : INFINITY;
  return static_cast<double>(std::sqrt(num / den));
}

std::vector<std::complex<double>> fftw_dft(const std::vector<std::complex<double>> &x, const std::vector<int> &shape,
                                           int sign) {
  std::vector<std::complex<double>> in(x), out(x.size());
  fftw_plan p = fftw_plan_dft(static_cast<int>(shape.size()), shape.data(), reinterpret_cast<fftw_complex *>(in.data()),
                              reinterpret_cast<fftw_complex *>(out.data()), sign, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

}  // namespace sfft_test
