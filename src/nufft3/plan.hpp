// SPDX-License-Identifier: Apache-2.0
// Internal interface of the type-3 NUFFT: the plan the C API drives, and the per-backend engines
// (cpu.cpp, cuda.cu) behind it.
#pragma once

#include <cstddef>
#include <memory>

#include "common/backend.hpp"
#include "common/options.hpp"
#include "nufft3/kernel.hpp"
#include "sfft/sfft.h"

namespace sfft::nufft3 {

struct Config {
  int dim = 1;
  int sign = -1;
  double tol = 1e-6;
  bool is_double = true;
  KernelKind kernel = KernelKind::ExpSemicircle;
  double upsampfac = 0;  // 0: automatic (ES, prolate)
  int ntransf = 1;
  int max_batch = 0;  // nufft3_options.maxbatchsize: 0 automatic (transforms_per_pass)
  Options opts;
};

class Engine;

// Coordinates of one setpts call: coords[d] for d < dim (the rest unused).
struct Points {
  std::size_t N = 0, K = 0;
  const void *src[3] = {};
  const void *tgt[3] = {};
  double reclaimable_bytes = 0;  // the workspace of the plan's current points, released once these replace them
  // The plan's current engine on the same backend (else null): a new engine may take over its grid and FFT
  // plan as the last step of a setpts that can no longer fail, since the plan then drops it.
  Engine *previous = nullptr;
};

// One backend's workspace and kernels for one point set: the plan makes a new engine per setpts and keeps
// the previous one until the new one's setpts has succeeded.
class Engine {
 public:
  virtual ~Engine() = default;
  virtual void setpts(const Points &p) = 0;
  // f: ntransf x N, F: ntransf x K; N > 0 and K > 0 here (the plan handles the empty cases).
  virtual void exec(const void *f, void *F) = 0;
  // Zero-fills F (ntransf x K) wherever it lives.
  virtual void zero_output(void *F, std::size_t count) = 0;
  // Bytes of the grid workspace setpts sized (0 before it).
  double grid_bytes() const { return grid_bytes_; }

 protected:
  double grid_bytes_ = 0;
};

std::unique_ptr<Engine> make_cpu_engine(const Config &c);
std::unique_ptr<Engine> make_cuda_engine(const Config &c);  // SFFT_ERROR_UNSUPPORTED without CUDA

// nufft3_options_init's values: ntransf 1, the ES kernel, automatic upsampling.
nufft3_options default_options();

class Plan {
 public:
  Plan(int dim, const sfft_dtype &dtype, int sign, double tol, const sfft_options *opts);
  void set_options(const nufft3_options *opts);
  void setpts(uint64_t N, const void *x, const void *y, const void *z, uint64_t K, const void *s, const void *t,
              const void *u);
  void exec(const void *f, void *F);

 private:
  Config config_;
  Backend backend_ = Backend::Cpu;
  std::unique_ptr<Engine> engine_;
  bool have_points_ = false;
  std::size_t N_ = 0, K_ = 0;
};

// Scans host coordinates: throws naming the first non-finite entry ("x[17] is NaN"), else min/max.
template <class Real>
void scan_host_coordinates(const Real *v, std::size_t n, const char *name, double &lo, double &hi);

}  // namespace sfft::nufft3
