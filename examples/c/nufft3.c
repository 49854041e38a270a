/* SPDX-License-Identifier: Apache-2.0 */
/* Type-3 NUFFT: F[k] = sum_i f[i] exp(+i x[i] s[k]) from irregular points x to irregular frequencies s, to a
   relative tolerance, checked here against the direct O(N K) sum. Build: see Makefile. */
#include <sfft/sfft.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>

enum { NSRC = 500, NTRG = 300 };

int main(void) {
  static double x[NSRC], s[NTRG];
  static double complex f[NSRC], F[NTRG];
  for (int i = 0; i < NSRC; ++i) {
    x[i] = 10.0 * sin(1.3 * i); /* any finite reals: nothing is periodic */
    f[i] = cos(0.7 * i) + I * sin(0.2 * i);
  }
  for (int k = 0; k < NTRG; ++k) s[k] = 25.0 * cos(0.9 * k);

  const double tol = 1e-9;
  nufft3_plan plan;
  /* 1-D, double precision, sign +1; the plan is reused for any number of setpts/exec calls. */
  if (nufft3_create(&plan, 1, SFFT_COMPLEX128, +1, tol, NULL) != SFFT_SUCCESS ||
      nufft3_setpts(plan, NSRC, x, NULL, NULL, NTRG, s, NULL, NULL) != SFFT_SUCCESS ||
      nufft3_exec(plan, f, F) != SFFT_SUCCESS) {
    fprintf(stderr, "nufft3: %s\n", sfft_last_error());
    return 1;
  }
  nufft3_destroy(plan);

  double err2 = 0, norm2 = 0;
  for (int k = 0; k < NTRG; ++k) {
    double complex exact = 0;
    for (int i = 0; i < NSRC; ++i) exact += f[i] * cexp(I * x[i] * s[k]);
    err2 += pow(cabs(F[k] - exact), 2);
    norm2 += pow(cabs(exact), 2);
  }
  const double rel = sqrt(err2 / norm2);
  const int ok = rel <= 10 * tol;
  printf("nufft3: 1-D, %d sources, %d targets, tol %.0e: relative l2 error vs direct sum %.2e: %s\n", NSRC, NTRG, tol,
         rel, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
