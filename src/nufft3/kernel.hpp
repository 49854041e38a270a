// SPDX-License-Identifier: Apache-2.0
// Spreading kernels of the type-3 NUFFT and their Fourier transforms, shared by the CPU and CUDA paths.
// A kernel lives on grid cells: phi(u) for |u| <= half_width (u in cells), zero outside.
#pragma once

#include <cmath>

#include "common/host_device.hpp"

namespace sfft::nufft3 {

// Prolate: the zeroth prolate spheroidal wave function psi_0 of bandwidth c (the function of its support most
// concentrated in frequency), from its Legendre series; kernel_value evaluates that series (the CPU and CUDA
// paths spread with Horner tables fitted to it).
enum class KernelKind { ExpSemicircle = 0, Gaussian = 1, Prolate = 2 };

// Gauss-Legendre nodes on (0, half_width] for the ES and prolate Fourier transforms: 2 width + 8, at most 48; the
// transform is needed for |w| <= pi / upsampfac only, where that is accurate to rounding up to width 24.
constexpr int kMaxQuadrature = 48;
constexpr int kMaxWidth = 64;
// Even Legendre terms of psi_0 kept (prolate_legendre cuts them below 1e-20 of the largest): 33 at c = 40, 41 at
// c = 67, about the widest design (W = 24 at sigma = 4).
constexpr int kMaxLegendre = 64;

struct KernelSpec {
  KernelKind kind = KernelKind::ExpSemicircle;
  int width = 0;          // cells touched per point and dimension
  double half_width = 0;  // width / 2
  double beta = 0;        // shape: ES beta; Prolate bandwidth c
  double b = 0;           // Gaussian: phi(u) = exp(-u^2 / (4 b)), i.e. tau = b dx^2 of Capozzoli et al.
  int nquad = 0;          // ES, Prolate: quadrature nodes q_i in (0, half_width) and weights w_i * phi(q_i)
  double quad_node[kMaxQuadrature] = {};
  double quad_weight[kMaxQuadrature] = {};
  int nlegendre = 0;  // Prolate: phi(u) = sum_j legendre[j] P_2j(u / half_width), phi(0) = 1
  double legendre[kMaxLegendre] = {};
};

// sum_j a[j] P_2j(z) for |z| <= 1 (Legendre recurrence upwards; stable on [-1, 1]).
template <class Real>
SFFT_HD Real even_legendre_series(const double *a, int terms, Real z) {
  Real p_prev = 1, p = z, sum = Real(a[0]);  // P_0, P_1
  for (int n = 1; n < 2 * terms - 2; ++n) {
    const Real next = (Real(2 * n + 1) * z * p - Real(n) * p_prev) / Real(n + 1);
    p_prev = p;
    p = next;
    if (n % 2 == 1) sum += Real(a[(n + 1) / 2]) * p;
  }
  return sum;
}

// phi(u); the caller guarantees |u| <= half_width (+ rounding).
template <class Real>
SFFT_HD Real kernel_value(const KernelSpec &k, Real u) {
  if (k.kind == KernelKind::Gaussian) return exp(-u * u / Real(4 * k.b));
  Real z = u / Real(k.half_width);
  if (k.kind == KernelKind::Prolate)
    return fabs(z) <= Real(1) ? even_legendre_series(k.legendre, k.nlegendre, z) : Real(0);
  Real r = Real(1) - z * z;
  return r > Real(0) ? exp(Real(k.beta) * (sqrt(r) - Real(1))) : Real(0);
}

// First grid cell touched by a point at grid coordinate `pos`, and its `width` kernel weights.
template <class Real>
SFFT_HD long long kernel_weights(const KernelSpec &k, Real pos, Real *weights) {
  long long first = static_cast<long long>(ceil(pos - Real(k.half_width)));
  for (int i = 0; i < k.width; ++i) weights[i] = kernel_value(k, Real(first + i) - pos);
  return first;
}

// phihat(w) = integral of phi(u) exp(i w u) du (real and even), in double.
SFFT_HD double kernel_fourier(const KernelSpec &k, double w) {
  if (k.kind == KernelKind::Gaussian) return sqrt(4 * M_PI * k.b) * exp(-k.b * w * w);
  double sum = 0;
  for (int i = 0; i < k.nquad; ++i) sum += k.quad_weight[i] * cos(w * k.quad_node[i]);
  return 2 * sum;
}

// log phihat on |w| <= wmax as a Chebyshev series in w^2 (phihat is even, analytic and positive in the band):
// at the targets and grid cells a Clenshaw recurrence and one exp replace the quadrature's 2 width + 8 cosines
// (which cost setpts more than sorting and rescaling together). The logarithm keeps the error relative where
// phihat falls by orders of magnitude towards the band's edge. terms == 0: no fit (the Gaussian's transform is
// one exp already).
constexpr int kMaxFourierTerms = 48;
struct FourierFit {
  int terms = 0;
  double wmax2 = 0;                     // fitted range of w^2
  double coeff[kMaxFourierTerms] = {};  // of log phihat
};

// phihat(w) from the fit where it covers w, else from kernel_fourier.
SFFT_HD double fourier_at(const KernelSpec &k, const FourierFit &fit, double w) {
  const double w2 = w * w;
  if (fit.terms == 0 || w2 > fit.wmax2) return kernel_fourier(k, w);
  const double z = 2 * w2 / fit.wmax2 - 1;
  double b1 = 0, b2 = 0;
  for (int i = fit.terms - 1; i >= 1; --i) {
    const double b0 = fit.coeff[i] + 2 * z * b1 - b2;
    b2 = b1;
    b1 = b0;
  }
  return exp(fit.coeff[0] + z * b1 - b2);
}

}  // namespace sfft::nufft3
