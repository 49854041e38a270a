// CUDA backend of fftshift/ifftshift.
//  - out of place: one read and one write per word; tiles of whole rows (short rows) or row pieces.
//  - in place, involution (all shifts 0 or half the extent, e.g. every even extent): disjoint swaps.
//  - in place otherwise (an odd extent is shifted): the cycle-wave order of layout.hpp in one cooperative
//    kernel, each wave read into registers, one grid barrier, then written; scratch = one slab along
//    the cycle axis (array size / extent), no full-size temporary.
// Host pointers are staged through stream-ordered device buffers.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

#include "common/backend.hpp"
#include "common/cuda_util.cuh"
#include "shift/shift.hpp"

namespace sfft::shift {
namespace {

namespace cg = cooperative_groups;

constexpr unsigned kBlock = 256;
// Words in flight per thread: at least 64 bytes, so narrow words still keep enough loads outstanding.
template <class Word>
constexpr unsigned per_thread() { return sizeof(Word) >= 8 ? 8 : 16; }
constexpr unsigned kMaxPerThread = 16;
constexpr unsigned kMaxTile = kBlock * kMaxPerThread;
constexpr unsigned kMaxTileRows = kMaxTile / 2;  // rows have >= 2 words after normalisation

// Tiling over rows of the last dim: a tile is `rows_per_tile` whole rows (short rows) or one piece of
// `tile_words` words of a long row.
struct Tiling {
  std::size_t L, shift, rows, tiles, pieces, rows_per_tile, tile_words;
  Tiling(const Layout &l, std::size_t tile)
      : L(static_cast<std::size_t>(l.extent[l.ndim - 1])), shift(static_cast<std::size_t>(l.shift[l.ndim - 1])),
        tile_words(tile) {
    rows = l.words / L;
    if (L >= tile) {
      pieces = (L + tile - 1) / tile;
      rows_per_tile = 1;
      tiles = rows * pieces;
    } else {
      pieces = 1;
      rows_per_tile = std::min<std::size_t>(tile / L, kMaxTileRows);
      tiles = (rows + rows_per_tile - 1) / rows_per_tile;
    }
  }
};

__device__ __forceinline__ std::size_t wrap_sub(std::size_t j, std::size_t s, std::size_t L) {
  return j >= s ? j - s : j + L - s;
}

// Shared by both row kernels: the tile's first row, its row count, and the column range of a piece.
struct TileSpan {
  std::size_t row0, nrows, c0, c1;
};

__device__ __forceinline__ TileSpan tile_span(const Tiling &g, std::size_t tile) {
  TileSpan s;
  if (g.pieces > 1 || g.rows_per_tile == 1) {
    s.row0 = tile / g.pieces;
    std::size_t p = tile % g.pieces;
    s.nrows = 1;
    s.c0 = p * g.tile_words;
    s.c1 = min(g.L, s.c0 + g.tile_words);
  } else {
    s.row0 = tile * g.rows_per_tile;
    s.nrows = min(g.rows_per_tile, g.rows - s.row0);
    s.c0 = 0;
    s.c1 = g.L;
  }
  return s;
}

template <class Word>
__global__ void __launch_bounds__(kBlock) copy_kernel(Word *__restrict__ out, const Word *__restrict__ in, Layout l,
                                                      Tiling g) {
  constexpr unsigned kPerThread = per_thread<Word>();
  __shared__ std::size_t src_row[kMaxTileRows];
  for (std::size_t tile = blockIdx.x; tile < g.tiles; tile += gridDim.x) {
    TileSpan s = tile_span(g, tile);
    __syncthreads();  // src_row of the previous tile is no longer read
    for (std::size_t r = threadIdx.x; r < s.nrows; r += blockDim.x) src_row[r] = source_row(l, s.row0 + r);
    __syncthreads();
    const std::size_t width = s.c1 - s.c0, count = s.nrows * width;
    Word v[kPerThread];
    std::size_t dst[kPerThread];
#pragma unroll
    for (unsigned k = 0; k < kPerThread; ++k) {
      std::size_t i = threadIdx.x + k * kBlock;
      dst[k] = SIZE_MAX;
      if (i < count) {
        std::size_t lr = i / width, col = s.c0 + (i - lr * width);
        v[k] = in[src_row[lr] + wrap_sub(col, g.shift, g.L)];
        dst[k] = (s.row0 + lr) * g.L + col;
      }
    }
#pragma unroll
    for (unsigned k = 0; k < kPerThread; ++k)
      if (dst[k] != SIZE_MAX) out[dst[k]] = v[k];
  }
}

template <class Word>
__global__ void __launch_bounds__(kBlock) swap_kernel(Word *__restrict__ data, Layout l, Tiling g) {
  constexpr unsigned kPerThread = per_thread<Word>();
  __shared__ std::size_t partner_row[kMaxTileRows];
  for (std::size_t tile = blockIdx.x; tile < g.tiles; tile += gridDim.x) {
    TileSpan s = tile_span(g, tile);
    __syncthreads();
    for (std::size_t r = threadIdx.x; r < s.nrows; r += blockDim.x) partner_row[r] = source_row(l, s.row0 + r);
    __syncthreads();
    const std::size_t width = s.c1 - s.c0, count = s.nrows * width;
    Word a[kPerThread], b[kPerThread];
    std::size_t ia[kPerThread], ib[kPerThread];
#pragma unroll
    for (unsigned k = 0; k < kPerThread; ++k) {
      std::size_t i = threadIdx.x + k * kBlock;
      ia[k] = SIZE_MAX;
      if (i < count) {
        std::size_t lr = i / width, col = s.c0 + (i - lr * width);
        std::size_t row = s.row0 + lr, own = row * g.L, other = partner_row[lr];
        // Each pair once: from the lower row, or from the lower half when a row is its own partner.
        bool mine = other > own || (other == own && g.shift != 0 && col < g.L / 2);
        if (mine) {
          ia[k] = own + col;
          ib[k] = other + wrap_sub(col, g.shift, g.L);
          a[k] = data[ia[k]];
          b[k] = data[ib[k]];
        }
      }
    }
#pragma unroll
    for (unsigned k = 0; k < kPerThread; ++k)
      if (ia[k] != SIZE_MAX) {
        data[ia[k]] = b[k];
        data[ib[k]] = a[k];
      }
  }
}

template <class Word>
__global__ void gather_slab_kernel(Word *__restrict__ scratch, const Word *__restrict__ data, Layout l, int axis,
                                   std::size_t slab) {
  for (std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; r < slab;
       r += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    scratch[r] = data[slab_offset(l, axis, 0, r)];
}

template <class Word, class Index, class Divisors>
__global__ void __launch_bounds__(kBlock) cycle_wave_kernel(Word *data, const Word *__restrict__ scratch, Layout l,
                                                            Divisors div, int axis, Index slab) {
  constexpr unsigned kPerThread = per_thread<Word>();
  // wave_step indexes the layout and divisors by a run-time dim: from kernel parameters that would put them
  // in per-thread local memory, so each block keeps one copy in shared memory instead.
  __shared__ __align__(16) unsigned char layout_bytes[sizeof(Layout)];
  __shared__ __align__(16) unsigned char div_bytes[sizeof(Divisors)];
  if (threadIdx.x == 0) {
    memcpy(layout_bytes, &l, sizeof l);
    memcpy(div_bytes, &div, sizeof div);
  }
  __syncthreads();
  const Layout &lay = *reinterpret_cast<const Layout *>(layout_bytes);
  const Divisors &shared_div = *reinterpret_cast<const Divisors *>(div_bytes);
  cg::grid_group grid = cg::this_grid();
  const Index words = static_cast<Index>(l.words);
  const Index threads = static_cast<Index>(gridDim.x) * blockDim.x;
  const Index me = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Waves are counted so that no index below exceeds `words + wave` (fits Index: see launch_cycle_wave).
  for (Index base = 0; base < words; base += threads * kPerThread) {
    Word v[kPerThread];
    Index dst[kPerThread];
    bool live[kPerThread];
#pragma unroll
    for (unsigned k = 0; k < kPerThread; ++k) {
      Index t = base + k * threads + me;
      live[k] = t < words;
      if (live[k]) {
        Index read;
        bool from_scratch;
        dst[k] = wave_step<Index>(lay, shared_div, axis, slab, t, &read, &from_scratch);
        v[k] = from_scratch ? scratch[read] : data[read];
      }
    }
    grid.sync();  // every old value this wave overwrites has been read (by this wave or an earlier one)
#pragma unroll
    for (unsigned k = 0; k < kPerThread; ++k)
      if (live[k]) data[dst[k]] = v[k];
  }
}

// One cooperative launch: as many resident blocks as fit, each wave read entirely before it is written.
template <class Word, class Index, class Divisors>
void launch_cycle_wave(Word *data, const Word *saved, const Layout &l, Divisors div, int axis, std::size_t slab,
                       cudaStream_t stream) {
  int device = 0, sms = 0, per_sm = 0, cooperative = 0;
  SFFT_CUDA_CHECK(cudaGetDevice(&device));
  SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative) fail(SFFT_ERROR_UNSUPPORTED, "in-place shift of an odd extent needs cooperative launch");
  auto kernel = cycle_wave_kernel<Word, Index, Divisors>;
  SFFT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0));
  const std::size_t tile = std::size_t{kBlock} * per_thread<Word>();
  const std::size_t needed = (l.words + tile - 1) / tile;
  unsigned blocks = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(needed, static_cast<std::size_t>(sms) * per_sm)));
  Layout layout = l;
  Index slab_words = static_cast<Index>(slab);
  void *args[] = {&data, &saved, &layout, &div, &axis, &slab_words};
  SFFT_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void *>(kernel), blocks, kBlock, args, 0, stream));
}

template <class Word>
void shift_on_device(const Layout &l, Word *out, const Word *in, cudaStream_t stream) {
  const Tiling g(l, std::size_t{kBlock} * per_thread<Word>());
  if (out != in) {
    copy_kernel<Word><<<cuda::grid_for(g.tiles * kBlock, kBlock), kBlock, 0, stream>>>(out, in, l, g);
    SFFT_CUDA_CHECK_LAUNCH();
    return;
  }
  if (is_involution(l)) {
    swap_kernel<Word><<<cuda::grid_for(g.tiles * kBlock, kBlock), kBlock, 0, stream>>>(out, l, g);
    SFFT_CUDA_CHECK_LAUNCH();
    return;
  }
  const int axis = cycle_axis(l);
  if (axis < 0) fail(SFFT_ERROR_INTERNAL, "shift: no single-cycle axis for an in-place rotation");
  const std::size_t slab = l.words / static_cast<std::size_t>(l.extent[axis]);
  cuda::StreamBuffer scratch(slab * sizeof(Word), stream);
  auto *saved = static_cast<Word *>(scratch.get());
  gather_slab_kernel<Word><<<cuda::grid_for(slab, kBlock), kBlock, 0, stream>>>(saved, out, l, axis, slab);
  SFFT_CUDA_CHECK_LAUNCH();

  const Word *saved_const = saved;
  // 32-bit index arithmetic while every index (plus one wave of slack) fits.
  if (l.words < (std::size_t{1} << 31))
    launch_cycle_wave<Word, uint32_t>(out, saved_const, l, FastDivisors32(l, slab), axis, slab, stream);
  else
    launch_cycle_wave<Word, std::size_t>(out, saved_const, l, PlainDivisors(l, slab), axis, slab, stream);
}

void dispatch(const Layout &l, void *out, const void *in, cudaStream_t stream) {
  switch (l.word_bytes) {
    case 4: shift_on_device(l, static_cast<uint32_t *>(out), static_cast<const uint32_t *>(in), stream); break;
    case 8: shift_on_device(l, static_cast<uint2 *>(out), static_cast<const uint2 *>(in), stream); break;
    case 16: shift_on_device(l, static_cast<uint4 *>(out), static_cast<const uint4 *>(in), stream); break;
    default: fail(SFFT_ERROR_INTERNAL, "shift: unexpected word size ", l.word_bytes);
  }
}

}  // namespace

void run_cuda(const Layout &l, void *out, const void *in, const Options &opts) {
  cuda::DeviceScope scope(opts.device);
  cudaStream_t stream = cuda::as_stream(opts.stream);
  const bool in_host = pointer_kind(in) == PointerKind::Host;
  const bool out_host = pointer_kind(out) == PointerKind::Host;
  if (!in_host && !out_host) {
    if (l.ndim == 0) {
      if (out != in) SFFT_CUDA_CHECK(cudaMemcpyAsync(out, in, l.bytes, cudaMemcpyDeviceToDevice, stream));
      return;
    }
    dispatch(l, out, in, stream);
    return;
  }
  // Staged: host data goes through device buffers; the call returns when `out` is written.
  const bool in_place = out == in;
  cuda::StreamBuffer d_in(in_host ? l.bytes : 0, stream);
  cuda::StreamBuffer d_out(out_host && !in_place ? l.bytes : 0, stream);
  const void *src = in_host ? d_in.get() : in;
  void *dst = in_place ? d_in.get() : (out_host ? d_out.get() : out);
  if (in_host) SFFT_CUDA_CHECK(cudaMemcpyAsync(d_in.get(), in, l.bytes, cudaMemcpyHostToDevice, stream));
  if (l.ndim == 0) {
    if (dst != src) SFFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, l.bytes, cudaMemcpyDeviceToDevice, stream));
  } else {
    dispatch(l, dst, src, stream);
  }
  if (out_host) SFFT_CUDA_CHECK(cudaMemcpyAsync(out, dst, l.bytes, cudaMemcpyDeviceToHost, stream));
  SFFT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace sfft::shift
