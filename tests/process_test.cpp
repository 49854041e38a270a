// SPDX-License-Identifier: Apache-2.0
// Threads, fork and process-wide state (issue 26): opts->threads of any size is capped instead of ending the
// process; a child forked after multithreaded calls runs the parent's plans and new ones (single-threaded)
// instead of hanging; FFTW's process-wide planner thread count is the application's again after sfft plans.
// The probes that could end or hang the process run in a forked child under alarm(), so a regression fails
// the test instead of blocking ctest. Families not compiled into this build (SFFT_TEST_FAMILY_<name>
// undefined) drop out.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fftw3.h>

#include "test_support.hpp"

namespace {

using Problems = std::vector<std::string>;

// Runs body in a forked child that must finish within `seconds`; the parent's verdict names what the child
// reported, or the signal that ended it (SIGALRM: it hung).
void run_in_child(unsigned seconds, const std::function<void(Problems &)> &body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << "fork failed";
  if (pid == 0) {
    alarm(seconds);
    Problems problems;
    body(problems);
    for (const auto &p : problems) std::fprintf(stderr, "child: %s\n", p.c_str());
    std::fflush(stderr);
    std::_Exit(problems.empty() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status)) {
    FAIL() << "the child was ended by signal " << WTERMSIG(status)
           << (WTERMSIG(status) == SIGALRM ? " (it hung: alarm)" : "");
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child reported problems (its stderr above)";
}

sfft_options cpu_options(int threads) {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = SFFT_BACKEND_CPU;
  o.threads = threads;
  return o;
}

void check(sfft_status s, const std::string &what, Problems &problems) {
  if (s != SFFT_SUCCESS) problems.push_back(what + ": " + sfft_status_string(s) + " (" + sfft_last_error() + ")");
}

template <class T>
double relative_difference(const std::vector<T> &a, const std::vector<T> &b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(std::complex<double>(a[i]) - std::complex<double>(b[i]));
    den += std::norm(std::complex<double>(b[i]));
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// One family's work: `make` creates a plan with opts (or does a one-shot call), `run` computes into a vector.
// Plans are kept so that a forked child can run the parent's plans again.
struct Family {
  std::string name;
  std::function<void *(const sfft_options &, Problems &)> make;
  std::function<std::vector<std::complex<double>>(void *, const sfft_options &, Problems &)> run;
  std::function<void(void *)> destroy;
  double tolerance;  // relative difference allowed between thread counts (spreading sums in another order)
};

std::vector<Family> families() {
  std::vector<Family> out;
#if SFFT_TEST_FAMILY_shift
  // Large enough for every parallel loop of the shift to form a team.
  out.push_back({"fftshift_nd", [](const sfft_options &, Problems &) -> void * { return nullptr; },
                 [](void *, const sfft_options &o, Problems &problems) {
                   const int64_t shape[2] = {768, 1030};
                   std::vector<std::complex<double>> in(768 * 1030), res(in.size());
                   for (std::size_t i = 0; i < in.size(); ++i) in[i] = {static_cast<double>(i), -1.0 * i};
                   check(fftshift_nd(res.data(), in.data(), 2, shape, 0, SFFT_COMPLEX128, &o), "fftshift_nd", problems);
                   return res;
                 },
                 [](void *) {}, 0.0});
#endif
#if SFFT_TEST_FAMILY_nufft3
  out.push_back({"nufft3",
                 [](const sfft_options &o, Problems &problems) -> void * {
                   constexpr std::size_t N = 30000, K = 30000;
                   std::vector<double> x(N), s(K);
                   for (std::size_t i = 0; i < N; ++i) x[i] = std::sin(0.37 * i) * 40;
                   for (std::size_t k = 0; k < K; ++k) s[k] = std::cos(0.11 * k) * 60;
                   nufft3_plan plan = nullptr;
                   check(nufft3_create(&plan, 1, SFFT_COMPLEX128, -1, 1e-9, &o), "nufft3_create", problems);
                   if (plan != nullptr)
                     check(nufft3_setpts(plan, N, x.data(), nullptr, nullptr, K, s.data(), nullptr, nullptr),
                           "nufft3_setpts", problems);
                   return plan;
                 },
                 [](void *plan, const sfft_options &, Problems &problems) {
                   std::vector<std::complex<double>> f = sfft_test::random_complex<double>(30000, 5), F(30000);
                   check(nufft3_exec(static_cast<nufft3_plan>(plan), f.data(), F.data()), "nufft3_exec", problems);
                   return F;
                 },
                 [](void *plan) { nufft3_destroy(static_cast<nufft3_plan>(plan)); }, 1e-9});
#endif
#if SFFT_TEST_FAMILY_spfft2d
  out.push_back({"spfft2d",
                 [](const sfft_options &o, Problems &problems) -> void * {
                   constexpr std::size_t nnz = 4000;
                   std::vector<int64_t> r(nnz), c(nnz);
                   std::vector<double> v(nnz);
                   for (std::size_t i = 0; i < nnz; ++i) {
                     r[i] = static_cast<int64_t>((i * 7919) % 384);
                     c[i] = static_cast<int64_t>((i * 104729) % 512);
                     v[i] = std::cos(static_cast<double>(i));
                   }
                   spfft2d_plan plan = nullptr;
                   check(spfft2d_create(&plan, 384, 512, nnz, r.data(), c.data(), v.data(), SFFT_COMPLEX128, &o),
                         "spfft2d_create", problems);
                   return plan;
                 },
                 [](void *plan, const sfft_options &, Problems &problems) {
                   std::vector<std::complex<double>> out(384 * (512 / 2 + 1));
                   check(spfft2d_exec(static_cast<spfft2d_plan>(plan), out.data()), "spfft2d_exec", problems);
                   return out;
                 },
                 [](void *plan) { spfft2d_destroy(static_cast<spfft2d_plan>(plan)); }, 1e-12});
#endif
#if SFFT_TEST_FAMILY_sparse
  // Four planted frequencies in a signal of 2^16: their values come back (frequencies sorted by sfft_exec).
  out.push_back({"sparse",
                 [](const sfft_options &o, Problems &problems) -> void * {
                   sfft_options seeded = o;
                   seeded.seed = 7;
                   sfft_plan plan = nullptr;
                   check(sfft_create(&plan, 1 << 16, 4, SFFT_COMPLEX128, &seeded), "sfft_create", problems);
                   return plan;
                 },
                 [](void *plan, const sfft_options &, Problems &problems) {
                   constexpr std::size_t n = 1 << 16;
                   const uint64_t planted[4] = {3, 1000, 20000, 65000};
                   std::vector<std::complex<double>> x(n);
                   for (std::size_t t = 0; t < n; ++t)
                     for (uint64_t f : planted)
                       x[t] += std::polar(1.0 / n, 2 * M_PI * static_cast<double>((f * t) % n) / n);
                   std::vector<uint64_t> freqs(4);
                   std::vector<std::complex<double>> values(4);
                   uint64_t count = 4;
                   check(sfft_exec(static_cast<sfft_plan>(plan), x.data(), freqs.data(), values.data(), &count),
                         "sfft_exec", problems);
                   std::vector<std::complex<double>> out;
                   for (uint64_t j = 0; j < count; ++j)
                     out.push_back({static_cast<double>(freqs[j]), values[j].real()});
                   return out;
                 },
                 [](void *plan) { sfft_destroy(static_cast<sfft_plan>(plan)); }, 1e-6});
#endif
  return out;
}

// Each family at `threads` against the same work at 1 thread (computed in the caller's process).
void compare_with_one_thread(int threads, Problems &problems) {
  for (const Family &fam : families()) {
    const sfft_options one = cpu_options(1), many = cpu_options(threads);
    void *ref_plan = fam.make(one, problems);
    void *plan = fam.make(many, problems);
    const auto want = fam.run(ref_plan, one, problems);
    const auto got = fam.run(plan, many, problems);
    if (got.size() != want.size() || relative_difference(got, want) > fam.tolerance)
      problems.push_back(fam.name + " at threads = " + std::to_string(threads) + " differs from 1 thread");
    fam.destroy(ref_plan);
    fam.destroy(plan);
  }
}

// ------------------------------------------------------------------------------------ threads value

// INT_MAX ended the process inside the OpenMP runtime ("Out of memory allocating 481036338272 bytes").
TEST(ThreadsOption, HugeValuesAreCappedForEveryFamily) {
  run_in_child(120, [](Problems &problems) {
    for (int threads : {INT_MAX, 1 << 20, 5000}) compare_with_one_thread(threads, problems);
  });
}

#if SFFT_TEST_FAMILY_shift
TEST(ThreadsOption, NegativeIsRefused) {
  sfft_options o = cpu_options(-1);
  double in[4] = {1, 2, 3, 4}, out[4];
  const int64_t shape[1] = {4};
  EXPECT_EQ(fftshift_nd(out, in, 1, shape, 0, SFFT_FLOAT64, &o), SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("threads"), std::string::npos) << sfft_last_error();
}
#endif

// ------------------------------------------------------------------------------------------- fork

// Python multiprocessing's default: the parent runs multithreaded work (OpenMP teams, FFTW worker threads),
// then forks; the child hung in its first multithreaded call. Here the child runs the parent's plans
// (planned with 4 threads) and new plans, and gets the parent's results.
TEST(Fork, ChildAfterMultithreadedCallsRunsOldAndNewPlans) {
  const std::vector<Family> fams = families();
  if (fams.empty()) GTEST_SKIP() << "no family compiled in";
  const sfft_options opts = cpu_options(4);
  Problems setup;
  std::vector<void *> plans;
  std::vector<std::vector<std::complex<double>>> want;
  for (const Family &fam : fams) {
    plans.push_back(fam.make(opts, setup));
    want.push_back(fam.run(plans.back(), opts, setup));
  }
  ASSERT_TRUE(setup.empty()) << setup.front();
  run_in_child(60, [&](Problems &problems) {
    for (std::size_t i = 0; i < fams.size(); ++i) {
      const auto old_plan = fams[i].run(plans[i], opts, problems);
      if (relative_difference(old_plan, want[i]) > fams[i].tolerance)
        problems.push_back(fams[i].name + ": the parent's plan gives another result in the child");
      void *fresh = fams[i].make(opts, problems);
      const auto new_plan = fams[i].run(fresh, opts, problems);
      if (relative_difference(new_plan, want[i]) > fams[i].tolerance)
        problems.push_back(fams[i].name + ": a plan made in the child gives another result");
      fams[i].destroy(fresh);
    }
    // A grandchild too.
    const pid_t pid = fork();
    if (pid == 0) {
      Problems inner;
      for (std::size_t i = 0; i < fams.size(); ++i) fams[i].run(plans[i], opts, inner);
      std::_Exit(inner.empty() ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      problems.push_back("the grandchild failed");
  });
  // The parent's plans still run multithreaded here.
  Problems after;
  for (std::size_t i = 0; i < fams.size(); ++i) {
    EXPECT_LE(relative_difference(fams[i].run(plans[i], opts, after), want[i]), fams[i].tolerance) << fams[i].name;
    fams[i].destroy(plans[i]);
  }
  EXPECT_TRUE(after.empty()) << after.front();
}

#if SFFT_TEST_FAMILY_spfft2d
// A fork while other threads are inside handle-registry calls: the child must not inherit the registry's
// lock held. The other threads make the cheapest leased call in a loop, so the lock is often held when
// one of the many forks happens.
TEST(Fork, WhileOtherThreadsUseTheHandleRegistry) {
  const sfft_options opts = cpu_options(1);
  const int64_t row[2] = {0, 1}, col[2] = {1, 2};
  spfft2d_plan shared = nullptr;
  ASSERT_EQ(spfft2d_create(&shared, 4, 4, 2, row, col, nullptr, SFFT_COMPLEX64, &opts), SFFT_SUCCESS);
  std::atomic<bool> stop{false};
  std::vector<std::thread> churn;
  for (int t = 0; t < 2; ++t)
    churn.emplace_back([&] {
      uint64_t rows = 0;
      while (!stop.load()) {
        spfft2d_plan own = nullptr;
        if (spfft2d_create(&own, 4, 4, 2, row, col, nullptr, SFFT_COMPLEX64, &opts) == SFFT_SUCCESS) {
          for (int i = 0; i < 100; ++i) spfft2d_get_info(own, &rows, nullptr, nullptr, nullptr, nullptr, nullptr);
          spfft2d_destroy(own);
        }
      }
    });
  for (int round = 0; round < 100 && !HasFailure(); ++round)
    run_in_child(20, [&](Problems &problems) {
      uint64_t rows = 0;
      check(spfft2d_get_info(shared, &rows, nullptr, nullptr, nullptr, nullptr, nullptr),
            "spfft2d_get_info in the child", problems);
      spfft2d_plan p = nullptr;
      check(spfft2d_create(&p, 4, 4, 2, row, col, nullptr, SFFT_COMPLEX64, &opts), "spfft2d_create in the child",
            problems);
      check(spfft2d_destroy(p), "spfft2d_destroy in the child", problems);
    });
  stop = true;
  for (auto &t : churn) t.join();
  spfft2d_destroy(shared);
}
#endif

// ------------------------------------------------------------------------------- FFTW global state

// fftw_plan_with_nthreads is process-wide: sfft planning with its own thread count left the application's
// FFTW planning at that count.
TEST(FftwState, PlannerThreadCountIsRestored) {
  std::vector<Family> fams = families();
  fams.erase(std::remove_if(fams.begin(), fams.end(), [](const Family &f) { return f.name == "fftshift_nd"; }),
             fams.end());
  if (fams.empty()) GTEST_SKIP() << "no family of this build plans with FFTW";
  ASSERT_NE(fftw_init_threads(), 0);
  ASSERT_NE(fftwf_init_threads(), 0);
  fftw_plan_with_nthreads(3);
  fftwf_plan_with_nthreads(5);
  Problems problems;
  for (int threads : {1, 2}) {
    for (const Family &fam : fams) {
      const sfft_options o = cpu_options(threads);
      void *plan = fam.make(o, problems);
      fam.run(plan, o, problems);
      fam.destroy(plan);
    }
#if SFFT_TEST_FAMILY_nufft3
    // Single precision plans with fftwf_*.
    sfft_options o = cpu_options(threads);
    nufft3_plan plan = nullptr;
    float x[3] = {0, 1, 2};
    std::complex<float> f[3] = {1, 2, 3}, F[3];
    check(nufft3_create(&plan, 1, SFFT_COMPLEX64, 1, 1e-4, &o), "nufft3_create", problems);
    check(nufft3_setpts(plan, 3, x, nullptr, nullptr, 3, x, nullptr, nullptr), "nufft3_setpts", problems);
    check(nufft3_exec(plan, f, F), "nufft3_exec", problems);
    nufft3_destroy(plan);
#endif
    EXPECT_EQ(fftw_planner_nthreads(), 3) << "after sfft planned with " << threads << " threads";
    EXPECT_EQ(fftwf_planner_nthreads(), 5) << "after sfft planned with " << threads << " threads";
  }
  EXPECT_TRUE(problems.empty()) << problems.front();
  fftw_plan_with_nthreads(1);
  fftwf_plan_with_nthreads(1);
}

}  // namespace
