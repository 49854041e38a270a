// COO validation and compression into columns, twiddle tables, tile geometry.
#include <algorithm>
#include <cmath>

#include "common/checked.hpp"
#include "common/error.hpp"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d {
namespace {

void require_index(int64_t v, uint64_t bound, const char *array, uint64_t k, const char *dim, const char *fn) {
  require(v >= 0 && static_cast<uint64_t>(v) < bound, fn, ": ", array, "[", k, "] = ", v, " is outside [0, ", dim,
          " = ", bound, ")");
}

uint64_t key_of(int64_t r, int64_t c) { return static_cast<uint64_t>(c) << 32 | static_cast<uint64_t>(r); }

// Appends the sorted keys (repeats adjacent) to the column structure.
template <class WeightOf>
void compress(SparseColumns &m, const std::vector<uint64_t> &keys, WeightOf &&weight_of, bool weighted) {
  m.col_start.push_back(0);
  for (std::size_t i = 0; i < keys.size();) {
    std::size_t j = i;
    double w = 0;
    for (; j < keys.size() && keys[j] == keys[i]; ++j)
      if (weighted) w += weight_of(j);
    auto col = static_cast<int32_t>(keys[i] >> 32);
    if (m.col_id.empty() || m.col_id.back() != col) {
      if (!m.col_id.empty()) m.col_start.push_back(static_cast<int64_t>(m.row.size()));
      m.col_id.push_back(col);
    }
    m.row.push_back(static_cast<int32_t>(keys[i] & 0xffffffffu));
    if (weighted) m.weight.push_back(w);
    i = j;
  }
  if (!m.col_id.empty()) m.col_start.push_back(static_cast<int64_t>(m.row.size()));
}

}  // namespace

SparseColumns build_columns(uint64_t rows, uint64_t cols, uint64_t nnz, const int64_t *row_idx,
                            const int64_t *col_idx, const double *values, const char *fn) {
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
  for (std::size_t k = 0; k < n; ++k) {
    require_index(row_idx[k], rows, "row_idx", k, "rows", fn);
    require_index(col_idx[k], cols, "col_idx", k, "cols", fn);
    if (values != nullptr) require(std::isfinite(values[k]), fn, ": values[", k, "] = ", values[k], " is not finite");
  }
  std::vector<uint64_t> keys(n);
  if (values == nullptr) {
    for (std::size_t k = 0; k < n; ++k) keys[k] = key_of(row_idx[k], col_idx[k]);
    std::sort(keys.begin(), keys.end());
    compress(m, keys, [](std::size_t) { return 1.0; }, false);
  } else {
    std::vector<std::size_t> order(n);
    for (std::size_t k = 0; k < n; ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      uint64_t ka = key_of(row_idx[a], col_idx[a]), kb = key_of(row_idx[b], col_idx[b]);
      return ka != kb ? ka < kb : a < b;  // repeats summed in input order: deterministic
    });
    for (std::size_t k = 0; k < n; ++k) keys[k] = key_of(row_idx[order[k]], col_idx[order[k]]);
    compress(m, keys, [&](std::size_t j) { return values[order[j]]; }, true);
  }
  return m;
}

template <class Real>
TwiddleTables<Real> make_twiddles(uint64_t n) {
  // Angles from exact integers m / n in long double, so large n loses nothing to argument reduction.
  const long double two_pi = 6.283185307179586476925286766559005768L;
  auto twiddle = [&](uint64_t m) {
    long double a = two_pi * static_cast<long double>(m) / static_cast<long double>(n);
    return std::complex<Real>(static_cast<Real>(std::cos(a)), static_cast<Real>(-std::sin(a)));
  };
  TwiddleTables<Real> t;
  if (n <= TwiddleTables<Real>::kSingleTableMax) {
    t.lo.resize(n);
    for (uint64_t m = 0; m < n; ++m) t.lo[m] = twiddle(m);
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

}  // namespace sfft::spfft2d
