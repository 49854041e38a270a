// SPDX-License-Identifier: Apache-2.0
// `sfft spfft2d [FILE.mtx]`: 2-D FFT of a sparse 0/1 (or valued) matrix, streamed tile by tile; prints timing,
// memory and a checksum, and checks Y[0][0] against the sum of the matrix.
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "file_mode.hpp"
#include "spfft2d/method_names.hpp"

namespace {

void help() {
  std::puts(
      "usage: sfft spfft2d [FILE.mtx | FILE.npz] [--values] [--double] [--tile ROWS]\n"
      "                   [--method auto|direct|direct_rows|dense|pruned] [--backend cpu|cuda|auto] [--threads N]\n"
      "                   [--out SPECTRUM.npy] [--plot SPECTRUM.png] [--summary S.json|S.csv]\n"
      "FILE.npz: a COO matrix saved by scipy.sparse.save_npz(m.tocoo()) or np.savez(row=, col=, shape=[, data=]).\n"
      "With --out/--plot/--summary the whole half spectrum is computed into memory and written (.npy complex64,\n"
      "or complex128 with --double; the plot is log10 |Y| of the half spectrum).\n"
      "Computes the half spectrum rows x (cols/2+1) of a Matrix Market matrix (binary unless --values) or, with\n"
      "no file, of a built-in seeded 2000 x 3001 banded-plus-random 0/1 matrix, streaming it tile by tile to a\n"
      "checksum. Prints plan facts, create and exec times, workspace and host memory, sum |Y| and Y[0][0], which\n"
      "must equal the sum of the matrix entries.");
}

struct Checksum {
  uint64_t width = 0;
  bool dbl = false;
  double sum_abs = 0;
  std::complex<double> dc;
};

void accumulate(uint64_t row0, uint64_t nrows, const void *rows, void *user) {
  auto *c = static_cast<Checksum *>(user);
  const uint64_t n = nrows * c->width;
  for (uint64_t i = 0; i < n; ++i) {
    std::complex<double> y = c->dbl ? static_cast<const std::complex<double> *>(rows)[i]
                                    : std::complex<double>(static_cast<const std::complex<float> *>(rows)[i]);
    c->sum_abs += std::abs(y);
    if (row0 == 0 && i == 0) c->dc = y;
  }
}

double mtx_entry_sum(const std::string &path, bool values, uint64_t nnz_stored) {
  if (!values) return static_cast<double>(nnz_stored);  // binary: every stored entry is 1
  // Values mode: Y[0][0] = sum of all entries, symmetric mirrors included; read them back from the file.
  std::ifstream in(path);
  std::string line, banner;
  std::getline(in, banner);
  for (char &ch : banner) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const bool sym = banner.find("symmetric") != std::string::npos && banner.find("skew") == std::string::npos;
  const bool skew = banner.find("skew") != std::string::npos;
  bool size_seen = false;
  double sum = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '%') continue;
    if (!size_seen) {
      size_seen = true;
      continue;
    }
    long long i = 0, j = 0;
    double v = 1;
    if (std::sscanf(line.c_str(), "%lld %lld %lf", &i, &j, &v) < 2) continue;
    sum += v + (i != j && sym ? v : 0) + (skew ? -v : 0) * (i != j);
  }
  return sum;
}

bool source_is_npz(const std::string &path) { return path.size() > 4 && path.compare(path.size() - 4, 4, ".npz") == 0; }

// Values mode of a COO .npz: Y[0][0] = the sum of its data (repeated entries add up).
double npz_entry_sum(const std::string &path) {
  double sum = 0;
  for (double v : cli::read_coo_npz(path, true).values) sum += v;
  return sum;
}

}  // namespace

int cmd_spfft2d(int argc, char **argv) {
  cli::Args args(argc - 1, argv + 1);
  if (args.has("help")) {
    help();
    return 0;
  }
  auto bad = args.unknown({"values", "double", "tile", "method", "backend", "threads", "out", "plot", "summary"});
  if (!bad.empty()) {
    std::fprintf(stderr, "sfft spfft2d: unknown option --%s (see --help)\n", bad[0].c_str());
    return 2;
  }
  if (args.positional().size() > 1) {
    std::fprintf(stderr, "sfft spfft2d: expects at most one FILE.mtx or FILE.npz (see --help)\n");
    return 2;
  }
  sfft_options opts = cli::options_from(args);
  const bool dbl = args.has("double"), values = args.has("values");
  const sfft_dtype dtype = dbl ? SFFT_COMPLEX128 : SFFT_COMPLEX64;
  spfft2d_plan plan = nullptr;
  std::string source;
  auto t0 = std::chrono::steady_clock::now();
  double expected_dc = 0;
  const bool npz = !args.positional().empty() && source_is_npz(args.positional()[0]);
  if (npz) {
    source = args.positional()[0];
    const cli::CooMatrix m = cli::read_coo_npz(source, values);
    if (cli::report(spfft2d_create(&plan, m.rows, m.cols, m.row.size(), m.row.data(), m.col.data(),
                                   values ? m.values.data() : nullptr, dtype, &opts),
                    "spfft2d_create"))
      return 1;
  } else if (!args.positional().empty()) {
    source = args.positional()[0];
    if (cli::report(spfft2d_create_from_mtx(&plan, source.c_str(), values ? 0 : 1, dtype, &opts),
                    "spfft2d_create_from_mtx"))
      return 1;
  } else {
    source = "built-in 2000x3001 banded-plus-random";
    const uint64_t rows = 2000, cols = 3001;
    std::vector<int64_t> r, c;
    std::mt19937_64 rng(5);
    for (uint64_t i = 0; i < rows; ++i)
      for (uint64_t d = 0; d < 3; ++d)
        r.push_back(static_cast<int64_t>(i)), c.push_back(static_cast<int64_t>((i + d) % cols));
    for (int k = 0; k < 20000; ++k)
      r.push_back(static_cast<int64_t>(rng() % rows)), c.push_back(static_cast<int64_t>(rng() % cols));
    if (cli::report(spfft2d_create(&plan, rows, cols, r.size(), r.data(), c.data(), nullptr, dtype, &opts),
                    "spfft2d_create"))
      return 1;
  }
  const double create_s = cli::seconds_since(t0);
  if (args.has("tile") &&
      cli::report(spfft2d_set_tile_rows(plan, static_cast<uint64_t>(args.get_int_in("tile", 0, 0, INT64_MAX))),
                  "spfft2d_set_tile_rows")) {
    spfft2d_destroy(plan);
    return 1;
  }
  if (args.has("method")) {
    // An unknown name becomes a value that spfft2d_set_method rejects, with its message.
    const spfft2d_method method =
        sfft::spfft2d::method_named(args.get("method", "auto")).value_or(static_cast<spfft2d_method>(-1));
    if (cli::report(spfft2d_set_method(plan, method), "spfft2d_set_method")) {
      spfft2d_destroy(plan);
      return 1;
    }
  }
  if (args.has("out") || args.has("plot") || args.has("summary")) {
    const int status = cli::spfft2d_write(args, plan, source, dbl);
    spfft2d_destroy(plan);
    return status;
  }
  spfft2d_method whole_method = SPFFT2D_METHOD_AUTO;
  spfft2d_get_method(plan, &whole_method);
  uint64_t rows = 0, cols = 0, nnz = 0, tile = 0, work = 0;
  sfft_backend backend = SFFT_BACKEND_AUTO;
  spfft2d_get_info(plan, &rows, &cols, &nnz, &tile, &work, &backend);
  expected_dc = args.positional().empty() || (npz && !values) ? static_cast<double>(nnz)
                : npz                                         ? npz_entry_sum(source)
                                                              : mtx_entry_sum(source, values, nnz);
  Checksum sum;
  sum.width = cols / 2 + 1;
  sum.dbl = dbl;
  t0 = std::chrono::steady_clock::now();
  sfft_status s = spfft2d_exec_stream(plan, accumulate, &sum);
  const double exec_s = cli::seconds_since(t0);
  spfft2d_destroy(plan);
  if (cli::report(s, "spfft2d_exec_stream")) return 1;

  std::printf("matrix:    %s\n", source.c_str());
  std::printf("shape:     %" PRIu64 " x %" PRIu64 ", %" PRIu64 " stored nonzeros (%s), output %" PRIu64 " x %" PRIu64
              " %s\n",
              rows, cols, nnz, values ? "values" : "binary", rows, cols / 2 + 1, dbl ? "complex128" : "complex64");
  std::printf("backend:   %s, tile %" PRIu64 " rows, workspace %.1f MiB, whole-spectrum method %s\n",
              backend == SFFT_BACKEND_CUDA ? "cuda" : "cpu", tile, static_cast<double>(work) / 1048576.0,
              sfft::spfft2d::method_name(whole_method));
  std::printf("time:      create %.3f ms, exec (streamed, incl. checksum) %.3f ms\n", 1e3 * create_s, 1e3 * exec_s);
  std::printf("checksum:  sum |Y| = %.9e\n", sum.sum_abs);
  const double tol = (dbl ? 1e-10 : 1e-4) * std::max(1.0, std::abs(expected_dc));
  const bool ok = std::abs(sum.dc - std::complex<double>(expected_dc, 0)) <= tol;
  std::printf("Y[0][0]:   %.9g%+.3gi (expected %.9g): %s\n", sum.dc.real(), sum.dc.imag(), expected_dc,
              ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
