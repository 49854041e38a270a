// SPDX-License-Identifier: Apache-2.0
// Sparse FFT benchmark: sfft_exec against the dense peer in the same run, on planted k-sparse spectra.
//   GPU: cuFFT C2C/Z2Z of all n points vs the CUDA plan (device input and outputs), n = 2^18..2^27 at
//        k = 1000 and k = 100..4000 at n = 2^27, and n = 5 x 2^20, 3 x 2^25 (not powers of two) at k =
//        1000; EXACT on noise-free input, ROBUST at 30 dB SNR; AUTO on
//        both at n = 2^27, k = 1000 (complex128); ROBUST with and without the comb pre-pass on the same
//        signals at n = 2^27, k = 1000, 30 and 20 dB (both dtypes).
//   CPU: threaded FFTW (FFTW_MEASURE) vs the CPU plan, n = 2^16..2^22 and 3 x 2^18 at k = 100.
// Each row: median of --repeats timed calls after warm-up, the ratio peer/sfft, support recovery,
// L1 error per planted coefficient and relative l2 error of the returned values against the peer's full
// transform, and the memory the plan holds (device: cudaMemGetInfo difference; host: peak RSS).
// usage: bench_sparse [--cpu-only | --gpu-only] [--repeats N] [--min-log2n M] [--max-log2n M] [--no-k-sweep]
#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "sparse_bench_common.hpp"
#include "sfft/sfft.h"

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <cufft.h>
#endif

namespace {

using namespace sparse_bench;  // planted spectra, signal_of, fftw_peer_time, check, gpu_time, device_white_noise

struct Accuracy {
  double recovery, l1, rel_l2;
};

// Compares sfft's output with the full spectrum `truth_at(f)`.
template <class TruthAt>
Accuracy accuracy(const Planted &p, const std::vector<uint64_t> &freqs, const std::vector<cd> &values,
                  TruthAt &&truth_at) {
  std::map<uint64_t, cd> got;
  for (std::size_t i = 0; i < freqs.size(); ++i) got[freqs[i]] = values[i];
  Accuracy a{0, 0, 0};
  for (uint64_t f : p.freqs) {
    auto it = got.find(f);
    a.recovery += it != got.end();
    a.l1 += std::abs((it != got.end() ? it->second : cd(0, 0)) - truth_at(f));
  }
  a.recovery /= static_cast<double>(p.freqs.size());
  a.l1 /= static_cast<double>(p.freqs.size());
  double num = 0, den = 0;
  for (const auto &[f, v] : got) {
    cd t = truth_at(f);
    num += std::norm(v - t);
    den += std::norm(t);
  }
  a.rel_l2 = den > 0 ? std::sqrt(num / den) : 1.0;
  return a;
}

void print_header(const char *peer) {
  std::printf(
      "| variant | dtype | n | k | SNR dB | %s ms | sfft ms | speed-up | recovery | L1/coef | rel l2 | "
      "sfft plan MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
      peer);
}

// n as the table prints it: 2^m, or c x 2^m for other lengths.
std::string length_label(uint64_t n) {
  int m = 0;
  while (((n >> m) & 1) == 0) ++m;
  const uint64_t odd = n >> m;
  return (odd == 1 ? "" : std::to_string(odd) + "x") + "2^" + std::to_string(m);
}

// Per-length seed offset: log2 n for powers of two (as before other lengths were benchmarked).
uint64_t length_tag(uint64_t n) {
  uint64_t m = 0;
  while ((uint64_t{1} << m) < n) ++m;
  return (uint64_t{1} << m) == n ? m : 100 + n % 97;
}

void print_row(const char *variant, bool dbl, uint64_t n, uint64_t k, double snr, double peer_s, double ours_s,
               const Accuracy &a, double mib) {
  char snr_text[16];
  if (std::isfinite(snr)) {
    std::snprintf(snr_text, sizeof snr_text, "%.0f", snr);
  } else {
    std::snprintf(snr_text, sizeof snr_text, "inf");
  }
  std::printf("| %s | %s | %s | %llu | %s | %.3f | %.3f | %.1fx | %.4f | %.2e | %.2e | %.0f |\n", variant,
              dbl ? "c128" : "c64", length_label(n).c_str(), static_cast<unsigned long long>(k), snr_text, peer_s * 1e3,
              ours_s * 1e3, peer_s / ours_s, a.recovery, a.l1, a.rel_l2, mib);
  std::fflush(stdout);
}

sfft_sparse_options knobs_for(bool exact) {
  sfft_sparse_options k;
  sfft_sparse_options_init(&k);
  k.variant = exact ? SFFT_SPARSE_EXACT : SFFT_SPARSE_ROBUST;
  return k;
}

// ---------------------------------------------------------------- CPU: FFTW vs the CPU plan

// Current resident set size (VmRSS), to measure what a plan holds.
std::size_t resident_bytes() {
  std::FILE *f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  std::size_t kib = 0;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, "VmRSS:", 6) == 0) kib = std::strtoull(line + 6, nullptr, 10);
  std::fclose(f);
  return kib * 1024;
}

template <class Real>
void cpu_case(uint64_t n, uint64_t k, bool exact, double snr, int repeats) {
  using C = std::complex<Real>;
  const bool dbl = sizeof(Real) == 8;
  Planted p = plant(n, k, true, 1000 + length_tag(n));
  // x = inverse DFT of the planted spectrum (+ white noise at snr), via FFTW in double.
  std::vector<cd> spectrum(n, cd(0, 0));
  double energy = 0;
  for (std::size_t i = 0; i < p.freqs.size(); ++i) energy += std::norm(p.values[i]);
  if (std::isfinite(snr)) {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> gauss(0, std::sqrt(energy / static_cast<double>(n) / std::pow(10, snr / 10) / 2));
    for (auto &v : spectrum) v = cd(gauss(rng), gauss(rng));
  }
  for (std::size_t i = 0; i < p.freqs.size(); ++i) spectrum[p.freqs[i]] += p.values[i];
  std::vector<C> x = signal_of<Real>(std::move(spectrum)), full(n);
  const double peer = fftw_peer_time(x, full, repeats);

  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CPU;
  sfft_sparse_options knobs = knobs_for(exact);
  sfft_plan plan = nullptr;
  std::size_t rss_before = resident_bytes();
  if (!check(sfft_create_ex(&plan, n, k, dbl ? SFFT_COMPLEX128 : SFFT_COMPLEX64, &opts, &knobs), "sfft_create")) return;
  std::vector<uint64_t> freqs(k);
  std::vector<C> values(k);
  uint64_t count = k;
  sfft_status status = SFFT_SUCCESS;
  double ours = bench::time_median(
      [&] {
        count = k;
        status = sfft_exec(plan, x.data(), freqs.data(), values.data(), &count);
      },
      repeats);
  double mib = static_cast<double>(resident_bytes() - rss_before) / (1 << 20);
  if (check(status, "sfft_exec")) {
    freqs.resize(count);
    std::vector<cd> got(values.begin(), values.begin() + static_cast<long>(count));
    Accuracy a = accuracy(p, freqs, got, [&](uint64_t f) { return cd(full[f]); });
    print_row(exact ? "EXACT" : "ROBUST", dbl, n, k, snr, peer, ours, a, mib);
  }
  sfft_destroy(plan);
}

// ---------------------------------------------------------------- GPU: cuFFT vs the CUDA plan

#if SFFT_HAVE_CUDA
bool cuda_ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return true;
  std::printf("%s failed: %s\n", what, cudaGetErrorString(e));
  return false;
}

// A plan to time on a case's signal, and its row label.
struct PlanRow {
  std::string label;
  sfft_sparse_options knobs;
};

// ROBUST as is and with two comb loops (default W and keep); then both with min_votes = 1, which finds
// more weak coefficients and lets more noise through unless the comb keeps it out.
std::vector<PlanRow> comb_rows() {
  sfft_sparse_options plain = knobs_for(false), comb = knobs_for(false);
  comb.comb_loops = 2;
  sfft_sparse_options plain_mv1 = plain, comb_mv1 = comb;
  plain_mv1.min_votes = 1;
  comb_mv1.min_votes = 1;
  return {{"ROBUST", plain}, {"ROBUST+comb", comb}, {"ROBUST,mv1", plain_mv1}, {"ROBUST+comb,mv1", comb_mv1}};
}

template <class Real>
// auto_variant: the plan uses SFFT_SPARSE_AUTO instead of the variant `exact` names (the input is still
// noise-free when `exact`). rows: the plans to time, one row each (default: the one `exact` and
// `auto_variant` name).
void gpu_case(uint64_t n, uint64_t k, bool exact, double snr, int repeats, bool auto_variant = false,
              std::vector<PlanRow> rows = {}) {
  using C = std::complex<Real>;
  const bool dbl = sizeof(Real) == 8;
  const cufftType type = dbl ? CUFFT_Z2Z : CUFFT_C2C;
  Planted p = plant(n, k, true, 2000 + length_tag(n) + 7 * k);
  void *spectrum = nullptr, *x = nullptr;
  if (!cuda_ok(cudaMalloc(&spectrum, n * sizeof(C)), "cudaMalloc spectrum") ||
      !cuda_ok(cudaMalloc(&x, n * sizeof(C)), "cudaMalloc x"))
    return;
  // Spectrum / n (white noise at snr, planted values overwrite their bins), then x = its unnormalised
  // inverse DFT, so that the forward DFT of x is the spectrum.
  double energy = 0;
  for (const cd &v : p.values) energy += std::norm(v);
  double nd = static_cast<double>(n);
  const double sigma = std::isfinite(snr) ? std::sqrt(energy / nd / std::pow(10, snr / 10) / 2) / nd : 0.0;
  device_white_noise(spectrum, n, dbl, sigma, 11 + length_tag(n));
  for (std::size_t i = 0; i < p.freqs.size(); ++i) {
    C v(p.values[i] / nd);
    cudaMemcpy(static_cast<C *>(spectrum) + p.freqs[i], &v, sizeof v, cudaMemcpyHostToDevice);
  }
  {
    cufftHandle inv;
    cufftPlan1d(&inv, static_cast<int>(n), type, 1);
    if (dbl) {
      cufftExecZ2Z(inv, static_cast<cufftDoubleComplex *>(spectrum), static_cast<cufftDoubleComplex *>(x),
                   CUFFT_INVERSE);
    } else {
      cufftExecC2C(inv, static_cast<cufftComplex *>(spectrum), static_cast<cufftComplex *>(x), CUFFT_INVERSE);
    }
    cudaDeviceSynchronize();
    cufftDestroy(inv);
  }

  // Peer: cuFFT forward of all n points (out of place into `spectrum`, which then is the reference).
  cufftHandle fwd;
  if (cufftPlan1d(&fwd, static_cast<int>(n), type, 1) != CUFFT_SUCCESS) {
    std::printf("cufftPlan1d failed for n = %s\n", length_label(n).c_str());
    cudaFree(spectrum);
    cudaFree(x);
    return;
  }
  double peer = gpu_time(
      [&] {
        if (dbl) {
          cufftExecZ2Z(fwd, static_cast<cufftDoubleComplex *>(x), static_cast<cufftDoubleComplex *>(spectrum),
                       CUFFT_FORWARD);
        } else {
          cufftExecC2C(fwd, static_cast<cufftComplex *>(x), static_cast<cufftComplex *>(spectrum), CUFFT_FORWARD);
        }
      },
      repeats);
  cufftDestroy(fwd);
  cudaDeviceSynchronize();

  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  if (rows.empty()) {
    sfft_sparse_options knobs = knobs_for(exact);
    if (auto_variant) knobs.variant = SFFT_SPARSE_AUTO;
    rows.push_back({auto_variant ? "AUTO" : exact ? "EXACT" : "ROBUST", knobs});
  }
  for (const PlanRow &row : rows) {
    std::size_t used_before = bench::device_used_bytes();
    sfft_plan plan = nullptr;
    if (check(sfft_create_ex(&plan, n, k, dbl ? SFFT_COMPLEX128 : SFFT_COMPLEX64, &opts, &row.knobs), "sfft_create")) {
      double mib = static_cast<double>(bench::device_used_bytes() - used_before) / (1 << 20);
      void *dfreqs = nullptr, *dvalues = nullptr;
      cudaMalloc(&dfreqs, k * sizeof(uint64_t));
      cudaMalloc(&dvalues, k * sizeof(C));
      uint64_t count = k;
      sfft_status status = SFFT_SUCCESS;
      double ours = gpu_time(
          [&] {
            count = k;
            status = sfft_exec(plan, x, static_cast<uint64_t *>(dfreqs), dvalues, &count);
          },
          repeats);
      if (check(status, "sfft_exec")) {
        std::vector<uint64_t> freqs(count);
        std::vector<C> values(count);
        cudaMemcpy(freqs.data(), dfreqs, count * sizeof(uint64_t), cudaMemcpyDeviceToHost);
        cudaMemcpy(values.data(), dvalues, count * sizeof(C), cudaMemcpyDeviceToHost);
        std::vector<cd> got(values.begin(), values.end());
        Accuracy a = accuracy(p, freqs, got, [&](uint64_t f) {
          C t;
          cudaMemcpy(&t, static_cast<C *>(spectrum) + f, sizeof t, cudaMemcpyDeviceToHost);
          return cd(t);
        });
        print_row(row.label.c_str(), dbl, n, k, snr, peer, ours, a, mib);
      }
      cudaFree(dfreqs);
      cudaFree(dvalues);
      sfft_destroy(plan);
    }
  }
  cudaFree(spectrum);
  cudaFree(x);
}
#endif

}  // namespace

int main(int argc, char **argv) {
  bool cpu = true, gpu = true, k_sweep = true;
  int repeats = 10, min_log2n = 0, max_log2n = 27;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cpu-only") {
      gpu = false;
    } else if (a == "--gpu-only") {
      cpu = false;
    } else if (a == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--min-log2n" && i + 1 < argc) {
      min_log2n = std::atoi(argv[++i]);
    } else if (a == "--max-log2n" && i + 1 < argc) {
      max_log2n = std::atoi(argv[++i]);
    } else if (a == "--no-k-sweep") {
      k_sweep = false;
    } else {
      std::printf(
          "usage: bench_sparse [--cpu-only | --gpu-only] [--repeats N] [--min-log2n M] [--max-log2n M] "
          "[--no-k-sweep]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  fftw_init_threads();
  fftwf_init_threads();
  std::printf("# sparse FFT benchmark, %s, device: %s, %u host threads, median of %d\n", bench::today().c_str(),
              bench::device_name().c_str(), std::thread::hardware_concurrency(), repeats);
  std::printf(
      "# EXACT rows: noise-free planted spectra; ROBUST rows: white noise at the SNR shown. Magnitudes "
      "log-uniform in [1, 10]; accuracy against the peer's full transform.\n");
#if SFFT_HAVE_CUDA
  if (gpu && sfft_cuda_device_count() > 0) {
    std::printf("\n## GPU: cuFFT (all n points) vs sfft CUDA plan, device pointers\n\n");
    print_header("cuFFT");
    for (bool exact : {true, false}) {
      double snr = exact ? INFINITY : 30.0;
      for (int log2n = std::max(18, min_log2n); log2n <= max_log2n; ++log2n) {
        gpu_case<float>(uint64_t{1} << log2n, 1000, exact, snr, repeats);
        gpu_case<double>(uint64_t{1} << log2n, 1000, exact, snr, repeats);
      }
      for (uint64_t k : {100, 500, 2000, 4000}) {
        if (!k_sweep) break;
        gpu_case<float>(uint64_t{1} << max_log2n, k, exact, snr, repeats);
        gpu_case<double>(uint64_t{1} << max_log2n, k, exact, snr, repeats);
      }
      // Lengths that are not powers of two (the buckets, 2048 / 4096 at k = 1000, divide them).
      for (uint64_t n : {uint64_t{5} << 20, uint64_t{3} << 25}) {
        if (n > uint64_t{1} << max_log2n || n < uint64_t{1} << min_log2n) continue;
        gpu_case<float>(n, 1000, exact, snr, repeats);
        gpu_case<double>(n, 1000, exact, snr, repeats);
      }
    }
    // AUTO (EXACT first, ROBUST when the signal is not exactly sparse) on both kinds of input.
    for (bool exact : {true, false})
      gpu_case<double>(uint64_t{1} << max_log2n, 1000, exact, exact ? INFINITY : 30.0, repeats, true);
    // The comb pre-pass: plain ROBUST and ROBUST with the comb on one signal each (same cuFFT time).
    for (double snr : {30.0, 20.0}) {
      gpu_case<float>(uint64_t{1} << max_log2n, 1000, false, snr, repeats, false, comb_rows());
      gpu_case<double>(uint64_t{1} << max_log2n, 1000, false, snr, repeats, false, comb_rows());
    }
  }
#endif
  if (cpu) {
    std::printf("\n## CPU: threaded FFTW (FFTW_MEASURE) vs sfft CPU plan\n\n");
    print_header("FFTW");
    for (bool exact : {true, false}) {
      double snr = exact ? INFINITY : 30.0;
      for (int log2n = std::max(16, min_log2n); log2n <= std::min(22, max_log2n); ++log2n) {
        cpu_case<float>(uint64_t{1} << log2n, 100, exact, snr, repeats);
        cpu_case<double>(uint64_t{1} << log2n, 100, exact, snr, repeats);
      }
      // A length that is not a power of two (B = 256 / 512 divide it).
      const uint64_t other_n = uint64_t{3} << 18;
      if (other_n >= uint64_t{1} << min_log2n && other_n <= uint64_t{1} << std::min(22, max_log2n)) {
        cpu_case<float>(other_n, 100, exact, snr, repeats);
        cpu_case<double>(other_n, 100, exact, snr, repeats);
      }
    }
  }
  return 0;
}
