// SPDX-License-Identifier: Apache-2.0
// `sfft sparse`: sparse FFT of a built-in k-sparse signal; prints the found frequencies against the planted
// ones and the time against threaded FFTW of the same samples.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fftw3.h>

#include "cli_util.hpp"
#include "file_mode.hpp"

namespace {

using cd = std::complex<double>;

void help() {
  std::puts(
      "usage: sfft sparse SIGNAL.npy --k K [--variant auto|robust|exact] [--seed S] [--comb LOOPS]\n"
      "                   [--out COEFFS.npy|.csv|.json] [--plot SPECTRUM.png] [--summary S.json|S.csv]\n"
      "                   [--backend cpu|cuda|auto] [--threads N]\n"
      "       sfft sparse [--log2n 20 | --n N] [--k 8] [--variant auto|robust|exact] [--snr DB] [--seed S]\n"
      "                   [--comb LOOPS] [--batch B] [--backend cpu|cuda|auto] [--threads N]\n"
      "With SIGNAL.npy (1-D; complex64 runs in single precision, other real/complex dtypes as complex128): the k\n"
      "largest coefficients X[f] (numpy.fft.fft's convention), printed and written to --out (.npy records\n"
      "(freq uint64, value complex128), CSV or JSON); --plot draws |X[f]| against f. Without a file (the demo):\n"
      "builds x = sum of k complex exponentials at random frequencies (magnitudes 1..10, plus white noise\n"
      "at --snr dB if given), runs sfft_create/sfft_exec (complex128), prints planted vs found frequencies\n"
      "and values, and the sfft exec time against threaded FFTW (FFTW_MEASURE) of all n samples, each the\n"
      "median of 5 executes after a warm-up (planning not timed). --threads sets both (default: all).\n"
      "--n takes lengths that are not powers of two (e.g. 3145728 = 3 x 2^20 or 1000000; the sparse FFT\n"
      "needs n even with an even divisor in [2k (exact) or 4k (robust), n/2] for its bucket count).\n"
      "--comb LOOPS turns on the ROBUST comb pre-pass (sFFT 2.0) with that many comb loops (default 0:\n"
      "off; not with --variant exact). --batch B runs sfft_exec_batch on B signals (signal b is the demo signal\n"
      "shifted by b samples, so X_b[f] = X[f] e^(2 pi i f b / n)), prints each signal's misses and largest\n"
      "error, and times the batch against one batched FFTW plan (fftw_plan_many_dft) of the B signals.\n"
      "Exit status 1 if a planted frequency is missed.");
}

// Threaded FFTW, FFTW_MEASURE (planning bounded to a few seconds, not timed), of all n samples: the dense
// transform a user would otherwise run. Returns its time (seconds, median of `repeats` executes) and
// leaves the spectrum in `spectrum`. FFTW plans any n, so other lengths need no special path.
// x holds `batch` signals of x.size() / batch samples each, transformed by one batched plan.
double fftw_forward(const std::vector<cd> &x, std::vector<cd> &spectrum, int threads, int repeats, int batch = 1) {
  fftw_init_threads();
  fftw_plan_with_nthreads(threads);
  fftw_set_timelimit(5.0);
  spectrum.assign(x.size(), 0);
  std::vector<cd> input(x.size());
  auto *in = reinterpret_cast<fftw_complex *>(input.data());
  auto *out = reinterpret_cast<fftw_complex *>(spectrum.data());
  int n = static_cast<int>(x.size() / static_cast<std::size_t>(batch));
  fftw_plan plan = fftw_plan_many_dft(1, &n, batch, in, nullptr, 1, n, out, nullptr, 1, n, FFTW_FORWARD, FFTW_MEASURE);
  std::copy(x.begin(), x.end(), input.begin());  // planning with FFTW_MEASURE overwrites the arrays
  const double seconds = cli::median_seconds(repeats, [&] {
    fftw_execute(plan);
    return true;
  });
  fftw_destroy_plan(plan);
  return seconds;
}

// The exec report (sfft_get_report) of signal `signal` of the plan's last exec, one line.
void print_report(sfft_plan plan, uint64_t signal, const char *label) {
  sfft_report r;
  r.struct_size = sizeof r;
  if (cli::report(sfft_get_report(plan, signal, &r), "sfft_get_report")) return;
  std::printf("%sreport: %s variant %s, %" PRIu64 " returned (%" PRIu64
              " above the noise), explained %.4f of %.4g, noise floor %.3g per bin, residual/noise %.3f, "
              "unexplained buckets %" PRIu64 "\n",
              label, r.unexplained ? "UNEXPLAINED ENERGY," : "ok,", r.variant == SFFT_SPARSE_EXACT ? "exact" : "robust",
              r.count, r.significant, r.explained, r.signal_energy, r.noise_floor, r.excess, r.unexplained_buckets);
}

// --batch: signal b is x shifted by b samples (x_b[t] = x[(t + b) mod n]), so its planted coefficients are
// amplitude e^(2 pi i f b / n); sfft_exec_batch on all of them against one batched FFTW plan.
int run_batch(const std::vector<cd> &x, const std::vector<uint64_t> &planted, const std::vector<cd> &amplitude,
              uint64_t n, uint64_t k, int batch, sfft_options opts, const sfft_sparse_options &knobs) {
  const auto signals = static_cast<std::size_t>(batch);
  std::vector<cd> xs(n * signals);
  for (std::size_t b = 0; b < signals; ++b)
    for (uint64_t t = 0; t < n; ++t) xs[b * n + t] = x[(t + b) % n];
  sfft_plan plan = nullptr;
  if (cli::report(sfft_create_ex(&plan, n, k, SFFT_COMPLEX128, &opts, &knobs), "sfft_create")) return 1;
  std::vector<uint64_t> freqs(k * signals), counts(signals);
  std::vector<cd> values(k * signals);
  constexpr int kRepeats = 5;
  sfft_status status = SFFT_SUCCESS;
  const double exec_s = cli::median_seconds(kRepeats, [&] {
    std::fill(counts.begin(), counts.end(), k);
    status = sfft_exec_batch(plan, signals, xs.data(), n, freqs.data(), values.data(), k, counts.data());
    return status == SFFT_SUCCESS;
  });
  if (status == SFFT_SUCCESS) {
    for (std::size_t b = 0; b < signals; ++b) {
      const std::string label = "signal " + std::to_string(b) + " ";
      print_report(plan, b, label.c_str());
    }
  }
  sfft_destroy(plan);
  if (cli::report(status, "sfft_exec_batch")) return 1;
  const int threads =
      opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<cd> dense;
  const double dense_s = fftw_forward(xs, dense, threads, kRepeats, batch);
  int missed_total = 0;
  for (std::size_t b = 0; b < signals; ++b) {
    int missed = 0;
    double error = 0;
    const uint64_t *f0 = freqs.data() + b * k;
    for (std::size_t j = 0; j < planted.size(); ++j) {
      const uint64_t *it = std::find(f0, f0 + counts[b], planted[j]);
      if (it == f0 + counts[b]) {
        ++missed;
        continue;
      }
      const double phase = 2 * M_PI * static_cast<double>((planted[j] * b) % n) / static_cast<double>(n);
      error = std::max(
          error, std::abs(values[b * k + static_cast<std::size_t>(it - f0)] - amplitude[j] * std::polar(1.0, phase)));
    }
    missed_total += missed;
    std::printf("signal %zu: found %" PRIu64 ", %d of %zu planted missed, max |error| %.2e\n", b, counts[b], missed,
                planted.size(), error);
  }
  std::printf("sfft_exec_batch of %d signals: %.3f ms; batched dense FFTW (%d threads) %.3f ms (%.1fx)\n", batch,
              exec_s * 1e3, threads, dense_s * 1e3, dense_s / exec_s);
  return missed_total == 0 ? 0 : 1;
}

}  // namespace

int cmd_sparse(int argc, char **argv) {
  cli::Args args(argc - 1, argv + 1);
  if (args.has("help")) {
    help();
    return 0;
  }
  if (args.positional().size() > 1) throw std::invalid_argument("sfft sparse: expects at most one FILE.npy");
  if (!args.positional().empty()) return cli::sparse_file(args, args.positional()[0]);
  auto bad = args.unknown({"log2n", "n", "k", "variant", "snr", "seed", "comb", "batch", "backend", "threads"});
  if (!bad.empty()) {
    std::fprintf(stderr, "sfft sparse: unknown option --%s (see --help)\n", bad[0].c_str());
    return 2;
  }
  const int log2n = static_cast<int>(args.get_int("log2n", 20));
  const uint64_t k = static_cast<uint64_t>(args.get_int_in("k", 8, 1, INT64_MAX));
  if (log2n < 4 || log2n > 30) {
    std::fprintf(stderr, "sfft sparse: --log2n must be in [4, 30]\n");
    return 2;
  }
  const int64_t n_arg = args.get_int("n", 0);
  if (args.has("n") && (n_arg < 16 || n_arg > (int64_t{1} << 30))) {
    std::fprintf(stderr, "sfft sparse: --n must be in [16, 2^30]\n");
    return 2;
  }
  const uint64_t n = args.has("n") ? static_cast<uint64_t>(n_arg) : uint64_t{1} << log2n;
  const bool power_of_two = (n & (n - 1)) == 0;
  const double snr = args.get_double("snr", INFINITY);
  const std::string variant = args.get("variant", "auto");
  sfft_sparse_options knobs;
  sfft_sparse_options_init(&knobs);
  if (variant == "exact") {
    knobs.variant = SFFT_SPARSE_EXACT;
  } else if (variant == "robust") {
    knobs.variant = SFFT_SPARSE_ROBUST;
  } else if (variant != "auto") {
    std::fprintf(stderr, "sfft sparse: --variant must be auto, robust or exact\n");
    return 2;
  }
  knobs.comb_loops = static_cast<int>(args.get_int_in("comb", 0, 0, 16));
  sfft_options opts = cli::options_from(args);
  opts.seed = static_cast<uint64_t>(args.get_int_in("seed", 1, 0, INT64_MAX));

  // The built-in signal: k exponentials (phasor recurrence per frequency) and optional white noise.
  std::mt19937_64 rng(opts.seed + 17);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<uint64_t> planted;
  std::vector<cd> amplitude;
  while (planted.size() < k && planted.size() < n) {
    uint64_t f = rng() % n;
    if (std::find(planted.begin(), planted.end(), f) != planted.end()) continue;
    planted.push_back(f);
    amplitude.push_back(std::polar(1 + 9 * unit(rng), 2 * M_PI * unit(rng)));
  }
  std::vector<cd> x(n, 0);
  for (std::size_t j = 0; j < planted.size(); ++j) {
    cd value = amplitude[j] / static_cast<double>(n);  // X[f] = amplitude after the forward DFT
    for (uint64_t t = 0; t < n; t += 1024) {           // re-seed the recurrence every 1024 steps to bound rounding
      cd w = value * std::polar(1.0, 2 * M_PI * static_cast<double>((planted[j] * t) % n) / static_cast<double>(n));
      cd step = std::polar(1.0, 2 * M_PI * static_cast<double>(planted[j]) / static_cast<double>(n));
      for (uint64_t u = t; u < std::min(n, t + 1024); ++u, w *= step) x[u] += w;
    }
  }
  if (std::isfinite(snr)) {
    double energy = 0;
    for (const cd &a : amplitude) energy += std::norm(a);
    // Parseval: sum_t |x|^2 = energy / n; split over n samples and two components at the SNR.
    double nd = static_cast<double>(n);
    std::normal_distribution<double> gauss(0, std::sqrt(energy / (nd * nd) / std::pow(10, snr / 10) / 2));
    for (cd &v : x) v += cd(gauss(rng), gauss(rng));
  }

  const int batch = static_cast<int>(args.get_int_in("batch", 1, 1, 1 << 20));
  if (args.has("batch")) return run_batch(x, planted, amplitude, n, k, batch, opts, knobs);

  sfft_plan plan = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  if (cli::report(sfft_create_ex(&plan, n, k, SFFT_COMPLEX128, &opts, &knobs), "sfft_create")) return 1;
  double create_s = cli::seconds_since(t0);
  std::vector<uint64_t> freqs(k);
  std::vector<cd> values(k);
  uint64_t count = k;
  constexpr int kRepeats = 5;
  sfft_status status = SFFT_SUCCESS;
  const double exec_s = cli::median_seconds(kRepeats, [&] {
    count = k;
    status = sfft_exec(plan, x.data(), freqs.data(), values.data(), &count);
    return status == SFFT_SUCCESS;
  });
  if (status == SFFT_SUCCESS) print_report(plan, 0, "");
  sfft_destroy(plan);
  if (cli::report(status, "sfft_exec")) return 1;

  const int threads =
      opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<cd> dense;
  const double dense_s = fftw_forward(x, dense, threads, kRepeats);

  const std::string length = power_of_two ? "2^" + std::to_string(log2n) : std::to_string(n);
  std::printf("n = %s, k = %" PRIu64 ", variant %s, SNR %s dB, comb loops %d\n", length.c_str(), k, variant.c_str(),
              std::isfinite(snr) ? std::to_string(snr).c_str() : "inf", knobs.comb_loops);
  std::printf("%12s %26s %26s %10s\n", "planted f", "planted X[f]", "sfft X[f]", "|error|");
  int missed = 0;
  for (std::size_t j = 0; j < planted.size(); ++j) {
    auto it = std::find(freqs.begin(), freqs.begin() + static_cast<long>(count), planted[j]);
    if (it == freqs.begin() + static_cast<long>(count)) {
      ++missed;
      std::printf("%12" PRIu64 " (%11.6f,%11.6f)                    MISSED\n", planted[j], amplitude[j].real(),
                  amplitude[j].imag());
      continue;
    }
    cd got = values[static_cast<std::size_t>(it - freqs.begin())];
    std::printf("%12" PRIu64 " (%11.6f,%11.6f) (%11.6f,%11.6f) %10.2e\n", planted[j], amplitude[j].real(),
                amplitude[j].imag(), got.real(), got.imag(), std::abs(got - amplitude[j]));
  }
  std::printf("found %" PRIu64 " coefficients, %d of %zu planted missed\n", count, missed, planted.size());
  // The dense transform at the planted frequencies: what a full FFT of the same samples says.
  double dense_error = 0;
  for (std::size_t j = 0; j < planted.size(); ++j)
    dense_error = std::max(dense_error, std::abs(dense[planted[j]] - amplitude[j]));
  std::printf(
      "sfft: create %.3f ms, exec %.3f ms; dense FFTW (%d threads) %.3f ms (%.1fx), its max |error| at the "
      "planted frequencies %.2e\n",
      create_s * 1e3, exec_s * 1e3, threads, dense_s * 1e3, dense_s / exec_s, dense_error);
  return missed == 0 ? 0 : 1;
}
