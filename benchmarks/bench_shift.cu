// SPDX-License-Identifier: Apache-2.0
// GPU fftshift benchmark: for each shape x dtype x (out of place, in place), the median time of
// fftshift_nd and of a device-to-device copy of the same bytes, timed alternately with CUDA events in this run.
// Each is timed twice: on an idle GPU (the call's host work before its first kernel counts: what one call
// costs end to end) and queued behind a busy kernel (the host work hidden: the device time the call adds to a
// stream of work). Bandwidth counts bytes read + written (2 x array size); the ratio and the targets use the
// idle times. Also spot-checks 4096 random output elements against NumPy's rule and reports the peak device
// memory the call added. Ends with the minimum ratio in place and out of place, idle and queued.
//   bench_shift [--repeat R] [--quick] [--mode outplace|inplace] [--shapes NAME,NAME...]
// --mode: one mode only; --shapes: only the shapes whose names contain one of the comma-separated parts.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "sfft/sfft.h"

namespace {

struct Case {
  const char *name;
  std::vector<int64_t> shape;
  uint32_t mask;
};

__global__ void fill_kernel(uint32_t *p, std::size_t n, uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    p[i] = x ^ (x >> 13);
  }
}

// Holds the GPU for about `ns` nanoseconds, so that the calls queued behind it are enqueued before it ends.
__global__ void busy_kernel(long long ns) {
  long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

struct Times {
  double a_ms, b_ms;                // on an idle GPU
  double a_queued_ms, b_queued_ms;  // queued behind busy_kernel
};

// Medians (ms) of fn_a and fn_b timed alternately, after two warm-up calls of each: both see the same clocks and
// the same state of the memory system.
template <class FnA, class FnB>
Times interleaved_median_ms(FnA &&fn_a, FnB &&fn_b, int repeat, cudaStream_t s) {
  constexpr long long kBusyNs = 200000;  // longer than any call's host work before its first kernel
  cudaEvent_t a, b;
  BENCH_CUDA(cudaEventCreate(&a));
  BENCH_CUDA(cudaEventCreate(&b));
  const auto time = [&](auto &&fn, bool queued) {
    if (queued) busy_kernel<<<1, 1, 0, s>>>(kBusyNs);
    BENCH_CUDA(cudaEventRecord(a, s));
    fn();
    BENCH_CUDA(cudaEventRecord(b, s));
    BENCH_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    return static_cast<double>(ms);
  };
  for (int i = 0; i < 2; ++i) {
    fn_a();
    fn_b();
  }
  std::vector<double> ta, tb, qa, qb;
  for (int i = 0; i < repeat; ++i) {
    ta.push_back(time(fn_a, false));
    tb.push_back(time(fn_b, false));
    qa.push_back(time(fn_a, true));
    qb.push_back(time(fn_b, true));
  }
  BENCH_CUDA(cudaEventDestroy(a));
  BENCH_CUDA(cudaEventDestroy(b));
  return {bench::median(ta), bench::median(tb), bench::median(qa), bench::median(qb)};
}

// Spot check: out at random flat positions equals in at the NumPy-rule source (in is the pre-shift copy).
std::size_t spot_check(const std::vector<unsigned char> &in_sample_src, const void *d_in_copy, const void *d_out,
                       const Case &c, std::size_t elem) {
  (void)in_sample_src;
  std::size_t n = 1;
  for (auto e : c.shape) n *= static_cast<std::size_t>(e);
  std::mt19937_64 rng(7);
  std::size_t wrong = 0;
  std::vector<unsigned char> a(elem), b(elem);
  for (int k = 0; k < 4096; ++k) {
    std::size_t flat = rng() % n, rem = flat, src = 0, stride = 1;
    for (int d = static_cast<int>(c.shape.size()) - 1; d >= 0; --d) {
      auto e = static_cast<std::size_t>(c.shape[d]);
      std::size_t j = rem % e;
      rem /= e;
      bool shifted = c.mask == 0 || ((c.mask >> d) & 1u);
      std::size_t s = shifted ? e / 2 : 0;
      src += ((j + e - s) % e) * stride;
      stride *= e;
    }
    BENCH_CUDA(
        cudaMemcpy(a.data(), static_cast<const unsigned char *>(d_out) + flat * elem, elem, cudaMemcpyDeviceToHost));
    BENCH_CUDA(
        cudaMemcpy(b.data(), static_cast<const unsigned char *>(d_in_copy) + src * elem, elem, cudaMemcpyDeviceToHost));
    wrong += std::memcmp(a.data(), b.data(), elem) != 0;
  }
  return wrong;
}

}  // namespace

int main(int argc, char **argv) {
  int repeat = 15;
  bool quick = false;
  std::string mode = "both", shape_filter;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--mode") && i + 1 < argc)
      mode = argv[++i];
    else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc)
      shape_filter = argv[++i];
  }
  if (mode != "both" && mode != "outplace" && mode != "inplace") {
    std::fprintf(stderr, "bench_shift: --mode is outplace or inplace\n");
    return 2;
  }
  if (sfft_cuda_device_count() == 0) {
    std::printf("bench_shift: no CUDA device; nothing to measure\n");
    return 0;
  }
  // Even, odd and mixed extents, 1-D to 5-D, primes, very long axes, many short or long odd rows, 3-component
  // fields, a short odd first axis, extents of 1 and axis subsets; every shape holds at least 64 MiB in every
  // dtype.
  std::vector<Case> cases = {
      {"1-D 2^26", {INT64_C(1) << 26}, 0},
      {"1-D 2^26+1", {(INT64_C(1) << 26) + 1}, 0},
      {"1-D 1e8+1", {100000001}, 0},
      {"2-D 8192^2", {8192, 8192}, 0},
      {"2-D 4096^2", {4096, 4096}, 0},
      {"2-D 8191^2", {8191, 8191}, 0},
      {"2-D 8192x8191", {8192, 8191}, 0},
      {"2-D 8191x8192", {8191, 8192}, 0},
      {"2-D 4097x8193", {4097, 8193}, 0},
      {"2-D 3x(2^25+1)", {3, (INT64_C(1) << 25) + 1}, 0},
      {"2-D 7x(2^23+1)", {7, (INT64_C(1) << 23) + 1}, 0},
      {"2-D (2^24+1)x5", {(INT64_C(1) << 24) + 1, 5}, 0},
      {"2-D 16384x1025", {16384, 1025}, 0},
      {"2-D 65536x257", {65536, 257}, 0},
      {"2-D 4096x16385", {4096, 16385}, 0},
      {"3-D 512^3", {512, 512, 512}, 0},
      {"3-D 256^3", {256, 256, 256}, 0},
      {"4-D 64^4", {64, 64, 64, 64}, 0},
      {"3-D 511^3", {511, 511, 511}, 0},
      {"3-D 510x511x512", {510, 511, 512}, 0},
      {"3-D 255x257x259", {255, 257, 259}, 0},
      {"3-D 251x257x263", {251, 257, 263}, 0},
      {"4-D 63x65x67x69", {63, 65, 67, 69}, 0},
      {"5-D 29x31x37x41x43", {29, 31, 37, 41, 43}, 0},
      // Odd multi-d arrays whose last extent is a few warps of words.
      {"3-D 513x1025x65", {513, 1025, 65}, 0},
      {"4-D 33x35x129x127", {33, 35, 129, 127}, 0},
      {"4-D 1x8191x1x8191", {1, 8191, 1, 8191}, 0},
      {"3-D 511^3 ax0", {511, 511, 511}, 1},
      {"3-D 511^3 ax2", {511, 511, 511}, 4},
      {"3-D 511^3 ax0,2", {511, 511, 511}, 5},
      {"2-D 8191^2 ax1", {8191, 8191}, 2},
      {"64x1024^2 ax1,2", {64, 1024, 1024}, 6},
      // 3-component fields: the grid axes shifted (the usual case), or every axis.
      {"4-D 256^3x3 ax0-2", {256, 256, 256, 3}, 7},
      {"4-D 255^3x3 ax0-2", {255, 255, 255, 3}, 7},
      {"4-D 255^3x3", {255, 255, 255, 3}, 0},
      // A short odd first axis over a large block (3 image planes, every axis shifted): in place a third of it
      // is saved.
      {"3-D 3x8192x8192", {3, 8192, 8192}, 0},
      // More short odd axes over even ones: 5 and 15 planes, 7 planes with axis 0 alone, 3 under an even outer axis.
      {"3-D 5x4096x4096", {5, 4096, 4096}, 0},
      {"3-D 15x2048x2048", {15, 2048, 2048}, 0},
      {"3-D 7x4096x4096 ax0", {7, 4096, 4096}, 1},
      {"4-D 8x3x2048x2048", {8, 3, 2048, 2048}, 0},
  };
  if (quick) cases.resize(2);
  if (!shape_filter.empty()) {
    std::vector<std::string> parts;
    for (std::size_t at = 0; at <= shape_filter.size();) {
      const std::size_t comma = std::min(shape_filter.find(',', at), shape_filter.size());
      parts.push_back(shape_filter.substr(at, comma - at));
      at = comma + 1;
    }
    std::vector<Case> kept;
    for (const Case &c : cases)
      if (std::any_of(parts.begin(), parts.end(), [&](const std::string &p) { return std::strstr(c.name, p.c_str()); }))
        kept.push_back(c);
    cases = kept;
  }
  const sfft_dtype dtypes[] = {SFFT_FLOAT32, SFFT_FLOAT64, SFFT_COMPLEX64, SFFT_COMPLEX128};
  const char *dnames[] = {"f32", "f64", "c64", "c128"};
  const std::size_t dsize[] = {4, 8, 8, 16};
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  opts.stream = stream;

  std::printf("sfft %s fftshift benchmark on %s, %s, median of %d (CUDA events); GB/s = (read+write bytes)/time\n",
              sfft_version_string(), bench::device_name().c_str(), bench::today().c_str(), repeat);
  std::printf("%-20s %-5s %-8s %9s %9s %9s %9s %7s %9s %6s %9s %7s\n", "shape", "dtype", "mode", "MiB", "sfft ms",
              "sfft GB/s", "copy GB/s", "ratio", "extra MiB", "wrong", "queued ms", "q ratio");
  int below = 0;
  double min_in_place = 1e9, min_out_of_place = 1e9, min_queued_in_place = 1e9, min_queued_out_of_place = 1e9;
  for (const Case &c : cases) {
    std::size_t n = 1;
    for (auto e : c.shape) n *= static_cast<std::size_t>(e);
    for (int di = 0; di < 4; ++di) {
      std::size_t bytes = n * dsize[di];
      void *d_in, *d_out, *d_ref;
      BENCH_CUDA(cudaMalloc(&d_in, bytes));
      BENCH_CUDA(cudaMalloc(&d_out, bytes));
      BENCH_CUDA(cudaMalloc(&d_ref, bytes));
      fill_kernel<<<1024, 256, 0, stream>>>(static_cast<uint32_t *>(d_in), bytes / 4, 1234u + di);
      BENCH_CUDA(cudaMemcpyAsync(d_ref, d_in, bytes, cudaMemcpyDeviceToDevice, stream));
      BENCH_CUDA(cudaStreamSynchronize(stream));
      const auto copy = [&] { BENCH_CUDA(cudaMemcpyAsync(d_out, d_in, bytes, cudaMemcpyDeviceToDevice, stream)); };
      for (int in_place = 0; in_place < 2; ++in_place) {
        if ((in_place && mode == "outplace") || (!in_place && mode == "inplace")) continue;
        void *dst = in_place ? d_in : d_out;
        std::size_t used0 = bench::device_used_bytes();
        auto call = [&] {
          sfft_status s =
              fftshift_nd(dst, d_in, static_cast<int>(c.shape.size()), c.shape.data(), c.mask, dtypes[di], &opts);
          if (s != SFFT_SUCCESS) {
            std::fprintf(stderr, "fftshift_nd: %s\n", sfft_last_error());
            std::exit(1);
          }
        };
        // Correctness first, on the pristine input (one call), then timing.
        BENCH_CUDA(cudaMemcpyAsync(d_in, d_ref, bytes, cudaMemcpyDeviceToDevice, stream));
        call();
        BENCH_CUDA(cudaStreamSynchronize(stream));
        std::size_t wrong = spot_check({}, d_ref, dst, c, dsize[di]);
        // The reference copy is timed alternately with the shift: a copy timed apart from it moved by up to 10 %
        // between rows of one run (H200), and the ratio with it.
        const Times t = interleaved_median_ms(copy, call, repeat, stream);
        const double copy_ms = t.a_ms, ms = t.b_ms;
        const double copy_gbs = 2.0 * bytes / copy_ms / 1e6;
        std::size_t used1 = bench::device_used_bytes();
        double gbs = 2.0 * bytes / ms / 1e6;
        double ratio = gbs / copy_gbs;
        double target = in_place ? 0.8 : 0.9;
        below += ratio < target;
        double &worst = in_place ? min_in_place : min_out_of_place;
        worst = std::min(worst, ratio);
        double &worst_queued = in_place ? min_queued_in_place : min_queued_out_of_place;
        worst_queued = std::min(worst_queued, t.a_queued_ms / t.b_queued_ms);
        std::printf("%-20s %-5s %-8s %9.0f %9.3f %9.0f %9.0f %6.1f%%%s %9.1f %6zu %9.3f %6.1f%%\n", c.name, dnames[di],
                    in_place ? "inplace" : "outplace", bytes / 1048576.0, ms, gbs, copy_gbs, 100 * ratio,
                    ratio < target ? "!" : " ", (used1 > used0 ? used1 - used0 : 0) / 1048576.0, wrong,
                    t.b_queued_ms, 100 * t.a_queued_ms / t.b_queued_ms);
        std::fflush(stdout);
        if (wrong) return 1;
      }
      BENCH_CUDA(cudaFree(d_in));
      BENCH_CUDA(cudaFree(d_out));
      BENCH_CUDA(cudaFree(d_ref));
    }
  }
  // A mode left out by --mode has no rows: "-" rather than the initial value.
  const auto percent = [](double worst) {
    char text[32] = "-";
    if (worst < 1e9) std::snprintf(text, sizeof text, "%.1f%%", 100 * worst);
    return std::string(text);
  };
  std::printf("minimum ratio to copy: out of place %s, in place %s\n", percent(min_out_of_place).c_str(),
              percent(min_in_place).c_str());
  std::printf("rows below target (90%% of copy out of place, 80%% in place; marked !): %d\n", below);
  std::printf("minimum queued ratio: out of place %s, in place %s\n", percent(min_queued_out_of_place).c_str(),
              percent(min_queued_in_place).c_str());
  BENCH_CUDA(cudaStreamDestroy(stream));
  return 0;
}
