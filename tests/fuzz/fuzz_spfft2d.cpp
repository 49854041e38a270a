// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the sparse-input 2-D FFT (spfft2d_*): arbitrary shapes (0, 2^31 and beyond),
// nonzero counts, indices (negative, out of range, repeated), values (NaN, Inf, huge, denormal), NULL
// arrays, dtypes, options, methods, tile heights and row ranges. Every successful exec / exec_rows / exec_stream
// must match the direct sum over the nonzeros; every failure must leave handles and outputs untouched. Create
// must refuse exactly the matrices whose spectrum could overflow (output_range_verdict), and a stream callback
// that calls back into its own plan (exec_rows, destroy) must be refused without disturbing the stream.
#include <algorithm>
#include <cmath>

#include "spfft2d_reference.hpp"

namespace {

// ||a - b|| <= eps * max(||b||, 1) over n complex values of the given precision (eps: 1e-5 / 1e-12);
// *ratio gets ||a - b|| / max(||b||, 1). Where the sums overflow the output type, different methods overflow
// in different places (Inf here, Inf - Inf = NaN there): then both must hold non-finite values, and
// nothing more is compared.
bool same_to_rounding(const void *a, const void *b, uint64_t n, bool is_double, double *ratio) {
  long double num = 0, den = 0;  // squares of huge finite values overflow double
  uint64_t nonfinite_a = 0, nonfinite_b = 0;
  for (uint64_t i = 0; i < 2 * n; ++i) {
    long double x = is_double ? static_cast<const double *>(a)[i] : static_cast<const float *>(a)[i];
    long double y = is_double ? static_cast<const double *>(b)[i] : static_cast<const float *>(b)[i];
    nonfinite_a += !std::isfinite(x);
    nonfinite_b += !std::isfinite(y);
    num += (x - y) * (x - y);
    den += y * y;
  }
  if (nonfinite_a != 0 || nonfinite_b != 0) {
    *ratio = nonfinite_a != 0 && nonfinite_b != 0 ? 0 : INFINITY;
    return *ratio == 0;
  }
  *ratio = static_cast<double>(std::sqrt(num) / std::max(std::sqrt(den), 1.0L));
  return *ratio <= (is_double ? 1e-12 : 1e-5);
}

using namespace sfft_fuzz;

constexpr uint64_t kMaxNnz = 48;
constexpr uint64_t kMaxOutputElements = uint64_t{1} << 14;  // what one exec may write here

uint64_t extent(Input &in) {
  uint8_t mode = in.byte();
  if (mode < 200) return 1 + mode % 40;
  if (mode < 230) return 1 + in.take<uint16_t>() % 4096;
  // Boundaries: rows may be huge (the plan is cheap in rows); cols stays where one row fits in memory.
  static const uint64_t special[] = {
      0, 1, (uint64_t{1} << 31) - 1, uint64_t{1} << 31, uint64_t{1} << 32, std::numeric_limits<uint64_t>::max(), 65521};
  return special[mode % (sizeof special / sizeof special[0])];
}

struct StreamCheck {
  uint64_t rows = 0, half = 0;
  std::size_t elem = 0;
  std::vector<int> delivered;
  std::vector<unsigned char> spectrum;
  bool bad_range = false;
  spfft2d_plan plan = nullptr;  // re-entry: the callback calls back into its plan
  bool reenter = false, reentry_accepted = false;
};

void on_rows(uint64_t row0, uint64_t nrows, const void *rows, void *user) {
  auto *s = static_cast<StreamCheck *>(user);
  if (row0 > s->rows || nrows > s->rows - row0 || rows == nullptr) {
    s->bad_range = true;
    return;
  }
  for (uint64_t r = row0; r < row0 + nrows; ++r) ++s->delivered[r];
  std::memcpy(s->spectrum.data() + row0 * s->half * s->elem, rows, nrows * s->half * s->elem);
  if (s->reenter) {
    std::vector<unsigned char> scratch(s->half * s->elem);
    s->reentry_accepted |= spfft2d_exec_rows(s->plan, row0, 1, scratch.data()) != SFFT_ERROR_INVALID_ARGUMENT;
    s->reentry_accepted |= spfft2d_destroy(s->plan) != SFFT_ERROR_INVALID_ARGUMENT;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  Input in(data, size);
  const uint64_t rows = extent(in);
  uint64_t cols = extent(in);
  if (cols > (uint64_t{1} << 16) && cols <= ((uint64_t{1} << 31) - 1)) cols = 65536;  // valid but a 32 GiB row
  const uint64_t nnz_req = in.size(kMaxNnz);
  const bool honest_nnz = nnz_req <= kMaxNnz;
  if (!honest_nnz && nnz_req < (uint64_t{1} << 63)) return 0;  // arrays cannot hold it and it is not rejectable
  const std::size_t n = honest_nnz ? nnz_req : kMaxNnz;
  std::vector<int64_t> r(std::max<std::size_t>(n, 1)), c(std::max<std::size_t>(n, 1));
  std::vector<double> v(std::max<std::size_t>(n, 1));
  bool indices_ok = true, values_ok = true;
  for (std::size_t k = 0; k < n; ++k) {
    uint8_t mode = in.byte();
    r[k] = mode < 240 ? static_cast<int64_t>(in.take<uint32_t>() % std::max<uint64_t>(rows, 1)) : in.take<int64_t>();
    mode = in.byte();
    c[k] = mode < 240 ? static_cast<int64_t>(in.take<uint32_t>() % std::max<uint64_t>(cols, 1)) : in.take<int64_t>();
    v[k] = in.real(4.0);
    indices_ok &= r[k] >= 0 && static_cast<uint64_t>(r[k]) < rows && c[k] >= 0 && static_cast<uint64_t>(c[k]) < cols;
    values_ok &= std::isfinite(v[k]);
  }
  const uint8_t nulls = in.byte();
  const bool binary = nulls & 1u, null_rows = (nulls & 0xF0u) == 0x10u, null_cols = (nulls & 0xF0u) == 0x20u;
  const bool reenter = nulls & 2u;
  const int dt = in.enumeration(0, 5);
  FuzzedOptions opts = fuzz_options(in);

  auto *const poison = reinterpret_cast<spfft2d_plan>(uintptr_t{0x5A5A5A5A});
  spfft2d_plan plan = poison;
  sfft_status st = fuzz_spfft2d_create(&plan, rows, cols, nnz_req, null_rows ? nullptr : r.data(),
                                       null_cols ? nullptr : c.data(), binary ? nullptr : v.data(), dt, opts.get());
  const bool shape_ok = rows >= 1 && rows < (uint64_t{1} << 31) && cols >= 1 && cols < (uint64_t{1} << 31);
  const bool valid = shape_ok && honest_nnz && (n == 0 || (!null_rows && !null_cols && indices_ok)) &&
                     (binary || n == 0 || values_ok) && (dt == SFFT_COMPLEX64 || dt == SFFT_COMPLEX128) &&
                     opts.valid_cpu();
  SparseMatrix m;
  for (std::size_t k = 0; k < n; ++k) {
    auto key = std::make_pair(static_cast<uint64_t>(r[k]), static_cast<uint64_t>(c[k]));
    if (binary)
      m[key] = 1.0;
    else
      m[key] += v[k];
  }
  const int range = valid ? output_range_verdict(m, dt == SFFT_COMPLEX128) : 0;
  if (st != SFFT_SUCCESS) {
    check_failure(st, "spfft2d_create", {});
    check(plan == poison, "spfft2d_create failed but wrote the handle");
    check(!valid || range <= 0 || st == SFFT_ERROR_OUT_OF_MEMORY,
          std::string("spfft2d_create rejected a valid request: ") + sfft_status_string(st));
    return 0;
  }
  check_success_clean("spfft2d_create");
  check(valid, "spfft2d_create accepted an invalid request");
  check(range >= 0, "spfft2d_create accepted a matrix whose spectrum can overflow the output type");
  uint64_t info_rows = 0, info_cols = 0, info_nnz = 0, tile = 0, ws = 0;
  sfft_backend backend = SFFT_BACKEND_AUTO;
  check(spfft2d_get_info(plan, &info_rows, &info_cols, &info_nnz, &tile, &ws, &backend) == SFFT_SUCCESS,
        "spfft2d_get_info failed");
  check(info_rows == rows && info_cols == cols, "spfft2d_get_info: wrong shape");
  check(info_nnz == m.size(), "spfft2d_get_info: nnz " + std::to_string(info_nnz) + ", expected " +
                                  std::to_string(m.size()) + " distinct coordinates");
  check(tile >= 1 && backend == SFFT_BACKEND_CPU, "spfft2d_get_info: bad tile or backend");

  const bool is_double = dt == SFFT_COMPLEX128;
  const std::size_t elem = is_double ? 16 : 8;
  const uint64_t half = cols / 2 + 1;

  if (in.flag()) {
    static const uint64_t tiles[] = {0, 1, 2, 3, 7, 64, uint64_t{1} << 40, std::numeric_limits<uint64_t>::max()};
    st = spfft2d_set_tile_rows(plan, tiles[in.byte() % 8]);
    if (st != SFFT_SUCCESS)
      check_failure(st, "spfft2d_set_tile_rows", {});
    else
      check_success_clean("spfft2d_set_tile_rows");
  }

  bool explicit_method = false;  // header: stream/rows are bit-identical to exec for explicit methods only
  if (in.flag()) {
    const int method = in.enumeration(0, 5);
    st = fuzz_spfft2d_set_method(plan, method);
    explicit_method = st == SFFT_SUCCESS && method != SPFFT2D_METHOD_AUTO;
    if (st != SFFT_SUCCESS)
      check_failure(st, "spfft2d_set_method", {});
    else
      check_success_clean("spfft2d_set_method");
    check(st == SFFT_SUCCESS || method < 0 || method > 4 || st == SFFT_ERROR_OUT_OF_MEMORY,
          std::string("spfft2d_set_method rejected method ") + std::to_string(method) + ": " + sfft_status_string(st));
  }

  // A row range: mostly inside the spectrum, sometimes past its end or wrapping.
  uint64_t row0 = in.byte() < 224 ? in.take<uint32_t>() % (rows + 2) : in.size(8);
  uint64_t nrows = in.byte() < 224 ? in.byte() % 4 : in.size(8);
  const bool range_ok = row0 <= rows && nrows <= rows - row0;
  if (!range_ok || nrows * half <= kMaxOutputElements) {
    const uint64_t room = range_ok ? nrows : 2;
    Poisoned out(room * half * elem);
    st = spfft2d_exec_rows(plan, row0, nrows, out.get());
    if (st != SFFT_SUCCESS) {
      check_failure(st, "spfft2d_exec_rows", {&out});
      check(!range_ok, std::string("spfft2d_exec_rows rejected a valid range: ") + sfft_status_string(st));
    } else {
      check_success_clean("spfft2d_exec_rows");
      check(range_ok, "spfft2d_exec_rows accepted rows outside the spectrum");
      check_rows(out.get(), is_double, m, rows, cols, row0, nrows, "spfft2d_exec_rows");
    }
  }

  if (rows * half <= kMaxOutputElements) {
    Poisoned whole(rows * half * elem);
    st = spfft2d_exec(plan, whole.get());
    if (st != SFFT_SUCCESS) check_failure(st, "spfft2d_exec", {&whole});
    check(st == SFFT_SUCCESS, "spfft2d_exec failed on a valid plan");
    check_success_clean("spfft2d_exec");
    check_rows(whole.get(), is_double, m, rows, cols, 0, rows, "spfft2d_exec");
    StreamCheck sc;
    sc.rows = rows;
    sc.half = half;
    sc.elem = elem;
    sc.delivered.assign(rows, 0);
    sc.spectrum.assign(rows * half * elem, 0);
    sc.plan = plan;
    sc.reenter = reenter;
    check(spfft2d_exec_stream(plan, on_rows, &sc) == SFFT_SUCCESS, "spfft2d_exec_stream failed on a valid plan");
    check(!sc.reentry_accepted, "a call on the plan from its own stream callback was not refused");
    check(!sc.bad_range, "spfft2d_exec_stream delivered rows outside the spectrum");
    for (uint64_t u = 0; u < rows; ++u)
      check(sc.delivered[u] == 1, "spfft2d_exec_stream: a row was not delivered exactly once");
    if (explicit_method) {
      check(std::memcmp(sc.spectrum.data(), whole.get(), sc.spectrum.size()) == 0,
            "spfft2d_exec_stream is not bit-identical to spfft2d_exec (explicit method)");
    } else {  // AUTO may compute the two by different methods: equal up to rounding
      double ratio = 0;
      check(same_to_rounding(sc.spectrum.data(), whole.get(), rows * half, is_double, &ratio),
            sfft_fuzz::format("spfft2d_exec_stream differs from spfft2d_exec by %.3g relative (AUTO, %s, %llu x %llu)",
                              ratio, is_double ? "c128" : "c64", static_cast<unsigned long long>(rows),
                              static_cast<unsigned long long>(cols)));
    }
  }
  Poisoned none(16);
  check_failure(spfft2d_exec_rows(plan, 0, 1, nullptr), "spfft2d_exec_rows(out = NULL)", {});
  check_failure(spfft2d_exec_stream(plan, nullptr, nullptr), "spfft2d_exec_stream(callback = NULL)", {&none});

  check(spfft2d_destroy(plan) == SFFT_SUCCESS, "spfft2d_destroy of a live plan failed");
  check(spfft2d_destroy(plan) == SFFT_ERROR_INVALID_ARGUMENT, "spfft2d_destroy of a destroyed plan did not fail");
  check_failure(spfft2d_exec_rows(plan, 0, 1, none.get()), "spfft2d_exec_rows on a destroyed plan", {&none});
  return 0;
}
