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
  done = true;
}

}  // namespace sfft::fftw
