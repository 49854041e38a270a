// SPDX-License-Identifier: Apache-2.0
// Matrix Market coordinate reader. Every malformed input is an SFFT_ERROR_INVALID_ARGUMENT naming the
// line. The file is read front to back in blocks and never seeked, so pipes, FIFOs and /proc files read like
// regular files; lines are capped at kMaxLineBytes so that memory stays bounded whatever the input
// (/dev/zero, a binary file), and memory reserved up front is capped by the header's entry count and, for a
// regular file, by its size.
#include <locale.h>  // newlocale, strtod_l (POSIX)
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "common/error.hpp"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d {
namespace {

// Matrix Market lines are short (the format's own limit is 1024 characters); anything far longer is not one.
constexpr std::size_t kMaxLineBytes = std::size_t{1} << 16;
// Entries reserved up front when the input's size is unknown (a pipe): more grow as they are read.
constexpr uint64_t kUnknownSizeReserve = uint64_t{1} << 16;

enum class Field { Pattern, Real, Integer };
enum class Symmetry { General, Symmetric, Skew };

std::vector<std::string> split(const std::string &line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool blank(const std::string &line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

struct FileCloser {
  void operator()(std::FILE *f) const { std::fclose(f); }
};

class Reader {
 public:
  explicit Reader(const char *path) : path_(path), file_(std::fopen(path, "rb")), buffer_(std::size_t{1} << 16) {
    require(file_ != nullptr, "cannot open '", path, "': ", std::strerror(errno));
    struct stat st {};
    if (fstat(fileno(file_.get()), &st) == 0) {
      require(!S_ISDIR(st.st_mode), "cannot read '", path, "': it is a directory");
      if (S_ISREG(st.st_mode)) file_bytes_ = static_cast<uint64_t>(st.st_size);
    }
  }
  // Next line that is neither blank nor a comment; false at end of file.
  bool next_data_line(std::string &line) {
    while (next_line(line))
      if (!blank(line) && line[0] != '%') return true;
    return false;
  }
  // Next line without its terminator ("\n" or "\r\n"); false at end of file.
  bool next_line(std::string &line) {
    line.clear();
    if (pos_ == end_ && !refill()) return false;
    ++line_no_;
    for (;;) {
      const char *start = buffer_.data() + pos_;
      const auto *newline = static_cast<const char *>(std::memchr(start, '\n', end_ - pos_));
      const std::size_t take = static_cast<std::size_t>((newline ? newline : buffer_.data() + end_) - start);
      if (line.size() + take > kMaxLineBytes) bad(cat("line is longer than ", kMaxLineBytes, " bytes"));
      line.append(start, take);
      pos_ += take;
      if (newline) {
        ++pos_;
        break;
      }
      if (!refill()) break;  // the last line has no terminator
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find('\0') != std::string::npos) bad("line holds a NUL byte (not a text file)");
    return true;
  }
  [[noreturn]] void bad(const std::string &what) const {
    fail(SFFT_ERROR_INVALID_ARGUMENT, "'", path_, "' line ", std::max<uint64_t>(line_no_, 1), ": ", what);
  }
  [[noreturn]] void unsupported(const std::string &what) const {
    fail(SFFT_ERROR_UNSUPPORTED, "'", path_, "' line ", std::max<uint64_t>(line_no_, 1), ": ", what);
  }
  // The whole token must be the integer: from_chars reads no whitespace, locale or trailing text.
  int64_t integer(const std::string &tok, const char *what) const {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(number_start(tok), tok.data() + tok.size(), v);
    if (ec == std::errc::result_out_of_range) bad(cat(what, " '", tok, "' is out of range"));
    if (ec != std::errc() || end != tok.data() + tok.size()) bad(cat(what, " '", tok, "' is not an integer"));
    return v;
  }
  // strtod's syntax in the C locale (the file's '.' whatever the process locale), over the whole token; a
  // value below the double range reads as 0 or a subnormal, as strtod gives it.
  double real(const std::string &tok) const {
    static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", nullptr);
    if (c_locale == nullptr) fail(SFFT_ERROR_OUT_OF_MEMORY, "newlocale(\"C\") failed");
    char *end = nullptr;
    const double v = strtod_l(tok.c_str(), &end, c_locale);
    if (end != tok.c_str() + tok.size()) bad(cat("value '", tok, "' is not a number"));
    if (!std::isfinite(v)) bad(cat("value '", tok, "' is not finite"));
    return v;
  }
  // Bytes of a regular file; 0 when unknown (pipe, FIFO, device, /proc file).
  uint64_t file_bytes() const { return file_bytes_; }
  uint64_t line_no() const { return line_no_; }

 private:
  // A leading '+' is allowed (strtoll and C's scanf accept it), from_chars takes only '-'.
  static const char *number_start(const std::string &tok) {
    return tok.size() > 1 && tok[0] == '+' && tok[1] != '-' && tok[1] != '+' ? tok.data() + 1 : tok.data();
  }
  bool refill() {
    pos_ = 0;
    end_ = std::fread(buffer_.data(), 1, buffer_.size(), file_.get());
    if (end_ == 0 && std::ferror(file_.get()))
      fail(SFFT_ERROR_INVALID_ARGUMENT, "cannot read '", path_, "': ", std::strerror(errno));
    return end_ > 0;
  }

  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::vector<char> buffer_;
  std::size_t pos_ = 0, end_ = 0;  // unread bytes of buffer_
  uint64_t file_bytes_ = 0;
  uint64_t line_no_ = 0;
};

}  // namespace

MtxMatrix read_mtx(const char *path, bool binary) {
  require(path != nullptr, "path is NULL");
  Reader rd(path);
  std::string line;
  if (!rd.next_line(line)) rd.bad("empty file (no %%MatrixMarket banner)");
  auto banner = split(line);
  if (banner.empty() || lower(banner[0]) != "%%matrixmarket") rd.bad("missing %%MatrixMarket banner");
  if (banner.size() != 5) rd.bad("banner needs 5 words: %%MatrixMarket matrix coordinate FIELD SYMMETRY");
  if (lower(banner[1]) != "matrix") rd.bad(cat("object '", banner[1], "' is not 'matrix'"));
  std::string format = lower(banner[2]), field_s = lower(banner[3]), sym_s = lower(banner[4]);
  if (format == "array") rd.unsupported("dense 'array' format is not supported (use 'coordinate')");
  if (format != "coordinate") rd.bad(cat("format '", banner[2], "' is not 'coordinate'"));
  Field field;
  if (field_s == "pattern")
    field = Field::Pattern;
  else if (field_s == "real")
    field = Field::Real;
  else if (field_s == "integer")
    field = Field::Integer;
  else if (field_s == "complex")
    rd.unsupported("complex matrices are not supported (the input must be real)");
  else
    rd.bad(cat("field '", banner[3], "' is not pattern, real, integer or complex"));
  Symmetry sym;
  if (sym_s == "general")
    sym = Symmetry::General;
  else if (sym_s == "symmetric")
    sym = Symmetry::Symmetric;
  else if (sym_s == "skew-symmetric")
    sym = Symmetry::Skew;
  else if (sym_s == "hermitian")
    rd.unsupported("hermitian matrices are not supported (the input must be real)");
  else
    rd.bad(cat("symmetry '", banner[4], "' is not general, symmetric, skew-symmetric or hermitian"));

  if (!rd.next_data_line(line)) rd.bad("file ends before the size line 'ROWS COLS NNZ'");
  auto size = split(line);
  if (size.size() != 3) rd.bad("size line must be 'ROWS COLS NNZ'");
  int64_t rows = rd.integer(size[0], "ROWS"), cols = rd.integer(size[1], "COLS"), nnz = rd.integer(size[2], "NNZ");
  if (rows < 1 || static_cast<uint64_t>(rows) > kMaxExtent) rd.bad(cat("ROWS = ", rows, " is not in [1, 2^31 - 1]"));
  if (cols < 1 || static_cast<uint64_t>(cols) > kMaxExtent) rd.bad(cat("COLS = ", cols, " is not in [1, 2^31 - 1]"));
  if (nnz < 0) rd.bad(cat("NNZ = ", nnz, " is negative"));
  if (sym != Symmetry::General && rows != cols) rd.bad(cat("a ", banner[4], " matrix must be square"));
  if (static_cast<uint64_t>(nnz) > static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols))
    rd.bad(cat("NNZ = ", nnz, " exceeds ROWS * COLS"));

  MtxMatrix m;
  m.rows = static_cast<uint64_t>(rows);
  m.cols = static_cast<uint64_t>(cols);
  // Each entry line takes at least 4 bytes ("1 1\n"): never reserve more than the file can hold.
  const uint64_t bytes = rd.file_bytes();
  uint64_t expect = std::min<uint64_t>(static_cast<uint64_t>(nnz), bytes > 0 ? bytes / 4 + 1 : kUnknownSizeReserve);
  if (sym != Symmetry::General) expect *= 2;
  m.row.reserve(expect);
  m.col.reserve(expect);
  bool keep_values = !binary && field != Field::Pattern;
  if (keep_values) m.value.reserve(expect);

  const std::size_t want = field == Field::Pattern ? 2 : 3;
  for (int64_t k = 0; k < nnz; ++k) {
    if (!rd.next_data_line(line))
      rd.bad(cat("file ends after ", k, " of the NNZ = ", nnz, " entries the size line declares (truncated)"));
    auto tok = split(line);
    if (tok.size() != want)
      rd.bad(cat("entry needs ", want, " fields (", field == Field::Pattern ? "ROW COL" : "ROW COL VALUE", "), got ",
                 tok.size()));
    int64_t i = rd.integer(tok[0], "row index"), j = rd.integer(tok[1], "column index");
    if (i < 1 || i > rows) rd.bad(cat("row index ", i, " is outside [1, ", rows, "]"));
    if (j < 1 || j > cols) rd.bad(cat("column index ", j, " is outside [1, ", cols, "]"));
    double v = 1.0;
    if (field == Field::Integer) v = static_cast<double>(rd.integer(tok[2], "integer value"));
    if (field == Field::Real) v = rd.real(tok[2]);
    if (sym == Symmetry::Skew && i == j) rd.bad("a skew-symmetric matrix has no diagonal entries");
    if (!keep_values && v == 0.0) continue;  // binary mode: a stored zero is not a nonzero
    auto add = [&](int64_t r, int64_t c, double w) {
      m.row.push_back(r - 1);
      m.col.push_back(c - 1);
      if (keep_values) m.value.push_back(w);
    };
    add(i, j, v);
    if (sym != Symmetry::General && i != j) add(j, i, sym == Symmetry::Skew && keep_values ? -v : v);
  }
  while (rd.next_line(line))
    if (!blank(line) && line[0] != '%') rd.bad(cat("more entries than the NNZ = ", nnz, " the size line declares"));
  return m;
}

}  // namespace sfft::spfft2d
