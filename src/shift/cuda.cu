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
constexpr unsigned kPerThread = 8;                 // words in flight per thread
constexpr unsigned kTile = kBlock * kPerThread;    // words per block tile
constexpr unsigned kMaxTileRows = kTile / 2;       // rows have >= 2 words after normalisation

// Tiling over rows of the last dim: a tile is `rows_per_tile` whole rows (short rows) or one piece of
// `kTile` words of a long row.
struct Tiling {
  std::size_t L, shift, rows, tiles, pieces, rows_per_tile;
  explicit Tiling(const Layout &l)
      : L(static_cast<std::size_t>(l.extent[l.ndim - 1])), shift(static_cast<std::size_t>(l.shift[l.ndim - 1])) {
    rows = l.words / L;
    if (L >= kTile) {
      pieces = (L + kTile - 1) / kTile;
      rows_per_tile = 1;
      tiles = rows * pieces;
    } else {
      pieces = 1;
      rows_per_tile = std::min<std::size_t>(kTile / L, kMaxTileRows);
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
    s.c0 = p * kTile;
    s.c1 = min(g.L, s.c0 + kTile);
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

template <class Word>
__global__ void __launch_bounds__(kBlock) cycle_wave_kernel(Word *data, const Word *__restrict__ scratch, Layout l,
                                                            int axis, std::size_t slab) {
  cg::grid_group grid = cg::this_grid();
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t wave = threads * kPerThread;
  const std::size_t me = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  for (std::size_t base = 0; base < l.words; base += wave) {
    Word v[kPerThread];
    std::size_t dst[kPerThread];
#pragma unroll
    for (unsigned k = 0; k < kPerThread; ++k) {
      std::size_t t = base + k * threads + me;
      dst[k] = SIZE_MAX;
      if (t < l.words) {
        std::size_t read;
        bool from_scratch;
        dst[k] = wave_step(l, axis, slab, t, &read, &from_scratch);
        v[k] = from_scratch ? scratch[read] : data[read];
      }
    }
    grid.sync();  // every old value this wave overwrites has been read (by this wave or an earlier one)
#pragma unroll
    for (unsigned k = 0; k < kPerThread; ++k)
      if (dst[k] != SIZE_MAX) data[dst[k]] = v[k];
  }
}

template <class Word>
void shift_on_device(const Layout &l, Word *out, const Word *in, cudaStream_t stream) {
  const Tiling g(l);
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

  int device = 0, sms = 0, per_sm = 0, cooperative = 0;
  SFFT_CUDA_CHECK(cudaGetDevice(&device));
  SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative) fail(SFFT_ERROR_UNSUPPORTED, "in-place shift of an odd extent needs cooperative launch");
  SFFT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cycle_wave_kernel<Word>, kBlock, 0));
  std::size_t needed = (l.words + kTile - 1) / kTile;
  unsigned blocks = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(needed, std::size_t(sms) * per_sm)));
  Layout layout = l;
  Word *data = out;
  const Word *saved_const = saved;
  std::size_t slab_words = slab;
  int cycle = axis;
  void *args[] = {&data, &saved_const, &layout, &cycle, &slab_words};
  SFFT_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void *>(cycle_wave_kernel<Word>), blocks, kBlock,
                                              args, 0, stream));
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
