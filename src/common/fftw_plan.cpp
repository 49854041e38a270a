// SPDX-License-Identifier: Apache-2.0
#include "common/fftw_plan.hpp"

#include <pthread.h>

// FFTW >= 3.3.9 reports its planner thread count; weak, so that an older FFTW still links (the address is
// then null and the count FFTW's default, 1).
extern "C" int fftw_planner_nthreads(void) __attribute__((weak));
extern "C" int fftwf_planner_nthreads(void) __attribute__((weak));

namespace sfft::fftw {

std::mutex &planner_mutex() {
  static std::mutex m;
  return m;
}

namespace {

[[maybe_unused]] const bool atfork_registered = [] {
  return pthread_atfork([] { planner_mutex().lock(); }, [] { planner_mutex().unlock(); },
                        [] { planner_mutex().unlock(); }) == 0;
}();

}  // namespace

void ensure_threads_initialised() {
  static bool done = false;  // guarded by planner_mutex
  if (done) return;
  if (fftw_init_threads() == 0 || fftwf_init_threads() == 0)
    fail(SFFT_ERROR_INTERNAL, "FFTW threads initialisation failed");
  // The host application may plan with FFTW from its own threads while sfft plans; planner_mutex cannot
  // cover those calls, FFTW's own planner lock (FFTW >= 3.3.5) does.
  fftw_make_planner_thread_safe();
  fftwf_make_planner_thread_safe();
  done = true;
}

int planner_nthreads_double() { return fftw_planner_nthreads != nullptr ? fftw_planner_nthreads() : 1; }
int planner_nthreads_float() { return fftwf_planner_nthreads != nullptr ? fftwf_planner_nthreads() : 1; }

}  // namespace sfft::fftw
