// SPDX-License-Identifier: Apache-2.0
#include "nufft3/horner.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace sfft::nufft3 {
namespace {

constexpr int kMaxDegree = 24;
constexpr int kCheckPoints = 40;  // per cell, for the error estimate

// phi(u) in long double, zero outside the support (the reference the fit is measured against).
long double kernel_exact(const KernelSpec &k, long double u) {
  if (k.kind == KernelKind::Gaussian) return std::exp(-u * u / (4.0L * k.b));
  long double z = u / k.half_width, r = 1 - z * z;
  if (k.kind == KernelKind::Prolate) return std::fabs(z) <= 1 ? even_legendre_series(k.legendre, k.nlegendre, z) : 0.0L;
  return r > 0 ? std::exp(k.beta * (std::sqrt(r) - 1)) : 0.0L;
}

// Monomial coefficients (a_0 .. a_d, in z in [-1, 1]) of the degree-d interpolant of phi(t - hw + tap),
// t = (z + 1) / 2, at the Chebyshev points.
std::vector<long double> fit_cell(const KernelSpec &k, int tap, int d) {
  const int n = d + 1;
  std::vector<long double> value(n), cheb(n, 0), mono(n, 0);
  const long double pi = std::acos(-1.0L);
  for (int j = 0; j < n; ++j) {
    long double z = std::cos(pi * (j + 0.5L) / n);
    value[j] = kernel_exact(k, (z + 1) / 2 - k.half_width + tap);
  }
  for (int m = 0; m < n; ++m) {
    long double s = 0;
    for (int j = 0; j < n; ++j) s += value[j] * std::cos(pi * m * (j + 0.5L) / n);
    cheb[m] = s * (m == 0 ? 1.0L : 2.0L) / n;
  }
  // T_m in the monomial basis by T_{m+1} = 2 z T_m - T_{m-1}.
  std::vector<long double> t_prev(n, 0), t_cur(n, 0), t_next(n, 0);
  t_prev[0] = 1;
  mono[0] += cheb[0];
  if (n > 1) {
    t_cur[1] = 1;
    mono[1] += cheb[1];
  }
  for (int m = 2; m < n; ++m) {
    for (int p = 0; p < n; ++p) t_next[p] = (p > 0 ? 2 * t_cur[p - 1] : 0) - t_prev[p];
    for (int p = 0; p < n; ++p) mono[p] += cheb[m] * t_next[p];
    t_prev.swap(t_cur);
    t_cur.swap(t_next);
  }
  return mono;
}

// Max |Horner(P_i) - phi| over the taps i in [first, last) and the whole cell, coefficients and arithmetic in Real.
template <class Real>
double measure(const KernelSpec &k, const HornerTable &h, int first, int last) {
  double worst = 0;
  for (int i = first; i < last; ++i) {
    for (int s = 0; s <= kCheckPoints; ++s) {
      const Real z = static_cast<Real>(-1 + 2.0 * s / kCheckPoints);
      Real p = static_cast<Real>(h.coeff[i]);
      for (int r = 1; r <= h.degree; ++r) p = p * z + static_cast<Real>(h.coeff[r * h.stride + i]);
      const long double exact = kernel_exact(k, (static_cast<long double>(z) + 1) / 2 - k.half_width + i);
      worst = std::max(worst, static_cast<double>(std::fabs(static_cast<long double>(p) - exact)));
    }
  }
  return worst;
}

}  // namespace

HornerTable fit_horner(const KernelSpec &k, double tap_tol, double unit_roundoff, int stride_multiple) {
  require(k.width >= 1 && k.width <= kMaxWidth, "kernel width ", k.width, " out of range");
  const bool is_double = unit_roundoff < 1e-10;
  // The ES kernel's square-root edge (in the first and last tap's cells only) caps the polynomial accuracy there
  // near e^-beta, the truncation error the kernel already makes; the other taps are smooth and held to tap_tol.
  const bool es = k.kind == KernelKind::ExpSemicircle && k.width > 2;
  const double target = std::max(tap_tol, 8 * unit_roundoff);
  const double edge_target = std::max(target, es ? 4 * std::exp(-k.beta) : 0.0);
  const int inner_first = es ? 1 : 0, inner_last = es ? k.width - 1 : k.width;
  HornerTable best;
  for (int d = 2; d <= kMaxDegree; ++d) {
    HornerTable h;
    h.width = k.width;
    h.degree = d;
    h.stride = (k.width + stride_multiple - 1) / stride_multiple * stride_multiple;
    h.coeff.assign(static_cast<std::size_t>(d + 1) * h.stride, 0.0);
    for (int i = 0; i < k.width; ++i) {
      const std::vector<long double> mono = fit_cell(k, i, d);
      for (int p = 0; p <= d; ++p)
        h.coeff[static_cast<std::size_t>(d - p) * h.stride + i] = static_cast<double>(mono[p]);
    }
    auto error_of = [&](int first, int last) {
      return is_double ? measure<double>(k, h, first, last) : measure<float>(k, h, first, last);
    };
    const double inner = error_of(inner_first, inner_last);
    const double edges = es ? std::max(error_of(0, 1), error_of(k.width - 1, k.width)) : inner;
    h.max_error = std::max(inner, edges);
    if (best.degree == 0 || h.max_error < best.max_error) best = h;
    if (inner <= target && edges <= edge_target) return h;
  }
  return best;  // the closest the working precision allows
}

}  // namespace sfft::nufft3
