// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the Matrix Market reader behind spfft2d_create_from_mtx: the input bytes (after one
// byte of flags: binary mode, dtype, pipe) become a file on disk, or the contents of a pipe read through
// /dev/fd (the reader must not seek). A file the library rejects must give a status
// and a message and no handle; a file it accepts must give a plan whose spectrum matches the direct sum
// over the nonzeros that a small strict reference reader finds in the same file, whenever that reader
// accepts it too (it accepts a strict subset of the format; when it declines, the run is only checked for
// crashes, leaks and sanitizer reports), unless its spectrum could overflow the output type, which create must
// refuse (output_range_verdict).
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "spfft2d_reference.hpp"

namespace {

using namespace sfft_fuzz;

constexpr uint64_t kMaxOutputElements = uint64_t{1} << 14;

std::string lower(std::string s) {
  for (auto &ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Parses an unsigned decimal integer token exactly; false on anything else.
bool parse_uint(const std::string &t, uint64_t *out) {
  if (t.empty() || t.size() > 19) return false;
  uint64_t v = 0;
  for (char ch : t) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<uint64_t>(ch - '0');
  }
  *out = v;
  return true;
}

bool parse_real(const std::string &t, double *out) {
  if (t.empty()) return false;
  char *end = nullptr;
  *out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(*out);
}

std::vector<std::string> tokens(const std::string &line) {
  std::istringstream s(line);
  std::vector<std::string> t;
  for (std::string w; s >> w;) t.push_back(w);
  return t;
}

// Lines the library refuses whatever they hold (sfft.h): longer than 65536 bytes, or holding a NUL byte.
bool text_line(const std::string &line) { return line.size() <= 65536 && line.find('\0') == std::string::npos; }

// The strict reference reader: a banner line, comment lines ('%' in column 1) and blank lines, a size line, exactly nnz
// entry lines of 2 (pattern) or 3 tokens, 1-based indices in range; symmetric/skew-symmetric mirror off-diagonal
// entries (skew: negated, and no diagonal); in binary mode an entry whose value is zero is dropped. Returns
// false for anything else.
bool reference_read(const std::string &text, bool binary, uint64_t *rows, uint64_t *cols, SparseMatrix *m) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || !text_line(line)) return false;
  auto banner = tokens(lower(line));
  if (banner.size() != 5 || banner[0] != "%%matrixmarket" || banner[1] != "matrix" || banner[2] != "coordinate")
    return false;
  const std::string field = banner[3], sym = banner[4];
  if (field != "real" && field != "integer" && field != "pattern") return false;
  if (sym != "general" && sym != "symmetric" && sym != "skew-symmetric") return false;
  const bool pattern = field == "pattern";
  uint64_t nnz = 0;
  bool have_size = false;
  uint64_t seen = 0;
  while (std::getline(in, line)) {
    if (!text_line(line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto t = tokens(line);
    if (t.empty() || line[0] == '%') continue;  // Matrix Market: a comment line begins with '%' (column 1)
    if (!have_size) {
      if (t.size() != 3 || !parse_uint(t[0], rows) || !parse_uint(t[1], cols) || !parse_uint(t[2], &nnz)) return false;
      if (*rows == 0 || *cols == 0 || *rows >= (uint64_t{1} << 31) || *cols >= (uint64_t{1} << 31)) return false;
      if (sym != "general" && *rows != *cols) return false;
      have_size = true;
      continue;
    }
    uint64_t r = 0, c = 0;
    double v = 1;
    if (t.size() != (pattern ? 2u : 3u) || !parse_uint(t[0], &r) || !parse_uint(t[1], &c)) return false;
    if (!pattern && !parse_real(t[2], &v)) return false;
    if (field == "integer" && v != std::floor(v)) return false;
    if (r < 1 || c < 1 || r > *rows || c > *cols) return false;
    if (sym == "skew-symmetric" && r == c) return false;
    if (sym != "general" && r < c) return false;  // symmetric files store the lower triangle
    if (++seen > nnz) return false;
    const bool as_binary = binary || pattern;
    // Binary mode turns every stored nonzero into 1 (sfft.h); a stored zero (0, -0, 0e5) is no nonzero.
    if (as_binary && v == 0) continue;
    auto add = [&](uint64_t i, uint64_t j, double w) {
      if (as_binary)
        (*m)[{i, j}] = 1.0;
      else
        (*m)[{i, j}] += w;
    };
    add(r - 1, c - 1, v);
    if (sym != "general" && r != c) add(c - 1, r - 1, sym == "skew-symmetric" ? -v : v);
  }
  return have_size && seen == nnz;
}

// The harness's scratch file, one per process, removed when the process exits normally.
struct ScratchFile {
  std::string path = "/tmp/sfft-fuzz-mtx-" + std::to_string(getpid()) + ".mtx";
  ~ScratchFile() { std::remove(path.c_str()); }
};

const std::string &temp_path() {
  static const ScratchFile file;
  return file.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  if (size == 0) return 0;
  const bool binary = data[0] & 1u;
  const int dt = (data[0] & 2u) ? SFFT_COMPLEX128 : SFFT_COMPLEX64;
  const std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
  // Pipe mode: the whole text is written before the read (it fits the pipe's 64 KiB buffer), so nothing waits.
  const bool through_pipe = (data[0] & 4u) && text.size() <= 4096;
  int pipe_fds[2] = {-1, -1};
  std::string path = temp_path();
  if (through_pipe) {
    check(pipe(pipe_fds) == 0, "pipe() failed");
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t w = write(pipe_fds[1], text.data() + done, text.size() - done);
      check(w > 0, "write to the pipe failed");
      done += static_cast<std::size_t>(w);
    }
    close(pipe_fds[1]);
    path = "/dev/fd/" + std::to_string(pipe_fds[0]);
  } else {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CPU;
  opts.threads = 1;
  auto *const poison = reinterpret_cast<spfft2d_plan>(uintptr_t{0x5A5A5A5A});
  spfft2d_plan plan = poison;
  sfft_status st = fuzz_spfft2d_create_from_mtx(&plan, path.c_str(), binary ? 1 : 0, dt, &opts);
  if (through_pipe) close(pipe_fds[0]);

  uint64_t ref_rows = 0, ref_cols = 0;
  SparseMatrix ref;
  const bool ref_ok = reference_read(text, binary, &ref_rows, &ref_cols, &ref);
  const int range = ref_ok ? output_range_verdict(ref, dt == SFFT_COMPLEX128) : 0;
  if (st != SFFT_SUCCESS) {
    check_failure(st, "spfft2d_create_from_mtx", {});
    check(plan == poison, "spfft2d_create_from_mtx failed but wrote the handle");
    check(st == SFFT_ERROR_INVALID_ARGUMENT || st == SFFT_ERROR_UNSUPPORTED || st == SFFT_ERROR_OUT_OF_MEMORY,
          std::string("spfft2d_create_from_mtx: unexpected status ") + sfft_status_string(st));
    check(!ref_ok || range <= 0 || st == SFFT_ERROR_OUT_OF_MEMORY,
          "spfft2d_create_from_mtx rejected a file the strict reference reader accepts");
    return 0;
  }
  check_success_clean("spfft2d_create_from_mtx");
  check(range >= 0, "spfft2d_create_from_mtx accepted a file whose spectrum can overflow the output type");
  uint64_t rows = 0, cols = 0, nnz = 0;
  check(spfft2d_get_info(plan, &rows, &cols, &nnz, nullptr, nullptr, nullptr) == SFFT_SUCCESS,
        "spfft2d_get_info failed");
  if (ref_ok) {
    check(rows == ref_rows && cols == ref_cols, "spfft2d_create_from_mtx: shape differs from the reference reader");
    check(nnz == ref.size(), "spfft2d_create_from_mtx: " + std::to_string(nnz) +
                                 " nonzeros, the reference reader has " + std::to_string(ref.size()));
  }
  const bool is_double = dt == SFFT_COMPLEX128;
  const std::size_t elem = is_double ? 16 : 8;
  const uint64_t half = cols / 2 + 1;
  // The whole spectrum when small, else its first row.
  const uint64_t nrows = rows * half <= kMaxOutputElements ? rows : (half <= kMaxOutputElements ? 1 : 0);
  if (nrows > 0) {
    Poisoned out(nrows * half * elem);
    st = spfft2d_exec_rows(plan, 0, nrows, out.get());
    if (st != SFFT_SUCCESS) check_failure(st, "spfft2d_exec_rows", {&out});
    check(st == SFFT_SUCCESS, "spfft2d_exec_rows failed on a plan read from a file");
    if (ref_ok) check_rows(out.get(), is_double, ref, rows, cols, 0, nrows, "spfft2d_exec_rows (mtx)");
  }
  check(spfft2d_destroy(plan) == SFFT_SUCCESS, "spfft2d_destroy failed");
  return 0;
}
