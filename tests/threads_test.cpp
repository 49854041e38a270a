// SPDX-License-Identifier: Apache-2.0
// Thread safety: distinct plans and calls driven from many threads at once, on the CPU backend and on the
// CUDA backend with one cudaStream_t per thread; every result is checked against a reference computed by
// the thread itself. Also proves that sfft_last_error() is thread-local. Families not compiled into this
// build (SFFT_TEST_FAMILY_<name> undefined) drop out.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <fftw3.h>

#include "shift_reference.hpp"
#include "test_support.hpp"

namespace {

// Threads per test: 8, or SFFT_TEST_THREADS (compute-sanitizer runs use fewer).
const int kThreads = [] {
  const char *env = std::getenv("SFFT_TEST_THREADS");
  return env != nullptr && std::atoi(env) >= 2 ? std::atoi(env) : 8;
}();

// Calls per thread and family. SFFT_TEST_ROUNDS lowers it where each call is slow (compute-sanitizer runs
// of scripts/gpu-check.sh use 1).
int rounds(int divisor) {
  const char *env = std::getenv("SFFT_TEST_ROUNDS");
  int base = env != nullptr ? std::atoi(env) : 12;
  return std::max(1, base / divisor);
}
constexpr long double kPi = 3.141592653589793238462643383279502884L;

enum class Where { Cpu, Cuda };

std::string where_name(Where w) { return w == Where::Cpu ? "cpu" : "cuda"; }
void PrintTo(Where w, std::ostream *os) { *os << where_name(w); }

// All threads leave wait() together; reusable.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    int gen = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen != generation_; });
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int n_, arrived_ = 0, generation_ = 0;
};

// Per-thread CUDA stream (CUDA runs), released with the thread's work.
class ThreadStream {
 public:
  explicit ThreadStream(Where where) {
#if SFFT_HAVE_CUDA
    if (where == Where::Cuda && cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess)
      throw std::runtime_error("cudaStreamCreateWithFlags failed");
#else
    (void)where;
#endif
  }
  ~ThreadStream() {
#if SFFT_HAVE_CUDA
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
#endif
  }
  ThreadStream(const ThreadStream &) = delete;
  ThreadStream &operator=(const ThreadStream &) = delete;
  void *get() const { return stream_; }
  void synchronize() const {
#if SFFT_HAVE_CUDA
    if (stream_ != nullptr && cudaStreamSynchronize(stream_) != cudaSuccess)
      throw std::runtime_error("cudaStreamSynchronize failed");
#endif
  }

 private:
#if SFFT_HAVE_CUDA
  cudaStream_t stream_ = nullptr;
#else
  void *stream_ = nullptr;
#endif
};

sfft_options options_for(Where where, const ThreadStream &stream, uint64_t seed) {
  sfft_options o;
  sfft_options_init(&o);
  o.backend = where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
  o.stream = stream.get();
  o.threads = 2;  // each thread also runs an OpenMP team: nested parallelism must stay correct
  o.seed = seed;
  return o;
}

// A host or device copy of `bytes` bytes the library reads from / writes to.
class Buffer {
 public:
  Buffer(Where where, std::size_t bytes) : where_(where), bytes_(bytes), host_(where == Where::Cpu ? bytes : 0) {
    if (where == Where::Cuda) device_ = std::make_unique<sfft_test::DeviceMemory>(bytes);
  }
  void *get() { return where_ == Where::Cpu ? static_cast<void *>(host_.data()) : device_->get(); }
  void upload(const void *src) {
    if (where_ == Where::Cpu)
      std::memcpy(host_.data(), src, bytes_);
    else
      device_->upload(src, bytes_);
  }
  void download(void *dst) const {
    if (where_ == Where::Cpu)
      std::memcpy(dst, host_.data(), bytes_);
    else
      device_->download(dst, bytes_);
  }

 private:
  Where where_;
  std::size_t bytes_;
  std::vector<unsigned char> host_;
  std::unique_ptr<sfft_test::DeviceMemory> device_;
};

// One failure description per failed check; threads append under a lock, the test prints them.
class Failures {
 public:
  void add(const std::string &s) {
    std::lock_guard<std::mutex> lock(mutex_);
    list_.push_back(s);
  }
  const std::vector<std::string> &list() const { return list_; }

 private:
  std::mutex mutex_;
  std::vector<std::string> list_;
};

// Runs work(thread_index) on n threads released together; an exception in a thread is a failure.
void run_concurrently(int n, Failures &failures, const std::function<void(int)> &work) {
  Barrier start(n);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      start.wait();
      try {
        work(t);
      } catch (const std::exception &e) {
        failures.add("thread " + std::to_string(t) + ": " + e.what());
      }
    });
  for (auto &th : threads) th.join();
}

#define CHECK_CALL(failures, call, ctx)                                                                              \
  do {                                                                                                               \
    sfft_status status_ = (call);                                                                                    \
    if (status_ != SFFT_SUCCESS) {                                                                                   \
      (failures).add(std::string(ctx) + ": " #call " -> " + sfft_status_string(status_) + " (" + sfft_last_error() + \
                     ")");                                                                                           \
      return;                                                                                                        \
    }                                                                                                                \
    if (*sfft_last_error() != '\0') (failures).add(std::string(ctx) + ": success left an error");                    \
  } while (0)

std::string context(const char *family, Where where, int thread, int round) {
  return std::string(family) + "/" + where_name(where) + " thread " + std::to_string(thread) + " round " +
         std::to_string(round);
}

// ------------------------------------------------------------------------------------------- shift
#if SFFT_TEST_FAMILY_shift
void shift_worker(Where where, int thread, Failures &failures) {
  std::mt19937_64 rng(1000 + thread);
  ThreadStream stream(where);
  sfft_options opts = options_for(where, stream, 0);
  const sfft_dtype dtypes[] = {SFFT_FLOAT32, SFFT_FLOAT64, SFFT_COMPLEX64, SFFT_COMPLEX128};
  for (int round = 0; round < rounds(1); ++round) {
    std::string ctx = context("shift", where, thread, round);
    int ndim = 1 + static_cast<int>(rng() % 4);
    std::vector<int64_t> shape(ndim);
    std::size_t count = 1;
    for (auto &e : shape) count *= static_cast<std::size_t>(e = 1 + static_cast<int64_t>(rng() % 37));
    uint32_t mask = static_cast<uint32_t>(rng() % (1u << ndim));
    sfft_dtype dtype = dtypes[rng() % 4];
    bool inverse = rng() % 2, in_place = rng() % 2;
    std::size_t bytes = count * sfft_test::shift_dtype_bytes(dtype);
    std::vector<unsigned char> in(bytes);
    for (auto &b : in) b = static_cast<unsigned char>(rng());
    auto want = sfft_test::shift_reference(in, shape, mask, sfft_test::shift_dtype_bytes(dtype), inverse);
    Buffer src(where, bytes), dst(where, bytes);
    src.upload(in.data());
    void *out = in_place ? src.get() : dst.get();
    auto fn = inverse ? ifftshift_nd : fftshift_nd;
    CHECK_CALL(failures, fn(out, src.get(), ndim, shape.data(), mask, dtype, &opts), ctx);
    stream.synchronize();
    std::vector<unsigned char> got(bytes);
    (in_place ? src : dst).download(got.data());
    if (got != want) failures.add(ctx + ": shifted array differs from the reference");
  }
}
#endif

// ------------------------------------------------------------------------------------------ nufft3
#if SFFT_TEST_FAMILY_nufft3
template <class Real>
void nufft3_worker_typed(Where where, int thread, Failures &failures) {
  using C = std::complex<Real>;
  const sfft_dtype dtype = sizeof(Real) == 4 ? SFFT_COMPLEX64 : SFFT_COMPLEX128;
  const double tol = sizeof(Real) == 4 ? 1e-4 : 1e-9;
  std::mt19937_64 rng(2000 + thread);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  ThreadStream stream(where);
  sfft_options opts = options_for(where, stream, 0);
  for (int round = 0; round < rounds(3); ++round) {
    std::string ctx = context("nufft3", where, thread, round);
    const int dim = 1 + static_cast<int>(rng() % 3);
    const int sign = rng() % 2 ? 1 : -1;
    const std::size_t N = 50 + rng() % 150, K = 40 + rng() % 120;
    std::vector<Real> pts[3], frq[3];
    for (int d = 0; d < 3; ++d) {
      pts[d].resize(N);
      frq[d].resize(K);
      for (auto &v : pts[d]) v = static_cast<Real>(3.0 * unit(rng));
      for (auto &v : frq[d]) v = static_cast<Real>(12.0 * unit(rng));
    }
    std::vector<C> f = sfft_test::random_complex<Real>(N, rng());
    // Direct sum in long double.
    std::vector<std::complex<double>> want(K);
    for (std::size_t k = 0; k < K; ++k) {
      long double re = 0, im = 0;
      for (std::size_t i = 0; i < N; ++i) {
        long double phase = 0;
        for (int d = 0; d < dim; ++d) phase += static_cast<long double>(pts[d][i]) * frq[d][k];
        phase *= sign;
        long double c = std::cos(phase), s = std::sin(phase);
        re += f[i].real() * c - f[i].imag() * s;
        im += f[i].real() * s + f[i].imag() * c;
      }
      want[k] = {static_cast<double>(re), static_cast<double>(im)};
    }
    nufft3_plan plan = nullptr;
    CHECK_CALL(failures, nufft3_create(&plan, dim, dtype, sign, tol, &opts), ctx);
    std::unique_ptr<nufft3_plan_s, sfft_status (*)(nufft3_plan)> guard(plan, nufft3_destroy);
    Buffer bx(where, N * sizeof(Real)), by(where, N * sizeof(Real)), bz(where, N * sizeof(Real));
    Buffer bs(where, K * sizeof(Real)), bt(where, K * sizeof(Real)), bu(where, K * sizeof(Real));
    Buffer *p[3] = {&bx, &by, &bz}, *q[3] = {&bs, &bt, &bu};
    for (int d = 0; d < 3; ++d) {
      p[d]->upload(pts[d].data());
      q[d]->upload(frq[d].data());
    }
    CHECK_CALL(failures,
               nufft3_setpts(plan, N, bx.get(), dim > 1 ? by.get() : nullptr, dim > 2 ? bz.get() : nullptr, K, bs.get(),
                             dim > 1 ? bt.get() : nullptr, dim > 2 ? bu.get() : nullptr),
               ctx);
    Buffer bf(where, N * sizeof(C)), bF(where, K * sizeof(C));
    bf.upload(f.data());
    CHECK_CALL(failures, nufft3_exec(plan, bf.get(), bF.get()), ctx);
    stream.synchronize();
    std::vector<C> got(K);
    bF.download(got.data());
    std::vector<std::complex<double>> got_d(got.begin(), got.end());
    double err = sfft_test::relative_l2_error(got_d.data(), want.data(), K);
    if (!(err <= 10 * tol))
      failures.add(ctx + ": relative l2 error " + std::to_string(err) + " > 10 * tol = " + std::to_string(10 * tol));
  }
}

void nufft3_worker(Where where, int thread, Failures &failures) {
  if (thread % 2 == 0)
    nufft3_worker_typed<float>(where, thread, failures);
  else
    nufft3_worker_typed<double>(where, thread, failures);
}
#endif

// ----------------------------------------------------------------------------------------- spfft2d
#if SFFT_TEST_FAMILY_spfft2d
template <class Real>
void spfft2d_worker_typed(Where where, int thread, Failures &failures) {
  using C = std::complex<Real>;
  const sfft_dtype dtype = sizeof(Real) == 4 ? SFFT_COMPLEX64 : SFFT_COMPLEX128;
  const double tol = sizeof(Real) == 4 ? 2e-5 : 1e-12;
  std::mt19937_64 rng(3000 + thread);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  ThreadStream stream(where);
  sfft_options opts = options_for(where, stream, 0);
  for (int round = 0; round < rounds(3); ++round) {
    std::string ctx = context("spfft2d", where, thread, round);
    const int rows = 1 + static_cast<int>(rng() % 40), cols = 1 + static_cast<int>(rng() % 40);
    const std::size_t nnz = rng() % 60;
    std::vector<int64_t> r(nnz), c(nnz);
    std::vector<double> v(nnz);
    for (std::size_t i = 0; i < nnz; ++i) {
      r[i] = static_cast<int64_t>(rng() % rows);
      c[i] = static_cast<int64_t>(rng() % cols);
      v[i] = unit(rng);
    }
    // Direct sum over the nonzeros (repeats add up), exact integer phases, long double.
    const std::size_t half = cols / 2 + 1;
    std::vector<std::complex<double>> want(static_cast<std::size_t>(rows) * half);
    for (int u = 0; u < rows; ++u)
      for (std::size_t w = 0; w < half; ++w) {
        std::complex<long double> acc = 0;
        for (std::size_t i = 0; i < nnz; ++i) {
          long double ph = -2 * kPi *
                           (static_cast<long double>((r[i] * u) % rows) / rows +
                            static_cast<long double>((c[i] * static_cast<int64_t>(w)) % cols) / cols);
          acc += std::complex<long double>(v[i] * std::cos(ph), v[i] * std::sin(ph));
        }
        want[u * half + w] = {static_cast<double>(acc.real()), static_cast<double>(acc.imag())};
      }
    spfft2d_plan plan = nullptr;
    CHECK_CALL(failures,
               spfft2d_create(&plan, rows, cols, nnz, nnz ? r.data() : nullptr, nnz ? c.data() : nullptr,
                              nnz ? v.data() : nullptr, dtype, &opts),
               ctx);
    std::unique_ptr<spfft2d_plan_s, sfft_status (*)(spfft2d_plan)> guard(plan, spfft2d_destroy);
    Buffer out(where, want.size() * sizeof(C));
    CHECK_CALL(failures, spfft2d_exec(plan, out.get()), ctx);
    stream.synchronize();
    std::vector<C> got(want.size());
    out.download(got.data());
    std::vector<std::complex<double>> got_d(got.begin(), got.end());
    double scale = 0;
    for (auto &z : want) scale = std::max(scale, std::abs(z));
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got_d[i] - want[i]));
    if (!(worst <= tol * std::max(1.0, scale)))
      failures.add(ctx + ": max abs error " + std::to_string(worst) + " (scale " + std::to_string(scale) + ")");
  }
}

void spfft2d_worker(Where where, int thread, Failures &failures) {
  if (thread % 2 == 0)
    spfft2d_worker_typed<float>(where, thread, failures);
  else
    spfft2d_worker_typed<double>(where, thread, failures);
}
#endif

// ------------------------------------------------------------------------------------------ sparse
#if SFFT_TEST_FAMILY_sparse
// An exactly k-sparse spectrum with unit-magnitude coefficients at distinct random frequencies; checks
// that sfft_exec recovers every frequency and value.
template <class Real>
void sparse_worker_typed(Where where, int thread, Failures &failures) {
  using C = std::complex<Real>;
  const sfft_dtype dtype = sizeof(Real) == 4 ? SFFT_COMPLEX64 : SFFT_COMPLEX128;
  const double tol = sizeof(Real) == 4 ? 1e-3 : 1e-8;
  std::mt19937_64 rng(4000 + thread);
  ThreadStream stream(where);
  for (int round = 0; round < rounds(4); ++round) {
    std::string ctx = context("sparse", where, thread, round);
    const uint64_t n = uint64_t{1} << (10 + rng() % 4), k = 1 + rng() % 8;
    sfft_options opts = options_for(where, stream, 77 + thread);
    std::vector<uint64_t> freq;
    while (freq.size() < k) {
      uint64_t f = rng() % n;
      if (std::find(freq.begin(), freq.end(), f) == freq.end()) freq.push_back(f);
    }
    std::vector<std::complex<double>> coef(k);
    std::uniform_real_distribution<double> angle(0, 2 * static_cast<double>(kPi));
    for (auto &a : coef) a = std::polar(1.0, angle(rng));
    std::vector<C> x(n);
    for (uint64_t t = 0; t < n; ++t) {
      std::complex<long double> s = 0;
      for (uint64_t j = 0; j < k; ++j) {
        long double ph = 2.0L * kPi * static_cast<long double>((freq[j] * t) % n) / n;
        s += std::complex<long double>(coef[j].real(), coef[j].imag()) *
             std::complex<long double>(std::cos(ph), std::sin(ph));
      }
      x[t] = C(static_cast<Real>(s.real() / n), static_cast<Real>(s.imag() / n));
    }
    sfft_plan plan = nullptr;
    CHECK_CALL(failures, sfft_create(&plan, n, k, dtype, &opts), ctx);
    std::unique_ptr<sfft_plan_s, sfft_status (*)(sfft_plan)> guard(plan, sfft_destroy);
    Buffer bx(where, n * sizeof(C)), bf(where, k * sizeof(uint64_t)), bv(where, k * sizeof(C));
    bx.upload(x.data());
    uint64_t count = k;
    CHECK_CALL(failures, sfft_exec(plan, bx.get(), static_cast<uint64_t *>(bf.get()), bv.get(), &count), ctx);
    stream.synchronize();
    std::vector<uint64_t> got_f(k);
    std::vector<C> got_v(k);
    bf.download(got_f.data());
    bv.download(got_v.data());
    if (count != k) {
      failures.add(ctx + ": recovered " + std::to_string(count) + " of " + std::to_string(k) + " coefficients");
      continue;
    }
    for (uint64_t j = 0; j < k; ++j) {
      auto it = std::find(freq.begin(), freq.end(), got_f[j]);
      if (it == freq.end()) {
        failures.add(ctx + ": returned frequency " + std::to_string(got_f[j]) + " is not in the spectrum");
        continue;
      }
      std::complex<double> want = coef[it - freq.begin()], got(got_v[j].real(), got_v[j].imag());
      if (std::abs(got - want) > tol) failures.add(ctx + ": wrong value at frequency " + std::to_string(got_f[j]));
    }
  }
}

void sparse_worker(Where where, int thread, Failures &failures) {
  if (thread % 2 == 0)
    sparse_worker_typed<float>(where, thread, failures);
  else
    sparse_worker_typed<double>(where, thread, failures);
}
#endif

using Worker = void (*)(Where, int, Failures &);

std::vector<std::pair<std::string, Worker>> workers() {
  std::vector<std::pair<std::string, Worker>> w;
#if SFFT_TEST_FAMILY_shift
  w.emplace_back("shift", shift_worker);
#endif
#if SFFT_TEST_FAMILY_nufft3
  w.emplace_back("nufft3", nufft3_worker);
#endif
#if SFFT_TEST_FAMILY_spfft2d
  w.emplace_back("spfft2d", spfft2d_worker);
#endif
#if SFFT_TEST_FAMILY_sparse
  w.emplace_back("sparse", sparse_worker);
#endif
  return w;
}

void report(const Failures &failures) {
  for (const auto &f : failures.list()) ADD_FAILURE() << f;
}

class ThreadsTest : public ::testing::TestWithParam<Where> {
 protected:
  void SetUp() override {
    if (GetParam() == Where::Cuda) SFFT_SKIP_WITHOUT_GPU();
  }
};

// Every family on its own: kThreads threads, each with its own plans, data and (CUDA) stream.
TEST_P(ThreadsTest, EachFamilyManyThreads) {
  for (const auto &[name, worker] : workers()) {
    SCOPED_TRACE(name);
    Failures failures;
    run_concurrently(kThreads, failures, [&, w = worker](int t) { w(GetParam(), t, failures); });
    report(failures);
  }
}

// All families at once: thread t runs family t % families, so different plan types share the process.
TEST_P(ThreadsTest, AllFamiliesTogether) {
  auto all = workers();
  Failures failures;
  run_concurrently(kThreads, failures,
                   [&](int t) { all[static_cast<std::size_t>(t) % all.size()].second(GetParam(), t, failures); });
  report(failures);
}

INSTANTIATE_TEST_SUITE_P(Backends, ThreadsTest, ::testing::Values(Where::Cpu, Where::Cuda),
                         [](const auto &info) { return where_name(info.param); });

// A host application keeps planning with FFTW from its own threads while sfft plans in others. FFTW's
// planner is not re-entrant and sfft's own planner lock cannot cover the application's calls: this works
// only because sfft switches on FFTW's planner lock when it first plans (found by this harness: without it
// the process crashed inside fftw_mkplan_d).
TEST(HostFftwInterop, ApplicationPlansWhileSfftPlans) {
  std::vector<std::pair<std::string, Worker>> fftw_users;
  for (const auto &w : workers())
    if (w.first != "shift") fftw_users.push_back(w);
  if (fftw_users.empty()) GTEST_SKIP() << "no family of this build plans with FFTW";
  Failures failures;
  fftw_users[0].second(Where::Cpu, 0, failures);  // sfft's first plan: FFTW initialised by the library
  const int app_threads = 2;
  run_concurrently(kThreads, failures, [&](int t) {
    if (t >= app_threads) {
      fftw_users[static_cast<std::size_t>(t) % fftw_users.size()].second(Where::Cpu, t, failures);
      return;
    }
    for (int round = 0; round < 200; ++round) {
      const int n = 8 + (round * 7 + t) % 120;
      std::vector<std::complex<double>> in(n), out(n);
      fftw_plan p = fftw_plan_dft_1d(n, reinterpret_cast<fftw_complex *>(in.data()),
                                     reinterpret_cast<fftw_complex *>(out.data()), FFTW_FORWARD, FFTW_ESTIMATE);
      in.assign(n, 0.0);
      in[1] = 1.0;  // the DFT of a shifted impulse: out[k] = exp(-2 pi i k / n)
      fftw_execute(p);
      fftw_destroy_plan(p);
      for (int k = 0; k < n; ++k)
        if (std::abs(out[k] - std::polar(1.0, -2 * static_cast<double>(kPi) * k / n)) > 1e-12) {
          failures.add("application FFTW plan of size " + std::to_string(n) + " gave a wrong result");
          return;
        }
    }
  });
  report(failures);
}

// sfft_last_error() is per thread: a failure in one thread is invisible to the others, survives their
// calls, and is cleared only by the same thread's next call.
TEST(LastError, IsThreadLocal) {
  (void)sfft_cuda_device_count();  // clears this thread's error: it must stay empty through the test
  Barrier step(kThreads);
  std::vector<std::string> after_own_failure(kThreads), after_others(kThreads);
  std::vector<const char *> pointers(kThreads);
  std::vector<sfft_status> statuses(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<int64_t> shape = {4};
      float data[4] = {0, 1, 2, 3};
      // Each thread fails with its own ndim, so each message is distinct.
      statuses[t] = fftshift_nd(data, data, -(t + 1), shape.data(), 0, SFFT_FLOAT32, nullptr);
      after_own_failure[t] = sfft_last_error();
      pointers[t] = sfft_last_error();
      step.wait();
      // Odd threads now succeed (clearing only their own error) while even threads keep theirs.
      if (t % 2 == 1) fftshift_nd(data, data, 1, shape.data(), 0, SFFT_FLOAT32, nullptr);
      step.wait();
      after_others[t] = sfft_last_error();
    });
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    SCOPED_TRACE(t);
    EXPECT_EQ(statuses[t], SFFT_ERROR_INVALID_ARGUMENT);
    std::string mine = "ndim = " + std::to_string(-(t + 1));
    EXPECT_NE(after_own_failure[t].find(mine), std::string::npos) << after_own_failure[t];
    if (t % 2 == 1)
      EXPECT_EQ(after_others[t], "");
    else
      EXPECT_EQ(after_others[t], after_own_failure[t]);
    for (int u = 0; u < t; ++u) EXPECT_NE(pointers[t], pointers[u]) << "threads share one error buffer";
  }
  // The main thread never failed: its message is still empty.
  EXPECT_STREQ(sfft_last_error(), "");
}

}  // namespace
