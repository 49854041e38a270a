// SPDX-License-Identifier: Apache-2.0
// COO validation and compression into columns, twiddle tables, tile geometry.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <omp.h>
#include <utility>
#include <vector>

#include "common/checked.hpp"
#include "common/error.hpp"
#include "common/process.hpp"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d {
namespace {

void require_index(int64_t v, uint64_t bound, const char *array, uint64_t k, const char *dim, const char *fn) {
  require(v >= 0 && static_cast<uint64_t>(v) < bound, fn, ": ", array, "[", k, "] = ", v, " is outside [0, ", dim,
          " = ", bound, ")");
}

// Bits of the largest index below n (0 for n = 1).
unsigned index_bits(uint64_t n) {
  unsigned bits = 0;
  while (bits < 64 && (n - 1) >> bits != 0) ++bits;
  return bits;
}

// Threads for a pass over n entries: at most `threads`, each with at least 2^15 entries.
int entry_team(std::size_t n, int threads) {
  constexpr std::size_t kEntriesPerThread = std::size_t{1} << 15;
  return static_cast<int>(std::clamp<std::size_t>(n / kEntriesPerThread, 1,
                                                  static_cast<std::size_t>(std::max(1, usable_threads(threads)))));
}

// Sorts keys by their bits [lo, hi), stably (keys equal there keep their input order, so keys that came in order of
// the bits below lo end up in order of all bits below hi), and, where given, order along with them: an LSD radix
// sort of equal digits of at most kMaxDigitBits (fewer passes than 11-bit digits; docs/spfft2d.md "Planning time"),
// each pass counting and scattering on `threads` threads over consecutive chunks, thread t's keys of a digit after
// those of the threads before it, so the sort stays stable.
void radix_sort(std::vector<uint64_t> &keys, std::vector<std::size_t> *order, unsigned lo, unsigned hi, int threads) {
  constexpr unsigned kMaxDigitBits = 14;
  const std::size_t n = keys.size();
  if (hi <= lo || n < 2) return;
  const unsigned passes = (hi - lo + kMaxDigitBits - 1) / kMaxDigitBits;
  const unsigned digit_bits = (hi - lo + passes - 1) / passes;
  const std::size_t radix = std::size_t{1} << digit_bits;
  const uint64_t mask = radix - 1;
  const int team = entry_team(n, threads);
  std::vector<std::size_t> count(static_cast<std::size_t>(team) * radix);
  std::vector<uint64_t> keys_out(n);
  std::vector<std::size_t> order_out(order ? n : 0);
  for (unsigned p = 0; p < passes; ++p) {
    const unsigned shift = lo + p * digit_bits;
    bool one_digit = false;  // every key has the same digit: the pass would leave them as they are
#pragma omp parallel num_threads(team) if (team > 1)
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
      const std::size_t first = n * t / static_cast<std::size_t>(team);
      const std::size_t last = n * (t + 1) / static_cast<std::size_t>(team);
      std::size_t *at = count.data() + t * radix;
      std::fill(at, at + radix, std::size_t{0});
      for (std::size_t i = first; i < last; ++i) ++at[(keys[i] >> shift) & mask];
#pragma omp barrier
#pragma omp single
      {
        std::size_t sum = 0;
        for (std::size_t d = 0; d < radix; ++d) {
          const std::size_t digit_start = sum;
          for (std::size_t u = 0; u < static_cast<std::size_t>(team); ++u)
            sum += std::exchange(count[u * radix + d], sum);
          one_digit = one_digit || sum - digit_start == n;
        }
      }
      if (!one_digit)
        for (std::size_t i = first; i < last; ++i) {
          const std::size_t to = at[(keys[i] >> shift) & mask]++;
          keys_out[to] = keys[i];
          if (order) order_out[to] = (*order)[i];
        }
    }
    if (one_digit) continue;
    keys.swap(keys_out);
    if (order) order->swap(order_out);
  }
}

// Appends the sorted keys (col << row_bits | row; repeats adjacent) to the column structure.
template <class WeightOf>
void compress(SparseColumns &m, const std::vector<uint64_t> &keys, unsigned row_bits, WeightOf &&weight_of,
              bool weighted) {
  const uint64_t row_mask = (uint64_t{1} << row_bits) - 1;
  m.col_id.reserve(std::min<std::size_t>(keys.size(), m.cols));
  m.row.reserve(keys.size());
  m.col_start.push_back(0);
  for (std::size_t i = 0; i < keys.size();) {
    std::size_t j = i;
    double w = 0;
    for (; j < keys.size() && keys[j] == keys[i]; ++j)
      if (weighted) w += weight_of(j);
    auto col = static_cast<int32_t>(keys[i] >> row_bits);
    if (m.col_id.empty() || m.col_id.back() != col) {
      if (!m.col_id.empty()) m.col_start.push_back(static_cast<int64_t>(m.row.size()));
      m.col_id.push_back(col);
    }
    m.row.push_back(static_cast<int32_t>(keys[i] & row_mask));
    if (weighted) m.weight.push_back(w);
    i = j;
  }
  if (!m.col_id.empty()) m.col_start.push_back(static_cast<int64_t>(m.row.size()));
}

// The nonzeros grouped by row, columns increasing within a row (the merged coordinates are distinct, so a sort of
// (row, col) keys gives it without gathering from the column arrays), the nonempty rows compressed like the columns.
void build_rows(SparseColumns &m, int threads) {
  const unsigned col_bits = index_bits(m.cols);
  const uint64_t col_mask = (uint64_t{1} << col_bits) - 1;
  std::vector<uint64_t> keys(m.nnz());
  std::vector<std::size_t> order(m.binary() ? 0 : m.nnz());
  for (std::size_t j = 0; j < m.col_id.size(); ++j)
    for (auto e = static_cast<std::size_t>(m.col_start[j]); e < static_cast<std::size_t>(m.col_start[j + 1]); ++e)
      keys[e] = static_cast<uint64_t>(m.row[e]) << col_bits | static_cast<uint64_t>(m.col_id[j]);
  for (std::size_t e = 0; e < order.size(); ++e) order[e] = e;
  // The keys come in column order, so sorting by the row bits alone leaves each row's columns increasing.
  radix_sort(keys, m.binary() ? nullptr : &order, col_bits, col_bits + index_bits(m.rows), threads);
  m.row_col.resize(m.nnz());
  if (!m.binary()) m.row_weight.resize(m.nnz());
  m.row_start.push_back(0);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const auto row = static_cast<int32_t>(keys[k] >> col_bits);
    if (m.row_id.empty() || m.row_id.back() != row) {
      if (!m.row_id.empty()) m.row_start.push_back(static_cast<int64_t>(k));
      m.row_id.push_back(row);
    }
    m.row_col[k] = static_cast<int32_t>(keys[k] & col_mask);
    if (!m.binary()) m.row_weight[k] = m.weight[order[k]];
  }
  if (!m.row_id.empty()) m.row_start.push_back(static_cast<int64_t>(m.nnz()));
}

}  // namespace

SparseColumns build_columns(uint64_t rows, uint64_t cols, uint64_t nnz, const int64_t *row_idx, const int64_t *col_idx,
                            const double *values, int threads, const char *fn) {
  require(rows >= 1 && rows <= kMaxExtent, fn, ": rows = ", rows, " must be in [1, 2^31 - 1]");
  require(cols >= 1 && cols <= kMaxExtent, fn, ": cols = ", cols, " must be in [1, 2^31 - 1]");
  std::size_t n = to_size(nnz, "nnz");
  checked_mul(checked_mul(rows, cols / 2 + 1, "rows * (cols/2 + 1)"), 16, "output bytes");
  if (n > 0) {
    require(row_idx != nullptr, fn, ": row_idx is NULL but nnz = ", nnz);
    require(col_idx != nullptr, fn, ": col_idx is NULL but nnz = ", nnz);
  }
  SparseColumns m;
  m.rows = rows;
  m.cols = cols;
  const unsigned row_bits = index_bits(rows), key_bits = row_bits + index_bits(cols);
  std::vector<uint64_t> keys(n);
  const auto key = [&](std::size_t k) {
    return static_cast<uint64_t>(col_idx[k]) << row_bits | static_cast<uint64_t>(row_idx[k]);
  };
  bool valid = true, sorted = true, row_order = true;
  const auto signed_n = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) num_threads(entry_team(n, threads)) reduction(&& : valid, sorted, row_order)
  for (std::ptrdiff_t i = 0; i < signed_n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    valid = valid && row_idx[k] >= 0 && static_cast<uint64_t>(row_idx[k]) < rows && col_idx[k] >= 0 &&
            static_cast<uint64_t>(col_idx[k]) < cols && (values == nullptr || std::isfinite(values[k]));
    keys[k] = key(k);
    if (k == 0) continue;
    sorted = sorted && key(k - 1) <= keys[k];
    row_order = row_order && row_idx[k - 1] <= row_idx[k];
  }
  for (std::size_t k = 0; !valid && k < n; ++k) {  // the first bad entry's message
    require_index(row_idx[k], rows, "row_idx", k, "rows", fn);
    require_index(col_idx[k], cols, "col_idx", k, "cols", fn);
    if (values != nullptr) require(std::isfinite(values[k]), fn, ": values[", k, "] = ", values[k], " is not finite");
  }
  // The key bits to sort: none where the entries come sorted by (column, row) (Matrix Market files, CSC), the column
  // bits where they come by row (CSR, scipy's tocoo), all of them otherwise.
  const unsigned sort_from = sorted || row_order ? row_bits : 0, sort_to = sorted ? row_bits : key_bits;
  if (values == nullptr) {
    radix_sort(keys, nullptr, sort_from, sort_to, threads);
    compress(
        m, keys, row_bits, [](std::size_t) { return 1.0; }, false);
  } else {
    // Stable: repeats are summed in input order, so the sums are deterministic.
    std::vector<std::size_t> order(n);
    for (std::size_t k = 0; k < n; ++k) order[k] = k;
    radix_sort(keys, &order, sort_from, sort_to, threads);
    compress(
        m, keys, row_bits, [&](std::size_t j) { return values[order[j]]; }, true);
  }
  build_rows(m, threads);
  return m;
}

void require_finite_output(const SparseColumns &m, bool double_output, const char *fn) {
  if (m.binary()) return;  // the sum is nnz < 2^62
  const double limit = 0.999 * (double_output ? std::numeric_limits<double>::max()
                                              : static_cast<double>(std::numeric_limits<float>::max()));
  const char *type = double_output ? "complex128" : "complex64";
  double sum = 0;
  for (std::size_t j = 0; j < m.col_id.size(); ++j)
    for (int64_t e = m.col_start[j]; e < m.col_start[j + 1]; ++e) {
      const double w = m.weight[static_cast<std::size_t>(e)];
      const int32_t r = m.row[static_cast<std::size_t>(e)];
      require(std::isfinite(w), fn, ": the repeated values of the nonzero at (row ", r, ", col ", m.col_id[j],
              ") sum to ", w, " (beyond the double range)");
      sum += std::fabs(w);
      require(sum <= limit, fn, ": |values| summed up to the nonzero at (row ", r, ", col ", m.col_id[j], ") reach ",
              sum, ", above 0.999 times the largest ", type, " value (", limit,
              "): the spectrum could overflow (this sum bounds every output coefficient)");
    }
}

template <class Real>
std::complex<Real> twiddle(uint64_t m, uint64_t n) {
  // The angle from the exact integers m / n in long double, so large n loses nothing to argument reduction.
  const long double two_pi = 6.283185307179586476925286766559005768L;
  const long double a = two_pi * static_cast<long double>(m) / static_cast<long double>(n);
  return std::complex<Real>(static_cast<Real>(std::cos(a)), static_cast<Real>(-std::sin(a)));
}
template std::complex<float> twiddle<float>(uint64_t, uint64_t);
template std::complex<double> twiddle<double>(uint64_t, uint64_t);

namespace {

// All n twiddles, the upper half as the conjugates of the lower (e^{-2 pi i (n - m) / n} = conj e^{-2 pi i m / n}).
template <class Real>
std::vector<std::complex<Real>> full_twiddle_table(uint64_t n) {
  std::vector<std::complex<Real>> t(n);
  for (uint64_t m = 0; m <= n / 2; ++m) t[m] = twiddle<Real>(m, n);
  for (uint64_t m = n / 2 + 1; m < n; ++m) t[m] = std::conj(t[n - m]);
  return t;
}

// k a modulo 2n, exact (2n <= 2^33 and a < 2^32: k mod 2n is split at 16 bits to keep each product below 2^50).
uint64_t times_mod_two_n(uint64_t k, uint64_t a, uint64_t n) {
  const uint64_t turn = 2 * n;
  k %= turn;
  const uint64_t high = ((k >> 16) * a % turn) << 16, low = (k & 0xffff) * a;
  return (high % turn + low % turn) % turn;
}

// {sin, cos}(pi x / n) for 0 <= x < 2n, the argument reduced exactly to x <= n / 2 (so a sine near a multiple of
// pi keeps its relative accuracy), whose pair quarter(x) gives.
template <class Quarter>
std::pair<double, double> sincos_pi(uint64_t x, uint64_t n, Quarter &&quarter) {
  double s = 1, c = 1;
  if (x >= n) x -= n, s = -1, c = -1;
  if (2 * x > n) x = n - x, c = -c;
  const auto [qs, qc] = quarter(x);
  return {s * qs, c * qc};
}

std::pair<double, double> quarter_sincos_pi(uint64_t x, uint64_t n) {
  const double t = 3.14159265358979323846 * static_cast<double>(x) / static_cast<double>(n);
  return {std::sin(t), std::cos(t)};
}

template <class Quarter>
std::complex<double> run_sum(uint64_t len, uint64_t a, uint64_t n, Quarter &&quarter) {
  a %= n;
  if (a == 0) return {static_cast<double>(len), 0.0};
  const double ratio = sincos_pi(times_mod_two_n(len, a, n), n, quarter).first / sincos_pi(a, n, quarter).first;
  // e^{-pi i (len - 1) a / n}
  const auto [s, c] = sincos_pi(times_mod_two_n(len - 1, a, n), n, quarter);
  return {ratio * c, -ratio * s};
}

}  // namespace

std::complex<double> twiddle_run_sum(uint64_t len, uint64_t a, uint64_t n) {
  return run_sum(len, a, n, [n](uint64_t x) { return quarter_sincos_pi(x, n); });
}

RunSums::RunSums(uint64_t n, uint64_t uses) : n_(n) {
  if (n / 2 + 1 > uses / 2) return;
  quarter_.resize(n / 2 + 1);
  for (uint64_t x = 0; x <= n / 2; ++x) quarter_[x] = quarter_sincos_pi(x, n);
}

std::complex<double> RunSums::operator()(uint64_t len, uint64_t a) const {
  if (quarter_.empty()) return twiddle_run_sum(len, a, n_);
  return run_sum(len, a, n_, [this](uint64_t x) { return quarter_[x]; });
}

template <class Real>
TwiddleMemo<Real>::TwiddleMemo(uint64_t n, uint64_t uses) : n_(n) {
  if (n <= uses) table_ = full_twiddle_table<Real>(n);
}
template class TwiddleMemo<float>;
template class TwiddleMemo<double>;

template <class Real>
TwiddleTables<Real> make_twiddles(uint64_t n) {
  auto twiddle = [&](uint64_t m) { return spfft2d::twiddle<Real>(m, n); };
  TwiddleTables<Real> t;
  if (n <= TwiddleTables<Real>::kSingleTableMax) {
    t.lo = full_twiddle_table<Real>(n);
    return t;
  }
  const uint64_t lo_size = uint64_t{1} << TwiddleTables<Real>::kSplitBits;
  t.lo.resize(lo_size);
  for (uint64_t j = 0; j < lo_size; ++j) t.lo[j] = twiddle(j);
  t.hi.resize(((n - 1) >> TwiddleTables<Real>::kSplitBits) + 1);
  for (uint64_t q = 0; q < t.hi.size(); ++q) t.hi[q] = twiddle(q << TwiddleTables<Real>::kSplitBits);
  return t;
}
template TwiddleTables<float> make_twiddles<float>(uint64_t);
template TwiddleTables<double> make_twiddles<double>(uint64_t);

Layout::Block Layout::direct_block(uint64_t k, uint64_t lo, uint64_t hi) const {
  uint64_t s0 = k * tile, s1 = std::min(s0 + tile, half + 1);
  uint64_t first = std::max(s0, lo), end = std::min(s1, hi);
  return first < end ? Block{first, end - first} : Block{};
}

Layout::Block Layout::mirror_block(uint64_t k, uint64_t lo, uint64_t hi) const {
  // Source s (1 <= s < rows - half) mirrors to output row rows - s > half.
  uint64_t s0 = std::max<uint64_t>(k * tile, 1), s1 = std::min({k * tile + tile, half + 1, rows - half});
  if (s0 >= s1) return {};
  uint64_t first = std::max(rows - s1 + 1, lo), end = std::min(rows - s0 + 1, hi);
  return first < end ? Block{first, end - first} : Block{};
}

uint64_t auto_tile(const Layout &layout, std::size_t bytes_per_row, std::size_t budget) {
  uint64_t t = budget / std::max<std::size_t>(bytes_per_row, 1);
  return std::clamp<uint64_t>(t, 1, layout.half + 1);
}

std::size_t auto_budget(const Layout &layout, std::size_t complex_bytes) {
  const std::size_t lo = std::size_t{8} << 20, hi = std::size_t{128} << 20;
  long double output = static_cast<long double>(layout.rows) * layout.width * complex_bytes;
  return static_cast<std::size_t>(std::clamp<long double>(output / 4, lo, hi));
}

uint64_t bluestein_length(uint64_t n) {
  // 2^a 3^b only: on the H100 cuFFT's C2C at lengths with factors 5 or 7 near 16k ran 1.6-3.3x slower per
  // point than at 2^a 3^b lengths (e.g. 16464 = 2^4 3 7^3: 1.23 ms, 17496 = 2^3 3^7: 0.51 ms for 4110
  // rows), more than the slightly longer length costs.
  const uint64_t target = 2 * n - 1;
  uint64_t best = ~uint64_t{0};
  for (uint64_t p3 = 1; p3 < 2 * target; p3 *= 3) {
    uint64_t m = p3;
    while (m < target) m <<= 1;
    best = std::min(best, m);
  }
  return best;
}

// cuFFT's batched C2C against the two transforms of our Bluestein pass at bluestein_length (H100, 2026-12-06,
// rows x the half of the other extent, cuFFT / Bluestein): 12328 = 2^3 23 67 0.96, 15010 = 2 5 19 79 0.75,
// 12416 = 2^7 97 0.83, 15616 = 2^8 61 0.67, 30030 = 2 3 5 7 11 13 0.51, but 6096 = 2^4 3 127 1.30, 8384 = 2^6
// 131 2.35, 8248 = 2^3 1031 2.38, primes 8219 and 10007 2.37 and 2.90. Bluestein also writes and reads its
// padded rows (3x the traffic), so DIRECT at 8219 x 12328 went from 2.64-2.67 ms to 2.03 with cuFFT's rows,
// 10007 x 15010 from 5.37 to 3.60.
constexpr uint64_t kCudaLibraryRowPrime = 97;

bool cuda_rows_take_bluestein(uint64_t n) { return !smooth(n, kCudaLibraryRowPrime); }

namespace {

// Time constants in ns for complex64 work (complex128 scales the memory and FFT terms by 2). CUDA: fitted
// to H100 runs of bench_spfft2d --method (benchmarks/RESULTS.md, spfft2d section) and to per-stage timings
// of the DIRECT pass (2026-11-23): cuFFT's dense 2-D R2C gives per_fft_point, batched contiguous C2C row
// FFTs at 2^a 3^b and power-of-two lengths per_row_fft_point, the methods' times the rest. CPU: the same
// shape, scaled to 2-thread runs of `sfft spfft2d --method` on the development machine.
struct CostConstants {
  double per_term;           // one nonzero x one output of a direct sum along rows (DIRECT_ROWS)
  double per_col_term;       // one nonzero x one output of the column sums of DIRECT
  double per_byte;           // streaming memory traffic
  double per_fft_point;      // per point per log2(length) of a 7-smooth C2C FFT
  double per_row_fft_point;  // the same for the contiguous row FFTs of the CUDA DIRECT method
  double strided_fft;        // factor for a 1-D FFT down columns (stride = width) of a 7-smooth length
  double bluestein;          // FFTs of the power of two >= 2n - 1 that a library's Bluestein costs
  double per_tile;           // fixed cost of one tile (launches, plan dispatch)
  double odd_smooth;         // factor for a library FFT of a 7-smooth length that is not a power of two
  double per_launch;         // fixed cost of one kernel, memset or FFT execution of a whole-spectrum method
  double direct_call;        // fixed cost of a DIRECT call besides its tiles
  double per_gen_term;       // one nonzero x one column of PRUNED's four-step generation (CUDA)
  double dense_fft;          // factor for the FFT terms of DENSE (the library's 2-D R2C)
  double dense_odd_smooth;   // odd_smooth for DENSE's 2-D R2C
  double generic_radix;      // per_row_fft_point's factor for cuFFT's rows of a length with factors 11 to 97
  double row_five_seven;     // per_row_fft_point's factor for cuFFT's rows of a 7-smooth length with a factor 5 or 7
  double bluestein_rows;     // per_row_fft_point's factor for the CUDA DIRECT's own Bluestein rows (two FFTs)
  double direct_traffic;     // factor for per_byte on the CUDA DIRECT's streamed bytes
};
// CUDA refit (issue 22) on the H100 suite table of bench_spfft2d --device (2026-11-25, 30 matrices, 1024^2 to
// 16384^2, powers of two, 8219 and 1.5 n columns): odd_smooth from cuFFT's 2-D R2C at 8192 x 12288 and
// 16384 x 24576 (2.3-2.4x the time of the square power of two for 1.5x the points), bluestein from the dense
// path at 8219^2 (8.5 ms), strided_fft from DIRECT_ROWS at 4096^2 to 16384^2, per_launch from the 1024^2
// rows (every method 28-46 us, 2 to 6 launches), per_tile from the explicit (tiled) DIRECT at 4096^2 to 8192^2
// (13 tiles) and direct_call so that one tile costs what it did before (45 us), the column sums' imbalance
// from the power-law rows (warp_padded_terms), per_row_fft_point from AUTO's one-tile DIRECT at 8192^2 to
// 16384^2 (the estimates then 0.93-1.15 of the measured times); the rest unchanged. The CPU constants are
// those of phase 1 but two (2026-11-30, development VM, 2 threads): strided_fft 1.0, since the CPU's column pass
// goes through buffers (fftw_lines.hpp) and costs about what a contiguous pass does (was 1.5, FFTW_ESTIMATE's
// in-place strided plan; PRUNED at 2048^2 13-17 ms against 24-27), and per_fft_point and per_row_fft_point 0.2
// (was 0.5): FFTW's transforms of 512 to 4096 points took 0.12-0.22 ns per point and level on one thread (r2c,
// and C2C batches of 16), while the direct sums' 1.0 ns per term held (rectangular 512 x 768, about 4 nonzeros a
// row, 0.85 ms for 0.79e6 terms); at 0.5 PRUNED summed such rows directly and AUTO took it at 1.0-1.2 ms against
// DENSE's 0.9-1.0.
// per_gen_term: PRUNED's four-step generation, refitted with kFourStepPasses (2026-11-30, H200; see there): 3.15e-4
// since the generation's 32-bit phase products and separate run loops (was 4.95e-4).
// dense_fft (CUDA 0.75) and dense_odd_smooth (CUDA 1.85; odd_smooth's 2.2 was fitted to the in-place 2-D R2C):
// DENSE's 2-D R2C out of place measured 2.02 ms at 16384^2, 0.50 at 8192^2, 1.80-1.82 at 12000^2, 3.89 at
// 16384 x 24576 and 0.93 at 8192 x 12288 (H200, 2026-11-30), estimated now at 1.03, 1.02, 1.00, 1.09 and 1.09 of
// that (the plain FFT terms: 1.30, 1.27, 1.49, 1.54, 1.54).
// Refit (2026-11-28) on the H200 suite of bench_spfft2d --device (42 matrices, 1024^2 to 16384^2, powers of
// two, 8219 and 12000, every method measured): AUTO had picked PRUNED where DENSE was up to 1.6x faster, because a
// single nonzero of the four-step generation cost twice the fitted per_gen_term and a run entry no more than a
// single one (banded and band+scattered rows are runs). per_term, per_byte, per_fft_point, per_row_fft_point,
// per_gen_term and kFourStepFixed were searched for the smallest worst AUTO / best explicit time (1.23 on the
// H200 suite, 1.02 on the H100 table of 2026-11-25, which it was not fitted to; before: 1.62 and 1.27).
// Device scale (2026-12-06), from the H200 table above (2026-12-01) and H100 tables of the same code and
// matrices: from 4096^2 up the H100 ran DENSE 1.14-1.36 times and PRUNED 1.09-1.45 times slower than the H200 (a
// copy 1.24-1.43 times), so the memory terms scale by memory_time_scale, and pass 1's write overlaps the four-step
// generation (PRUNED below). AUTO then runs, on the H100 suite, the fastest method or one within 1.04 of it
// (power-law 4096^2 had run DENSE, 1.14 times PRUNED's time). A per_col_term of 8.3e-4 had fitted both suites'
// picks (their DIRECT columns tiled, slower than the one tile AUTO runs) but sent banded, block-diagonal and
// uniform 6144^2 to DENSE at twice the one-tile DIRECT's time; 3.7e-4 kept. kCudaFitBandwidth: the bandwidth the
// CUDA constants' memory terms were fitted at, the H200's as NVIDIA states it (4.8 TB/s; the H100 reports 3.352e12
// to cuda::memory_bandwidth, its stated 3.35 TB/s).
// direct_call 1.0e4 (was 3.0e4, fitted so that one tile cost 45 us with per_tile): the one-tile DIRECT that AUTO
// runs took 25-37 us in all at 1024^2 (H100, 2026-12-06, bench_spfft2d's "direct 1 tile"), and at 3000^2 the 45 us
// kept AUTO on DENSE at 1.8-1.9 times the one tile's time. Checked against the measured columns of the H200 suite and
// the H100 suite and sizes outside it (108 matrices): AUTO's pick changes only for H100 3000^2 banded,
// block-diagonal, uniform and 6144^2 power-law, each to the faster method.
constexpr double kCudaFitBandwidth = 4.8e12;
// The one-tile DIRECT (2026-12-06, seventy-ninth session): fitted to the H100's "direct 1 tile" column of the suite and
// the sizes outside it (66 matrices, 1024^2 to 32768^2; bench_spfft2d --device, the seventy-eighth session's tables of
// RESULTS.md, in git), where the estimates had been 1.3-1.95 times the measured times at powers of two, 3000^2 and
// 6144^2 (the constants above were fitted to tiled times and to the H100 before memory_time_scale multiplied them by
// 1.43 there), so AUTO ran DENSE at 1.24-1.44 times the one tile's time (power-law and band+scattered 3000^2,
// band+scattered 6144^2). Least squares in relative error with direct_traffic held at 0.5 (the streamed bytes and the
// row FFTs both grow with the tile's area, so the data do not separate them): per_row_fft_point 2.8e-4 (was 5.8e-4),
// row_five_seven 1.6 (3000, 4500, 12000 and 18000 columns), bluestein_rows 2.2 (was 2.0), generic_radix 5.0 (was 4.0;
// cuFFT's rows of 12328 points took 0.96 of a Bluestein pass's two transforms, the probe above); per_col_term and the
// fixed costs fitted within 3 and 18 % of their values, kept. The estimates are now 0.64-1.25 of the measured times
// (before 1.00-1.95); the worst are lengths whose cuFFT speed no class describes (12000 columns 0.70-0.79, 18000 1.25,
// 49152 0.64), so where the row length has a prime factor from 5 to 97 the CUDA engine's AUTO times cuFFT's rows and
// the estimate takes that time (MeasuredFfts::row_line; H100: 12000 points 216-224 ns a row, 18000 points 139-144).
constexpr CostConstants kCudaCosts{2.1e-3, 3.7e-4, 4.3e-4,  5.7e-4, 2.8e-4, 2.1, 2.6, 1.5e4, 2.2,
                                   5.0e3,  1.0e4,  3.15e-4, 0.75,   1.85,   5.0, 1.6, 2.2,   0.5};
constexpr CostConstants kCpuCosts{1.0, 1.0, 0.25, 0.2, 0.2, 1.0, 2.5, 1.0e4, 1.0,
                                  0.0, 0.0, 0.0,  1.0, 1.0, 1.0, 1.0, 2.0,   1.0};
// Threads of a warp: the CUDA DIRECT column sums give a thread one column, so a warp runs as long as its
// longest column (the column counts are padded to the warp's maximum).
constexpr uint64_t kWarp = 32;

// A batch of C2C FFTs of length n as the FFT libraries do them: other lengths than 7-smooth ones take
// Bluestein's route inside cuFFT and FFTW alike, a few FFTs of the power of two >= 2n - 1; 7-smooth lengths
// other than powers of two cost `odd_smooth` (k.odd_smooth unless given) times more per point and level.
double fft_cost(uint64_t n, uint64_t batch, const CostConstants &k, double odd_smooth) {
  if (n <= 1) return 0;
  double len = static_cast<double>(n), factor = 1;
  if (!seven_smooth(n)) {
    uint64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    len = static_cast<double>(m);
    factor = k.bluestein;
  } else if ((n & (n - 1)) != 0) {
    factor = odd_smooth;
  }
  return k.per_fft_point * factor * static_cast<double>(batch) * len * std::log2(len);
}
double fft_cost(uint64_t n, uint64_t batch, const CostConstants &k) { return fft_cost(n, batch, k, k.odd_smooth); }

// A batch of the CUDA DIRECT method's contiguous row FFTs of exactly length n.
double row_fft_cost(uint64_t n, uint64_t batch, const CostConstants &k) {
  if (n <= 1) return 0;
  const double len = static_cast<double>(n);
  return k.per_row_fft_point * static_cast<double>(batch) * len * std::log2(len);
}

// The nonzeros the CUDA column sums step through: each warp of kWarp adjacent columns as many times its
// longest column, the heavy columns left out (without that split a power-law matrix's hub columns made this
// 8-9x nnz; a banded one's is about nnz); a heavy column's warp steps through ceil(n / kWarp) entries per lane
// and then combines the lanes (taken as kWarp more steps).
double warp_padded_terms(const SparseColumns &m) {
  const auto heavy = static_cast<int64_t>(heavy_column_limit(m));
  const auto warp = static_cast<int64_t>(kWarp);
  double terms = 0;
  uint64_t group = ~uint64_t{0};
  int64_t longest = 0;
  for (std::size_t j = 0; j < m.col_id.size(); ++j) {
    const uint64_t g = static_cast<uint64_t>(m.col_id[j]) / kWarp;
    if (g != group) {
      terms += static_cast<double>(warp * longest);
      group = g;
      longest = 0;
    }
    const int64_t n = m.col_start[j + 1] - m.col_start[j];
    if (n > heavy)
      terms += static_cast<double>(warp * ((n + warp - 1) / warp) + warp);
    else
      longest = std::max(longest, n);
  }
  return terms + static_cast<double>(warp * longest);
}

}  // namespace

uint64_t heavy_column_limit(const SparseColumns &m) {
  if (m.col_id.empty()) return 16;
  return std::max<uint64_t>(16, 2 * m.nnz() / m.col_id.size());
}

spfft2d_method MethodCosts::cheapest() const {
  const std::pair<double, spfft2d_method> all[] = {{direct, SPFFT2D_METHOD_DIRECT},
                                                   {direct_rows, SPFFT2D_METHOD_DIRECT_ROWS},
                                                   {dense, SPFFT2D_METHOD_DENSE},
                                                   {pruned, SPFFT2D_METHOD_PRUNED}};
  auto best = all[0];
  for (const auto &c : all)
    if (c.first < best.first) best = c;  // ties keep the earlier method
  return best.second;
}

namespace {
// PRUNED's break-even from operation counts: a direct term (complex multiply-add with a table twiddle) is
// taken as 8 flops and a C2C FFT of length n as 5 n log2 n flops (an R2C half that), so a row's direct sums
// (nnz x width terms, width ~ cols / 2) cost less than its R2C below nnz = 5/8 log2(cols), and the column
// pass's K direct terms per output less than a column FFT below K = 5/8 log2(rows). To be refitted with
// measurements (bench_spfft2d).
constexpr double kPrunedBreakEven = 0.625;
// The four-step column pass sums a direct row's nonzeros for every column as it generates the column input: a
// nonzero costs about 8 instructions per 8 columns less than a complex multiply-add each (one exact twiddle,
// then steps), an R2C row about 4 reads or writes of its width (zeroed padded row, R2C, read by pass 1), which
// balance near 40 nonzeros on the H100 (2.96e13 lane instructions/s against ~3 TB/s). Four threads sum one
// row and a warp 8 rows (complex64), so a row far above the mean also holds its warp up: rows above twice the
// mean go to the R2C as well.
constexpr double kFourStepFftRow = 40.0;
constexpr double kFourStepImbalance = 2.0;
// With an even column count a nonzero's twiddle for column v also serves column C/2 - v (two additions):
// about 5.4 instructions per column and nonzero instead of 7.9.
constexpr double kFourStepMirror = 0.7;
// Pass 1 generates its rows while its earlier rows' stores drain, so its time is the larger of the generation and
// its write (a third of the passes' traffic; the device refit, above). Before that the two were summed.
// The two passes' time in units of streaming the output once (per_byte), with per_gen_term and kFourStepFixed
// fitted on the H200 (2026-11-30, bench_spfft2d --device, the 30 power-of-two matrices of 1024^2 to 16384^2: the
// passes with 256-byte column tiles, pass 2's tiles aligned, shared twiddle tables, 32-bit phase products, runs
// in loops of their own; least squares in relative error, every estimate within 0.90-1.07 of the measured time,
// from a run with stage timing, 12 us taken off each). The ideal is 3 (one write, one read and rewrite) at the
// copy bandwidth, which per_byte is not.
constexpr double kFourStepPasses = 2.30;
// A block of the generation (256 threads) sums its rows in rounds of 256 threads x 8 columns / tile columns
// rows: 64 in complex64 (256-byte tiles of 32 columns, 8 a thread or 4 and their mirrors), 128 in complex128.
constexpr double kFourStepThreads = 256, kFourStepTileBytes = 256, kFourStepThreadCols = 8;

// The four-step pass's fixed cost besides its launches (ns): its two passes' tails and table set-up.
constexpr double kFourStepFixed = 9.2e3;

// Blocks of pass 1 a SM: the generation waits on its shared and L1 loads (docs/spfft2d.md), so its time goes as
// the inverse of the blocks resident. Registers allow kFourStepRowsBlocks (ncu, 16384^2: 4 blocks, 50 %
// occupancy); shared memory, on the fitting GPUs' 228 KiB a SM (1 KiB of it reserved a block), fewer at Q = 256
// (32768 rows: 78 KiB a block, 2 blocks). per_gen_term was fitted at Q <= 128; at 32768^2 the H100's PRUNED took
// 1.1-1.9 times its estimate without this factor on the generation-bound matrices (uniform 13.9 ms against 8.5,
// so AUTO ran it at 1.20 times DENSE), 0.98-1.26 with it.
constexpr double kFourStepRowsBlocks = 4;
constexpr double kSmSharedBytes = 228.0 * 1024;
double four_step_rows_blocks(uint64_t q, std::size_t complex_bytes) {
  const double block = static_cast<double>(four_step_rows_shared_bytes(q, complex_bytes)) + 1024;
  return std::clamp(std::floor(kSmSharedBytes / block), 1.0, kFourStepRowsBlocks);
}

// The entries the four-step generation steps through per column (a run of adjacent columns, four_step_entries,
// costs what a single nonzero does: measured, its product with the run's table hides behind the loads): each
// round of a block's rows as many times as the round's longest direct row, since the block waits at its
// barrier for its slowest thread (against each warp's longest row, the power-law rows' estimates were 0.77-0.91
// of the measured times, now 0.91-1.05). The rows r1 + P r2 of a block go to its threads by decreasing length
// (pruned.cu), so a round's rows are neighbours in that order.
double four_step_terms(const SparseColumns &m, const PrunedShape &s, std::size_t complex_bytes) {
  const auto round_rows = static_cast<uint64_t>(kFourStepThreads * kFourStepThreadCols *
                                                static_cast<double>(complex_bytes) / kFourStepTileBytes);
  const FourStepEntries entries = four_step_entries(m, s);
  std::vector<int64_t> direct(m.rows, 0);
  for (std::size_t j = 0, d = 0; j < m.row_id.size(); ++j) {
    if (s.fft_row[j]) continue;
    direct[static_cast<std::size_t>(m.row_id[j])] = entries.start[d + 1] - entries.start[d];
    ++d;
  }
  const uint64_t P = s.four_step_p, Q = m.rows / P;
  std::vector<int64_t> block(Q);
  double terms = 0;
  for (uint64_t r1 = 0; r1 < P; ++r1) {
    for (uint64_t r2 = 0; r2 < Q; ++r2) block[r2] = direct[r1 + P * r2];
    std::sort(block.begin(), block.end(), std::greater<>());
    for (uint64_t g = 0; g < Q; g += round_rows)
      terms += static_cast<double>(block[g]) * static_cast<double>(std::min(round_rows, Q - g));
  }
  return terms;
}
}  // namespace

namespace {
// Whether some nonempty row holds `length` adjacent columns (weights aside): without, four_step_entries would find
// no run to make a table for.
bool has_run(const SparseColumns &m, int64_t length) {
  for (std::size_t j = 0; j < m.row_id.size(); ++j)
    for (int64_t e = m.row_start[j]; e + length <= m.row_start[j + 1]; ++e)
      if (m.row_col[static_cast<std::size_t>(e + length - 1)] - m.row_col[static_cast<std::size_t>(e)] == length - 1)
        return true;
  return false;
}
}  // namespace

PrunedShape pruned_shape(const SparseColumns &m, CostBackend backend, const MeasuredFfts &measured) {
  PrunedShape s;
  s.measured = measured;
  const double column_limit = kPrunedBreakEven * std::log2(static_cast<double>(std::max<uint64_t>(m.rows, 2)));
  s.direct_columns = static_cast<double>(m.row_id.size()) <= column_limit;
  const uint64_t R = m.rows;
  s.four_step = backend == CostBackend::Cuda && !s.direct_columns && (R & (R - 1)) == 0 && R >= kFourStepMinRows &&
                R <= kFourStepMaxRows;
  double row_limit = kPrunedBreakEven * std::log2(static_cast<double>(std::max<uint64_t>(m.cols, 2)));
  if (s.four_step) {
    unsigned bits = 0;
    while ((uint64_t{1} << bits) < R) ++bits;
    // Pass 1 (length Q = R / P) takes the longer half at odd powers: its generation gives every thread of a
    // block a row only when Q >= 128.
    s.four_step_p = uint64_t{1} << (bits / 2);
    const double mean = static_cast<double>(m.nnz()) / static_cast<double>(m.row_id.size());
    row_limit = std::max(kFourStepFftRow, kFourStepImbalance * mean);
  } else if (measured.row_r2c > 0) {  // a row's direct sums cost per_term a term and output
    const CostConstants &k = backend == CostBackend::Cuda ? kCudaCosts : kCpuCosts;
    row_limit = std::max(row_limit, measured.row_r2c / kCpuModelThreads /
                                        (k.per_term * static_cast<double>(m.cols / 2 + 1)));
  }
  s.fft_row.assign(m.row_id.size(), 0);
  // Every row's entries as the sums would take them if it were direct (the tables chosen over all rows).
  if (backend == CostBackend::Cpu && has_run(m, kCpuMinRun))
    s.entries = four_step_entries(m, s, kCpuRunTables, kCpuMinRun);
  const FourStepEntries &e = s.entries;
  for (std::size_t j = 0; j < m.row_id.size(); ++j) {
    const auto nnz = static_cast<double>(m.row_start[j + 1] - m.row_start[j]);
    const auto runs = e.runs.empty() ? 0.0 : static_cast<double>(e.runs[j]);
    const double terms =
        e.runs.empty() ? nnz : kCpuRunTerms * runs + static_cast<double>(e.start[j + 1] - e.start[j]) - runs;
    s.fft_row[j] = terms > row_limit;
    s.fft_rows += s.fft_row[j] ? 1 : 0;
    s.direct_terms += s.fft_row[j] ? 0.0 : terms;
  }
  return s;
}

FourStepEntries four_step_entries(const SparseColumns &m, const PrunedShape &s, uint64_t max_tables, int64_t min_run) {
  if (max_tables == 0) max_tables = std::min<uint64_t>(32, m.rows / 32);
  // fn(first column, length, weight) for each run of nonempty row j (a single nonzero is a run of 1), in order;
  // runs are found again in each pass rather than stored (a vector of them per row was most of this function's
  // time, and the CPU plans call it for every row).
  const auto for_each_run = [&m](std::size_t j, auto &&fn) {
    int64_t e = m.row_start[j];
    const int64_t end = m.row_start[j + 1];
    while (e < end) {
      const int32_t c = m.row_col[static_cast<std::size_t>(e)];
      const double w = m.binary() ? 1.0 : m.row_weight[static_cast<std::size_t>(e)];
      int64_t length = 1;
      while (e + length < end && m.row_col[static_cast<std::size_t>(e + length)] == c + length &&
             (m.binary() || m.row_weight[static_cast<std::size_t>(e + length)] == w))
        ++length;
      fn(c, length, w);
      e += length;
    }
  };
  std::map<int64_t, double> saving;  // run length -> terms saved over single nonzeros
  for (std::size_t j = 0; j < m.row_id.size(); ++j) {
    if (s.fft_row[j]) continue;
    for_each_run(j, [&](int32_t, int64_t length, double) {
      if (length >= min_run) saving[length] += static_cast<double>(length - 1);
    });
  }
  FourStepEntries out;
  std::vector<std::pair<double, int64_t>> best;
  for (const auto &[length, saved] : saving) best.emplace_back(saved, length);
  std::sort(best.begin(), best.end(), std::greater<>());
  std::vector<int32_t> table;  // by run length: its table, or -1
  for (const auto &b : best) {
    if (out.run_length.size() >= max_tables) break;
    if (table.size() <= static_cast<std::size_t>(b.second)) table.resize(static_cast<std::size_t>(b.second) + 1, -1);
    table[static_cast<std::size_t>(b.second)] = static_cast<int32_t>(out.run_length.size());
    out.run_length.push_back(b.second);
  }
  out.start.push_back(0);
  out.entry.reserve(m.nnz());
  std::vector<FourStepEntries::Entry> singles;
  for (std::size_t j = 0; j < m.row_id.size(); ++j) {
    if (s.fft_row[j]) continue;
    const std::size_t first = out.entry.size();
    singles.clear();
    for_each_run(j, [&](int32_t col, int64_t length, double weight) {
      const int32_t t = static_cast<std::size_t>(length) < table.size() ? table[static_cast<std::size_t>(length)] : -1;
      if (t >= 0) {
        out.entry.push_back({col, t, weight});
      } else {
        for (int64_t k = 0; k < length; ++k) singles.push_back({static_cast<int32_t>(col + k), -1, weight});
      }
    });
    out.runs.push_back(static_cast<int32_t>(out.entry.size() - first));
    out.entry.insert(out.entry.end(), singles.begin(), singles.end());
    out.start.push_back(static_cast<int64_t>(out.entry.size()));
  }
  return out;
}

MethodCosts estimate_costs(const SparseColumns &m, const Layout &tiled, CostBackend backend, std::size_t complex_bytes,
                           double memory_scale) {
  return estimate_costs(m, tiled, backend, complex_bytes, pruned_shape(m, backend), memory_scale);
}

double memory_time_scale(double bytes_per_second) {
  if (!(bytes_per_second > 0)) return 1.0;
  return std::clamp(kCudaFitBandwidth / bytes_per_second, 0.25, 4.0);
}

MethodCosts estimate_costs(const SparseColumns &m, const Layout &tiled, CostBackend backend, std::size_t complex_bytes,
                           const PrunedShape &shape, double memory_scale) {
  CostConstants k = backend == CostBackend::Cuda ? kCudaCosts : kCpuCosts;
  if (backend == CostBackend::Cuda) {
    k.per_byte *= memory_scale;
    k.per_fft_point *= memory_scale;
    k.per_row_fft_point *= memory_scale;
  }
  const double scale = static_cast<double>(complex_bytes) / 8.0;
  const double R = static_cast<double>(m.rows), C = static_cast<double>(m.cols), W = static_cast<double>(tiled.width);
  const double H = static_cast<double>(tiled.half + 1), nnz = static_cast<double>(m.nnz());
  const double E = static_cast<double>(complex_bytes);
  // A strided 1-D FFT down the columns is slow for smooth lengths; Bluestein copies to contiguous anyway.
  const MeasuredFfts &measured = shape.measured;
  const double down_columns = measured.column_line > 0
                                  ? measured.column_line / kCpuModelThreads * W
                                  : scale * fft_cost(m.rows, tiled.width, k);
  const double strided = seven_smooth(m.rows) ? k.strided_fft : 1.0;
  MethodCosts c;
  if (backend == CostBackend::Cuda) {
    // Column sums written once per tile row (padded to the Bluestein length when the rows need it), the
    // row FFTs (Bluestein: forward, pointwise product, inverse), the fold into the half spectrum.
    const bool own = cuda_rows_take_bluestein(m.cols);
    const uint64_t len = own ? bluestein_length(m.cols) : m.cols;
    const double Lr = static_cast<double>(len);
    const double rows_fft = own                    ? k.bluestein_rows
                            : smooth(m.cols, 3)    ? 1.0
                            : seven_smooth(m.cols) ? k.row_five_seven
                                                   : k.generic_radix;
    const double row_ffts =
        measured.row_line > 0 ? measured.row_line * H : scale * row_fft_cost(len, tiled.half + 1, k) * rows_fft;
    c.direct = k.per_col_term * H * warp_padded_terms(m) + row_ffts +
               k.direct_traffic * k.per_byte * E * (H * Lr * (own ? 3 : 1) + H * C + R * W) + k.direct_call +
               k.per_tile * static_cast<double>(tiled.tile_count());
  } else {
    // Tile sums (plus a zero fill when columns are empty), FFT along rows, fold into the half spectrum.
    const double row_ffts = measured.row_line > 0 ? measured.row_line / kCpuModelThreads * H
                                                  : scale * fft_cost(m.cols, tiled.half + 1, k);
    c.direct = k.per_term * H * nnz + row_ffts +
               k.per_byte * E * (H * C * (m.has_empty_columns() ? 3 : 2) + R * W) +
               k.per_tile * static_cast<double>(tiled.tile_count());
  }
  // Launches: [zero fill when rows are empty,] row sums, the column FFT.
  c.direct_rows = k.per_launch * (m.has_empty_rows() ? 3 : 2) + k.per_term * W * nnz +
                  k.per_byte * E * R * W * (m.has_empty_rows() ? 2 : 1) + strided * down_columns;
  // Zero fill, scatter, then the library's 2-D R2C: half a C2C along rows, FFT down columns (4 launches). On the
  // CPU that is three spectra's worth of memory traffic (the zero fill, then the R2C's read of the real array and its
  // write of the spectrum) where PRUNED builds each row in cache and writes it once (traffic_model); the constants
  // were fitted with one spectrum for DENSE and two per FFT row. Spectra up to 4 MiB had been costed the fitted way,
  // as if in cache, so AUTO ran DENSE on sparse 256^2 and 512^2 matrices at 1.4-2.3 times PRUNED's or DIRECT_ROWS'
  // time (development VM, 2 threads, 2026-12-06); costed by traffic at every size it runs PRUNED there, within 1.5
  // of the best, and on dense-ish ones (uniform 5-90 % fill) within 1.46 of DENSE at 256^2 and 1.12 at 512^2.
  const bool traffic_model = backend == CostBackend::Cpu;
  const double dense_spectra = traffic_model ? 3.0 : 1.0;
  c.dense = 4 * k.per_launch + k.per_byte * (dense_spectra * E * R * W + 4 * nnz) +
            k.dense_fft * scale *
                (0.5 * fft_cost(m.cols, m.rows, k, k.dense_odd_smooth) +
                 fft_cost(m.rows, tiled.width, k, k.dense_odd_smooth));
  // PRUNED: the nonempty rows' spectra (direct terms, or a zeroed padded row and half a C2C), then the column
  // pass: K direct terms per output, or the strided in-place C2C down the columns of B after the empty rows
  // are zeroed (CUDA: after the compact spectra are expanded into B, a read of K rows and a write of all).
  const double K = static_cast<double>(m.row_id.size()), F = static_cast<double>(shape.fft_rows);
  // The CPU builds each FFT row in cache (zeroed, scattered, R2C in place) and writes it once, like a row of
  // direct sums; with an FFT column pass only the empty rows are zeroed besides (traffic_model). The fitted
  // constants count a zeroed padded row and its spectrum per FFT row, and a zero fill of the whole spectrum.
  const double row_traffic = traffic_model ? 0.0 : k.per_byte * E * 2 * W;
  const double row_fft =
      measured.row_r2c > 0 ? measured.row_r2c / kCpuModelThreads : 0.5 * scale * fft_cost(m.cols, 1, k);
  const double rows_pass = k.per_term * W * shape.direct_terms + F * (row_fft + row_traffic) +
                           (traffic_model ? k.per_byte * E * K * W : 0.0);
  const double columns_pass =
      shape.direct_columns ? k.per_term * K * R * W + k.per_byte * E * R * W
      : traffic_model
          ? k.per_byte * E * (R - K) * W + strided * down_columns
          : k.per_byte * E * (R * W + (backend == CostBackend::Cuda ? K * W : 0.0)) + strided * down_columns;
  // Launches: [zero fill, scatter, R2C of the FFT rows,] the direct rows, the expansion or the column sums[, the
  // column FFT].
  const double launches = (F > 0 ? 3 : 0) + 2 + (shape.direct_columns ? 0 : 1);
  c.pruned = k.per_launch * launches + rows_pass + columns_pass;
  if (shape.four_step) {
    // [Zero fill, scatter, R2C of the FFT rows,] the two passes: the generation's warp-padded terms, and the
    // passes' traffic (one write, one read and rewrite: 3 output sizes, measured as kFourStepPasses).
    const double mirror = m.cols % 2 == 0 ? kFourStepMirror : 1.0;
    const double occupancy = kFourStepRowsBlocks / four_step_rows_blocks(m.rows / shape.four_step_p, complex_bytes);
    const double generation =
        scale * k.per_gen_term * mirror * occupancy * W * four_step_terms(m, shape, complex_bytes);
    const double passes = kFourStepPasses * k.per_byte * E * R * W;
    c.pruned = k.per_launch * ((F > 0 ? 3 : 0) + 2) +
               F * (0.5 * scale * fft_cost(m.cols, 1, k) + k.per_byte * E * 3 * W) + std::max(generation, passes / 3) +
               2 * passes / 3 + kFourStepFixed;
  }
  return c;
}

bool is_whole_method(spfft2d_method m) {
  return m == SPFFT2D_METHOD_DIRECT_ROWS || m == SPFFT2D_METHOD_DENSE || m == SPFFT2D_METHOD_PRUNED;
}

spfft2d_method method_of_call(spfft2d_method set, spfft2d_method whole_auto, bool whole_native) {
  if (set != SPFFT2D_METHOD_AUTO) return set;
  return whole_native ? whole_auto : SPFFT2D_METHOD_DIRECT;
}

}  // namespace sfft::spfft2d
