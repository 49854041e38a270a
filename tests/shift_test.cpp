// SPDX-License-Identifier: Apache-2.0
// fftshift_nd / ifftshift_nd against NumPy's definition (element i of a shifted axis of extent n moves
// to (i + n/2) % n for fftshift, (i + (n+1)/2) % n for ifftshift), every dtype, odd/even extents, axis
// subsets, in and out of place, on the CPU and CUDA backends; plus the bad-input contract.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/copy.hpp"
#include "shift/orbits.hpp"
#include "shift/pairs.hpp"
#include "shift/shift.hpp"
#include "shift_reference.hpp"
#include "test_support.hpp"

namespace {

using sfft_test::shift_reference;
using Shape = std::vector<int64_t>;

std::vector<unsigned char> pattern(std::size_t bytes, uint64_t seed) {
  std::vector<unsigned char> v(bytes);
  std::mt19937_64 rng(seed);
  for (auto &b : v) b = static_cast<unsigned char>(rng());
  return v;
}

std::size_t count_of(const Shape &s) {
  return std::accumulate(s.begin(), s.end(), std::size_t{1}, [](std::size_t a, int64_t b) { return a * b; });
}

// For each word of a normalised layout, the word it receives: out[(i + shift) % extent] = in[i] along every dim.
std::vector<std::size_t> shifted_sources(const sfft::shift::Layout &l) {
  std::vector<std::size_t> source(l.words);
  for (std::size_t f = 0; f < l.words; ++f) {
    std::size_t rem = f, dst = 0, stride = 1;
    for (int d = l.ndim - 1; d >= 0; --d) {
      auto e = static_cast<std::size_t>(l.extent[d]);
      std::size_t i = rem % e;
      rem /= e;
      dst += ((i + static_cast<std::size_t>(l.shift[d])) % e) * stride;
      stride *= e;
    }
    source[dst] = f;
  }
  return source;
}

struct Case {
  Shape shape;
  uint32_t mask;
};

const std::vector<Case> &cases() {
  static const std::vector<Case> c = {
      {{1}, 0},
      {{2}, 0},
      {{7}, 0},
      {{8}, 0},
      {{100003}, 0},
      {{5, 6}, 0},
      {{5, 6}, 1},
      {{5, 6}, 2},
      {{6, 5}, 0},
      {{511, 512}, 3},
      {{3, 1, 4}, 0},
      {{7, 9, 11}, 0},
      {{7, 9, 11}, 5},
      {{8, 10, 12}, 6},
      {{4, 5, 6, 7}, 0xA},
      {{2, 3, 2, 3, 2}, 0},
      {{1, 1, 1}, 0},
      {{3, 3, 3, 3, 3, 3, 3, 3}, 0x55},
      {{64, 1000}, 2},
      {{9, 4096}, 1},
      {{3, 33000}, 0},
      {{70000, 3}, 2},
      // CUDA out of place, 2-D rows around the length below which each word's source row is computed instead of
      // tabled (under 16 words of 4 bytes, under 8 of 8 bytes), over several tiles.
      {{1001, 15}, 0},
      {{999, 7}, 0},
      // In place with odd extents (the pair order, src/shift/pairs.hpp): chains (inner blocks of 32 words
      // and more on CUDA, 64 on the CPU) with 1, 2, 4 and 8 inner dims and several batches, with and without
      // an even outer dim; tiles / buffered batches (shorter inner blocks) with shifted and unshifted inner
      // dims, several outer elements per tile, outer even dims, many batches (1-D); a row longer than a
      // CPU item; an unshifted trailing block.
      {{1000001}, 0},
      // 1-D around the CUDA rotation's batch sizes (4096 steps of 4-byte words, 2048 of 8-byte ones): one
      // batch exactly, a last batch of the middle step alone, several batches.
      {{4097}, 0},
      {{8191}, 0},
      {{8193}, 0},
      {{16385}, 0},
      {{64, 1001}, 0},
      {{10, 4001}, 0},
      {{4, 33, 45}, 0},
      {{2, 9, 4, 5}, 0},
      // A short first odd axis gives way to a longer later one (its outer elements then move along chains).
      {{3, 100003}, 0},
      {{5, 4, 3, 3001}, 0},
      {{3, 70, 3}, 0},
      {{255, 257, 9}, 0},
      {{5, 7, 3, 1000}, 7},
      {{17, 19, 23, 3}, 0},
      {{3, 5, 7, 9, 11}, 0},
      {{101, 103}, 0},
      {{3, 100003}, 1},
      // CUDA: the rotation over rows (src/shift/cuda.cu, rotate_kernel) where σ moves rows (float32: 3
      // rows a block; wider words take the tiles) and where it swaps them (8-byte words: a row a block; float32
      // row pairs take the block stage, complex128 the tiles); both with a last batch of the middle step alone.
      // Where it keeps them (an unshifted first axis of 3 rows, 8-byte rows too long for the block stage): a row
      // a block, in groups of one row (grouped_batch_row; complex128: the tiles, likewise).
      {{3, 4097}, 0},
      {{4, 8193}, 3},
      {{3, 16385}, 2},
      // CPU chain items are row ranges of planes (the last two inner dims) moved as rotated tiles: several
      // plane digits, row groups splitting a plane, pieces of rows longer than an item with two batches, an
      // unshifted row dim, a trailing unshifted dim (split word), 5-D axis subsets.
      {{13, 3, 5, 11, 43}, 0},
      {{33, 129, 257}, 0},
      {{67, 8195}, 0},
      // Chains with three inner dims; short rows of one and two inner dims under a long odd axis (CUDA: the
      // staged rotation of rows), several batches.
      {{33, 5, 7, 129}, 0},
      // Chains under rows of 32-128 words with 1-3 inner dims above them (CUDA: the rows' chains straddle warps,
      // or fill them at 32 and 64 words), several batches, an even outer dim, an even and an unshifted dim among
      // the inner ones.
      {{9, 11, 45}, 0},
      {{129, 5, 69}, 0},
      {{65, 4, 3, 100}, 0},
      {{7, 6, 32}, 0},
      {{4, 9, 5, 7, 33}, 0},
      {{11, 13, 64}, 5},
      {{100003, 5}, 0},
      {{4099, 3, 7}, 0},
      {{7, 9, 11, 13, 15}, 0x16},
      {{5, 7, 9, 11, 3}, 0xF},
      {{9, 5, 7, 3, 11}, 0x1D},
      // In place on CUDA, a leading unshifted or half-shifted axis over blocks that fit in shared memory
      // (src/shift/cuda.cu's block stage): tiles of many rows with a partial last tile, one row per tile
      // (complex64: 64 KiB, above the default shared memory of a block; complex128: too large, the pair order),
      // blocks of two shifted axes, a trailing unshifted split axis; the same with the leading axis shifted by
      // half (tiles of block pairs; float32 8191-word rows: 64 KiB pairs, wider words the pair order).
      {{200, 511}, 2},
      {{40, 8191}, 2},
      {{37, 7, 9}, 6},
      {{100, 9, 3}, 2},
      // float32: a one-row stage of 48,884 bytes, above 48 KiB less the kernel's static shared memory.
      {{3, 12220}, 2},
      {{200, 511}, 3},
      {{40, 8191}, 3},
      {{36, 7, 9}, 7},
      {{100, 9, 3}, 3},
      // In place with every shift half an even extent (CUDA: the lower half swapped with its partners): the
      // first shifted axis last (half rows), in the middle over several outer indices whose lower runs of two
      // rows share a tile, rows of two words (a tile of 2050 rows and their partners), rows longer than a tile.
      {{3, 4, 6}, 6},
      {{5, 2, 10}, 6},
      {{4096, 2}, 0},
      {{6, 4, 8}, 0},
      {{4, 10000}, 0},
      {{3, 20000}, 2},
      // A trailing unshifted split block (join_unshifted_last: rows join the last shifted axis) under even shifted
      // axes, and in rows of 2100 words (longer than a CUDA copy tile of 8- and 16-byte words).
      {{8, 6, 3}, 3},
      {{6, 40, 700, 3}, 7},
      // CPU chains over rows of a few words, shifted (runs of whole rows): planes of 19 rows, and planes of 2000
      // rows in two groups of rows.
      {{33, 19, 5}, 0},
      {{33, 2000, 5}, 0},
      // Rows of 13 words (CPU: the tiny-row gather out of place, batches of 13-word blocks in place).
      {{20001, 13}, 0},
      // CPU chains over small planes of tiny rows: items take runs of planes along the last plane dim (a run of 234
      // planes and a partial one of 166).
      {{33, 400, 7, 5}, 0},
      // A short odd first axis over a block of more than 1 MiB (the CPU saves its middle slab in 1 MiB pieces,
      // the last one partial; complex128: a scratch buffer above 4 MiB, on huge pages where offered).
      {{3, 262147}, 1},
      // CUDA in place: one short odd axis, every other shift 0 or half (orbits.hpp, whole orbits a thread): first
      // over rows that pair, alone over an unshifted block (7 planes: narrowed to 8-byte words), under an outer
      // dim and over two inner ones shifted by half, 15 planes (narrowed to 4-byte words for every dtype), the
      // halved dim last, a trailing unshifted block of 3 elements; the pair order where rows are short
      // (4 x 6 x 3 x 10).
      {{3, 64, 64}, 0},
      {{7, 4, 33}, 1},
      {{2, 3, 4, 48}, 0},
      {{15, 2, 64}, 0},
      {{9, 8, 64}, 5},
      {{3, 6, 40, 3}, 7},
      {{4, 6, 3, 10}, 0},
      // CUDA out of place, rows of a few words under two or more shifted dims: each word's row stepped within a
      // plane (the dim above the rows, 90 rows: a thread's step of 85-86 rows crosses a plane), a table of the 5
      // planes (the whole array is one tile); planes over two dims; a dim above the rows too short to step in (40
      // rows: the table of rows). Tiles of many planes: OutOfPlaceBeyondOneGridPass.
      {{5, 90, 3}, 0},
      {{3, 7, 300, 5}, 0},
      {{5, 40, 3}, 0},
  };
  return c;
}

enum class Where { Cpu, CudaDevice, CudaHost };

std::string where_name(Where w) {
  return w == Where::Cpu ? "cpu" : w == Where::CudaDevice ? "cuda_device" : "cuda_staged_host";
}

class ShiftTest : public ::testing::TestWithParam<std::tuple<Where, sfft_dtype>> {};

void run_all_cases(Where where, sfft_dtype dtype) {
  const std::size_t elem = sfft_test::shift_dtype_bytes(dtype);
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
  uint64_t seed = 1;
  for (const Case &c : cases()) {
    for (bool inverse : {false, true}) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << "shape rank " << c.shape.size() << " first " << c.shape[0] << " mask " << c.mask
                     << (inverse ? " ifftshift" : " fftshift") << (in_place ? " in place" : " out of place"));
        std::size_t bytes = count_of(c.shape) * elem;
        auto in = pattern(bytes, seed++);
        auto want = shift_reference(in, c.shape, c.mask, elem, inverse);
        auto fn = inverse ? ifftshift_nd : fftshift_nd;
        std::vector<unsigned char> got(bytes);
        int nd = static_cast<int>(c.shape.size());
        if (where == Where::CudaDevice) {
          sfft_test::DeviceMemory d_in(bytes), d_out(bytes);
          d_in.upload(in.data(), bytes);
          void *dst = in_place ? d_in.get() : d_out.get();
          ASSERT_EQ(fn(dst, d_in.get(), nd, c.shape.data(), c.mask, dtype, &opts), SFFT_SUCCESS) << sfft_last_error();
          sfft_test::device_synchronize();
          (in_place ? d_in : d_out).download(got.data(), bytes);
        } else {
          std::vector<unsigned char> buf = in;
          void *dst = in_place ? static_cast<void *>(buf.data()) : static_cast<void *>(got.data());
          ASSERT_EQ(fn(dst, buf.data(), nd, c.shape.data(), c.mask, dtype, &opts), SFFT_SUCCESS) << sfft_last_error();
          if (in_place)
            got = buf;
          else
            EXPECT_EQ(buf, in) << "out-of-place shift modified its input";
        }
        ASSERT_EQ(got, want);
      }
    }
  }
}

TEST_P(ShiftTest, MatchesNumpyDefinition) {
  auto [where, dtype] = GetParam();
  if (where != Where::Cpu) SFFT_SKIP_WITHOUT_GPU();
  run_all_cases(where, dtype);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, ShiftTest,
                         ::testing::Combine(::testing::Values(Where::Cpu, Where::CudaDevice, Where::CudaHost),
                                            ::testing::Values(SFFT_FLOAT32, SFFT_FLOAT64, SFFT_COMPLEX64,
                                                              SFFT_COMPLEX128)),
                         [](const auto &info) {
                           return where_name(std::get<0>(info.param)) + "_dtype" +
                                  std::to_string(std::get<1>(info.param));
                         });

// ifftshift undoes fftshift on a larger odd/even 3-D array, in place, on each backend.
TEST(ShiftRoundTrip, InPlaceLargeOddEven) {
  for (Where where : {Where::Cpu, Where::CudaDevice}) {
    if (where == Where::CudaDevice && !sfft_test::have_gpu()) continue;
    sfft_options opts;
    sfft_options_init(&opts);
    opts.backend = where == Where::Cpu ? SFFT_BACKEND_CPU : SFFT_BACKEND_CUDA;
    Shape shape = {63, 64, 65};
    std::size_t bytes = count_of(shape) * 8;
    auto in = pattern(bytes, 99);
    std::vector<unsigned char> buf = in;
    if (where == Where::Cpu) {
      ASSERT_EQ(fftshift_nd(buf.data(), buf.data(), 3, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS);
      ASSERT_NE(buf, in);
      ASSERT_EQ(ifftshift_nd(buf.data(), buf.data(), 3, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS);
    } else {
      sfft_test::DeviceMemory d(bytes);
      d.upload(in.data(), bytes);
      ASSERT_EQ(fftshift_nd(d.get(), d.get(), 3, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS);
      ASSERT_EQ(ifftshift_nd(d.get(), d.get(), 3, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS);
      sfft_test::device_synchronize();
      d.download(buf.data(), bytes);
    }
    EXPECT_EQ(buf, in) << where_name(where);
  }
}

// Managed memory (AUTO picks CUDA) and a caller's non-blocking stream (the call is asynchronous on it).
TEST(ShiftCuda, ManagedMemoryAndCallerStream) {
  SFFT_SKIP_WITHOUT_GPU();
  Shape shape = {33, 64};
  const std::size_t n = count_of(shape), bytes = n * 8;
  auto in = pattern(bytes, 17);
  auto want = shift_reference(in, shape, 0, 8, false);
  sfft_test::ManagedMemory a(bytes), b(bytes);
  std::memcpy(a.get(), in.data(), bytes);
  sfft_test::TestStream stream;
  sfft_options opts;
  sfft_options_init(&opts);
  opts.stream = stream.get();
  ASSERT_EQ(fftshift_nd(b.get(), a.get(), 2, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS)
      << sfft_last_error();
  ASSERT_EQ(fftshift_nd(a.get(), a.get(), 2, shape.data(), 0, SFFT_COMPLEX64, &opts), SFFT_SUCCESS)
      << sfft_last_error();
  stream.synchronize();
  EXPECT_EQ(std::memcmp(b.get(), want.data(), bytes), 0) << "managed out of place";
  EXPECT_EQ(std::memcmp(a.get(), want.data(), bytes), 0) << "managed in place (odd extent: the pair order)";
}

// fftshift_nd of `shape` (the axes of `mask`, 0 = every axis) on the CUDA backend, device to device (in place or out
// of place), checked against the definition.
void expect_device_shift_matches(const Shape &shape, sfft_dtype dtype, std::size_t elem, bool in_place, uint64_t seed,
                                 uint32_t mask = 0) {
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  const std::size_t bytes = count_of(shape) * elem;
  auto in = pattern(bytes, seed);
  auto want = shift_reference(in, shape, mask, elem, false);
  sfft_test::DeviceMemory a(bytes), b(in_place ? 0 : bytes);
  a.upload(in.data(), bytes);
  const int nd = static_cast<int>(shape.size());
  void *out = in_place ? a.get() : b.get();
  ASSERT_EQ(fftshift_nd(out, a.get(), nd, shape.data(), mask, dtype, &opts), SFFT_SUCCESS) << sfft_last_error();
  sfft_test::device_synchronize();
  std::vector<unsigned char> got(bytes);
  (in_place ? a : b).download(got.data(), bytes);
  std::string dims;
  for (int64_t e : shape) dims += (dims.empty() ? "" : "x") + std::to_string(e);
  EXPECT_TRUE(got == want) << "dtype " << dtype << ", " << dims << (in_place ? ", in place" : ", out of place");
}

const std::pair<sfft_dtype, std::size_t> kWordKinds[] = {{SFFT_FLOAT32, 4}, {SFFT_FLOAT64, 8}, {SFFT_COMPLEX128, 16}};

// Out of place, arrays larger than one pass of the copy kernel's grid (32 blocks a multiprocessor, 16 KiB tiles:
// about 70 MiB on an H200), so blocks step from tile to tile: short odd rows (5 words) under one dim and (3 words)
// under two (planes of 97 rows), odd rows of a few thousand words and rows longer than a tile, in 4-, 8- and
// 16-byte words.
TEST(ShiftCuda, OutOfPlaceBeyondOneGridPass) {
  SFFT_SKIP_WITHOUT_GPU();
  for (const auto &[dtype, elem] : kWordKinds) {
    const auto words = static_cast<int64_t>((std::size_t{104} << 20) / elem);  // 104 MiB
    const int64_t side = static_cast<int64_t>(std::sqrt(static_cast<double>(words))) | 1;
    for (const Shape &shape :
         {Shape{(words / 5) | 1, 5}, Shape{(words / 291) | 1, 97, 3}, Shape{side, side + 2}, Shape{3, (words / 3) | 1}})
      expect_device_shift_matches(shape, dtype, elem, false, 31);
  }
}

// In place with even extents, arrays larger than one pass of the swap kernel's grid (32 blocks a multiprocessor,
// 16 KiB of lower-half words a tile: about 130 MiB on an H200), so blocks step from tile to tile: rows of 4096
// elements (whole rows swapped with their partners), two rows longer than a tile, and one long row (its halves).
TEST(ShiftCuda, InPlaceSwapsBeyondOneGridPass) {
  SFFT_SKIP_WITHOUT_GPU();
  for (const auto &[dtype, elem] : kWordKinds) {
    const auto words = static_cast<int64_t>((std::size_t{150} << 20) / elem / 8 * 8);  // 150 MiB
    for (const Shape &shape : {Shape{words / 4096 / 2 * 2, 4096}, Shape{2, words / 2}, Shape{words}})
      expect_device_shift_matches(shape, dtype, elem, true, 37);
  }
}

// In place, a short odd first axis over even ones (cuda.cu, orbits: 2 orbits a thread, 512 a block, 32 blocks a
// multiprocessor), arrays of more orbits than one grid pass so blocks step on: 3 x N x 4096 (every axis; 16-byte
// words, pairs of orbits) and 5 x N x 4096 with axis 0 alone (narrowed to 8-byte words, orbits without a partner);
// 216 MiB each.
TEST(ShiftCuda, InPlaceOrbitsBeyondOneGridPass) {
  SFFT_SKIP_WITHOUT_GPU();
  for (const auto &[dtype, elem] : kWordKinds) {
    const auto planes = static_cast<int64_t>((std::size_t{216} << 20) / (4096 * elem));
    expect_device_shift_matches(Shape{3, planes / 3 / 2 * 2, 4096}, dtype, elem, true, 43);
    expect_device_shift_matches(Shape{5, planes / 5, 4096}, dtype, elem, true, 47, 1);
  }
}

// In place, chains of 16-byte words with enough of them to keep that width (src/shift/cuda.cu, few_wide_chains: at
// least 4 blocks of 512 chains a multiprocessor, up to 160 multiprocessors here): the small cases above all have
// fewer and run as 4-byte words. 2049 x 20480 float32 (rows fold into 16-byte words, 5120 a row): 61 batches,
// 312,320 chains (610 blocks), 168 MB.
TEST(ShiftCuda, InPlaceWideChains) {
  SFFT_SKIP_WITHOUT_GPU();
  expect_device_shift_matches(Shape{2049, 20480}, SFFT_FLOAT32, 4, true, 41);
}

// Buffers that are not 16-byte aligned (4-byte elements 4 bytes in, 8-byte ones 8 bytes in) take the word-by-word
// tile kernels out of place, and in place the word-by-word block stage (64 x 255), where aligned ones take the
// staged or vector kernels: same results.
TEST(ShiftCuda, UnalignedBuffers) {
  SFFT_SKIP_WITHOUT_GPU();
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  const std::pair<sfft_dtype, std::size_t> kinds[] = {{SFFT_FLOAT32, 4}, {SFFT_FLOAT64, 8}, {SFFT_COMPLEX64, 8}};
  for (const auto &[dtype, elem] : kinds)
    for (const Shape &shape : {Shape{8191}, Shape{63, 65}, Shape{7, 9, 11}, Shape{70000, 3}, Shape{64, 255}})
      for (bool in_place : {false, true}) {
        const std::size_t bytes = count_of(shape) * elem;
        auto in = pattern(bytes, 23);
        auto want = shift_reference(in, shape, 0, elem, false);
        std::vector<unsigned char> padded(bytes + elem, 0);  // the array starts one element into each buffer
        std::memcpy(padded.data() + elem, in.data(), bytes);
        sfft_test::DeviceMemory a(bytes + elem), b(bytes + elem);
        a.upload(padded.data(), bytes + elem);
        const std::vector<unsigned char> zeros(bytes + elem, 0);
        b.upload(zeros.data(), bytes + elem);  // the element before the array is read back and must stay 0
        auto *src = static_cast<unsigned char *>(a.get()) + elem;
        auto *dst = in_place ? src : static_cast<unsigned char *>(b.get()) + elem;
        ASSERT_EQ(fftshift_nd(dst, src, static_cast<int>(shape.size()), shape.data(), 0, dtype, &opts), SFFT_SUCCESS)
            << sfft_last_error();
        sfft_test::device_synchronize();
        (in_place ? a : b).download(padded.data(), bytes + elem);
        EXPECT_TRUE(std::equal(want.begin(), want.end(), padded.begin() + static_cast<std::ptrdiff_t>(elem)))
            << "dtype " << dtype << " rank " << shape.size() << (in_place ? " in place" : " out of place");
        EXPECT_TRUE(std::all_of(padded.begin(), padded.begin() + static_cast<std::ptrdiff_t>(elem),
                                [](unsigned char byte) { return byte == 0; }))
            << "written before the array: dtype " << dtype << " rank " << shape.size();
      }
}

// In place with a leading unshifted or half-shifted dim over blocks staged whole in shared memory (cuda.cu,
// block_stage): stages of about 32 KiB (256 threads a CTA) and of about 64 KiB, single blocks and pairs (512
// threads), fftshift and ifftshift, against the definition.
TEST(ShiftCuda, InPlaceStagedBlocksAtBothWidths) {
  SFFT_SKIP_WITHOUT_GPU();
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  struct Case {
    Shape shape;
    uint32_t mask;
    sfft_dtype dtype;
    std::size_t elem;
  };
  const Case cases[] = {
      {{6, 8191}, 2, SFFT_FLOAT32, 4},    // rows of 32 KiB, dim 0 unshifted
      {{6, 8191}, 2, SFFT_COMPLEX64, 8},  // rows of 64 KiB
      {{5, 8191}, 2, SFFT_FLOAT64, 8},
      {{8, 8191}, 0, SFFT_FLOAT32, 4},  // dim 0 shifted by half: pairs of 32 KiB rows
      {{4, 2047}, 0, SFFT_COMPLEX128, 16},
      {{3, 16, 511}, 6, SFFT_FLOAT32, 4},  // several rows a block
  };
  for (const Case &c : cases)
    for (bool inverse : {false, true}) {
      const std::size_t bytes = count_of(c.shape) * c.elem;
      auto in = pattern(bytes, 41);
      auto want = shift_reference(in, c.shape, c.mask, c.elem, inverse);
      sfft_test::DeviceMemory d(bytes);
      d.upload(in.data(), bytes);
      const int rank = static_cast<int>(c.shape.size());
      const sfft_status st = inverse ? ifftshift_nd(d.get(), d.get(), rank, c.shape.data(), c.mask, c.dtype, &opts)
                                     : fftshift_nd(d.get(), d.get(), rank, c.shape.data(), c.mask, c.dtype, &opts);
      ASSERT_EQ(st, SFFT_SUCCESS) << sfft_last_error();
      sfft_test::device_synchronize();
      std::vector<unsigned char> got(bytes);
      d.download(got.data(), bytes);
      EXPECT_TRUE(got == want) << c.shape[0] << " x ... x " << c.shape.back() << " mask " << c.mask << " dtype "
                               << c.dtype << (inverse ? " ifftshift" : " fftshift");
    }
}

// In place with the odd shifted axis last (single words, S = 1) under other shifted axes, rows too long for the
// block stage: where the first axis is shifted by half (σ an involution) the rotation over rows (cuda.cu,
// rotate_kernel, a row a block) for 4- and 8-byte words with rows of 2 KiB halves and more, else the pair order's
// tiles (tile_kernel); where a short odd first axis moves rows (σ not an involution) the rotation with every row
// in a block for float32 over 3 rows, else the tiles; several batches, 4-, 8- and 16-byte words, fftshift and
// ifftshift, against the definition. 64 x 255 takes the block stage.
TEST(ShiftCuda, InPlaceOddLastAxisUnderShiftedRows) {
  SFFT_SKIP_WITHOUT_GPU();
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  const std::pair<sfft_dtype, std::size_t> f32{SFFT_FLOAT32, 4}, f64{SFFT_FLOAT64, 8}, c64{SFFT_COMPLEX64, 8},
      c128{SFFT_COMPLEX128, 16};
  const std::pair<Shape, std::pair<sfft_dtype, std::size_t>> cases[] = {
      {{6, 8191}, c64},
      {{4, 20001}, f32},
      {{2, 12289}, f64},
      {{3, 8193}, f32},
      {{3, 8193}, c64},
      {{7, 4099}, f32},
      {{5, 3, 4099}, f64},
      {{64, 255}, f32},
      // A row a block or tile, in groups of rows (pairs.hpp, grouped_batch_row): 10 rows of float64 (the rotation,
      // groups of 2) and 12 rows of complex128 (the tiles, groups of 4), several batches.
      {{10, 8193}, f64},
      {{12, 8193}, c128},
      // Rows that σ moves (not an involution), 4-byte words in a cluster of blocks a batch on sm_90 (cuda.cu,
      // RotateRows::cluster): 3 rows over several batches, 7 rows, 6 rows of two outer axes; 8-byte words (the
      // tiles), and 9 rows (too many rows for a cluster: the tiles).
      {{3, 65537}, f32},
      {{7, 40001}, f32},
      {{2, 3, 20001}, f32},
      {{5, 16385}, c64},
      {{3, 33333}, f64},
      {{9, 4099}, f32},
  };
  for (bool clusters : {true, false}) {
    // Without: the form for GPUs that have none (one block takes every row of a batch), on this one.
    std::unique_ptr<sfft_test::ScopedEnv> without;
    if (!clusters) without = std::make_unique<sfft_test::ScopedEnv>("SFFT_SHIFT_NO_CLUSTERS", "1");
    SCOPED_TRACE(clusters ? "clusters" : "SFFT_SHIFT_NO_CLUSTERS=1");
    for (const auto &[shape, kind] : cases)
      for (bool inverse : {false, true}) {
        const auto [dtype, elem] = kind;
        const std::size_t bytes = count_of(shape) * elem;
        auto in = pattern(bytes, 43);
        auto want = shift_reference(in, shape, 0, elem, inverse);
        sfft_test::DeviceMemory d(bytes);
        d.upload(in.data(), bytes);
        const int rank = static_cast<int>(shape.size());
        const sfft_status st = inverse ? ifftshift_nd(d.get(), d.get(), rank, shape.data(), 0, dtype, &opts)
                                       : fftshift_nd(d.get(), d.get(), rank, shape.data(), 0, dtype, &opts);
        ASSERT_EQ(st, SFFT_SUCCESS) << sfft_last_error();
        sfft_test::device_synchronize();
        std::vector<unsigned char> got(bytes);
        d.download(got.data(), bytes);
        EXPECT_TRUE(got == want) << shape[0] << " x ... x " << shape.back() << " dtype " << dtype
                                 << (inverse ? " ifftshift" : " fftshift");
      }
  }
}

// CPU out of place (x86-64), rows as whole tasks: a thread with 8 MiB or more of rows up to 4 KiB long to write
// (kStreamBytes, kShortRowBytes in src/shift/cpu.cpp) writes them through a stage with non-temporal stores; the
// cases above take ordinary stores. Rows of tens of bytes and of nearly 4 KiB (both crossing flushes of the 4 KiB
// stage), words of 4, 8 and 16 bytes, a trailing unshifted block, thread counts whose ranges begin and end inside
// cache lines, and an output one word off a cache line; rows of 2-7 words (kTinyRowWords: gathered into 4 KiB blocks
// first), a shifted last dim and an unshifted split one.
TEST(ShiftCpu, LargeOutOfPlaceStreams) {
  struct Large {
    Shape shape;
    uint32_t mask;
    sfft_dtype dtype;
    int threads;
    bool inverse;
    std::size_t offset_words;  // the output starts this many words into its buffer
  };
  const Large cases[] = {
      {{61, 63, 65, 43}, 0, SFFT_FLOAT32, 1, false, 0},    {{61, 63, 65, 43}, 0, SFFT_FLOAT32, 2, true, 0},
      {{61, 63, 65, 43}, 0, SFFT_FLOAT32, 3, false, 1},    {{61, 63, 65, 43}, 0x7, SFFT_FLOAT32, 2, false, 0},
      {{33, 35, 37, 43}, 0, SFFT_COMPLEX128, 2, false, 0}, {{4099, 509}, 0, SFFT_FLOAT64, 1, true, 1},
      {{4099, 255}, 0, SFFT_COMPLEX128, 1, false, 0},      {{2097153, 2}, 0, SFFT_FLOAT32, 1, false, 0},
      {{1398101, 3}, 0, SFFT_FLOAT64, 2, true, 1},         {{1048577, 4}, 0, SFFT_COMPLEX64, 2, false, 0},
      {{300007, 7}, 0x1, SFFT_COMPLEX128, 3, false, 0},
      // Rows of 3 words whose sources are short runs (a vector field shifted on every axis), and the same field
      // shifted on its grid axes only (rows of the last grid axis times the block).
      {{150, 151, 149, 3}, 0, SFFT_FLOAT32, 2, false, 1},  {{150, 151, 149, 3}, 0x7, SFFT_FLOAT32, 2, true, 0},
      {{1000003, 13}, 0, SFFT_FLOAT32, 2, true, 0},
  };
  for (const Large &c : cases) {
    SCOPED_TRACE(::testing::Message() << "shape rank " << c.shape.size() << " first " << c.shape[0] << " mask "
                                      << c.mask << " dtype " << c.dtype << " threads " << c.threads
                                      << (c.inverse ? " ifftshift" : " fftshift") << " offset " << c.offset_words);
    const std::size_t elem = sfft_test::shift_dtype_bytes(c.dtype), bytes = count_of(c.shape) * elem;
    auto in = pattern(bytes, 31);
    auto want = shift_reference(in, c.shape, c.mask, elem, c.inverse);
    std::vector<unsigned char> out(bytes + c.offset_words * elem);
    sfft_options opts;
    sfft_options_init(&opts);
    opts.backend = SFFT_BACKEND_CPU;
    opts.threads = c.threads;
    auto fn = c.inverse ? ifftshift_nd : fftshift_nd;
    ASSERT_EQ(fn(out.data() + c.offset_words * elem, in.data(), static_cast<int>(c.shape.size()), c.shape.data(),
                 c.mask, c.dtype, &opts),
              SFFT_SUCCESS)
        << sfft_last_error();
    EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin() + static_cast<std::ptrdiff_t>(c.offset_words * elem)));
  }
}

// CPU in place, a short odd first axis over rows (rotate_chunk_cycles, src/shift/cpu.cpp), run here at any size
// (the library takes it only where the pair order would save more than 64 MiB): cycles of row chunks, each row
// rotated by the last axis's shift, against NumPy's definition. 2-D and 3-D, both directions, every word size,
// chunks of one row (an odd row count) and of several (an even one), an unshifted last axis (a trailing block),
// 1 to 3 threads; and layouts it leaves to the pair order (chunks under 4 KiB, an even first axis), untouched.
TEST(ShiftCpu, InPlaceChunkCyclesMatchNumpy) {
  using namespace sfft::shift;
  struct Cycle {
    Shape shape;
    uint32_t mask;
    sfft_dtype dtype;
    int threads;
  };
  const Cycle cases[] = {
      {{3, 64, 1024}, 0, SFFT_FLOAT32, 2},    {{3, 63, 1024}, 0, SFFT_FLOAT32, 1},  {{5, 40, 1101}, 0, SFFT_FLOAT64, 2},
      {{7, 30, 2047}, 0, SFFT_COMPLEX128, 3}, {{3, 8192}, 0, SFFT_FLOAT32, 2},      {{9, 4096}, 0, SFFT_COMPLEX64, 2},
      {{3, 50, 1024}, 0x3, SFFT_FLOAT64, 2},  {{5, 96, 520}, 0x5, SFFT_FLOAT32, 2}, {{3, 2, 4096}, 0, SFFT_FLOAT32, 2},
  };
  for (const Cycle &c : cases)
    for (const bool inverse : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "shape " << c.shape[0] << "x" << c.shape[1]
                                        << (c.shape.size() > 2 ? "x" + std::to_string(c.shape[2]) : std::string())
                                        << " mask " << c.mask << " dtype " << c.dtype
                                        << (inverse ? " ifftshift" : " fftshift"));
      const std::size_t elem = sfft_test::shift_dtype_bytes(c.dtype), bytes = count_of(c.shape) * elem;
      auto data = pattern(bytes, 41);
      const auto want = shift_reference(data, c.shape, c.mask, elem, inverse);
      const Layout l = make_layout(static_cast<int>(c.shape.size()), c.shape.data(), c.mask, c.dtype, inverse, 16);
      ASSERT_TRUE(rotate_chunk_cycles(l, data.data(), c.threads, 0));
      EXPECT_TRUE(data == want);
    }
  const Shape declined[] = {
      {3, 63, 100}, {4, 64, 1024}, {3, 4095}};  // chunks of one 400-byte row; even axis; of 1 word
  for (const Shape &shape : declined) {
    auto data = pattern(count_of(shape) * 4, 43);
    const auto before = data;
    const Layout l = make_layout(static_cast<int>(shape.size()), shape.data(), 0, SFFT_FLOAT32, false, 16);
    EXPECT_FALSE(rotate_chunk_cycles(l, data.data(), 2, 0)) << shape[0] << "x" << shape[1];
    EXPECT_TRUE(data == before);
  }
}

// The pair order (src/shift/pairs.hpp) on its own: after the boundary slabs are saved, items run in any
// order (here: last first, and shuffled) and still give NumPy's result, with every word read from the data
// before anything overwrites it. Two item shapes, as the backends use them: a chain of one element through
// its batch, step by step (CUDA chains, CPU rows), and a whole (batch, o) block read before it is written
// (CUDA tiles, CPU buffered batches). Batch lengths from 1 step to all steps.
TEST(ShiftPairOrder, ItemsAreIndependent) {
  using namespace sfft::shift;
  const std::vector<Case> layouts = {
      {{101}, 0},         {{4001}, 0},      {{3}, 0},          {{7, 9, 11}, 0},     {{7, 9, 11}, 5},
      {{5, 7, 3, 40}, 7}, {{6, 5}, 0},      {{4, 5, 6, 7}, 0}, {{4, 5, 6, 7}, 0xA}, {{3, 3, 3, 3, 3}, 0},
      {{64, 63}, 0},      {{63, 64}, 0},    {{1, 301, 1}, 0},  {{3, 400}, 0},       {{400, 3}, 0},
      {{2, 9, 4, 5}, 0},  {{8, 5, 6}, 0x3}, {{3, 4001}, 0},    {{5, 4, 3, 301}, 0}, {{3, 70, 3}, 0},
      {{9, 2, 65}, 0},
  };
  std::mt19937_64 rng(3);
  bool saw_general_outer = false;  // some layout takes a later odd axis (σ no involution)
  for (const Case &c : layouts)
    for (sfft_dtype dtype : {SFFT_FLOAT32, SFFT_COMPLEX128})
      for (bool inverse : {false, true}) {
        const Layout l = make_layout(static_cast<int>(c.shape.size()), c.shape.data(), c.mask, dtype, inverse, 16);
        if (l.ndim == 0 || is_involution(l)) continue;
        PairPlan p = make_pair_plan(l, kMaxOuterBlock);
        saw_general_outer = saw_general_outer || !p.involution;
        const std::size_t n = l.words;
        ASSERT_EQ(p.O * static_cast<std::size_t>(p.n) * p.S, n);
        const std::vector<std::size_t> want = shifted_sources(l);
        for (int64_t batch : {int64_t{1}, int64_t{2}, int64_t{3}, p.steps / 2, p.steps}) {
          for (bool whole_blocks : {false, true}) {
            if (!whole_blocks && !p.involution) continue;  // chains of one o need σ = σ^-1
            SCOPED_TRACE(::testing::Message() << "rank " << c.shape.size() << " first " << c.shape[0] << " mask "
                                              << c.mask << " dtype " << dtype << " inverse " << inverse << " batch "
                                              << batch << (whole_blocks ? " blocks" : " chains"));
            set_batch(p, batch);
            std::vector<std::size_t> data(n), saved(p.scratch_words, SIZE_MAX);
            std::iota(data.begin(), data.end(), std::size_t{0});
            for (int64_t k = 0; k < p.batches; ++k)
              for (std::size_t j = 0; j < p.slab; ++j) saved[saved_at(p, k, 0, j)] = data[boundary_word(p, k, j)];
            std::vector<char> written(n, 0), read(n, 0);
            // Items: (k, o, i) chains or (k, o) blocks.
            // Items: (k, o, i) chains, (k, o) blocks, or (k) blocks of every o when σ is no involution.
            const std::size_t per_item = p.involution ? 1 : p.O;
            std::vector<std::size_t> items(static_cast<std::size_t>(p.batches) * p.O / per_item *
                                           (whole_blocks ? 1 : p.S));
            std::iota(items.begin(), items.end(), std::size_t{0});
            std::shuffle(items.begin(), items.end(), rng);
            std::reverse(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(items.size() / 2));
            for (std::size_t item : items) {
              const std::size_t per_k = p.O / per_item * (whole_blocks ? 1 : p.S);
              const auto k = static_cast<int64_t>(item / per_k);
              const std::size_t rest = item % per_k, o0 = (whole_blocks ? rest : rest / p.S) * per_item;
              if (p.involution) ASSERT_EQ(outer_image(p, outer_image(p, o0)), o0) << "σ is not an involution";
              std::vector<std::pair<std::size_t, std::size_t>> stores;  // (dst, value), deferred for blocks
              const auto load = [&](bool from_saved, std::size_t at) {
                if (from_saved) {
                  EXPECT_NE(saved[at], SIZE_MAX);
                  return saved[at];
                }
                EXPECT_FALSE(written[at]) << "word " << at << " overwritten before it is read";
                EXPECT_FALSE(read[at]) << "word " << at << " read twice";
                read[at] = 1;
                return data[at];
              };
              const auto store = [&](std::size_t at, std::size_t v) {
                EXPECT_FALSE(written[at]) << "word " << at << " written twice";
                written[at] = 1;
                data[at] = v;
              };
              std::vector<std::pair<std::size_t, std::size_t>> chain;  // elements (o, i) at the current step
              if (whole_blocks) {
                for (std::size_t o = o0; o < o0 + per_item; ++o)
                  for (std::size_t i = 0; i < p.S; ++i) chain.emplace_back(o, i);
              } else {
                chain.emplace_back(o0, rest % p.S);
              }
              for (int64_t t = batch_begin(p, k); t < batch_end(p, k); ++t) {
                for (auto &[o, i] : chain) {
                  const StepMoves m = step_moves(p, k, t, o, outer_image(p, o, 1), outer_image(p, o, -1), i,
                                                 inner_image(p, i, 1), inner_image(p, i, -1));
                  const std::size_t v1 = load(m.saved1, m.src1);
                  const std::size_t v0 = m.has0 ? load(m.saved0, m.src0) : 0;
                  stores.emplace_back(m.dst1, v1);
                  if (m.has0) stores.emplace_back(m.dst0, v0);
                  if (!whole_blocks) {
                    for (auto [at, v] : stores) store(at, v);
                    stores.clear();
                  }
                  o = outer_image(p, o, -2);
                  i = inner_image(p, i, -2);
                }
              }
              for (auto [at, v] : stores) store(at, v);
            }
            ASSERT_EQ(data, want);
            ASSERT_EQ(std::count(written.begin(), written.end(), 1), static_cast<std::ptrdiff_t>(n));
          }
        }
      }
  EXPECT_TRUE(saw_general_outer);
}

// chain_walk's stage on the host: a ring of R groups of G steps and the last step's two slots. Eager: a fetch reads at
// once (the earliest a device copy can read); lazy: fetches read when wait() releases their group (the latest).
template <class Word, int G, int R>
struct HostStage {
  bool lazy = false;
  Word ring[2 * G * R + 2] = {};
  std::vector<std::vector<std::pair<int, const Word *>>> groups{{}};
  void fetch(int slot, const Word *src) {
    if (lazy)
      groups.back().emplace_back(slot, src);
    else
      ring[slot] = *src;
  }
  void commit() { groups.emplace_back(); }
  void wait() {
    while (groups.size() > static_cast<std::size_t>(R)) {  // the open group plus the newest R - 1 stay
      for (auto [slot, src] : groups.front()) ring[slot] = *src;
      groups.erase(groups.begin());
    }
  }
  void drain() {
    for (const auto &group : groups)
      for (auto [slot, src] : group) ring[slot] = *src;
    groups.assign(1, {});
  }
  Word get(int slot) const { return ring[slot]; }
  void store(Word *dst, Word v) const { *dst = v; }
};

template <class Word, int D, class Inner, int G, int R>
void walk_on_host(Word *data, const Word *saved, const sfft::shift::PairPlan &p, std::size_t g, bool lazy) {
  HostStage<Word, G, R> stage;
  stage.lazy = lazy;
  sfft::shift::chain_walk<Word, D, Inner, G, R>(data, saved, p, g, stage);
}

// The CUDA kernels' per-thread work (pairs.hpp: chain_walk, tile_bases, tile_element_load) run on the host:
// chains one at a time (their loads at the earliest or the latest time the stage allows) and tiles (loads
// of the whole tile, then its stores) in shuffled order, after the boundary slabs are saved, give NumPy's
// result; every chain form the kernels instantiate, several group sizes and ring depths.
TEST(ShiftPairKernels, ChainsAndTilesInAnyOrder) {
  using namespace sfft::shift;
  const std::vector<Case> layouts = {
      {{101}, 0},           {{7, 9, 11}, 0},   {{7, 9, 11}, 5},      {{5, 7, 3, 40}, 7},
      {{6, 5}, 0},          {{4, 5, 6, 7}, 0}, {{3, 3, 3, 3, 3}, 0}, {{64, 63}, 0},
      {{63, 64}, 0},        {{3, 400}, 0},     {{400, 3}, 0},        {{3, 4001}, 0},
      {{5, 4, 3, 301}, 0},  {{9, 2, 65}, 0},   {{4, 33, 45}, 0},     {{3, 3, 3, 3, 3, 3, 3, 3}, 0x55},
      {{2, 9, 4, 5}, 0},    {{33, 5, 63}, 0},  {{35, 3, 95}, 0},     {{3, 4, 64}, 0},
      {{5, 7, 3, 1000}, 7},
  };
  std::mt19937_64 rng(11);
  for (const Case &c : layouts)
    for (sfft_dtype dtype : {SFFT_FLOAT32, SFFT_COMPLEX128})
      for (int inverse_narrow = 0; inverse_narrow < 4; ++inverse_narrow) {
        // 16-byte words also as 4-byte ones, as the CUDA backend moves the words of chains where they are few (the
        // odd axis A then lies before the last).
        const bool inverse = inverse_narrow % 2 == 1, narrow = inverse_narrow >= 2;
        Layout l = make_layout(static_cast<int>(c.shape.size()), c.shape.data(), c.mask, dtype, inverse, 16);
        if (l.ndim == 0 || is_involution(l)) continue;
        if (narrow && (l.word_bytes != 16 || make_pair_plan(l, kMaxOuterBlock).inner_dims == 0)) continue;
        if (narrow) l = narrow_words(l, 4);
        PairPlan p = make_pair_plan(l, kMaxOuterBlock);
        const std::size_t n = l.words;
        const std::vector<std::size_t> want = shifted_sources(l);
        for (int64_t batch : {int64_t{1}, int64_t{2}, int64_t{5}, p.steps}) {
          set_batch(p, batch);
          for (int form = 0; form < 5; ++form) {
            if (form < 4 && !p.involution) continue;  // chains need σ = σ^-1
            SCOPED_TRACE(::testing::Message() << "rank " << c.shape.size() << " first " << c.shape[0] << " mask "
                                              << c.mask << " dtype " << dtype << " inverse " << inverse << " narrow "
                                              << narrow << " batch " << batch << " form " << form);
            std::vector<std::size_t> data(n), saved(p.scratch_words);
            std::iota(data.begin(), data.end(), std::size_t{0});
            for (int64_t k = 0; k < p.batches; ++k)
              for (std::size_t j = 0; j < p.slab; ++j) saved[saved_at(p, k, 0, j)] = data[boundary_word(p, k, j)];
            if (form < 4) {
              // The kernel's threads in shuffled order, each walking its chain (chain_of_thread).
              const ChainLanes lanes = make_chain_lanes(p);
              // The grid's whole blocks (256 threads): those past lanes.threads have no chain.
              std::vector<std::size_t> threads((lanes.threads + 255) / 256 * 256), walked(p.scratch_words, 0);
              std::iota(threads.begin(), threads.end(), std::size_t{0});
              std::shuffle(threads.begin(), threads.end(), rng);
              const bool lazy = (batch + form) % 2 == 1;
              for (std::size_t j : threads) {
                std::size_t g = 0;
                if (!chain_of_thread(lanes, j, g)) continue;
                ASSERT_LT(g, p.scratch_words);
                ++walked[g];
                if (form == 0 && p.inner_dims <= 1)
                  walk_on_host<std::size_t, 1, uint32_t, 8, 4>(data.data(), saved.data(), p, g, lazy);
                else if (form == 1 && p.inner_dims <= 2)
                  walk_on_host<std::size_t, 2, uint32_t, 3, 2>(data.data(), saved.data(), p, g, lazy);
                else if (form == 2 && p.inner_dims <= 3)
                  walk_on_host<std::size_t, 3, uint32_t, 2, 4>(data.data(), saved.data(), p, g, lazy);
                else if (form == 2 && p.inner_dims <= 4)
                  walk_on_host<std::size_t, 4, uint32_t, 5, 2>(data.data(), saved.data(), p, g, lazy);
                else
                  walk_on_host<std::size_t, kMaxDims, uint64_t, 1, 3>(data.data(), saved.data(), p, g, lazy);
              }
              ASSERT_EQ(std::count(walked.begin(), walked.end(), 1), static_cast<std::ptrdiff_t>(p.scratch_words));
            } else {
              const std::size_t per_tile = p.involution ? 1 : p.O;
              std::vector<std::size_t> tiles(static_cast<std::size_t>(p.batches) * (p.O / per_tile));
              std::iota(tiles.begin(), tiles.end(), std::size_t{0});
              std::shuffle(tiles.begin(), tiles.end(), rng);
              for (std::size_t tile : tiles) {
                const auto k = static_cast<int64_t>(tile / (p.O / per_tile));
                const std::size_t o0 = tile % (p.O / per_tile) * per_tile;
                std::vector<std::pair<int64_t, std::size_t>> stores;
                for (std::size_t o = o0; o < o0 + per_tile; ++o) {
                  const TileBases tb = tile_bases(p, k, o);
                  for (int64_t t = batch_begin(p, k); t < batch_end(p, k); ++t)
                    for (std::size_t i = 0; i < p.S; ++i) {
                      std::size_t v1 = 0, v0 = 0;
                      const int64_t steps = (t - batch_begin(p, k)) * static_cast<int64_t>(p.S);
                      const int64_t dist = p.rev ? -steps : steps;
                      const bool has0 = tile_element_load(p, k, tb, o, t, batch_end(p, k), dist, i,
                                                          inner_image(p, i, -1), data.data(), saved.data(), &v1, &v0);
                      stores.emplace_back(tb.to1 + dist + static_cast<int64_t>(inner_image(p, i, 1)), v1);
                      if (has0) stores.emplace_back(tb.own + dist + static_cast<int64_t>(i), v0);
                    }
                }
                for (auto [at, v] : stores) data[static_cast<std::size_t>(at)] = v;
              }
            }
            ASSERT_EQ(data, want);
          }
        }
      }
}

// chain_of_thread: with several inner dims and rows of at least 32 words whose padding to whole warps idles at most
// one lane in 32, every warp walks consecutive columns of one row; otherwise thread j walks chain j. Every chain once
// (beside ChainsAndTilesInAnyOrder's walks).
TEST(ShiftPairKernels, ChainLanesTakeRowsByWarps) {
  using namespace sfft::shift;
  struct Want {
    std::vector<int64_t> shape;
    uint32_t L;  // 0: chain j
  };
  for (const Want &w : std::vector<Want>{{{511, 511, 511}, 511},
                                         {{33, 7, 95}, 95},
                                         {{5, 7, 50}, 0},    // 14 idle lanes of 64
                                         {{5, 9, 128}, 32},  // 16-byte words
                                         {{63, 65, 67, 69}, 0},
                                         {{29, 31, 37, 41, 43}, 0},
                                         {{7, 9, 11}, 0},
                                         {{8191, 8191}, 0}}) {
    const Layout l = make_layout(static_cast<int>(w.shape.size()), w.shape.data(), 0, SFFT_FLOAT32, false, 16);
    PairPlan p = make_pair_plan(l, kMaxOuterBlock);
    set_batch(p, std::max<int64_t>(1, p.steps / 3));
    const ChainLanes c = make_chain_lanes(p);
    SCOPED_TRACE(::testing::Message() << "shape of " << w.shape.size() << " dims, last " << w.shape.back());
    ASSERT_EQ(c.L, w.L);
    std::vector<uint8_t> seen(p.scratch_words, 0);
    for (std::size_t warp = 0; warp < (c.threads + 255) / 256 * 8; ++warp) {  // the grid's blocks of 256 threads
      std::size_t first = 0, count = 0;
      for (std::size_t lane = 0; lane < 32; ++lane) {
        std::size_t g = 0;
        if (!chain_of_thread(c, warp * 32 + lane, g)) continue;
        ASSERT_LT(g, p.scratch_words);
        ASSERT_EQ(seen[g]++, 0);
        if (count++ == 0) first = g;
        ASSERT_EQ(g, c.L == 0 ? warp * 32 + lane : first + lane);
        if (c.L != 0) ASSERT_EQ(g / c.L, first / c.L);  // one row
      }
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(p.scratch_words));
  }
}

// The CUDA orbit kernel's per-thread work (orbits.hpp: make_orbit_plan, orbit_at) on the host: workers in shuffled
// order, each loading its whole orbit before storing it, give NumPy's result and write every word exactly once; a
// short odd dim first, between even dims, alone (no partner), beside an unshifted trailing block; both index widths.
// Layouts with two odd shifted dims, the odd dim last, an involution, a longer odd dim or a shorter run than asked
// are refused.
TEST(ShiftOrbits, EveryWordOnceInAnyOrder) {
  using namespace sfft::shift;
  const std::vector<Case> layouts = {
      {{3, 64, 64}, 0}, {{5, 6, 40}, 0},    {{7, 4, 33}, 1},    {{2, 3, 4, 48}, 0}, {{15, 2, 64}, 0},
      {{9, 8, 64}, 5},  {{3, 6, 40, 3}, 7}, {{4, 6, 3, 10}, 0}, {{3, 5, 8}, 6},     {{2, 2, 5, 2, 8}, 0},
  };
  std::mt19937_64 rng(13);
  bool saw_paired = false, saw_alone = false;
  for (const Case &c : layouts)
    for (sfft_dtype dtype : {SFFT_FLOAT32, SFFT_COMPLEX128})
      for (bool inverse : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "rank " << c.shape.size() << " first " << c.shape[0] << " mask " << c.mask
                                          << " dtype " << dtype << " inverse " << inverse);
        const Layout l = make_layout(static_cast<int>(c.shape.size()), c.shape.data(), c.mask, dtype, inverse, 16);
        OrbitPlan p;
        ASSERT_TRUE(make_orbit_plan(l, 15, 1, p));
        ASSERT_TRUE(p.fast32);
        saw_paired |= p.paired;
        saw_alone |= !p.paired;
        const int64_t n = p.n;
        const std::size_t run = p.run;
        EXPECT_FALSE(make_orbit_plan(l, n - 1, 1, p));
        EXPECT_FALSE(make_orbit_plan(l, n, run + 1, p));
        ASSERT_TRUE(make_orbit_plan(l, n, run, p));
        const std::vector<std::size_t> want = shifted_sources(l);
        for (bool fast32 : {true, false}) {
          std::vector<std::size_t> data(l.words), written(l.words);
          std::iota(data.begin(), data.end(), std::size_t{0});
          std::vector<std::size_t> workers(p.orbits);
          std::iota(workers.begin(), workers.end(), std::size_t{0});
          std::shuffle(workers.begin(), workers.end(), rng);
          for (std::size_t q : workers) {
            std::size_t own = 0, partner = 0;
            if (fast32)
              orbit_at<true>(p, q, own, partner);
            else
              orbit_at<false>(p, q, own, partner);
            ASSERT_EQ(own == partner, !p.paired);
            std::vector<std::pair<std::size_t, std::size_t>> stores;
            for (int64_t v = 0; v < p.n; ++v) {
              const std::size_t to = static_cast<std::size_t>((v + p.s) % p.n) * p.a_stride;
              const std::size_t at = static_cast<std::size_t>(v) * p.a_stride;
              stores.emplace_back(partner + to, data[own + at]);
              if (p.paired) stores.emplace_back(own + to, data[partner + at]);
            }
            for (auto [at, value] : stores) {
              data[at] = value;
              ++written[at];
            }
          }
          ASSERT_EQ(data, want);
          ASSERT_EQ(std::count(written.begin(), written.end(), 1), static_cast<std::ptrdiff_t>(l.words));
        }
      }
  EXPECT_TRUE(saw_paired && saw_alone);
  // Runs in words (float32, moved as 16-byte words where the extents allow): whole rows of 16 words under the halved
  // dim; the halved last dim's lower half; rows of 40 blocks of 3 words under the halved dim; a lone odd dim over an
  // unshifted block (33 words).
  const std::pair<Case, std::size_t> runs[] = {
      {{{3, 64, 64}, 0}, 512}, {{{9, 8, 64}, 5}, 8}, {{{3, 6, 40, 3}, 7}, 360}, {{{7, 4, 33}, 1}, 33}};
  for (const auto &[c, run] : runs) {
    const Layout l = make_layout(static_cast<int>(c.shape.size()), c.shape.data(), c.mask, SFFT_FLOAT32, false, 16);
    OrbitPlan p;
    ASSERT_TRUE(make_orbit_plan(l, 15, 1, p));
    EXPECT_EQ(p.run, run) << "first extent " << c.shape[0] << ", last " << c.shape.back();
  }
  const std::vector<Case> refused = {{{3, 5, 64}, 0}, {{64, 3}, 0}, {{64, 64}, 0}, {{3, 4, 3}, 0}};
  for (const Case &c : refused) {
    const Layout l = make_layout(static_cast<int>(c.shape.size()), c.shape.data(), c.mask, SFFT_FLOAT32, false, 16);
    OrbitPlan p;
    EXPECT_FALSE(make_orbit_plan(l, 15, 1, p)) << "first extent " << c.shape[0] << ", last " << c.shape.back();
  }
}

// The CUDA block order (grouped_batch_row, pairs.hpp): for any row count and batch count every block maps to a
// distinct (batch, row) in range, so the grid covers each exactly once; groups of rows come out side by side, each
// group batch by batch.
// narrow_words (CUDA: chains of 16-byte words split where they would be too few): the narrowed layout moves every
// sub-word with its word, for shifted and unshifted last dims, element blocks of one and of several elements.
TEST(ShiftLayout, NarrowWordsMovesSubWordsWithTheirWord) {
  using namespace sfft::shift;
  const std::vector<Case> layouts = {{{7, 8}, 0}, {{5, 12}, 0}, {{9, 6}, 1}, {{3, 5, 4}, 0}, {{5, 3}, 0}, {{11}, 0}};
  bool saw_split_dim = false;
  for (const Case &c : layouts)
    for (sfft_dtype dtype : {SFFT_FLOAT32, SFFT_COMPLEX64, SFFT_COMPLEX128})
      for (bool inverse : {false, true}) {
        const Layout l = make_layout(static_cast<int>(c.shape.size()), c.shape.data(), c.mask, dtype, inverse, 16);
        if (l.word_bytes != 16) continue;
        saw_split_dim |= l.shift[l.ndim - 1] == 0;
        const std::vector<std::size_t> wide = shifted_sources(l);
        for (std::size_t r : {std::size_t{2}, std::size_t{4}}) {
          const Layout n = narrow_words(l, r);
          ASSERT_EQ(n.word_bytes * r, l.word_bytes);
          ASSERT_EQ(n.words, l.words * r);
          const std::vector<std::size_t> narrow = shifted_sources(n);
          for (std::size_t w = 0; w < l.words; ++w)
            for (std::size_t q = 0; q < r; ++q)
              ASSERT_EQ(narrow[w * r + q], wide[w] * r + q) << "first extent " << c.shape[0] << ", r " << r;
        }
      }
  EXPECT_TRUE(saw_split_dim) << "no layout with an unshifted last (word-splitting) dim";
}

TEST(ShiftPairKernels, GroupedBlockOrderCoversEveryBatchAndRowOnce) {
  using namespace sfft::shift;
  for (std::size_t rows : {1, 2, 3, 4, 5, 6, 8, 10, 12, 4096, 4097})
    for (unsigned batches : {1u, 2u, 3u, 7u}) {
      const unsigned g = row_group_log2(rows);
      EXPECT_EQ(rows % (std::size_t{1} << g), 0u);
      EXPECT_EQ(g, rows % 4 == 0 ? 2u : rows % 2 == 0 ? 1u : 0u);
      std::vector<int> seen(rows * batches, 0);
      for (unsigned b = 0; b < rows * batches; ++b) {
        const BatchRow at = grouped_batch_row(b, batches, g);
        ASSERT_GE(at.batch, 0);
        ASSERT_LT(at.batch, static_cast<int64_t>(batches));
        ASSERT_LT(at.row, rows);
        ++seen[static_cast<std::size_t>(at.batch) * rows + at.row];
        // Within a group of 2^g rows, consecutive blocks take consecutive rows of one batch.
        const unsigned in_group = b & ((1u << g) - 1);
        EXPECT_EQ(at.row % (1u << g), in_group);
      }
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }))
          << rows << " rows, " << batches << " batches";
    }
}

// The staged rotations' ranges (rotate_ranges, shared by the CUDA rotation over rows) on the host: for S = 1
// (one odd axis over single words, alone or under rows that σ keeps, swaps or moves), each (batch, rows) block stages
// its two ranges a row and the saved words at their ends, then writes them moved by their deltas; blocks in
// shuffled order, words of 1 and 2 cells, fftshift and ifftshift (mirrored ranges), batches from 1 step to all.
// Every cell is read once before anything overwrites it, written once, and the result is NumPy's.
TEST(ShiftPairKernels, RotationRangesInAnyOrder) {
  using namespace sfft::shift;
  const std::vector<Case> layouts = {
      {{101}, 0},    {{4001}, 0},      {{3, 4001}, 0}, {{3, 401}, 0}, {{4, 301}, 3},
      {{6, 301}, 3}, {{3, 5, 301}, 0}, {{5, 301}, 2},  {{7, 301}, 0}, {{2, 3, 301}, 0},
  };
  std::mt19937_64 rng(17);
  for (const Case &c : layouts)
    for (sfft_dtype dtype : {SFFT_FLOAT32, SFFT_FLOAT64})
      for (bool inverse : {false, true}) {
        const Layout l = make_layout(static_cast<int>(c.shape.size()), c.shape.data(), c.mask, dtype, inverse, 16);
        ASSERT_FALSE(l.ndim == 0 || is_involution(l));
        PairPlan p = make_pair_plan(l, kMaxOuterBlock);
        ASSERT_EQ(p.S, 1u);
        const int64_t m = static_cast<int64_t>(l.word_bytes / 4);  // 32-bit cells a word
        const std::size_t words = l.words, cells = words * static_cast<std::size_t>(m);
        const std::vector<std::size_t> source = shifted_sources(l);
        std::vector<std::size_t> want(cells);
        for (std::size_t w = 0; w < words; ++w)
          for (int64_t h = 0; h < m; ++h) want[w * m + h] = source[w] * m + h;
        for (int64_t batch : {int64_t{1}, int64_t{2}, int64_t{7}, p.steps / 2, p.steps}) {
          SCOPED_TRACE(::testing::Message()
                       << "rank " << c.shape.size() << " first " << c.shape[0] << " mask " << c.mask << " dtype "
                       << dtype << " inverse " << inverse << " batch " << batch);
          set_batch(p, std::max<int64_t>(batch, 1));
          std::vector<std::size_t> data(cells), saved(p.scratch_words * static_cast<std::size_t>(m));
          std::iota(data.begin(), data.end(), std::size_t{0});
          for (int64_t k = 0; k < p.batches; ++k)
            for (std::size_t j = 0; j < p.slab; ++j)
              for (int64_t h = 0; h < m; ++h)
                saved[saved_at(p, k, 0, j) * m + h] = data[boundary_word(p, k, j) * m + h];
          std::vector<char> read(cells, 0), written(cells, 0);
          // The rows staged before any is written: one where σ is an involution, else every row of the batch (one
          // block, RotateRows::all, or a cluster of a block a row, RotateRows::cluster: the same loads before stores).
          const std::size_t rows = p.involution ? 1 : p.O;
          std::vector<std::size_t> blocks(static_cast<std::size_t>(p.batches) * (p.O / rows));
          std::iota(blocks.begin(), blocks.end(), std::size_t{0});
          std::shuffle(blocks.begin(), blocks.end(), rng);
          for (std::size_t block : blocks) {
            const auto k = static_cast<int64_t>(block / (p.O / rows));
            const std::size_t o0 = block % (p.O / rows) * rows;
            std::vector<std::pair<int64_t, std::size_t>> stores;  // (cell, value) after the block's loads
            for (std::size_t o = o0; o < o0 + rows; ++o) {
              const RotateRanges r = rotate_ranges(p, k, o, m);
              const auto stage = [&](const RotateRange &range, int64_t saved_word) {
                for (int64_t at = range.src + range.skip_low; at < range.src + range.len - range.skip_high; ++at) {
                  const auto cell = static_cast<std::size_t>(at);
                  EXPECT_FALSE(read[cell]) << "cell " << cell << " read twice";
                  EXPECT_FALSE(written[cell]) << "cell " << cell << " overwritten before it is read";
                  read[cell] = 1;
                  stores.emplace_back(at + range.delta, data[cell]);
                }
                ASSERT_EQ(saved_word >= 0, range.skip_low + range.skip_high == m);
                if (saved_word < 0) return;
                const int64_t at = range.skip_low > 0 ? range.src : range.src + range.len - m;
                for (int64_t h = 0; h < m; ++h)
                  stores.emplace_back(at + h + range.delta, saved[static_cast<std::size_t>(saved_word * m + h)]);
              };
              stage(r.r1, r.saved1_at);
              stage(r.r0, r.saved0_at);
            }
            for (auto [at, v] : stores) {
              ASSERT_GE(at, 0);
              ASSERT_LT(static_cast<std::size_t>(at), cells);
              EXPECT_FALSE(written[static_cast<std::size_t>(at)]) << "cell " << at << " written twice";
              written[static_cast<std::size_t>(at)] = 1;
              data[static_cast<std::size_t>(at)] = v;
            }
          }
          ASSERT_EQ(data, want);
        }
      }
}

// The multiply-high divisor used by the in-place GPU kernel equals integer division, edge cases included.
TEST(ShiftIndexMath, FastDiv32MatchesDivision) {
  std::mt19937_64 rng(5);
  for (uint32_t d : {1u, 2u, 3u, 5u, 7u, 511u, 512u, 8191u, 65535u, 65536u, 1000003u, 2147483647u, 2147483648u}) {
    sfft::shift::FastDiv32 f(d);
    for (int i = 0; i < 200000; ++i) {
      uint32_t n = i < 1000   ? 0xFFFFFFFFu - static_cast<uint32_t>(i)
                   : i < 2000 ? static_cast<uint32_t>(i - 1000)
                              : static_cast<uint32_t>(rng());
      ASSERT_EQ(f.div(n), n / d) << "n = " << n << ", d = " << d;
    }
  }
}

// copy_bytes (common/copy.hpp), the CPU shift's copy of long runs: every source and destination alignment within
// a line, lengths around its vector loop's ends and its memcpy threshold, against memcpy; the bytes around the
// destination untouched.
TEST(ShiftCopy, CopyBytesMatchesMemcpyAtEveryAlignment) {
  std::mt19937_64 rng(9);
  std::vector<unsigned char> src(8192 + 128);
  for (auto &b : src) b = static_cast<unsigned char>(rng());
  for (std::size_t n : {std::size_t{65}, std::size_t{2047}, std::size_t{2048}, std::size_t{2049}, std::size_t{2063},
                        std::size_t{2111}, std::size_t{4096}, std::size_t{8191}})
    for (std::size_t from = 0; from < 64; ++from)
      for (std::size_t to = 0; to < 64; to += 3) {
        std::vector<unsigned char> got(8192 + 256, 0xEE), want = got;
        sfft::copy_bytes(got.data() + 64 + to, src.data() + from, n);
        std::memcpy(want.data() + 64 + to, src.data() + from, n);
        ASSERT_EQ(got, want) << "n " << n << " source offset " << from << " destination offset " << to;
      }
}

// --------------------------------------------------------------------------- bad input
class ShiftBadInput : public ::testing::Test {
 protected:
  std::vector<float> in = std::vector<float>(64, 1.5f), out = std::vector<float>(64, -7.0f);
  const std::vector<float> untouched = std::vector<float>(64, -7.0f);
  Shape shape = {8, 8};

  void expect_fails(sfft_status got, sfft_status want, const char *mentions) {
    EXPECT_EQ(got, want) << sfft_last_error();
    EXPECT_NE(std::string(sfft_last_error()).find(mentions), std::string::npos) << sfft_last_error();
    EXPECT_EQ(out, untouched) << "output written by a failing call";
  }
};

TEST_F(ShiftBadInput, NullPointers) {
  expect_fails(fftshift_nd(out.data(), nullptr, 2, shape.data(), 0, SFFT_FLOAT32, nullptr), SFFT_ERROR_INVALID_ARGUMENT,
               "in is NULL");
  expect_fails(fftshift_nd(nullptr, in.data(), 2, shape.data(), 0, SFFT_FLOAT32, nullptr), SFFT_ERROR_INVALID_ARGUMENT,
               "out is NULL");
  expect_fails(fftshift_nd(out.data(), in.data(), 2, nullptr, 0, SFFT_FLOAT32, nullptr), SFFT_ERROR_INVALID_ARGUMENT,
               "shape is NULL");
}

TEST_F(ShiftBadInput, Rank) {
  expect_fails(fftshift_nd(out.data(), in.data(), 0, shape.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "ndim = 0");
  Shape nine(9, 1);
  expect_fails(ifftshift_nd(out.data(), in.data(), 9, nine.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "ndim = 9");
  expect_fails(fftshift_nd(out.data(), in.data(), -3, shape.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "ndim = -3");
}

TEST_F(ShiftBadInput, NegativeExtentAndMask) {
  Shape neg = {8, -8};
  expect_fails(fftshift_nd(out.data(), in.data(), 2, neg.data(), 0, SFFT_FLOAT32, nullptr), SFFT_ERROR_INVALID_ARGUMENT,
               "shape[1] = -8");
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0x4, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "axes_mask");
}

TEST_F(ShiftBadInput, SizeOverflow) {
  Shape huge = {INT64_C(1) << 40, INT64_C(1) << 40};
  expect_fails(fftshift_nd(out.data(), in.data(), 2, huge.data(), 0, SFFT_FLOAT32, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "overflows");
  Shape big = {INT64_C(1) << 62, 2};
  expect_fails(fftshift_nd(out.data(), in.data(), 2, big.data(), 0, SFFT_COMPLEX128, nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "overflows");
}

TEST_F(ShiftBadInput, BadDtype) {
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, static_cast<sfft_dtype>(0), nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "dtype");
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, static_cast<sfft_dtype>(17), nullptr),
               SFFT_ERROR_INVALID_ARGUMENT, "dtype");
}

TEST_F(ShiftBadInput, PartialOverlap) {
  std::vector<float> buf(80, 2.0f);
  const std::vector<float> before = buf;
  EXPECT_EQ(fftshift_nd(buf.data() + 4, buf.data(), 2, shape.data(), 0, SFFT_FLOAT32, nullptr),
            SFFT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sfft_last_error()).find("overlap"), std::string::npos) << sfft_last_error();
  EXPECT_EQ(buf, before);
}

TEST_F(ShiftBadInput, BadOptions) {
  sfft_options opts;
  sfft_options_init(&opts);
  opts.struct_size = 0;
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, SFFT_FLOAT32, &opts), SFFT_ERROR_INVALID_ARGUMENT,
               "struct_size");
  sfft_options_init(&opts);
  opts.backend = static_cast<sfft_backend>(9);
  expect_fails(fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, SFFT_FLOAT32, &opts), SFFT_ERROR_INVALID_ARGUMENT,
               "backend");
}

TEST_F(ShiftBadInput, CudaBackendWithoutGpu) {
  if (sfft_test::have_gpu()) GTEST_SKIP() << "a GPU is present; this checks the no-GPU error";
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  sfft_status s = fftshift_nd(out.data(), in.data(), 2, shape.data(), 0, SFFT_FLOAT32, &opts);
  EXPECT_TRUE(s == SFFT_ERROR_NO_DEVICE || s == SFFT_ERROR_UNSUPPORTED) << sfft_status_string(s);
  EXPECT_STRNE(sfft_last_error(), "");
  EXPECT_EQ(out, untouched);
}

TEST_F(ShiftBadInput, ZeroExtentIsANoOp) {
  Shape zero = {8, 0};
  EXPECT_EQ(fftshift_nd(out.data(), in.data(), 2, zero.data(), 0, SFFT_FLOAT32, nullptr), SFFT_SUCCESS);
  EXPECT_EQ(fftshift_nd(nullptr, nullptr, 2, zero.data(), 0, SFFT_FLOAT32, nullptr), SFFT_SUCCESS);
  EXPECT_EQ(out, untouched);
  EXPECT_STREQ(sfft_last_error(), "");
}

}  // namespace
