// SPDX-License-Identifier: Apache-2.0
// sfft from C++: std::complex / std::vector buffers (the same layout as the C API's interleaved complex),
// plans owned by std::unique_ptr, failures turned into exceptions carrying sfft_last_error().
#include <sfft/sfft.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(sfft_status status, const char *what) {
  if (status != SFFT_SUCCESS) throw std::runtime_error(std::string(what) + ": " + sfft_last_error());
}

// The opaque handles are pointers: unique_ptr destroys the plan on every path out of scope.
struct NufftDeleter {
  void operator()(nufft3_plan_s *plan) const { nufft3_destroy(plan); }
};
using NufftPlan = std::unique_ptr<nufft3_plan_s, NufftDeleter>;

NufftPlan make_nufft3(int dim, int sign, double tol) {
  nufft3_plan plan = nullptr;
  check(nufft3_create(&plan, dim, SFFT_COMPLEX128, sign, tol, nullptr), "nufft3_create");
  return NufftPlan(plan);
}

}  // namespace

int main() try {
  using cplx = std::complex<double>;
  const double tol = 1e-10;

  // 2-D type-3 NUFFT: F[k] = sum_i f[i] exp(-i (x[i] s[k] + y[i] t[k])).
  const std::size_t n = 300, m = 200;
  std::vector<double> x(n), y(n), s(m), t(m);
  std::vector<cplx> f(n), F(m);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = 4 * std::sin(1.3 * i), y[i] = 3 * std::cos(2.9 * i);
    f[i] = {std::cos(0.5 * i), 1.0};
  }
  for (std::size_t k = 0; k < m; ++k) s[k] = 20 * std::sin(0.7 * k), t[k] = 15 * std::cos(0.3 * k);

  NufftPlan plan = make_nufft3(2, -1, tol);
  check(nufft3_setpts(plan.get(), n, x.data(), y.data(), nullptr, m, s.data(), t.data(), nullptr), "nufft3_setpts");
  check(nufft3_exec(plan.get(), f.data(), F.data()), "nufft3_exec");

  double err2 = 0, norm2 = 0;
  for (std::size_t k = 0; k < m; ++k) {
    cplx exact = 0;
    for (std::size_t i = 0; i < n; ++i) exact += f[i] * std::exp(cplx(0, -(x[i] * s[k] + y[i] * t[k])));
    err2 += std::norm(F[k] - exact), norm2 += std::norm(exact);
  }
  const double rel = std::sqrt(err2 / norm2);

  // fftshift of the outputs viewed as a 10 x 20 array, then ifftshift back: the identity.
  const int64_t shape[2] = {10, 20};
  std::vector<cplx> shifted(m), back(m);
  check(fftshift_nd(shifted.data(), F.data(), 2, shape, 0, SFFT_COMPLEX128, nullptr), "fftshift_nd");
  check(ifftshift_nd(back.data(), shifted.data(), 2, shape, 0, SFFT_COMPLEX128, nullptr), "ifftshift_nd");
  const bool ok = rel <= 10 * tol && back == F && shifted[5 * 20 + 10] == F[0];

  std::printf(
      "C++ (sfft %s via find_package): nufft3 2-D relative l2 error %.2e (tol %.0e); "
      "fftshift/ifftshift round trip exact: %s\n",
      sfft_version_string(), rel, tol, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
} catch (const std::exception &e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
