// SPDX-License-Identifier: Apache-2.0
// `sfft shift`: fftshift/ifftshift of a built-in array, verified element by element against NumPy's rule.
#include <cinttypes>
#include <complex>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "cli_util.hpp"
#include "file_mode.hpp"

namespace {

void help() {
  std::puts(
      "usage: sfft shift FILE.npy [--axes 0,1] [--inverse] [--in-place] [--out OUT.npy] [--plot OUT.png]\n"
      "                  [--summary S.json|S.csv] [--backend cpu|cuda|auto] [--threads N]\n"
      "       sfft shift [--shape 511x512] [--axes 0,1] [--inverse] [--in-place] [--backend cpu|cuda|auto]\n"
      "                  [--threads N] [--repeat R]\n"
      "With FILE.npy (float32/64 or complex64/128, C order, 1-8 dims): np.fft.fftshift(a, axes) (ifftshift with\n"
      "--inverse) written to --out; --plot draws |out| of its first 2-D slice. Without a file (the demo):\n"
      "shifts a complex128 array filled with its own flat index, checks every element against NumPy's\n"
      "np.fft.fftshift/ifftshift rule, and prints the timing and a few corner values.");
}

}  // namespace

int cmd_shift(int argc, char **argv) {
  cli::Args args(argc - 1, argv + 1);
  if (args.has("help")) {
    help();
    return 0;
  }
  if (args.positional().size() > 1) throw std::invalid_argument("sfft shift: expects at most one FILE.npy");
  if (!args.positional().empty()) return cli::shift_file(args, args.positional()[0]);
  auto bad = args.unknown({"shape", "axes", "inverse", "in-place", "backend", "threads", "repeat", "seed"});
  if (!bad.empty()) {
    std::fprintf(stderr, "sfft shift: unknown option --%s (see --help)\n", bad[0].c_str());
    return 2;
  }
  std::vector<int64_t> shape = cli::parse_list(args.get("shape", "511x512"), 'x');
  uint32_t mask = 0;
  if (args.has("axes"))
    for (int64_t a : cli::parse_list(args.get("axes", ""), ',')) {
      if (a < 0 || a >= static_cast<int64_t>(shape.size())) {
        std::fprintf(stderr, "sfft shift: axis %" PRId64 " is outside the shape's %zu dims\n", a, shape.size());
        return 2;
      }
      mask |= 1u << a;
    }
  const bool inverse = args.has("inverse"), in_place = args.has("in-place");
  const int repeat = static_cast<int>(args.get_int_in("repeat", 5, 1, 1000000));
  sfft_options opts = cli::options_from(args);

  std::size_t n = 1;
  for (int64_t e : shape) {
    if (e < 0) throw std::invalid_argument("--shape extents must be >= 0, got " + std::to_string(e));
    n = static_cast<std::size_t>(e) == 0 ? 0 : cli::checked_bytes(n, static_cast<std::size_t>(e), "--shape");
  }
  (void)cli::checked_bytes(n, 2 * sizeof(std::complex<double>), "--shape (input and output arrays)");
  std::vector<std::complex<double>> in(n), out(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = {static_cast<double>(i), -static_cast<double>(i)};
  auto fn = inverse ? ifftshift_nd : fftshift_nd;
  const int nd = static_cast<int>(shape.size());

  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    if (in_place) out = in;
    auto t0 = std::chrono::steady_clock::now();
    sfft_status s = fn(out.data(), in_place ? out.data() : in.data(), nd, shape.data(), mask, SFFT_COMPLEX128, &opts);
    double t = cli::seconds_since(t0);
    if (s != SFFT_SUCCESS) return cli::report(s, "shift");
    best = t < best ? t : best;
  }
  // Verify: output element at multi-index j holds the input element at (j - s) mod n along shifted axes.
  std::size_t wrong = 0;
  for (std::size_t flat = 0; flat < n; ++flat) {
    std::size_t rem = flat, src = 0, stride = 1;
    for (int d = nd - 1; d >= 0; --d) {
      auto e = static_cast<std::size_t>(shape[d]);
      std::size_t j = rem % e;
      rem /= e;
      bool shifted = mask == 0 || ((mask >> d) & 1u);
      std::size_t s = shifted ? (inverse ? (e + 1) / 2 : e / 2) : 0;
      src += ((j + e - s) % e) * stride;
      stride *= e;
    }
    wrong += out[flat] != in[src];
  }
  std::string dims;
  for (std::size_t d = 0; d < shape.size(); ++d) dims += (d ? "x" : "") + std::to_string(shape[d]);
  std::printf("%s of a %s complex128 array (axes mask 0x%x, %s): best of %d runs %.3f ms, %.2f GB/s (read+write)\n",
              inverse ? "ifftshift" : "fftshift", dims.c_str(), mask, in_place ? "in place" : "out of place", repeat,
              best * 1e3, n ? 2.0 * n * 16 / best / 1e9 : 0.0);
  if (n > 0) std::printf("out[0] = in[%.0f], out[last] = in[%.0f]\n", out[0].real(), out[n - 1].real());
  std::printf("verified %zu elements against NumPy's rule: %s\n", n, wrong == 0 ? "all correct" : "MISMATCH");
  if (wrong) std::printf("%zu elements wrong\n", wrong);
  return wrong == 0 ? 0 : 1;
}
