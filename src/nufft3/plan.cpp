// SPDX-License-Identifier: Apache-2.0
#include "nufft3/plan.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "common/checked.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/versioned_struct.hpp"
#include "nufft3/params.hpp"

namespace sfft::nufft3 {

template <class Real>
void scan_host_coordinates(const Real *v, std::size_t n, const char *name, double &lo, double &hi) {
  // Lane-wise minima, maxima and a non-finite flag over blocks of kLanes (finite: |v| <= the largest finite
  // value, false for NaN), which the compiler turns into vector compare-selects; a scalar reduction of std::min
  // is not vectorised (it took 60 us per 1e5 floats in two passes).
  constexpr std::size_t kLanes = 16;
  const Real first = n > 0 ? v[0] : Real(0);
  Real mn[kLanes], mx[kLanes];
  unsigned bad[kLanes];
  for (std::size_t l = 0; l < kLanes; ++l) {
    mn[l] = mx[l] = first;
    bad[l] = 0;
  }
  const std::size_t blocked = n / kLanes * kLanes;
  for (std::size_t i = 0; i < blocked; i += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) {
      const Real x = v[i + l];
      bad[l] |= !(std::fabs(x) <= std::numeric_limits<Real>::max());
      mn[l] = x < mn[l] ? x : mn[l];
      mx[l] = x > mx[l] ? x : mx[l];
    }
  }
  for (std::size_t i = blocked; i < n; ++i) {
    bad[0] |= !(std::fabs(v[i]) <= std::numeric_limits<Real>::max());
    mn[0] = v[i] < mn[0] ? v[i] : mn[0];
    mx[0] = v[i] > mx[0] ? v[i] : mx[0];
  }
  for (std::size_t l = 1; l < kLanes; ++l) {
    bad[0] |= bad[l];
    mn[0] = mn[l] < mn[0] ? mn[l] : mn[0];
    mx[0] = mx[l] > mx[0] ? mx[l] : mx[0];
  }
  if (bad[0]) {
    for (std::size_t i = 0; i < n; ++i)
      require(std::isfinite(v[i]), name, "[", i, "] is ", std::isnan(v[i]) ? "NaN" : "infinite");
  }
  lo = mn[0];
  hi = mx[0];
}
template void scan_host_coordinates<float>(const float *, std::size_t, const char *, double &, double &);
template void scan_host_coordinates<double>(const double *, std::size_t, const char *, double &, double &);

Plan::Plan(int dim, const sfft_dtype &dtype, int sign, double tol, const sfft_options *opts) {
  require(dim >= 1 && dim <= 3, "dim = ", dim, " must be 1, 2 or 3");
  config_.is_double = require_complex_dtype(dtype, "dtype");
  require(sign == 1 || sign == -1, "sign = ", sign, " must be +1 or -1");
  validate_tolerance(tol, config_.is_double);
  config_.dim = dim;
  config_.sign = sign;
  config_.tol = tol;
  config_.opts = resolve_options(opts);
  if (config_.opts.backend == SFFT_BACKEND_CUDA) require_cuda_device(config_.opts);
  // Reject a kernel the tolerance cannot be met with now rather than at setpts.
  (void)make_kernel(config_.kernel, tol, config_.upsampfac, dim, config_.is_double);
}

nufft3_options default_options() {
  nufft3_options d{};
  d.struct_size = sizeof d;
  d.ntransf = 1;
  d.kernel = NUFFT3_KERNEL_ES;
  d.upsampfac = 0;
  d.maxbatchsize = 0;
  return d;
}

void Plan::set_options(const nufft3_options *opts) {
  const nufft3_options full = read_versioned(opts, offsetof(nufft3_options, ntransf) + sizeof opts->ntransf,
                                             default_options(), "opts", "nufft3_options_init");
  require(full.ntransf >= 1, "opts->ntransf = ", full.ntransf, " must be >= 1");
  require(full.maxbatchsize >= 0, "opts->maxbatchsize = ", full.maxbatchsize, " must be >= 0 (0: automatic)");
  const int kernel = enum_value(full.kernel);  // any int may arrive from C
  require(kernel == NUFFT3_KERNEL_ES || kernel == NUFFT3_KERNEL_GAUSSIAN || kernel == NUFFT3_KERNEL_PSWF,
          "opts->kernel = ", kernel, " is not a nufft3_kernel");
  static_assert(static_cast<int>(KernelKind::ExpSemicircle) == NUFFT3_KERNEL_ES &&
                    static_cast<int>(KernelKind::Gaussian) == NUFFT3_KERNEL_GAUSSIAN &&
                    static_cast<int>(KernelKind::Prolate) == NUFFT3_KERNEL_PSWF,
                "KernelKind numbers the kernels as nufft3_kernel does");
  const auto kind = static_cast<KernelKind>(kernel);
  double up = resolve_upsampfac(kind, full.upsampfac);
  (void)make_kernel(kind, config_.tol, up, config_.dim, config_.is_double);
  config_.ntransf = full.ntransf;
  config_.max_batch = full.maxbatchsize;
  config_.kernel = kind;
  config_.upsampfac = up;
  engine_.reset();
  have_points_ = false;
}

void Plan::setpts(uint64_t N, const void *x, const void *y, const void *z, uint64_t K, const void *s, const void *t,
                  const void *u) {
  Points p;
  p.N = to_size(N, "N");
  p.K = to_size(K, "K");
  const void *src[3] = {x, y, z};
  const void *tgt[3] = {s, t, u};
  static const char *src_names[3] = {"x", "y", "z"};
  static const char *tgt_names[3] = {"s", "t", "u"};
  std::size_t real_size = config_.is_double ? 8 : 4;
  for (int d = 0; d < config_.dim; ++d) {
    require(p.N == 0 || src[d] != nullptr, src_names[d], " is NULL but N = ", p.N, " and dim = ", config_.dim);
    require(p.K == 0 || tgt[d] != nullptr, tgt_names[d], " is NULL but K = ", p.K, " and dim = ", config_.dim);
    p.src[d] = p.N ? src[d] : nullptr;
    p.tgt[d] = p.K ? tgt[d] : nullptr;
  }
  (void)checked_mul(checked_mul(p.N, real_size, "N * sizeof(real)"), static_cast<std::size_t>(config_.ntransf) * 2,
                    "ntransf * N");
  (void)checked_mul(checked_mul(p.K, real_size, "K * sizeof(real)"), static_cast<std::size_t>(config_.ntransf) * 2,
                    "ntransf * K");
  Backend b =
      resolve_backend(config_.opts, {p.src[0], p.src[1], p.src[2], p.tgt[0], p.tgt[1], p.tgt[2]}, "nufft3_setpts");
  // Transactional: the new points go into a new engine, which replaces the current one only once it is
  // complete, so a failed call (a NaN coordinate, a grid too large) leaves the previous points usable. The grid
  // is sized as if the current workspace were already released; where an allocation then fails because both
  // are held at once, the current one is released and the new one tried alone.
  if (engine_ && b == backend_) {
    p.reclaimable_bytes = engine_->grid_bytes();
    p.previous = engine_.get();
  }
  auto prepare = [&] {
    std::unique_ptr<Engine> next = b == Backend::Cuda ? make_cuda_engine(config_) : make_cpu_engine(config_);
    if (p.N > 0 && p.K > 0) next->setpts(p);
    return next;
  };
  std::unique_ptr<Engine> next;
  try {
    next = prepare();
  } catch (const GridTooLarge &) {
    throw;
  } catch (const Error &e) {
    if (e.status() != SFFT_ERROR_OUT_OF_MEMORY || !engine_) throw;
    engine_.reset();
    have_points_ = false;
    p.previous = nullptr;
    next = prepare();
  }
  engine_ = std::move(next);
  backend_ = b;
  N_ = p.N;
  K_ = p.K;
  have_points_ = true;
}

void Plan::exec(const void *f, void *F) {
  require(have_points_, "the plan has no points: call nufft3_setpts first");
  if (K_ == 0) return;
  require(F != nullptr, "F is NULL but K = ", K_);
  require(N_ == 0 || f != nullptr, "f is NULL but N = ", N_);
  if (backend_ == Backend::Cpu) {
    require(pointer_kind(F) != PointerKind::Device && pointer_kind(f) != PointerKind::Device,
            "the plan runs on the CPU backend (its points were host arrays) but f or F is CUDA device memory");
  } else {
    require_arrays_on_device(config_.opts.device, {{f, "f"}, {F, "F"}});
  }
  if (N_ == 0) {
    engine_->zero_output(F, K_ * static_cast<std::size_t>(config_.ntransf));
    return;
  }
  engine_->exec(f, F);
}

}  // namespace sfft::nufft3
