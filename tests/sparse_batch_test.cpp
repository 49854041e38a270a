// SPDX-License-Identifier: Apache-2.0
// Batched sparse FFT (sfft_exec_batch): every signal of a batch against sfft_exec of the same plan on that
// signal alone and against FFTW's full transform; strides, a batch of one, mixed batches (empty, noisy and
// exactly sparse signals), the workspace growth rule, the CUDA batch's kernel variants, and bad arguments. The
// accuracy bodies run on the CPU backend and on the CUDA backend with host and with device pointers.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sfft/sfft.h"
#include "sparse_support.hpp"
#include "test_support.hpp"

namespace {

using sfft_test::Case;
using sfft_test::case_name;
using sfft_test::cd;
using sfft_test::planted;
using sfft_test::Signal;
using sfft_test::Where;

// One signal's result: frequencies in output order and their values (widened to double).
struct Coefficients {
  std::vector<uint64_t> freqs;
  std::vector<cd> values;
};

class SparseBatch : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().where != Where::Cpu) SFFT_SKIP_WITHOUT_GPU();
  }
  bool dbl() const { return GetParam().dtype == SFFT_COMPLEX128; }
  std::size_t elem() const { return dbl() ? 16 : 8; }
  double tolerance() const { return dbl() ? 1e-9 : 1e-4; }

  sfft_plan create(uint64_t n, uint64_t k, sfft_sparse_variant variant, int threads = 0, int location_loops = 0) {
    sfft_options o;
    sfft_options_init(&o);
    o.backend = GetParam().where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
    o.seed = 7;
    o.threads = threads;
    sfft_sparse_options knobs;
    sfft_sparse_options_init(&knobs);
    knobs.variant = variant;
    if (location_loops > 0) knobs.location_loops = location_loops;
    sfft_plan plan = nullptr;
    EXPECT_EQ(sfft_create_ex(&plan, n, k, GetParam().dtype, &o, &knobs), SFFT_SUCCESS) << sfft_last_error();
    return plan;
  }

  // Samples of the plan's dtype.
  void put(unsigned char *at, std::size_t i, cd v) const {
    if (dbl()) {
      reinterpret_cast<cd *>(at)[i] = v;
    } else {
      reinterpret_cast<std::complex<float> *>(at)[i] = std::complex<float>(v);
    }
  }
  cd get(const unsigned char *at, std::size_t i) const {
    return dbl() ? reinterpret_cast<const cd *>(at)[i] : cd(reinterpret_cast<const std::complex<float> *>(at)[i]);
  }

  // sfft_exec_batch over `signals` laid out x_dist apart, outputs out_dist apart with capacity k each.
  std::vector<Coefficients> run_batch(sfft_plan plan, const std::vector<std::vector<cd>> &signals, uint64_t n,
                                      uint64_t k, uint64_t x_dist, uint64_t out_dist) {
    const std::size_t batch = signals.size();
    std::vector<unsigned char> x(((batch - 1) * x_dist + n) * elem());
    for (std::size_t s = 0; s < batch; ++s)
      for (uint64_t t = 0; t < n; ++t) put(x.data(), s * x_dist + t, signals[s][t]);
    const std::size_t outputs = (batch - 1) * out_dist + k;
    std::vector<uint64_t> freqs(outputs), counts(batch, k);
    std::vector<unsigned char> values(outputs * elem());
    sfft_status status;
    if (GetParam().where == Where::CudaDevice) {
      sfft_test::DeviceMemory dx(x.size()), df(freqs.size() * 8), dv(values.size());
      dx.upload(x.data(), x.size());
      status = sfft_exec_batch(plan, batch, dx.get(), x_dist, static_cast<uint64_t *>(df.get()), dv.get(), out_dist,
                               counts.data());
      if (status == SFFT_SUCCESS) {
        df.download(freqs.data(), freqs.size() * 8);
        dv.download(values.data(), values.size());
      }
    } else {
      status = sfft_exec_batch(plan, batch, x.data(), x_dist, freqs.data(), values.data(), out_dist, counts.data());
    }
    EXPECT_EQ(status, SFFT_SUCCESS) << sfft_last_error();
    std::vector<Coefficients> r(batch);
    if (status != SFFT_SUCCESS) return r;
    for (std::size_t s = 0; s < batch; ++s) {
      EXPECT_LE(counts[s], k);
      for (uint64_t i = 0; i < counts[s]; ++i) {
        r[s].freqs.push_back(freqs[s * out_dist + i]);
        r[s].values.push_back(get(values.data(), s * out_dist + i));
      }
    }
    return r;
  }

  // sfft_exec of the same plan on one signal, its input in the memory the batch's input is in (host input is
  // folded on the CPU, device input on the GPU: the two round differently); host outputs.
  Coefficients run_single(sfft_plan plan, const std::vector<cd> &signal, uint64_t k) {
    std::vector<unsigned char> x(signal.size() * elem()), values(k * elem());
    for (std::size_t t = 0; t < signal.size(); ++t) put(x.data(), t, signal[t]);
    std::vector<uint64_t> freqs(k);
    uint64_t count = k;
    if (GetParam().where == Where::CudaDevice) {
      sfft_test::DeviceMemory dx(x.size());
      dx.upload(x.data(), x.size());
      EXPECT_EQ(sfft_exec(plan, dx.get(), freqs.data(), values.data(), &count), SFFT_SUCCESS) << sfft_last_error();
    } else {
      EXPECT_EQ(sfft_exec(plan, x.data(), freqs.data(), values.data(), &count), SFFT_SUCCESS) << sfft_last_error();
    }
    Coefficients c;
    for (uint64_t i = 0; i < count; ++i) {
      c.freqs.push_back(freqs[i]);
      c.values.push_back(get(values.data(), i));
    }
    return c;
  }

  // The batch's result for a signal is sfft_exec's (sfft.h's rule): the same frequencies, and values equal up
  // to rounding (1e-12 / 1e-5 of the largest) except where rounding flips one of the decoder's decisions,
  // which moves that value by at most the plan's accuracy (tolerance() of the largest, the bound the values
  // are held to against FFTW). Measured on the CPU backend alone: signal 1 of ContiguousBatchesAndGrowth
  // (seed 301) has one value (|X| = 11.3 at f = 6854) that moves by 1.29e-8 when the input is perturbed by
  // one ulp, the others by under 3e-14; the GPU fold rounds differently from the CPU fold, which is why the
  // batch (device input) and sfft_exec (host input) once differed there. One such value per 500 coefficients of a
  // signal (at least one) is allowed: complex64 at n = 2^20, k = 1000 with the column fold had two (H200).
  void expect_same(const Coefficients &batched, const Coefficients &single, std::size_t signal) const {
    std::map<uint64_t, cd> want;
    double largest = 0;
    for (std::size_t i = 0; i < single.freqs.size(); ++i) {
      want[single.freqs[i]] = single.values[i];
      largest = std::max(largest, std::abs(single.values[i]));
    }
    ASSERT_EQ(batched.freqs.size(), single.freqs.size()) << "signal " << signal;
    std::size_t flipped = 0;
    for (std::size_t i = 0; i < batched.freqs.size(); ++i) {
      auto it = want.find(batched.freqs[i]);
      ASSERT_NE(it, want.end()) << "signal " << signal << ": frequency " << batched.freqs[i] << " not in sfft_exec's";
      const double difference = std::abs(it->second - batched.values[i]);
      EXPECT_LE(difference, tolerance() * largest) << "signal " << signal << ", frequency " << batched.freqs[i];
      flipped += difference > (dbl() ? 1e-12 : 1e-5) * largest;
    }
    EXPECT_LE(flipped, 1 + single.freqs.size() / 500)
        << "signal " << signal << ": values beyond rounding of sfft_exec's";
  }

  // `count` signals of length n for a mixed batch: signal `zero` all zero, signal `noisy` a few tones in white
  // noise (30 dB), the others k exactly sparse tones; seeds first_seed + index.
  struct Mixed {
    std::vector<Signal> planted;
    std::vector<std::vector<cd>> x;
  };
  static Mixed mixed_batch(uint64_t n, uint64_t k, uint64_t count, uint64_t zero, uint64_t noisy, uint64_t first_seed) {
    Mixed m;
    for (uint64_t s = 0; s < count; ++s) {
      if (s == zero) {
        m.planted.push_back(Signal{std::vector<cd>(n), std::vector<cd>(n), {}});
      } else {
        const bool is_noisy = s == noisy;
        m.planted.push_back(planted(n, k, first_seed + s, is_noisy ? 4.0 : 1000.0, is_noisy ? 30.0 : INFINITY));
      }
      m.x.push_back(m.planted.back().x);
    }
    return m;
  }

  // Exactly sparse signal: every planted coefficient found, values against FFTW's transform.
  void expect_exact(const Coefficients &c, const Signal &s, std::size_t signal) const {
    std::vector<uint64_t> got = c.freqs, want = s.support;
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << "signal " << signal;
    double err2 = 0, ref2 = 0;
    for (std::size_t i = 0; i < c.freqs.size(); ++i) {
      err2 += std::norm(c.values[i] - s.truth[c.freqs[i]]);
      ref2 += std::norm(s.truth[c.freqs[i]]);
    }
    EXPECT_LE(std::sqrt(err2 / std::max(ref2, 1e-300)), tolerance()) << "signal " << signal;
  }
};

// A mixed batch for every variant, laid out with gaps between the signals and between their outputs: exactly
// sparse signals are recovered exactly (FFTW), an all-zero one gives no coefficient, a noisy one gives what
// sfft_exec gives (and, for ROBUST/AUTO, its planted coefficients), and every signal matches sfft_exec.
TEST_P(SparseBatch, MixedBatchMatchesSingleExecAndFftw) {
  const uint64_t n = 1 << 14, k = 16, x_dist = n + 5, out_dist = k + 3;
  const Mixed mixed = mixed_batch(n, k, 7, 2, 4, 100);
  const std::vector<Signal> &planted_signals = mixed.planted;
  const std::vector<std::vector<cd>> &signals = mixed.x;
  for (sfft_sparse_variant v : {SFFT_SPARSE_EXACT, SFFT_SPARSE_ROBUST, SFFT_SPARSE_AUTO}) {
    SCOPED_TRACE(v == SFFT_SPARSE_EXACT ? "EXACT" : v == SFFT_SPARSE_ROBUST ? "ROBUST" : "AUTO");
    sfft_plan plan = create(n, k, v);
    std::vector<Coefficients> batched = run_batch(plan, signals, n, k, x_dist, out_dist);
    for (std::size_t s = 0; s < signals.size(); ++s) {
      expect_same(batched[s], run_single(plan, signals[s], k), s);
      if (s == 2) {
        EXPECT_TRUE(batched[s].freqs.empty()) << "an all-zero signal has no coefficient";
      } else if (s != 4) {
        expect_exact(batched[s], planted_signals[s], s);
      } else if (v != SFFT_SPARSE_EXACT) {
        std::size_t hits = 0;
        for (uint64_t f : planted_signals[s].support)
          hits += std::find(batched[s].freqs.begin(), batched[s].freqs.end(), f) != batched[s].freqs.end();
        EXPECT_GE(hits, k - 1) << "noisy signal (30 dB, dynamic range 4): planted coefficients found";
      }
    }
    EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  }
}

// A batch of one is sfft_exec (on the CPU backend bit for bit: the plan's own engine runs it); x_dist and
// out_dist are then unused.
TEST_P(SparseBatch, BatchOfOne) {
  const uint64_t n = 1 << 12, k = 8;
  Signal s = planted(n, k, 5, 100.0, INFINITY);
  sfft_plan plan = create(n, k, SFFT_SPARSE_AUTO);
  std::vector<Coefficients> batched = run_batch(plan, {s.x}, n, k, 0, 0);
  const Coefficients single = run_single(plan, s.x, k);
  expect_same(batched[0], single, 0);
  expect_exact(batched[0], s, 0);
  if (GetParam().where == Where::Cpu) {
    EXPECT_EQ(batched[0].freqs, single.freqs);
    EXPECT_EQ(batched[0].values, single.values);
  }
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// Contiguous signals (x_dist = n) and outputs (out_dist = k), a workspace grown by a larger batch and reused
// by a smaller one, with thread counts that make the CPU backend run several workers or one.
TEST_P(SparseBatch, ContiguousBatchesAndGrowth) {
  const uint64_t n = 3 << 12, k = 8;  // not a power of two
  std::vector<Signal> planted_signals;
  std::vector<std::vector<cd>> signals;
  for (uint64_t s = 0; s < 9; ++s) {
    planted_signals.push_back(planted(n, k, 300 + s, 100.0, INFINITY));
    signals.push_back(planted_signals.back().x);
  }
  for (int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    sfft_plan plan = create(n, k, SFFT_SPARSE_EXACT, threads);
    for (std::size_t batch : {2, 9, 4}) {
      std::vector<std::vector<cd>> part(signals.begin(), signals.begin() + static_cast<long>(batch));
      std::vector<Coefficients> batched = run_batch(plan, part, n, k, n, k);
      for (std::size_t s = 0; s < batch; ++s) {
        expect_exact(batched[s], planted_signals[s], s);
        expect_same(batched[s], run_single(plan, signals[s], k), s);
      }
    }
    EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  }
}

// Signals read overlapping windows of one array (x_dist < n), as frames of a stream.
TEST_P(SparseBatch, OverlappingInputFrames) {
  const uint64_t n = 1 << 12, k = 4, frames = 5, hop = n / 4;
  std::vector<cd> stream((frames - 1) * hop + n);
  Signal tone = planted(n, k, 11, 10.0, INFINITY);
  for (std::size_t t = 0; t < stream.size(); ++t) stream[t] = tone.x[t % n];
  std::vector<std::vector<cd>> signals;
  for (uint64_t f = 0; f < frames; ++f)
    signals.emplace_back(stream.begin() + static_cast<long>(f * hop), stream.begin() + static_cast<long>(f * hop + n));
  sfft_plan plan = create(n, k, SFFT_SPARSE_AUTO);
  // run_batch lays the signals out x_dist apart: with x_dist = hop that is the stream itself.
  std::vector<Coefficients> batched = run_batch(plan, signals, n, k, hop, k);
  for (std::size_t s = 0; s < frames; ++s) expect_same(batched[s], run_single(plan, signals[s], k), s);
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// Lists of several hundred coefficients per signal: the CUDA batch ranks them in 128-thread blocks that stage
// 256 entries at a time (topk.cu), so each tile is counted over several chunks, and a signal's tiles are spread
// over blocks_for(k, 32) blocks.
TEST_P(SparseBatch, LongListsPerSignal) {
  const uint64_t n = 1 << 14, k = 700;
  std::vector<Signal> planted_signals;
  std::vector<std::vector<cd>> signals;
  for (uint64_t s = 0; s < 3; ++s) {
    planted_signals.push_back(planted(n, k, 500 + s, 1000.0, INFINITY));
    signals.push_back(planted_signals.back().x);
  }
  sfft_plan plan = create(n, k, SFFT_SPARSE_EXACT);
  std::vector<Coefficients> batched = run_batch(plan, signals, n, k, n, k);
  for (std::size_t s = 0; s < signals.size(); ++s) {
    expect_exact(batched[s], planted_signals[s], s);
    expect_same(batched[s], run_single(plan, signals[s], k), s);
    for (std::size_t i = 1; i < batched[s].values.size(); ++i)
      EXPECT_GE(std::abs(batched[s].values[i - 1]), std::abs(batched[s].values[i])) << "signal " << s << ", rank " << i;
  }
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// Sets environment variables for its lifetime (unset again after, also when a test fails).
class ScopedEnvironment {
 public:
  void set(const char *name, const char *value) {
    setenv(name, value, 1);
    names_.push_back(name);
  }
  ~ScopedEnvironment() {
    for (const char *name : names_) unsetenv(name);
  }

 private:
  std::vector<const char *> names_;
};

// The CUDA batch's kernel variants (engine.cu's A/B override, read when the batch engine is made): the peel per
// (later loop, bucket), per bucket or per signal (every loop in one launch) gives every signal sfft_exec's result
// and the planted spectrum; the stage-time report shows that the layout asked for ran.
TEST_P(SparseBatch, KernelVariantsAgree) {
  if (GetParam().where != Where::CudaDevice) GTEST_SKIP() << "the batched kernels' variants take device input";
  const uint64_t n = 1 << 15, k = 40;
  std::vector<Signal> planted_signals;
  std::vector<std::vector<cd>> signals;
  for (uint64_t s = 0; s < 5; ++s) {
    planted_signals.push_back(planted(n, k, 700 + s, 1000.0, INFINITY));
    signals.push_back(planted_signals.back().x);
  }
  // The per-bucket peel with 32, 64 and 128 buckets a block (B = 128 here: four blocks a signal, two, or one
  // decoding its listed buckets in rounds of 32).
  const std::pair<const char *, const char *> variants[] = {
      {"per-target", ""}, {"per-bucket", "32"}, {"per-bucket", "64"}, {"per-bucket", "128"}, {"per-signal", ""}};
  for (const auto &[peel, span] : variants) {
    SCOPED_TRACE(std::string("peel ") + peel + " " + span);
    ScopedEnvironment environment;
    environment.set("SFFT_SPARSE_BATCH_PEEL", peel);
    environment.set("SFFT_SPARSE_BATCH_PEEL_SPAN", span);
    environment.set("SFFT_SPARSE_STAGE_TIMES", "1");
    sfft_plan plan = create(n, k, SFFT_SPARSE_EXACT);
    testing::internal::CaptureStderr();
    std::vector<Coefficients> batched = run_batch(plan, signals, n, k, n, k);
    const std::string report = testing::internal::GetCapturedStderr();
    std::string layout = std::string("peel ") + peel;
    std::replace(layout.begin(), layout.end(), '-', ' ');
    if (*span != '\0') layout += std::string(" (") + span + " a block)";
    EXPECT_NE(report.find(layout), std::string::npos) << report;
    for (std::size_t s = 0; s < signals.size(); ++s) {
      expect_exact(batched[s], planted_signals[s], s);
      expect_same(batched[s], run_single(plan, signals[s], k), s);
    }
    EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  }
}

// SFFT_SPARSE_BATCH_PEEL=per-signal applies to designs of at most 256 buckets (peel_signal_kernel lists a
// signal's buckets a thread each); a larger design keeps the per-bucket peel and its results.
TEST_P(SparseBatch, PerSignalPeelOverrideNeedsSmallDesigns) {
  if (GetParam().where != Where::CudaDevice) GTEST_SKIP() << "the batched kernels' variants take device input";
  const uint64_t n = 1 << 16, k = 200;
  const Mixed mixed = mixed_batch(n, k, 3, 1, 3, 960);
  ScopedEnvironment environment;
  environment.set("SFFT_SPARSE_BATCH_PEEL", "per-signal");
  environment.set("SFFT_SPARSE_STAGE_TIMES", "1");
  sfft_plan plan = create(n, k, SFFT_SPARSE_EXACT);
  testing::internal::CaptureStderr();
  std::vector<Coefficients> batched = run_batch(plan, mixed.x, n, k, n, k);
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("peel per bucket"), std::string::npos) << report;
  for (std::size_t s = 0; s < mixed.x.size(); ++s) {
    expect_same(batched[s], run_single(plan, mixed.x[s], k), s);
    if (s != 1) expect_exact(batched[s], mixed.planted[s], s);
  }
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// A small design (B = 128) in a batch of at least one signal per SM and fewer than two (the per-bucket peel):
// location loops 2 onwards run in one launch of the per-signal kernel, which takes over from the per-bucket
// launches of loops 0 and 1 (the stage report names "peel2+"); every signal matches sfft_exec and the planted
// spectrum.
TEST_P(SparseBatch, PerBucketPeelHandsLaterLoopsToOneLaunch) {
  if (GetParam().where != Where::CudaDevice) GTEST_SKIP() << "the batched kernels' layouts take device input";
  const uint64_t n = 1 << 15, k = 40;
  const std::size_t batch = static_cast<std::size_t>(sfft_test::device_multiprocessors()) * 3 / 2;
  std::vector<Signal> planted_signals;
  std::vector<std::vector<cd>> signals;
  for (std::size_t s = 0; s < batch; ++s) {
    planted_signals.push_back(planted(n, k, 1300 + s, 1000.0, INFINITY));
    signals.push_back(planted_signals.back().x);
  }
  ScopedEnvironment environment;
  environment.set("SFFT_SPARSE_STAGE_TIMES", "1");
  sfft_plan plan = create(n, k, SFFT_SPARSE_EXACT);
  testing::internal::CaptureStderr();
  std::vector<Coefficients> batched = run_batch(plan, signals, n, k, n, k);
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("peel per bucket"), std::string::npos) << report;
  EXPECT_NE(report.find("peel2+"), std::string::npos) << report;
  for (std::size_t s = 0; s < batch; ++s) {
    expect_exact(batched[s], planted_signals[s], s);
    expect_same(batched[s], run_single(plan, signals[s], k), s);
  }
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// The batched fold's two kernels (the gather fold and the column fold, src/sparse/cuda/batch.cuh), each forced by
// SFFT_SPARSE_BATCH_FOLD: a power-of-two n; n = 98304 (remainders instead of masks); n = 100000 (B = 500: a partial
// slab of columns); n = 2^15 with 16 and 32 location loops, whose column folds split the jobs into groups; n = 2^20
// (a block of more than 64 KiB); signals spaced x_dist apart, one all zero, one noisy. Every signal matches
// sfft_exec and the exactly sparse ones FFTW's transform; the stage-time report shows that the fold asked for ran,
// and the column fold's job groups.
TEST_P(SparseBatch, FoldVariantsAgree) {
  if (GetParam().where != Where::CudaDevice) GTEST_SKIP() << "the batched folds take device input";
  struct Design {
    uint64_t n, k;
    int location_loops;                    // 0: the default
    int column_groups, column_groups_dbl;  // the column fold's job groups, complex64 / complex128
  };
  // 16 and 32 location loops: more jobs than a block's weights hold (two and three groups for complex64); 2^20
  // k = 1000: complex64's 512-row slab and weights in one group, a block of more than 64 KiB.
  for (const Design &design :
       {Design{1 << 15, 40, 0, 1, 1}, Design{98304, 200, 0, 1, 1}, Design{100000, 250, 0, 1, 1},
        Design{1 << 15, 40, 16, 2, 1}, Design{1 << 15, 40, 32, 3, 2}, Design{1 << 20, 1000, 0, 1, 1}}) {
    const uint64_t n = design.n, k = design.k;
    const uint64_t x_dist = n + 2;  // 16-byte aligned signals (the column fold copies 16-byte pieces)
    const Mixed mixed = mixed_batch(n, k, 6, 1, 3, 900);
    const std::vector<Signal> &planted_signals = mixed.planted;
    const std::vector<std::vector<cd>> &signals = mixed.x;
    for (const char *fold : {"gather", "column"}) {
      SCOPED_TRACE(std::string("n ") + std::to_string(n) + ", location loops " + std::to_string(design.location_loops) +
                   ", fold " + fold);
      ScopedEnvironment environment;
      environment.set("SFFT_SPARSE_BATCH_FOLD", fold);
      environment.set("SFFT_SPARSE_STAGE_TIMES", "1");
      sfft_plan plan = create(n, k, SFFT_SPARSE_EXACT, 0, design.location_loops);
      testing::internal::CaptureStderr();
      std::vector<Coefficients> batched = run_batch(plan, signals, n, k, x_dist, k);
      const std::string report = testing::internal::GetCapturedStderr();
      // Each exec's stage line names its fold: the one asked for (and the column fold's job groups).
      const std::string ran =
          std::string(", fold ") + fold +
          (std::string(fold) == "column"
               ? ", " + std::to_string(dbl() ? design.column_groups_dbl : design.column_groups) + " job groups"
               : "");
      const std::string other = std::string(", fold ") + (ran == ", fold gather" ? "column" : "gather");
      EXPECT_NE(report.find(ran), std::string::npos) << report;
      EXPECT_EQ(report.find(other), std::string::npos) << report;
      for (std::size_t s = 0; s < signals.size(); ++s) {
        expect_same(batched[s], run_single(plan, signals[s], k), s);
        if (s == 1) {
          EXPECT_TRUE(batched[s].freqs.empty()) << "an all-zero signal has no coefficient";
        } else if (s != 3) {
          expect_exact(batched[s], planted_signals[s], s);
        }
      }
      EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
    }
  }
}

// One plan, device input, execs whose destinations and batch sizes change between calls, with a single-signal
// exec and a host-input batch in between (a batch exec uploads its destinations only when they differ from the
// device-input batch exec's before it). Each exec's outputs land in its own buffers, which start zeroed, and the
// buffers of the exec before stay as that exec left them.
TEST_P(SparseBatch, RepeatedExecsFollowTheirDestinations) {
  if (GetParam().where != Where::CudaDevice) GTEST_SKIP() << "device input and device outputs";
  const uint64_t n = 1 << 14, k = 30, batch = 4, out_dist = k;
  const Mixed mixed = mixed_batch(n, k, batch, 1, batch, 990);  // signal 1 all zero, none noisy
  std::vector<unsigned char> x(batch * n * elem());
  for (std::size_t s = 0; s < batch; ++s)
    for (uint64_t t = 0; t < n; ++t) put(x.data(), s * n + t, mixed.x[s][t]);
  sfft_test::DeviceMemory dx(x.size());
  dx.upload(x.data(), x.size());
  const std::size_t outputs = batch * out_dist;
  struct Destination {
    sfft_test::DeviceMemory freqs, values;
    explicit Destination(std::size_t count, std::size_t elem) : freqs(count * 8), values(count * elem) {}
  };
  Destination a(outputs, elem()), b(outputs, elem()), single(k, elem());
  sfft_plan plan = create(n, k, SFFT_SPARSE_EXACT);
  std::vector<Coefficients> expected(batch);
  for (std::size_t s = 0; s < batch; ++s) expected[s] = run_single(plan, mixed.x[s], k);
  auto clear = [&](Destination &d) {
    d.freqs.fill_bytes(0, outputs * 8);
    d.values.fill_bytes(0, outputs * elem());
  };
  // sfft_exec_batch of the first `signals` signals (device input unless host_input) into d, checked.
  auto exec_into = [&](Destination &d, uint64_t signals, bool host_input, const char *what) {
    SCOPED_TRACE(what);
    clear(d);
    std::vector<uint64_t> counts(signals, k), freqs(outputs);
    std::vector<unsigned char> values(outputs * elem());
    const void *input = host_input ? static_cast<const void *>(x.data()) : dx.get();
    ASSERT_EQ(sfft_exec_batch(plan, signals, input, n, static_cast<uint64_t *>(d.freqs.get()), d.values.get(), out_dist,
                              counts.data()),
              SFFT_SUCCESS)
        << sfft_last_error();
    d.freqs.download(freqs.data(), outputs * 8);
    d.values.download(values.data(), outputs * elem());
    for (std::size_t s = 0; s < batch; ++s) {
      Coefficients got;
      const uint64_t count = s < signals ? counts[s] : 0;
      for (uint64_t i = 0; i < count; ++i) {
        got.freqs.push_back(freqs[s * out_dist + i]);
        got.values.push_back(get(values.data(), s * out_dist + i));
      }
      if (s < signals) {
        expect_same(got, expected[s], s);
      } else {
        for (uint64_t i = 0; i < out_dist; ++i)
          EXPECT_EQ(freqs[s * out_dist + i], 0u) << "signal " << s << " was not in this batch";
      }
    }
  };
  auto expect_zero = [&](const Destination &d, const char *what) {
    std::vector<uint64_t> freqs(outputs);
    d.freqs.download(freqs.data(), outputs * 8);
    EXPECT_EQ(std::count(freqs.begin(), freqs.end(), 0u), static_cast<std::ptrdiff_t>(outputs)) << what;
  };
  exec_into(a, batch, false, "into a");
  exec_into(b, batch, false, "into b");
  exec_into(a, batch, false, "into a again");
  clear(b);
  exec_into(a, 2, false, "two signals into a");
  expect_zero(b, "b after the execs into a");
  exec_into(a, batch, false, "four signals into a");
  {
    std::vector<unsigned char> one(n * elem());
    for (uint64_t t = 0; t < n; ++t) put(one.data(), t, mixed.x[0][t]);
    sfft_test::DeviceMemory d_one(one.size());
    d_one.upload(one.data(), one.size());
    uint64_t count = k;
    ASSERT_EQ(sfft_exec(plan, d_one.get(), static_cast<uint64_t *>(single.freqs.get()), single.values.get(), &count),
              SFFT_SUCCESS)
        << sfft_last_error();
    EXPECT_EQ(count, expected[0].freqs.size());
  }
  exec_into(a, batch, false, "into a after a single exec");
  exec_into(a, batch, true, "host input into a");
  exec_into(a, batch, false, "device input into a after host input");
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// Where the bucket count B is a power of two up to 2048 (complex64) or 512 (complex128), the normalisation's launch
// transforms the rows too (the stage report's "normalise+fft"); elsewhere a cuFFT plan does after it ("normalise",
// then "fft"). B = 128 fuses in both precisions, B = 1024 in complex64 only, B = 500 in neither; every signal
// matches sfft_exec and the exactly sparse ones FFTW's transform.
TEST_P(SparseBatch, BucketFftsRunInTheNormalisationWherePowersOfTwoFit) {
  if (GetParam().where != Where::CudaDevice)
    GTEST_SKIP() << "the stage report names the normalisation for device input";
  struct Design {
    uint64_t n, k;
    bool fused_c64, fused_c128;
  };
  for (const Design &design :
       {Design{1 << 15, 40, true, true}, Design{1 << 20, 400, true, false}, Design{100000, 250, false, false}}) {
    SCOPED_TRACE("n " + std::to_string(design.n) + ", k " + std::to_string(design.k));
    const Mixed mixed = mixed_batch(design.n, design.k, 3, 1, 3, 1500);
    ScopedEnvironment environment;
    environment.set("SFFT_SPARSE_STAGE_TIMES", "1");
    sfft_plan plan = create(design.n, design.k, SFFT_SPARSE_EXACT);
    testing::internal::CaptureStderr();
    std::vector<Coefficients> batched = run_batch(plan, mixed.x, design.n, design.k, design.n, design.k);
    const std::string report = testing::internal::GetCapturedStderr();
    const bool fused = dbl() ? design.fused_c128 : design.fused_c64;
    EXPECT_EQ(report.find(" normalise+fft ") != std::string::npos, fused) << report;
    EXPECT_EQ(report.find(" normalise ") != std::string::npos, !fused) << report;
    EXPECT_EQ(report.find(" fft ") != std::string::npos, !fused) << report;
    for (std::size_t s = 0; s < mixed.x.size(); ++s) {
      expect_same(batched[s], run_single(plan, mixed.x[s], design.k), s);
      if (s != 1 && s != 3) expect_exact(batched[s], mixed.planted[s], s);
    }
    EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  }
}

// Column-fold plans of different designs (FoldVariantsAgree's) alive at once, made in increasing and in
// decreasing order, each run after all are made: the fold kernel's shared-memory limit is the function's,
// process-wide, and each plan used to set it to its own size when made, so a plan made later with a smaller
// stage made the earlier plan's launch fail ("invalid argument"). The stage-time report shows the column fold ran.
TEST_P(SparseBatch, ColumnFoldPlansOfDifferentDesigns) {
  if (GetParam().where != Where::CudaDevice) GTEST_SKIP() << "the column fold takes device input";
  ScopedEnvironment environment;
  environment.set("SFFT_SPARSE_BATCH_FOLD", "column");
  environment.set("SFFT_SPARSE_STAGE_TIMES", "1");
  const std::vector<std::pair<uint64_t, uint64_t>> designs = {{1 << 15, 40}, {98304, 200}, {100000, 250}};
  for (bool increasing : {true, false}) {
    SCOPED_TRACE(increasing ? "made in increasing order" : "made in decreasing order");
    std::vector<std::pair<uint64_t, uint64_t>> order = designs;
    if (!increasing) std::reverse(order.begin(), order.end());
    std::vector<sfft_plan> plans;
    for (auto [n, k] : order) plans.push_back(create(n, k, SFFT_SPARSE_EXACT));
    for (std::size_t p = 0; p < plans.size(); ++p) {
      const auto [n, k] = order[p];
      SCOPED_TRACE("n " + std::to_string(n));
      const Mixed mixed = mixed_batch(n, k, 3, 1, 3, 950 + static_cast<int>(p));
      testing::internal::CaptureStderr();
      std::vector<Coefficients> batched = run_batch(plans[p], mixed.x, n, k, n + 2, k);
      const std::string report = testing::internal::GetCapturedStderr();
      EXPECT_NE(report.find(", fold column"), std::string::npos) << report;
      for (std::size_t s = 0; s < mixed.x.size(); ++s) {
        expect_same(batched[s], run_single(plans[p], mixed.x[s], k), s);
        if (s != 1 && s != 3) expect_exact(batched[s], mixed.planted[s], s);
      }
    }
    for (sfft_plan plan : plans) EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (Where w : {Where::Cpu, Where::CudaHost, Where::CudaDevice})
    for (sfft_dtype d : {SFFT_COMPLEX128, SFFT_COMPLEX64}) v.push_back({w, d});
  return v;
}

INSTANTIATE_TEST_SUITE_P(sparse_batch, SparseBatch, testing::ValuesIn(all_cases()), case_name);

// counts must be host memory (the library reads the capacities before anything runs).
TEST(sparse_batch_cuda, DeviceCountsRejected) {
  SFFT_SKIP_WITHOUT_GPU();
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CUDA;
  sfft_plan plan = nullptr;
  ASSERT_EQ(sfft_create(&plan, 1024, 4, SFFT_COMPLEX64, &o), SFFT_SUCCESS) << sfft_last_error();
  std::vector<std::complex<float>> x(2 * 1024, {1, 0});
  std::vector<uint64_t> freqs(8);
  std::vector<std::complex<float>> values(8);
  sfft_test::DeviceMemory counts(2 * sizeof(uint64_t));
  EXPECT_EQ(
      sfft_exec_batch(plan, 2, x.data(), 1024, freqs.data(), values.data(), 4, static_cast<uint64_t *>(counts.get())),
      SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("counts is CUDA device memory"), std::string::npos)
      << sfft_last_error();
  EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS);
}

// ---------------------------------------------------------------- bad arguments (CPU backend)

bool mentions(const char *what) { return std::string(sfft_last_error()).find(what) != std::string::npos; }

class SparseBatchArguments : public testing::Test {
 protected:
  static constexpr uint64_t n = 1 << 12, k = 8, batch = 6;
  void SetUp() override {
    sfft_options o;
    sfft_options_init(&o);
    o.backend = SFFT_BACKEND_CPU;
    ASSERT_EQ(sfft_create(&plan, n, k, SFFT_COMPLEX128, &o), SFFT_SUCCESS) << sfft_last_error();
    x.resize(batch * n);
    for (uint64_t s = 0; s < batch; ++s) {
      Signal sig = planted(n, k, 40 + s, 100.0, INFINITY);
      std::copy(sig.x.begin(), sig.x.end(), x.begin() + static_cast<long>(s * n));
    }
    freqs.assign(batch * k, kSentinel);
    values.assign(batch * k, cd(-1, -1));
    counts.assign(batch, k);
  }
  void TearDown() override { EXPECT_EQ(sfft_destroy(plan), SFFT_SUCCESS); }
  sfft_status exec(uint64_t b, uint64_t out_dist = k) {
    return sfft_exec_batch(plan, b, x.data(), n, freqs.data(), values.data(), out_dist, counts.data());
  }
  static constexpr uint64_t kSentinel = ~uint64_t{0};
  sfft_plan plan = nullptr;
  std::vector<cd> x, values;
  std::vector<uint64_t> freqs, counts;
};

TEST_F(SparseBatchArguments, ZeroBatchAndNullPointers) {
  EXPECT_EQ(exec(0), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions("batch = 0")) << sfft_last_error();
  EXPECT_EQ(sfft_exec_batch(plan, batch, nullptr, n, freqs.data(), values.data(), k, counts.data()),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions("x is NULL")) << sfft_last_error();
  EXPECT_EQ(sfft_exec_batch(plan, batch, x.data(), n, freqs.data(), values.data(), k, nullptr),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions("counts")) << sfft_last_error();
  EXPECT_EQ(sfft_exec_batch(plan, batch, x.data(), n, nullptr, values.data(), k, counts.data()),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions("freqs is NULL but the capacity counts[0] = 8")) << sfft_last_error();
  EXPECT_EQ(sfft_exec_batch(nullptr, batch, x.data(), n, freqs.data(), values.data(), k, counts.data()),
            SFFT_ERROR_INVALID_ARGUMENT);
  // All capacities 0: NULL outputs are fine, and counts receive the numbers found.
  std::fill(counts.begin(), counts.end(), 0);
  EXPECT_EQ(sfft_exec_batch(plan, batch, x.data(), n, nullptr, nullptr, 0, counts.data()), SFFT_ERROR_INVALID_ARGUMENT);
  for (uint64_t c : counts) EXPECT_EQ(c, k);
  EXPECT_TRUE(mentions("signal 0: capacity counts[0] = 0 is smaller than the 8 coefficients found"))
      << sfft_last_error();
}

TEST_F(SparseBatchArguments, OverlappingOutputs) {
  counts[3] = k + 1;  // signal 3's capacity reaches into signal 4's outputs
  EXPECT_EQ(exec(batch), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions("counts[3] = 9 exceeds out_dist = 8: signal 3's outputs would overlap signal 4's"))
      << sfft_last_error();
  counts[3] = k;
  // values inside freqs' extent.
  EXPECT_EQ(sfft_exec_batch(plan, batch, x.data(), n, freqs.data(), freqs.data() + 4, k, counts.data()),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions("freqs and values overlap")) << sfft_last_error();
  for (uint64_t f : freqs) EXPECT_EQ(f, kSentinel) << "nothing written on failure";
  EXPECT_EQ(exec(batch), SFFT_SUCCESS) << sfft_last_error();
}

TEST_F(SparseBatchArguments, CapacityTooSmallForOneSignal) {
  counts[3] = 5;
  EXPECT_EQ(exec(batch), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions("signal 3: capacity counts[3] = 5 is smaller than the 8 coefficients found"))
      << sfft_last_error();
  for (uint64_t s = 0; s < batch; ++s) {
    EXPECT_EQ(counts[s], k) << "counts[] holds the numbers found";
    for (uint64_t i = 0; i < k; ++i) {
      if (s == 3) {
        EXPECT_EQ(freqs[s * k + i], kSentinel) << "the short signal's outputs are untouched";
      } else {
        EXPECT_LT(freqs[s * k + i], n) << "the other signals were written";
      }
    }
  }
}

TEST_F(SparseBatchArguments, NonFiniteSampleNamesTheSignal) {
  const std::vector<uint64_t> before = counts;
  // The plan reads only the windowed samples: NaN everywhere in signal 4, so that some are read.
  std::fill(x.begin() + 4 * n, x.begin() + 5 * n, cd(NAN, 0));
  EXPECT_EQ(exec(batch), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions("signal 4: ")) << sfft_last_error();
  EXPECT_TRUE(mentions("not finite")) << sfft_last_error();
  EXPECT_EQ(counts, before) << "counts unchanged on failure";
  std::fill(x.begin() + 4 * n, x.begin() + 5 * n, cd(0, 0));
  EXPECT_EQ(exec(batch), SFFT_SUCCESS) << sfft_last_error();
  EXPECT_EQ(counts[4], 0u);
}

TEST_F(SparseBatchArguments, ExtentsThatDoNotFitAreRejected) {
  EXPECT_EQ(sfft_exec_batch(plan, 2, x.data(), ~uint64_t{0} / 2, freqs.data(), values.data(), k, counts.data()),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(mentions("the extent of x ((batch - 1) * x_dist + n samples) in bytes overflows")) << sfft_last_error();
}

}  // namespace
