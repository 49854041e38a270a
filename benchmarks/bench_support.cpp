// SPDX-License-Identifier: Apache-2.0
#include "bench_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace bench {

std::size_t host_peak_rss() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

std::string device_name() {
#if SFFT_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) return p.name;
  }
  (void)cudaGetLastError();
#endif
  return "no CUDA device";
}

std::size_t device_used_bytes() {
#if SFFT_HAVE_CUDA
  std::size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) return total_b - free_b;
  (void)cudaGetLastError();
#endif
  return 0;
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

#if SFFT_HAVE_CUDA
void require_cuda(cudaError_t status, const char *call) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "%s failed: %s\n", call, cudaGetErrorString(status));
  std::exit(1);
}
#endif

}  // namespace bench
