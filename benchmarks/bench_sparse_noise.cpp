// SPDX-License-Identifier: Apache-2.0
// The sparse FFT under white noise (issue 24, docs/sparse-noise.md): an SNR sweep of sfft_exec against the
// full FFT in the same run.
//   Rows: SNR -5..40 dB x magnitudes (unit, log-uniform [1, 10]) x n (2^20, 2^24) x k (100, 1000), ROBUST
//   (and AUTO with --auto), complex128 (complex64 too with --both-dtypes); GPU: cuFFT vs the CUDA plan (device
//   pointers), CPU: threaded FFTW (FFTW_MEASURE) vs the CPU plan.
//   Columns: support recall of sfft and of the reference line (the full FFT's k largest |X|, what a dense
//   transform + top-k recovers), relative l2 error of sfft's values against the full FFT at the returned
//   frequencies, the FFT's and sfft's times (median of --repeats), their ratio (FFT / sfft: > 1 means sfft is
//   faster; the FFT alone, so the ratio understates sfft's edge over FFT + top-k), and the exec report
//   (explained, estimated / true noise floor per bin, unexplained).
// SNR = total signal energy / total noise energy (bench_sparse.cpp's convention). The summary line gives the
// minimum ratio and the least recall over the rows at and above 3 dB (unit) / 20 dB (log-uniform).
// usage: bench_sparse_noise [--cpu-only | --gpu-only] [--repeats N] [--max-log2n M] [--both-dtypes] [--auto]
//                           [--q4] [--quick] [--large]
//   --q4: also ROBUST with bits_per_stage = 4 (the default before issue 24) on the same signals
//   --quick: 3, 10, 20, 30 dB only; --large: also n = 2^27, k = 1000 (GPU, unit magnitudes, 10 and 30 dB)
#include <fftw3.h>

#include <algorithm>
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

// The k largest |X| of the full spectrum (the reference line's support).
std::vector<uint64_t> top_k(const std::vector<double> &mag2, uint64_t k) {
  std::vector<uint64_t> idx(mag2.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::nth_element(idx.begin(), idx.begin() + static_cast<long>(k), idx.end(),
                   [&](uint64_t a, uint64_t b) { return mag2[a] > mag2[b]; });
  idx.resize(k);
  return idx;
}

double recall_of(const Planted &p, const std::vector<uint64_t> &freqs) {
  std::vector<uint64_t> got(freqs);
  std::sort(got.begin(), got.end());
  std::size_t hits = 0;
  for (uint64_t f : p.freqs) hits += std::binary_search(got.begin(), got.end(), f);
  return static_cast<double>(hits) / static_cast<double>(p.freqs.size());
}

// A plan to run on each signal, and its row label.
struct Variant {
  std::string label;
  sfft_sparse_options knobs;
};

struct Row {
  std::string where, variant;
  bool dbl;
  int log2n;
  uint64_t k;
  bool log_uniform;
  double snr;
  double peer_s, ours_s;
  double recall, reference_recall, rel_l2;
  sfft_report report;
  double true_floor;
};

struct VariantSummary {
  double min_ratio = 1e300;
  double min_recall_unit_3db = 1, min_recall_log_20db = 1;
  int rows = 0;
};
// Per row label (variant), in the order the labels first appear.
struct Summary {
  std::vector<std::pair<std::string, VariantSummary>> variants;
  VariantSummary &of(const std::string &label) {
    for (auto &v : variants)
      if (v.first == label) return v.second;
    variants.push_back({label, VariantSummary{}});
    return variants.back().second;
  }
};

void print_header(const char *peer) {
  std::printf(
      "| backend | variant | dtype | n | k | magnitudes | SNR dB | recall | %s+top-k recall | rel l2 | %s ms | "
      "sfft ms | %s/sfft | explained | noise/bin est/true | unexplained |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
      peer, peer, peer);
}

void print_row(const Row &r, Summary &summary) {
  VariantSummary &s = summary.of(r.variant);
  std::printf(
      "| %s | %s | %s | 2^%d | %llu | %s | %g | %.4f | %.4f | %.2e | %.3f | %.3f | %.2fx | %.3f | %.3f | %d |\n",
      r.where.c_str(), r.variant.c_str(), r.dbl ? "c128" : "c64", r.log2n, static_cast<unsigned long long>(r.k),
      r.log_uniform ? "log-uniform [1,10]" : "unit", r.snr, r.recall, r.reference_recall, r.rel_l2, r.peer_s * 1e3,
      r.ours_s * 1e3, r.peer_s / r.ours_s, r.report.explained,
      r.true_floor > 0 ? r.report.noise_floor / r.true_floor : 0.0, r.report.unexplained);
  std::fflush(stdout);
  s.min_ratio = std::min(s.min_ratio, r.peer_s / r.ours_s);
  if (!r.log_uniform && r.snr >= 3) s.min_recall_unit_3db = std::min(s.min_recall_unit_3db, r.recall);
  if (r.log_uniform && r.snr >= 20) s.min_recall_log_20db = std::min(s.min_recall_log_20db, r.recall);
  ++s.rows;
}

void print_summary(const char *what, const Summary &summary) {
  for (const auto &[label, s] : summary.variants)
    std::printf(
        "\n%s, %s: summary over %d rows: minimum FFT/sfft ratio %.2fx; least recall, unit magnitudes at >= 3 dB: "
        "%.4f; log-uniform at >= 20 dB: %.4f\n",
        what, label.c_str(), s.rows, s.min_ratio, s.min_recall_unit_3db, s.min_recall_log_20db);
}

sfft_sparse_options knobs_for(sfft_sparse_variant v) {
  sfft_sparse_options k;
  sfft_sparse_options_init(&k);
  k.variant = v;
  return k;
}

// Values against the full spectrum at the returned frequencies.
template <class TruthAt>
double rel_l2(const std::vector<uint64_t> &freqs, const std::vector<cd> &values, TruthAt &&truth_at) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < freqs.size(); ++i) {
    const cd t = truth_at(freqs[i]);
    num += std::norm(values[i] - t);
    den += std::norm(t);
  }
  return den > 0 ? std::sqrt(num / den) : 1.0;
}

// ---------------------------------------------------------------- CPU: FFTW vs the CPU plan

template <class Real>
void cpu_rows(int log2n, uint64_t k, bool log_uniform, double snr, int repeats, const std::vector<Variant> &variants,
              Summary &summary) {
  using C = std::complex<Real>;
  const bool dbl = sizeof(Real) == 8;
  const uint64_t n = uint64_t{1} << log2n;
  const Planted p = plant(n, k, log_uniform, 100 + 7 * static_cast<uint64_t>(log2n) + k);
  std::vector<cd> spectrum(n);
  const double noise_energy = p.energy / std::pow(10, snr / 10);
  std::mt19937_64 rng(17 + static_cast<uint64_t>(snr * 10 + 100));
  std::normal_distribution<double> gauss(0, std::sqrt(noise_energy / static_cast<double>(n) / 2));
  for (auto &v : spectrum) v = cd(gauss(rng), gauss(rng));
  for (std::size_t i = 0; i < k; ++i) spectrum[p.freqs[i]] += p.values[i];
  std::vector<C> x = signal_of<Real>(std::move(spectrum)), full(n);
  const double peer = fftw_peer_time(x, full, repeats);
  std::vector<double> mag2(n);
  for (uint64_t i = 0; i < n; ++i) mag2[i] = std::norm(cd(full[i]));
  const double reference = recall_of(p, top_k(mag2, k));

  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CPU;
  for (const Variant &v : variants) {
    sfft_sparse_options knobs = v.knobs;
    sfft_plan plan = nullptr;
    if (!check(sfft_create_ex(&plan, n, k, dbl ? SFFT_COMPLEX128 : SFFT_COMPLEX64, &opts, &knobs), "sfft_create"))
      continue;
    std::vector<uint64_t> freqs(k);
    std::vector<C> values(k);
    uint64_t count = k;
    sfft_status status = SFFT_SUCCESS;
    const double ours = bench::time_median(
        [&] {
          count = k;
          status = sfft_exec(plan, x.data(), freqs.data(), values.data(), &count);
        },
        repeats);
    Row r{"CPU", v.label, dbl, log2n,     k, log_uniform, snr,
          peer,  ours,    0,   reference, 0, {},          noise_energy / static_cast<double>(n)};
    r.report.struct_size = sizeof r.report;
    if (check(status, "sfft_exec") && check(sfft_get_report(plan, 0, &r.report), "sfft_get_report")) {
      freqs.resize(count);
      std::vector<cd> got(values.begin(), values.begin() + static_cast<long>(count));
      r.recall = recall_of(p, freqs);
      r.rel_l2 = rel_l2(freqs, got, [&](uint64_t f) { return cd(full[f]); });
      print_row(r, summary);
    }
    sfft_destroy(plan);
  }
}

// ---------------------------------------------------------------- GPU: cuFFT vs the CUDA plan

#if SFFT_HAVE_CUDA

template <class Real>
void gpu_rows(int log2n, uint64_t k, bool log_uniform, double snr, int repeats, const std::vector<Variant> &variants,
              Summary &summary) {
  using C = std::complex<Real>;
  const bool dbl = sizeof(Real) == 8;
  const cufftType type = dbl ? CUFFT_Z2Z : CUFFT_C2C;
  const uint64_t n = uint64_t{1} << log2n;
  const double nd = static_cast<double>(n);
  const Planted p = plant(n, k, log_uniform, 200 + 7 * static_cast<uint64_t>(log2n) + k);
  void *spectrum = nullptr, *x = nullptr;
  BENCH_CUDA(cudaMalloc(&spectrum, n * sizeof(C)));
  BENCH_CUDA(cudaMalloc(&x, n * sizeof(C)));
  // Spectrum / n: white noise at snr plus the planted values; x = its unnormalised inverse DFT.
  const double noise_energy = p.energy / std::pow(10, snr / 10);
  const double sigma = std::sqrt(noise_energy / nd / 2) / nd;
  device_white_noise(spectrum, n, dbl, sigma, 31 + static_cast<uint64_t>(snr * 10 + 100) + 1000 * log2n);
  for (std::size_t i = 0; i < k; ++i) {
    C v;
    BENCH_CUDA(cudaMemcpy(&v, static_cast<C *>(spectrum) + p.freqs[i], sizeof v, cudaMemcpyDeviceToHost));
    v += C(p.values[i] / nd);
    BENCH_CUDA(cudaMemcpy(static_cast<C *>(spectrum) + p.freqs[i], &v, sizeof v, cudaMemcpyHostToDevice));
  }
  cufftHandle plan_fft;
  if (cufftPlan1d(&plan_fft, static_cast<int>(n), type, 1) != CUFFT_SUCCESS) {
    std::printf("cufftPlan1d failed for n = 2^%d\n", log2n);
    return;
  }
  auto exec = [&](void *in, void *out, int direction) {
    if (dbl) {
      cufftExecZ2Z(plan_fft, static_cast<cufftDoubleComplex *>(in), static_cast<cufftDoubleComplex *>(out), direction);
    } else {
      cufftExecC2C(plan_fft, static_cast<cufftComplex *>(in), static_cast<cufftComplex *>(out), direction);
    }
  };
  exec(spectrum, x, CUFFT_INVERSE);
  BENCH_CUDA(cudaDeviceSynchronize());
  // Peer: cuFFT forward of all n points into `spectrum`, which then is the reference.
  const double peer = gpu_time([&] { exec(x, spectrum, CUFFT_FORWARD); }, repeats);
  cufftDestroy(plan_fft);
  std::vector<C> full(n);
  BENCH_CUDA(cudaMemcpy(full.data(), spectrum, n * sizeof(C), cudaMemcpyDeviceToHost));
  std::vector<double> mag2(n);
  for (uint64_t i = 0; i < n; ++i) mag2[i] = std::norm(cd(full[i]));
  const double reference = recall_of(p, top_k(mag2, k));

  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  void *dfreqs = nullptr, *dvalues = nullptr;
  BENCH_CUDA(cudaMalloc(&dfreqs, k * sizeof(uint64_t)));
  BENCH_CUDA(cudaMalloc(&dvalues, k * sizeof(C)));
  for (const Variant &v : variants) {
    sfft_sparse_options knobs = v.knobs;
    sfft_plan plan = nullptr;
    if (!check(sfft_create_ex(&plan, n, k, dbl ? SFFT_COMPLEX128 : SFFT_COMPLEX64, &opts, &knobs), "sfft_create"))
      continue;
    uint64_t count = k;
    sfft_status status = SFFT_SUCCESS;
    const double ours = gpu_time(
        [&] {
          count = k;
          status = sfft_exec(plan, x, static_cast<uint64_t *>(dfreqs), dvalues, &count);
        },
        repeats);
    Row r{"GPU", v.label, dbl, log2n, k, log_uniform, snr, peer, ours, 0, reference, 0, {}, noise_energy / nd};
    r.report.struct_size = sizeof r.report;
    if (check(status, "sfft_exec") && check(sfft_get_report(plan, 0, &r.report), "sfft_get_report")) {
      std::vector<uint64_t> freqs(count);
      std::vector<C> values(count);
      BENCH_CUDA(cudaMemcpy(freqs.data(), dfreqs, count * sizeof(uint64_t), cudaMemcpyDeviceToHost));
      BENCH_CUDA(cudaMemcpy(values.data(), dvalues, count * sizeof(C), cudaMemcpyDeviceToHost));
      std::vector<cd> got(values.begin(), values.end());
      r.recall = recall_of(p, freqs);
      r.rel_l2 = rel_l2(freqs, got, [&](uint64_t f) { return cd(full[f]); });
      print_row(r, summary);
    }
    sfft_destroy(plan);
  }
  cudaFree(dfreqs);
  cudaFree(dvalues);
  cudaFree(spectrum);
  cudaFree(x);
}
#endif

}  // namespace

int main(int argc, char **argv) {
  bool cpu = true, gpu = true, both_dtypes = false, with_auto = false, quick = false, q4 = false, large = false;
  int repeats = 10, max_log2n = 24;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cpu-only") {
      gpu = false;
    } else if (a == "--gpu-only") {
      cpu = false;
    } else if (a == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--max-log2n" && i + 1 < argc) {
      max_log2n = std::atoi(argv[++i]);
    } else if (a == "--both-dtypes") {
      both_dtypes = true;
    } else if (a == "--auto") {
      with_auto = true;
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--q4") {
      q4 = true;
    } else if (a == "--large") {
      large = true;
    } else {
      std::printf(
          "usage: bench_sparse_noise [--cpu-only | --gpu-only] [--repeats N] [--max-log2n M] [--both-dtypes] "
          "[--auto] [--q4] [--quick] [--large]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  fftw_init_threads();
  fftwf_init_threads();
  const std::vector<double> snrs =
      quick ? std::vector<double>{3, 10, 20, 30} : std::vector<double>{-5, 0, 3, 5, 10, 15, 20, 30, 40};
  std::vector<Variant> variants{{"ROBUST", knobs_for(SFFT_SPARSE_ROBUST)}};
  if (with_auto) variants.push_back({"AUTO", knobs_for(SFFT_SPARSE_AUTO)});
  if (q4) {
    Variant old{"ROBUST q=4", knobs_for(SFFT_SPARSE_ROBUST)};
    old.knobs.bits_per_stage = 4;
    variants.push_back(old);
  }
  std::printf("# sparse FFT under white noise, %s, device: %s, %u host threads, median of %d\n", bench::today().c_str(),
              bench::device_name().c_str(), std::thread::hardware_concurrency(), repeats);
  std::printf(
      "# recall: planted support found; reference: the full FFT's k largest |X|; rel l2: sfft's values against the "
      "full FFT at the returned frequencies; ratio: FFT time / sfft time\n");
  auto sweep = [&](auto &&rows_for, const char *title, const char *peer, bool with_large) {
    Summary summary;
    std::printf("\n## %s\n\n", title);
    print_header(peer);
    if (with_large)
      for (double snr : {10.0, 30.0}) rows_for(true, 27, 1000, false, snr, summary);
    for (int log2n : {20, 24}) {
      if (log2n > max_log2n) continue;
      for (uint64_t k : {uint64_t{100}, uint64_t{1000}})
        for (bool log_uniform : {false, true})
          for (double snr : snrs) {
            rows_for(true, log2n, k, log_uniform, snr, summary);
            if (both_dtypes) rows_for(false, log2n, k, log_uniform, snr, summary);
          }
    }
    print_summary(title, summary);
  };
#if SFFT_HAVE_CUDA
  if (gpu && sfft_cuda_device_count() > 0) {
    sweep(
        [&](bool dbl, int log2n, uint64_t k, bool lu, double snr, Summary &s) {
          if (dbl) {
            gpu_rows<double>(log2n, k, lu, snr, repeats, variants, s);
          } else {
            gpu_rows<float>(log2n, k, lu, snr, repeats, variants, s);
          }
        },
        "GPU: cuFFT vs sfft CUDA plan (device pointers)", "cuFFT", large);
  }
#endif
  if (cpu) {
    sweep(
        [&](bool dbl, int log2n, uint64_t k, bool lu, double snr, Summary &s) {
          if (dbl) {
            cpu_rows<double>(log2n, k, lu, snr, repeats, variants, s);
          } else {
            cpu_rows<float>(log2n, k, lu, snr, repeats, variants, s);
          }
        },
        "CPU: threaded FFTW (FFTW_MEASURE) vs sfft CPU plan", "FFTW", false);
  }
  (void)gpu;
  (void)large;  // GPU rows only
  return 0;
}
