// SPDX-License-Identifier: Apache-2.0
// spfft2d's host tables (src/spfft2d/columns.cpp): the COO's compression into columns and rows (sorted, repeats
// merged in input order), the memoised twiddles and the closed-form sums of twiddle runs, against direct
// computations in long double, and the tabled run sums against the closed form; the CPU's sparse row R2C
// (sparse_row_r2c.cpp) against direct sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/cpu_isa.hpp"
#include "spfft2d/plan.hpp"
#include "spfft2d/sparse_row_r2c.hpp"

namespace {

using namespace sfft::spfft2d;

// (group, member, weight) of every stored nonzero of a compressed grouping in storage order: (col, row, weight) of
// the columns, (row, col, weight) of the rows; weight 1 in binary mode.
using Entries = std::vector<std::tuple<int64_t, int64_t, double>>;
Entries stored(const std::vector<int32_t> &id, const std::vector<int64_t> &start, const std::vector<int32_t> &member,
               const std::vector<double> &weight) {
  Entries out;
  for (std::size_t j = 0; j < id.size(); ++j)
    for (auto e = static_cast<std::size_t>(start[j]); e < static_cast<std::size_t>(start[j + 1]); ++e)
      out.emplace_back(id[j], member[e], weight.empty() ? 1.0 : weight[e]);
  return out;
}
Entries by_columns(const SparseColumns &m) { return stored(m.col_id, m.col_start, m.row, m.weight); }
Entries by_rows(const SparseColumns &m) { return stored(m.row_id, m.row_start, m.row_col, m.row_weight); }

// The COO entries reordered by a stable sort: by column, by (column, row), by row or by (row, column); "as drawn"
// leaves them. The compression sorts only what a given order leaves unsorted.
enum class InputOrder { AsDrawn, ByColumn, ByColumnRow, ByRow, ByRowColumn };
void reorder(InputOrder how, std::vector<int64_t> &r, std::vector<int64_t> &c, std::vector<double> &v) {
  std::vector<std::size_t> p(r.size());
  for (std::size_t k = 0; k < p.size(); ++k) p[k] = k;
  const auto by = [&](auto key) {
    std::stable_sort(p.begin(), p.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  };
  switch (how) {
    case InputOrder::AsDrawn:
      return;
    case InputOrder::ByColumn:
      by([&](std::size_t k) { return c[k]; });
      break;
    case InputOrder::ByColumnRow:
      by([&](std::size_t k) { return std::tie(c[k], r[k]); });
      break;
    case InputOrder::ByRow:
      by([&](std::size_t k) { return r[k]; });
      break;
    case InputOrder::ByRowColumn:
      by([&](std::size_t k) { return std::tie(r[k], c[k]); });
      break;
  }
  std::vector<int64_t> r2(r.size()), c2(c.size());
  std::vector<double> v2(v.size());
  for (std::size_t k = 0; k < p.size(); ++k) std::tie(r2[k], c2[k], v2[k]) = std::tie(r[p[k]], c[p[k]], v[p[k]]);
  r.swap(r2);
  c.swap(c2);
  v.swap(v2);
}

// Random COO matrices of several shapes (extents from 1 to 2^31 - 1, so keys of up to 62 bits), with repeats, in
// every input order, compressed by one and by three threads: both groupings hold each distinct coordinate once, sorted,
// with the repeats' values summed in input order.
TEST(Spfft2dColumns, CompressionSortsAndMergesRepeatsInInputOrder) {
  const uint64_t kMax = (uint64_t{1} << 31) - 1;
  const std::vector<std::pair<uint64_t, uint64_t>> shapes = {
      {1, 1}, {1, 97}, {97, 1}, {3000, 4097}, {kMax, 5}, {7, kMax}, {kMax, (1 << 28) - 1}, {65536, 65536}};
  std::mt19937_64 rng(11);
  for (const auto &[rows, cols] : shapes)
    for (bool weighted : {false, true})
      for (InputOrder how : {InputOrder::AsDrawn, InputOrder::ByColumn, InputOrder::ByColumnRow, InputOrder::ByRow,
                             InputOrder::ByRowColumn}) {
        // Large enough on the big shapes for several sorting threads (2^15 entries each).
        const std::size_t n = rows >= 3000 && cols >= 3000 ? 150000 : 5000;
        std::vector<int64_t> r(n), c(n);
        std::vector<double> v(n);
        for (std::size_t k = 0; k < n; ++k) {
          // Half the entries repeat an earlier coordinate.
          const std::size_t from = k > 0 && rng() % 2 ? rng() % k : k;
          r[k] = from == k ? static_cast<int64_t>(rng() % rows) : r[from];
          c[k] = from == k ? static_cast<int64_t>(rng() % cols) : c[from];
          v[k] = std::ldexp(static_cast<double>(rng() % 1000) - 500, -static_cast<int>(rng() % 40));
        }
        reorder(how, r, c, v);
        const std::string what = std::to_string(rows) + " x " + std::to_string(cols) +
                                 (weighted ? " weighted" : " binary") + ", order " +
                                 std::to_string(static_cast<int>(how));
        // The expected merge: a stable sort by (col, row), repeats summed left to right.
        std::vector<std::size_t> order(n);
        for (std::size_t k = 0; k < n; ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return std::tie(c[a], r[a]) < std::tie(c[b], r[b]); });
        Entries want;
        for (std::size_t k : order) {
          if (!want.empty() && std::get<0>(want.back()) == c[k] && std::get<1>(want.back()) == r[k]) {
            if (weighted) std::get<2>(want.back()) += v[k];
          } else {
            want.emplace_back(c[k], r[k], weighted ? v[k] : 1.0);
          }
        }
        Entries want_rows;
        for (const auto &[col, row, w] : want) want_rows.emplace_back(row, col, w);
        std::sort(want_rows.begin(), want_rows.end(), [](const auto &a, const auto &b) {
          return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
        });
        for (int threads : {1, 3}) {
          const SparseColumns m =
              build_columns(rows, cols, n, r.data(), c.data(), weighted ? v.data() : nullptr, threads, "test");
          ASSERT_EQ(by_columns(m), want) << what << ", " << threads << " threads";
          ASSERT_EQ(by_rows(m), want_rows) << what << ", " << threads << " threads";
        }
      }
}

std::complex<long double> exact_twiddle(uint64_t m, uint64_t n) {
  const long double a = 6.283185307179586476925286766559005768L * static_cast<long double>(m % n) / n;
  return {std::cos(a), -std::sin(a)};
}

// The memo's table (n <= uses) and its computed values (n > uses) agree with the long-double twiddle to rounding.
TEST(Spfft2dColumns, TwiddleMemoMatchesTheTwiddle) {
  for (uint64_t n : {1ull, 2ull, 3ull, 1000ull, 4097ull, 65536ull})
    for (uint64_t uses : {n - 1, n}) {
      const TwiddleMemo<double> memo(n, uses);
      const TwiddleMemo<float> memo_f(n, uses);
      double worst = 0, worst_f = 0;
      for (uint64_t m = 0; m < n; m += 1 + n / 4096) {
        const std::complex<long double> t = exact_twiddle(m, n);
        worst = std::max(worst, static_cast<double>(std::abs(std::complex<long double>(memo(m)) - t)));
        worst_f = std::max(worst_f, static_cast<double>(std::abs(std::complex<long double>(memo_f(m)) - t)));
      }
      EXPECT_LT(worst, 2e-16) << n << " " << uses;
      EXPECT_LT(worst_f, 1.2e-7) << n << " " << uses;
    }
}

// sum_{k < len} e^{-2 pi i k a / n} in closed form against the sum itself (long double), for the four-step's D
// tables (a = v, n = cols) and their alternating sums (a = 2v + cols, n = 2 cols), even and odd cols, at the
// multiples of n and next to them, and at n = 2^32.
TEST(Spfft2dColumns, RunSumsMatchTheirSums) {
  const uint64_t big = uint64_t{1} << 32;
  const std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> cases = {
      {1, 0, 7},           {1, 5, 7},        {20, 0, 1024},           {20, 1, 1024},
      {21, 512, 1024},     {33, 2049, 2048}, {33, 1024 + 2048, 4096}, {64, 2 * 8191 + 8192, 16384},
      {5, 4097, 8193},     {1000, 17, 4099}, {7, big - 1, big},       {9, big / 2 + 1, big},
      {31, 123456789, big}};
  for (const auto &[len, a, n] : cases) {
    std::complex<long double> sum = 0;
    for (uint64_t k = 0; k < len; ++k) {
      const uint64_t m = static_cast<uint64_t>((static_cast<long double>(k) * a) -
                                               std::floor(static_cast<long double>(k) * a / n) * n);
      sum += exact_twiddle(m, n);
    }
    const std::complex<double> got = twiddle_run_sum(len, a, n);
    EXPECT_LT(std::abs(std::complex<long double>(got) - sum), 1e-13 * static_cast<long double>(len))
        << len << " " << a << " " << n;
  }
}

// RunSums (what the run tables use), tabled (many uses) or not, gives twiddle_run_sum's bits for every (len, a) of
// even, odd and tiny n, a over two turns (the mirror tables' 2v + cols) and lengths up to past n.
TEST(Spfft2dColumns, RunSumsAreBitIdenticalToTheClosedForm) {
  std::mt19937_64 rng(5);
  for (uint64_t n : {1, 2, 3, 7, 1024, 4099, 16384, 32768, 65537})
    for (uint64_t uses : {uint64_t{0}, 2 * n + 2}) {
      const RunSums sums(n, uses);
      for (int trial = 0; trial < 3000; ++trial) {
        const uint64_t len = 1 + rng() % (n + 40), a = trial < 2 * static_cast<int>(n) ? trial : rng() % (2 * n);
        const std::complex<double> want = twiddle_run_sum(len, a, n), got = sums(len, a);
        ASSERT_EQ(got.real(), want.real()) << len << " " << a << " " << n;
        ASSERT_EQ(got.imag(), want.imag()) << len << " " << a << " " << n;
      }
    }
}

// Which row lengths the sparse route can take: even, n / 2 = P x Q with P the largest power of two that divides it
// and is at most its square root, P >= 2 and Q >= 8.
TEST(Spfft2dSparseRows, FitsEvenLengthsWithAPowerOfTwoSplit) {
  for (uint64_t n : {64u, 100u, 128u, 192u, 808u, 1000u, 1536u, 6144u, 12000u, 32768u, 8u * 8219u, 1u << 20})
    EXPECT_TRUE(SparseRowR2c<float>::fits(n)) << n;
  for (uint64_t n : {0u, 2u, 12u, 30u, 127u, 8219u, 2u * 8219u}) EXPECT_FALSE(SparseRowR2c<float>::fits(n)) << n;
  EXPECT_FALSE(static_cast<bool>(SparseRowR2c<double>(30, 2)));
  const SparseRowR2c<float> r2c(1024, 1);
  EXPECT_FALSE(r2c.prefers(1));  // no limit set: no row with nonzeros
}

// out[k] = sum_e w_e e^{-2 pi i col_e k / n}, k <= n / 2, against direct sums in long double: rows of 0 to 40
// nonzeros (columns 0 and n - 1, odd and even), binary and weighted, on each of two threads' buffers.
template <class Real>
void check_sparse_rows(double tolerance, const char *isa) {
  std::mt19937_64 rng(11);
  for (uint64_t n : {100u, 128u, 192u, 808u, 1000u, 1536u, 6144u, 8212u, 8248u, 32768u}) {
    const SparseRowR2c<Real> r2c(n, 2);
    ASSERT_TRUE(static_cast<bool>(r2c)) << n;
    ASSERT_STREQ(r2c.isa(), isa) << n;
    for (int64_t count : {0, 1, 2, 7, 40, 150}) {
      std::vector<int32_t> col;
      for (int64_t e = 0; e < count; ++e)
        col.push_back(e == 0 ? 0 : e == 1 ? static_cast<int32_t>(n - 1) : static_cast<int32_t>(rng() % n));
      std::sort(col.begin(), col.end());
      col.erase(std::unique(col.begin(), col.end()), col.end());
      std::vector<Real> weight;
      for (std::size_t e = 0; e < col.size(); ++e) weight.push_back(static_cast<Real>(static_cast<int>(rng() % 9) - 4));
      for (int weighted = 0; weighted < 2; ++weighted) {
        std::vector<std::complex<long double>> want(n / 2 + 1);
        long double scale = 1;
        for (std::size_t e = 0; e < col.size(); ++e) {
          const long double w = weighted ? static_cast<long double>(weight[e]) : 1.0L;
          scale += std::abs(w);
          for (uint64_t k = 0; k <= n / 2; ++k) {
            const long double angle = -2 * 3.141592653589793238462643383279L *
                                      static_cast<long double>((static_cast<uint64_t>(col[e]) * k) % n) / n;
            want[k] += w * std::complex<long double>(std::cos(angle), std::sin(angle));
          }
        }
        for (int thread = 0; thread < 2; ++thread) {
          std::vector<std::complex<Real>> out(n / 2 + 1, std::complex<Real>(7, 7));
          r2c.transform(col.data(), weighted ? weight.data() : nullptr, static_cast<int64_t>(col.size()), out.data(),
                        thread);
          long double worst = 0;
          for (uint64_t k = 0; k <= n / 2; ++k)
            worst = std::max(worst, std::abs(std::complex<long double>(out[k]) - want[k]));
          EXPECT_LT(worst / scale, tolerance)
              << isa << " n " << n << " nonzeros " << col.size() << " weighted " << weighted << " thread " << thread;
        }
      }
    }
  }
}

// Every variant of the ramp loop this machine runs (generic, AVX2, AVX-512: SFFT_SPFFT2D_ISA caps the choice).
template <class Real>
void check_sparse_rows_of_every_isa(double tolerance) {
  for (const char *cap : {"generic", "avx2", "avx512"}) {
    ASSERT_EQ(setenv("SFFT_SPFFT2D_ISA", cap, 1), 0);
    check_sparse_rows<Real>(tolerance, sfft::cpu_isa_name(sfft::cpu_isa("SFFT_SPFFT2D_ISA")));
  }
  unsetenv("SFFT_SPFFT2D_ISA");
}

TEST(Spfft2dSparseRows, MatchesDirectSumsInSinglePrecision) { check_sparse_rows_of_every_isa<float>(1e-6); }
TEST(Spfft2dSparseRows, MatchesDirectSumsInDoublePrecision) { check_sparse_rows_of_every_isa<double>(1e-14); }

// The variant cpu_isa picks: the widest the CPU runs, capped by the environment variable it is given (anything but a
// variant's name leaves it uncapped). The variants are built on x86-64 with GCC and Clang (SFFT_X86_VARIANTS).
TEST(CpuIsa, EnvironmentCapsTheChoice) {
  using sfft::CpuIsa;
  bool avx2 = false, avx512 = false;
#if defined(SFFT_X86_VARIANTS)
  avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
  const CpuIsa widest = avx512 ? CpuIsa::kAvx512 : avx2 ? CpuIsa::kAvx2 : CpuIsa::kGeneric;
  unsetenv("SFFT_TEST_ISA");
  EXPECT_EQ(sfft::cpu_isa("SFFT_TEST_ISA"), widest);
  const std::pair<const char *, CpuIsa> caps[] = {{"generic", CpuIsa::kGeneric},
                                                  {"avx2", avx2 ? CpuIsa::kAvx2 : CpuIsa::kGeneric},
                                                  {"avx512", widest},
                                                  {"sse9", widest}};
  for (const auto &[cap, want] : caps) {
    ASSERT_EQ(setenv("SFFT_TEST_ISA", cap, 1), 0);
    EXPECT_EQ(sfft::cpu_isa("SFFT_TEST_ISA"), want) << cap;
    EXPECT_STREQ(sfft::cpu_isa_name(sfft::cpu_isa("SFFT_TEST_ISA")), sfft::cpu_isa_name(want)) << cap;
  }
  unsetenv("SFFT_TEST_ISA");
}

}  // namespace
