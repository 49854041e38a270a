// SPDX-License-Identifier: Apache-2.0
// CPU backend of the sparse FFT: window folding (OpenMP over hashings), one batched FFTW plan for all
// B-point FFTs, bucket decoding (OpenMP over buckets), peeling or voting, and the top-k cutoff.
#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <vector>

#include "common/error.hpp"
#include "common/fftw_plan.hpp"
#include "common/host_buffer.hpp"
#include "common/process.hpp"
#include "sparse/plan.hpp"

namespace sfft::sparse {

namespace {

struct Coefficient {
  uint64_t freq;
  Cplx<double> value;
  unsigned votes;  // ROBUST: what this find counts for (bucket_math.hpp's find_votes)
};

// ROBUST: a voted frequency, its current estimate, and the part of it already subtracted from the buckets.
struct Candidate {
  uint64_t freq;
  Cplx<double> value;
  Cplx<double> applied;
};

bool by_freq(const Coefficient &a, const Coefficient &b) { return a.freq < b.freq; }

// FFTW threads for a batch of `points` complex values: one per kFftPointsPerThread, at least one and at most the
// plan's threads. Small batches (n = 2^16, k = 64: 24 hashings of 4096 buckets, 98k points) gain nothing from 32
// threads but their wake-ups, and FFTW_MEASURE times every threaded candidate: on a 32-core host loaded with 16
// such test processes, complex128 plans of that size took minutes (ctest timeouts, 2026-11-30, the processes
// idle in futex waits with one thread running).
constexpr std::size_t kFftPointsPerThread = std::size_t{1} << 16;
int fft_threads(std::size_t points, int threads) {
  return static_cast<int>(std::clamp<std::size_t>(points / kFftPointsPerThread, 1, static_cast<std::size_t>(threads)));
}

template <class Real>
class CpuEngine final : public Engine {
 public:
  CpuEngine(const Design &d, const Options &opts) : d_(d), threads_(opts.threads) {
    const Geometry &g = d_.geom;
    std::size_t hashings = d_.total_hashings();
    if (g.buckets > static_cast<uint64_t>(INT_MAX) || hashings > static_cast<std::size_t>(INT_MAX / 2))
      fail(SFFT_ERROR_UNSUPPORTED, "the CPU backend's FFTW plan cannot hold ", hashings, " x ", g.buckets, " buckets");
    z_.allocate(hashings * g.buckets);
    int b = static_cast<int>(g.buckets);
    fft_ = fftw::Plan<Real>::many_dft(1, &b, static_cast<int>(hashings), z_.get(), nullptr, 1, b, z_.get(), nullptr, 1,
                                      b, FFTW_FORWARD, FFTW_MEASURE, fft_threads(hashings * g.buckets, threads_));
    decoded_.resize(static_cast<std::size_t>(d_.location_loops) * g.buckets);
    found_.reserve(d_.candidate_capacity());
    // ROBUST keeps at most every bucket of every location loop per pass; EXACT at most one pass's worth.
    merged_.reserve(static_cast<std::size_t>(kRobustPasses) * d_.candidate_capacity());
    candidates_.reserve(static_cast<std::size_t>(kRobustPasses) * d_.candidate_capacity());
    scratch_re_.resize(static_cast<std::size_t>(d_.total_loops()));
    scratch_im_.resize(static_cast<std::size_t>(d_.total_loops()));
    floors_.resize(static_cast<std::size_t>(d_.total_loops()));
    loop_energy_.resize(static_cast<std::size_t>(d_.total_loops()));
    reference_energy_.resize(static_cast<std::size_t>(d_.total_loops()) * g.buckets);
    if (d_.comb_loops > 0) {
      const int w = static_cast<int>(d_.comb_width);  // <= 2^26 (filter.cpp)
      comb_z_.allocate(static_cast<std::size_t>(d_.comb_loops) * d_.comb_width);
      comb_fft_ = fftw::Plan<Real>::many_dft(
          1, &w, d_.comb_loops, comb_z_.get(), nullptr, 1, w, comb_z_.get(), nullptr, 1, w, FFTW_FORWARD, FFTW_MEASURE,
          fft_threads(static_cast<std::size_t>(d_.comb_loops) * d_.comb_width, threads_));
      comb_keys_.resize(d_.comb_width);
      approved_.resize((d_.comb_width + 31) / 32);
    }
  }

  std::size_t run(const void *x, uint64_t *freqs, void *values, std::size_t capacity) override {
    const auto *samples = static_cast<const std::complex<Real> *>(x);
    fold_hashings(d_, samples, z_.get(), threads_);
    const double unscale = transform_folds();
    if (d_.comb_loops > 0) {
      gather_comb(d_, samples, comb_z_.get());
      rank_comb();
    }
    return decode(unscale, freqs, values, capacity);
  }

  // The block's partial folds and comb samples are summed over the ranks before anything reads them; from
  // there on every rank runs the same arithmetic on the same sums.
  std::size_t run_block(const void *x, const Distribution &dist, uint64_t *freqs, void *values,
                        std::size_t capacity) override {
    const auto *samples = static_cast<const std::complex<Real> *>(x);
    fold_block(d_, samples, dist.offset, dist.length, z_.get(), threads_);
    dist.reduce(z_.get(), d_.total_hashings() * d_.geom.buckets);
    check_reduced_folds(d_, samples, dist.offset, dist.length, z_.get());
    if (d_.comb_loops > 0) {
      gather_comb_block(d_, samples, dist.offset, dist.length, comb_z_.get());
      dist.reduce(comb_z_.get(), static_cast<std::size_t>(d_.comb_loops) * d_.comb_width);
      check_reduced_comb(d_, comb_z_.get());
    }
    const double unscale = transform_folds();
    if (d_.comb_loops > 0) rank_comb();
    return decode(unscale, freqs, values, capacity);
  }

  std::size_t unresolved() const override { return unresolved_; }
  const Report &report() const override { return report_; }

 private:
  // Normalises the folds (returns the factor that undoes it) and takes their B-point FFTs.
  double transform_folds() {
    const double unscale = std::ldexp(1.0, -normalise(z_.get(), d_.total_hashings() * d_.geom.buckets));
    fft_.execute_dft(z_.get(), z_.get());
    return unscale;
  }

  // Everything after the FFTs (and the comb's ranking): decoding, peeling or voting, the top k, the report.
  std::size_t decode(double unscale, uint64_t *freqs, void *values, std::size_t capacity) {
    compute_floors();
    // The report reads the reference hashings of loops [first, last): EXACT's last loop, every ROBUST loop.
    int first = 0, last = d_.total_loops();
    if (d_.variant == Variant::Exact) {
      found_.clear();
      unresolved_ = 0;
      noise_limit2_ = 0;
      std::size_t loop_finds = 0;  // found_ index of the last loop's first find
      for (int l = 0; l < d_.location_loops; ++l) {
        for (const Coefficient &c : found_) subtract(c.freq, c.value, l);
        loop_finds = found_.size();
        first = l;
        decode_loops(l, l + 1);
        if (loop_settled(l)) break;
      }
      last = first + 1;
      // The last loop's own finds leave its reference too: it then holds x less every coefficient found.
      for (std::size_t i = loop_finds; i < found_.size(); ++i)
        subtract_reference(found_[i].freq, found_[i].value, first);
      merge_duplicates();
    } else {
      robust_passes();
    }
    std::size_t count = select_largest();
    fill_report(first, last, count, unscale);
    if (count <= capacity) {
      auto *out = static_cast<std::complex<Real> *>(values);
      for (std::size_t i = 0; i < count; ++i) {
        freqs[i] = merged_[i].freq;
        out[i] = {static_cast<Real>(merged_[i].value.re * unscale), static_cast<Real>(merged_[i].value.im * unscale)};
      }
    }
    return count;
  }

  Cplx<double> bucket(std::size_t hashing, uint64_t b) const {
    const std::complex<Real> &v = z_[hashing * d_.geom.buckets + b];
    return {static_cast<double>(v.real()), static_cast<double>(v.imag())};
  }

  // Comb pre-pass on the gathered samples: approved_ = the residues of the comb_keep largest bins of each
  // comb loop.
  void rank_comb() {
    normalise(comb_z_.get(), static_cast<std::size_t>(d_.comb_loops) * d_.comb_width);  // the ranking needs no unscale
    comb_fft_.execute_dft(comb_z_.get(), comb_z_.get());
    std::fill(approved_.begin(), approved_.end(), 0u);
    const uint64_t width = d_.comb_width;
    const auto keep = static_cast<std::ptrdiff_t>(d_.comb_keep);
    for (int c = 0; c < d_.comb_loops; ++c) {
      const std::complex<Real> *zc = comb_z_.get() + static_cast<std::size_t>(c) * width;
      for (uint64_t r = 0; r < width; ++r) {
        double mag2 = std::norm(std::complex<double>(zc[r]));
        if (!std::isfinite(mag2))
          fail(SFFT_ERROR_INVALID_ARGUMENT, "x is too large: the comb's sums overflow ",
               sizeof(Real) == 4 ? "float" : "double");
        comb_keys_[r] = comb_key(mag2, r);
      }
      std::nth_element(comb_keys_.begin(), comb_keys_.begin() + (keep - 1), comb_keys_.end(),
                       [](uint64_t a, uint64_t b) { return a > b; });
      for (std::ptrdiff_t i = 0; i < keep; ++i) {
        uint64_t r = 0xffffffffu - (comb_keys_[static_cast<std::size_t>(i)] & 0xffffffffu);
        approved_[r >> 5] |= 1u << (r & 31);
      }
    }
  }

  int hashings_in_loop(int l) const { return l < d_.location_loops ? d_.geom.hashings_per_loop : 1; }

  void compute_floors() {
    for (int l = 0; l < d_.total_loops(); ++l) {
      double energy = 0;
      std::size_t h0 = d_.first_hashing(l);
      for (uint64_t b = 0; b < d_.geom.buckets; ++b) energy += cabs2(bucket(h0, b));
      loop_energy_[static_cast<std::size_t>(l)] = energy;
      floors_[static_cast<std::size_t>(l)] =
          d_.floor_relative * std::sqrt(energy / static_cast<double>(d_.geom.buckets));
    }
  }

  // The noise energy per bucket of the reference hashings of loops [first, last) as they are now.
  double measure_noise(int first, int last) {
    std::size_t count = 0;
    for (int l = first; l < last; ++l) {
      const std::size_t h0 = d_.first_hashing(l);
      for (uint64_t b = 0; b < d_.geom.buckets; ++b) reference_energy_[count++] = cabs2(bucket(h0, b));
    }
    return noise_energy(reference_energy_.data(), count);
  }

  // The report, from the reference hashings of loops [first, last), from which every coefficient found is
  // subtracted by now: their energy left, the noise floor in it, its outliers; and the coefficients found but
  // not returned (merged_ past `count`, select_largest), whose energy the answer leaves unexplained.
  void fill_report(int first, int last, std::size_t count, double unscale) {
    const double nu = measure_noise(first, last);
    double signal = 0, residual = 0;
    for (int l = first; l < last; ++l) signal += loop_energy_[static_cast<std::size_t>(l)];
    const unsigned limit_digit = noise_digit(outlier_limit2(d_.accuracy, nu, signal / (last - first)));
    uint64_t outliers = 0;
    for (int l = first; l < last; ++l) {
      const std::size_t h0 = d_.first_hashing(l);
      for (uint64_t b = 0; b < d_.geom.buckets; ++b) {
        const double e = cabs2(bucket(h0, b));
        residual += e;
        outliers += noise_digit(e) > limit_digit;
      }
    }
    double dropped = 0;
    uint64_t dropped_outliers = 0;
    for (std::size_t i = count; i < merged_.size(); ++i) {
      const double e = cabs2(merged_[i].value);
      dropped += e;
      dropped_outliers += noise_digit(e) > limit_digit;
    }
    const double unscale2 = unscale * unscale;
    report_ = Report{};
    report_.variant = d_.variant;
    report_.count = count;
    double kept = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const double e = cabs2(merged_[i].value);
      kept += e;
      report_.significant += e > kSignificant * nu;
    }
    finish_report(report_, d_, signal * unscale2, residual * unscale2, outliers, last - first, nu * unscale2,
                  kept * unscale2, dropped * unscale2, dropped_outliers);
    if (d_.variant == Variant::Exact) {
      report_.unexplained = unresolved_ > 0;
      report_.unexplained_buckets = unresolved_;
    }
  }

  // Removes coefficient (freq, value) from the reference hashing of loop l only.
  void subtract_reference(uint64_t freq, Cplx<double> value, int l) {
    std::complex<Real> *z = z_.get() + d_.first_hashing(l) * d_.geom.buckets;
    for_each_contribution(freq, value, d_.loops[static_cast<std::size_t>(l)], 1, d_.geom,
                          [&](int, uint64_t b, Cplx<double> c) {
                            z[b] -= std::complex<Real>(static_cast<Real>(c.re), static_cast<Real>(c.im));
                          });
  }

  // Removes coefficient (freq, value) from every hashing of loop l.
  void subtract(uint64_t freq, Cplx<double> value, int l) {
    std::complex<Real> *z = z_.get() + d_.first_hashing(l) * d_.geom.buckets;
    const std::size_t buckets = d_.geom.buckets;
    for_each_contribution(freq, value, d_.loops[static_cast<std::size_t>(l)], hashings_in_loop(l), d_.geom,
                          [&](int j, uint64_t b, Cplx<double> c) {
                            z[static_cast<std::size_t>(j) * buckets + b] -=
                                std::complex<Real>(static_cast<Real>(c.re), static_cast<Real>(c.im));
                          });
  }

  // Decodes every bucket of location loops [first, last) and appends what they hold to found_.
  void decode_loops(int first, int last) {
    const Geometry &g = d_.geom;
    const long buckets = static_cast<long>(g.buckets);
    const bool comb = d_.comb_loops > 0;
    const uint64_t comb_mask = d_.comb_width - 1;
    for (int l = first; l < last; ++l) {
      const LoopParams lp = d_.loops[static_cast<std::size_t>(l)];
      const std::size_t h0 = d_.first_hashing(l);
      const double floor = floors_[static_cast<std::size_t>(l)];
      Decoded *slots = decoded_.data() + static_cast<std::size_t>(l) * g.buckets;
#pragma omp parallel for num_threads(usable_threads(threads_)) schedule(static) if (buckets >= 8192)
      for (long b = 0; b < buckets; ++b) {
        auto load = [&](int j) { return bucket(h0 + static_cast<std::size_t>(j), static_cast<uint64_t>(b)); };
        slots[b] = decode_bucket(static_cast<uint64_t>(b), load, lp, floor, g, noise_limit2_);
        if (comb && slots[b].found && !comb_approved(approved_.data(), slots[b].freq & comb_mask))
          slots[b].found = false;  // its residue is not approved by the comb: no vote
      }
      for (long b = 0; b < buckets; ++b)
        if (slots[b].found)
          found_.push_back(
              {slots[b].freq, slots[b].value, find_votes(cabs2(bucket(h0, static_cast<uint64_t>(b))), nu_)});
      if (d_.variant == Variant::Exact && l == d_.location_loops - 1) {
        double rms = floors_[static_cast<std::size_t>(l)] / d_.floor_relative;
        unresolved_ = 0;
        for (long b = 0; b < buckets; ++b)
          unresolved_ += unexplained(bucket(h0, static_cast<uint64_t>(b)), slots[b].found, rms, g);
      }
    }
  }

  // EXACT: whether every bucket of location loop l is settled (bucket_math.hpp), so that later loops
  // would find nothing.
  bool loop_settled(int l) const {
    const Geometry &g = d_.geom;
    const double rms = floors_[static_cast<std::size_t>(l)] / d_.floor_relative;
    const std::size_t h0 = d_.first_hashing(l);
    const Decoded *slots = decoded_.data() + static_cast<std::size_t>(l) * g.buckets;
    for (uint64_t b = 0; b < g.buckets; ++b)
      if (!settled(bucket(h0, b), slots[b], rms, d_.settle_relative)) return false;
    return true;
  }

  // EXACT: found_ sorted by frequency, equal frequencies summed (later loops add corrections), into merged_.
  void merge_duplicates() {
    std::sort(found_.begin(), found_.end(), by_freq);
    merged_.clear();
    for (const Coefficient &c : found_) {
      if (!merged_.empty() && merged_.back().freq == c.freq) {
        merged_.back().value.re += c.value.re;
        merged_.back().value.im += c.value.im;
      } else {
        merged_.push_back(c);
      }
    }
  }

  // ROBUST: each pass decodes every location loop of the current residual, adds the frequencies whose finds
  // carry >= min_votes votes (soft votes: bucket_math.hpp's find_votes) as candidates, and refines all
  // candidates (re-estimate, subtract); a later pass finds what larger neighbours hid in the earlier one.
  // The noise per bucket is measured before each pass: on the input's buckets first (the occupied ones
  // raise the median a little: a looser check, a higher floor), then on the residual the pass before left.
  void robust_passes() {
    candidates_.clear();
    for (int pass = 0; pass < kRobustPasses; ++pass) {
      const double nu = measure_noise(0, d_.total_loops());
      nu_ = nu;
      noise_limit2_ = noise_robust_limit2(nu);
      std::fill(floors_.begin(), floors_.end(), noise_floor_magnitude(nu));
      found_.clear();
      decode_loops(0, d_.location_loops);
      std::sort(found_.begin(), found_.end(), by_freq);
      std::size_t known = candidates_.size();
      for (std::size_t i = 0; i < found_.size();) {
        std::size_t j = i;
        while (j < found_.size() && found_[j].freq == found_[i].freq) ++j;
        uint64_t freq = found_[i].freq;
        bool is_new = !std::binary_search(candidates_.begin(), candidates_.begin() + static_cast<long>(known),
                                          Candidate{freq, {0, 0}, {0, 0}},
                                          [](const Candidate &a, const Candidate &b) { return a.freq < b.freq; });
        unsigned votes = 0;
        for (std::size_t f = i; f < j; ++f) votes += found_[f].votes;
        if (votes >= static_cast<unsigned>(d_.min_votes) && is_new) candidates_.push_back({freq, {0, 0}, {0, 0}});
        i = j;
      }
      std::sort(candidates_.begin(), candidates_.end(),
                [](const Candidate &a, const Candidate &b) { return a.freq < b.freq; });
      for (int round = 0; round < kRefineRounds; ++round) {
        for (Candidate &c : candidates_) c.value = median_estimate(c.freq, c.applied);
        for (Candidate &c : candidates_) {
          Cplx<double> delta{c.value.re - c.applied.re, c.value.im - c.applied.im};
          for (int l = 0; l < d_.total_loops(); ++l) subtract(c.freq, delta, l);
          c.applied = c.value;
        }
      }
    }
    merged_.clear();
    for (const Candidate &c : candidates_) merged_.push_back({c.freq, c.value, 0});
  }

  // applied + the median (re and im separately) over all loops of the residual's estimate of freq.
  Cplx<double> median_estimate(uint64_t freq, Cplx<double> applied) {
    const Geometry &g = d_.geom;
    std::size_t count = static_cast<std::size_t>(d_.total_loops());
    for (std::size_t l = 0; l < count; ++l) {
      const LoopParams &lp = d_.loops[l];
      int64_t offset = 0;
      uint64_t b = home_bucket(mul_mod(lp.sigma, freq, g), g, &offset);
      Cplx<double> e =
          estimate(bucket(d_.first_hashing(static_cast<int>(l)), b), freq, lp, static_cast<double>(offset), g);
      scratch_re_[l] = e.re;
      scratch_im_[l] = e.im;
    }
    return {applied.re + median(scratch_re_.data(), count), applied.im + median(scratch_im_.data(), count)};
  }

  static double median(double *v, std::size_t count) {
    std::nth_element(v, v + count / 2, v + count);
    double upper = v[count / 2];
    if (count % 2 == 1) return upper;
    return 0.5 * (upper + *std::max_element(v, v + count / 2));
  }

  // Puts the k largest nonzero entries of merged_ first, ordered by decreasing magnitude, and returns how
  // many there are; the other nonzero ones follow (the report counts them).
  std::size_t select_largest() {
    auto larger = [](const Coefficient &a, const Coefficient &b) {
      double ma = returned_magnitude2<Real>(a.value), mb = returned_magnitude2<Real>(b.value);
      return ma > mb || (ma == mb && a.freq < b.freq);
    };
    merged_.erase(
        std::remove_if(merged_.begin(), merged_.end(), [](const Coefficient &c) { return !(cabs2(c.value) > 0); }),
        merged_.end());
    std::size_t keep = std::min<std::size_t>(merged_.size(), d_.k);
    std::partial_sort(merged_.begin(), merged_.begin() + static_cast<long>(keep), merged_.end(), larger);
    return keep;
  }

  Design d_;
  int threads_;
  HostBuffer<std::complex<Real>> z_;
  fftw::Plan<Real> fft_;
  HostVector<Decoded> decoded_;
  HostVector<Coefficient> found_, merged_;
  HostVector<Candidate> candidates_;
  std::vector<double> scratch_re_, scratch_im_, floors_;
  std::vector<double> loop_energy_;       // per loop: its reference hashing's energy before any subtraction
  std::vector<double> reference_energy_;  // |z|^2 of every reference bucket (the noise median's scratch)
  double noise_limit2_ = 0;               // ROBUST: the current pass's noise-scaled consistency bound
  double nu_ = 0;                         // ROBUST: the current pass's noise energy per bucket (0: EXACT)
  Report report_;
  // Comb pre-pass (d_.comb_loops > 0): samples, then their W-point FFTs; selection keys; approved residues.
  HostBuffer<std::complex<Real>> comb_z_;
  fftw::Plan<Real> comb_fft_;
  HostVector<uint64_t> comb_keys_;
  HostVector<uint32_t> approved_;
  std::size_t unresolved_ = 0;
};

}  // namespace

template <class Real>
std::unique_ptr<Engine> make_cpu_engine(const Design &d, const Options &opts) {
  return std::make_unique<CpuEngine<Real>>(d, opts);
}

template std::unique_ptr<Engine> make_cpu_engine<float>(const Design &, const Options &);
template std::unique_ptr<Engine> make_cpu_engine<double>(const Design &, const Options &);

}  // namespace sfft::sparse
