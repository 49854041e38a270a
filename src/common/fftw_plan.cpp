#include "common/fftw_plan.hpp"

namespace sfft::fftw {

std::mutex &planner_mutex() {
  static std::mutex m;
  return m;
}

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

}  // namespace sfft::fftw
