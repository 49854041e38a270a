// SPDX-License-Identifier: Apache-2.0
#include "file_mode.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "plot.hpp"

namespace cli {
namespace {

[[maybe_unused]] bool ends_with(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

[[maybe_unused]] std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s;
  for (std::size_t d = 0; d < shape.size(); ++d) s += (d ? "x" : "") + std::to_string(shape[d]);
  return s.empty() ? "scalar" : s;
}

[[maybe_unused]] sfft_dtype dtype_of(const Array &a, const std::string &what) {
  if (a.dtype == "f4") return SFFT_FLOAT32;
  if (a.dtype == "f8") return SFFT_FLOAT64;
  if (a.dtype == "c8") return SFFT_COMPLEX64;
  if (a.dtype == "c16") return SFFT_COMPLEX128;
  throw std::invalid_argument(what + ": dtype " + a.dtype + " is not one of float32, float64, complex64, complex128");
}

[[maybe_unused]] std::string npy_descr(sfft_dtype d) {
  switch (d) {
    case SFFT_FLOAT32:
      return "<f4";
    case SFFT_FLOAT64:
      return "<f8";
    case SFFT_COMPLEX64:
      return "<c8";
    default:
      return "<c16";
  }
}

// |value| of element i of a float/complex array held as bytes.
[[maybe_unused]] double magnitude(const unsigned char *bytes, sfft_dtype d, std::size_t i) {
  switch (d) {
    case SFFT_FLOAT32:
      return std::fabs(reinterpret_cast<const float *>(bytes)[i]);
    case SFFT_FLOAT64:
      return std::fabs(reinterpret_cast<const double *>(bytes)[i]);
    case SFFT_COMPLEX64:
      return std::abs(reinterpret_cast<const std::complex<float> *>(bytes)[i]);
    default:
      return std::abs(reinterpret_cast<const std::complex<double> *>(bytes)[i]);
  }
}

// The --plot heat map of an N-d array: its first 2-D slice (rows x cols of the last two dims).
[[maybe_unused]] void plot_array(const std::string &path, const unsigned char *bytes, sfft_dtype d,
                                 const std::vector<int64_t> &shape, bool log_scale) {
  const std::size_t cols = shape.empty() ? 1 : static_cast<std::size_t>(shape.back());
  const std::size_t rows = shape.size() < 2 ? 1 : static_cast<std::size_t>(shape[shape.size() - 2]);
  std::vector<double> mag(rows * cols);
  for (std::size_t i = 0; i < mag.size(); ++i) mag[i] = magnitude(bytes, d, i);
  plot_heatmap(path, mag, rows, cols, log_scale);
}

// main() adds "sfft COMMAND: " before the message and " (see --help)" after it.
[[maybe_unused]] void reject_unknown(const Args &args, const std::vector<std::string> &known) {
  auto bad = args.unknown(known);
  if (!bad.empty()) throw std::invalid_argument("unknown option --" + bad[0]);
}

[[maybe_unused]] std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

#if SFFT_CLI_HAS_SHIFT
int shift_file(const Args &args, const std::string &input) {
  reject_unknown(args, {"axes", "inverse", "in-place", "out", "plot", "summary", "backend", "threads"});
  Array a = read_npy(input);
  const sfft_dtype dtype = dtype_of(a, input);
  if (a.shape.empty() || a.shape.size() > 8)
    throw std::invalid_argument(input + ": fftshift needs an array of 1 to 8 dimensions, this one has " +
                                std::to_string(a.shape.size()));
  uint32_t mask = 0;
  if (args.has("axes"))
    for (int64_t axis : parse_list(args.get("axes", ""), ',')) {
      if (axis < -static_cast<int64_t>(a.shape.size()) || axis >= static_cast<int64_t>(a.shape.size()))
        throw std::invalid_argument("--axes " + std::to_string(axis) + " is outside the array's " +
                                    std::to_string(a.shape.size()) + " dimensions");
      mask |= 1u << (axis < 0 ? axis + static_cast<int64_t>(a.shape.size()) : axis);
    }
  sfft_options opts = options_from(args);
  auto fn = args.has("inverse") ? ifftshift_nd : fftshift_nd;
  std::vector<unsigned char> out_bytes;
  if (!args.has("in-place")) out_bytes.resize(a.bytes.size());
  unsigned char *out = args.has("in-place") ? a.bytes.data() : out_bytes.data();
  const auto t0 = std::chrono::steady_clock::now();
  if (report(fn(out, a.bytes.data(), static_cast<int>(a.shape.size()), a.shape.data(), mask, dtype, &opts),
             args.has("inverse") ? "ifftshift_nd" : "fftshift_nd"))
    return 1;
  const double seconds = seconds_since(t0);
  std::printf("%s of %s (%s %s, axes mask 0x%x, %s) in %.3f ms\n", args.has("inverse") ? "ifftshift" : "fftshift",
              input.c_str(), shape_text(a.shape).c_str(), npy_descr(dtype).c_str(), mask,
              args.has("in-place") ? "in place" : "out of place", seconds * 1e3);
  if (args.has("out")) {
    write_npy(args.get("out", ""), npy_descr(dtype), a.shape, out, a.bytes.size());
    std::printf("wrote %s\n", args.get("out", "").c_str());
  }
  if (args.has("plot")) plot_array(args.get("plot", ""), out, dtype, a.shape, false);
  if (args.has("summary"))
    write_summary(args.get("summary", ""), {{"command", "shift"},
                                            {"input", input},
                                            {"shape", shape_text(a.shape)},
                                            {"dtype", npy_descr(dtype)},
                                            {"axes_mask", std::to_string(mask)},
                                            {"inverse", args.has("inverse") ? "true" : "false"},
                                            {"seconds", fmt(seconds)}});
  return 0;
}
#endif

#if SFFT_CLI_HAS_SPARSE
int sparse_file(const Args &args, const std::string &input) {
  reject_unknown(args, {"k", "variant", "seed", "comb", "out", "plot", "summary", "backend", "threads"});
  Array a = read_npy(input);
  if (a.shape.size() != 1)
    throw std::invalid_argument(input + ": the sparse FFT needs a 1-D signal, got " + shape_text(a.shape));
  const uint64_t n = static_cast<uint64_t>(a.shape[0]);
  if (!args.has("k")) throw std::invalid_argument("--k (how many coefficients) is required with an input file");
  const uint64_t k =
      static_cast<uint64_t>(args.get_int_in("k", 0, 1, static_cast<int64_t>(std::max<uint64_t>(1, n / 4))));
  sfft_sparse_options knobs;
  sfft_sparse_options_init(&knobs);
  const std::string variant = args.get("variant", "auto");
  if (variant == "exact")
    knobs.variant = SFFT_SPARSE_EXACT;
  else if (variant == "robust")
    knobs.variant = SFFT_SPARSE_ROBUST;
  else if (variant != "auto")
    throw std::invalid_argument("--variant must be auto, robust or exact, got '" + variant + "'");
  knobs.comb_loops = static_cast<int>(args.get_int_in("comb", 0, 0, 16));
  sfft_options opts = options_from(args);
  // complex64 input runs in single precision; everything else as complex128.
  const bool single = a.dtype == "c8" || a.dtype == "f4";
  std::vector<double> x = a.to_complex(input);
  std::vector<float> xf;
  if (single) xf.assign(x.begin(), x.end());
  sfft_plan plan = nullptr;
  if (report(sfft_create_ex(&plan, n, k, single ? SFFT_COMPLEX64 : SFFT_COMPLEX128, &opts, &knobs), "sfft_create"))
    return 1;
  std::vector<uint64_t> freqs(k);
  std::vector<std::complex<double>> values(k);
  std::vector<std::complex<float>> values_f(k);
  uint64_t count = k;
  const auto t0 = std::chrono::steady_clock::now();
  const sfft_status s = single ? sfft_exec(plan, xf.data(), freqs.data(), values_f.data(), &count)
                               : sfft_exec(plan, x.data(), freqs.data(), values.data(), &count);
  const double seconds = seconds_since(t0);
  sfft_destroy(plan);
  if (report(s, "sfft_exec")) return 1;
  if (single)
    for (uint64_t i = 0; i < count; ++i) values[i] = values_f[i];
  std::printf("sparse FFT of %s (n = %" PRIu64 ", %s): %" PRIu64 " of k = %" PRIu64 " coefficients in %.3f ms\n",
              input.c_str(), n, single ? "complex64" : "complex128", count, k, seconds * 1e3);
  std::printf("%12s %28s %12s\n", "frequency", "X[f]", "|X[f]|");
  for (uint64_t i = 0; i < std::min<uint64_t>(count, 20); ++i)
    std::printf("%12" PRIu64 " (%12.6g,%12.6g) %12.6g\n", freqs[i], values[i].real(), values[i].imag(),
                std::abs(values[i]));
  if (count > 20) std::printf("... %" PRIu64 " more (see --out)\n", count - 20);
  if (args.has("out")) {
    const std::string path = args.get("out", "");
    if (ends_with(path, ".npy")) {
      struct Row {
        uint64_t freq;
        std::complex<double> value;
      };
      static_assert(sizeof(Row) == 24, "packed (freq, value) records");
      std::vector<Row> rows(count);
      for (uint64_t i = 0; i < count; ++i) rows[i] = {freqs[i], values[i]};
      write_npy(path, "[('freq', '<u8'), ('value', '<c16')]", {static_cast<int64_t>(count)}, rows.data(),
                rows.size() * sizeof(Row));
    } else if (ends_with(path, ".csv") || ends_with(path, ".json")) {
      std::FILE *f = std::fopen(path.c_str(), "w");
      if (f == nullptr) throw std::runtime_error(path + ": cannot create");
      const bool csv = ends_with(path, ".csv");
      std::fprintf(f, csv ? "freq,real,imag,abs\n" : "[\n");
      for (uint64_t i = 0; i < count; ++i)
        std::fprintf(f,
                     csv ? "%" PRIu64 ",%.17g,%.17g,%.17g\n"
                         : "  {\"freq\": %" PRIu64 ", \"real\": %.17g, \"imag\": %.17g, \"abs\": %.17g}%s\n",
                     freqs[i], values[i].real(), values[i].imag(), std::abs(values[i]), i + 1 < count ? "," : "");
      if (!csv) std::fprintf(f, "]\n");
      if (std::fclose(f) != 0) throw std::runtime_error(path + ": write error");
    } else {
      throw std::invalid_argument("--out " + path + ": the name must end in .npy, .csv or .json");
    }
    std::printf("wrote %s\n", path.c_str());
  }
  if (args.has("plot")) {
    std::vector<double> fx(count), fy(count);
    for (uint64_t i = 0; i < count; ++i) fx[i] = static_cast<double>(freqs[i]), fy[i] = std::abs(values[i]);
    plot_stems(args.get("plot", ""), fx, fy, static_cast<double>(n), false);
  }
  if (args.has("summary"))
    write_summary(args.get("summary", ""), {{"command", "sparse"},
                                            {"input", input},
                                            {"n", std::to_string(n)},
                                            {"k", std::to_string(k)},
                                            {"found", std::to_string(count)},
                                            {"variant", variant},
                                            {"seconds", fmt(seconds)}});
  return 0;
}
#endif

#if SFFT_CLI_HAS_NUFFT3
int nufft3_files(const Args &args) {
  reject_unknown(args, {"sources", "targets", "strengths", "tol", "sign", "kernel", "maxbatchsize", "out", "plot",
                        "summary", "backend", "threads"});
  for (const char *need : {"sources", "targets", "strengths"})
    if (!args.has(need))
      throw std::invalid_argument(std::string("--") + need + " FILE.npy is required with input files");
  const Array xs = read_npy(args.get("sources", "")), ss = read_npy(args.get("targets", "")),
              cs = read_npy(args.get("strengths", ""));
  if (xs.shape.empty() || xs.shape.size() > 2 || ss.shape.empty() || ss.shape.size() > 2)
    throw std::invalid_argument("--sources and --targets must be (N,) or (N, dim) arrays");
  const int dim = xs.shape.size() == 1 ? 1 : static_cast<int>(xs.shape[1]);
  const int tdim = ss.shape.size() == 1 ? 1 : static_cast<int>(ss.shape[1]);
  if (dim < 1 || dim > 3 || dim != tdim)
    throw std::invalid_argument("--sources has dimension " + std::to_string(dim) + ", --targets " +
                                std::to_string(tdim) + ": both must be 1, 2 or 3 and equal");
  const uint64_t N = static_cast<uint64_t>(xs.shape[0]), K = static_cast<uint64_t>(ss.shape[0]);
  const int ntransf = cs.shape.size() == 2 ? static_cast<int>(cs.shape[0]) : 1;
  if (cs.shape.empty() || cs.shape.size() > 2 || static_cast<uint64_t>(cs.shape.back()) != N || ntransf < 1)
    throw std::invalid_argument("--strengths must be (N,) or (ntransf, N) with N = " + std::to_string(N) + ", got " +
                                shape_text(cs.shape));
  const bool single = xs.dtype == "f4" && ss.dtype == "f4" && (cs.dtype == "c8" || cs.dtype == "f4");
  const double tol = args.get_double("tol", single ? 1e-5 : 1e-9);
  const int sign = static_cast<int>(args.get_int("sign", -1));
  const nufft3_kernel kernel = nufft3_kernel_from(args);
  const int maxbatchsize = static_cast<int>(args.get_int_in("maxbatchsize", 0, 0, INT_MAX));
  // Coordinates per dimension (the library takes one array per dimension).
  std::vector<double> x = xs.to_real("--sources"), s = ss.to_real("--targets");
  std::vector<std::vector<double>> xd(dim, std::vector<double>(N)), sd(dim, std::vector<double>(K));
  for (uint64_t i = 0; i < N; ++i)
    for (int d = 0; d < dim; ++d) xd[d][i] = x[i * dim + d];
  for (uint64_t i = 0; i < K; ++i)
    for (int d = 0; d < dim; ++d) sd[d][i] = s[i * dim + d];
  std::vector<std::vector<float>> xdf(dim), sdf(dim);
  for (int d = 0; d < dim; ++d) xdf[d].assign(xd[d].begin(), xd[d].end()), sdf[d].assign(sd[d].begin(), sd[d].end());
  std::vector<double> c = cs.to_complex("--strengths");
  std::vector<float> cf(c.begin(), c.end());
  std::vector<std::complex<double>> F(static_cast<std::size_t>(ntransf) * K);
  std::vector<std::complex<float>> Ff(single ? F.size() : 0);

  sfft_options opts = options_from(args);
  nufft3_plan plan = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  if (report(nufft3_create(&plan, dim, single ? SFFT_COMPLEX64 : SFFT_COMPLEX128, sign, tol, &opts), "nufft3_create"))
    return 1;
  nufft3_options nopts;
  nufft3_options_init(&nopts);
  nopts.ntransf = ntransf;
  nopts.kernel = kernel;
  nopts.maxbatchsize = maxbatchsize;
  sfft_status st = nufft3_set_options(plan, &nopts);
  auto coords = [&](auto &v, int d) -> const void * {
    return d < dim ? static_cast<const void *>(v[d].data()) : nullptr;
  };
  if (st == SFFT_SUCCESS)
    st = single ? nufft3_setpts(plan, N, coords(xdf, 0), coords(xdf, 1), coords(xdf, 2), K, coords(sdf, 0),
                                coords(sdf, 1), coords(sdf, 2))
                : nufft3_setpts(plan, N, coords(xd, 0), coords(xd, 1), coords(xd, 2), K, coords(sd, 0), coords(sd, 1),
                                coords(sd, 2));
  const double setpts_s = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  if (st == SFFT_SUCCESS) st = single ? nufft3_exec(plan, cf.data(), Ff.data()) : nufft3_exec(plan, c.data(), F.data());
  const double exec_s = seconds_since(t1);
  nufft3_destroy(plan);
  if (report(st, "nufft3")) return 1;
  if (single)
    for (std::size_t i = 0; i < F.size(); ++i) F[i] = Ff[i];
  std::printf("type-3 NUFFT, dim %d, N = %" PRIu64 ", K = %" PRIu64
              ", ntransf %d, tol %g, %s: create+setpts %.3f ms, "
              "exec %.3f ms\n",
              dim, N, K, ntransf, tol, single ? "complex64" : "complex128", setpts_s * 1e3, exec_s * 1e3);
  std::vector<int64_t> out_shape = ntransf > 1 ? std::vector<int64_t>{ntransf, static_cast<int64_t>(K)}
                                               : std::vector<int64_t>{static_cast<int64_t>(K)};
  if (args.has("out")) {
    if (single)
      write_npy(args.get("out", ""), "<c8", out_shape, Ff.data(), Ff.size() * sizeof Ff[0]);
    else
      write_npy(args.get("out", ""), "<c16", out_shape, F.data(), F.size() * sizeof F[0]);
    std::printf("wrote %s\n", args.get("out", "").c_str());
  }
  if (args.has("plot")) {
    std::vector<double> ix(K), mag(K);
    for (uint64_t i = 0; i < K; ++i) ix[i] = static_cast<double>(i), mag[i] = std::abs(F[i]);
    plot_stems(args.get("plot", ""), ix, mag, static_cast<double>(std::max<uint64_t>(K, 1)), false);
  }
  if (args.has("summary"))
    write_summary(args.get("summary", ""), {{"command", "nufft3"},
                                            {"dim", std::to_string(dim)},
                                            {"N", std::to_string(N)},
                                            {"K", std::to_string(K)},
                                            {"ntransf", std::to_string(ntransf)},
                                            {"tol", fmt(tol)},
                                            {"setpts_seconds", fmt(setpts_s)},
                                            {"exec_seconds", fmt(exec_s)}});
  return 0;
}
#endif

#if SFFT_CLI_HAS_SPFFT2D
CooMatrix read_coo_npz(const std::string &path, bool with_values) {
  auto arrays = read_npz(path);
  for (const char *need : {"row", "col", "shape"})
    if (arrays.find(need) == arrays.end())
      throw std::invalid_argument(path +
                                  ": a COO .npz needs arrays 'row', 'col' and 'shape' (np.savez or "
                                  "scipy.sparse.save_npz of a COO matrix); missing '" +
                                  need + "'");
  if (arrays.count("format") != 0 && arrays["format"].to_text() != "coo")
    throw std::invalid_argument(path + ": only COO matrices are supported (save matrix.tocoo())");
  CooMatrix m;
  m.row = arrays["row"].to_index(path + ":row");
  m.col = arrays["col"].to_index(path + ":col");
  const std::vector<int64_t> shape = arrays["shape"].to_index(path + ":shape");
  if (shape.size() != 2 || shape[0] < 0 || shape[1] < 0 || m.row.size() != m.col.size())
    throw std::invalid_argument(path + ": 'shape' must hold 2 extents and 'row'/'col' the same number of entries");
  m.rows = static_cast<uint64_t>(shape[0]);
  m.cols = static_cast<uint64_t>(shape[1]);
  if (with_values) {
    if (arrays.count("data") == 0) throw std::invalid_argument(path + ": --values needs a 'data' array");
    m.values = arrays["data"].to_real(path + ":data");
    if (m.values.size() != m.row.size()) throw std::invalid_argument(path + ": 'data' and 'row' differ in length");
  }
  return m;
}

int spfft2d_write(const Args &args, spfft2d_plan plan, const std::string &source, bool dbl) {
  uint64_t rows = 0, cols = 0, nnz = 0, tile = 0, work = 0;
  sfft_backend backend = SFFT_BACKEND_AUTO;
  if (report(spfft2d_get_info(plan, &rows, &cols, &nnz, &tile, &work, &backend), "spfft2d_get_info")) return 1;
  const uint64_t width = cols / 2 + 1;
  std::vector<unsigned char> out(
      checked_bytes(static_cast<std::size_t>(rows) * width, dbl ? 16 : 8, "the output spectrum"));
  const auto t0 = std::chrono::steady_clock::now();
  if (report(spfft2d_exec(plan, out.data()), "spfft2d_exec")) return 1;
  const double exec_s = seconds_since(t0);
  std::printf("spfft2d of %s (%" PRIu64 " x %" PRIu64 ", %" PRIu64
              " stored entries): exec %.3f ms, half spectrum %" PRIu64 " x %" PRIu64 " %s\n",
              source.c_str(), rows, cols, nnz, exec_s * 1e3, rows, width, dbl ? "complex128" : "complex64");
  const std::vector<int64_t> out_shape{static_cast<int64_t>(rows), static_cast<int64_t>(width)};
  if (args.has("out")) {
    write_npy(args.get("out", ""), dbl ? "<c16" : "<c8", out_shape, out.data(), out.size());
    std::printf("wrote %s\n", args.get("out", "").c_str());
  }
  if (args.has("plot"))
    plot_array(args.get("plot", ""), out.data(), dbl ? SFFT_COMPLEX128 : SFFT_COMPLEX64, out_shape, true);
  if (args.has("summary"))
    write_summary(args.get("summary", ""), {{"command", "spfft2d"},
                                            {"input", source},
                                            {"rows", std::to_string(rows)},
                                            {"cols", std::to_string(cols)},
                                            {"nnz", std::to_string(nnz)},
                                            {"backend", backend == SFFT_BACKEND_CUDA ? "cuda" : "cpu"},
                                            {"exec_seconds", fmt(exec_s)}});
  return 0;
}
#endif

}  // namespace cli
