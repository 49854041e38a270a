// SPDX-License-Identifier: Apache-2.0
// spfft2d against the dense path a user would write, on a suite of matrix families (issue 22), same run:
//   CPU:    memset + scatter of the nonzeros into a dense float array + FFTW's 2-D R2C (the plan's threads),
//           against spfft2d on the CPU backend (complex64, host output);
//   device: memset + scatter kernel + cufftExecR2C, against spfft2d on the CUDA backend (device output).
// Each row: the peer's and our median time, their ratio (peer / ours), the method AUTO used and the time of
// every explicit method (so AUTO's choice can be checked against the best; on the device also DIRECT as one tile
// of the whole half spectrum, as AUTO runs it; the CPU's AUTO runs the tiled DIRECT), the output-write floor (a copy of
// the output's bytes: memcpy on the CPU, a device-to-device cudaMemcpy on the GPU), the memory of each side, and
// max |ours - peer| / nnz over the whole spectrum (CPU) or 64 sampled entries (device), and each side's setup ("plan
// ms", wall clock: FFTW's plan; on the device the COO upload, the dense array and cuFFT's plan against
// spfft2d_create) with the end-to-end ratio of a one-shot user (plan + one call each). The summary gives the
// minimum ratio, the minimum end-to-end ratio and the largest AUTO / best-explicit ratio over the suite. On the CPU the
// peer, AUTO and the explicit methods are called in turn, call by call (run_cpu says why).
//
//   bench_spfft2d [--cpu] [--device] [--sizes N,N,...] [--families NAME,...] [--repeats N] [--threads T]
//   bench_spfft2d --stages [--sizes N,N,...] [--repeats N]: the device stages a whole-spectrum method is built
//   from, on an N x N complex64 half spectrum (no matrix), to size a column pass that writes the output once.
//   Families: powerlaw, banded, blockdiag, uniform, rectangular, band+scattered, wide (CPU only unless named).
//   Sizes n: n x n matrices (rectangular n x 3n/2, wide n/2 x 8n); defaults: CPU 512,1024,2048; device
//   1024,4096,6144,8219,16384,32768.
#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "sfft/sfft.h"
#include "spfft2d/method_names.hpp"

#if SFFT_HAVE_CUDA
#include <cufft.h>
#endif

namespace {

using sfft::spfft2d::method_name;
using sfft::spfft2d::method_named;

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
  std::string family;
  uint64_t rows = 0, cols = 0;
  std::vector<int64_t> r, c;  // unique coordinates, row-major order
};

// Sorts and removes repeated coordinates, so the dense peers and spfft2d see the same 0/1 matrix.
void unique(Matrix &m) {
  std::vector<uint64_t> keys(m.r.size());
  for (std::size_t k = 0; k < keys.size(); ++k)
    keys[k] = static_cast<uint64_t>(m.r[k]) << 32 | static_cast<uint64_t>(m.c[k]);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  m.r.resize(keys.size());
  m.c.resize(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    m.r[k] = static_cast<int64_t>(keys[k] >> 32);
    m.c[k] = static_cast<int64_t>(keys[k] & 0xffffffffu);
  }
}

// The suite's families at size n (seeded): every one at most 5 % fill. n x n, but rectangular n x 3n/2 and wide
// n/2 x 8n (four times the cells of n x n).
Matrix make_matrix(const std::string &family, uint64_t n, uint64_t seed) {
  Matrix m{family, n, n, {}, {}};
  if (family == "rectangular") m.cols = n + n / 2;
  if (family == "wide") m.rows = std::max<uint64_t>(1, n / 2), m.cols = 8 * n;
  std::mt19937_64 rng(seed);
  auto add = [&](uint64_t r, uint64_t c) {
    m.r.push_back(static_cast<int64_t>(r % m.rows));
    m.c.push_back(static_cast<int64_t>(c % m.cols));
  };
  std::uniform_int_distribution<uint64_t> any_row(0, m.rows - 1), any_col(0, m.cols - 1);
  std::uniform_real_distribution<double> u01(0, 1);
  if (family == "powerlaw") {
    // Chung-Lu-like graph, 8 n edges: endpoints drawn with density ~ x^-2/3 (hubs at low indices), then a
    // fixed permutation so the hubs are scattered over rows and columns.
    std::vector<uint64_t> perm(n);
    for (uint64_t i = 0; i < n; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    auto end = [&] { return perm[std::min<uint64_t>(n - 1, static_cast<uint64_t>(n * std::pow(u01(rng), 3.0)))]; };
    for (uint64_t e = 0; e < 8 * n; ++e) add(end(), end());
  } else if (family == "banded") {  // FEM-like: 9 per row on a band of half-width 4
    for (uint64_t i = 0; i < n; ++i)
      for (uint64_t d = 0; d < 9; ++d)
        if (i + d >= 4 && i + d - 4 < n) add(i, i + d - 4);
  } else if (family == "blockdiag") {  // 64 x 64 diagonal blocks, 10 % filled
    for (uint64_t b = 0; b < n; b += 64)
      for (uint64_t i = b; i < std::min(n, b + 64); ++i)
        for (uint64_t j = b; j < std::min(n, b + 64); ++j)
          if (u01(rng) < 0.1) add(i, j);
  } else if (family == "uniform" || family == "wide") {  // 0.1 % fill (wide: 16 times as many columns as rows)
    const uint64_t nnz = static_cast<uint64_t>(1e-3 * static_cast<double>(m.rows) * static_cast<double>(m.cols));
    for (uint64_t e = 0; e < nnz; ++e) add(any_row(rng), any_col(rng));
  } else if (family == "rectangular") {  // very sparse: 4 per row on average, uniform
    for (uint64_t e = 0; e < 4 * n; ++e) add(any_row(rng), any_col(rng));
  } else if (family == "band+scattered") {  // a dense band of half-width 16 plus n scattered entries
    for (uint64_t i = 0; i < n; ++i)
      for (uint64_t d = 0; d <= 32; ++d)
        if (i + d >= 16 && i + d - 16 < n) add(i, i + d - 16);
    for (uint64_t e = 0; e < n; ++e) add(any_row(rng), any_col(rng));
  } else {
    std::fprintf(stderr, "unknown family '%s'\n", family.c_str());
    std::exit(2);
  }
  unique(m);
  return m;
}

double mib(std::size_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

const spfft2d_method kExplicit[] = {SPFFT2D_METHOD_DIRECT, SPFFT2D_METHOD_DIRECT_ROWS, SPFFT2D_METHOD_DENSE,
                                    SPFFT2D_METHOD_PRUNED};

struct Summary {
  double min_ratio = INFINITY, min_e2e = INFINITY, worst_auto = 0;
  std::string min_case, min_e2e_case, worst_case;
  void add(const Matrix &m, double ratio, double e2e_ratio, double auto_over_best) {
    const std::string name = m.family + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols);
    if (ratio < min_ratio) min_ratio = ratio, min_case = name;
    if (e2e_ratio < min_e2e) min_e2e = e2e_ratio, min_e2e_case = name;
    if (auto_over_best > worst_auto) worst_auto = auto_over_best, worst_case = name;
  }
  void print(const char *what) const {
    std::printf(
        "\n%s: minimum ratio (peer / ours, AUTO) %.2fx (%s); minimum end-to-end ratio (plan + one exec) %.2fx (%s); "
        "largest AUTO / best explicit %.2f (%s)\n",
        what, min_ratio, min_case.c_str(), min_e2e, min_e2e_case.c_str(), worst_auto, worst_case.c_str());
  }
};

// Wall-clock milliseconds of fn() (a plan's creation: host work and the allocations and uploads it waits for).
template <class Fn>
double wall_ms(Fn &&fn) {
  return 1e3 * bench::time_once(fn);
}

// One plan of the backend created and destroyed, so that no row's plan time carries the one-time setup of FFTW,
// cuFFT or sfft itself (threads, tables, loaded kernels).
void warm_up(sfft_backend backend, int threads) {
  const int64_t one = 0;
  sfft_options o;
  sfft_options_init(&o);
  o.backend = backend;
  o.threads = threads;
  spfft2d_plan p = nullptr;
  CHECK_SFFT(spfft2d_create(&p, 64, 64, 1, &one, &one, nullptr, SFFT_COMPLEX64, &o));
  CHECK_SFFT(spfft2d_destroy(p));
}

// Median ms of spfft2d_exec into out for each explicit method (a failed set, e.g. no memory, gives NAN).
template <class Sync>
std::vector<double> method_times(spfft2d_plan p, void *out, int repeats, Sync sync) {
  std::vector<double> t;
  for (spfft2d_method method : kExplicit) {
    if (spfft2d_set_method(p, method) != SFFT_SUCCESS) {
      t.push_back(NAN);
      continue;
    }
    t.push_back(1e3 * bench::time_median(
                          [&] {
                            CHECK_SFFT(spfft2d_exec(p, out));
                            sync();
                          },
                          repeats, 1));
  }
  CHECK_SFFT(spfft2d_set_method(p, SPFFT2D_METHOD_AUTO));
  return t;
}

double best_of(const std::vector<double> &t) {
  double b = INFINITY;
  for (double x : t)
    if (!std::isnan(x)) b = std::min(b, x);
  return b;
}

void print_header(const char *side) {
  std::printf(
      "\n| %s | family | shape | nnz | fill %% | peer ms | ours ms (AUTO) | ratio | method | direct | direct 1 tile | "
      "direct_rows | dense | pruned | floor ms | ours/floor | peer MiB | ours MiB | err | peer plan ms | "
      "ours plan ms | e2e ratio |\n",
      side);
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

// e2e ratio: (peer plan + one peer call) / (our plan + one AUTO exec), what a one-shot user waits for.
void print_row(const char *side, const Matrix &m, double peer_ms, double ours_ms, spfft2d_method used,
               const std::vector<double> &t, double floor_ms, double peer_mib, double ours_mib, double err,
               double peer_plan_ms, double ours_plan_ms) {
  const double fill = 100.0 * static_cast<double>(m.r.size()) / (static_cast<double>(m.rows) * m.cols);
  char one_tile[32] = "-";
  if (t.size() > 4 && !std::isnan(t[4])) std::snprintf(one_tile, sizeof one_tile, "%.3f", t[4]);
  std::printf(
      "| %s | %s | %llux%llu | %zu | %.3f | %.3f | %.3f | %.2fx | %s | %.3f | %s | %.3f | %.3f | %.3f | %.3f | %.1f "
      "| %.1f | %.1f | %.1e | %.3f | %.3f | %.2fx |\n",
      side, m.family.c_str(), (unsigned long long)m.rows, (unsigned long long)m.cols, m.r.size(), fill, peer_ms,
      ours_ms, peer_ms / ours_ms, method_name(used), t[0], one_tile, t[1], t[2], t[3], floor_ms, ours_ms / floor_ms,
      peer_mib, ours_mib, err, peer_plan_ms, ours_plan_ms, (peer_plan_ms + peer_ms) / (ours_plan_ms + ours_ms));
  std::fflush(stdout);
}

// ------------------------------------------------------------------------------------------------- CPU
// The peer, AUTO and each explicit method (a plan of its own) are timed in turn, each timed call after an untimed
// one of its own (bench::time_medians_in_turn): the host's slow drifts (the same PRUNED plan's medians moved
// 10-30 % between runs a minute apart on the device host, and AUTO's time from its own method's column within a
// run) then reach every column alike, so the ratios and AUTO / best explicit compare calls made under the same
// conditions.
void run_cpu(const Matrix &m, int repeats, int threads, Summary &summary) {
  const uint64_t R = m.rows, C = m.cols, W = C / 2 + 1;
  // Peer: a dense float array, zeroed and scattered every run, FFTW's 2-D R2C (FFTW_ESTIMATE, as a one-shot
  // user would plan; out of place) on the same threads.
  std::vector<float> dense(R * C);
  std::vector<cf> peer(R * W), ours(R * W), copy(R * W);
  fftwf_plan_with_nthreads(threads);
  fftwf_plan plan = nullptr;
  const double peer_plan_ms = wall_ms([&] {
    plan = fftwf_plan_dft_r2c_2d(static_cast<int>(R), static_cast<int>(C), dense.data(),
                                 reinterpret_cast<fftwf_complex *>(peer.data()), FFTW_ESTIMATE);
  });
  const auto run_peer = [&] {
    std::memset(dense.data(), 0, dense.size() * sizeof(float));
    for (std::size_t k = 0; k < m.r.size(); ++k)
      dense[static_cast<uint64_t>(m.r[k]) * C + static_cast<uint64_t>(m.c[k])] = 1.0f;
    fftwf_execute(plan);
  };
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  o.threads = threads;
  const auto create = [&] {
    spfft2d_plan p = nullptr;
    CHECK_SFFT(spfft2d_create(&p, R, C, m.r.size(), m.r.data(), m.c.data(), nullptr, SFFT_COMPLEX64, &o));
    return p;
  };
  spfft2d_plan automatic = nullptr;
  const double ours_plan_ms = wall_ms([&] { automatic = create(); });
  spfft2d_method used = SPFFT2D_METHOD_AUTO;
  CHECK_SFFT(spfft2d_get_method(automatic, &used));
  uint64_t workspace = 0;
  CHECK_SFFT(spfft2d_get_info(automatic, nullptr, nullptr, nullptr, nullptr, &workspace, nullptr));
  run_peer();
  CHECK_SFFT(spfft2d_exec(automatic, ours.data()));
  double err = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) err = std::max(err, static_cast<double>(std::abs(ours[i] - peer[i])));
  err /= static_cast<double>(std::max<std::size_t>(m.r.size(), 1));
  // Explicit methods a plan can be set to (a failed set, e.g. no memory, gives NAN).
  std::vector<spfft2d_plan> explicit_plans;
  for (spfft2d_method method : kExplicit) {
    spfft2d_plan p = create();
    if (spfft2d_set_method(p, method) != SFFT_SUCCESS) {
      CHECK_SFFT(spfft2d_destroy(p));
      p = nullptr;
    }
    explicit_plans.push_back(p);
  }
  std::vector<std::function<void()>> calls{run_peer, [&] { CHECK_SFFT(spfft2d_exec(automatic, ours.data())); }};
  for (spfft2d_plan p : explicit_plans)
    if (p) calls.emplace_back([&ours, p] { CHECK_SFFT(spfft2d_exec(p, ours.data())); });
  const std::vector<double> medians = bench::time_medians_in_turn(calls, repeats);
  const double peer_ms = 1e3 * medians[0], ours_ms = 1e3 * medians[1];
  std::vector<double> t;
  for (std::size_t i = 0, next = 2; i < explicit_plans.size(); ++i) {
    t.push_back(explicit_plans[i] ? 1e3 * medians[next++] : NAN);
    if (explicit_plans[i]) CHECK_SFFT(spfft2d_destroy(explicit_plans[i]));
  }
  CHECK_SFFT(spfft2d_destroy(automatic));
  fftwf_destroy_plan(plan);
  const double floor_ms =
      1e3 * bench::time_median([&] { std::memcpy(copy.data(), ours.data(), ours.size() * sizeof(cf)); }, repeats, 1);
  const double out_mib = mib(R * W * sizeof(cf));
  print_row("cpu", m, peer_ms, ours_ms, used, t, floor_ms, mib(R * C * sizeof(float)) + out_mib,
            mib(workspace) + out_mib, err, peer_plan_ms, ours_plan_ms);
  summary.add(m, peer_ms / ours_ms, (peer_plan_ms + peer_ms) / (ours_plan_ms + ours_ms), ours_ms / best_of(t));
}

// ---------------------------------------------------------------------------------------------- device
#if SFFT_HAVE_CUDA
__global__ void scatter_ones(const int64_t *r, const int64_t *c, uint64_t nnz, uint64_t cols, float *dense) {
  for (uint64_t k = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    dense[static_cast<uint64_t>(r[k]) * cols + static_cast<uint64_t>(c[k])] = 1.0f;
}

void run_device(const Matrix &m, int repeats, Summary &summary) {
  const uint64_t R = m.rows, C = m.cols, W = C / 2 + 1, nnz = m.r.size();
  const auto sync = [] { BENCH_CUDA(cudaDeviceSynchronize()); };
  // Peer: memset + scatter of the COO entries + cufftExecR2C (plan made once), out of place.
  int64_t *dr = nullptr, *dc = nullptr;
  float *dense = nullptr;
  cf *out = nullptr, *copy = nullptr;
  // The peer's setup, timed as its plan: the COO entries' upload, the dense array and cuFFT's plan.
  double peer_plan_ms = wall_ms([&] {
    BENCH_CUDA(cudaMalloc(reinterpret_cast<void **>(&dr), std::max<uint64_t>(nnz, 1) * sizeof(int64_t)));
    BENCH_CUDA(cudaMalloc(reinterpret_cast<void **>(&dc), std::max<uint64_t>(nnz, 1) * sizeof(int64_t)));
    BENCH_CUDA(cudaMemcpy(dr, m.r.data(), nnz * sizeof(int64_t), cudaMemcpyHostToDevice));
    BENCH_CUDA(cudaMemcpy(dc, m.c.data(), nnz * sizeof(int64_t), cudaMemcpyHostToDevice));
  });
  BENCH_CUDA(cudaMalloc(reinterpret_cast<void **>(&out), R * W * sizeof(cf)));
  const std::size_t base = bench::device_used_bytes();
  double peer_ms = NAN, peer_mib = NAN;
  cufftHandle plan = 0;
  std::vector<cf> peer_samples;
  std::mt19937_64 rng(7);
  std::vector<uint64_t> at;
  for (int i = 0; i < 64; ++i) at.push_back((rng() % R) * W + rng() % W);
  auto sample = [&](const cf *d) {
    std::vector<cf> s(at.size());
    for (std::size_t k = 0; k < at.size(); ++k) BENCH_CUDA(cudaMemcpy(&s[k], d + at[k], sizeof(cf), cudaMemcpyDefault));
    return s;
  };
  bool peer_planned = false;
  peer_plan_ms += wall_ms([&] {
    peer_planned = cudaMalloc(reinterpret_cast<void **>(&dense), R * C * sizeof(float)) == cudaSuccess &&
                   cufftPlan2d(&plan, static_cast<int>(R), static_cast<int>(C), CUFFT_R2C) == CUFFT_SUCCESS;
  });
  if (peer_planned) {
    peer_mib = mib(bench::device_used_bytes() - base + R * W * sizeof(cf));
    peer_ms = 1e3 * bench::time_median(
                        [&] {
                          BENCH_CUDA(cudaMemsetAsync(dense, 0, R * C * sizeof(float)));
                          if (nnz > 0) scatter_ones<<<1024, 256>>>(dr, dc, nnz, C, dense);
                          if (cufftExecR2C(plan, dense, reinterpret_cast<cufftComplex *>(out)) != CUFFT_SUCCESS)
                            std::exit(1);
                          sync();
                        },
                        repeats);
    peer_samples = sample(out);
  }
  (void)cudaGetLastError();
  if (plan) cufftDestroy(plan);
  cudaFree(dense);
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  const std::size_t base2 = bench::device_used_bytes();
  spfft2d_plan p = nullptr;
  const double ours_plan_ms = wall_ms([&] {
    CHECK_SFFT(spfft2d_create(&p, R, C, nnz, m.r.data(), m.c.data(), nullptr, SFFT_COMPLEX64, &o));
    sync();
  });
  spfft2d_method used = SPFFT2D_METHOD_AUTO;
  CHECK_SFFT(spfft2d_get_method(p, &used));
  const double ours_mib = mib(bench::device_used_bytes() - base2 + R * W * sizeof(cf));
  const double ours_ms = 1e3 * bench::time_median(
                                   [&] {
                                     CHECK_SFFT(spfft2d_exec(p, out));
                                     sync();
                                   },
                                   repeats);
  double err = NAN;
  if (!peer_samples.empty()) {
    const std::vector<cf> s = sample(out);
    err = 0;
    for (std::size_t k = 0; k < s.size(); ++k)
      err = std::max(err, static_cast<double>(std::abs(s[k] - peer_samples[k])));
    err /= static_cast<double>(std::max<uint64_t>(nnz, 1));
  }
  std::vector<double> t = method_times(p, out, repeats, sync);
  // DIRECT as AUTO runs it on a CUDA plan: one tile of the whole half spectrum.
  double one_tile_ms = NAN;
  if (spfft2d_set_method(p, SPFFT2D_METHOD_DIRECT) == SFFT_SUCCESS &&
      spfft2d_set_tile_rows(p, R / 2 + 1) == SFFT_SUCCESS)
    one_tile_ms = 1e3 * bench::time_median(
                            [&] {
                              CHECK_SFFT(spfft2d_exec(p, out));
                              sync();
                            },
                            repeats, 1);
  t.push_back(one_tile_ms);
  CHECK_SFFT(spfft2d_destroy(p));
  double floor_ms = NAN;
  if (cudaMalloc(reinterpret_cast<void **>(&copy), R * W * sizeof(cf)) == cudaSuccess)
    floor_ms = 1e3 * bench::time_median(
                         [&] {
                           BENCH_CUDA(cudaMemcpyAsync(copy, out, R * W * sizeof(cf), cudaMemcpyDeviceToDevice));
                           sync();
                         },
                         repeats);
  (void)cudaGetLastError();
  cudaFree(copy);
  cudaFree(out);
  cudaFree(dr);
  cudaFree(dc);
  print_row("gpu", m, peer_ms, ours_ms, used, t, floor_ms, peer_mib, ours_mib, err, peer_plan_ms, ours_plan_ms);
  if (!std::isnan(peer_ms))
    summary.add(m, peer_ms / ours_ms, (peer_plan_ms + peer_ms) / (ours_plan_ms + ours_ms), ours_ms / best_of(t));
}
// ------------------------------------------------------------- device stages (--stages)
// For an n x n real input (half spectrum n x w, w = n/2 + 1, complex64) the median ms of: a write of the half
// spectrum (cudaMemset), its copy (the floor of the suite tables), cuFFT's in-place C2C of length n down the w
// columns (stride w: the column pass of DIRECT_ROWS and PRUNED), the same transforms on a transposed layout
// (w contiguous rows of n: what a column pass that first gathers each column costs in FFT work), and the
// dense path's cuFFT 2-D R2C (out of place, input already dense).
void run_stages(uint64_t n, int repeats) {
  const uint64_t w = n / 2 + 1, elems = n * w;
  const auto sync = [] { BENCH_CUDA(cudaDeviceSynchronize()); };
  cf *a = nullptr, *b = nullptr;
  float *real = nullptr;
  if (cudaMalloc(reinterpret_cast<void **>(&a), elems * sizeof(cf)) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void **>(&b), elems * sizeof(cf)) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void **>(&real), n * n * sizeof(float)) != cudaSuccess) {
    std::printf("| %llu | (no memory) |\n", static_cast<unsigned long long>(n));
    (void)cudaGetLastError();
    cudaFree(a);
    cudaFree(b);
    cudaFree(real);
    return;
  }
  BENCH_CUDA(cudaMemset(a, 0, elems * sizeof(cf)));
  BENCH_CUDA(cudaMemset(real, 0, n * n * sizeof(float)));
  auto timed = [&](auto &&fn) {
    return 1e3 * bench::time_median(
                     [&] {
                       fn();
                       sync();
                     },
                     repeats);
  };
  auto exec = [](cufftHandle h, cf *x) {
    auto *c = reinterpret_cast<cufftComplex *>(x);
    if (cufftExecC2C(h, c, c, CUFFT_FORWARD) != CUFFT_SUCCESS) std::exit(1);
  };
  const double write_ms = timed([&] { BENCH_CUDA(cudaMemsetAsync(b, 0, elems * sizeof(cf))); });
  const double copy_ms =
      timed([&] { BENCH_CUDA(cudaMemcpyAsync(b, a, elems * sizeof(cf), cudaMemcpyDeviceToDevice)); });
  int len = static_cast<int>(n);
  double strided_ms = NAN, contiguous_ms = NAN, r2c_ms = NAN;
  cufftHandle h = 0;
  if (cufftPlanMany(&h, 1, &len, &len, static_cast<int>(w), 1, &len, static_cast<int>(w), 1, CUFFT_C2C,
                    static_cast<int>(w)) == CUFFT_SUCCESS) {
    strided_ms = timed([&] { exec(h, a); });
    cufftDestroy(h);
  }
  if (cufftPlanMany(&h, 1, &len, nullptr, 1, len, nullptr, 1, len, CUFFT_C2C, static_cast<int>(w)) == CUFFT_SUCCESS) {
    contiguous_ms = timed([&] { exec(h, a); });
    cufftDestroy(h);
  }
  if (cufftPlan2d(&h, len, len, CUFFT_R2C) == CUFFT_SUCCESS) {
    r2c_ms = timed([&] {
      if (cufftExecR2C(h, real, reinterpret_cast<cufftComplex *>(b)) != CUFFT_SUCCESS) std::exit(1);
    });
    cufftDestroy(h);
  }
  std::printf("| %llu x %llu | %.3f | %.3f | %.3f | %.3f | %.3f |\n", static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(n), write_ms, copy_ms, strided_ms, contiguous_ms, r2c_ms);
  cudaFree(a);
  cudaFree(b);
  cudaFree(real);
}

// ------------------------------------------------------------- the earlier four cases (--cases)
// The shapes and nnz of the first spfft2d issue's matrices (seeded banded-plus-random structure): dense cuFFT
// with the input already on the device against the plan's method, and the plan streamed to the host by the
// memory-bounded DIRECT method (the 52329^2 case only streams: its dense spectrum does not fit).
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
      m.family.c_str(), (unsigned long long)R, (unsigned long long)C, (unsigned long long)nnz,
      allow_dense ? method_name(used) : "-", dense_ms, ours_ms, dense_ms / ours_ms, dense_mib, ours_mib, stream_ms,
      stream_mib, 100.0 * stream_mib / (std::isnan(dense_mib) ? mib(dense_bytes) : dense_mib), dense_err, ours_err,
      stream_err, (unsigned long long)tile, create_ms);
  std::fflush(stdout);
}
#endif

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  int repeats = 5, threads = 2;
  bool cpu = false, device = false, cases = false, stages = false, skip_big = false;
  uint64_t tile_rows = 0;
  spfft2d_method method = SPFFT2D_METHOD_AUTO;
  std::string only;
  // The device suite leaves out "wide" (n/2 x 8n): at its sizes the dense peer's arrays reach tens of GB.
  const std::vector<std::string> suite_families = {"powerlaw",    "banded",         "blockdiag", "uniform",
                                                   "rectangular", "band+scattered", "wide"};
  std::vector<std::string> device_families;
  std::copy_if(suite_families.begin(), suite_families.end(), std::back_inserter(device_families),
               [](const std::string &f) { return f != "wide"; });
  std::vector<std::string> families;  // --families; empty: each side's suite
  // A matrix's seed from its size and family alone, so that --sizes and --families subsets draw the matrices of
  // the whole suite.
  const auto seed_of = [&](uint64_t base, uint64_t n, const std::string &family) {
    const auto at = std::find(suite_families.begin(), suite_families.end(), family);
    return base + 64 * n + static_cast<uint64_t>(at - suite_families.begin());
  };
  std::vector<uint64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cpu") {
      cpu = true;
    } else if (a == "--device") {
      device = true;
    } else if (a == "--repeats" && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--families" && i + 1 < argc) {
      families = split(argv[++i]);
    } else if (a == "--cases") {
      cases = true;
    } else if (a == "--stages") {
      stages = true;
    } else if (a == "--skip-big") {
      skip_big = true;
    } else if (a == "--case" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--tile" && i + 1 < argc) {
      tile_rows = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--method" && i + 1 < argc) {
      const std::string name = argv[++i];
      const std::optional<spfft2d_method> named = method_named(name);
      if (!named) {
        std::fprintf(stderr, "unknown method '%s'\n", name.c_str());
        return 2;
      }
      method = *named;
    } else if (a == "--sizes" && i + 1 < argc) {
      for (const std::string &n : split(argv[++i])) sizes.push_back(std::strtoull(n.c_str(), nullptr, 10));
    } else {
      std::printf(
          "usage: bench_spfft2d [--cpu] [--device] [--sizes N,...] [--families NAME,...] [--repeats N] "
          "[--threads T]\n       bench_spfft2d --cases [--tile ROWS] [--method auto|direct|direct_rows|dense|pruned] "
          "[--skip-big] [--case NAME] [--repeats N]\n       bench_spfft2d --stages [--sizes N,...] [--repeats N]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (!cpu && !device && !cases && !stages) cpu = true;
#if !SFFT_HAVE_CUDA
  (void)skip_big, (void)tile_rows;  // --cases options
  if (device || cases || stages) {
    std::fprintf(stderr, "--device, --cases, --stages: this build has no CUDA\n");
    return 2;
  }
#else
  if (stages) {
    BENCH_CUDA(cudaFree(nullptr));
    std::printf("spfft2d device stages (complex64 half spectrum); device: %s; date: %s; repeats: %d; median ms\n\n",
                bench::device_name().c_str(), bench::today().c_str(), repeats);
    std::printf(
        "| input | write | copy (floor) | C2C down columns (stride w) | C2C transposed (contiguous) | "
        "R2C 2-D |\n|---|---|---|---|---|---|\n");
    for (uint64_t n : sizes.empty() ? std::vector<uint64_t>{4096, 8192, 8219, 16384} : sizes) run_stages(n, repeats);
    return 0;
  }
  if (cases) {
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
        "| case           | shape         | nnz      | method      | dense ms  | ours ms   | ratio   | dense MiB | "
        "ours "
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
  }
#endif
  std::printf("spfft2d suite (issue 22): binary matrices, complex64 output; date %s; repeats %d; median ms\n",
              bench::today().c_str(), repeats);
  if (cpu) {
    warm_up(SFFT_BACKEND_CPU, threads);
    std::printf("\nCPU: scatter + FFTW r2c_2d (FFTW_ESTIMATE) vs spfft2d CPU backend, %d threads\n", threads);
    print_header("side");
    Summary s;
    for (uint64_t n : sizes.empty() ? std::vector<uint64_t>{512, 1024, 2048} : sizes)
      for (const std::string &f : families.empty() ? suite_families : families)
        run_cpu(make_matrix(f, n, seed_of(1, n, f)), repeats, threads, s);
    s.print("CPU");
  }
#if SFFT_HAVE_CUDA
  if (device) {
    BENCH_CUDA(cudaFree(nullptr));
    {  // the peer's own cuFFT loading
      cufftHandle warm;
      if (cufftPlan1d(&warm, 64, CUFFT_C2C, 1) == CUFFT_SUCCESS) cufftDestroy(warm);
    }
    warm_up(SFFT_BACKEND_CUDA, 0);
    std::printf("\ndevice: %s; memset + scatter + cufftExecR2C vs spfft2d CUDA backend (device output)\n",
                bench::device_name().c_str());
    print_header("side");
    Summary s;
    for (uint64_t n : sizes.empty() ? std::vector<uint64_t>{1024, 4096, 6144, 8219, 16384, 32768} : sizes)
      for (const std::string &f : families.empty() ? device_families : families)
        run_device(make_matrix(f, n, seed_of(101, n, f)), repeats, s);
    s.print("device");
  }
#endif
  std::printf("\nhost peak RSS: %.0f MiB\n", mib(bench::host_peak_rss()));
  return 0;
}
