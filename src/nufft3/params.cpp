// SPDX-License-Identifier: Apache-2.0
#include "nufft3/params.hpp"

#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace sfft::nufft3 {
namespace {

// Gauss-Legendre nodes/weights on [-1, 1] (Newton on the Legendre recurrence).
void gauss_legendre(int n, std::vector<double> &nodes, std::vector<double> &weights) {
  nodes.resize(n);
  weights.resize(n);
  for (int i = 0; i < n; ++i) {
    double x = std::cos(M_PI * (i + 0.75) / (n + 0.5));
    double dp = 1;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = x;
      for (int k = 2; k <= n; ++k) {
        double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (x * p1 - p0) / (x * x - 1);
      double step = p1 / dp;
      x -= step;
      if (std::fabs(step) < 1e-16) break;
    }
    nodes[i] = x;
    weights[i] = 2 / ((1 - x * x) * dp * dp);
  }
}

// The kernel's name in messages.
const char *kernel_name(KernelKind kind) {
  return kind == KernelKind::Prolate ? "prolate" : kind == KernelKind::Gaussian ? "Gaussian" : "ES";
}

// Largest source-grid spacing in coordinate units: h1 n2 / (2 pi) must stay finite for any n2 < 2^31.
constexpr double kLargestSpacing = 1e290;

}  // namespace

namespace {

// Calls visit(m, k) for every even 2,3,5,7-smooth m in [lo, hi] (hi < 2^62), k the number of distinct odd primes
// dividing m: every odd part 3^a 5^b 7^c up to hi times the powers of two that bring it into the range, a few
// hundred products (stepping through even numbers and dividing out the primes took 60-160 us at 1e6, once per
// setpts).
template <class Visit>
void for_each_smooth_even(long long lo, long long hi, Visit visit) {
  auto next = [hi](long long p, long long f) { return p <= hi / f ? p * f : hi + 1; };
  for (long long p7 = 1, k7 = 0; p7 <= hi; p7 = next(p7, 7), k7 = 1)
    for (long long p5 = p7, k5 = 0; p5 <= hi; p5 = next(p5, 5), k5 = 1)
      for (long long p3 = p5, k3 = 0; p3 <= hi; p3 = next(p3, 3), k3 = 1)
        for (long long m = next(p3, 2); m <= hi; m = next(m, 2))
          if (m >= lo) visit(m, static_cast<int>(k3 + k5 + k7));
}

}  // namespace

long long next_smooth_even(long long n) {
  if (n <= 2) return 2;
  long long best = 2;
  while (best < n) best *= 2;
  for_each_smooth_even(n, best, [&](long long m, int) { best = std::min(best, m); });
  return best;
}

long long fft_length(long long n, FftLengthCost cost) {
  const long long first = next_smooth_even(n);
  if (!(cost.odd_prime > 0) && !(cost.twice_odd > 0)) return first;
  long long best = first;
  double best_cost = std::numeric_limits<double>::infinity();
  for_each_smooth_even(first, first + first / kFftLengthSlack, [&](long long m, int odd_primes) {
    const double extra = cost.odd_prime * odd_primes + (m % 4 == 2 ? cost.twice_odd : 0);
    const double m_cost = static_cast<double>(m) * (1 + extra);
    if (m_cost < best_cost || (m_cost == best_cost && m < best)) {
      best = m;
      best_cost = m_cost;
    }
  });
  return best;
}

void validate_tolerance(double tol, bool is_double) {
  require(std::isfinite(tol) && tol > 0 && tol < 1, "tol = ", tol, " must be in (0, 1)");
  double lowest = is_double ? 1e-14 : 1e-6;
  require(tol >= lowest, "tol = ", tol, " is below what ", is_double ? "SFFT_COMPLEX128" : "SFFT_COMPLEX64",
          " can reach (smallest ", lowest, ")");
}

double resolve_upsampfac(KernelKind kind, double upsampfac) {
  if (kind == KernelKind::Gaussian) {
    // Capozzoli et al. require R > 2; at R = 2 their b misses 1e-9 in 2-D by two orders.
    if (upsampfac == 0) return 2.25;
    require(std::isfinite(upsampfac) && upsampfac > 2 && upsampfac <= 4, "upsampfac = ", upsampfac,
            " must be 0 (default 2.25) or in (2, 4] for the Gaussian kernel");
    return upsampfac;
  }
  if (upsampfac == 0) return 0;  // chosen per point set by choose_layout
  require(std::isfinite(upsampfac) && upsampfac >= 1.25 && upsampfac <= 4, "upsampfac = ", upsampfac,
          " must be 0 (automatic) or in [1.25, 4] for the ", kernel_name(kind), " kernel");
  return upsampfac;
}

namespace {

// Gauss-Legendre rule of the Fourier-transform quadrature for a kernel of `width` cells: 2 width + 8 nodes on
// (0, half_width] (at most kMaxQuadrature), the same for every shape.
struct Quadrature {
  std::vector<double> nodes, weights;
};
Quadrature fourier_quadrature(int width) {
  Quadrature q;
  gauss_legendre(2 * std::min(kMaxQuadrature, 2 * width + 8), q.nodes, q.weights);
  return q;
}

// Coefficients of psi_0 of bandwidth c in the even Legendre polynomials, scaled to psi_0(0) = 1 and cut where they
// fall below 1e-20 of the largest; returns their count. psi_0 is the eigenvector of the prolate operator
// -d/dz (1 - z^2) d/dz + c^2 z^2 of the smallest eigenvalue, which in the orthonormal even Legendre basis is a
// symmetric tridiagonal matrix: its eigenvalue by bisection on the Sturm count, the vector by inverse iteration
// just below it (where the shifted matrix is positive definite, so the factorisation needs no pivoting).
int prolate_legendre(double c, double *coeff) {
  constexpr int M = kMaxLegendre;
  double diag[M], off[M];
  for (int j = 0; j < M; ++j) {
    const double n = 2.0 * j;
    diag[j] = n * (n + 1) + c * c * (2 * n * (n + 1) - 1) / ((2 * n + 3) * (2 * n - 1));
    off[j] = c * c * (n + 1) * (n + 2) / ((2 * n + 3) * std::sqrt((2 * n + 1) * (2 * n + 5)));
  }
  // Pivots of the LDL^T factorisation of T - x; their negative count is the number of eigenvalues below x.
  double pivot[M];
  auto factor = [&](double x) {
    int negative = 0;
    pivot[0] = diag[0] - x;
    for (int j = 0; j < M; ++j) {
      if (j > 0) pivot[j] = diag[j] - x - off[j - 1] * off[j - 1] / pivot[j - 1];
      if (pivot[j] == 0) pivot[j] = -1e-300;
      negative += pivot[j] < 0;
    }
    return negative;
  };
  double lo = -1, hi = diag[0] + 1;  // the Rayleigh quotient at e_0 bounds the smallest eigenvalue above
  for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
    const double mid = (lo + hi) / 2;
    (factor(mid) >= 1 ? hi : lo) = mid;
  }
  factor(lo - 1e-9 * hi);
  double v[M], y[M];
  std::fill(v, v + M, 1.0);
  for (int it = 0; it < 4; ++it) {
    y[0] = v[0];
    for (int j = 1; j < M; ++j) y[j] = v[j] - off[j - 1] / pivot[j - 1] * y[j - 1];
    v[M - 1] = y[M - 1] / pivot[M - 1];
    for (int j = M - 2; j >= 0; --j) v[j] = (y[j] - off[j] * v[j + 1]) / pivot[j];
    const double largest =
        std::fabs(*std::max_element(v, v + M, [](double a, double b) { return std::fabs(a) < std::fabs(b); }));
    for (double &a : v) a /= largest;
  }
  // Orthonormal basis sqrt(n + 1/2) P_n to P_n, then psi_0(0) = sum a_j P_2j(0) = 1.
  int terms = 0;
  double at_zero = 0, p_even_at_zero = 1;  // P_2j(0) = (-1)^j (2j - 1)!! / (2j)!!
  for (int j = 0; j < M; ++j) {
    coeff[j] = v[j] * std::sqrt(2 * j + 0.5);
    if (j > 0) p_even_at_zero *= -(2.0 * j - 1) / (2.0 * j);
    at_zero += coeff[j] * p_even_at_zero;
    if (std::fabs(v[j]) > 1e-20) terms = j + 1;
  }
  for (int j = 0; j < M; ++j) coeff[j] = j < terms ? coeff[j] / at_zero : 0;
  return terms;
}

// The ES or prolate kernel of `width` cells and shape `shape` (ES beta, prolate c), with the quadrature
// (fourier_quadrature(width)) of its Fourier transform.
KernelSpec shaped_kernel(KernelKind kind, int width, double shape, const Quadrature &q) {
  KernelSpec k;
  k.kind = kind;
  k.width = width;
  k.half_width = width / 2.0;
  k.beta = shape;
  if (kind == KernelKind::Prolate) k.nlegendre = prolate_legendre(shape, k.legendre);
  for (std::size_t i = 0; i < q.nodes.size(); ++i) {
    if (q.nodes[i] <= 0) continue;
    const double u = q.nodes[i] * k.half_width;
    k.quad_node[k.nquad] = u;
    k.quad_weight[k.nquad] = q.weights[i] * k.half_width * kernel_value<double>(k, u);
    ++k.nquad;
  }
  return k;
}

// Worst relative error of one stage in one dimension: a point at fractional cell offset t seen at frequency
// w (radians per cell, |w| <= pi / sigma, the band both stages use) gets sum_c phi(c - t) e^{i w (c - t)} /
// phihat(w) in place of 1. Spreading and interpolation each make this error once per dimension; with many
// points the errors average out, with a handful they do not, so it sets the few-point accuracy.
double stage_error(const KernelSpec &k, double sigma) {
  constexpr int kFrequencies = 32, kOffsets = 64;
  // Kernel values per offset once, and e^{i w (c - t)} as e^{i w c} e^{-i w t} (two tables per frequency, the
  // product exact to 2 ulp): a design evaluates this about 14 times, and per-tap exp and sincos made it 25 ms
  // per width, paid by the first setpts of each tolerance in a process.
  const int first = static_cast<int>(std::ceil(-k.half_width));
  const int taps = static_cast<int>(std::floor(k.half_width + 1)) - first + 1;  // c - t in [-hw, hw], t in [0, 1)
  std::vector<double> value(static_cast<std::size_t>(kOffsets) * taps, 0.0);
  for (int o = 0; o < kOffsets; ++o) {
    const double t = static_cast<double>(o) / kOffsets;
    for (int i = 0; i < taps; ++i) {
      const double u = static_cast<double>(first + i) - t;
      if (std::fabs(u) <= k.half_width) value[o * taps + i] = kernel_value<double>(k, u);
    }
  }
  std::vector<double> cos_c(taps), sin_c(taps);
  double worst = 0;
  for (int j = 0; j <= kFrequencies; ++j) {
    const double w = M_PI / sigma * j / kFrequencies;
    const double ph = kernel_fourier(k, w);
    for (int i = 0; i < taps; ++i) {
      cos_c[i] = std::cos(w * (first + i));
      sin_c[i] = std::sin(w * (first + i));
    }
    for (int o = 0; o < kOffsets; ++o) {
      const double t = static_cast<double>(o) / kOffsets, ct = std::cos(w * t), st = std::sin(w * t);
      double re = 0, im = 0;
      for (int i = 0; i < taps; ++i) {
        const double v = value[o * taps + i];
        re += v * (cos_c[i] * ct + sin_c[i] * st);
        im += v * (sin_c[i] * ct - cos_c[i] * st);
      }
      worst = std::max(worst, std::hypot(re / ph - 1, im / ph));
    }
  }
  if (k.kind != KernelKind::ExpSemicircle) return worst;  // the prolate kernel is smooth up to its edges
  // The CPU's polynomial tables cannot follow the square-root edge of the ES kernel below about e^-beta (up to
  // 4 e^-beta in each of the two edge taps); the deconvolution amplifies that by 1 / phihat at the band's edge.
  return worst + 8 * std::exp(-k.beta) / kernel_fourier(k, M_PI / sigma);
}

// ES or prolate kernel of `width` cells with the shape that minimises stage_error at sigma (golden-section search
// around FINUFFT's beta = 0.97 pi (1 - 1 / (2 sigma)) width, which is near optimal from 6 cells on; narrower
// kernels want up to 20 % less; the prolate c has the same role and about the same optimum).
struct Design {
  KernelSpec kernel;
  double error = 0;
};

// Memo of the designs (about 1 ms each) for the kDesignMemoSigmas most recently used sigmas. Every distinct
// upsampfac a caller tries would otherwise stay for good.
struct DesignMemo {
  std::mutex mutex;
  std::map<std::tuple<KernelKind, int, double>, Design> designs;
  std::vector<double> sigmas;  // most recently used last
};
DesignMemo &design_memo() {
  static DesignMemo memo;
  return memo;
}
// A child forked while another thread holds the memo's lock would wait for it forever.
[[maybe_unused]] const bool memo_atfork_registered = [] {
  return pthread_atfork([] { design_memo().mutex.lock(); }, [] { design_memo().mutex.unlock(); },
                        [] { design_memo().mutex.unlock(); }) == 0;
}();

// Marks sigma as just used; evicts the designs of the least recently used sigma beyond kDesignMemoSigmas. Call
// with the memo's lock held.
void touch(DesignMemo &memo, double sigma) {
  auto &order = memo.sigmas;
  order.erase(std::remove(order.begin(), order.end(), sigma), order.end());
  order.push_back(sigma);
  if (order.size() <= kDesignMemoSigmas) return;
  const double evicted = order.front();
  order.erase(order.begin());
  for (auto it = memo.designs.begin(); it != memo.designs.end();)
    it = std::get<2>(it->first) == evicted ? memo.designs.erase(it) : std::next(it);
}

Design design(KernelKind kind, int width, double sigma) {
  DesignMemo &memo = design_memo();
  {
    std::lock_guard<std::mutex> lock(memo.mutex);
    auto it = memo.designs.find({kind, width, sigma});
    if (it != memo.designs.end()) {
      touch(memo, sigma);
      return it->second;
    }
  }
  const double nominal = 0.97 * M_PI * (1 - 1 / (2 * sigma)) * width;
  const Quadrature quadrature = fourier_quadrature(width);
  auto error_at = [&](double shape) { return stage_error(shaped_kernel(kind, width, shape, quadrature), sigma); };
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = 0.75 * nominal, b = 1.05 * nominal;
  double c = b - g * (b - a), d = a + g * (b - a), ec = error_at(c), ed = error_at(d);
  for (int it = 0; it < 12; ++it) {
    if (ec < ed) {
      b = d, d = c, ed = ec;
      c = b - g * (b - a), ec = error_at(c);
    } else {
      a = c, c = d, ec = ed;
      d = a + g * (b - a), ed = error_at(d);
    }
  }
  Design best;
  best.kernel = shaped_kernel(kind, width, ec < ed ? c : d, quadrature);
  best.error = std::min(ec, ed);
  std::lock_guard<std::mutex> lock(memo.mutex);
  memo.designs.emplace(std::make_tuple(kind, width, sigma), best);
  touch(memo, sigma);
  return best;
}

// Whether kernel k at sigma meets tol in dim: the predicted worst case of its stages plus rounding. Rounding,
// measured with few points: the FFT's grows with the grid's dynamic range after the deconvolution,
// (phihat(0) / phihat(band edge))^dim, which limits ES at sigma < 2 and the Gaussian at small tol (in single
// precision already near 1e-6); in double, the CPU's polynomial kernel values stop improving near kTapRounding
// units in the last place (amplified like stage errors, by 1 / phihat at the band's edge). A kernel that meets
// tol is accepted if rounding adds at most kRoundingAllowance (sigma = 2 near tol = 1e-13).
double error_budget(const KernelSpec &k, double tol, int dim, double sigma) {
  const double above_two = k.kind != KernelKind::Gaussian && sigma > 2 ? kWideSigmaBudget : 1;
  return kWorstCaseTolerances[dim - 1] * (k.kind == KernelKind::Prolate ? kProlateBudget : 1) * above_two * tol;
}
// Stages whose errors add up (see kWorstCaseTolerances): 2 in 1-D and 2-D, 3 in 3-D.
int stages_of(int dim) { return std::max(2, dim); }
double stage_part(double stage, int dim) { return stages_of(dim) * stage; }

bool meets_without_rounding(const KernelSpec &k, double stage, double sigma, double tol, int dim) {
  return stage_part(stage, dim) <= error_budget(k, tol, dim, sigma);
}

bool meets(const KernelSpec &k, double stage, double sigma, double tol, int dim, bool is_double) {
  const double u = is_double ? 0x1p-53 : 0x1p-24;
  const double edge = kernel_fourier(k, M_PI / sigma);
  const double kernel_part = stage_part(stage, dim);
  const double rounding_part = (is_double ? stages_of(dim) * kTapRounding * k.width * u / edge : 0) +
                               kFftRounding * u * std::pow(kernel_fourier(k, 0) / edge, dim);
  const double budget = error_budget(k, tol, dim, sigma);
  return kernel_part + rounding_part <= budget ||
         (kernel_part <= budget && rounding_part <= budget + kRoundingAllowance);
}

// The narrowest ES or prolate kernel of at least `from` cells whose predicted worst case at sigma meets the
// contract for any number of points, not only on average over many. From 2 cells, a bisection on the stage error
// alone (which must meet the budget, and falls with the width) finds where to start, so that a sigma new to the
// process designs a few widths, not all below the one it takes; the full test (whose rounding grows with the
// width) then walks up. choose_layout passes the width a larger sigma took: a smaller sigma needs at least as many.
KernelSpec narrowest_shaped(KernelKind kind, double tol, double sigma, int dim, bool is_double, int from) {
  if (from <= 2) {
    int lo = 2, hi = kMaxShapedWidth + 1;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      const Design e = design(kind, mid, sigma);
      if (meets_without_rounding(e.kernel, e.error, sigma, tol, dim))
        hi = mid;
      else
        lo = mid + 1;
    }
    from = lo;
  }
  for (int w = from; w <= kMaxShapedWidth; ++w) {
    const Design e = design(kind, w, sigma);
    if (meets(e.kernel, e.error, sigma, tol, dim, is_double)) return e.kernel;
  }
  fail(SFFT_ERROR_INVALID_ARGUMENT, "tol = ", tol, " is out of reach of upsampfac ", sigma, " in ", dim, "-d (",
       kernel_name(kind), " kernels of up to ", kMaxShapedWidth, " cells); use a larger upsampfac or 0 (automatic)");
}

}  // namespace

KernelSpec make_kernel(KernelKind kind, double tol, double upsampfac, int dim, bool is_double) {
  if (upsampfac == 0) upsampfac = 2.0;
  if (kind == KernelKind::Gaussian) {
    // Capozzoli et al.: b = log((4 alpha / e) b + 9 alpha / e) / gamma, gamma = pi^2 (1 - 2 / R^2), for an
    // accuracy e. Their e = tol is met on average over many points; the worst case of a handful of points (2-d,
    // tol 1e-8: 18 tol) needs a smaller e, halved until the predicted worst case fits, as for ES below.
    const double alpha = 2 + 1 / std::sqrt(2 * M_PI);
    const double gamma = M_PI * M_PI * (1 - 2 / (upsampfac * upsampfac));
    KernelSpec k;
    for (double e = tol; e >= tol / 1024; e /= 2) {
      k.kind = kind;
      double b = 1;
      for (int it = 0; it < 200; ++it) b = std::log(4 * alpha / e * b + 9 * alpha / e) / gamma;
      k.b = b;
      // The paper's half-width 2 pi b bounds the truncation error by exp(-pi^2 b); the Gaussian is already
      // below e/10 at sqrt(4 b ln(10/e)) cells, so the tighter of the two is used.
      const double half = std::min(2 * M_PI * b, std::sqrt(4 * b * std::log(10 / e)));
      k.width = 2 * static_cast<int>(std::ceil(half));
      k.half_width = k.width / 2.0;
      require(k.width <= kMaxWidth, "the kernel needs ", k.width, " cells (more than ", kMaxWidth,
              "); use a larger tol or the ES kernel");
      if (meets(k, stage_error(k, upsampfac), upsampfac, tol, dim, is_double)) return k;
    }
    fail(SFFT_ERROR_INVALID_ARGUMENT, "tol = ", tol, " is out of reach of the Gaussian kernel at upsampfac ", upsampfac,
         " in ", dim, "-d; use a larger tol or the ES kernel");
  }
  return narrowest_shaped(kind, tol, upsampfac, dim, is_double, 2);
}

Layout make_layout(int dim, const KernelSpec &kernel, double upsampfac, const double *x_lo, const double *x_hi,
                   const double *s_lo, const double *s_hi, double bytes_per_cell, double memory_limit,
                   FftLengthCost length_cost) {
  Layout L;
  L.dim = dim;
  L.kernel = kernel;
  L.upsampfac = upsampfac;
  double cells1 = 1, cells2 = 1, phase_bound = 0;
  for (int d = 0; d < dim; ++d) {
    DimLayout &a = L.axis[d];
    // Halves first: x_hi - x_lo may overflow where the extents themselves do not.
    double X = x_hi[d] / 2 - x_lo[d] / 2, S = s_hi[d] / 2 - s_lo[d] / 2;
    a.src_center = x_lo[d] + X;
    a.tgt_center = s_lo[d] + S;
    // A centre within kCentreSnap of its half-width becomes 0 (the half-width grows by it, the grid by at most as
    // much): setpts then takes no phase factor of the other side's points (their sine and cosine, 0.3 ms per 1e5
    // points on the CPU), as FINUFFT does for centres within 10 %.
    if (std::fabs(a.src_center) <= kCentreSnap * X) {
      X = std::max(std::fabs(x_lo[d]), std::fabs(x_hi[d]));
      a.src_center = 0;
    }
    if (std::fabs(a.tgt_center) <= kCentreSnap * S) {
      S = std::max(std::fabs(s_lo[d]), std::fabs(s_hi[d]));
      a.tgt_center = 0;
    }
    phase_bound += std::max(std::fabs(x_lo[d]), std::fabs(x_hi[d])) * std::max(std::fabs(s_lo[d]), std::fabs(s_hi[d]));
    // h1 S <= pi / upsampfac keeps every target in the kernel's accurate band. Where pi / (upsampfac S) is
    // infinite or huge (all targets at one coordinate, or S near the smallest doubles), X S is that small too
    // unless the extents span the double range: then h1 = X (or 1) gives the smallest grid and keeps
    // x / h1 and h1 n2 finite.
    a.h1 = S > 0 ? M_PI / (upsampfac * S) : 0;
    if (!(a.h1 > 0 && a.h1 <= kLargestSpacing)) {
      require(X * S <= M_PI / upsampfac, "dimension ", d, ": sources in [", x_lo[d], ", ", x_hi[d],
              "] and targets in [", s_lo[d], ", ", s_hi[d], "] are too close to the ends of the double range");
      a.h1 = X > 0 ? X : 1;
    }
    double n1 = 2 * std::ceil(X / a.h1) + kernel.width + 2;
    double n2 = std::max(std::ceil(upsampfac * n1), 2.0 * kernel.width);
    if (!(n2 < static_cast<double>(std::numeric_limits<int>::max()) / 2)) {
      throw GridTooLarge(SFFT_ERROR_OUT_OF_MEMORY,
                         cat("dimension ", d, " needs an FFT of about ", n2, " points (bandwidth product X*S = ", X * S,
                             "): the grid would need more than ", n2 * bytes_per_cell, " bytes"));
    }
    a.n1 = static_cast<long long>(n1) + (static_cast<long long>(n1) & 1);
    a.n2 = fft_length(static_cast<long long>(n2), length_cost);
    a.tgt_scale = a.h1 * (static_cast<double>(a.n2) / (2 * M_PI));
    require(std::isfinite(a.tgt_scale), "dimension ", d, ": sources in [", x_lo[d], ", ", x_hi[d], "] and targets in [",
            s_lo[d], ", ", s_hi[d], "] are too close to the ends of the double range");
    cells1 *= a.n1;
    cells2 *= a.n2;
  }
  // The centring splits each phase x s into D x + C s + (x - C)(s - D) (per dimension); none of the parts may
  // overflow, or the outputs would be NaN. Phases near 1e308 radians carry no digit of their value anyway.
  require(phase_bound <= std::numeric_limits<double>::max() / 8, "the phases x*s reach ", phase_bound,
          " radians, beyond the double range: no transform of these points is defined at any tol");
  double need = cells2 * bytes_per_cell;
  // Lengths chosen for speed must not refuse a grid that the smallest lengths fit.
  if (!(need <= memory_limit) && (length_cost.odd_prime > 0 || length_cost.twice_odd > 0))
    return make_layout(dim, kernel, upsampfac, x_lo, x_hi, s_lo, s_hi, bytes_per_cell, memory_limit, {});
  if (!(need <= memory_limit)) {
    throw GridTooLarge(SFFT_ERROR_OUT_OF_MEMORY,
                       cat("the ", dim, "-d grid of ", cells2, " cells needs ", need,
                           " bytes of workspace (more than the ", memory_limit, " bytes available)"));
  }
  L.n1_total = static_cast<std::size_t>(cells1);
  L.n2_total = static_cast<std::size_t>(cells2);
  return L;
}

namespace {
// Lines at each end of dimension d: `count` from each end, or the whole axis (one block) where they meet.
long long ends_extent(const Layout &L, int d, long long count) {
  const long long n = L.axis[d].n2;
  return 2 * count >= n ? n : count;
}
}  // namespace

FftLines all_fft_lines(const Layout &L) {
  FftLines f;
  const int dim = L.dim;
  if (dim < 2) return f;
  f.rows[0] = L.axis[0].n2;
  f.rows[1] = dim == 3 ? L.axis[1].n2 : 0;
  f.band = L.axis[dim - 1].n2;
  f.ends = dim == 3 ? L.axis[1].n2 : 0;
  return f;
}

FftLines fft_lines(const Layout &L, const double *s_lo, const double *s_hi) {
  FftLines f = all_fft_lines(L);
  const int dim = L.dim;
  if (dim < 2) return f;
  const DimLayout &last = L.axis[dim - 1];
  // A target at coordinate p of a dimension (|p| <= extent) reads the cells ceil(p - W/2) .. + W - 1 (the
  // last dimension's moved by n2/2): within extent + W/2 of the centre, 2 cells more for rounding.
  auto reach = [&](int d) {
    const DimLayout &a = L.axis[d];
    return std::max(std::fabs(s_lo[d] - a.tgt_center), std::fabs(s_hi[d] - a.tgt_center)) * a.tgt_scale +
           L.kernel.half_width + 2;
  };
  const double r_last = reach(dim - 1);
  const long long half = last.n2 / 2;
  if (r_last < static_cast<double>(half)) {  // else a band that wraps: every column
    f.band_lo = (half - static_cast<long long>(std::ceil(r_last))) / kPruneRound * kPruneRound;
    f.band =
        std::min(last.n2, round_up_to_prune_lines(half + static_cast<long long>(std::ceil(r_last)) + 1)) - f.band_lo;
  }
  for (int d = 0; d + 1 < dim; ++d)
    f.rows[d] = ends_extent(L, d, std::min(round_up_to_prune_lines(L.axis[d].n1 / 2), L.axis[d].n2 / 2));
  if (dim == 3) f.ends = ends_extent(L, 1, round_up_to_prune_lines(static_cast<long long>(std::ceil(reach(1))) + 1));
  const bool all_of_dim1 = dim == 2 || (f.rows[1] == L.axis[1].n2 && f.ends == L.axis[1].n2);
  f.pruned = f.band < last.n2 || f.rows[0] < L.axis[0].n2 || !all_of_dim1;
  return f;
}

double fft_line_work(const Layout &L, const FftLines &f) {
  auto line = [&](int d) {
    const double n = static_cast<double>(L.axis[d].n2);
    return n * std::log2(n);
  };
  if (L.dim == 1) return line(0);
  const double rows0 = static_cast<double>(fft_lines_at_both_ends(L, 0, f.rows[0])), band = static_cast<double>(f.band);
  if (L.dim == 2) return rows0 * line(1) + band * line(0);
  const double rows1 = static_cast<double>(fft_lines_at_both_ends(L, 1, f.rows[1]));
  const double ends = static_cast<double>(fft_lines_at_both_ends(L, 1, f.ends));
  return rows0 * rows1 * line(2) + rows0 * band * line(1) + ends * band * line(0);
}

double source_occupancy(const Layout &L, const SourceSample &sample) {
  const std::size_t count = sample.coord[0].size();
  if (count < 2) return 1;
  // A cell's key: its indices, from 0, in mixed radix (n1 + 4 a dimension: the sources lie within the n1 cells,
  // and the clamp keeps a coordinate rounded past them from aliasing another cell).
  std::vector<std::uint64_t> cells(count, 0);
  for (int d = 0; d < L.dim; ++d) {
    const DimLayout &a = L.axis[d];
    const double radix = static_cast<double>(a.n1 + 4);
    for (std::size_t i = 0; i < count; ++i) {
      const double c = std::floor((sample.coord[d][i] - a.src_center) / a.h1) + static_cast<double>(a.n1 / 2 + 2);
      cells[i] = cells[i] * static_cast<std::uint64_t>(radix) +
                 static_cast<std::uint64_t>(std::min(std::max(c, 0.0), radix - 1));
    }
  }
  std::sort(cells.begin(), cells.end());
  double others = 0;  // over the sample, the other sample points in the same cell
  for (std::size_t i = 0; i < count;) {
    std::size_t j = i + 1;
    while (j < count && cells[j] == cells[i]) ++j;
    const double run = static_cast<double>(j - i);
    others += run * (run - 1);
    i = j;
  }
  const double scale = static_cast<double>(sample.total - 1) / static_cast<double>(count - 1);
  return 1 + scale * others / static_cast<double>(count);
}

double single_rounding_floor(const KernelSpec &k, double sigma, int dim, double occupancy) {
  const double amplification = std::pow(kernel_fourier(k, 0) / kernel_fourier(k, M_PI / sigma), dim);
  return kFftRounding * 0x1p-24 * amplification * std::max(1.0, kOccupancyRounding * std::sqrt(occupancy));
}

Layout choose_layout(int dim, KernelKind kind, double tol, double upsampfac, std::size_t N, std::size_t K, int ntransf,
                     const double *x_lo, const double *x_hi, const double *s_lo, const double *s_hi,
                     double bytes_per_cell, double memory_limit, const CostModel &cost, bool is_double,
                     const SourceSample *sample) {
  const FftLengthCost length_cost{dim <= 2 ? cost.fft_odd_prime : 0,
                                  dim >= 2 && !is_double ? cost.fft_twice_odd_single : 0};
  if (upsampfac != 0 || kind == KernelKind::Gaussian) {
    return make_layout(dim, make_kernel(kind, tol, upsampfac, dim, is_double), upsampfac, x_lo, x_hi, s_lo, s_hi,
                       bytes_per_cell, memory_limit, length_cost);
  }
  // Automatic oversampling: among kAutoSigmas, the layout the backend's cost model predicts fastest, each sigma
  // with the narrowest kernel that meets tol there (a smaller sigma: a wider kernel on a smaller grid). In
  // double, sigmas below 2 are taken only down to tol = 2e-8: sigma = 1.25 needs 15 or more taps below that,
  // where its many-point errors reached 1.1 tol in 2-d (the tol rule: at most tol) while sigma = 2 stays below
  // 0.9 tol, and cannot reach tol at all below about 1e-10; in single precision only down to 1e-4: sigma =
  // 1.25's larger deconvolution factors amplified rounding past 10 x tol below that (3-D, 1e-5: 2.4e-4 against
  // 1.5e-5 at sigma = 2), and sigmas 1.5 to 1.75 on the suite's dense 3-D clusters (many sources to a cell) by up
  // to 8 x. From 2e-6 to 1e-4 a sample of the sources admits each sigma from 1.5 whose rounding floor at their
  // occupancy leaves room for the kernel's error (single_rounding_floor; on the suite's other point sets, at most
  // 160 to a cell, sigma 1.5 to 1.75 stayed at or below 0.86 tol down to 2e-6 at the widths the tol rule gave them).
  // Where sigma = 2's grid does not fit the memory, a smaller sigma's may. Sigmas above 2 reach every tol that 2
  // does, each with its own narrowest kernel (kWideSigmaBudget), and are skipped where their grids do not fit.
  const bool by_occupancy = occupancy_decides(is_double, tol) && sample != nullptr;
  bool below_two_reaches = tol >= (is_double ? 2e-8 : 1e-4) || by_occupancy;
  auto time_of = [&](const Layout &L) {
    const double taps = std::pow(L.kernel.width, dim), transforms = ntransf;
    const double cells = static_cast<double>(L.n2_total);
    const double grid = dim == 3 && cost.line_point_3d > 0
                            ? cost.cell_3d * cells + cost.line_point_3d * fft_line_work(L, fft_lines(L, s_lo, s_hi))
                            : (is_double ? cost.cell_double : cost.cell_single) * cells;
    return transforms * (cost.spread_tap * static_cast<double>(N) * taps + grid) +
           (cost.interp_tap + cost.interp_tap_transform * transforms) * static_cast<double>(K) * taps;
  };

  Layout best;
  bool found = false;
  std::exception_ptr sigma_two_refusal;
  int narrowest = 2;  // from 2 down, kAutoSigmas decrease, and the kernel widths they need do not
  for (const double sigma : kAutoSigmas) {
    const bool above_two = sigma > 2.0;
    if (sigma > cost.widest_sigma || (sigma < 2.0 && !below_two_reaches)) continue;
    // The prolate kernel's budget (kProlateBudget) holds at 2 and 1.25; between them its many-point errors
    // reached 1.04-1.23 tol at tol 1e-2 to 1e-3 (1-D to 3-D, 1200-3000 uniform points).
    if (kind == KernelKind::Prolate && sigma != 2.0 && sigma != 1.25) continue;
    if (by_occupancy && sigma < kOccupancySigmaFloor) continue;
    try {
      const KernelSpec kernel = narrowest_shaped(kind, tol, sigma, dim, is_double, above_two ? 2 : narrowest);
      if (!above_two) narrowest = kernel.width;
      Layout L = make_layout(dim, kernel, sigma, x_lo, x_hi, s_lo, s_hi, bytes_per_cell, memory_limit, length_cost);
      // The occupancy (a sort of the sample) only for a layout that would be taken.
      if ((!found || time_of(L) < time_of(best)) &&
          !(sigma < 2.0 && by_occupancy &&
            single_rounding_floor(kernel, sigma, dim, source_occupancy(L, *sample)) > kSingleRoundingShare * tol))
        best = std::move(L);
      found = true;
    } catch (const GridTooLarge &) {
      // Reported if no smaller sigma's grid fits either.
      if (sigma == 2.0) sigma_two_refusal = std::current_exception();
    } catch (const Error &) {
      if (sigma == 2.0) throw;
      if (!above_two) below_two_reaches = false;  // out of reach at this sigma (narrowest_shaped), and so below it
    }
  }
  if (!found) std::rethrow_exception(sigma_two_refusal);
  return best;
}

bool adopt_grid_shape(Layout &L, const Layout &prev, double slack) {
  if (prev.dim != L.dim || prev.n2_total == 0) return false;
  for (int d = 0; d < L.dim; ++d)
    if (prev.axis[d].n2 < L.axis[d].n2) return false;
  if (static_cast<double>(prev.n2_total) > slack * static_cast<double>(L.n2_total)) return false;
  for (int d = 0; d < L.dim; ++d) {
    DimLayout &a = L.axis[d];
    a.n2 = prev.axis[d].n2;
    a.tgt_scale = a.h1 * (static_cast<double>(a.n2) / (2 * M_PI));
  }
  L.n2_total = prev.n2_total;
  return true;
}

int transforms_per_pass(int ntransf, int max_batch, double grids_that_fit) {
  if (max_batch > 0) return std::min(max_batch, ntransf);
  const double fit = grids_that_fit < kAutoTransformsPerPass ? grids_that_fit : kAutoTransformsPerPass;  // NaN: 8
  if (!(fit < ntransf)) return ntransf;
  const int most = fit >= 1 ? static_cast<int>(fit) : 1;
  const int passes = (ntransf + most - 1) / most;
  return (ntransf + passes - 1) / passes;  // at most `most`: ntransf / passes <= most
}

double tap_tolerance(const Layout &L, double tol) {
  const double band_edge = kernel_fourier(L.kernel, M_PI / L.upsampfac);
  return tol * band_edge / (2 * L.dim * L.kernel.width);
}

std::size_t design_memo_size() {
  std::lock_guard<std::mutex> lock(design_memo().mutex);
  return design_memo().designs.size();
}

double fourier_fit_error(double tol) { return std::max(kFourierFitError, 1e-3 * tol); }

FourierFit fit_fourier(const KernelSpec &k, double upsampfac, double max_error) {
  FourierFit fit;
  if (k.kind == KernelKind::Gaussian) return fit;
  // A hair beyond the band: targets at its edge may land there after rounding of h1 and the centring.
  const double wmax = M_PI / upsampfac * (1 + 1e-6);
  fit.wmax2 = wmax * wmax;
  constexpr int kChecks = 97;
  double exact[kChecks], w[kChecks];
  for (int i = 0; i < kChecks; ++i) {
    w[i] = wmax * std::sqrt(static_cast<double>(i) / (kChecks - 1));  // uniform in w^2, like the fit's variable
    exact[i] = kernel_fourier(k, w[i]);
  }
  // Chebyshev coefficients in z = 2 w^2 / wmax^2 - 1 from n samples at the Chebyshev points.
  for (int n = 4; n <= kMaxFourierTerms; n += n < 12 ? 2 : 4) {
    std::vector<double> f(n);
    for (int j = 0; j < n; ++j) {
      const double z = std::cos(M_PI * (j + 0.5) / n);
      f[j] = kernel_fourier(k, std::sqrt((z + 1) / 2 * fit.wmax2));
      if (!(f[j] > 0)) return fit;  // not positive over the band: no logarithm to fit
      f[j] = std::log(f[j]);
    }
    FourierFit trial = fit;
    trial.terms = n;
    for (int m = 0; m < n; ++m) {
      double s = 0;
      for (int j = 0; j < n; ++j) s += f[j] * std::cos(M_PI * m * (j + 0.5) / n);
      trial.coeff[m] = s * (m == 0 ? 1.0 : 2.0) / n;
    }
    double worst = 0;
    for (int i = 0; i < kChecks; ++i) worst = std::max(worst, std::fabs(fourier_at(k, trial, w[i]) / exact[i] - 1));
    if (worst <= max_error) return trial;
  }
  return fit;  // terms = 0: the quadrature
}

void add_log_fourier(const KernelSpec &k, const FourierFit &fit, const double *w, std::size_t m, double *acc) {
  if (k.kind == KernelKind::Gaussian) {
    const double log_peak = 0.5 * std::log(4 * M_PI * k.b);
    for (std::size_t i = 0; i < m; ++i) acc[i] += log_peak - k.b * w[i] * w[i];
    return;
  }
  // Elements the fit covers run its recurrence; the others (no fit, or beyond its band) take the quadrature.
  const auto fitted = [&](std::size_t i) { return fit.terms > 0 && w[i] * w[i] <= fit.wmax2; };
  double z[kLogFourierBlock], b1[kLogFourierBlock] = {}, b2[kLogFourierBlock] = {};
  for (std::size_t i = 0; i < m; ++i) z[i] = fitted(i) ? 2 * w[i] * w[i] / fit.wmax2 - 1 : 0;
  for (int t = fit.terms - 1; t >= 1; --t) {
    const double c = fit.coeff[t];
    for (std::size_t i = 0; i < m; ++i) {
      const double b0 = c + 2 * z[i] * b1[i] - b2[i];
      b2[i] = b1[i];
      b1[i] = b0;
    }
  }
  for (std::size_t i = 0; i < m; ++i)
    acc[i] += fitted(i) ? fit.coeff[0] + z[i] * b1[i] - b2[i] : std::log(kernel_fourier(k, w[i]));
}

void grid_correction(const KernelSpec &k, const FourierFit &fit, const DimLayout &a, double *out, int threads) {
  // phihat is even: cells c and -c share a value (cell -n1/2 has no mirror inside the grid).
  const long long half = a.n1 / 2;
  out[0] = 1 / fourier_at(k, fit, 2 * M_PI * static_cast<double>(-half) / static_cast<double>(a.n2));
  const long long blocks =
      (half + static_cast<long long>(kLogFourierBlock) - 1) / static_cast<long long>(kLogFourierBlock);
#pragma omp parallel for num_threads(threads) schedule(static) if (half >= 4096)
  for (long long b = 0; b < blocks; ++b) {
    const long long c0 = b * static_cast<long long>(kLogFourierBlock);
    const auto m = static_cast<std::size_t>(std::min(static_cast<long long>(kLogFourierBlock), half - c0));
    double w[kLogFourierBlock], log_phihat[kLogFourierBlock] = {};
    for (std::size_t i = 0; i < m; ++i)
      w[i] = 2 * M_PI * static_cast<double>(c0 + static_cast<long long>(i)) / static_cast<double>(a.n2);
    add_log_fourier(k, fit, w, m, log_phihat);
    for (std::size_t i = 0; i < m; ++i) {
      const long long c = c0 + static_cast<long long>(i);
      const double v = std::exp(-log_phihat[i]);
      out[half + c] = v;
      if (c > 0) out[half - c] = v;
    }
  }
}

}  // namespace sfft::nufft3
