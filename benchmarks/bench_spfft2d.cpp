// SPDX-License-Identifier: Apache-2.0
// spfft2d vs dense cuFFT (R2C 2-D, float32) on matrices with the shapes and nnz of the four cases
// (seeded banded-plus-random structure) or a given .mtx file. Prints, per case, the median time of dense
// cuFFT and of spfft2d (device output, the plan's method), their ratio, the peak device memory of each,
// spfft2d streamed to the host (time, peak device memory; the same plan switched to the memory-bounded
// DIRECT method), and the max error of each on sampled entries vs a direct sum.
//
//   bench_spfft2d [--repeats N] [--tile ROWS] [--method auto|direct|direct_rows|dense] [--skip-big] [--case NAME]
//                 [FILE.mtx ...]
//   (--tile 0: the plan's automatic tile; --case: only the built-in cases whose name contains NAME, e.g. for a
//   profiler run)
#include <cuda_runtime_api.h>
#include <cufft.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "sfft/sfft.h"

namespace {

#define CHECK_SFFT(x)                                                                             \
  do {                                                                                            \
    sfft_status s_ = (x);                                                                         \
    if (s_ != SFFT_SUCCESS) {                                                                     \
      std::fprintf(stderr, "%s failed: %s: %s\n", #x, sfft_status_string(s_), sfft_last_error()); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

using cf = std::complex<float>;

struct Matrix {
  std::string name;
  uint64_t rows = 0, cols = 0;
  std::vector<int64_t> r, c;
};

// Half the nonzeros on a band around the diagonal, half uniformly random (repeats possible, then merged).
Matrix banded_plus_random(const std::string &name, uint64_t n, uint64_t nnz, uint64_t seed) {
  Matrix m{name, n, n, {}, {}};
  std::mt19937_64 rng(seed);
  const uint64_t band = std::max<uint64_t>(1, nnz / 2 / n);
  for (uint64_t i = 0; i < n && m.r.size() < nnz / 2; ++i)
    for (uint64_t d = 0; d < band; ++d) {
      m.r.push_back(static_cast<int64_t>(i));
      m.c.push_back(static_cast<int64_t>((i + d) % n));
    }
  std::uniform_int_distribution<uint64_t> any(0, n - 1);
  while (m.r.size() < nnz) {
    m.r.push_back(static_cast<int64_t>(any(rng)));
    m.c.push_back(static_cast<int64_t>(any(rng)));
  }
  return m;
}

double mib(std::size_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

// Direct double-precision sum at (u, v) with exact integer phase reduction modulo rows * cols.
std::complex<double> direct(const Matrix &m, const std::vector<char> &keep, uint64_t u, uint64_t v) {
  const unsigned __int128 RC = static_cast<unsigned __int128>(m.rows) * m.cols;
  double re = 0, im = 0;
  for (std::size_t k = 0; k < m.r.size(); ++k) {
    if (!keep[k]) continue;
    unsigned __int128 ph = (static_cast<unsigned __int128>(static_cast<uint64_t>(m.r[k]) * u % m.rows) * m.cols +
                            static_cast<unsigned __int128>(static_cast<uint64_t>(m.c[k]) * v % m.cols) * m.rows) %
                           RC;
    double a = -2.0 * M_PI * static_cast<double>(ph) / static_cast<double>(RC);
    re += std::cos(a);
    im += std::sin(a);
  }
  return {re, im};
}

struct Sampler {
  uint64_t width;
  std::vector<std::pair<uint64_t, uint64_t>> at;  // (u, v)
  std::vector<cf> got;
  double checksum = 0;
};

void on_rows(uint64_t row0, uint64_t nrows, const void *rows, void *user) {
  auto *s = static_cast<Sampler *>(user);
  const cf *y = static_cast<const cf *>(rows);
  double sum = 0;
  for (uint64_t i = 0; i < nrows * s->width; i += 97) sum += std::abs(y[i]);
  s->checksum += sum;
  for (std::size_t k = 0; k < s->at.size(); ++k)
    if (s->at[k].first >= row0 && s->at[k].first < row0 + nrows)
      s->got[k] = y[(s->at[k].first - row0) * s->width + s->at[k].second];
}

const char *method_name(spfft2d_method m) {
  switch (m) {
    case SPFFT2D_METHOD_DIRECT:
      return "direct";
    case SPFFT2D_METHOD_DIRECT_ROWS:
      return "direct_rows";
    case SPFFT2D_METHOD_DENSE:
      return "dense";
    default:
      return "auto";
  }
}

void run_case(Matrix m, int repeats, bool allow_dense, uint64_t tile_rows, spfft2d_method method) {
  const uint64_t R = m.rows, C = m.cols, W = C / 2 + 1;
  // Binary matrix: merge repeats (the library does the same) so the reference sees a 0/1 matrix.
  std::vector<char> keep(m.r.size(), 1);
  {
    std::vector<std::size_t> idx(m.r.size());
    for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = k;
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      return m.c[a] != m.c[b] ? m.c[a] < m.c[b] : m.r[a] != m.r[b] ? m.r[a] < m.r[b] : a < b;
    });
    for (std::size_t k = 1; k < idx.size(); ++k)
      if (m.r[idx[k]] == m.r[idx[k - 1]] && m.c[idx[k]] == m.c[idx[k - 1]]) keep[idx[k]] = 0;
  }
  uint64_t nnz = 0;
  for (char k : keep) nnz += k;
  Sampler samples{W, {}, {}, 0};
  std::mt19937_64 rng(99);
  for (int i = 0; i < 24; ++i) samples.at.push_back({rng() % R, rng() % W});
  samples.at.push_back({0, 0});
  samples.at.push_back({R - 1, W - 1});
  samples.got.assign(samples.at.size(), cf());
  std::vector<std::complex<double>> ref;
  for (auto &p : samples.at) ref.push_back(direct(m, keep, p.first, p.second));
  const double scale = static_cast<double>(nnz);  // max |Y| of a 0/1 matrix
  auto max_err = [&](const std::vector<cf> &got) {
    double e = 0;
    for (std::size_t k = 0; k < got.size(); ++k)
      e = std::max(e, std::abs(std::complex<double>(got[k].real(), got[k].imag()) - ref[k]));
    return e / scale;
  };
  auto sample_device = [&](const cf *d) {
    std::vector<cf> got(samples.at.size());
    for (std::size_t k = 0; k < got.size(); ++k)
      BENCH_CUDA(
          cudaMemcpy(&got[k], d + samples.at[k].first * W + samples.at[k].second, sizeof(cf), cudaMemcpyDeviceToHost));
    return got;
  };

  // ---- dense cuFFT R2C 2-D (input already dense on the device)
  double dense_ms = NAN, dense_mib = NAN, dense_err = NAN;
  const std::size_t base = bench::device_used_bytes();
  std::size_t dense_bytes = (R * C * sizeof(float)) + R * W * sizeof(cf);
  if (allow_dense) {
    float *x = nullptr;
    cf *y = nullptr;
    cufftHandle plan = 0;
    bool ok = cudaMalloc(reinterpret_cast<void **>(&x), R * C * sizeof(float)) == cudaSuccess &&
              cudaMalloc(reinterpret_cast<void **>(&y), R * W * sizeof(cf)) == cudaSuccess &&
              cufftPlan2d(&plan, static_cast<int>(R), static_cast<int>(C), CUFFT_R2C) == CUFFT_SUCCESS;
    if (ok) {
      dense_mib = mib(bench::device_used_bytes() - base);
      std::vector<float> ones(1, 1.0f);
      BENCH_CUDA(cudaMemset(x, 0, R * C * sizeof(float)));
      for (std::size_t k = 0; k < m.r.size(); ++k)
        if (keep[k])
          BENCH_CUDA(cudaMemcpy(x + m.r[k] * C + m.c[k], ones.data(), sizeof(float), cudaMemcpyHostToDevice));
      dense_ms = 1e3 * bench::time_median(
                           [&] {
                             cufftExecR2C(plan, x, reinterpret_cast<cufftComplex *>(y));
                             BENCH_CUDA(cudaDeviceSynchronize());
                           },
                           repeats);
      dense_err = max_err(sample_device(y));
    } else {
      (void)cudaGetLastError();
    }
    if (plan) cufftDestroy(plan);
    cudaFree(x);
    cudaFree(y);
  }

  // ---- spfft2d, CUDA backend, complex64
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  double ours_ms = NAN, ours_mib = NAN, ours_err = NAN;
  const std::size_t base2 = bench::device_used_bytes();
  spfft2d_plan p = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  CHECK_SFFT(spfft2d_create(&p, R, C, m.r.size(), m.r.data(), m.c.data(), nullptr, SFFT_COMPLEX64, &o));
  const double create_ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (tile_rows != 0) CHECK_SFFT(spfft2d_set_tile_rows(p, tile_rows));
  if (allow_dense) CHECK_SFFT(spfft2d_set_method(p, method));
  uint64_t tile = 0;
  CHECK_SFFT(spfft2d_get_info(p, nullptr, nullptr, nullptr, &tile, nullptr, nullptr));
  spfft2d_method used = SPFFT2D_METHOD_AUTO;
  CHECK_SFFT(spfft2d_get_method(p, &used));
  cf *out = nullptr;
  if (allow_dense && cudaMalloc(reinterpret_cast<void **>(&out), R * W * sizeof(cf)) == cudaSuccess) {
    ours_mib = mib(bench::device_used_bytes() - base2);
    ours_ms = 1e3 * bench::time_median(
                        [&] {
                          CHECK_SFFT(spfft2d_exec(p, out));
                          BENCH_CUDA(cudaDeviceSynchronize());
                        },
                        repeats);
    ours_err = max_err(sample_device(out));
  }
  (void)cudaGetLastError();
  cudaFree(out);
  // Streamed to the host (callback) by the memory-bounded method, device memory = the plan's workspace.
  CHECK_SFFT(spfft2d_set_method(p, SPFFT2D_METHOD_DIRECT));
  const double stream_mib = mib(bench::device_used_bytes() - base2);
  const int stream_repeats = allow_dense ? std::max(1, repeats / 2) : 1;
  const double stream_ms = 1e3 * bench::time_median([&] { CHECK_SFFT(spfft2d_exec_stream(p, on_rows, &samples)); },
                                                    stream_repeats, allow_dense ? 1 : 0);
  const double stream_err = max_err(samples.got);
  CHECK_SFFT(spfft2d_destroy(p));

  std::printf(
      "| %-14s | %6llux%-6llu | %8llu | %-11s | %9.3f | %9.3f | %6.2fx | %9.1f | %9.1f | %9.2f | %8.1f | %5.1f%% | "
      "%8.1e | %8.1e | %8.1e | %5llu | %8.0f |\n",
      m.name.c_str(), (unsigned long long)R, (unsigned long long)C, (unsigned long long)nnz,
      allow_dense ? method_name(used) : "-", dense_ms, ours_ms, dense_ms / ours_ms, dense_mib, ours_mib, stream_ms,
      stream_mib, 100.0 * stream_mib / (std::isnan(dense_mib) ? mib(dense_bytes) : dense_mib), dense_err, ours_err,
      stream_err, (unsigned long long)tile, create_ms);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
  int repeats = 7;
  uint64_t tile_rows = 0;
  bool skip_big = false;
  std::string only;
  spfft2d_method method = SPFFT2D_METHOD_AUTO;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc)
      repeats = std::atoi(argv[++i]);
    else if (a == "--tile" && i + 1 < argc)
      tile_rows = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--skip-big")
      skip_big = true;
    else if (a == "--case" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--method" && i + 1 < argc) {
      std::string name = argv[++i];
      method = name == "direct"        ? SPFFT2D_METHOD_DIRECT
               : name == "direct_rows" ? SPFFT2D_METHOD_DIRECT_ROWS
               : name == "dense"       ? SPFFT2D_METHOD_DENSE
               : name == "auto"        ? SPFFT2D_METHOD_AUTO
                                       : static_cast<spfft2d_method>(-1);
      if (method == static_cast<spfft2d_method>(-1)) {
        std::fprintf(stderr, "unknown method '%s'\n", name.c_str());
        return 2;
      }
    } else if (a == "--help") {
      std::printf(
          "usage: bench_spfft2d [--repeats N] [--tile ROWS] [--method auto|direct|direct_rows|dense] "
          "[--skip-big] [--case NAME] [FILE.mtx ...]\n");
      return 0;
    } else
      files.push_back(a);
  }
  BENCH_CUDA(cudaFree(nullptr));
  {  // load cuFFT's kernels before any memory is measured
    cufftHandle warm;
    if (cufftPlan1d(&warm, 64, CUFFT_C2C, 1) == CUFFT_SUCCESS) cufftDestroy(warm);
  }
  std::printf(
      "spfft2d vs dense cuFFT R2C 2-D (float32 in, complex64 out); device: %s; date: %s; repeats: %d; "
      "tile: %s; method: %s\n",
      bench::device_name().c_str(), bench::today().c_str(), repeats,
      tile_rows ? std::to_string(tile_rows).c_str() : "auto", method_name(method));
  std::printf(
      "times: median ms (exec only, synchronised; dense input already on the device); memory: peak device "
      "MiB above the idle context; err: max |Y - direct sum| / nnz on 26 sampled entries; method: what the "
      "device-output exec used; stream: the same "
      "plan set to the memory-bounded direct method\n\n");
  std::printf(
      "| case           | shape         | nnz      | method      | dense ms  | ours ms   | ratio   | dense MiB | ours "
      "MiB  | stream ms | strm MiB | strm/dense | err dense | err ours | err strm | tile  | create ms |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  auto wanted = [&](const char *name) { return std::string(name).find(only) != std::string::npos; };
  if (wanted("sstmodel-like"))
    run_case(banded_plus_random("sstmodel-like", 3345, 22749, 1), repeats, true, tile_rows, method);
  if (wanted("benzene-like"))
    run_case(banded_plus_random("benzene-like", 8219, 242669, 2), repeats, true, tile_rows, method);
  if (wanted("delaunay-like"))
    run_case(banded_plus_random("delaunay-like", 16384, 98256, 3), repeats, true, tile_rows, method);
  if (!skip_big && wanted("pct20stif-like"))
    run_case(banded_plus_random("pct20stif-like", 52329, 2698463, 4), 1, false, tile_rows, method);
  for (const std::string &f : files) {
    // A real matrix through the library's reader: streamed time only (no sampled reference).
    sfft_options o;
    sfft_options_init(&o);
    o.backend = SFFT_BACKEND_CUDA;
    spfft2d_plan p = nullptr;
    CHECK_SFFT(spfft2d_create_from_mtx(&p, f.c_str(), 1, SFFT_COMPLEX64, &o));
    uint64_t R = 0, C = 0, nnz = 0;
    CHECK_SFFT(spfft2d_get_info(p, &R, &C, &nnz, nullptr, nullptr, nullptr));
    Sampler s{C / 2 + 1, {}, {}, 0};
    double ms = 1e3 * bench::time_median([&] { CHECK_SFFT(spfft2d_exec_stream(p, on_rows, &s)); }, 3, 1);
    std::printf("%s: %llux%llu nnz %llu: streamed %.3f ms\n", f.c_str(), (unsigned long long)R, (unsigned long long)C,
                (unsigned long long)nnz, ms);
    CHECK_SFFT(spfft2d_destroy(p));
  }
  std::printf("\nhost peak RSS: %.0f MiB\n", mib(bench::host_peak_rss()));
  return 0;
}
