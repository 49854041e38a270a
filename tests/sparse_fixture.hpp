// SPDX-License-Identifier: Apache-2.0
// The sparse FFT tests' fixture: the backends and precisions every accuracy test runs on (CPU, CUDA with host
// and with device pointers), a runner that calls sfft_exec where the case says, scoring against the planted
// spectrum, and the SparseFft parameterised fixture. Included once by each sparse test program, so it keeps
// its definitions in an unnamed namespace like the programs themselves.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sfft/sfft.h"
#include "sparse_support.hpp"
#include "test_support.hpp"

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {


using sfft_test::Case;
using sfft_test::case_name;
using sfft_test::planted;
using sfft_test::Signal;
using sfft_test::Where;
using cd = std::complex<double>;

struct Result {
  sfft_status status;
  std::vector<uint64_t> freqs;
  std::vector<cd> values;
};

// Runs create + exec + destroy for one signal on the case's backend and pointer kind.
class Runner {
 public:
  Runner(const Case &c, uint64_t n, uint64_t k, uint64_t seed, const sfft_sparse_options *knobs) : c_(c), n_(n), k_(k) {
    sfft_options opts;
    sfft_options_init(&opts);
    opts.backend = c.where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
    opts.seed = seed;
    status_ = sfft_create_ex(&plan_, n, k, c.dtype, &opts, knobs);
    EXPECT_EQ(status_, SFFT_SUCCESS) << sfft_last_error();
  }
  ~Runner() { EXPECT_EQ(sfft_destroy(plan_), SFFT_SUCCESS); }
  Runner(const Runner &) = delete;
  Runner &operator=(const Runner &) = delete;

  Result run(const std::vector<cd> &x) const {
    Result r;
    if (status_ != SFFT_SUCCESS) {
      r.status = status_;
      return r;
    }
    bool dbl = c_.dtype == SFFT_COMPLEX128;
    std::size_t elem = dbl ? 16 : 8;
    std::vector<unsigned char> xin(n_ * elem), vals(k_ * elem);
    for (uint64_t i = 0; i < n_; ++i) {
      if (dbl) {
        reinterpret_cast<cd *>(xin.data())[i] = x[i];
      } else {
        reinterpret_cast<std::complex<float> *>(xin.data())[i] = std::complex<float>(x[i]);
      }
    }
    std::vector<uint64_t> freqs(k_);
    uint64_t count = k_;
    if (c_.where == Where::CudaDevice) {
      sfft_test::DeviceMemory dx(xin.size()), df(k_ * 8), dv(vals.size());
      dx.upload(xin.data(), xin.size());
      r.status = sfft_exec(plan_, dx.get(), static_cast<uint64_t *>(df.get()), dv.get(), &count);
      if (r.status == SFFT_SUCCESS) {
        df.download(freqs.data(), count * 8);
        dv.download(vals.data(), count * elem);
      }
    } else {
      r.status = sfft_exec(plan_, xin.data(), freqs.data(), vals.data(), &count);
    }
    if (r.status != SFFT_SUCCESS) return r;
    EXPECT_LE(count, k_);
    for (uint64_t i = 0; i < count; ++i) {
      r.freqs.push_back(freqs[i]);
      r.values.push_back(dbl ? reinterpret_cast<cd *>(vals.data())[i]
                             : cd(reinterpret_cast<std::complex<float> *>(vals.data())[i]));
    }
    return r;
  }

 private:
  Case c_;
  uint64_t n_, k_;
  sfft_plan plan_ = nullptr;
  sfft_status status_;
};

struct Score {
  double recovery;     // fraction of the planted support present in the output
  double l1_per_coef;  // (1/k) sum over planted f of |X[f] - y_f| (y_f = 0 when f was not returned)
  double rel_l2;       // || y - X ||_2 / || X ||_2 over the returned frequencies
  double rel_linf;     // max |y - X| / max |X| over the returned frequencies
};

Score score(const Signal &s, const Result &r) {
  std::map<uint64_t, cd> got;
  for (std::size_t i = 0; i < r.freqs.size(); ++i) got[r.freqs[i]] = r.values[i];
  Score sc{0, 0, 0, 0};
  std::size_t hits = 0;
  for (uint64_t f : s.support) {
    auto it = got.find(f);
    hits += it != got.end();
    sc.l1_per_coef += std::abs((it != got.end() ? it->second : cd(0, 0)) - s.truth[f]);
  }
  sc.recovery = static_cast<double>(hits) / static_cast<double>(s.support.size());
  sc.l1_per_coef /= static_cast<double>(s.support.size());
  std::vector<cd> est, ref;
  double max_err = 0, max_ref = 0;
  for (const auto &[f, v] : got) {
    est.push_back(v);
    ref.push_back(s.truth[f]);
    max_err = std::max(max_err, std::abs(v - s.truth[f]));
    max_ref = std::max(max_ref, std::abs(s.truth[f]));
  }
  sc.rel_l2 = est.empty() ? 1.0 : sfft_test::relative_l2_error(est.data(), ref.data(), est.size());
  sc.rel_linf = max_ref > 0 ? max_err / max_ref : 1.0;
  return sc;
}

// The returned frequencies are exactly the planted support (in any order).
void expect_same_set(std::vector<uint64_t> got, std::vector<uint64_t> want) {
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

class SparseFft : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().where != Where::Cpu) SFFT_SKIP_WITHOUT_GPU();
  }
  bool dbl() const { return GetParam().dtype == SFFT_COMPLEX128; }
  double exact_tolerance() const { return dbl() ? 1e-9 : 1e-4; }

  // One exactly sparse signal (k coefficients, dynamic range 1000, seed signal_seed) through `runner`: every
  // coefficient found, k returned, relative l2 error within the precision's tolerance. Returns the score
  // for further checks (a failed call scores recovery 0).
  Score expect_exactly_sparse(Runner &runner, uint64_t n, uint64_t k, uint64_t signal_seed) {
    Signal s = planted(n, k, signal_seed, 1000.0, INFINITY);
    Result r = runner.run(s.x);
    if (r.status != SFFT_SUCCESS) {
      ADD_FAILURE() << "sfft_exec: " << sfft_last_error();
      return Score{0, 0, 1, 1};
    }
    Score sc = score(s, r);
    EXPECT_EQ(sc.recovery, 1.0);
    EXPECT_EQ(r.freqs.size(), k);
    EXPECT_LE(sc.rel_l2, exact_tolerance());
    return sc;
  }
};

sfft_sparse_options variant_knobs(sfft_sparse_variant v) {
  sfft_sparse_options k;
  sfft_sparse_options_init(&k);
  k.variant = v;
  return k;
}


sfft_sparse_options comb_knobs(sfft_sparse_variant v, int comb_loops, int min_votes) {
  sfft_sparse_options k = variant_knobs(v);
  k.comb_loops = comb_loops;
  k.min_votes = min_votes;
  return k;
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (Where w : {Where::Cpu, Where::CudaHost, Where::CudaDevice})
    for (sfft_dtype d : {SFFT_COMPLEX128, SFFT_COMPLEX64}) v.push_back({w, d});
  return v;
}

}  // namespace
