// RAII FFTW plans for both precisions behind one template, plus the global planner lock that FFTW
// needs (its planner is not re-entrant) and the one-time threads initialisation.
#pragma once

#include <fftw3.h>

#include <complex>
#include <cstddef>
#include <mutex>
#include <utility>

#include "common/error.hpp"

namespace sfft::fftw {

// Serialises every FFTW planner call (create/destroy) in the process; execution needs no lock.
std::mutex &planner_mutex();
// Initialises FFTW's threads support once (both precisions). Call with planner_mutex held.
void ensure_threads_initialised();

template <class Real>
struct Api;

template <>
struct Api<double> {
  using complex = fftw_complex;
  using plan = fftw_plan;
  static plan many_dft(int rank, const int *n, int howmany, complex *in, const int *inembed, int istride, int idist,
                       complex *out, const int *onembed, int ostride, int odist, int sign, unsigned flags) {
    return fftw_plan_many_dft(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, sign,
                              flags);
  }
  static plan many_r2c(int rank, const int *n, int howmany, double *in, const int *inembed, int istride, int idist,
                       complex *out, const int *onembed, int ostride, int odist, unsigned flags) {
    return fftw_plan_many_dft_r2c(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, flags);
  }
  static void execute_dft(plan p, complex *in, complex *out) { fftw_execute_dft(p, in, out); }
  static void execute_r2c(plan p, double *in, complex *out) { fftw_execute_dft_r2c(p, in, out); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
  static void plan_with_nthreads(int n) { fftw_plan_with_nthreads(n); }
};

template <>
struct Api<float> {
  using complex = fftwf_complex;
  using plan = fftwf_plan;
  static plan many_dft(int rank, const int *n, int howmany, complex *in, const int *inembed, int istride, int idist,
                       complex *out, const int *onembed, int ostride, int odist, int sign, unsigned flags) {
    return fftwf_plan_many_dft(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, sign,
                               flags);
  }
  static plan many_r2c(int rank, const int *n, int howmany, float *in, const int *inembed, int istride, int idist,
                       complex *out, const int *onembed, int ostride, int odist, unsigned flags) {
    return fftwf_plan_many_dft_r2c(rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist,
                                   flags);
  }
  static void execute_dft(plan p, complex *in, complex *out) { fftwf_execute_dft(p, in, out); }
  static void execute_r2c(plan p, float *in, complex *out) { fftwf_execute_dft_r2c(p, in, out); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
  static void plan_with_nthreads(int n) { fftwf_plan_with_nthreads(n); }
};

// Owning FFTW plan. Created under the planner lock; executed with the new-array interface so one plan
// serves any suitably aligned buffers of the planned shape.
template <class Real>
class Plan {
 public:
  using A = Api<Real>;
  using complex = std::complex<Real>;

  Plan() = default;
  ~Plan() { reset(); }
  Plan(Plan &&o) noexcept : plan_(std::exchange(o.plan_, nullptr)) {}
  Plan &operator=(Plan &&o) noexcept {
    if (this != &o) {
      reset();
      plan_ = std::exchange(o.plan_, nullptr);
    }
    return *this;
  }
  Plan(const Plan &) = delete;
  Plan &operator=(const Plan &) = delete;

  // Batched complex DFT (FFTW's plan_many_dft). in/out are planning buffers (FFTW_ESTIMATE leaves them
  // untouched; FFTW_MEASURE overwrites them). sign: FFTW_FORWARD or FFTW_BACKWARD.
  static Plan many_dft(int rank, const int *n, int howmany, complex *in, const int *inembed, int istride, int idist,
                       complex *out, const int *onembed, int ostride, int odist, int sign, unsigned flags,
                       int threads) {
    std::lock_guard<std::mutex> lock(planner_mutex());
    ensure_threads_initialised();
    A::plan_with_nthreads(threads);
    Plan p;
    p.plan_ = A::many_dft(rank, n, howmany, cast(in), inembed, istride, idist, cast(out), onembed, ostride, odist,
                          sign, flags);
    if (p.plan_ == nullptr) fail(SFFT_ERROR_INTERNAL, "FFTW could not create a complex DFT plan");
    return p;
  }

  // Batched real-to-complex DFT (FFTW's plan_many_dft_r2c).
  static Plan many_r2c(int rank, const int *n, int howmany, Real *in, const int *inembed, int istride, int idist,
                       complex *out, const int *onembed, int ostride, int odist, unsigned flags, int threads) {
    std::lock_guard<std::mutex> lock(planner_mutex());
    ensure_threads_initialised();
    A::plan_with_nthreads(threads);
    Plan p;
    p.plan_ = A::many_r2c(rank, n, howmany, in, inembed, istride, idist, cast(out), onembed, ostride, odist, flags);
    if (p.plan_ == nullptr) fail(SFFT_ERROR_INTERNAL, "FFTW could not create a real-to-complex plan");
    return p;
  }

  void execute_dft(complex *in, complex *out) const { A::execute_dft(plan_, cast(in), cast(out)); }
  void execute_r2c(Real *in, complex *out) const { A::execute_r2c(plan_, in, cast(out)); }
  explicit operator bool() const noexcept { return plan_ != nullptr; }

  void reset() noexcept {
    if (plan_ == nullptr) return;
    std::lock_guard<std::mutex> lock(planner_mutex());
    A::destroy(plan_);
    plan_ = nullptr;
  }

 private:
  static typename A::complex *cast(complex *p) { return reinterpret_cast<typename A::complex *>(p); }
  typename A::plan plan_ = nullptr;
};

}  // namespace sfft::fftw
