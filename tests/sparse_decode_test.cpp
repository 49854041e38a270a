// SPDX-License-Identifier: Apache-2.0
// Bucket decoding of the sparse FFT (src/sparse/bucket_math.hpp) on hand-built buckets: what counts as
// one coefficient, and when a bucket is settled (the EXACT variant stops peeling after a loop whose
// buckets are all settled, so a wrong "settled" would silently drop coefficients). And the CUDA backend's
// bucket FFT arithmetic (src/sparse/bucket_fft.hpp), run on the host against a direct DFT.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "sparse/bucket_fft.hpp"
#include "sparse/bucket_math.hpp"

namespace {

using sfft::sparse::Cplx;
using sfft::sparse::Decoded;
using sfft::sparse::Geometry;
using sfft::sparse::LoopParams;

// n = 2^16, B = 64 buckets of width L = 1024, one 20-bit location stage (the EXACT complex128 defaults).
Geometry geometry() {
  Geometry g;
  g.n = uint64_t{1} << 16;
  g.mask = g.n - 1;
  g.buckets = 64;
  g.width = g.n / g.buckets;
  g.log2_width = 10;
  g.bits_per_stage = 20;
  g.stages = 1;
  g.hashings_per_loop = g.stages + 2;
  g.check_shift = 181;
  // Unit filter gain everywhere (one constant piece), as bucket() builds the hashings.
  static const std::array<double, sfft::sparse::kResponseTerms> kUnitGain = [] {
    std::array<double, sfft::sparse::kResponseTerms> c{};
    c.back() = 1;  // the constant term (Horner order)
    return c;
  }();
  g.response.coeffs = kUnitGain.data();
  g.response.pieces = 1;
  g.response.scale = 1.0 / static_cast<double>(g.width);
  g.consistency = 1e-5;
  sfft::sparse::set_derived_terms(g);
  return g;
}

struct Coefficient {
  uint64_t u;  // permuted frequency
  Cplx<double> value;
};

// Hashings 0..S+1 of bucket b holding the given coefficients (unit filter gain), as decode_bucket reads them.
std::vector<Cplx<double>> bucket(const Geometry &g, const std::vector<Coefficient> &coefficients) {
  std::vector<Cplx<double>> z(static_cast<std::size_t>(g.hashings_per_loop), Cplx<double>{0, 0});
  for (int h = 0; h < g.hashings_per_loop; ++h) {
    for (const Coefficient &c : coefficients) {
      Cplx<double> r =
          sfft::sparse::cmul(c.value, sfft::sparse::root_of_unity(c.u * sfft::sparse::hashing_shift(g, h), g));
      z[static_cast<std::size_t>(h)].re += r.re;
      z[static_cast<std::size_t>(h)].im += r.im;
    }
  }
  return z;
}

Decoded decode(const Geometry &g, uint64_t b, const std::vector<Cplx<double>> &z) {
  LoopParams identity;  // sigma = 1, tau = 0: permuted and true frequencies coincide
  return sfft::sparse::decode_bucket(
      b, [&](int h) { return z[static_cast<std::size_t>(h)]; }, identity, 1e-12, g);
}

constexpr double kRms = 1.0, kSettle = 1e-9;

TEST(sparse_decode, LoneCoefficientIsFoundAndSettled) {
  Geometry g = geometry();
  const uint64_t b = 9, u = b * g.width + 300;
  auto z = bucket(g, {{u, {0.6, -0.8}}});
  Decoded d = decode(g, b, z);
  EXPECT_TRUE(d.found);
  EXPECT_TRUE(d.consistent);
  EXPECT_EQ(d.freq, u);
  EXPECT_LT(d.mismatch2, 1e-24);
  EXPECT_TRUE(sfft::sparse::settled(z[0], d, kRms, kSettle));
}

TEST(sparse_decode, NeighboursCoefficientIsConsistentButNotFound) {
  // u's home is bucket 10 (offset -0.4 L from its centre); bucket 9 sees it 0.6 L away.
  Geometry g = geometry();
  const uint64_t u = 10 * g.width - 410;
  auto z = bucket(g, {{u, {0.3, 0.4}}});
  Decoded d = decode(g, 9, z);
  EXPECT_FALSE(d.found);
  EXPECT_TRUE(d.consistent);
  EXPECT_TRUE(sfft::sparse::settled(z[0], d, kRms, kSettle));
}

TEST(sparse_decode, HiddenSmallCoefficientIsFoundButNotSettled) {
  // A second coefficient 1e-6 the size of the first passes the 1e-5 consistency test (the bucket decodes
  // as the large one), but it is far above the settle level: later loops must still run to find it.
  Geometry g = geometry();
  const uint64_t b = 20, u = b * g.width + 17;
  auto z = bucket(g, {{u, {1, 0}}, {u + 333, {1e-6, 0}}});
  Decoded d = decode(g, b, z);
  EXPECT_TRUE(d.found);
  EXPECT_EQ(d.freq, u);
  EXPECT_GT(d.mismatch2, kSettle * kSettle * kRms * kRms);
  EXPECT_FALSE(sfft::sparse::settled(z[0], d, kRms, kSettle));
  // Below the settle level the same bucket is settled.
  auto tiny = bucket(g, {{u, {1, 0}}, {u + 333, {1e-12, 0}}});
  Decoded dt = decode(g, b, tiny);
  EXPECT_TRUE(dt.found);
  EXPECT_TRUE(sfft::sparse::settled(tiny[0], dt, kRms, kSettle));
}

TEST(sparse_decode, CollisionIsNeitherFoundNorSettled) {
  Geometry g = geometry();
  const uint64_t b = 33, u = b * g.width + 100;
  auto z = bucket(g, {{u, {1, 0}}, {u + 250, {0, 0.7}}});
  Decoded d = decode(g, b, z);
  EXPECT_FALSE(d.found);
  EXPECT_FALSE(d.consistent);
  EXPECT_FALSE(sfft::sparse::settled(z[0], d, kRms, kSettle));
}

TEST(sparse_decode, EmptyBucketIsSettledOnlyBelowTheLevel) {
  Geometry g = geometry();
  const uint64_t b = 40;
  // Residue below the decoding floor: neither found nor consistent; settled by its size alone.
  auto empty = bucket(g, {{b * g.width + 5, {1e-13, 0}}, {b * g.width + 90, {0, 1e-13}}});
  Decoded d = decode(g, b, empty);
  EXPECT_FALSE(d.found);
  EXPECT_TRUE(sfft::sparse::settled(empty[0], d, kRms, kSettle));
  // A collision of two small coefficients above the settle level is not.
  auto small = bucket(g, {{b * g.width + 5, {1e-7, 0}}, {b * g.width + 90, {0, 1e-7}}});
  Decoded ds = decode(g, b, small);
  EXPECT_FALSE(ds.consistent);
  EXPECT_FALSE(sfft::sparse::settled(small[0], ds, kRms, kSettle));
}

TEST(sparse_decode, NonFinitePhaseIsRejected) {
  Geometry g = geometry();
  std::vector<Cplx<double>> z(3, Cplx<double>{1, 0});
  z[1] = {NAN, 0};
  Decoded d = decode(g, 3, z);
  EXPECT_FALSE(d.found);
  EXPECT_FALSE(d.consistent);
}

// The modular arithmetic of lengths that are not powers of two: Barrett quotients and remainders against
// the hardware division, at the edges (x near 2^64, d near 2^32, d = 1) and at random, and mul_mod /
// add_mod / tap_index / home_bucket against 128-bit or signed references for n = 3 x 5 x 2^12.
TEST(sparse_decode, ArithmeticModuloOtherLengths) {
  using sfft::sparse::quotient_by;
  using sfft::sparse::remainder_by;
  std::mt19937_64 rng(5);
  const uint64_t divisors[] = {1, 2, 3, 7, 1000, 15625, 61440, (uint64_t{1} << 31) - 1, (uint64_t{1} << 32) - 5};
  for (uint64_t d : divisors) {
    const uint64_t reciprocal = ~uint64_t{0} / d;
    std::vector<uint64_t> xs = {0, 1, d - 1, d, d + 1, 2 * d - 1, ~uint64_t{0}, ~uint64_t{0} - d, uint64_t{1} << 63};
    for (int i = 0; i < 2000; ++i) xs.push_back(i % 2 ? rng() : rng() >> (rng() % 64));
    for (uint64_t x : xs) {
      ASSERT_EQ(quotient_by(x, d, reciprocal), x / d) << x << " / " << d;
      ASSERT_EQ(remainder_by(x, d, reciprocal), x % d) << x << " % " << d;
    }
  }
  // Bucket quotients and remainders, B a power of two (shift and mask) or not (Barrett).
  for (uint64_t buckets : {uint64_t{64}, uint64_t{1} << 20, uint64_t{150}, uint64_t{2 * 1009}}) {
    Geometry gb = geometry();
    gb.buckets = buckets;
    gb.n = buckets * 7;
    gb.mask = 0;
    gb.width = 7;
    sfft::sparse::set_derived_terms(gb);
    EXPECT_EQ(gb.bucket_mask != 0, (buckets & (buckets - 1)) == 0);
    for (int i = 0; i < 2000; ++i) {
      const uint64_t x = i % 2 ? rng() : rng() >> (rng() % 64);
      ASSERT_EQ(sfft::sparse::div_b(x, gb), x / buckets) << x << " / " << buckets;
      ASSERT_EQ(sfft::sparse::mod_b(x, gb), x % buckets) << x << " % " << buckets;
    }
  }
  Geometry g = geometry();
  g.n = 15 * (uint64_t{1} << 12);
  g.mask = 0;
  g.width = g.n / g.buckets;
  g.log2_width = 10;  // ceil(log2 960)
  sfft::sparse::set_derived_terms(g);
  __extension__ typedef unsigned __int128 Wide;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t a = rng() % g.n, b = rng() % g.n;
    ASSERT_EQ(sfft::sparse::mul_mod(a, b, g), static_cast<uint64_t>(static_cast<Wide>(a) * b % g.n));
    ASSERT_EQ(sfft::sparse::add_mod(a, b, g), (a + b) % g.n);
    const int64_t t = static_cast<int64_t>(rng() % (4 * g.n)) - static_cast<int64_t>(2 * g.n);
    const int64_t want = (static_cast<int64_t>(a) + static_cast<int64_t>(b) * (t % static_cast<int64_t>(g.n))) %
                         static_cast<int64_t>(g.n);
    ASSERT_EQ(sfft::sparse::tap_index(a, b, t, g),
              static_cast<uint64_t>(want < 0 ? want + static_cast<int64_t>(g.n) : want))
        << a << " " << b << " " << t;
    int64_t offset = 0;
    const uint64_t home = sfft::sparse::home_bucket(a, g, &offset);
    ASSERT_LT(home, g.buckets);
    ASSERT_GE(offset, -static_cast<int64_t>(g.width / 2));
    ASSERT_LT(offset, static_cast<int64_t>(g.width - g.width / 2));
    ASSERT_EQ((home * g.width + static_cast<uint64_t>(offset) + g.n) % g.n, a);
  }
}

// cuda/fold.cu's normalise_fft_kernel's transform (bucket_fft_passes), one butterfly at a time: the same passes and
// buffers, with a loop for its threads and nothing for its barriers. Returns the transform in natural order.
template <class Real>
std::vector<Cplx<Real>> bucket_fft_on_host(const std::vector<Cplx<Real>> &in) {
  const auto n = static_cast<unsigned>(in.size());
  const std::vector<Cplx<Real>> twiddle = sfft::sparse::bucket_fft_twiddles<Real>(n);
  std::vector<Cplx<Real>> a(sfft::sparse::fft_slot(n)), b(a.size());
  for (unsigned i = 0; i < n; ++i) a[sfft::sparse::fft_slot(i)] = in[i];
  const Cplx<Real> *x = sfft::sparse::bucket_fft_passes(
      a.data(), b.data(), n, twiddle.data(),
      [](unsigned count, auto &&butterfly) {
        for (unsigned j = 0; j < count; ++j) butterfly(j);
      },
      [] {});
  std::vector<Cplx<Real>> out(n);
  for (unsigned i = 0; i < n; ++i) out[i] = x[sfft::sparse::fft_slot(i)];
  return out;
}

// Every power-of-two length the kernel takes (2 .. 4096: each form of the last pass, radix 8 alone, 4 and 2),
// both precisions, against a direct DFT in long double: the largest error within a few rounding units of the
// precision times the transform's magnitude (radix-8 passes: about log8 B roundings a point).
template <class Real>
void expect_bucket_fft_matches_direct_dft(double tolerance) {
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<Real> value(-1, 1);
  for (unsigned n = 2; n <= 4096; n *= 2) {
    std::vector<Cplx<Real>> in(n);
    for (auto &v : in) v = {value(rng), value(rng)};
    const std::vector<Cplx<Real>> out = bucket_fft_on_host(in);
    std::vector<long double> cosine(n), sine(n);  // of -2 pi m / n
    for (unsigned m = 0; m < n; ++m) {
      const long double turn = 2.0L * 3.14159265358979323846264338327950288L * m / n;
      cosine[m] = std::cos(turn);
      sine[m] = -std::sin(turn);
    }
    double largest = 0, error = 0;
    for (unsigned k = 0; k < n; ++k) {
      long double re = 0, im = 0;
      for (unsigned t = 0; t < n; ++t) {
        const unsigned m = static_cast<unsigned>((static_cast<uint64_t>(t) * k) % n);
        re += in[t].re * cosine[m] - in[t].im * sine[m];
        im += in[t].re * sine[m] + in[t].im * cosine[m];
      }
      largest = std::max(largest, static_cast<double>(std::hypot(re, im)));
      error = std::max(error, static_cast<double>(std::hypot(out[k].re - re, out[k].im - im)));
    }
    EXPECT_LE(error, tolerance * largest) << "B = " << n << (sizeof(Real) == 4 ? " complex64" : " complex128");
    if (n == 4096)
      std::printf("  bucket FFT B = 4096 %s: largest error %.2e of the largest output\n",
                  sizeof(Real) == 4 ? "complex64" : "complex128", error / largest);
  }
}

TEST(sparse_bucket_fft, PassesMatchADirectDft) {
  expect_bucket_fft_matches_direct_dft<float>(1e-6);
  expect_bucket_fft_matches_direct_dft<double>(3e-15);
}

}  // namespace
