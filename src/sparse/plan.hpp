// SPDX-License-Identifier: Apache-2.0
// Internal interface of the sparse FFT: the plan-time design (filter, buckets, random permutations,
// hashings) and the backend engines that execute it.
//
// Algorithm. Each loop draws a sigma coprime to n and a tau and views the spectrum permuted by
// u = sigma*g mod n.
// A hashing multiplies the samples x[sigma (t + s) + tau], |t| <= T, by a flat window (a Kaiser-windowed
// sinc, a smoothed box in frequency, see filter.cpp), folds them modulo B and takes a B-point FFT: bucket b
// then holds the coefficients whose permuted frequency lies within L = n/B of b*L (plan.hpp's Geometry,
// bucket_math.hpp).
// A location loop takes 1 + S + 1 hashings: the reference (s = 0), S location stages whose phases reveal
// the offset of a lone coefficient q bits at a time, and a check shift that rejects buckets holding more
// than one coefficient.
//  - EXACT: loops run in sequence; coefficients found so far are subtracted from each new loop's buckets
//    before decoding (peeling), so later loops see fewer collisions; a loop that leaves nothing to find
//    ends the peeling. Exactly/near-exactly sparse input.
//  - ROBUST: location loops decode independently; a frequency found in >= min_votes loops becomes a
//    candidate valued by the median (re and im separately) of the estimates of every loop, estimation
//    loops included. All candidates are then subtracted and the medians re-taken on the residual
//    (kRefineRounds), and a second detection pass on the residual finds what larger neighbours hid.
//    Optional comb pre-pass (sFFT 2.0, Design::comb_*): W-point FFTs of x subsampled at stride n/W approve
//    the residues f mod W of their largest bins; location finds of other residues get no vote.
// Both end with merging duplicates and keeping the k largest by magnitude.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/backend.hpp"
#include "common/error.hpp"
#include "common/host_buffer.hpp"
#include "common/options.hpp"
#include "sfft/sfft.h"
#include "sparse/bucket_math.hpp"

namespace sfft::sparse {

enum class Variant { Exact, Robust };

// ROBUST: detection passes over the residual, and rounds of estimate refinement (re-take the medians,
// subtract all candidates) after each pass.
constexpr int kRobustPasses = 2;
constexpr int kRefineRounds = 2;

struct Design {
  Geometry geom;
  Variant variant = Variant::Robust;
  uint64_t k = 0;
  int location_loops = 0;
  int estimation_loops = 0;  // ROBUST only: loops with the reference hashing alone
  int min_votes = 1;
  double floor_relative = 0;   // a bucket counts only above floor_relative * rms(reference buckets of its loop)
  double settle_relative = 0;  // EXACT: peeling stops after a loop whose buckets are all settled to this
                               // fraction of the rms bucket (bucket_math.hpp's settled())
  // The relative accuracy the variant promises for values (EXACT 1e-9 / 1e-4, ROBUST 1e3 x the filter
  // tolerance): residual energy below its square times the signal's is not "unexplained" (the report).
  double accuracy = 0;
  // S_G = sum_t window[t]^2 / n: a reference bucket's noise energy per unit of noise energy per bin (white
  // noise of variance s per sample has E|N[f]|^2 = n s per bin and s sum_t window[t]^2 per bucket); ~1.5 L.
  double noise_gain = 0;
  int64_t half_taps = 0;      // T: the window covers t = -T..T
  HostVector<double> window;  // 2T+1 taps, window[t + T]
  int64_t far_half_taps = 0;  // the far location stages' coarser window (geom.first_far_stage > 0)
  HostVector<double> far_window;
  // Piecewise fits of the windows' responses (geom.response / geom.far_response point into them); shared,
  // so that they outlive every copy of the design that holds the geometry.
  std::shared_ptr<const HostVector<double>> response_table, far_response_table;

  // The window hashing h (in loop order) folds with, and its half length.
  bool uses_far_window(std::size_t h) const {
    int loop = loop_of(h);
    return loop < location_loops && sfft::sparse::uses_far_window(geom, static_cast<int>(h - first_hashing(loop)));
  }
  const HostVector<double> &window_of(std::size_t h) const { return uses_far_window(h) ? far_window : window; }
  int64_t half_taps_of(std::size_t h) const { return uses_far_window(h) ? far_half_taps : half_taps; }
  std::vector<LoopParams> loops;  // location loops first, then estimation loops

  // ROBUST comb pre-pass (sFFT 2.0; comb_loops = 0: off). Comb loop c reads x[(comb_offsets[c] + j n/W) mod n],
  // j < W = comb_width; bin r of their W-point FFT is (W/n) sum over f = r (mod W) of X[f] w^(f offset). A
  // location loop's find f counts only if f mod W is among the comb_keep largest bins of some comb loop.
  int comb_loops = 0;
  uint64_t comb_width = 0;
  uint64_t comb_keep = 0;
  std::vector<uint64_t> comb_offsets;
  uint64_t comb_stride() const { return geom.n / comb_width; }

  int total_loops() const { return location_loops + estimation_loops; }
  // Hashings in loop order: location loops have geom.hashings_per_loop each, estimation loops one.
  std::size_t total_hashings() const {
    return static_cast<std::size_t>(location_loops) * geom.hashings_per_loop + estimation_loops;
  }
  std::size_t first_hashing(int loop) const {
    return loop < location_loops
               ? static_cast<std::size_t>(loop) * geom.hashings_per_loop
               : static_cast<std::size_t>(location_loops) * geom.hashings_per_loop + (loop - location_loops);
  }
  int loop_of(std::size_t hashing) const {
    std::size_t location_hashings = static_cast<std::size_t>(location_loops) * geom.hashings_per_loop;
    return hashing < location_hashings ? static_cast<int>(hashing / geom.hashings_per_loop)
                                       : location_loops + static_cast<int>(hashing - location_hashings);
  }
  // Upper bound on coefficients recovered before merging (every bucket of every location loop).
  std::size_t candidate_capacity() const { return static_cast<std::size_t>(location_loops) * geom.buckets; }
};

// Builds the design for n, k and the caller's knobs (validated); draws permutations from seed.
Design make_design(uint64_t n, uint64_t k, bool double_precision, const sfft_sparse_options &knobs, uint64_t seed);

// The knobs every field of which means "the default" (zeros), with the library's struct_size.
sfft_sparse_options default_knobs();
// sfft 0.1's sfft_sparse_options ended before the comb fields: the unsized init writes only that much.
constexpr std::size_t kFirstKnobsSize = offsetof(sfft_sparse_options, comb_loops);
// Normalised knobs: defaults filled in, struct_size honoured (common/versioned_struct.hpp).
sfft_sparse_options resolve_knobs(const sfft_sparse_options *knobs);

// Comb pre-pass, both backends: gathers comb loop c's W samples into z[c*W ..] (before the W-point FFTs).
// Throws SFFT_ERROR_INVALID_ARGUMENT naming the first non-finite sample.
template <class Real>
void gather_comb(const Design &d, const std::complex<Real> *x, std::complex<Real> *z);

// Scale-safe magnitudes, both backends: exec squares bucket values (floors, decoding checks, the top-k and comb
// rankings), which in double overflows above |X| ~ 1e154 and underflows below ~1e-160. Multiplies the count
// values at z by the power of two 2^shift that brings their largest component into [0.5, 1) (as far as a
// normal factor reaches) and returns shift (0 for all zeros). A power of two is exact: the arithmetic after
// it gives the unscaled results times 2^shift, so the results are those of the unscaled input wherever
// that did not overflow or underflow.
template <class Real>
int normalise(std::complex<Real> *z, std::size_t count) {
  Real largest = 0;
  for (std::size_t i = 0; i < count; ++i) largest = std::max({largest, std::abs(z[i].real()), std::abs(z[i].imag())});
  const int shift = normalising_shift<Real>(biased_exponent(largest));
  if (shift == 0) return 0;
  const Real factor = std::ldexp(Real(1), shift);
  for (std::size_t i = 0; i < count; ++i) z[i] *= factor;
  return shift;
}

// Sample offset of hashing h: sample for tap t is x[(sigma*t + base) mod n].
uint64_t hashing_base(const Design &d, std::size_t h);

// Window-fold of every hashing: z[h*B + i] = sum_{t = i mod B} window[t] x[sigma t + base_h] (before the
// B-point FFTs). Host memory only. Throws SFFT_ERROR_INVALID_ARGUMENT naming the first non-finite sample.
template <class Real>
void fold_hashings(const Design &d, const std::complex<Real> *x, std::complex<Real> *z, int threads);

// Distributed execution (libsfft_mpi, src/mpi/): a rank holds the samples [offset, offset + length) of the
// global signal of length geom.n and folds only those (taps whose sample lies outside contribute zero, in the
// window folds and in the comb gather). reduce(values, count) replaces count complex values of the plan's
// precision, in place, by their sum over every rank, identical on every rank; it runs between folding and
// everything that reads the folds (normalisation, FFTs, decoding), so every rank decodes the same buckets.
// It must be called on every rank even when a rank's samples are not finite (the non-finite value then
// reaches every rank through the sum, and every rank fails with its own message).
// When the ranks' engines share their fold buffers (Engine::open_rank_folds), the engine sums the window folds
// on the devices instead, between two calls of barrier(), a barrier over the ranks; reduce still sums the comb
// samples.
struct Distribution {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::function<void(void *values, std::size_t count)> reduce;
  std::function<void()> barrier;
};

// The folds of a rank's block: fold_hashings over the samples [offset, offset + length) only, x pointing at
// sample offset, with no finiteness check (that waits for the reduced sums: check_reduced_folds).
template <class Real>
void fold_block(const Design &d, const std::complex<Real> *x, uint64_t offset, uint64_t length, std::complex<Real> *z,
                int threads);
// After the reduction: throws SFFT_ERROR_INVALID_ARGUMENT when a reduced fold is not finite, naming the first
// non-finite sample of this rank's block if there is one.
template <class Real>
void check_reduced_folds(const Design &d, const std::complex<Real> *x, uint64_t offset, uint64_t length,
                         const std::complex<Real> *z);
// The comb samples of a rank's block (zero where another rank owns the sample), and the check of the reduced
// samples (every sample is owned by one rank, so the sum is that sample, and every rank can name it).
template <class Real>
void gather_comb_block(const Design &d, const std::complex<Real> *x, uint64_t offset, uint64_t length,
                       std::complex<Real> *z);
template <class Real>
void check_reduced_comb(const Design &d, const std::complex<Real> *z);

// A batch for Engine::run_batch (sfft_exec_batch): signal i at x + i * x_dist (elements), its outputs at
// freqs/values + i * out_dist with capacity capacities[i]; the engine sets found[i] (written only when it fits,
// as run()) and unresolved[i] (as unresolved()).
struct BatchIo {
  std::size_t batch = 0;
  const void *x = nullptr;
  std::size_t x_dist = 0;
  uint64_t *freqs = nullptr;
  void *values = nullptr;
  std::size_t out_dist = 0;
  const uint64_t *capacities = nullptr;
  uint64_t *found = nullptr;
  std::size_t *unresolved = nullptr;
  std::size_t first_signal = 0;  // the caller's index of signal 0 (for messages)
};

// What an exec found out about its own answer (sfft_report, sfft.h), from the buckets it already holds.
// Energies in units of |X|^2.
struct Report {
  Variant variant = Variant::Exact;
  uint64_t count = 0;                // coefficients returned
  uint64_t significant = 0;          // of them, those above kSignificant x the bucket noise
  double explained = 1;              // returned energy / signal energy, in [0, 1]
  double signal_energy = 0;          // sum_f |X[f]|^2: returned energy + the residual's (finish_report)
  double noise_floor = 0;            // E|N[f]|^2 per bin
  double excess = 1;                 // residual energy per bucket / the noise per bucket (~1: only noise left)
  uint64_t unexplained_buckets = 0;  // residual reference buckets above kOutlier x the noise, per loop
  bool unexplained = false;          // energy left that neither the coefficients nor the noise explain
};

// The report's statistics over `loops` reference hashings of B buckets: `signal` their energy before any
// subtraction, `residual` after every coefficient found was subtracted, `outliers` residual buckets above
// outlier_limit2() (by digit: bucket_math.hpp's noise_digit), nu the noise energy per bucket (noise_energy());
// `kept` the sum of |v|^2 over the returned coefficients, `dropped` over those found but not returned (beyond
// k), `dropped_outliers` how many of these exceed the limit. The caller sets count and significant, and
// EXACT's unexplained.
void finish_report(Report &r, const Design &d, double signal, double residual, uint64_t outliers, int loops, double nu,
                   double kept, double dropped, uint64_t dropped_outliers);
// The report of an exec that measured no energies (the CUDA peeling kernels): count, the unresolved buckets
// of the last loop (unexplained when there are any), NaN energies.
Report unmeasured_report(Variant variant, uint64_t count, std::size_t unresolved);
// The noise energy per bucket from the residual reference buckets' energies e[0..count) (reordered): their
// median over ln 2 (the median of an exponential distribution of mean nu is nu ln 2). Robust while fewer
// than half of the buckets hold a coefficient (B >= 2k with the default bucket factors).
double noise_energy(double *e, std::size_t count);

// One backend's execution of a design. run() computes the result, writes it to freqs/values when it
// fits in `capacity` (leaving them untouched otherwise, and on failure) and returns the number of
// coefficients found (<= k).
class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::size_t run(const void *x, uint64_t *freqs, void *values, std::size_t capacity) = 0;
  // run() on a rank's block of a distributed signal (Distribution); x points at the block's first sample.
  // Engines without a block fold refuse.
  virtual std::size_t run_block(const void *x, const Distribution &dist, uint64_t *freqs, void *values,
                                std::size_t capacity) {
    (void)x, (void)dist, (void)freqs, (void)values, (void)capacity;
    fail(SFFT_ERROR_UNSUPPORTED, "this backend has no distributed (block) fold");
  }
  // Distributed execution on one node: this engine's fold buffer as a handle that another process of the node
  // can open (CUDA IPC); empty when the engine has none to share (the CPU engine).
  virtual std::vector<unsigned char> fold_handle() { return {}; }
  // Opens every rank's fold buffer (handles[r]: rank r's fold_handle(); rank `self` is this engine's). True
  // when every one opened: run_block then sums the folds on the device, adding the ranks in rank order (the
  // same bits on every rank). False leaves none open. Never throws.
  virtual bool open_rank_folds(const std::vector<std::vector<unsigned char>> &handles, int self) {
    (void)handles, (void)self;
    return false;
  }
  // Closes what open_rank_folds opened (run_block then calls dist.reduce for the folds again).
  virtual void close_rank_folds() {}
  // EXACT, after run(): buckets of the last location loop that still held more than eta * (rms bucket
  // magnitude) after peeling but did not decode as one coefficient. 0 means the recovered coefficients
  // explain the signal (to the decoder's precision); noise or an unresolved collision leaves some.
  virtual std::size_t unresolved() const = 0;
  // After run(): the report of that exec (sfft_report).
  virtual const Report &report() const = 0;
  // The whole batch in one pass, where the engine was made for it (make_cuda_engine with batch > 1 and an
  // EXACT design); false, having done nothing, otherwise: the plan then runs the signals in turn.
  virtual bool run_batch(const BatchIo &io) {
    (void)io;
    return false;
  }
};

template <class Real>
std::unique_ptr<Engine> make_cpu_engine(const Design &d, const Options &opts);
// CUDA engine (the library is built with CUDA; opts.device usable). batch > 1 (EXACT designs): its workspace
// holds that many signals for run_batch, which runs them in the same kernels.
std::unique_ptr<Engine> make_cuda_engine(const Design &d, const Options &opts, bool double_precision,
                                         std::size_t batch = 1);
// The single-signal engine of `backend` for a design (sfft_create's plans and libsfft_mpi's).
std::unique_ptr<Engine> make_engine(const Design &d, const Options &opts, Backend backend, bool double_precision);

// AUTO's first stage: the caller's knobs as EXACT, with the ROBUST-only knobs cleared (they stay with the
// ROBUST fallback).
sfft_sparse_options exact_stage_knobs(const sfft_sparse_options &knobs);

}  // namespace sfft::sparse
