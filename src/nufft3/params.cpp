#include "nufft3/params.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

}  // namespace

long long next_smooth_even(long long n) {
  if (n <= 2) return 2;
  for (long long m = n + (n & 1);; m += 2) {
    long long r = m;
    for (long long p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
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
          " must be 0 (automatic) or in [1.25, 4] for the ES kernel");
  return upsampfac;
}

KernelSpec make_kernel(KernelKind kind, double tol, double upsampfac) {
  if (upsampfac == 0) upsampfac = 2.0;
  KernelSpec k;
  k.kind = kind;
  if (kind == KernelKind::Gaussian) {
    // Capozzoli et al.: b = log((4 alpha / e) b + 9 alpha / e) / gamma, gamma = pi^2 (1 - 2 / R^2).
    const double alpha = 2 + 1 / std::sqrt(2 * M_PI);
    const double gamma = M_PI * M_PI * (1 - 2 / (upsampfac * upsampfac));
    double b = 1;
    for (int it = 0; it < 200; ++it) b = std::log(4 * alpha / tol * b + 9 * alpha / tol) / gamma;
    k.b = b;
    // The paper's half-width 2 pi b bounds the truncation error by exp(-pi^2 b); the Gaussian is already
    // below tol/10 at sqrt(4 b ln(10/tol)) cells, so the tighter of the two is used.
    double half = std::min(2 * M_PI * b, std::sqrt(4 * b * std::log(10 / tol)));
    k.width = 2 * static_cast<int>(std::ceil(half));
  } else {
    int w;
    if (upsampfac == 2.0) {
      w = static_cast<int>(std::ceil(-std::log10(tol / 10)));
    } else {
      w = static_cast<int>(std::ceil(-std::log(tol) / (M_PI * std::sqrt(1 - 1 / upsampfac))));
    }
    // Spreading and interpolation each contribute about tol; below 1e-8 their sum needs one more cell to
    // stay within the 10 x tol the tests demand (seen on clustered 2-D points at 1e-9). Other sigmas get the
    // cell too: without it sigma = 1.25 lands near 4 x tol (2-D, 1e-6), with it near tol, like FINUFFT.
    if (tol < 1e-8 || upsampfac != 2.0) ++w;
    w = std::clamp(w, 2, 16);
    double beta_per_cell = 2.30;
    if (upsampfac == 2.0) {
      if (w == 2) beta_per_cell = 2.20;
      if (w == 3) beta_per_cell = 2.26;
      if (w == 4) beta_per_cell = 2.38;
    } else {
      beta_per_cell = 0.97 * M_PI * (1 - 1 / (2 * upsampfac));
    }
    k.width = w;
    k.beta = beta_per_cell * w;
  }
  k.half_width = k.width / 2.0;
  require(k.width <= kMaxWidth, "the kernel needs ", k.width, " cells (more than ", kMaxWidth,
          "); use a larger tol or the ES kernel");
  if (kind == KernelKind::ExpSemicircle) {
    int n = std::min(kMaxQuadrature, 2 * k.width + 8);
    std::vector<double> nodes, weights;
    gauss_legendre(2 * n, nodes, weights);
    int used = 0;
    for (int i = 0; i < 2 * n; ++i) {
      if (nodes[i] <= 0) continue;
      double u = nodes[i] * k.half_width;
      k.quad_node[used] = u;
      k.quad_weight[used] = weights[i] * k.half_width * kernel_value<double>(k, u);
      ++used;
    }
    k.nquad = used;
  }
  return k;
}

Layout make_layout(int dim, const KernelSpec &kernel, double upsampfac, const double *x_lo, const double *x_hi,
                   const double *s_lo, const double *s_hi, double bytes_per_cell, double memory_limit) {
  Layout L;
  L.dim = dim;
  L.kernel = kernel;
  L.upsampfac = upsampfac;
  double cells1 = 1, cells2 = 1;
  for (int d = 0; d < dim; ++d) {
    DimLayout &a = L.axis[d];
    double X = (x_hi[d] - x_lo[d]) / 2, S = (s_hi[d] - s_lo[d]) / 2;
    a.src_center = x_lo[d] + X;
    a.tgt_center = s_lo[d] + S;
    // Degenerate extents: any grid spacing works; keep the grids small.
    if (X == 0 && S == 0) X = S = 1;
    else if (S == 0) S = 1 / X;
    else if (X == 0) X = 1 / S;
    a.h1 = M_PI / (upsampfac * S);
    double n1 = 2 * std::ceil(X / a.h1) + kernel.width + 2;
    double n2 = std::max(std::ceil(upsampfac * n1), 2.0 * kernel.width);
    if (!(n2 < static_cast<double>(std::numeric_limits<int>::max()) / 2)) {
      fail(SFFT_ERROR_OUT_OF_MEMORY, "dimension ", d, " needs an FFT of about ", n2,
           " points (bandwidth product X*S = ", X * S, "): the grid would need more than ", n2 * bytes_per_cell,
           " bytes");
    }
    a.n1 = static_cast<long long>(n1) + (static_cast<long long>(n1) & 1);
    a.n2 = next_smooth_even(static_cast<long long>(n2));
    a.tgt_scale = a.h1 * a.n2 / (2 * M_PI);
    cells1 *= a.n1;
    cells2 *= a.n2;
  }
  double need = cells2 * bytes_per_cell;
  if (!(need <= memory_limit)) {
    fail(SFFT_ERROR_OUT_OF_MEMORY, "the ", dim, "-d grid of ", cells2, " cells needs ", need,
         " bytes of workspace (more than the ", memory_limit, " bytes available)");
  }
  L.n1_total = static_cast<std::size_t>(cells1);
  L.n2_total = static_cast<std::size_t>(cells2);
  return L;
}

Layout choose_layout(int dim, KernelKind kind, double tol, double upsampfac, std::size_t N, std::size_t K,
                     const double *x_lo, const double *x_hi, const double *s_lo, const double *s_hi,
                     double bytes_per_cell, double memory_limit, const CostModel &cost, bool is_double) {
  if (upsampfac != 0 || kind != KernelKind::ExpSemicircle) {
    return make_layout(dim, make_kernel(kind, tol, upsampfac), upsampfac, x_lo, x_hi, s_lo, s_hi, bytes_per_cell,
                       memory_limit);
  }
  // Automatic oversampling: sigma = 2 (narrow kernel, larger grid) or 1.25 (wider kernel, grid (1.25/2)^(2 dim)
  // the size), whichever the backend's cost model prefers. 1.25 needs more than 16 taps below 1e-9, and in
  // single precision its larger deconvolution factors amplify rounding past 10 x tol below 1e-4 (3-D, 1e-5:
  // 2.4e-4 against 1.5e-5 at sigma = 2).
  Layout best = make_layout(dim, make_kernel(kind, tol, 2.0), 2.0, x_lo, x_hi, s_lo, s_hi, bytes_per_cell,
                            memory_limit);
  if (tol < (is_double ? 1e-9 : 1e-4)) return best;
  auto time_of = [&](const Layout &L) {
    return cost.per_tap * static_cast<double>(N + K) * std::pow(L.kernel.width, dim) +
           cost.per_cell * static_cast<double>(L.n2_total);
  };
  try {
    Layout low = make_layout(dim, make_kernel(kind, tol, 1.25), 1.25, x_lo, x_hi, s_lo, s_hi, bytes_per_cell,
                             memory_limit);
    if (time_of(low) < time_of(best)) return low;
  } catch (const Error &) {
    // sigma = 1.25 never needs more memory than sigma = 2, so this cannot fail where `best` succeeded.
  }
  return best;
}

double host_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::numeric_limits<double>::max();
  return static_cast<double>(pages) * static_cast<double>(page);
}

void grid_correction(const KernelSpec &k, const DimLayout &a, double *out) {
  for (long long c = -a.n1 / 2; c < a.n1 / 2; ++c)
    out[c + a.n1 / 2] = 1 / kernel_fourier(k, 2 * M_PI * static_cast<double>(c) / static_cast<double>(a.n2));
}

}  // namespace sfft::nufft3
