// SPDX-License-Identifier: Apache-2.0
// RAII FFTW plans for both precisions behind one template, plus the global planner lock that FFTW
// needs (its planner is not re-entrant) and the one-time threads initialisation. Every plan goes through
// FFTW's guru64 interface: lengths, strides and batch distances are 64-bit, so grids of more than 2^31
// cells are addressed correctly.
#pragma once

#include <fftw3.h>

#include <complex>
#include <cstddef>
#include <mutex>
#include <type_traits>
#include <utility>

#include "common/error.hpp"
#include "common/process.hpp"

namespace sfft::fftw {

// Serialises every FFTW planner call (create/destroy) in the process; execution needs no lock. Held across
// fork() (atfork handlers), so a child never inherits it locked by a thread that does not exist there.
std::mutex &planner_mutex();
// Initialises FFTW's threads support once (both precisions). Call with planner_mutex held.
void ensure_threads_initialised();
// FFTW's process-wide planner thread count (fftw_planner_nthreads, FFTW >= 3.3.9; 1, FFTW's default, with
// an older FFTW that cannot report it). Call with planner_mutex held.
int planner_nthreads_double();
int planner_nthreads_float();

template <class Real>
struct Api;

// Index, in a position template deduction skips (so that nullptr embeddings convert).
template <class Index>
using Embed = typename std::enable_if<true, Index>::type;

template <>
struct Api<double> {
  using complex = fftw_complex;
  using plan = fftw_plan;
  static plan guru_dft(int rank, const fftw_iodim64 *dims, int batch_rank, const fftw_iodim64 *batch, complex *in,
                       complex *out, int sign, unsigned flags) {
    return fftw_plan_guru64_dft(rank, dims, batch_rank, batch, in, out, sign, flags);
  }
  static plan guru_r2c(int rank, const fftw_iodim64 *dims, int batch_rank, const fftw_iodim64 *batch, double *in,
                       complex *out, unsigned flags) {
    return fftw_plan_guru64_dft_r2c(rank, dims, batch_rank, batch, in, out, flags);
  }
  static void execute_dft(plan p, complex *in, complex *out) { fftw_execute_dft(p, in, out); }
  static void execute_r2c(plan p, double *in, complex *out) { fftw_execute_dft_r2c(p, in, out); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
  static void plan_with_nthreads(int n) { fftw_plan_with_nthreads(n); }
  static int planner_nthreads() { return planner_nthreads_double(); }
  static int alignment_of(const void *p) { return fftw_alignment_of(static_cast<double *>(const_cast<void *>(p))); }
};

template <>
struct Api<float> {
  using complex = fftwf_complex;
  using plan = fftwf_plan;
  static plan guru_dft(int rank, const fftw_iodim64 *dims, int batch_rank, const fftw_iodim64 *batch, complex *in,
                       complex *out, int sign, unsigned flags) {
    return fftwf_plan_guru64_dft(rank, dims, batch_rank, batch, in, out, sign, flags);
  }
  static plan guru_r2c(int rank, const fftw_iodim64 *dims, int batch_rank, const fftw_iodim64 *batch, float *in,
                       complex *out, unsigned flags) {
    return fftwf_plan_guru64_dft_r2c(rank, dims, batch_rank, batch, in, out, flags);
  }
  static void execute_dft(plan p, complex *in, complex *out) { fftwf_execute_dft(p, in, out); }
  static void execute_r2c(plan p, float *in, complex *out) { fftwf_execute_dft_r2c(p, in, out); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
  static void plan_with_nthreads(int n) { fftwf_plan_with_nthreads(n); }
  static int planner_nthreads() { return planner_nthreads_float(); }
  static int alignment_of(const void *p) { return fftwf_alignment_of(static_cast<float *>(const_cast<void *>(p))); }
};

// Owning FFTW plan. Created under the planner lock with FFTW's planner thread count set for it and then
// restored (the setting is process-wide and may be the host application's); executed with the new-array
// interface so one plan serves any arrays aligned like the planning ones. A multithreaded plan executed in
// a forked child (whose FFTW worker threads stayed in the parent) runs a single-threaded copy instead,
// planned at its first use there.
template <class Real>
class Plan {
 public:
  using A = Api<Real>;
  using complex = std::complex<Real>;

  Plan() = default;
  ~Plan() { reset(); }
  Plan(Plan &&o) noexcept
      : plan_(std::exchange(o.plan_, nullptr)),
        child_plan_(std::exchange(o.child_plan_, nullptr)),
        recipe_(o.recipe_) {}
  Plan &operator=(Plan &&o) noexcept {
    if (this != &o) {
      reset();
      plan_ = std::exchange(o.plan_, nullptr);
      child_plan_ = std::exchange(o.child_plan_, nullptr);
      recipe_ = o.recipe_;
    }
    return *this;
  }
  Plan(const Plan &) = delete;
  Plan &operator=(const Plan &) = delete;

  // Batched complex DFT with FFTW's advanced-interface layout (plan_many_dft: rank <= 3, n and the optional
  // embeddings row-major, element strides and batch distances), in 64-bit. in/out are planning buffers
  // (FFTW_ESTIMATE leaves them untouched; FFTW_MEASURE overwrites them). sign: FFTW_FORWARD or FFTW_BACKWARD.
  template <class Index>
  static Plan many_dft(int rank, const Index *n, std::ptrdiff_t howmany, complex *in, const Embed<Index> *inembed,
                       std::ptrdiff_t istride, std::ptrdiff_t idist, complex *out, const Embed<Index> *onembed,
                       std::ptrdiff_t ostride, std::ptrdiff_t odist, int sign, unsigned flags, int threads) {
    Recipe r{Kind::Dft, rank, {}, 1, {{howmany, idist, odist}}, sign, flags, threads};
    layout(r, n, inembed, onembed, istride, ostride, false);
    return make(r, in, out, "a complex DFT plan");
  }

  // Batched real-to-complex DFT (plan_many_dft_r2c's layout; strides in reals on input, complex on output).
  template <class Index>
  static Plan many_r2c(int rank, const Index *n, std::ptrdiff_t howmany, Real *in, const Embed<Index> *inembed,
                       std::ptrdiff_t istride, std::ptrdiff_t idist, complex *out, const Embed<Index> *onembed,
                       std::ptrdiff_t ostride, std::ptrdiff_t odist, unsigned flags, int threads) {
    Recipe r{Kind::R2c, rank, {}, 1, {{howmany, idist, odist}}, 0, flags, threads};
    layout(r, n, inembed, onembed, istride, ostride, static_cast<void *>(in) == static_cast<void *>(out));
    return make(r, in, out, "a real-to-complex plan");
  }

  // 1-D complex DFTs of n points `stride` apart, in place, over a family of lines of one to three batch
  // dimensions (counts and distances in elements): e.g. the lines of a batch of 3-D arrays along one axis that
  // cross a block of the other two.
  static Plan lines(std::ptrdiff_t n, std::ptrdiff_t stride, int batch_rank, const std::ptrdiff_t *count,
                    const std::ptrdiff_t *dist, complex *data, int sign, unsigned flags, int threads) {
    fftw_iodim64 batch[kMaxBatchRank] = {};
    for (int b = 0; b < batch_rank; ++b) batch[b] = {count[b], dist[b], dist[b]};
    return strided({n, stride, stride}, batch_rank, batch, data, data, sign, flags, threads);
  }

  // 1-D complex DFTs of line.n points over a batch of rank 1 to 3, in and out each with strides of their own
  // (FFTW's guru layout: line {n, in stride, out stride}, batch {count, in distance, out distance}).
  static Plan strided(const fftw_iodim64 &line, int batch_rank, const fftw_iodim64 *batch, complex *in, complex *out,
                      int sign, unsigned flags, int threads) {
    require(batch_rank >= 1 && batch_rank <= kMaxBatchRank, "FFTW line batch of rank ", batch_rank);
    Recipe r{Kind::Dft, 1, {line}, batch_rank, {}, sign, flags, threads};
    for (int b = 0; b < batch_rank; ++b) r.batch[b] = batch[b];
    return make(r, in, out, "a strided complex DFT plan");
  }

  void execute_dft(complex *in, complex *out) const { A::execute_dft(current(in, out), cast(in), cast(out)); }
  void execute_r2c(Real *in, complex *out) const { A::execute_r2c(current(in, out), in, cast(out)); }
  explicit operator bool() const noexcept { return plan_ != nullptr; }

  void reset() noexcept {
    if (plan_ == nullptr && child_plan_ == nullptr) return;
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (plan_ != nullptr) A::destroy(plan_);
    if (child_plan_ != nullptr) A::destroy(child_plan_);
    plan_ = child_plan_ = nullptr;
  }

 private:
  enum class Kind { Dft, R2c };
  static constexpr int kMaxBatchRank = 3;
  // Everything needed to plan the transform again (the forked child's single-threaded copy).
  struct Recipe {
    Kind kind = Kind::Dft;
    int rank = 0;
    fftw_iodim64 dims[3] = {};
    int batch_rank = 1;
    fftw_iodim64 batch[kMaxBatchRank] = {};
    int sign = 0;
    unsigned flags = 0;
    int threads = 1;
  };

  // dims from n and the embeddings as plan_many_dft(_r2c) reads them: an absent embedding is n (r2c: the
  // complex side's last length n/2 + 1, and the real side padded to 2 (n/2 + 1) in place).
  template <class Index>
  static void layout(Recipe &r, const Index *n, const Index *inembed, const Index *onembed, std::ptrdiff_t istride,
                     std::ptrdiff_t ostride, bool inplace) {
    require(r.rank >= 1 && r.rank <= 3, "FFTW plan of rank ", r.rank);
    const bool r2c = r.kind == Kind::R2c;
    std::ptrdiff_t is = istride, os = ostride;
    for (int d = r.rank - 1; d >= 0; --d) {
      const std::ptrdiff_t len = static_cast<std::ptrdiff_t>(n[d]);
      const bool last = d == r.rank - 1;
      const std::ptrdiff_t half = len / 2 + 1;
      r.dims[d] = {len, is, os};
      is *= inembed ? static_cast<std::ptrdiff_t>(inembed[d]) : (r2c && last && inplace ? 2 * half : len);
      os *= onembed ? static_cast<std::ptrdiff_t>(onembed[d]) : (r2c && last ? half : len);
    }
  }

  template <class In>
  static Plan make(const Recipe &r, In *in, complex *out, const char *what) {
    Plan p;
    p.recipe_ = r;
    p.recipe_.threads = usable_threads(r.threads);
    p.plan_ = create(p.recipe_, in, out);
    if (p.plan_ == nullptr) fail(SFFT_ERROR_INTERNAL, "FFTW could not create ", what);
    return p;
  }

  static typename A::plan create(const Recipe &r, complex *in, complex *out) {
    return with_threads(r.threads, [&] {
      return A::guru_dft(r.rank, r.dims, r.batch_rank, r.batch, cast(in), cast(out), r.sign, r.flags);
    });
  }
  static typename A::plan create(const Recipe &r, Real *in, complex *out) {
    return with_threads(r.threads,
                        [&] { return A::guru_r2c(r.rank, r.dims, r.batch_rank, r.batch, in, cast(out), r.flags); });
  }

  template <class Call>
  static typename A::plan with_threads(int threads, Call call) {
    std::lock_guard<std::mutex> lock(planner_mutex());
    ensure_threads_initialised();
    const int before = A::planner_nthreads();
    A::plan_with_nthreads(threads);
    typename A::plan p = call();
    A::plan_with_nthreads(before);
    return p;
  }

  // The plan to run now: this one, or in a forked child the single-threaded copy (planned with these
  // arrays, which are aligned like every later call's; FFTW_ESTIMATE leaves them untouched).
  template <class In>
  typename A::plan current(In *in, complex *out) const {
    if (recipe_.threads == 1 || !in_forked_child()) return plan_;
    if (child_plan_ == nullptr) {
      Recipe r = recipe_;
      r.threads = 1;
      r.flags = (r.flags & ~(FFTW_PATIENT | FFTW_EXHAUSTIVE | FFTW_WISDOM_ONLY)) | FFTW_ESTIMATE;
      child_plan_ = create(r, in, out);
      if (child_plan_ == nullptr) fail(SFFT_ERROR_INTERNAL, "FFTW could not re-plan in a forked child");
    }
    return child_plan_;
  }

  static typename A::complex *cast(complex *p) { return reinterpret_cast<typename A::complex *>(p); }
  typename A::plan plan_ = nullptr;
  mutable typename A::plan child_plan_ = nullptr;  // a forked child's single-threaded copy
  Recipe recipe_;
};

}  // namespace sfft::fftw
