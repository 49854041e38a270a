// SPDX-License-Identifier: Apache-2.0
// Batched sparse FFT benchmark (issue 19): sfft_exec_batch against the batched dense peer in the same run,
// on batches of planted k-sparse signals (EXACT plans, noise-free input, magnitudes log-uniform in [1, 10]).
//   GPU: one cufftPlanMany C2C/Z2Z plan of the batch vs a CUDA plan, device input and outputs.
//   CPU: one fftw_plan_many_dft plan of the batch (FFTW_MEASURE, --threads threads) vs a CPU plan with the
//        same threads (threads over signals).
// Suite: n = 2^min..2^max (default 2^14..2^24), k = 10, 100, 1000 (k <= n/16), batch 1, 16, 64, 256, 1024
// where the batch's input and the peer's output fit --max-gib. Each row: median of --repeats timed calls
// after warm-up (the first sfft_exec_batch call allocates the batch workspace, outside the timing), the
// ratio peer/sfft, the mean and the minimum over signals of the planted support recovered, and the largest
// relative l2 error over signals of the returned values against the planted spectrum. GPU signals are made
// on the device (planted bins of a zeroed spectrum, one inverse transform of the peer's plan), so rows of
// gigabytes cost no host FFTs or copies; CPU signals by FFTW on the host. The summary gives
// the minimum ratio per backend and dtype, and the crossover n (the smallest n from which sfft is faster at
// every larger n measured) per k and batch.
// --stages (GPU rows): after each row, a second plan made with SFFT_SPARSE_STAGE_TIMES=1 runs the batch twice
// and the library prints its stage times (cudaEvents: uploads, fold, normalise, fft, peel per loop, rank) to
// stderr, the second line warm; run with 2>&1.
// usage: bench_sparse_batch [--cpu-only | --gpu-only] [--repeats N] [--min-log2n M] [--max-log2n M]
//                           [--threads T] [--max-gib G] [--batches a,b,..] [--ks a,b,..] [--dtype c64|c128]
//                           [--stages]
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench_support.hpp"
#include "sfft/sfft.h"

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <cufft.h>
#endif

namespace {

using cd = std::complex<double>;

struct Settings {
  bool cpu = true, gpu = true, stages = false;
  int repeats = 5, min_log2n = 14, max_log2n = 24, threads = 0;
  double max_gib = 8;
  std::vector<uint64_t> batches{1, 16, 64, 256, 1024}, ks{10, 100, 1000};
  std::vector<bool> dtypes{false, true};  // complex64, complex128
};

// The planted spectra of a batch: signal s has X[f] = truth[s][f] on its k bins, zero elsewhere.
struct Planted {
  std::vector<std::map<uint64_t, cd>> truth;
};

Planted plant(uint64_t n, uint64_t k, uint64_t batch, uint64_t seed) {
  Planted p;
  p.truth.resize(batch);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  for (uint64_t s = 0; s < batch; ++s) {
    while (p.truth[s].size() < k) {
      const uint64_t f = rng() % n;
      if (p.truth[s].count(f) != 0) continue;
      p.truth[s][f] = std::polar(std::exp(unit(rng) * std::log(10.0)), 2 * M_PI * unit(rng));
    }
  }
  return p;
}

// Host signals (CPU rows): the planted spectra's inverse DFTs in the plan's precision, contiguous (x_dist = n).
template <class Real>
std::vector<std::complex<Real>> host_signals(const Planted &p, uint64_t n) {
  const std::size_t batch = p.truth.size();
  std::vector<std::complex<Real>> x(n * batch);
  std::vector<cd> spectrum(n), xd(n);
  fftw_plan inverse = fftw_plan_dft_1d(static_cast<int>(n), reinterpret_cast<fftw_complex *>(spectrum.data()),
                                       reinterpret_cast<fftw_complex *>(xd.data()), FFTW_BACKWARD, FFTW_ESTIMATE);
  for (std::size_t s = 0; s < batch; ++s) {
    std::fill(spectrum.begin(), spectrum.end(), cd(0, 0));
    for (const auto &[f, v] : p.truth[s]) spectrum[f] = v;
    fftw_execute(inverse);
    for (uint64_t t = 0; t < n; ++t) x[s * n + t] = std::complex<Real>(xd[t] / static_cast<double>(n));
  }
  fftw_destroy_plan(inverse);
  return x;
}

struct Accuracy {
  double recovery_mean = 0, recovery_min = 1, rel_l2_max = 0;
};

// Every signal's returned coefficients against its planted spectrum (a frequency not planted has X = 0).
template <class Real>
Accuracy score(const Planted &p, uint64_t k, const std::vector<uint64_t> &freqs,
               const std::vector<std::complex<Real>> &values, const std::vector<uint64_t> &counts) {
  Accuracy a;
  const std::size_t batch = p.truth.size();
  for (std::size_t s = 0; s < batch; ++s) {
    std::map<uint64_t, cd> got;
    double num = 0, den = 0;
    for (uint64_t i = 0; i < counts[s]; ++i) {
      const uint64_t f = freqs[s * k + i];
      const auto planted = p.truth[s].find(f);
      const cd v(values[s * k + i]), t = planted == p.truth[s].end() ? cd(0, 0) : planted->second;
      got[f] = v;
      num += std::norm(v - t);
      den += std::norm(t);
    }
    double hits = 0;
    for (const auto &planted : p.truth[s]) hits += got.count(planted.first) != 0;
    const double recovery = hits / static_cast<double>(k);
    a.recovery_mean += recovery / static_cast<double>(batch);
    a.recovery_min = std::min(a.recovery_min, recovery);
    a.rel_l2_max = std::max(a.rel_l2_max, den > 0 ? std::sqrt(num / den) : 1.0);
  }
  return a;
}

struct Row {
  std::string backend;
  bool dbl;
  uint64_t n, k, batch;
  double peer_s, ours_s;
};
std::vector<Row> rows;

void print_header() {
  std::printf(
      "| backend | dtype | n | k | batch | peer | peer ms | sfft ms | speed-up | recovery mean | recovery min | "
      "rel l2 max |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

void print_row(const Row &r, const char *peer, const Accuracy &a) {
  std::printf("| %s | %s | 2^%d | %llu | %llu | %s | %.3f | %.3f | %.2fx | %.4f | %.4f | %.2e |\n", r.backend.c_str(),
              r.dbl ? "c128" : "c64", static_cast<int>(std::log2(static_cast<double>(r.n))),
              static_cast<unsigned long long>(r.k), static_cast<unsigned long long>(r.batch), peer, r.peer_s * 1e3,
              r.ours_s * 1e3, r.peer_s / r.ours_s, a.recovery_mean, a.recovery_min, a.rel_l2_max);
  std::fflush(stdout);
  rows.push_back(r);
}

bool check(sfft_status s, const char *what) {
  if (s == SFFT_SUCCESS) return true;
  std::printf("%s failed: %s: %s\n", what, sfft_status_string(s), sfft_last_error());
  return false;
}

sfft_sparse_options exact_knobs() {
  sfft_sparse_options knobs;
  sfft_sparse_options_init(&knobs);
  knobs.variant = SFFT_SPARSE_EXACT;
  return knobs;
}

// ---------------------------------------------------------------- CPU: batched FFTW vs threads over signals

template <class Real>
struct Fftw;
template <>
struct Fftw<double> {
  using plan = fftw_plan;
  static plan many(int n, int batch, std::complex<double> *in, std::complex<double> *out, int threads) {
    fftw_plan_with_nthreads(threads);
    return fftw_plan_many_dft(1, &n, batch, reinterpret_cast<fftw_complex *>(in), nullptr, 1, n,
                              reinterpret_cast<fftw_complex *>(out), nullptr, 1, n, FFTW_FORWARD, FFTW_MEASURE);
  }
  static void run(plan p, std::complex<double> *in, std::complex<double> *out) {
    fftw_execute_dft(p, reinterpret_cast<fftw_complex *>(in), reinterpret_cast<fftw_complex *>(out));
  }
  static void destroy(plan p) { fftw_destroy_plan(p); }
};
template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  static plan many(int n, int batch, std::complex<float> *in, std::complex<float> *out, int threads) {
    fftwf_plan_with_nthreads(threads);
    return fftwf_plan_many_dft(1, &n, batch, reinterpret_cast<fftwf_complex *>(in), nullptr, 1, n,
                               reinterpret_cast<fftwf_complex *>(out), nullptr, 1, n, FFTW_FORWARD, FFTW_MEASURE);
  }
  static void run(plan p, std::complex<float> *in, std::complex<float> *out) {
    fftwf_execute_dft(p, reinterpret_cast<fftwf_complex *>(in), reinterpret_cast<fftwf_complex *>(out));
  }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
};

template <class Real>
void cpu_case(const Settings &st, uint64_t n, uint64_t k, uint64_t batch) {
  using C = std::complex<Real>;
  const bool dbl = sizeof(Real) == 8;
  const Planted planted = plant(n, k, batch, 1000 + n + k + batch);
  std::vector<C> x = host_signals<Real>(planted, n), full(n * batch);
  {
    std::vector<C> scratch(n * batch);  // FFTW_MEASURE overwrites its arrays while planning
    typename Fftw<Real>::plan p =
        Fftw<Real>::many(static_cast<int>(n), static_cast<int>(batch), scratch.data(), full.data(), st.threads);
    const double peer = bench::time_median([&] { Fftw<Real>::run(p, x.data(), full.data()); }, st.repeats);
    Fftw<Real>::destroy(p);

    sfft_options o;
    sfft_options_init(&o);
    o.backend = SFFT_BACKEND_CPU;
    o.threads = st.threads;
    sfft_sparse_options knobs = exact_knobs();
    sfft_plan plan = nullptr;
    if (!check(sfft_create_ex(&plan, n, k, dbl ? SFFT_COMPLEX128 : SFFT_COMPLEX64, &o, &knobs), "sfft_create")) return;
    std::vector<uint64_t> freqs(k * batch), counts(batch);
    std::vector<C> values(k * batch);
    bool ok = true;
    auto exec = [&] {
      std::fill(counts.begin(), counts.end(), k);
      ok = ok && check(sfft_exec_batch(plan, batch, x.data(), n, freqs.data(), values.data(), k, counts.data()),
                       "sfft_exec_batch");
    };
    const double ours = bench::time_median(exec, st.repeats);
    sfft_destroy(plan);
    if (!ok) return;
    print_row({"CPU", dbl, n, k, batch, peer, ours}, "FFTW many", score(planted, k, freqs, values, counts));
  }
}

// ---------------------------------------------------------------- GPU: cufftPlanMany vs the CUDA plan

#if SFFT_HAVE_CUDA
template <class Real>
void gpu_case(const Settings &st, uint64_t n, uint64_t k, uint64_t batch) {
  using C = std::complex<Real>;
  const bool dbl = sizeof(Real) == 8;
  const Planted planted = plant(n, k, batch, 1000 + n + k + batch);
  const std::size_t bytes = n * batch * sizeof(C);
  void *dx = nullptr, *dfull = nullptr, *dfreqs = nullptr, *dvalues = nullptr;
  BENCH_CUDA(cudaMalloc(&dx, bytes));
  BENCH_CUDA(cudaMalloc(&dfull, bytes));
  BENCH_CUDA(cudaMalloc(&dfreqs, k * batch * sizeof(uint64_t)));
  BENCH_CUDA(cudaMalloc(&dvalues, k * batch * sizeof(C)));
  cufftHandle fft;
  int len = static_cast<int>(n);
  if (cufftPlanMany(&fft, 1, &len, nullptr, 1, len, nullptr, 1, len, dbl ? CUFFT_Z2Z : CUFFT_C2C,
                    static_cast<int>(batch)) != CUFFT_SUCCESS) {
    std::printf("cufftPlanMany failed for n = %llu, batch = %llu\n", static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(batch));
    std::exit(1);
  }
  // The signals: each planted value / n into a zeroed spectrum (dfull), then one inverse transform into dx.
  BENCH_CUDA(cudaMemset(dfull, 0, bytes));
  for (uint64_t s = 0; s < batch; ++s) {
    for (const auto &[f, v] : planted.truth[s]) {
      const C scaled(v / static_cast<double>(n));
      BENCH_CUDA(cudaMemcpy(static_cast<C *>(dfull) + s * n + f, &scaled, sizeof scaled, cudaMemcpyHostToDevice));
    }
  }
  if ((dbl ? cufftExecZ2Z(fft, static_cast<cufftDoubleComplex *>(dfull), static_cast<cufftDoubleComplex *>(dx),
                          CUFFT_INVERSE)
           : cufftExecC2C(fft, static_cast<cufftComplex *>(dfull), static_cast<cufftComplex *>(dx), CUFFT_INVERSE)) !=
      CUFFT_SUCCESS) {
    std::printf("cuFFT inverse (signal generation) failed for n = %llu, batch = %llu\n",
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(batch));
    std::exit(1);
  }
  BENCH_CUDA(cudaDeviceSynchronize());
  auto run_peer = [&] {
    if (dbl) {
      cufftExecZ2Z(fft, static_cast<cufftDoubleComplex *>(dx), static_cast<cufftDoubleComplex *>(dfull), CUFFT_FORWARD);
    } else {
      cufftExecC2C(fft, static_cast<cufftComplex *>(dx), static_cast<cufftComplex *>(dfull), CUFFT_FORWARD);
    }
    BENCH_CUDA(cudaDeviceSynchronize());
  };
  const double peer = bench::time_median(run_peer, st.repeats);
  cufftDestroy(fft);

  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  sfft_sparse_options knobs = exact_knobs();
  sfft_plan plan = nullptr;
  std::vector<uint64_t> freqs(k * batch), counts(batch);
  std::vector<C> values(k * batch);
  if (check(sfft_create_ex(&plan, n, k, dbl ? SFFT_COMPLEX128 : SFFT_COMPLEX64, &o, &knobs), "sfft_create")) {
    bool ok = true;
    auto exec_on = [&](sfft_plan p) {
      std::fill(counts.begin(), counts.end(), k);
      ok = ok && check(sfft_exec_batch(p, batch, dx, n, static_cast<uint64_t *>(dfreqs), dvalues, k, counts.data()),
                       "sfft_exec_batch");
    };
    const double ours = bench::time_median([&] { exec_on(plan); }, st.repeats);
    sfft_destroy(plan);
    if (ok && st.stages) {
      setenv("SFFT_SPARSE_STAGE_TIMES", "1", 1);  // read when the batch engine is made (the first batched call)
      sfft_plan timed = nullptr;
      if (check(sfft_create_ex(&timed, n, k, dbl ? SFFT_COMPLEX128 : SFFT_COMPLEX64, &o, &knobs), "sfft_create")) {
        std::printf("stages of the next row (stderr: the second line is warm):\n");
        std::fflush(stdout);
        exec_on(timed);
        exec_on(timed);
        std::fflush(stderr);
        sfft_destroy(timed);
      }
      unsetenv("SFFT_SPARSE_STAGE_TIMES");
    }
    if (ok) {
      BENCH_CUDA(cudaMemcpy(freqs.data(), dfreqs, freqs.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
      BENCH_CUDA(cudaMemcpy(values.data(), dvalues, values.size() * sizeof(C), cudaMemcpyDeviceToHost));
      print_row({"GPU", dbl, n, k, batch, peer, ours}, "cuFFT many", score(planted, k, freqs, values, counts));
    }
  }
  cudaFree(dx);
  cudaFree(dfull);
  cudaFree(dfreqs);
  cudaFree(dvalues);
}
#endif

std::vector<uint64_t> parse_list(const char *text) {
  std::vector<uint64_t> v;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::strtoull(item.c_str(), nullptr, 10));
  return v;
}

void summary() {
  std::printf("\n### Summary\n\n| backend | dtype | min speed-up | at |\n|---|---|---|---|\n");
  for (const char *backend : {"CPU", "GPU"}) {
    for (bool dbl : {false, true}) {
      const Row *worst = nullptr;
      for (const Row &r : rows)
        if (r.backend == backend && r.dbl == dbl &&
            (worst == nullptr || r.peer_s / r.ours_s < worst->peer_s / worst->ours_s))
          worst = &r;
      if (worst == nullptr) continue;
      std::printf("| %s | %s | %.2fx | n = 2^%d, k = %llu, batch %llu |\n", backend, dbl ? "c128" : "c64",
                  worst->peer_s / worst->ours_s, static_cast<int>(std::log2(static_cast<double>(worst->n))),
                  static_cast<unsigned long long>(worst->k), static_cast<unsigned long long>(worst->batch));
    }
  }
  // Crossover: per (backend, dtype, k, batch), the smallest n from which every measured larger n is faster.
  std::printf("\n| backend | dtype | k | batch | crossover n |\n|---|---|---|---|---|\n");
  std::map<std::tuple<std::string, bool, uint64_t, uint64_t>, std::vector<const Row *>> series;
  for (const Row &r : rows) series[{r.backend, r.dbl, r.k, r.batch}].push_back(&r);
  for (auto &[key, list] : series) {
    std::sort(list.begin(), list.end(), [](const Row *a, const Row *b) { return a->n < b->n; });
    std::string crossover = "none measured";
    for (std::size_t i = list.size(); i-- > 0;) {
      if (list[i]->peer_s < list[i]->ours_s) break;
      crossover = "2^" + std::to_string(static_cast<int>(std::log2(static_cast<double>(list[i]->n))));
    }
    std::printf("| %s | %s | %llu | %llu | %s |\n", std::get<0>(key).c_str(), std::get<1>(key) ? "c128" : "c64",
                static_cast<unsigned long long>(std::get<2>(key)), static_cast<unsigned long long>(std::get<3>(key)),
                crossover.c_str());
  }
}

}  // namespace

int main(int argc, char **argv) {
  Settings st;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--cpu-only") {
      st.gpu = false;
    } else if (a == "--gpu-only") {
      st.cpu = false;
    } else if (a == "--stages") {
      st.stages = true;
    } else if (a == "--repeats" && more) {
      st.repeats = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--min-log2n" && more) {
      st.min_log2n = std::atoi(argv[++i]);
    } else if (a == "--max-log2n" && more) {
      st.max_log2n = std::atoi(argv[++i]);
    } else if (a == "--threads" && more) {
      st.threads = std::atoi(argv[++i]);
    } else if (a == "--max-gib" && more) {
      st.max_gib = std::atof(argv[++i]);
    } else if (a == "--batches" && more) {
      st.batches = parse_list(argv[++i]);
    } else if (a == "--ks" && more) {
      st.ks = parse_list(argv[++i]);
    } else if (a == "--dtype" && more) {
      const std::string d = argv[++i];
      st.dtypes = {d == "c128"};
    } else {
      std::fprintf(stderr,
                   "usage: %s [--cpu-only | --gpu-only] [--repeats N] [--min-log2n M] [--max-log2n M] [--threads T] "
                   "[--max-gib G] [--batches a,b,..] [--ks a,b,..] [--dtype c64|c128] [--stages]\n",
                   argv[0]);
      return 2;
    }
  }
  if (st.threads <= 0) st.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  fftw_init_threads();
  fftwf_init_threads();
  std::printf("# bench_sparse_batch, %s, device: %s, CPU threads %d, median of %d\n\n", bench::today().c_str(),
              bench::device_name().c_str(), st.threads, st.repeats);
  print_header();
  for (int m = st.min_log2n; m <= st.max_log2n; ++m) {
    const uint64_t n = uint64_t{1} << m;
    for (uint64_t k : st.ks) {
      if (k * 16 > n) continue;
      for (uint64_t batch : st.batches) {
        for (bool dbl : st.dtypes) {
          // GPU: the batch's input and the peer's output in device memory; CPU: those, the planner's scratch
          // and the double-precision generation on the host.
          const double gib = static_cast<double>(n * batch) * (dbl ? 16 : 8) / (1u << 30);
          if (st.cpu && 4 * gib <= st.max_gib)
            dbl ? cpu_case<double>(st, n, k, batch) : cpu_case<float>(st, n, k, batch);
#if SFFT_HAVE_CUDA
          if (st.gpu && 2 * gib <= st.max_gib && sfft_cuda_device_count() > 0)
            dbl ? gpu_case<double>(st, n, k, batch) : gpu_case<float>(st, n, k, batch);
#endif
        }
      }
    }
  }
  summary();
  return 0;
}
