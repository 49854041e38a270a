// SPDX-License-Identifier: Apache-2.0
// Distributed sparse FFT (libsfft_mpi) scaling on CPU ranks. Run under mpiexec with P ranks; for q = 1..P
// ranks (the first q of MPI_COMM_WORLD) it times
//   weak:   n = q * 2^log2n_rank samples (each rank holds 2^log2n_rank),
//   strong: n = 2^log2n_strong samples split over the q ranks,
// against the peer, the single-process sfft_exec with the same seed on the gathered signal (one process, the same
// thread count per process), and prints both, their ratio (single / distributed: > 1 is faster), the weak
// efficiency t(q = 1) / t(q), and the communication time: the time spent inside MPI during sfft_mpi_exec (the
// bucket sums, the descriptor gather, AUTO's agreement and the result's broadcast), measured through MPI's profiling
// interface (PMPI wrappers below). Times: the median over repeats of the slowest rank's time. The summary is the
// minimum ratio. Each row compares the distributed result with the peer's by sfft_mpi.h's rule (compare() below):
// "same" when the frequencies come in the same order, "rounding" when they differ only as rounding can make them
// differ, "NO" otherwise; a line under the table says what differs. Every rank builds its own block of the signal
// (tones at multiples of the row's rank count, planted_block), so n is limited by the ranks' memory only; the peer
// concatenates the same blocks (the same bits). --no-peer leaves out the single-process run (for n that one
// process cannot hold); each row's result is then checked against the planted tones ("planted": all found,
// values within the rule's margin). --log2n-strong 0 leaves out the strong-scaling rows.
// --gpu (CUDA builds): every rank and the peer run CUDA plans on device-resident samples (opts.device =
// rank modulo the visible GPUs; ranks sharing a GPU contend for it), the folds summed through host staging. The
// samples are then built on the device (bench_mpi_signal.cu), so a rank's block is limited by its GPU's memory.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fftw3.h>

#include "bench_mpi_signal.hpp"
#include "bench_support.hpp"
#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "sfft/sfft.h"
#include "sfft/sfft_mpi.h"

namespace {

// Time inside the wrapped MPI calls while counting is on (only around sfft_mpi_exec).
bool counting = false;
double comm_seconds = 0;

}  // namespace

extern "C" {
int MPI_Reduce_scatter(const void *send, void *recv, const int counts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const double t0 = PMPI_Wtime();
  const int rc = PMPI_Reduce_scatter(send, recv, counts, type, op, comm);
  if (counting) comm_seconds += PMPI_Wtime() - t0;
  return rc;
}
int MPI_Allgatherv(const void *send, int send_count, MPI_Datatype send_type, void *recv, const int counts[],
                   const int displs[], MPI_Datatype recv_type, MPI_Comm comm) {
  const double t0 = PMPI_Wtime();
  const int rc = PMPI_Allgatherv(send, send_count, send_type, recv, counts, displs, recv_type, comm);
  if (counting) comm_seconds += PMPI_Wtime() - t0;
  return rc;
}
int MPI_Bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const double t0 = PMPI_Wtime();
  const int rc = PMPI_Bcast(buffer, count, type, root, comm);
  if (counting) comm_seconds += PMPI_Wtime() - t0;
  return rc;
}
int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const double t0 = PMPI_Wtime();
  const int rc = PMPI_Allreduce(send, recv, count, type, op, comm);
  if (counting) comm_seconds += PMPI_Wtime() - t0;
  return rc;
}
int MPI_Barrier(MPI_Comm comm) {
  const double t0 = PMPI_Wtime();
  const int rc = PMPI_Barrier(comm);
  if (counting) comm_seconds += PMPI_Wtime() - t0;
  return rc;
}
int MPI_Allgather(const void *send, int send_count, MPI_Datatype send_type, void *recv, int recv_count,
                  MPI_Datatype recv_type, MPI_Comm comm) {
  const double t0 = PMPI_Wtime();
  const int rc = PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
  if (counting) comm_seconds += PMPI_Wtime() - t0;
  return rc;
}
}

namespace {

using cf = std::complex<float>;
using Spectrum = std::map<uint64_t, std::complex<double>>;  // frequency -> value

void check(sfft_status s, const char *what, bool mpi) {
  if (s == SFFT_SUCCESS) return;
  std::fprintf(stderr, "%s: %s\n", what, mpi ? sfft_mpi_last_error() : sfft_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// k planted tones of magnitude 1..10 at frequencies that are multiples of `step` (the same seed and step give
// the same tones).
std::vector<bench_mpi::Tone> planted_tones(uint64_t n, uint64_t k, uint64_t step) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<bench_mpi::Tone> tones(k);
  for (bench_mpi::Tone &t : tones) {
    t.f = rng() % (n / step) * step;
    const double magnitude = 1 + 9 * unit(rng), phase = 2 * M_PI * unit(rng);
    t.value = std::polar(magnitude, phase);
  }
  return tones;
}

Spectrum spectrum_of(const std::vector<bench_mpi::Tone> &tones) {
  Spectrum s;
  for (const bench_mpi::Tone &t : tones) s[t.f] += t.value;
  return s;
}

// Samples [offset, offset + length) of the signal of the tones (x = inverse DFT / n), where n / length divides
// every tone's frequency: the block is then one length-point inverse FFT of the tones phased by the offset, so
// each rank builds its own block and no rank needs the whole signal.
std::vector<cf> planted_block(uint64_t n, const std::vector<bench_mpi::Tone> &tones, uint64_t offset, uint64_t length) {
  std::vector<cf> x(length);
  const uint64_t m = n / length;  // tone f is bin f / m of the block's transform
  for (const bench_mpi::Tone &t : tones) {
    const auto turns = static_cast<uint64_t>(static_cast<unsigned __int128>(t.f) * offset % n);
    x[t.f / m] += t.value * std::polar(1.0, 2 * M_PI * static_cast<double>(turns) / static_cast<double>(n));
  }
  fftwf_iodim64 dim{static_cast<ptrdiff_t>(length), 1, 1};
  auto *data = reinterpret_cast<fftwf_complex *>(x.data());
  fftwf_plan p = fftwf_plan_guru64_dft(1, &dim, 0, nullptr, data, data, FFTW_BACKWARD, FFTW_ESTIMATE);
  fftwf_execute(p);
  fftwf_destroy_plan(p);
  for (cf &v : x) v /= static_cast<float>(n);
  return x;
}

// Where the plan reads its samples: host memory, or (--gpu) device memory. Holds `blocks` consecutive blocks of
// `length` samples starting at `offset`, each built as the rank owning it builds it, so that the peer (one
// process, all q blocks) folds the very samples the ranks fold: one n-point transform would round differently,
// and the comparison would then mix the signals' rounding into the fold order's. On the device each block is
// the direct sum over the tones (bench_mpi_signal.cu), so no host memory or host FFT of the block's size is
// needed; on the host, one FFTW transform per block.
class Samples {
 public:
  Samples(uint64_t n, const std::vector<bench_mpi::Tone> &tones, uint64_t offset, uint64_t length, uint64_t blocks,
          bool gpu, int device) {
    const uint64_t total = length * blocks;
    if (total == 0) return;
#if SFFT_HAVE_CUDA
    if (gpu) {  // in the memory of the GPU the plan runs on
      BENCH_CUDA(cudaSetDevice(device));
      BENCH_CUDA(cudaMalloc(&device_, total * sizeof(cf)));
      for (uint64_t b = 0; b < blocks; ++b)
        bench_mpi::tones_block_on_device(static_cast<cf *>(device_) + b * length, n, offset + b * length, length,
                                         tones);
      return;
    }
#else
    (void)gpu, (void)device;
#endif
    host_.resize(total);
    for (uint64_t b = 0; b < blocks; ++b) {
      const std::vector<cf> block = planted_block(n, tones, offset + b * length, length);
      std::copy(block.begin(), block.end(), host_.begin() + static_cast<long>(b * length));
    }
  }
  Samples(const Samples &) = delete;
  Samples &operator=(const Samples &) = delete;
  ~Samples() {
#if SFFT_HAVE_CUDA
    if (device_ != nullptr) cudaFree(device_);
#endif
  }
  const void *get() const { return device_ != nullptr ? device_ : static_cast<const void *>(host_.data()); }

 private:
  std::vector<cf> host_;
  void *device_ = nullptr;
};

// The rule of sfft_mpi.h ("Equality with one process" in docs/distributed.md). The distributed plan adds the
// same fold terms in another order; the values then differ by rounding, except where rounding flips a
// decoding decision (EXACT's peeling: whether a residual counts as a correction), which moves a value by up
// to the plan's accuracy, as the single-process result moves when its input changes by one ulp. The check
// allows that much: kAccuracy of the largest |X| (complex64; the EXACT stage's values are good to about 1e-4
// of it, 1e3 x its filter tolerance, and measured 1.1e-4 at n = 2^25, k = 1000). So: every coefficient of
// either result whose magnitude exceeds both results' k-th magnitude (0 for a result of fewer than k) by
// more than that is in both, and every frequency in both has values within that. Coefficients closer than it
// to each other may come in the other order, and those near the cut-off may differ.
constexpr double kAccuracy = 1e-3;

struct Comparison {
  const char *verdict = "same";  // "same" (same frequencies in the same order), "rounding" or "NO"
  std::string detail;            // what differs, for the line under the table
};

Spectrum spectrum_of(const std::vector<uint64_t> &f, const std::vector<cf> &v, uint64_t count) {
  Spectrum s;
  for (uint64_t i = 0; i < count; ++i) s[f[i]] = v[i];
  return s;
}

// Largest |a[f] - b[f]| over the union of frequencies (a missing one counts as 0).
double max_difference(const Spectrum &a, const Spectrum &b) {
  double d = 0;
  for (const auto &[f, v] : a) d = std::max(d, std::abs(v - (b.count(f) ? b.at(f) : 0.0)));
  for (const auto &[f, v] : b)
    if (a.count(f) == 0) d = std::max(d, std::abs(v));
  return d;
}

Comparison compare(const std::vector<uint64_t> &f_single, const std::vector<cf> &v_single, uint64_t count_single,
                   const std::vector<uint64_t> &f_dist, const std::vector<cf> &v_dist, uint64_t count_dist, uint64_t k,
                   const Spectrum &planted) {
  Comparison c;
  const Spectrum single = spectrum_of(f_single, v_single, count_single), dist = spectrum_of(f_dist, v_dist, count_dist);
  const double largest = count_single > 0 ? std::abs(v_single[0]) : 0;
  const double margin = kAccuracy * largest;
  const double cutoff =
      std::max(count_single == k ? std::abs(v_single[k - 1]) : 0.0, count_dist == k ? std::abs(v_dist[k - 1]) : 0.0);
  char text[256];
  auto add = [&](const std::string &s) { c.detail += (c.detail.empty() ? "" : "; ") + s; };
  int missing = 0, near_cutoff = 0;
  for (const Spectrum *side : {&single, &dist}) {
    const Spectrum &mine = *side, &other = side == &single ? dist : single;
    for (const auto &[f, v] : mine) {
      if (other.count(f) != 0) continue;
      if (std::abs(v) > cutoff + margin) {
        if (++missing == 1) {
          std::snprintf(text, sizeof text, "f = %llu (|X| = %.3g of the largest) only in the %s result",
                        static_cast<unsigned long long>(f), std::abs(v) / largest,
                        side == &single ? "single-process" : "distributed");
          add(text);
        }
      } else {
        ++near_cutoff;
      }
    }
  }
  double worst = 0;
  uint64_t worst_f = 0;
  for (const auto &[f, v] : single)
    if (dist.count(f) != 0 && std::abs(v - dist.at(f)) > worst) worst = std::abs(v - dist.at(f)), worst_f = f;
  if (missing > 1) add(std::to_string(missing - 1) + " more above the cut-off in one result only");
  const bool same_order = count_single == count_dist &&
                          std::equal(f_dist.begin(), f_dist.begin() + static_cast<long>(count_dist), f_single.begin());
  if (!same_order) {
    int moved = 0;  // places where the common frequencies come in another order
    std::vector<uint64_t> a, b;
    for (uint64_t i = 0; i < count_single; ++i)
      if (dist.count(f_single[i]) != 0) a.push_back(f_single[i]);
    for (uint64_t i = 0; i < count_dist; ++i)
      if (single.count(f_dist[i]) != 0) b.push_back(f_dist[i]);
    for (std::size_t i = 0; i < a.size(); ++i) moved += a[i] != b[i];
    if (moved > 0) add(std::to_string(moved) + " places in another order");
    if (near_cutoff > 0) {
      std::snprintf(text, sizeof text,
                    "%d frequencies in one result only at the cut-off (within the margin of the "
                    "k-th magnitude, %.2g of the largest)",
                    near_cutoff, cutoff / largest);
      add(text);
    }
  }
  std::snprintf(text, sizeof text, "largest value difference %.2g of the largest |X| (f = %llu; margin %.0e)",
                worst / largest, static_cast<unsigned long long>(worst_f), kAccuracy);
  add(text);
  std::snprintf(text, sizeof text, "error against the planted tones: single %.2g, distributed %.2g of the largest",
                max_difference(single, planted) / largest, max_difference(dist, planted) / largest);
  add(text);
  c.verdict = missing > 0 || worst > margin ? "NO" : same_order ? "same" : "rounding";
  return c;
}

// Without the peer (n too large for one process): the distributed result against the planted spectrum. Every
// planted tone (summed where two share a frequency) must be among the returned coefficients with its value
// within kAccuracy of the largest planted magnitude.
Comparison against_planted(const std::vector<uint64_t> &f, const std::vector<cf> &v, uint64_t count,
                           const Spectrum &planted) {
  const Spectrum dist = spectrum_of(f, v, count);
  double largest = 0, worst = 0;
  for (const auto &[freq, value] : planted) largest = std::max(largest, std::abs(value));
  std::size_t found = 0;
  for (const auto &[freq, value] : planted)
    if (dist.count(freq) != 0) {
      ++found;
      worst = std::max(worst, std::abs(value - dist.at(freq)));
    }
  Comparison c;
  c.verdict = found == planted.size() && worst <= kAccuracy * largest ? "planted" : "NO";
  char text[160];
  std::snprintf(text, sizeof text, "%zu of %zu planted tones found, largest value error %.2g of the largest", found,
                planted.size(), worst / largest);
  c.detail = text;
  return c;
}

struct Row {
  const char *mode;
  int ranks;
  uint64_t n;
  double single, dist, comm;
  Comparison match;
};

// One row on the first q ranks (comm holds exactly them). Rank 0 of comm prints nothing; main() prints.
Row measure(const char *mode, MPI_Comm comm, uint64_t n, uint64_t k, int repeats, bool gpu, int device, bool peer) {
  int me = 0, q = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &q);
  sfft_options o;
  sfft_options_init(&o);
  o.backend = gpu ? SFFT_BACKEND_CUDA : SFFT_BACKEND_CPU;
  o.device = device;
  o.threads = 1;
  o.seed = 2026;
  Row row{mode, q, n, NAN, 0, 0, {}};
  std::vector<uint64_t> f_single(k);
  std::vector<cf> v_single(k);
  uint64_t found_single = 0;
  const std::vector<bench_mpi::Tone> tones = planted_tones(n, k, static_cast<uint64_t>(q));
  const Spectrum planted = spectrum_of(tones);
  if (me == 0 && peer) {
    sfft_plan plan = nullptr;
    check(sfft_create(&plan, n, k, SFFT_COMPLEX64, &o), "sfft_create", false);
    const Samples x(n, tones, 0, n / static_cast<uint64_t>(q), static_cast<uint64_t>(q), gpu, device);
    row.single = bench::time_median(
        [&] {
          found_single = k;
          check(sfft_exec(plan, x.get(), f_single.data(), v_single.data(), &found_single), "sfft_exec", false);
        },
        repeats, 1);
    sfft_destroy(plan);
  }
  uint64_t offset = 0, length = 0;
  check(sfft_mpi_local_size(n, comm, &offset, &length), "sfft_mpi_local_size", true);
  const Samples x(n, tones, offset, length, 1, gpu, device);
  sfft_mpi_plan plan = nullptr;
  check(sfft_mpi_create(&plan, n, k, offset, length, SFFT_COMPLEX64, &o, nullptr, comm), "sfft_mpi_create", true);
  std::vector<uint64_t> f(k);
  std::vector<cf> v(k);
  std::vector<double> times, comms;
  uint64_t found = 0;
  for (int rep = -1; rep < repeats; ++rep) {  // rep -1 warms up
    PMPI_Barrier(comm);
    comm_seconds = 0;
    counting = true;
    const double t0 = PMPI_Wtime();
    found = k;
    check(sfft_mpi_exec(plan, x.get(), f.data(), v.data(), &found, SFFT_MPI_ALL_RANKS), "sfft_mpi_exec", true);
    double mine[2] = {PMPI_Wtime() - t0, comm_seconds}, slowest[2] = {0, 0};
    counting = false;
    PMPI_Allreduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, comm);
    if (rep >= 0) {
      times.push_back(slowest[0]);
      comms.push_back(slowest[1]);
    }
  }
  sfft_mpi_destroy(plan);
  row.dist = bench::median(times);
  row.comm = bench::median(comms);
  if (me == 0 && peer) row.match = compare(f_single, v_single, found_single, f, v, found, k, planted);
  if (me == 0 && !peer) row.match = against_planted(f, v, found, planted);
  return row;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  // --ranks-from Q: only rows of Q or more ranks (a signal that no fewer ranks can hold).
  int log2n_rank = 20, log2n_strong = 22, repeats = 5, ranks_from = 1;
  uint64_t k = 64;
  bool gpu = false, peer = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--gpu" || a == "--no-peer") {
      (a == "--gpu" ? gpu : peer) = a == "--gpu";
      continue;
    }
    if (i + 1 == argc) break;
    if (a == "--log2n-rank")
      log2n_rank = std::atoi(argv[i + 1]);
    else if (a == "--log2n-strong")
      log2n_strong = std::atoi(argv[i + 1]);
    else if (a == "--k")
      k = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--repeats")
      repeats = std::atoi(argv[i + 1]);
    else if (a == "--ranks-from")
      ranks_from = std::atoi(argv[i + 1]);
    ++i;
  }
  int world = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int gpus = gpu ? sfft_cuda_device_count() : 0;
  if (gpu && gpus == 0) {
    if (world == 0) std::fprintf(stderr, "--gpu: no CUDA device\n");
    MPI_Finalize();
    return 1;
  }
  const int device = gpu ? world % gpus : 0;
  if (world == 0)
    std::printf(
        "# bench_mpi %s: complex64, k = %llu, %s, median of %d; ranks on one host\n"
        "# peer: single-process sfft_exec (same seed) on the gathered signal; ratio = single / distributed\n"
        "| mode | ranks | n | single (ms) | distributed (ms) | of which comm (ms) | ratio | weak eff. | same result |\n"
        "|---|---|---|---|---|---|---|---|---|\n",
        bench::today().c_str(), static_cast<unsigned long long>(k),
        gpu ? (bench::device_name() + " per rank (rank % " + std::to_string(gpus) + "), device input").c_str()
            : "CPU ranks, 1 thread per process",
        repeats);
  double min_ratio = INFINITY, weak_one = 0;
  std::vector<std::string> notes;  // what differs from the peer, printed under the table
  for (const char *mode : {"weak", "strong"})
    for (int q = std::max(1, ranks_from); q <= size; ++q) {
      if (std::strcmp(mode, "strong") == 0 && log2n_strong == 0) break;
      MPI_Comm sub = MPI_COMM_NULL;
      MPI_Comm_split(MPI_COMM_WORLD, world < q ? 0 : MPI_UNDEFINED, world, &sub);
      if (sub != MPI_COMM_NULL) {
        const uint64_t n =
            std::strcmp(mode, "weak") == 0 ? static_cast<uint64_t>(q) << log2n_rank : uint64_t{1} << log2n_strong;
        if (n % static_cast<uint64_t>(q) != 0) {  // the blocks are built from tones at multiples of q
          if (world == 0)
            std::printf("| %s | %d | %llu | skipped: %d ranks do not divide n |\n", mode, q,
                        static_cast<unsigned long long>(n), q);
          MPI_Comm_free(&sub);
          PMPI_Barrier(MPI_COMM_WORLD);
          continue;
        }
        Row r = measure(mode, sub, n, k, repeats, gpu, device, peer);
        MPI_Comm_free(&sub);
        if (world == 0) {
          if (std::strcmp(mode, "weak") == 0 && q == 1) weak_one = r.dist;
          const double ratio = r.single / r.dist;  // NaN without the peer
          if (peer) min_ratio = std::min(min_ratio, ratio);
          char eff[32] = "-", single[32] = "-", ratio_text[32] = "-";
          if (std::strcmp(mode, "weak") == 0 && weak_one > 0)  // needs the 1-rank row
            std::snprintf(eff, sizeof eff, "%.2f", weak_one / r.dist);
          if (peer) {
            std::snprintf(single, sizeof single, "%.2f", 1e3 * r.single);
            std::snprintf(ratio_text, sizeof ratio_text, "%.2f", ratio);
          }
          std::printf("| %s | %d | %llu | %s | %.2f | %.3f | %s | %s | %s |\n", r.mode, r.ranks,
                      static_cast<unsigned long long>(r.n), single, 1e3 * r.dist, 1e3 * r.comm, ratio_text, eff,
                      r.match.verdict);
          if (std::strcmp(r.match.verdict, "same") != 0)
            notes.push_back(std::string(r.mode) + " " + std::to_string(r.ranks) + " ranks: " + r.match.verdict + ": " +
                            r.match.detail);
          std::fflush(stdout);
        }
      }
      PMPI_Barrier(MPI_COMM_WORLD);
    }
  if (world == 0) {
    if (peer) std::printf("minimum ratio (single / distributed): %.2f\n", min_ratio);
    if (peer && !notes.empty())
      std::printf(
          "# same result: same = the single-process frequencies in the same order; rounding = as sfft_mpi.h "
          "allows (values within %.0e of the largest |X|, the same frequencies above the k-th magnitude by "
          "that margin); NO = beyond it\n",
          kAccuracy);
    for (const std::string &note : notes) std::printf("# %s\n", note.c_str());
  }
  MPI_Finalize();
  return 0;
}
