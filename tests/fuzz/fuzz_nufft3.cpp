// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the type-3 NUFFT (nufft3_*): arbitrary dim, dtype, sign, tolerance, options
// (ntransf, kernel, upsampfac, maxbatchsize), point counts (including ones whose byte counts overflow), coordinates
// (NaN, +-Inf, huge, denormal, negative zero) and NULL arrays. A successful exec must match the direct sum
// in long double; any failure must leave the handle / output untouched with a message, a failed setpts must
// leave the points set before it (exec still matches their direct sum), and the plan must still produce a
// correct transform afterwards.
#include "fuzz_support.hpp"

namespace {

using namespace sfft_fuzz;

constexpr std::size_t kMaxPoints = 24;
constexpr std::size_t kMaxValues = std::size_t{1} << 12;  // ntransf * max(N, K) the harness allocates

// Coordinate magnitude bound per dim: keeps the product of bandwidths (and so the grid) small enough
// for a fuzzing iteration; the special values still reach the huge-grid paths.
double coordinate_bound(int dim) { return dim == 1 ? 100.0 : dim == 2 ? 14.0 : 5.0; }

struct Problem {
  int dim = 1, sign = -1, ntransf = 1;
  std::size_t N = 0, K = 0;
  std::vector<double> pts[3], frq[3];   // as doubles; converted to the plan's real type
  std::vector<std::complex<double>> f;  // ntransf * N
};

// F[t*K + k] = sum_i f[t*N + i] exp(sign i (x_i s_k + ...)), in long double.
std::vector<std::complex<double>> direct_sum(const Problem &p) {
  std::vector<std::complex<double>> F(p.ntransf * p.K);
  for (int t = 0; t < p.ntransf; ++t)
    for (std::size_t k = 0; k < p.K; ++k) {
      long double re = 0, im = 0;
      for (std::size_t i = 0; i < p.N; ++i) {
        long double ph = 0;
        for (int d = 0; d < p.dim; ++d) ph += static_cast<long double>(p.pts[d][i]) * p.frq[d][k];
        ph *= p.sign;
        const std::complex<double> a = p.f[t * p.N + i];
        re += a.real() * std::cos(ph) - a.imag() * std::sin(ph);
        im += a.real() * std::sin(ph) + a.imag() * std::cos(ph);
      }
      F[t * p.K + k] = {static_cast<double>(re), static_cast<double>(im)};
    }
  return F;
}

template <class Real>
std::vector<Real> as_real(const std::vector<double> &v) {
  return std::vector<Real>(v.begin(), v.end());
}

// Runs exec with p's strengths on a plan whose points are p's and checks the result against the direct sum.
template <class Real>
void exec_check(nufft3_plan plan, const Problem &p, double tol) {
  using C = std::complex<Real>;
  std::vector<Real> x[3], s[3];
  for (int d = 0; d < 3; ++d) {
    x[d] = as_real<Real>(p.pts[d]);
    s[d] = as_real<Real>(p.frq[d]);
  }
  std::vector<C> f(p.f.size());
  for (std::size_t i = 0; i < f.size(); ++i)
    f[i] = C(static_cast<Real>(p.f[i].real()), static_cast<Real>(p.f[i].imag()));
  Poisoned F(sizeof(C) * p.ntransf * p.K);
  const sfft_status st = nufft3_exec(plan, f.empty() ? nullptr : f.data(), p.K ? F.get() : nullptr);
  if (st != SFFT_SUCCESS) {
    check_failure(st, "nufft3_exec", {&F});
    check(false, std::string("nufft3_exec failed on a plan with points: ") + sfft_status_string(st));
  }
  check_success_clean("nufft3_exec");
  if (p.K == 0) return;
  // The reference uses the coordinates as the plan saw them (rounded to Real).
  Problem rounded = p;
  for (int d = 0; d < 3; ++d) {
    rounded.pts[d].assign(x[d].begin(), x[d].end());
    rounded.frq[d].assign(s[d].begin(), s[d].end());
  }
  for (std::size_t i = 0; i < f.size(); ++i) rounded.f[i] = {f[i].real(), f[i].imag()};
  // Header: strengths within ~1e12 of the type's largest value may overflow on the grid (deconvolution
  // factors exceed 1), and strengths all within ~1e12 of its smallest normal value may underflow, so no value
  // is checked for such inputs; the call must still succeed cleanly.
  double fmax = 0;
  for (const auto &a : rounded.f) fmax = std::max({fmax, std::fabs(a.real()), std::fabs(a.imag())});
  if (fmax * static_cast<double>(p.N + 1) > static_cast<double>(std::numeric_limits<Real>::max()) * 1e-12) return;
  if (fmax < static_cast<double>(std::numeric_limits<Real>::min()) * 1e12) return;
  auto want = direct_sum(rounded);
  const C *got = static_cast<const C *>(F.get());
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    std::complex<double> g(got[i].real(), got[i].imag());
    check(std::isfinite(g.real()) && std::isfinite(g.imag()), "nufft3_exec produced a non-finite value");
    // In long double: squares of huge (finite) values overflow double.
    std::complex<long double> gl(g.real(), g.imag()), wl(want[i].real(), want[i].imag());
    num += std::norm(gl - wl);
    den += std::norm(wl);
  }
  long double f_l1 = 0;
  for (std::size_t i = 0; i < p.N; ++i)
    f_l1 += std::abs(std::complex<long double>(rounded.f[i].real(), rounded.f[i].imag()));
  // The header's metric: ||F - F_exact||_2 / max(||F_exact||_2, sqrt(K) sum|f| / 2). Each term's error is a
  // fraction of that term, so where outputs cancel (found: 6 sources, |F| = sum|f| / 6, 22 tol relative to
  // ||F|| but 6 tol in this metric) a plain relative error is not defined. The ratio is formed in long double:
  // the norms themselves may not fit a double.
  long double scale = std::max(std::sqrt(den), 0.5L * f_l1 * std::sqrt(static_cast<long double>(p.K)));
  double err = static_cast<double>(scale == 0 ? std::sqrt(num) : std::sqrt(num) / scale);
  // Rounding of the phase x*s in Real precision is inherent to the input type: allow it on top of tol.
  double max_phase = 0;
  for (int d = 0; d < p.dim; ++d) {
    double xm = 0, sm = 0;
    for (double v : rounded.pts[d]) xm = std::max(xm, std::fabs(v));
    for (double v : rounded.frq[d]) sm = std::max(sm, std::fabs(v));
    max_phase += xm * sm;
  }
  // The header's contract: 10 tol for any number of sources.
  double bound = 10 * tol + 100 * std::numeric_limits<Real>::epsilon() * (1 + max_phase);
  if (tol < 0.1)
    check(err <= bound,
          sfft_fuzz::format("nufft3 relative l2 error %.3g > bound %.3g (tol %.3g, N %zu, K %zu, dim %d)", err, bound,
                            tol, static_cast<std::size_t>(p.N), static_cast<std::size_t>(p.K), p.dim));
}

// Runs setpts + exec of p on the plan and checks the contract; returns false if setpts failed. `previous`: the
// points the plan holds from its last successful setpts (NULL if none), which a failed setpts must leave in
// place.
template <class Real>
bool setpts_exec_check(nufft3_plan plan, const Problem &p, double tol, bool null_arrays, bool expect_success,
                       const Problem *previous) {
  using C = std::complex<Real>;
  std::vector<Real> x[3], s[3];
  const void *xp[3] = {}, *sp[3] = {};
  for (int d = 0; d < 3; ++d) {
    x[d] = as_real<Real>(p.pts[d]);
    s[d] = as_real<Real>(p.frq[d]);
    xp[d] = null_arrays && d == p.dim - 1 ? nullptr : x[d].data();
    sp[d] = s[d].data();
  }
  sfft_status st = nufft3_setpts(plan, p.N, xp[0], xp[1], xp[2], p.K, sp[0], sp[1], sp[2]);
  if (st != SFFT_SUCCESS) {
    check_failure(st, "nufft3_setpts", {});
    check(!expect_success, std::string("nufft3_setpts rejected a valid request: ") + sfft_status_string(st));
    if (previous != nullptr) {
      // The previous points stay (header: a failed call leaves them in place).
      exec_check<Real>(plan, *previous, tol);
    } else {
      // There are no points: exec must fail and write nothing.
      Poisoned F(sizeof(C) * 4);
      std::vector<C> f(4);
      check_failure(nufft3_exec(plan, f.data(), F.get()), "nufft3_exec without points", {&F});
    }
    return false;
  }
  check_success_clean("nufft3_setpts");
  exec_check<Real>(plan, p, tol);
  return true;
}

// Small valid points (3 sources, 2 targets) for any dim and batch.
Problem small_problem(int dim, int sign, int ntransf) {
  Problem q;
  q.dim = dim;
  q.sign = sign;
  q.ntransf = ntransf;
  q.N = 3;
  q.K = 2;
  for (int d = 0; d < 3; ++d) {
    q.pts[d] = {0.25, -1.0, 0.5};
    q.frq[d] = {2.0, -3.0};
  }
  q.f.assign(q.ntransf * q.N, {1.0, 0.5});
  return q;
}

template <class Real>
void run(Input &in, nufft3_plan plan, int dim, int sign, double tol, int ntransf, bool plan_on_cpu) {
  Problem p;
  p.dim = dim;
  p.sign = sign;
  p.ntransf = ntransf;
  uint64_t n_req = in.size(kMaxPoints), k_req = in.size(kMaxPoints);
  const bool huge_counts = n_req > kMaxPoints || k_req > kMaxPoints;
  if (huge_counts) {
    // Counts the arrays cannot hold: only those the library must reject before reading are passed.
    const bool n_rejected = n_req >= (uint64_t{1} << 61), k_rejected = k_req >= (uint64_t{1} << 61);
    if (!n_rejected && !k_rejected) return;
    std::vector<Real> small(kMaxPoints);
    sfft_status st = nufft3_setpts(plan, n_req > kMaxPoints ? n_req : 0, small.data(), small.data(), small.data(),
                                   k_req > kMaxPoints ? k_req : 0, small.data(), small.data(), small.data());
    check_failure(st, "nufft3_setpts with overflowing counts", {});
    return;
  }
  p.N = n_req;
  p.K = k_req;
  const double bound = coordinate_bound(dim);
  for (int d = 0; d < 3; ++d) {
    p.pts[d].resize(std::max<std::size_t>(p.N, 1));
    p.frq[d].resize(std::max<std::size_t>(p.K, 1));
    for (auto &c : p.pts[d]) c = in.real(bound);
    for (auto &c : p.frq[d]) c = in.real(bound);
  }
  // Within the bound (so finite, and a grid the machine can hold) in every used dim: setpts must succeed.
  bool honest = true;
  for (int d = 0; d < dim; ++d) {
    for (std::size_t i = 0; i < p.N; ++i) honest &= std::fabs(p.pts[d][i]) <= bound;
    for (std::size_t k = 0; k < p.K; ++k) honest &= std::fabs(p.frq[d][k]) <= bound;
  }
  if (static_cast<std::size_t>(p.ntransf) * std::max(p.N, p.K) > kMaxValues) {
    // A batch too large to execute here (ntransf = 2^30): setpts may refuse the workspace, cleanly.
    std::vector<Real> x[3], t[3];
    for (int d = 0; d < 3; ++d) {
      x[d] = as_real<Real>(p.pts[d]);
      t[d] = as_real<Real>(p.frq[d]);
    }
    sfft_status st =
        nufft3_setpts(plan, p.N, x[0].data(), x[1].data(), x[2].data(), p.K, t[0].data(), t[1].data(), t[2].data());
    if (st != SFFT_SUCCESS) check_failure(st, "nufft3_setpts with a huge batch", {});
    return;
  }
  p.f.resize(p.ntransf * p.N);
  for (auto &a : p.f) a = {in.real(1.0), in.real(1.0)};
  for (auto &a : p.f)
    if (!std::isfinite(a.real()) || !std::isfinite(a.imag())) a = {0.5, -0.25};
  const bool null_arrays = in.byte() < 16 && p.N > 0;
  // Sometimes the plan holds points already, which a failed setpts must keep. Only where the harness can hold
  // their strengths: with no points and ntransf = 2^30 the check above passes, and 3 * 2^30 of them did not fit.
  const bool small_fits = static_cast<std::size_t>(ntransf) * 3 <= kMaxValues;
  const Problem q = small_fits ? small_problem(dim, sign, ntransf) : Problem{};
  const Problem *previous = nullptr;
  if (in.flag() && small_fits && setpts_exec_check<Real>(plan, q, tol, false, plan_on_cpu, nullptr)) previous = &q;
  bool ok = setpts_exec_check<Real>(plan, p, tol, null_arrays, plan_on_cpu && honest && !null_arrays, previous);
  // The plan is still usable: small, valid points give a correct transform.
  if (!ok && small_fits) setpts_exec_check<Real>(plan, q, tol, false, plan_on_cpu, previous);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  Input in(data, size);
  const int dim = static_cast<int>(in.in_range(-1, 4));
  const int dt = in.enumeration(0, 5);
  const int sign = static_cast<int>(in.in_range(-2, 2));
  double tol = in.byte() < 224 ? std::pow(10.0, -static_cast<double>(in.in_range(1, 16))) * (1 + in.byte() / 64.0)
                               : in.real(1.0);
  FuzzedOptions opts = fuzz_options(in);

  auto *const poison = reinterpret_cast<nufft3_plan>(uintptr_t{0x5A5A5A5A});
  nufft3_plan plan = poison;
  sfft_status st = fuzz_nufft3_create(&plan, dim, dt, sign, tol, opts.get());
  const bool is_double = dt == SFFT_COMPLEX128;
  const bool tol_ok = std::isfinite(tol) && tol >= (is_double ? 1e-14 : 1e-6) && tol < 1;
  const bool valid = dim >= 1 && dim <= 3 && (dt == SFFT_COMPLEX64 || dt == SFFT_COMPLEX128) &&
                     (sign == 1 || sign == -1) && tol_ok && opts.valid_cpu();
  if (st != SFFT_SUCCESS) {
    check_failure(st, "nufft3_create", {});
    check(plan == poison, "nufft3_create failed but wrote the handle");
    check(!valid, std::string("nufft3_create rejected a valid request: ") + sfft_status_string(st));
    return 0;
  }
  check_success_clean("nufft3_create");
  check(plan != poison && plan != nullptr, "nufft3_create succeeded without a handle");
  check(tol_ok || (std::isfinite(tol) && tol >= 1), "nufft3_create accepted tol = " + std::to_string(tol));

  int ntransf = 1;
  if (in.flag()) {
    nufft3_options o;
    nufft3_options_init(&o);
    static const int counts[] = {1, 2, 3, 0, -1, 1 << 30};
    const unsigned count_byte = in.byte();  // also maxbatchsize, so that stored inputs decode as before
    o.ntransf = counts[count_byte % 6];
    static const int batches[] = {0, 1, 2, -1};
    o.maxbatchsize = batches[count_byte / 6 % 4];
    in.enumeration_into(&o.kernel, 0, 2);  // the three kernels; bytes from 240 give any int
    static const double ups[] = {0, 2.0, 1.5, 4.0, 1.25, 5.0, 3.0, std::numeric_limits<double>::quiet_NaN()};
    o.upsampfac = ups[in.byte() % 8];
    if (in.byte() < 32) o.struct_size = in.byte() % 2 ? 0 : 4;
    st = nufft3_set_options(plan, &o);
    if (st != SFFT_SUCCESS)
      check_failure(st, "nufft3_set_options", {});
    else {
      check_success_clean("nufft3_set_options");
      ntransf = o.ntransf;
    }
  }
  if (is_double)
    run<double>(in, plan, dim, sign, tol, ntransf, !opts.cuda);
  else
    run<float>(in, plan, dim, sign, tol, ntransf, !opts.cuda);

  check(nufft3_destroy(plan) == SFFT_SUCCESS, "nufft3_destroy of a live plan failed");
  check(nufft3_destroy(plan) == SFFT_ERROR_INVALID_ARGUMENT, "nufft3_destroy of a destroyed plan did not fail");
  check(nufft3_destroy(nullptr) == SFFT_SUCCESS, "nufft3_destroy(NULL) failed");
  return 0;
}
