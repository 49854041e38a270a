// SPDX-License-Identifier: Apache-2.0
// CUDA engine of the type-3 NUFFT. setpts: coordinates read where they are (host arrays staged), one
// range/finiteness scan of all of them with a single read-back (the layout needs the ranges), then all on the device
// (1-D: one more read-back, the busiest cell's count): rescaling and phihat at the targets (its Chebyshev fit), CUB
// radix sort of sources and targets by grid tile (1-D sources by cell), subproblems of at most kMaxSubproblem
// sources per tile (fewer when N is small, so that the subproblems fill the GPU) built from the sorted keys and a
// CUB scan, each subproblem's sources interleaved (a warp's 32 far apart within it), the grid deconvolution. The
// grid and cuFFT plan of the plan's previous points are taken over when the new grid has the same shape (or one at
// most kReuseSlack larger: more oversampling only); so are the setpts scratch and, as spares, the previous points'
// buffers, so that new points every call allocate nothing once the sizes settle. exec: persistent blocks spread the
// subproblems into shared-memory tiles and flush each once (fused with the grid deconvolution; 1-D sources spread
// evenly are gathered instead, a thread per grid cell), cuFFT (in 2-D and 3-D pruned to the lines that hold sources
// and those the targets read), interpolation with one thread per target in tile order. Spreading and interpolation
// are compiled per dimension and width class (<= 8, <= 16, wider) so that the kernel weights stay in registers; wide
// 3-D kernels take tiles of up to the device's opt-in shared memory. All on the plan's stream; exec allocates
// nothing but the staging for host strengths or outputs, on the first call that passes them.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/checked.hpp"
#include "common/cuda_stage_timer.cuh"
#include "common/cuda_util.cuh"
#include "common/env.hpp"
#include "nufft3/horner.hpp"
#include "nufft3/params.hpp"
#include "nufft3/plan.hpp"

namespace sfft::nufft3 {
namespace {

constexpr int kBlock = 256;
constexpr int kScanBlocks = 256;
constexpr unsigned kMaxSubproblem = 1024;
constexpr unsigned kMinSubproblem = 64;
constexpr unsigned kSubproblemsPerSm = 4;
constexpr std::size_t kTileBytes = 48 * 1024;
// A previous grid up to this much larger (in cells) than the new points need is reused rather than replanned:
// cuFFT planning and the grid allocation cost more than 20 % more FFT work when points change every call.
constexpr double kReuseSlack = 1.2;
// Coordinate arrays scanned at once: x, s, y, t, z, u (sources and targets interleaved by dimension, the
// order in which a non-finite entry is reported).
constexpr int kMaxArrays = 6;

// Pruned FFT (2-D and 3-D): the sources fill n1 of the n2 cells of each dimension (about half at sigma = 2)
// and the targets read about n2 / sigma + W of them, so most of a full transform's lines carry zeros in or go
// unread out. Dimension 0 is transformed last and only its input is pruned: first the lines (2-D) or planes
// (3-D) of the other dimensions at the dimension-0 indices that hold sources, then dimension 0 along the
// dimension-1 indices that targets read (every dimension-2 index): both are cuFFT batches at two offsets each
// (the periodic grid's two ends), about half the work of the full transform at sigma = 2. Worth it only where
// it skips enough of the full transform's work (kPruneAtMost, params.hpp), and for few transforms: each
// transform costs 4 cuFFT launches instead of sharing one batched plan. For a pass of 8 (H200, 2026-11-30,
// SFFT_NUFFT3_FFT=pruned, ntransf 16): uniform 2-D 2.5e5 points double 1e-5 2.21 ms against 1.96, 1e-9 3.34
// against 3.07, single 1e-4 1.20 against 1.05, clustered 3-D double 1e-5 3.51 against 3.23; but the batched 2-D
// plan in double takes a cuFFT work area as large as its grids (162 MiB of 162 at 1152^2 x 8: the plan held
// 374 MiB against the pruned passes' 218), single precision and 3-D none.
constexpr int kMaxPrunedTransforms = 4;

// Environment switches, read when an engine is made (every setpts): SFFT_NUFFT3_STAGE_TIMES (set and not
// "0") prints the stage times of every setpts and exec to stderr (cudaEvents; exec then synchronises) and what
// the plan holds after each setpts; SFFT_NUFFT3_FFT=full turns the pruned transform off, =pruned takes it for
// passes of more than kMaxPrunedTransforms transforms too, SFFT_NUFFT3_SPREAD=global spreads with global atomics
// (spread_global) instead of shared-memory tiles, and SFFT_NUFFT3_WEIGHTS=exp computes the kernel weights from
// exp/sqrt instead of polynomials (TapPolynomials), =horner those of kernels wider than TapPolynomials takes
// from the device's Horner table, for A/B measurements (benchmarks/nufft3_bench.py --stages).

template <class Real>
struct alignas(2 * sizeof(Real)) Cplx {
  Real re, im;
};

template <class Real>
struct CufftTypes;
template <>
struct CufftTypes<float> {
  using complex = cufftComplex;
  static constexpr cufftType c2c = CUFFT_C2C;
};
template <>
struct CufftTypes<double> {
  using complex = cufftDoubleComplex;
  static constexpr cufftType c2c = CUFFT_Z2Z;
};

__device__ __forceinline__ long long wrap_dev(long long c, long long n) { return c < 0 ? c + n : c; }

// c mod n in [0, n) for a first cell of a target: targets lie within the band, |c| < n + the kernel width, so
// one or two steps do what two 64-bit modulos did (each a long software routine on the GPU, per target and
// dimension).
__device__ __forceinline__ long long periodic_dev(long long c, long long n) {
  while (c < 0) c += n;
  while (c >= n) c -= n;
  return c;
}

struct ScanInputs {
  const void *v[kMaxArrays];
  unsigned long long n[kMaxArrays];
};
struct ScanResult {
  double lo, hi;
  unsigned long long bad;  // smallest index of a non-finite entry, ~0 if none
  int bad_is_nan;
  int unused;
};

// Per (block, array) min/max of the finite entries and the smallest index of a non-finite one; array blockIdx.y.
template <class Real>
__global__ void scan_partial(ScanInputs in, double *lo, double *hi, unsigned long long *bad) {
  __shared__ double s_lo[kBlock], s_hi[kBlock];
  __shared__ unsigned long long s_bad[kBlock];
  const Real *v = static_cast<const Real *>(in.v[blockIdx.y]);
  const std::size_t n = in.n[blockIdx.y];
  double mn = INFINITY, mx = -INFINITY;
  unsigned long long b = ~0ull;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x) {
    Real a = v[i];
    if (!isfinite(a)) {
      b = min(b, static_cast<unsigned long long>(i));
    } else {
      mn = fmin(mn, static_cast<double>(a));
      mx = fmax(mx, static_cast<double>(a));
    }
  }
  s_lo[threadIdx.x] = mn;
  s_hi[threadIdx.x] = mx;
  s_bad[threadIdx.x] = b;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      s_lo[threadIdx.x] = fmin(s_lo[threadIdx.x], s_lo[threadIdx.x + half]);
      s_hi[threadIdx.x] = fmax(s_hi[threadIdx.x], s_hi[threadIdx.x + half]);
      s_bad[threadIdx.x] = min(s_bad[threadIdx.x], s_bad[threadIdx.x + half]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const std::size_t o = blockIdx.y * std::size_t(gridDim.x) + blockIdx.x;
    lo[o] = s_lo[0];
    hi[o] = s_hi[0];
    bad[o] = s_bad[0];
  }
}

// One block per array: the partials of scan_partial (`blocks` per array) into one ScanResult.
template <class Real>
__global__ void scan_finish(ScanInputs in, int blocks, const double *lo, const double *hi,
                            const unsigned long long *bad, ScanResult *out) {
  __shared__ double s_lo[kBlock], s_hi[kBlock];
  __shared__ unsigned long long s_bad[kBlock];
  double mn = INFINITY, mx = -INFINITY;
  unsigned long long b = ~0ull;
  for (int i = threadIdx.x; i < blocks; i += blockDim.x) {
    const std::size_t o = blockIdx.x * std::size_t(blocks) + i;
    mn = fmin(mn, lo[o]);
    mx = fmax(mx, hi[o]);
    b = min(b, bad[o]);
  }
  s_lo[threadIdx.x] = mn;
  s_hi[threadIdx.x] = mx;
  s_bad[threadIdx.x] = b;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      s_lo[threadIdx.x] = fmin(s_lo[threadIdx.x], s_lo[threadIdx.x + half]);
      s_hi[threadIdx.x] = fmax(s_hi[threadIdx.x], s_hi[threadIdx.x + half]);
      s_bad[threadIdx.x] = min(s_bad[threadIdx.x], s_bad[threadIdx.x + half]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    ScanResult r{s_lo[0], s_hi[0], s_bad[0], 0, 0};
    if (r.bad != ~0ull) r.bad_is_nan = isnan(static_cast<const Real *>(in.v[blockIdx.x])[r.bad]) ? 1 : 0;
    out[blockIdx.x] = r;
  }
}

// Coordinate arrays of one side (sources or targets), one per dimension, in device-readable memory.
template <class Real>
struct Coords {
  const Real *v[3];
};

// Geometry the kernels need, by value.
struct Geometry {
  int dim;
  KernelSpec kernel;
  long long n1[3], n2[3];
  double center[3];  // sources: C; targets: D
  double scale[3];   // sources: 1 / h1; targets: tgt_scale
  double phase[3];   // sources: D (phase D.(x - C)); targets: C (phase C.s)
  double h1[3];
  int tile[3];   // cells per tile and dimension (1 for unused dimensions)
  int tiles[3];  // tiles per dimension
  int sign;
  FourierFit fourier;  // phihat at the targets
  // Kernel weights of kernels wider than TapPolynomials takes as polynomials (the prolate kernel, or
  // SFFT_NUFFT3_WEIGHTS=horner): horner_degree > 0 and (degree + 1) x width coefficients of Real (row 0 the
  // highest power, horner.hpp) replace kernel_value.
  const void *horner;
  int horner_degree;
};

// Weight of tap i of a point at grid coordinate pos whose first cell is `first`: phi(first + i - pos), directly
// or from the Horner table (the point's offset t = first - pos + W/2 in [0, 1) is the same for every tap).
template <class Real>
__device__ __forceinline__ Real tap_weight(const Geometry &g, long long first, Real pos, int i) {
  if (g.horner_degree == 0) return kernel_value(g.kernel, Real(first + i) - pos);
  const Real *c = static_cast<const Real *>(g.horner) + i;
  const Real z = 2 * (Real(first) - pos + Real(g.kernel.half_width)) - 1;
  Real w = __ldg(c);
  for (int r = 1; r <= g.horner_degree; ++r) w = w * z + __ldg(c + r * g.kernel.width);
  return w;
}

// Kernel weights as polynomials passed by value to the spreading and interpolation kernels (the table of
// fit_horner, row 0 the highest power): in a kernel argument every coefficient is a constant-bank operand of
// its FMA (or, at a tap index known only at run time, a constant-cache load), so a weight costs `degree` FMAs
// (about 10 at W = 11) where kernel_value's division, square root and exp cost about 55 instructions in
// double, and the global table (Geometry::horner) a load per coefficient. degree 0: not used (widths above
// kCols, a fit above kRows - 1, or SFFT_NUFFT3_WEIGHTS=exp).
template <class Real>
struct TapPolynomials {
  static constexpr int kRows = 17, kCols = 16;
  int degree = 0;
  Real c[kRows][kCols];
};

// Weight of tap i at offset z = 2 (first - pos + W/2) - 1 in [-1, 1).
template <class Real>
__device__ __forceinline__ Real poly_weight(const TapPolynomials<Real> &p, Real z, int i) {
  Real w = p.c[0][i];
#pragma unroll
  for (int r = 1; r < TapPolynomials<Real>::kRows; ++r) {
    if (r > p.degree) break;
    w = w * z + p.c[r][i];
  }
  return w;
}

template <class Real>
__device__ __forceinline__ Real poly_offset(const Geometry &g, long long first, Real pos) {
  return 2 * (Real(first) - pos + Real(g.kernel.half_width)) - 1;
}

// tap_weight from p where it has the polynomials.
template <class Real>
__device__ __forceinline__ Real tap_weight(const Geometry &g, const TapPolynomials<Real> &p, long long first, Real pos,
                                           int i) {
  return p.degree > 0 ? poly_weight(p, poly_offset(g, first, pos), i) : tap_weight(g, first, pos, i);
}

// Grid coordinate, tile key and phase factor of each point (unsorted order).
template <class Real, bool kTargets>
__global__ void prepare_points(Geometry g, Coords<Real> coords, std::size_t n, Real *pos, Cplx<Real> *factor,
                               unsigned *key, unsigned *index) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x) {
    double phase = 0, amp = 1;
    unsigned k = 0;
    for (int d = 0; d < g.dim; ++d) {
      double c = coords.v[d][i];
      double rel = c - g.center[d];
      Real p = static_cast<Real>(rel * g.scale[d]);
      pos[d * n + i] = p;
      long long first = static_cast<long long>(ceil(p - Real(g.kernel.half_width)));
      long long cell;
      if (kTargets) {
        phase += g.phase[d] * c;
        amp /= fourier_at(g.kernel, g.fourier, rel * g.h1[d]);
        cell = periodic_dev(first, g.n2[d]);
      } else {
        phase += g.phase[d] * rel;
        cell = first + g.n1[d] / 2;
      }
      k = k * g.tiles[d] + static_cast<unsigned>(cell / g.tile[d]);
    }
    double sn, cs;
    sincos(phase, &sn, &cs);
    factor[i] = Cplx<Real>{static_cast<Real>(amp * cs), static_cast<Real>(amp * g.sign * sn)};
    key[i] = k;
    index[i] = static_cast<unsigned>(i);
  }
}

// Reorders positions and factors into sorted order.
template <class Real>
__global__ void gather_points(int dim, std::size_t n, const unsigned *perm, const Real *pos_in,
                              const Cplx<Real> *fac_in, Real *pos_out, Cplx<Real> *fac_out) {
  for (std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; j < n;
       j += std::size_t(blockDim.x) * gridDim.x) {
    unsigned i = perm[j];
    for (int d = 0; d < dim; ++d) pos_out[d * n + j] = pos_in[d * n + i];
    fac_out[j] = fac_in[i];
  }
}

// First and one-past-last sorted position of each non-empty bin (start and end zeroed before: empty bins stay
// empty). No atomics, so a bin holding most points (clustered sources) costs no more than any other.
__global__ void bin_bounds(const unsigned *keys, std::size_t n, unsigned *start, unsigned *end) {
  for (std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; j < n;
       j += std::size_t(blockDim.x) * gridDim.x) {
    const unsigned k = keys[j];
    if (j == 0 || keys[j - 1] != k) start[k] = static_cast<unsigned>(j);
    if (j + 1 == n || keys[j + 1] != k) end[k] = static_cast<unsigned>(j + 1);
  }
}

// Cell numbers (sorted) -> tile numbers, in place.
__global__ void tile_of_cell(unsigned *keys, std::size_t n, unsigned tile) {
  for (std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; j < n;
       j += std::size_t(blockDim.x) * gridDim.x)
    keys[j] /= tile;
}

// Subproblems of each bin: ceil(count / limit); subs[nbins] stays 0 so that its exclusive scan ends in the total.
__global__ void count_subproblems(const unsigned *start, const unsigned *end, std::size_t nbins, unsigned limit,
                                  unsigned *subs) {
  for (std::size_t b = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; b < nbins;
       b += std::size_t(blockDim.x) * gridDim.x)
    subs[b] = (end[b] - start[b] + limit - 1) / limit;
}

// Subproblem table from the scanned counts (offset: nbins + 1 entries); *nsub = their total.
__global__ void fill_subproblems(const unsigned *start, const unsigned *end, const unsigned *offset, std::size_t nbins,
                                 unsigned limit, unsigned *sub_bin, unsigned *sub_start, unsigned *sub_count,
                                 unsigned *nsub) {
  for (std::size_t b = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; b < nbins;
       b += std::size_t(blockDim.x) * gridDim.x) {
    // Equal parts (a bin of limit + 1 sources: two of about limit / 2, not limit and 1).
    const unsigned count = end[b] - start[b], parts = (count + limit - 1) / limit;
    for (unsigned i = 0; i < parts; ++i) {
      const unsigned from = static_cast<unsigned>(static_cast<unsigned long long>(i) * count / parts);
      const unsigned to = static_cast<unsigned>(static_cast<unsigned long long>(i + 1) * count / parts);
      sub_bin[offset[b] + i] = static_cast<unsigned>(b);
      sub_start[offset[b] + i] = start[b] + from;
      sub_count[offset[b] + i] = to - from;
    }
    if (b == 0) *nsub = offset[nbins];
  }
}

// Reorders each subproblem's sources (block per subproblem, the count read on the device): position q takes the
// source at (q * stride) mod count of the bin order, stride coprime to count and about count / 32, so that the
// 32 lanes of a spreading warp, which read consecutive positions (coalesced), hold sources spread over the
// subproblem. The stable sort keeps the caller's order within a tile, and sources given along a curve (a
// spiral, trajectories) are neighbours there: 32 of them would add into the same few cells at once,
// serialising the shared-memory atomics.
__global__ void interleave_subproblems(const unsigned *sub_start, const unsigned *sub_count, const unsigned *nsub,
                                       const unsigned *in, unsigned *out) {
  const unsigned total = *nsub;
  for (unsigned sub = blockIdx.x; sub < total; sub += gridDim.x) {
    const unsigned begin = sub_start[sub], count = sub_count[sub];
    unsigned stride = max(1u, count / 32);
    auto coprime = [](unsigned a, unsigned b) {
      while (b != 0) {
        const unsigned r = a % b;
        a = b;
        b = r;
      }
      return a == 1;
    };
    while (!coprime(stride, count)) ++stride;
    for (unsigned q = threadIdx.x; q < count; q += blockDim.x) out[begin + q] = in[begin + (q * stride) % count];
  }
}

// 1 / phihat(2 pi c / n2) for the n1 source-grid cells c in [-n1/2, n1/2) of one dimension.
template <class Real>
__global__ void grid_correction_kernel(KernelSpec k, FourierFit fit, long long n1, long long n2, Real *out) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n1;
       i += static_cast<long long>(blockDim.x) * gridDim.x) {
    const double w = 2 * M_PI * static_cast<double>(i - n1 / 2) / static_cast<double>(n2);
    out[i] = static_cast<Real>(1 / fourier_at(k, fit, w));
  }
}

// Into global memory: two native reductions (REDG.ADD.F32/F64).
template <class Real>
__device__ __forceinline__ void atomic_add(Cplx<Real> *p, Real re, Real im) {
  atomicAdd(&p->re, re);
  atomicAdd(&p->im, im);
}

// Into shared memory, where sm_90 has no floating-point atomic add: atomicAdd compiles to a load and a
// compare-and-swap loop (ATOMS.CAST.SPIN) per component, and the H100 stage times put the tiles' spreading at
// about one such lane operation per clock per SM, most of every exec. One CAS of the whole complex cell (64-bit
// in single, ATOMS.CAS.128 in double) halves them. The loop compares bit patterns (as the hardware does), so
// NaN contents cannot make it spin.
struct alignas(16) Bits128 {
  unsigned long long lo, hi;
};
__device__ __forceinline__ bool same_bits(unsigned long long a, unsigned long long b) { return a == b; }
__device__ __forceinline__ bool same_bits(const Bits128 &a, const Bits128 &b) { return a.lo == b.lo && a.hi == b.hi; }

template <class Bits, class Real>
__device__ __forceinline__ void cas_add(Cplx<Real> *p, Real re, Real im) {
  static_assert(sizeof(Bits) == sizeof(Cplx<Real>) && alignof(Bits) == alignof(Cplx<Real>), "one word per cell");
  Bits *a = reinterpret_cast<Bits *>(p);
  Bits seen = *a, expected;
  do {
    expected = seen;
    Cplx<Real> v;
    memcpy(&v, &expected, sizeof v);
    v.re += re;
    v.im += im;
    Bits next;
    memcpy(&next, &v, sizeof next);
    seen = atomicCAS(a, expected, next);
  } while (!same_bits(seen, expected));
}
__device__ __forceinline__ void atomic_add_shared(Cplx<float> *p, float re, float im) {
  cas_add<unsigned long long>(p, re, im);
}
__device__ __forceinline__ void atomic_add_shared(Cplx<double> *p, double re, double im) {
  cas_add<Bits128>(p, re, im);
}

struct SpreadArgs {
  std::size_t N;
  const unsigned *index;  // sorted -> original
  const unsigned *sub_bin, *sub_start, *sub_count;
  const unsigned *nsub;  // subproblems in the table (device memory: setpts never reads it back)
  const void *pos, *phase, *f, *corr[3];
  void *grid;
  std::size_t n2_total;
  int ext[3];  // tile extent in cells incl. the kernel's overhang
};

// Kernel weights of one dimension into registers: MW (a compile-time bound on the width) slots, loops over them
// unrolled so that the array never goes to local memory (it did with a runtime-width loop over kMaxWidth slots,
// one local load per tap); slots at and beyond the width stay unused. MW = kMaxWidth (widths above 16) keeps
// the rolled loop. In 3-D only the innermost loop is unrolled (the middle one's weights are read from local
// memory once per line of W taps): unrolling both took 185-255 registers a thread and spilled in double.
template <int MW>
constexpr int unroll_count() {
  return MW <= 16 ? MW : 1;
}

template <int MW, class Real>
__device__ __forceinline__ long long weights_of(const Geometry &g, Real pos, Real (&w)[MW]) {
  const KernelSpec &k = g.kernel;
  const long long first = static_cast<long long>(ceil(pos - Real(k.half_width)));
  constexpr int kUnroll = unroll_count<MW>();
#pragma unroll kUnroll
  for (int i = 0; i < MW; ++i)
    if (i < k.width) w[i] = tap_weight(g, first, pos, i);
  return first;
}

// The same from polynomials where p has them (p.degree > 0, MW <= TapPolynomials::kCols): one Horner
// recurrence over all taps, a row of coefficients at a time.
template <int MW, class Real>
__device__ __forceinline__ long long weights_of(const Geometry &g, const TapPolynomials<Real> &p, Real pos,
                                                Real (&w)[MW]) {
  if (MW > TapPolynomials<Real>::kCols || p.degree == 0) return weights_of<MW>(g, pos, w);
  constexpr int kSlots = MW < TapPolynomials<Real>::kCols ? MW : TapPolynomials<Real>::kCols;
  const long long first = static_cast<long long>(ceil(pos - Real(g.kernel.half_width)));
  const Real z = poly_offset(g, first, pos);
#pragma unroll
  for (int i = 0; i < kSlots; ++i) w[i] = p.c[0][i];
#pragma unroll
  for (int r = 1; r < TapPolynomials<Real>::kRows; ++r) {
    if (r > p.degree) break;
#pragma unroll
    for (int i = 0; i < kSlots; ++i)
      if (i < g.kernel.width) w[i] = w[i] * z + p.c[r][i];
  }
  return first;
}

// Subproblem sub's tile: its cells zeroed, its origin (first cell per dimension) in origin[]. Every thread of the
// block calls it; the barrier before the return lets the caller add into the tile.
template <int DIM, class Real>
__device__ void start_tile(const Geometry &g, const SpreadArgs &a, Cplx<Real> *tile, unsigned sub, int (&origin)[3]) {
  const int cells = a.ext[0] * a.ext[1] * a.ext[2];
  for (int c = threadIdx.x; c < cells; c += blockDim.x) tile[c] = Cplx<Real>{0, 0};
  unsigned rest = a.sub_bin[sub];
  for (int d = 2; d >= 0; --d) origin[d] = 0;
  for (int d = DIM - 1; d >= 0; --d) {
    origin[d] = static_cast<int>(rest % g.tiles[d]) * g.tile[d];
    rest /= g.tiles[d];
  }
  __syncthreads();
}

// Adds the finished tile into the FFT grid with the per-cell deconvolution applied. Every thread of the block
// calls it after a barrier; the barrier at its end lets the next subproblem zero the tile.
template <int DIM, class Real>
__device__ void flush_tile(const Geometry &g, const SpreadArgs &a, const Cplx<Real> *tile, const int (&origin)[3]) {
  const int ey = a.ext[1], ez = a.ext[2];
  const int cells = a.ext[0] * ey * ez;
  Cplx<Real> *grid = static_cast<Cplx<Real> *>(a.grid) + blockIdx.y * a.n2_total;
  const Real *cx = static_cast<const Real *>(a.corr[0]);
  const Real *cy = static_cast<const Real *>(a.corr[1]);
  const Real *cz = static_cast<const Real *>(a.corr[2]);
  // The cell's local coordinates l advance by the block's stride with carries: three integer divisions a
  // cell cost more than the rest of the flush at W = 4 in 2-D.
  const int stride = static_cast<int>(blockDim.x);
  const int step[3] = {stride / (ey * ez), stride / ez % ey, stride % ez};
  int l[3] = {static_cast<int>(threadIdx.x) / (ey * ez), static_cast<int>(threadIdx.x) / ez % ey,
              static_cast<int>(threadIdx.x) % ez};
  for (int c = threadIdx.x; c < cells; c += stride) {
    const int here[3] = {l[0], l[1], l[2]};
    l[2] += step[2];
    const int carry2 = l[2] >= ez;
    l[2] -= carry2 * ez;
    l[1] += step[1] + carry2;
    const int carry1 = l[1] >= ey;
    l[1] -= carry1 * ey;
    l[0] += step[0] + carry1;
    const Cplx<Real> v = tile[c];
    if (v.re == Real(0) && v.im == Real(0)) continue;
    long long idx = 0;
    Real corr = 1;
    bool inside = true;
    for (int d = 0; d < DIM; ++d) {
      const long long cell = origin[d] + here[d];
      inside &= cell < g.n1[d];
      if (!inside) break;
      corr *= (d == 0 ? cx : d == 1 ? cy : cz)[cell];
      idx = idx * g.n2[d] + wrap_dev(cell - g.n1[d] / 2, g.n2[d]);
    }
    if (inside) atomic_add(grid + idx, v.re * corr, v.im * corr);
  }
  __syncthreads();
}

// One subproblem of spread_tiles (transform blockIdx.y): spread it into the shared tile, then flush the tile
// into the FFT grid with the per-cell deconvolution applied. Every thread of the block calls it. Dimension 0's
// weights are computed as its loop reaches them, the others' (at most MW) are held in registers.
template <int DIM, int MW, class Real>
__device__ void spread_one_tile(const Geometry &g, const TapPolynomials<Real> &poly, const SpreadArgs &a,
                                Cplx<Real> *tile, unsigned sub) {
  const int W = g.kernel.width;
  const int ey = a.ext[1], ez = a.ext[2];
  int origin[3];
  start_tile<DIM>(g, a, tile, sub, origin);
  const Real *pos = static_cast<const Real *>(a.pos);
  const Cplx<Real> *phase = static_cast<const Cplx<Real> *>(a.phase);
  const Cplx<Real> *f = static_cast<const Cplx<Real> *>(a.f) + blockIdx.y * a.N;
  const unsigned begin = a.sub_start[sub], count = a.sub_count[sub];
  constexpr int kUnroll = unroll_count<MW>(), kMiddle = DIM == 3 ? 1 : kUnroll;
  // In 3-D a tile can hold fewer sources than the block has threads (an 8^3 interior at 0.1 sources a cell:
  // 51 for 256 threads; a 12^3 one: 173 for up to 1024), so each source's W planes are shared among up to W
  // threads (`split`; each recomputes the 2 W + 1 weights it needs for its W^2 taps a plane). Consecutive
  // items are the planes of one source, then sources spread over the subproblem (interleave_subproblems).
  const int split =
      DIM == 3 ? static_cast<int>(min(static_cast<unsigned>(W), max(1u, blockDim.x / max(count, 1u)))) : 1;
  for (unsigned item = threadIdx.x; item < count * split; item += blockDim.x) {
    const unsigned j = begin + item / split;
    const int plane = static_cast<int>(item % split);
    const Cplx<Real> fv = f[a.index[j]], ph = phase[j];
    const Real vr = fv.re * ph.re - fv.im * ph.im, vi = fv.re * ph.im + fv.im * ph.re;
    const Real p0 = pos[j];
    const long long first0 = static_cast<long long>(ceil(p0 - Real(g.kernel.half_width)));
    const int local0 = static_cast<int>(first0 + g.n1[0] / 2 - origin[0]);
    Real w1[MW], w2[MW];
    int local1 = 0, local2 = 0;
    if constexpr (DIM > 1)
      local1 = static_cast<int>(weights_of<MW>(g, poly, pos[a.N + j], w1) + g.n1[1] / 2 - origin[1]);
    if constexpr (DIM > 2)
      local2 = static_cast<int>(weights_of<MW>(g, poly, pos[2 * a.N + j], w2) + g.n1[2] / 2 - origin[2]);
    for (int i = plane; i < W; i += split) {
      const Real w0 = tap_weight(g, poly, first0, p0, i);
      const Real ar = vr * w0, ai = vi * w0;
      if constexpr (DIM == 1) {
        atomic_add_shared(tile + local0 + i, ar, ai);
      } else {
#pragma unroll kMiddle
        for (int k = 0; k < MW; ++k) {
          if (k < W) {
            const Real br = ar * w1[k], bi = ai * w1[k];
            Cplx<Real> *line = tile + ((local0 + i) * ey + local1 + k) * ez + local2;
            if constexpr (DIM == 2) {
              atomic_add_shared(line, br, bi);
            } else {
#pragma unroll kUnroll
              for (int l = 0; l < MW; ++l)
                if (l < W) atomic_add_shared(line + l, br * w2[l], bi * w2[l]);
            }
          }
        }
      }
    }
  }
  __syncthreads();
  flush_tile<DIM>(g, a, tile, origin);
}

// Persistent blocks, blockIdx.y the transform: block b takes subproblems b, b + gridDim.x, ... (each at most
// kMaxSubproblem sources, so the shares stay even); the count is read on the device, never by the host.
// At most 64 registers a thread (launch bounds: 1024 threads): 4 blocks of 256 with 48 KB tiles, or one of
// 1024 with a large tile; unbounded, the unrolled 3-D loops took 70-134 and left 1-3 blocks per SM.
template <int DIM, int MW, class Real>
__global__ void __launch_bounds__(1024, 1) spread_tiles(Geometry g, TapPolynomials<Real> poly, SpreadArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];  // 16: the double cells take 128-bit compare-and-swaps
  Cplx<Real> *tile = reinterpret_cast<Cplx<Real> *>(smem);
  const unsigned nsub = *a.nsub;
  for (unsigned sub = blockIdx.x; sub < nsub; sub += gridDim.x) spread_one_tile<DIM, MW, Real>(g, poly, a, tile, sub);
}

// Spreading without shared-memory atomics (2-D and 3-D; the output-driven order of cuFINUFFT's method 3, after
// NonuniformFFTs.jl): the block's threads take the taps of one source at a time, each thread its own tap of the
// last two dimensions (its own cell; in 3-D it loops over the W planes of dimension 0), and add with plain loads
// and stores where spread_tiles needs a compare-and-swap loop per tap; a barrier separates consecutive sources,
// whose cells may overlap. The sources come in batches of kTapBatch whose strengths, first cells and weights are
// first computed one per thread into shared memory after the tile (tap_staging_bytes). Where it runs by default:
// CudaEngine::choose_tiles.
constexpr int kTapBatch = 64;
__host__ __device__ constexpr std::size_t tap_staging_bytes(int dim, int W, std::size_t real_bytes) {
  return kTapBatch * (static_cast<std::size_t>(dim * W) * real_bytes + 2 * real_bytes + 4 * sizeof(int));
}

// Planes of dimension 0 a 3-D tap-by-tap block spreads at once: as many of the W as `threads` holds W^2 taps of.
__host__ __device__ inline int tap_planes(int W, int threads) { return max(1, min(W, threads / (W * W))); }

template <int DIM, class Real>
__global__ void __launch_bounds__(kBlock) spread_tiles_by_taps(Geometry g, TapPolynomials<Real> poly, SpreadArgs a) {
  static_assert(DIM == 2 || DIM == 3, "tap by tap in 2-D and 3-D");
  extern __shared__ __align__(16) unsigned char smem[];
  Cplx<Real> *tile = reinterpret_cast<Cplx<Real> *>(smem);
  const std::size_t tile_bytes = static_cast<std::size_t>(a.ext[0]) * a.ext[1] * a.ext[2] * sizeof(Cplx<Real>);
  const int W = g.kernel.width, ey = a.ext[1], ez = a.ext[2];
  Real *weights = reinterpret_cast<Real *>(smem + (tile_bytes + 15) / 16 * 16);  // [kTapBatch][DIM][W]
  Cplx<Real> *value = reinterpret_cast<Cplx<Real> *>(weights + kTapBatch * DIM * W);
  int4 *corner = reinterpret_cast<int4 *>(value + kTapBatch);  // first local cell per dimension
  // This thread's tap of the last two dimensions (2-D: k of dimension 0, l of dimension 1). In 3-D the block
  // covers `planes` planes of dimension 0 at once (tap_planes: all W where W^3 fits the block), this thread
  // the planes ti, ti + planes, ...
  const int t = static_cast<int>(threadIdx.x), W2 = W * W;
  const int planes = DIM == 3 ? tap_planes(W, static_cast<int>(blockDim.x)) : 1;
  const int ti = t / W2, tk = t % W2 / W, tl = t % W;
  const bool has_tap = t < planes * W2;
  const Real *pos = static_cast<const Real *>(a.pos);
  const Cplx<Real> *phase = static_cast<const Cplx<Real> *>(a.phase);
  const Cplx<Real> *f = static_cast<const Cplx<Real> *>(a.f) + blockIdx.y * a.N;
  const unsigned nsub = *a.nsub;
  for (unsigned sub = blockIdx.x; sub < nsub; sub += gridDim.x) {
    int origin[3];
    start_tile<DIM>(g, a, tile, sub, origin);
    const unsigned begin = a.sub_start[sub], count = a.sub_count[sub];
    for (unsigned batch = 0; batch < count; batch += kTapBatch) {
      const unsigned n = min(static_cast<unsigned>(kTapBatch), count - batch);
      for (unsigned s = threadIdx.x; s < n; s += blockDim.x) {
        const unsigned j = begin + batch + s;
        const Cplx<Real> fv = f[a.index[j]], ph = phase[j];
        value[s] = Cplx<Real>{fv.re * ph.re - fv.im * ph.im, fv.re * ph.im + fv.im * ph.re};
        int c[3] = {0, 0, 0};
        for (int d = 0; d < DIM; ++d) {
          const Real p = pos[d * a.N + j];
          const long long first = static_cast<long long>(ceil(p - Real(g.kernel.half_width)));
          c[d] = static_cast<int>(first + g.n1[d] / 2 - origin[d]);
          Real *w = weights + (DIM * s + d) * W;
          if (poly.degree > 0) {
            // Tap indices known at compile time: every coefficient a constant-bank operand.
            const Real z = poly_offset(g, first, p);
#pragma unroll
            for (int i = 0; i < TapPolynomials<Real>::kCols; ++i)
              if (i < W) w[i] = poly_weight(poly, z, i);
          } else {
            for (int i = 0; i < W; ++i) w[i] = tap_weight(g, first, p, i);
          }
        }
        corner[s] = int4{c[0], c[1], c[2], 0};
      }
      __syncthreads();
      // The next source's staged values are read before this source's cells are added (the barrier between
      // sources keeps the compiler from moving the reads up), so their latency overlaps the adds.
      int4 c_next{};
      Cplx<Real> v_next{};
      Real wkl_next = 0, w0_next = 0;
      auto stage = [&](unsigned s) {
        const Real *w = weights + DIM * s * W;
        c_next = corner[s];
        v_next = value[s];
        wkl_next = w[(DIM - 2) * W + tk] * w[(DIM - 1) * W + tl];
        if constexpr (DIM == 3) w0_next = w[ti];
      };
      if (has_tap) stage(0);
      for (unsigned s = 0; s < n; ++s) {
        if (has_tap) {
          const int4 c = c_next;
          const Cplx<Real> v = v_next;
          const Real wkl = wkl_next, w0 = w0_next;
          if (s + 1 < n) stage(s + 1);
          if constexpr (DIM == 2) {
            Cplx<Real> &cell = tile[(c.x + tk) * ey + c.y + tl];
            cell.re += v.re * wkl;
            cell.im += v.im * wkl;
          } else {
            const Real br = v.re * wkl, bi = v.im * wkl;
            const std::size_t plane = static_cast<std::size_t>(ey) * ez;
            const Real *w = weights + DIM * s * W;
            Cplx<Real> *cell = tile + (static_cast<std::size_t>(c.x + ti) * ey + c.y + tk) * ez + c.z + tl;
            cell->re += br * w0;
            cell->im += bi * w0;
            for (int i = ti + planes; i < W; i += planes) {
              cell += planes * plane;
              cell->re += br * w[i];
              cell->im += bi * w[i];
            }
          }
        }
        __syncthreads();
      }
    }
    flush_tile<DIM>(g, a, tile, origin);
  }
}

// Spreading with global atomics, one thread per source in tile order (for locality in L2): where no tile fits
// in shared memory, and SFFT_NUFFT3_SPREAD=global. The deconvolution is separable, so it scales each
// dimension's weights (from the n1-cell correction arrays) instead of the flushed cells. Dimension 0's weights
// are computed as its loop reaches them, the others' held in registers as in spread_one_tile (at most MW; in
// 3-D the middle loop stays rolled).
template <int DIM, int MW, class Real>
__global__ void __launch_bounds__(kBlock) spread_global(Geometry g, TapPolynomials<Real> poly, SpreadArgs a) {
  const int W = g.kernel.width;
  constexpr int kUnroll = unroll_count<MW>(), kMiddle = DIM == 3 ? 1 : kUnroll;
  const Real *pos = static_cast<const Real *>(a.pos);
  const Cplx<Real> *phase = static_cast<const Cplx<Real> *>(a.phase);
  const Cplx<Real> *f = static_cast<const Cplx<Real> *>(a.f) + blockIdx.y * a.N;
  Cplx<Real> *grid = static_cast<Cplx<Real> *>(a.grid) + blockIdx.y * a.n2_total;
  const Real *cx = static_cast<const Real *>(a.corr[0]);
  const Real *cy = static_cast<const Real *>(a.corr[1]);
  const Real *cz = static_cast<const Real *>(a.corr[2]);
  const long long n2y = g.n2[1], n2z = g.n2[2];
  for (std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; j < a.N;
       j += std::size_t(blockDim.x) * gridDim.x) {
    const Cplx<Real> fv = f[a.index[j]], ph = phase[j];
    const Real vr = fv.re * ph.re - fv.im * ph.im, vi = fv.re * ph.im + fv.im * ph.re;
    const Real p0 = pos[j];
    const long long first0 = static_cast<long long>(ceil(p0 - Real(g.kernel.half_width)));
    // Source cells c = first + i + n1/2 lie in [0, n1) (the grid is sized for it); FFT index (c - n1/2) mod n2.
    const long long c0 = first0 + g.n1[0] / 2;
    Real w1[MW], w2[MW];
    long long c1 = 0, c2 = 0;
    if constexpr (DIM > 1) {
      c1 = weights_of<MW>(g, poly, pos[a.N + j], w1) + g.n1[1] / 2;
#pragma unroll kUnroll
      for (int k = 0; k < MW; ++k)
        if (k < W) w1[k] *= cy[c1 + k];
    }
    if constexpr (DIM > 2) {
      c2 = weights_of<MW>(g, poly, pos[2 * a.N + j], w2) + g.n1[2] / 2;
#pragma unroll kUnroll
      for (int l = 0; l < MW; ++l)
        if (l < W) w2[l] *= cz[c2 + l];
    }
    const long long gy0 = DIM > 1 ? wrap_dev(c1 - g.n1[1] / 2, n2y) : 0;
    const long long gz0 = DIM > 2 ? wrap_dev(c2 - g.n1[2] / 2, n2z) : 0;
    for (int i = 0; i < W; ++i) {
      const Real w0 = tap_weight(g, poly, first0, p0, i) * cx[c0 + i];
      const Real ar = vr * w0, ai = vi * w0;
      const long long gx = wrap_dev(c0 + i - g.n1[0] / 2, g.n2[0]);
      if constexpr (DIM == 1) {
        atomic_add(grid + gx, ar, ai);
      } else {
        long long gy = gy0;
#pragma unroll kMiddle
        for (int k = 0; k < MW; ++k) {
          if (k < W) {
            const Real br = ar * w1[k], bi = ai * w1[k];
            Cplx<Real> *line = grid + (gx * n2y + gy) * n2z;
            if constexpr (DIM == 2) {
              atomic_add(line, br, bi);
            } else {
              long long gz = gz0;
#pragma unroll kUnroll
              for (int l = 0; l < MW; ++l) {
                if (l < W) {
                  atomic_add(line + gz, br * w2[l], bi * w2[l]);
                  if (++gz == n2z) gz = 0;
                }
              }
            }
            if (++gy == n2y) gy = 0;
          }
        }
      }
    }
  }
}

// 1-D spreading by gathering, where the sources are spread evenly enough (choose_gathering): sources sorted by
// cell (cell_start: the first sorted source of each of the n1 cells, n1 + 1 entries), `lanes` consecutive
// threads per grid cell (a power of two up to 32) share the sum over the sources whose kernel covers it and
// the first of them writes the cell once, scaled by its deconvolution. No atomics, no zeroing pass and no tile
// flush: grid cells that no source cell maps to are written as zeros. The weights are the tiles' (the same
// polynomials, or tap_weight). A block's cells read one run of sorted sources: the block stages it in shared
// memory (positions, strength times phase) with coalesced loads, so that each source's strength is gathered
// from the user's order and multiplied once, not once per covered cell (W times): per thread the loop then
// reads shared memory only.
// Its own arguments, not SpreadArgs fields: two more fields there changed the optimiser's treatment of the tap
// kernels' copy of SpreadArgs (3-D double: 79 registers instead of 64, 3 blocks of 256 an SM instead of 4; uniform
// 3-D double 1e-5 spreading 1.49 -> 1.62 ms on the H200).
constexpr unsigned kGatherStage = 1024;  // sources staged a round
template <class Real>
__global__ void __launch_bounds__(kBlock)
    spread_gather_1d(Geometry g, TapPolynomials<Real> poly, SpreadArgs a, const unsigned *cell_start, unsigned lanes) {
  const long long n1 = g.n1[0], n2 = g.n2[0], half = n1 / 2;
  const int W = g.kernel.width;
  const Real *pos = static_cast<const Real *>(a.pos);
  const Cplx<Real> *phase = static_cast<const Cplx<Real> *>(a.phase);
  const Cplx<Real> *f = static_cast<const Cplx<Real> *>(a.f) + blockIdx.y * a.N;
  Cplx<Real> *grid = static_cast<Cplx<Real> *>(a.grid) + blockIdx.y * a.n2_total;
  const Real *corr = static_cast<const Real *>(a.corr[0]);
  // A source's tap index differs from lane to lane: constant-bank operands would serialise, shared memory
  // serves each lane its own coefficient (rows of 16 taps, conflict-free).
  __shared__ Real coeff[TapPolynomials<Real>::kRows][TapPolynomials<Real>::kCols];
  __shared__ Real staged_pos[kGatherStage];
  __shared__ Cplx<Real> staged_value[kGatherStage];
  __shared__ unsigned run[2];  // the block's sorted sources: [run[0], run[1])
  constexpr int kCols = TapPolynomials<Real>::kCols;
  for (int e = threadIdx.x; e < TapPolynomials<Real>::kRows * kCols; e += blockDim.x)
    coeff[e / kCols][e % kCols] = poly.c[e / kCols][e % kCols];
  const long long cells_per_block = blockDim.x / lanes;
  const long long blocks = (n2 + cells_per_block - 1) / cells_per_block;
  const unsigned part = threadIdx.x % lanes;
  // Block-uniform loop (its barriers); the lanes of a cell are in one warp (lanes divides 32).
  for (long long b = blockIdx.x; b < blocks; b += gridDim.x) {
    const long long m = b * cells_per_block + threadIdx.x / lanes;  // grid index; it holds source cell c
    const long long c = m < n1 - half ? m + half : m - n2 + half;   // (c - n1/2) mod n2 = m
    const bool covered = m < n2 && c >= 0 && c < n1;
    unsigned from = 0, to = 0;
    if (covered) {
      from = cell_start[c - W + 1 > 0 ? c - W + 1 : 0];
      to = cell_start[c + 1];
    }
    if (threadIdx.x == 0) {
      run[0] = ~0u;
      run[1] = 0;
    }
    __syncthreads();
    if (from < to) {
      atomicMin(&run[0], from);
      atomicMax(&run[1], to);
    }
    __syncthreads();
    const unsigned first = run[0], last = run[1];
    Real sr = 0, si = 0;
    for (unsigned base = first; base < last; base += kGatherStage) {
      const unsigned count = min(kGatherStage, last - base);
      for (unsigned e = threadIdx.x; e < count; e += blockDim.x) {
        const unsigned j = base + e;
        staged_pos[e] = pos[j];
        const Cplx<Real> fv = f[a.index[j]], ph = phase[j];
        staged_value[e] = Cplx<Real>{fv.re * ph.re - fv.im * ph.im, fv.re * ph.im + fv.im * ph.re};
      }
      __syncthreads();
      unsigned j = from + part;
      if (j < base) j += (base - j + lanes - 1) / lanes * lanes;
      for (const unsigned end = min(to, base + count); j < end; j += lanes) {
        const Real p = staged_pos[j - base];
        const long long first_cell = static_cast<long long>(ceil(p - Real(g.kernel.half_width)));
        const int tap = static_cast<int>(c - half - first_cell);
        Real w;
        if (poly.degree > 0) {
          const Real z = poly_offset(g, first_cell, p);
          w = coeff[0][tap];
          for (int r = 1; r <= poly.degree; ++r) w = w * z + coeff[r][tap];
        } else {
          w = tap_weight(g, first_cell, p, tap);
        }
        const Cplx<Real> v = staged_value[j - base];
        sr += w * v.re;
        si += w * v.im;
      }
      __syncthreads();
    }
    for (unsigned off = lanes / 2; off > 0; off /= 2) {
      sr += __shfl_xor_sync(0xffffffffu, sr, off);
      si += __shfl_xor_sync(0xffffffffu, si, off);
    }
    if (m < n2 && part == 0) {
      const Real cc = covered ? corr[c] : Real(0);
      grid[m] = Cplx<Real>{sr * cc, si * cc};
    }
    __syncthreads();  // run[] is reset for the next block of cells
  }
}

// sr, si += the W cells of a line from cell `first` (of n, wrapping where kWrap) weighted by w.
template <int MW, bool kWrap, class Real>
__device__ __forceinline__ void line_sum(const Cplx<Real> *line, long long first, long long n, int W,
                                         const Real (&w)[MW], Real &sr, Real &si) {
  constexpr int kUnroll = unroll_count<MW>();
  if constexpr (kWrap) {
    long long c = first;
#pragma unroll kUnroll
    for (int k = 0; k < MW; ++k) {
      if (k < W) {
        const Cplx<Real> v = line[c];
        sr += v.re * w[k];
        si += v.im * w[k];
        if (++c == n) c = 0;
      }
    }
  } else {
    const Cplx<Real> *p = line + first;
#pragma unroll kUnroll
    for (int k = 0; k < MW; ++k) {
      if (k < W) {
        const Cplx<Real> v = p[k];
        sr += v.re * w[k];
        si += v.im * w[k];
      }
    }
  }
}

// One thread per target (tile order): weighted sum of the W^dim neighbourhood for every transform. In 2-D and
// 3-D dimension 0's weights are computed as its loop reaches them (once per transform: W exps against W^dim
// loads), the others' are held in registers (at most MW); in 1-D all W are. At most 85 registers a thread
// (launch bounds), so that 3 blocks of 256 keep enough loads in flight. In double that spills in 2-D and 3-D
// (52-180 bytes a thread); 2 blocks an SM (up to 128 registers: no spills in 2-D, fewer in 3-D) were slower on
// every case measured (H200, exec ms: K >> N 2-D 1e-5 0.274 -> 0.289, uniform 3-D 1e-7 4.14 -> 4.69, sphere
// shell 3-D 1e-7 4.16 -> 4.85).
template <int DIM, int MW, class Real>
__global__ void __launch_bounds__(kBlock, 3)
    interpolate(Geometry g, TapPolynomials<Real> poly, std::size_t K, int ntransf, const unsigned *index,
                const Real *pos, const Cplx<Real> *factor, const Cplx<Real> *grid, std::size_t n2_total,
                Cplx<Real> *F) {
  const int W = g.kernel.width;
  constexpr int kUnroll = unroll_count<MW>(), kMiddle = DIM == 3 ? 1 : kUnroll;
  for (std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; j < K;
       j += std::size_t(blockDim.x) * gridDim.x) {
    Real w1[MW], w2[MW];
    long long first[3] = {0, 0, 0}, n2[3] = {1, 1, 1};
    const Real p0 = pos[j];
    const long long first0 = static_cast<long long>(ceil(p0 - Real(g.kernel.half_width)));  // before the wrap
    first[0] = first0;
    if constexpr (DIM > 1) first[1] = weights_of<MW>(g, poly, pos[K + j], w1);
    if constexpr (DIM > 2) first[2] = weights_of<MW>(g, poly, pos[2 * K + j], w2);
    for (int d = 0; d < DIM; ++d) {
      n2[d] = g.n2[d];
      first[d] = periodic_dev(first[d], n2[d]);
    }
    const Cplx<Real> fac = factor[j];
    const std::size_t t = index[j];
    // 2-D: a line's W cells without a wrap (most targets) take one address, the taps at fixed offsets (H200,
    // K >> N 2-D, exec ms: double 1e-5 0.403 -> 0.360; in 3-D the same slowed uniform double 1e-5 2.19 -> 2.32).
    const bool contiguous = first[DIM - 1] + W <= n2[DIM - 1];
    if constexpr (DIM == 1) {
      // 1-D: every weight first (the registers 2-D and 3-D spend on their other dimensions are free here), then
      // the line's W loads unrolled, all in flight at once; the tap-by-tap loop waited on each load in turn.
      weights_of<MW>(g, poly, p0, w1);
      for (int tr = 0; tr < ntransf; ++tr) {
        Real sr = 0, si = 0;
        if (contiguous)
          line_sum<MW, false>(grid + tr * n2_total, first[0], n2[0], W, w1, sr, si);
        else
          line_sum<MW, true>(grid + tr * n2_total, first[0], n2[0], W, w1, sr, si);
        F[tr * K + t] = Cplx<Real>{sr * fac.re - si * fac.im, sr * fac.im + si * fac.re};
      }
    } else {
      for (int tr = 0; tr < ntransf; ++tr) {
        const Cplx<Real> *gr = grid + tr * n2_total;
        Real sr = 0, si = 0;
        long long gx = first[0];
        for (int i = 0; i < W; ++i, ++gx) {
          if (gx >= n2[0]) gx -= n2[0];
          const Real w0 = tap_weight(g, poly, first0, p0, i);
          if constexpr (DIM == 2) {
            Real ar = 0, ai = 0;
            const Cplx<Real> *row = gr + gx * n2[1];
            if (contiguous)
              line_sum<MW, false>(row, first[1], n2[1], W, w1, ar, ai);
            else
              line_sum<MW, true>(row, first[1], n2[1], W, w1, ar, ai);
            sr += ar * w0;
            si += ai * w0;
          } else {
            Real ar = 0, ai = 0;
#pragma unroll kMiddle
            for (int k = 0; k < MW; ++k) {
              if (k < W) {
                long long gy = first[1] + k;
                if (gy >= n2[1]) gy -= n2[1];
                const Cplx<Real> *line = gr + (gx * n2[1] + gy) * n2[2];
                Real br = 0, bi = 0;
#pragma unroll kUnroll
                for (int l = 0; l < MW; ++l) {
                  if (l < W) {
                    long long gz = first[2] + l;
                    if (gz >= n2[2]) gz -= n2[2];
                    const Cplx<Real> v = line[gz];
                    br += v.re * w2[l];
                    bi += v.im * w2[l];
                  }
                }
                ar += br * w1[k];
                ai += bi * w1[k];
              }
            }
            sr += ar * w0;
            si += ai * w0;
          }
        }
        F[tr * K + t] = Cplx<Real>{sr * fac.re - si * fac.im, sr * fac.im + si * fac.re};
      }
    }
  }
}

// The FFT of the grid: one batched plan over all of it, or the pruned passes (see kPruneAtMost).
struct GridFft {
  bool pruned = false;
  long long rows = 0;  // pruned: dimension-0 indices holding sources, at each end of the axis
  long long cols = 0;  // pruned: dimension-1 indices the targets read, at each end of the axis
  cuda::CufftPlan full, planes, columns;
};

// The transform layout L needs: pruned where that skips enough work (kPruneAtMost, kMaxPrunedTransforms).
// Source cell c in [-n1/2, n1/2) sits at index c mod n2; a target at grid coordinate p (|p| <= P = the
// largest |t - D| times tgt_scale) reads the cells ceil(p - W/2) .. that + W - 1, all within
// [-(P + W/2), P + W/2] (2 cells more for the coordinates' rounding to Real).
GridFft wanted_fft(const Layout &L, const double *s_lo, const double *s_hi, int ntransf) {
  GridFft f;
  const std::string forced = env_value("SFFT_NUFFT3_FFT");
  if (L.dim < 2 || forced == "full" || (ntransf > kMaxPrunedTransforms && forced != "pruned")) return f;
  const DimLayout &a0 = L.axis[0], &a1 = L.axis[1];
  const double reach = std::max(std::fabs(s_lo[1] - a1.tgt_center), std::fabs(s_hi[1] - a1.tgt_center)) * a1.tgt_scale +
                       L.kernel.half_width + 2;
  if (!(reach < static_cast<double>(a1.n2))) return f;
  const long long rows = std::min(round_up_to_prune_lines(a0.n1 / 2), a0.n2 / 2);
  const long long cols = std::min(round_up_to_prune_lines(static_cast<long long>(std::ceil(reach)) + 1), a1.n2 / 2);
  const double in = 2.0 * static_cast<double>(rows) / static_cast<double>(a0.n2);
  const double out = 2.0 * static_cast<double>(cols) / static_cast<double>(a1.n2);
  // Work relative to the full transform: the first passes cover dim - 1 of the dim axes on `in` of the grid,
  // the dimension-0 pass covers `out` of it.
  const double work = (static_cast<double>(L.dim - 1) * in + out) / L.dim;
  if (work > kPruneAtMost) return f;
  f.pruned = true;
  f.rows = rows;
  f.cols = cols;
  return f;
}

// Whether `have` (the previous points' plans, on a grid of the same shape) transforms every line `want` needs.
bool fft_covers(const GridFft &have, const GridFft &want) {
  if (have.pruned != want.pruned) return false;
  return !want.pruned || (have.rows >= want.rows && have.cols >= want.cols);
}

void make_fft(GridFft &f, const Layout &L, int ntransf, cufftType type, cudaStream_t stream) {
  long long n[3] = {1, 1, 1};
  for (int d = 0; d < L.dim; ++d) n[d] = L.axis[d].n2;
  const long long total = static_cast<long long>(L.n2_total);
  if (!f.pruned) {
    f.full.make_many(L.dim, n, nullptr, 1, total, nullptr, 1, total, type, ntransf);
    f.full.set_stream(stream);
    return;
  }
  const long long plane = total / n[0], inner = plane / n[1];
  f.planes.make_many(L.dim - 1, n + 1, nullptr, 1, plane, nullptr, 1, plane, type, f.rows);
  f.planes.set_stream(stream);
  long long embed[1] = {n[0]};
  f.columns.make_many(1, n, embed, plane, 1, embed, plane, 1, type, f.cols * inner);
  f.columns.set_stream(stream);
}

// One warp per target (tile order) for wide kernels, W <= 32: the lanes cover W contiguous cells of the last
// dimension on each of 32 / W lines of the middle dimension at once (so one warp load reads a few whole line
// segments, where one thread per target makes every load of a warp touch 32 scattered cells), over the W lines
// of the middle dimension and, in 3-D, the W planes of dimension 0; then a warp sum. Lane l holds the l-th
// weight of dimension 0 and of the middle dimension (shared by shuffles) and its own last-dimension weight,
// which multiplies all of its taps.
template <int DIM, class Real>
__global__ void __launch_bounds__(kBlock)
    interpolate_warp(Geometry g, TapPolynomials<Real> poly, std::size_t K, int ntransf, const unsigned *index,
                     const Real *pos, const Cplx<Real> *factor, const Cplx<Real> *grid, std::size_t n2_total,
                     Cplx<Real> *F) {
  constexpr unsigned kAll = 0xffffffffu;
  constexpr int kMid = DIM - 2, kLast = DIM - 1;
  const int W = g.kernel.width;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int per_pass = 32 / W, passes = (W + per_pass - 1) / per_pass;
  const int line = lane / W, cell = lane % W;
  const bool active = line < per_pass;
  const long long n2o = g.n2[0], n2m = g.n2[kMid], n2l = g.n2[kLast];
  const std::size_t warps = std::size_t(blockDim.x / 32) * gridDim.x;
  for (std::size_t j = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32; j < K; j += warps) {
    const Real pm = pos[kMid * K + j], pl = pos[kLast * K + j];
    const long long fm = static_cast<long long>(ceil(pm - Real(g.kernel.half_width)));
    const long long fl = static_cast<long long>(ceil(pl - Real(g.kernel.half_width)));
    const Real wm = lane < W ? tap_weight(g, poly, fm, pm, lane) : Real(0);
    const Real wl = tap_weight(g, poly, fl, pl, cell);
    Real wo = 1;
    long long fo = 0;
    if constexpr (DIM == 3) {
      const Real po = pos[j];
      fo = static_cast<long long>(ceil(po - Real(g.kernel.half_width)));
      wo = lane < W ? tap_weight(g, poly, fo, po, lane) : Real(0);
      fo = periodic_dev(fo, n2o);
    }
    const long long gm0 = periodic_dev(fm, n2m), gl = periodic_dev(fl + cell, n2l);
    const Cplx<Real> fac = factor[j];
    const std::size_t t = index[j];
    const int outer = DIM == 3 ? W : 1;
    for (int tr = 0; tr < ntransf; ++tr) {
      const Cplx<Real> *gr = grid + tr * n2_total;
      Real sr = 0, si = 0;
      long long go = fo;
      for (int o = 0; o < outer; ++o, ++go) {
        if (go >= n2o) go -= n2o;
        const Real w0 = DIM == 3 ? __shfl_sync(kAll, wo, o) : Real(1);
        const long long plane = DIM == 3 ? go * n2m : 0;
        Real ar = 0, ai = 0;
        for (int pass = 0; pass < passes; ++pass) {
          const int m = pass * per_pass + line;
          const Real w1 = __shfl_sync(kAll, wm, m & 31);
          if (active && m < W) {
            long long gm = gm0 + m;
            if (gm >= n2m) gm -= n2m;
            const Cplx<Real> v = gr[(plane + gm) * n2l + gl];
            ar += v.re * w1;
            ai += v.im * w1;
          }
        }
        sr += ar * w0;
        si += ai * w0;
      }
      sr *= wl;
      si *= wl;
      for (int o = 16; o > 0; o /= 2) {
        sr += __shfl_xor_sync(kAll, sr, o);
        si += __shfl_xor_sync(kAll, si, o);
      }
      if (lane == 0) F[tr * K + t] = Cplx<Real>{sr * fac.re - si * fac.im, sr * fac.im + si * fac.re};
    }
  }
}

template <class Real>
class CudaEngine final : public Engine {
  using C = Cplx<Real>;
  template <class T>
  using DeviceBuffer = cuda::DeviceBuffer<T>;

  // The buffers of one set of points. The engine holds its own points' (pts_) and, as spares, those of the
  // points it replaced (spare_, taken at the end of setpts): the next points' engine takes the spares instead
  // of allocating, so that points changing every call cost no cudaMalloc and no cudaFree (each synchronises
  // the device and costs tens to hundreds of microseconds at 1e6 points). The spares are no longer used by
  // any points, so a setpts that fails after taking them leaves the previous points intact (the contract);
  // the price is a second set of point buffers held by the plan, about (N + K) (4 + (dim + 2) sizeof(Real))
  // bytes (the grid not included).
  struct PointBuffers {
    DeviceBuffer<unsigned> src_index, tgt_index, sub_bin, sub_start, sub_count, nsub, cell_start;
    DeviceBuffer<Real> src_pos, tgt_pos, correction[3];
    DeviceBuffer<C> src_phase, tgt_factor;

    std::size_t bytes() const {
      std::size_t total = src_index.bytes() + tgt_index.bytes() + sub_bin.bytes() + sub_start.bytes() +
                          sub_count.bytes() + nsub.bytes() + cell_start.bytes() + src_pos.bytes() + tgt_pos.bytes() +
                          src_phase.bytes() + tgt_factor.bytes();
      for (const auto &c : correction) total += c.bytes();
      return total;
    }
  };

 public:
  explicit CudaEngine(const Config &c) : cfg_(c), stream_(cuda::as_stream(c.opts.stream)) {
    require_cuda_device(cfg_.opts);
    cuda::DeviceScope scope(cfg_.opts.device);
    SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, cfg_.opts.device));
    SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin_, cudaDevAttrMaxSharedMemoryPerBlockOptin, cfg_.opts.device));
    stage_times_ = env_flag("SFFT_NUFFT3_STAGE_TIMES");
    // The prolate kernel's Legendre series would cost a few dozen FMAs a tap: its weights always come from the table.
    use_horner_ = env_value("SFFT_NUFFT3_WEIGHTS") == "horner" || cfg_.kernel == KernelKind::Prolate;
    exp_weights_ = env_value("SFFT_NUFFT3_WEIGHTS") == "exp";
  }

  void setpts(const Points &p) override {
    cuda::DeviceScope scope(cfg_.opts.device);
    require(p.N < (1ull << 31) && p.K < (1ull << 31), "the CUDA backend takes N, K < 2^31 (N = ", p.N, ", K = ", p.K,
            ")");
    const int dim = cfg_.dim;
    N_ = p.N;
    K_ = p.K;
    if (stage_times_) timer_.begin(stream_);
    CudaEngine *previous = dynamic_cast<CudaEngine *>(p.previous);
    if (previous != nullptr) scratch_ = std::move(previous->scratch_);
    // Coordinates where they are; host arrays staged (stream-ordered temporaries, freed on return).
    std::vector<std::unique_ptr<cuda::StreamBuffer>> staged;
    auto readable = [&](const void *v, std::size_t n) -> const Real * {
      if (pointer_kind(v) != PointerKind::Host) return static_cast<const Real *>(v);
      staged.push_back(std::make_unique<cuda::StreamBuffer>(n * sizeof(Real), stream_));
      SFFT_CUDA_CHECK(cudaMemcpyAsync(staged.back()->get(), v, n * sizeof(Real), cudaMemcpyHostToDevice, stream_));
      return static_cast<const Real *>(staged.back()->get());
    };
    Coords<Real> src{}, tgt{};
    for (int d = 0; d < dim; ++d) {
      src.v[d] = readable(p.src[d], N_);
      tgt.v[d] = readable(p.tgt[d], K_);
    }
    double x_lo[3], x_hi[3], s_lo[3], s_hi[3];
    scan_ranges(src, tgt, x_lo, x_hi, s_lo, s_hi);  // the one read-back: the layout needs the ranges
    if (stage_times_) timer_.mark("scan", stream_);
    // The grid must fit in the device's free memory, but cudaMemGetInfo took 76-80 us of host time in a repeated
    // setpts (H200, timed with the stage times on): where the previous points' grid is taken over (it has every
    // cell these need) nothing is allocated and the query is skipped. Otherwise the layout is chosen within the
    // free memory; a limit changes no choice, it only refuses grids (choose_layout).
    // The grids of one pass of batch_ transforms (transforms_per_pass); points that take over the previous
    // points' grid take over its passes with it.
    auto layout_within = [&](double memory_limit, int grids) {
      return choose_layout(dim, cfg_.kernel, cfg_.tol, cfg_.upsampfac, N_, K_, cfg_.ntransf, x_lo, x_hi, s_lo, s_hi,
                           sizeof(C) * double(grids), memory_limit, kCudaCost, cfg_.is_double);
    };
    bool reuse = false;
    if (previous != nullptr) {
      // Without a memory limit the number of grids changes no choice.
      L_ = layout_within(std::numeric_limits<double>::infinity(), 1);
      reuse = adopt_grid_shape(L_, previous->L_, kReuseSlack);
      if (reuse) batch_ = previous->batch_;
    }
    if (!reuse) {
      std::size_t free_bytes = 0, total_bytes = 0;
      SFFT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      L_ = layout_for_passes(cfg_.ntransf, cfg_.max_batch, static_cast<double>(free_bytes) + p.reclaimable_bytes,
                             sizeof(C), layout_within, &batch_);
    }
    grid_bytes_ = static_cast<double>(L_.n2_total) * sizeof(C) * batch_;
    // phihat's fit (host work: 20 us at W = 4 to 240 us at W = 13 on the loaded 2-core development host) comes from the
    // previous points where they used the same kernel at the same sigma.
    const KernelSpec &k = L_.kernel;
    const bool same_kernel = previous != nullptr && previous->L_.upsampfac == L_.upsampfac &&
                             previous->L_.kernel.kind == k.kind && previous->L_.kernel.width == k.width &&
                             previous->L_.kernel.beta == k.beta && previous->L_.kernel.b == k.b;
    fourier_ = same_kernel ? previous->fourier_ : fit_fourier(k, L_.upsampfac, fourier_fit_error(cfg_.tol));
    // The CPU path's polynomial table (held to tap_tolerance, checked in the working precision), carried over
    // like the fit: the kernels' weights where it fits TapPolynomials, else with use_horner_ from a copy on the
    // device (a few KB, copied on the stream).
    const bool want_polys = k.width <= TapPolynomials<Real>::kCols && !exp_weights_;
    poly_.degree = 0;
    if (use_horner_ || want_polys) {
      const double tap_tol = tap_tolerance(L_, cfg_.tol);
      const bool same_table = same_kernel && previous->horner_table_.width == k.width && previous->tap_tol_ == tap_tol;
      horner_table_ =
          same_table ? previous->horner_table_ : fit_horner(k, tap_tol, sizeof(Real) == 8 ? 0x1p-53 : 0x1p-24, 1);
      tap_tol_ = tap_tol;
      const HornerTable &h = horner_table_;
      if (want_polys && h.degree < TapPolynomials<Real>::kRows) {
        poly_.degree = h.degree;
        for (int r = 0; r < TapPolynomials<Real>::kRows; ++r)
          for (int i = 0; i < TapPolynomials<Real>::kCols; ++i)
            poly_.c[r][i] = r <= h.degree && i < h.width ? static_cast<Real>(h.coeff[r * h.stride + i]) : Real(0);
      }
    }
    if (use_horner_ && poly_.degree == 0) {
      const std::vector<Real> coeff(horner_table_.coeff.begin(), horner_table_.coeff.end());
      horner_.allocate(coeff.size());
      SFFT_CUDA_CHECK(
          cudaMemcpyAsync(horner_.get(), coeff.data(), coeff.size() * sizeof(Real), cudaMemcpyHostToDevice, stream_));
    }

    Geometry src_geo = geometry(true), tgt_geo = geometry(false);
    choose_tiles(src_geo);
    pick_kernels(dim, L_.kernel.width);
    // Targets: sorted by tiles of the periodic grid, for cache locality only. Interpolation takes a thread per
    // target, so a warp's loads of one tap go to 32 targets' cells; tiles of about 32 cells (2-D 4 x 8, 3-D 2 x
    // 4 x 4) keep them closer than 16-cell sides did (H200, exec ms: uniform 3-D double 1e-5 2.45 -> 2.23; 2-D
    // and 1-D within 1 %). SFFT_NUFFT3_TARGET_TILE=16 restores 16 cells a side (A/B measurements).
    const bool old_tiles = env_value("SFFT_NUFFT3_TARGET_TILE") == "16";
    const int target_tile[3][3] = {{16, 1, 1}, {4, 8, 1}, {2, 4, 4}};
    for (int d = 0; d < 3; ++d) {
      tgt_geo.tile[d] = d < dim ? (old_tiles ? 16 : target_tile[dim - 1][d]) : 1;
      tgt_geo.tiles[d] = d < dim ? static_cast<int>((L_.axis[d].n2 + tgt_geo.tile[d] - 1) / tgt_geo.tile[d]) : 1;
    }
    src_geo_ = src_geo;
    tgt_geo_ = tgt_geo;
    if (stage_times_) timer_.mark("layout", stream_);

    // The previous engine's spares (its own points' buffers stay untouched until nothing can fail).
    PointBuffers *spare = previous != nullptr ? &previous->spare_ : nullptr;
    obtain(pts_.src_index, spare ? &spare->src_index : nullptr, N_);
    obtain(pts_.src_pos, spare ? &spare->src_pos : nullptr, checked_mul(N_, dim, "dim * N"));
    obtain(pts_.src_phase, spare ? &spare->src_phase : nullptr, N_);
    sort_points<false>(src_geo, src, N_, pts_.src_pos, pts_.src_phase, pts_.src_index, spare);
    if (stage_times_) timer_.mark("sources", stream_);
    obtain(pts_.tgt_index, spare ? &spare->tgt_index : nullptr, K_);
    obtain(pts_.tgt_pos, spare ? &spare->tgt_pos : nullptr, checked_mul(K_, dim, "dim * K"));
    obtain(pts_.tgt_factor, spare ? &spare->tgt_factor : nullptr, K_);
    sort_points<true>(tgt_geo, tgt, K_, pts_.tgt_pos, pts_.tgt_factor, pts_.tgt_index, spare);
    if (stage_times_) timer_.mark("targets", stream_);

    for (int d = 0; d < dim; ++d) {
      obtain(pts_.correction[d], spare ? &spare->correction[d] : nullptr, static_cast<std::size_t>(L_.axis[d].n1));
      grid_correction_kernel<Real><<<cuda::grid_for(L_.axis[d].n1, kBlock), kBlock, 0, stream_>>>(
          L_.kernel, fourier_, L_.axis[d].n1, L_.axis[d].n2, pts_.correction[d].get());
      SFFT_CUDA_CHECK_LAUNCH();
    }
    if (stage_times_) timer_.mark("corrections", stream_);
    if (use_tiles_ && !gather_) {
      // The attribute is process-wide per kernel: every plan sets the same value (the device's opt-in
      // maximum), so concurrent plans with different tile sizes cannot lower it under each other.
      SFFT_CUDA_CHECK(cudaFuncSetAttribute(spread_fn_, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_optin_));
      int per_sm = 0;
      // Tap by tap: a thread per tap of one source (2-D: W^2; 3-D: W^2 per plane, tap_planes planes; whole warps).
      const int W = L_.kernel.width;
      const int taps = cfg_.dim == 3 ? tap_planes(W, kBlock) * W * W : W * W;
      spread_threads_ = spread_taps_ ? std::min(kBlock, (taps + 31) / 32 * 32) : kBlock;
      SFFT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spread_fn_, spread_threads_, tile_bytes_));
      if (per_sm < 2 && !spread_taps_) {
        // A tile of most of the shared memory (3-D, wide kernels) leaves one block per SM: more threads per
        // block, as many as the kernel's registers allow, keep enough atomics in flight.
        cudaFuncAttributes attr{};
        SFFT_CUDA_CHECK(cudaFuncGetAttributes(&attr, spread_fn_));
        spread_threads_ = std::max(kBlock, std::min(1024, attr.maxThreadsPerBlock) / 32 * 32);
        SFFT_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spread_fn_, spread_threads_, tile_bytes_));
      }
      spread_blocks_ = static_cast<unsigned>(
          std::clamp<std::size_t>(static_cast<std::size_t>(std::max(per_sm, 1)) * sm_count_, 1, max_subproblems_));
    }
    // Staging for host strengths/outputs: made by the first exec that passes host arrays (device arrays need
    // none), taken over from the previous points where it has the size these need (below).
    f_count_ = checked_mul(N_, cfg_.ntransf, "ntransf * N");
    F_count_ = checked_mul(K_, cfg_.ntransf, "ntransf * K");
    const bool reuse_f = previous != nullptr && previous->f_stage_.size() == f_count_;
    const bool reuse_F = previous != nullptr && previous->F_stage_.size() == F_count_;
    if (!reuse) grid_.allocate(checked_mul(L_.n2_total, batch_, "maxbatchsize * grid cells"));
    // The previous points' FFT plans go with their grid where they transform every line these points need
    // (the pruned extents are rounded up, kPruneRound, so that points of the same distribution keep them).
    GridFft want = wanted_fft(L_, s_lo, s_hi, batch_);
    const bool reuse_fft = reuse && fft_covers(previous->fft_, want);
    if (!reuse_fft) {
      fft_ = std::move(want);
      make_fft(fft_, L_, batch_, CufftTypes<Real>::c2c, stream_);
    }
    if (stage_times_) {
      timer_.mark("grid+fft", stream_);
      timer_.report("sfft nufft3 setpts stages, " + describe(reuse_fft ? previous->fft_ : fft_) +
                    (reuse_fft ? ", FFT plans taken over" : "") + " (ms):");
    }
    if (scratch_need_ > scratch_.size()) {
      // Grown for the next points (this one's temporaries are done with it in stream order: cudaFree of the
      // old one synchronises); without the memory they fall back to stream-ordered temporaries.
      try {
        scratch_.allocate(scratch_need_);
      } catch (const Error &e) {
        if (e.status() != SFFT_ERROR_OUT_OF_MEMORY) throw;
        scratch_.release();
      }
    }
    // Nothing below can fail: the previous points' grid, FFT plans and staging change hands (the plan drops
    // that engine next). Their work is queued on the same stream, so the order of use is kept.
    if (reuse) grid_ = std::move(previous->grid_);
    if (reuse_fft) fft_ = std::move(previous->fft_);
    if (reuse_f) f_stage_ = std::move(previous->f_stage_);
    if (reuse_F) F_stage_ = std::move(previous->F_stage_);
    if (previous != nullptr) spare_ = std::move(previous->pts_);
    if (stage_times_) report_memory();
  }

  void exec(const void *f_in, void *F_out) override {
    cuda::DeviceScope scope(cfg_.opts.device);
    const bool f_host = pointer_kind(f_in) == PointerKind::Host;
    const bool F_host = pointer_kind(F_out) == PointerKind::Host;
    const C *f = static_cast<const C *>(f_in);
    C *F = static_cast<C *>(F_out);
    // Before any work is queued, so that a failed allocation leaves nothing half done.
    if (f_host && f_stage_.size() != f_count_) f_stage_.allocate(f_count_);
    if (F_host && F_stage_.size() != F_count_) F_stage_.allocate(F_count_);
    if (stage_times_) timer_.begin(stream_);
    if (f_host) {
      SFFT_CUDA_CHECK(cudaMemcpyAsync(f_stage_.get(), f_in, f_stage_.bytes(), cudaMemcpyHostToDevice, stream_));
      f = f_stage_.get();
      if (stage_times_) timer_.mark("upload", stream_);
    }
    C *F_dev = F_host ? F_stage_.get() : F;
    // Passes of batch_ transforms (the last may have fewer), each spread, transformed and interpolated.
    for (int first = 0; first < cfg_.ntransf; first += batch_)
      run_pass(f + static_cast<std::size_t>(first) * N_, F_dev + static_cast<std::size_t>(first) * K_,
               std::min(batch_, cfg_.ntransf - first));
    if (F_host) {
      SFFT_CUDA_CHECK(cudaMemcpyAsync(F_out, F_dev, F_stage_.bytes(), cudaMemcpyDeviceToHost, stream_));
      if (stage_times_) timer_.mark("download", stream_);
    }
    if (stage_times_) timer_.report("sfft nufft3 exec stages, " + describe(fft_) + " (ms):");
    if (f_host || F_host) SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void zero_output(void *F, std::size_t count) override {
    cuda::DeviceScope scope(cfg_.opts.device);
    if (pointer_kind(F) == PointerKind::Host) {
      std::memset(F, 0, count * sizeof(C));
    } else {
      SFFT_CUDA_CHECK(cudaMemsetAsync(F, 0, count * sizeof(C), stream_));
    }
  }

 private:
  // One pass of exec: `count` transforms (at most batch_), strengths f (count x N) into outputs F_dev (count x K).
  void run_pass(const C *f, C *F_dev, int count) {
    if (!gather_) {  // the gathering writes every cell
      SFFT_CUDA_CHECK(cudaMemsetAsync(grid_.get(), 0, L_.n2_total * count * sizeof(C), stream_));
      if (stage_times_) timer_.mark("zero", stream_);
    }
    SpreadArgs a{};
    a.N = N_;
    a.index = pts_.src_index.get();
    a.sub_bin = pts_.sub_bin.get();
    a.sub_start = pts_.sub_start.get();
    a.sub_count = pts_.sub_count.get();
    a.nsub = pts_.nsub.get();
    a.pos = pts_.src_pos.get();
    a.phase = pts_.src_phase.get();
    a.f = f;
    for (int d = 0; d < 3; ++d) a.corr[d] = d < cfg_.dim ? pts_.correction[d].get() : nullptr;
    a.grid = grid_.get();
    a.n2_total = L_.n2_total;
    for (int d = 0; d < 3; ++d) a.ext[d] = tile_ext_[d];
    if (gather_) {
      const std::size_t threads = checked_mul(static_cast<std::size_t>(L_.axis[0].n2), gather_lanes_, "grid threads");
      dim3 grid(cuda::grid_for(threads, kBlock), static_cast<unsigned>(count));
      spread_gather_1d<Real><<<grid, kBlock, 0, stream_>>>(src_geo_, poly_, a, pts_.cell_start.get(), gather_lanes_);
    } else if (use_tiles_) {
      dim3 grid(spread_blocks_, static_cast<unsigned>(count));
      spread_fn_<<<grid, spread_threads_, tile_bytes_, stream_>>>(src_geo_, poly_, a);
    } else {
      dim3 grid(cuda::grid_for(N_, kBlock), static_cast<unsigned>(count));
      spread_fn_<<<grid, kBlock, 0, stream_>>>(src_geo_, poly_, a);
    }
    SFFT_CUDA_CHECK_LAUNCH();
    if (stage_times_) timer_.mark("spread", stream_);
    run_fft(count);
    if (stage_times_) timer_.mark("fft", stream_);
    interp_fn_<<<cuda::grid_for(K_ * interp_lanes_, kBlock), kBlock, 0, stream_>>>(
        tgt_geo_, poly_, K_, count, pts_.tgt_index.get(), pts_.tgt_pos.get(), pts_.tgt_factor.get(), grid_.get(),
        L_.n2_total, F_dev);
    SFFT_CUDA_CHECK_LAUNCH();
    if (stage_times_) timer_.mark("interp", stream_);
  }

  // dst gets count elements: the spare where it holds at least that and at most twice (a much larger one goes
  // with the previous engine), else a new allocation.
  template <class T>
  static void obtain(DeviceBuffer<T> &dst, DeviceBuffer<T> *spare, std::size_t count) {
    if (spare != nullptr && spare->size() >= count && spare->size() <= 2 * count) {
      dst = std::move(*spare);
    } else {
      dst.allocate(count);
    }
  }

  // A temporary of count T's for the current setpts step: carved from scratch_ where it fits, else
  // stream-ordered (kept alive by `keep` until the step returns; the stream orders its release).
  template <class T>
  T *temporary(std::vector<std::unique_ptr<cuda::StreamBuffer>> &keep, std::size_t count, cudaStream_t s) {
    const std::size_t bytes = (std::max<std::size_t>(count, 1) * sizeof(T) + 255) / 256 * 256;
    step_bytes_ += bytes;
    scratch_need_ = std::max(scratch_need_, step_bytes_);
    if (scratch_used_ + bytes <= scratch_.size()) {
      T *p = reinterpret_cast<T *>(scratch_.get() + scratch_used_);
      scratch_used_ += bytes;
      return p;
    }
    keep.push_back(std::make_unique<cuda::StreamBuffer>(bytes, s));
    return static_cast<T *>(keep.back()->get());
  }
  // Starts a setpts step: its temporaries may reuse the previous step's, which the stream has finished with
  // by the time the new ones are written.
  void begin_step() { step_bytes_ = scratch_used_ = 0; }

  // The grid's FFT, `count` transforms: one batched plan (of batch_ transforms: in a short last pass it also
  // transforms the grids past `count`, which hold the previous pass's values and are not read), or per transform
  // the pruned passes at both ends of dimension 0 (planes holding sources) and then of dimension 1 (lines the
  // targets read).
  void run_fft(int count) {
    using Z = typename CufftTypes<Real>::complex;
    const int dir = cfg_.sign < 0 ? CUFFT_FORWARD : CUFFT_INVERSE;
    Z *g = reinterpret_cast<Z *>(grid_.get());
    if (!fft_.pruned) {
      cuda::exec_c2c(fft_.full, g, g, dir);
      return;
    }
    const long long n0 = L_.axis[0].n2, n1 = L_.axis[1].n2;
    const std::size_t plane = L_.n2_total / static_cast<std::size_t>(n0);
    const std::size_t inner = plane / static_cast<std::size_t>(n1);
    for (int tr = 0; tr < count; ++tr) {
      Z *t = g + tr * L_.n2_total;
      Z *upper_planes = t + static_cast<std::size_t>(n0 - fft_.rows) * plane;
      Z *upper_cols = t + static_cast<std::size_t>(n1 - fft_.cols) * inner;
      cuda::exec_c2c(fft_.planes, t, t, dir);
      cuda::exec_c2c(fft_.planes, upper_planes, upper_planes, dir);
      cuda::exec_c2c(fft_.columns, t, t, dir);
      cuda::exec_c2c(fft_.columns, upper_cols, upper_cols, dir);
    }
  }

  // What the engine holds after setpts, for the stage-time lines (MiB): the pass's grids, cuFFT's work areas,
  // the points' buffers, the spare set of them, setpts' kept scratch, the host arrays' staging.
  void report_memory() const {
    const std::size_t fft_work = fft_.full.work_bytes() + fft_.planes.work_bytes() + fft_.columns.work_bytes();
    constexpr double kMiB = 1024.0 * 1024.0;
    std::fprintf(stderr,
                 "sfft nufft3 plan memory (MiB): grids %.1f (%d of %d transforms), cuFFT work %.1f, points %.1f, "
                 "spare points %.1f, setpts scratch %.1f, host staging %.1f\n",
                 grid_.bytes() / kMiB, batch_, cfg_.ntransf, fft_work / kMiB, pts_.bytes() / kMiB,
                 spare_.bytes() / kMiB, scratch_.size() / kMiB, (f_stage_.bytes() + F_stage_.bytes()) / kMiB);
  }

  // The plan's shape for the stage-time lines.
  std::string describe(const GridFft &fft) const {
    std::string grid;
    for (int d = 0; d < cfg_.dim; ++d) grid += (d ? "x" : "") + std::to_string(L_.axis[d].n2);
    char text[512];
    std::snprintf(text, sizeof text,
                  "%s, dim %d, N %zu, K %zu, ntransf %d (passes of %d), W %d, sigma %.2f, grid %s, fft %s (%lld + %lld "
                  "lines), "
                  "tile %d x %u blocks x %d threads%s%s, interpolation %s, weights %s",
                  sizeof(Real) == 8 ? "double" : "single", cfg_.dim, N_, K_, cfg_.ntransf, batch_, L_.kernel.width,
                  L_.upsampfac, grid.c_str(), fft.pruned ? "pruned" : "full", fft.rows, fft.cols, src_geo_.tile[0],
                  spread_blocks_, spread_threads_,
                  gather_        ? " (gathered by cells, "
                  : !use_tiles_  ? " (global atomics)"
                  : spread_taps_ ? " (by taps)"
                                 : "",
                  gather_ ? (std::to_string(gather_lanes_) + " threads a cell)").c_str() : "",
                  interp_lanes_ > 1 ? "warp" : "thread",
                  poly_.degree > 0 ? ("polynomial degree " + std::to_string(poly_.degree)).c_str()
                  : use_horner_    ? ("horner degree " + std::to_string(horner_table_.degree)).c_str()
                                   : "exp");
    return text;
  }

  // Ranges of every coordinate array in one pass and one read-back; throws naming the first non-finite entry
  // in the order x, s, y, t, z, u.
  void scan_ranges(const Coords<Real> &src, const Coords<Real> &tgt, double *x_lo, double *x_hi, double *s_lo,
                   double *s_hi) {
    static const char *names[kMaxArrays] = {"x", "s", "y", "t", "z", "u"};
    const int arrays = 2 * cfg_.dim;
    ScanInputs in{};
    for (int d = 0; d < cfg_.dim; ++d) {
      in.v[2 * d] = src.v[d];
      in.n[2 * d] = N_;
      in.v[2 * d + 1] = tgt.v[d];
      in.n[2 * d + 1] = K_;
    }
    std::vector<std::unique_ptr<cuda::StreamBuffer>> keep;
    begin_step();
    double *lo = temporary<double>(keep, arrays * kScanBlocks, stream_);
    double *hi = temporary<double>(keep, arrays * kScanBlocks, stream_);
    auto *bad = temporary<unsigned long long>(keep, arrays * kScanBlocks, stream_);
    auto *out = temporary<ScanResult>(keep, arrays, stream_);
    scan_partial<Real><<<dim3(kScanBlocks, arrays), kBlock, 0, stream_>>>(in, lo, hi, bad);
    SFFT_CUDA_CHECK_LAUNCH();
    scan_finish<Real><<<arrays, kBlock, 0, stream_>>>(in, kScanBlocks, lo, hi, bad, out);
    SFFT_CUDA_CHECK_LAUNCH();
    ScanResult r[kMaxArrays];
    SFFT_CUDA_CHECK(cudaMemcpyAsync(r, out, arrays * sizeof(ScanResult), cudaMemcpyDeviceToHost, stream_));
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (int a = 0; a < arrays; ++a) {
      if (r[a].bad != ~0ull)
        fail(SFFT_ERROR_INVALID_ARGUMENT, names[a], "[", r[a].bad, "] is ", r[a].bad_is_nan ? "NaN" : "infinite");
    }
    for (int d = 0; d < cfg_.dim; ++d) {
      x_lo[d] = r[2 * d].lo;
      x_hi[d] = r[2 * d].hi;
      s_lo[d] = r[2 * d + 1].lo;
      s_hi[d] = r[2 * d + 1].hi;
    }
  }

  Geometry geometry(bool sources) const {
    Geometry g{};
    g.dim = cfg_.dim;
    g.kernel = L_.kernel;
    g.sign = cfg_.sign;
    g.fourier = fourier_;
    const bool table = use_horner_ && poly_.degree == 0;
    g.horner = table ? horner_.get() : nullptr;
    g.horner_degree = table ? horner_table_.degree : 0;
    for (int d = 0; d < 3; ++d) {
      g.n1[d] = g.n2[d] = 1;
      g.tile[d] = g.tiles[d] = 1;
    }
    for (int d = 0; d < cfg_.dim; ++d) {
      const DimLayout &ax = L_.axis[d];
      g.n1[d] = ax.n1;
      g.n2[d] = ax.n2;
      g.h1[d] = ax.h1;
      g.center[d] = sources ? ax.src_center : ax.tgt_center;
      g.scale[d] = sources ? 1 / ax.h1 : ax.tgt_scale;
      g.phase[d] = sources ? ax.tgt_center : ax.src_center;
    }
    return g;
  }

  // Largest square/cubic tile (at most 1024 / 32 / 16 cells per side) whose shared-memory image, with the
  // kernel's overhang, fits kTileBytes. Where that tile's interior would be narrower than the overhang (3-D
  // with W >= 9 in double, W >= 11 in single), every tile flush writes more than 8x the cells it owns, and
  // with W >= 12 (double) not even a 4-cell tile fits, which left the global-atomic fallback (first H100 run,
  // uniform 3-D, N = K = 1e6: exec 64 ms at tol 1e-11 against 17 ms at 3e-9 in tiles): such tiles take up to
  // the device's opt-in shared memory instead. None fits there either -> global-atomic spreading.
  void choose_tiles(Geometry &g) {
    const int dim = cfg_.dim, W = L_.kernel.width;
    // SFFT_NUFFT3_SPREAD=global|atomic|taps overrides the choice of spreading (A/B measurements). Tap by tap
    // against the shared-memory atomics (H200, exec, N = K = 1e6): in 2-D as fast or faster at every width
    // measured (W = 4 to 15, up to 3.4x); in 3-D 1.3-5x faster at every width measured (W = 4 to 14; W <= 6
    // with a thread per tap of all three dimensions, which the W^2-thread blocks lost to the atomics on uniform
    // points).
    const std::string spread = env_value("SFFT_NUFFT3_SPREAD");
    const bool want_taps = dim >= 2 && W <= 16 && (spread.empty() || spread == "taps");
    // Tap by tap in 2-D, small tiles: its blocks (one to eight warps) wait on a barrier per source, so the SM
    // needs many of them resident, and more subproblems spread clustered sources over more blocks. H200, exec
    // ms, N = K = 1e6, sides 32 / 16 / 8: W = 4 double uniform 0.75 / 0.46 / 0.44, Gaussian blobs 0.62 / 0.41 /
    // 0.35; W = 5 single uniform 0.30 / 0.27 / 0.21, double spiral 0.79 / 0.57 / 0.48; W = 7 single uniform
    // 0.42 / 0.35 / 0.36; W = 12 double uniform 1.27 / 1.17 / 1.23.
    // In 3-D, sides of 10 for the same reason: blocks of W^2 taps a plane are one or two warps at W = 3-4 (4 of
    // them an SM with 16-cell tiles). H200, exec ms, N = K = 1e6 (clustered: 1e5, ntransf 16), sides 16 / 10 / 8:
    // single uniform 2e-2 (W = 3) 0.79 / 0.48 / 0.48, 5e-3 (W = 4) 0.87 / 0.52 / 0.54; dense clusters 1e-2 0.62 /
    // 0.44 / 0.44; sphere shell 1e-2 0.70 / 0.52 / 0.54; clustered x16 1e-3 1.41 / 1.08 / 1.03; double uniform
    // 3e-3 0.93 / 0.77 / 0.79, 1e-8 6.07 / 6.01 / 5.31, dense clusters 1e-7 4.60 / 3.77 / 3.93, 3e-3 0.64 / 0.65 /
    // 0.68; the other 3-D rows measured within 1 % or faster (sphere shell single 2e-5 1.23 / 1.11 / 1.11).
    const int cap = dim == 1 ? 1024 : dim == 2 ? (want_taps ? (W <= 5 ? 8 : 16) : 32) : (want_taps ? 10 : 16);
    auto bytes = [&](int s) {
      std::size_t cells = 1;
      for (int d = 0; d < dim; ++d) cells *= static_cast<std::size_t>(s + W - 1);
      return cells * sizeof(C);
    };
    auto largest = [&](std::size_t budget) {
      int s = cap;
      while (s > 4 && bytes(s) > budget) --s;
      return s;
    };
    const std::size_t staging = dim >= 2 ? tap_staging_bytes(dim, W, sizeof(Real)) : 0;
    const std::size_t optin = static_cast<std::size_t>(std::max(smem_optin_, 0));
    // The tile's share of the block's shared memory (the staging of tap-by-tap spreading comes on top).
    const std::size_t room = want_taps && optin > staging + 16 ? optin - staging - 16 : optin;
    std::size_t budget = std::min(kTileBytes, room);
    int side = largest(budget);
    if (side < std::min(cap, W - 1) && room > budget) {
      budget = room;
      side = largest(budget);
    }
    use_tiles_ = bytes(side) <= budget && spread != "global";
    if (!use_tiles_) side = cap;
    spread_taps_ = use_tiles_ && want_taps && room < optin;
    tile_bytes_ = use_tiles_ ? (bytes(side) + 15) / 16 * 16 + (spread_taps_ ? staging : 0) : 0;
    for (int d = 0; d < 3; ++d) {
      tile_ext_[d] = d < dim ? side + W - 1 : 1;
      if (d < dim) {
        g.tile[d] = side;
        g.tiles[d] = static_cast<int>((L_.axis[d].n1 + side - 1) / side);
      }
    }
  }

  // The spreading (tiles, or global atomics where use_tiles_ is off) and interpolation kernels for dim and the
  // kernel width W: register weight arrays of 8 or 16 slots, or the rolled generic loops beyond 16.
  template <int DIM>
  void pick_kernels_for(int W) {
    if (W <= 8) {
      spread_fn_ = use_tiles_ ? spread_tiles<DIM, 8, Real> : spread_global<DIM, 8, Real>;
      interp_fn_ = interpolate<DIM, 8, Real>;
    } else if (W <= 16) {
      spread_fn_ = use_tiles_ ? spread_tiles<DIM, 16, Real> : spread_global<DIM, 16, Real>;
      interp_fn_ = interpolate<DIM, 16, Real>;
    } else {
      spread_fn_ = use_tiles_ ? spread_tiles<DIM, kMaxWidth, Real> : spread_global<DIM, kMaxWidth, Real>;
      interp_fn_ = interpolate<DIM, kMaxWidth, Real>;
    }
    if constexpr (DIM > 1)
      if (spread_taps_) spread_fn_ = spread_tiles_by_taps<DIM, Real>;  // W <= 16 (choose_tiles)
  }
  void pick_kernels(int dim, int W) {
    if (dim == 1) pick_kernels_for<1>(W);
    if (dim == 2) pick_kernels_for<2>(W);
    if (dim == 3) pick_kernels_for<3>(W);
    // One warp per target (interpolate_warp) only where SFFT_NUFFT3_INTERP=warp asks for it (W <= 32, 2-D and
    // 3-D; for A/B measurements): on the H100 (single precision, N = K = 1e6, W = 3-6) one thread per target
    // was 1.4-2.7x faster in 2-D and 3-D (its loads are scattered, but a warp's 32 targets share most cells in
    // L1, while a warp per target idles lanes at these widths); wide kernels are not measured yet.
    interp_lanes_ = 1;
    if (dim == 1 || W > 32 || env_value("SFFT_NUFFT3_INTERP") != "warp") return;
    interp_fn_ = dim == 2 ? interpolate_warp<2, Real> : interpolate_warp<3, Real>;
    interp_lanes_ = 32;
  }

  // 1-D sources sorted by cell (keys_sorted, ncells): their first sorted position per cell into
  // pts_.cell_start, then whether to spread them by gathering (gather_, gather_lanes_). A thread per
  // cell sums what its cell's kernel covers, so the busiest cell sets a warp's time: gathering is taken where no
  // cell holds more than 16 + 4 times the mean (uniform points: about 9 at the mean 0.5; clusters go to the
  // tiles, whose subproblems share a dense tile among blocks), or where SFFT_NUFFT3_SPREAD=gather asks for it.
  // The one read-back of setpts after the range scan: the busiest cell's count.
  bool choose_gathering(const unsigned *keys_sorted, std::size_t n, std::size_t ncells, bool forced,
                        std::vector<std::unique_ptr<cuda::StreamBuffer>> &keep, PointBuffers *spare) {
    unsigned *start = temporary<unsigned>(keep, ncells, stream_);
    unsigned *end = temporary<unsigned>(keep, ncells, stream_);
    unsigned *count = temporary<unsigned>(keep, ncells + 1, stream_);
    unsigned *busiest = temporary<unsigned>(keep, 1, stream_);
    SFFT_CUDA_CHECK(cudaMemsetAsync(start, 0, ncells * sizeof(unsigned), stream_));
    SFFT_CUDA_CHECK(cudaMemsetAsync(end, 0, ncells * sizeof(unsigned), stream_));
    SFFT_CUDA_CHECK(cudaMemsetAsync(count + ncells, 0, sizeof(unsigned), stream_));
    bin_bounds<<<cuda::grid_for(n, kBlock), kBlock, 0, stream_>>>(keys_sorted, n, start, end);
    SFFT_CUDA_CHECK_LAUNCH();
    count_subproblems<<<cuda::grid_for(ncells, kBlock), kBlock, 0, stream_>>>(start, end, ncells, 1, count);
    SFFT_CUDA_CHECK_LAUNCH();
    obtain(pts_.cell_start, spare ? &spare->cell_start : nullptr, ncells + 1);
    std::size_t scan_bytes = 0, max_bytes = 0;
    const int items = static_cast<int>(ncells + 1);
    SFFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, count, pts_.cell_start.get(), items, stream_));
    SFFT_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, max_bytes, count, busiest, items, stream_));
    void *temp = temporary<unsigned char>(keep, std::max(scan_bytes, max_bytes), stream_);
    SFFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, scan_bytes, count, pts_.cell_start.get(), items, stream_));
    SFFT_CUDA_CHECK(cub::DeviceReduce::Max(temp, max_bytes, count, busiest, items, stream_));
    unsigned most = 0;
    SFFT_CUDA_CHECK(cudaMemcpyAsync(&most, busiest, sizeof most, cudaMemcpyDeviceToHost, stream_));
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double mean = static_cast<double>(n) / static_cast<double>(ncells);
    gather_ = forced || most <= 16 + 4 * mean;
    if (!gather_) return false;
    // Threads per cell: enough for about two resident grids of threads on the device, at most 32 and at
    // most the sources a cell's sum holds on average (W times the mean).
    const long long cells = L_.axis[0].n2;
    const double wanted = 2.0 * 2048.0 * sm_count_;
    const double per_sum = std::max(1.0, mean * L_.kernel.width);
    gather_lanes_ = 1;
    while (gather_lanes_ < 32 && static_cast<double>(cells) * gather_lanes_ < wanted && 2.0 * gather_lanes_ <= per_sum)
      gather_lanes_ *= 2;
    return true;
  }

  // Rescales, keys and radix-sorts n points; for the sources also builds the subproblem table (pts_.sub_bin ..
  // pts_.nsub) and interleaves each subproblem's sources, all on the device.
  template <bool kTargets>
  void sort_points(const Geometry &g, const Coords<Real> &coords, std::size_t n, DeviceBuffer<Real> &pos,
                   DeviceBuffer<C> &factor, DeviceBuffer<unsigned> &index, PointBuffers *spare) {
    const int dim = cfg_.dim;
    // 1-D sources are sorted by cell (tiles of one cell): the gathering needs each cell's sources, and the
    // order by cell is also one by tile where the tiles spread them after all.
    const std::string spread = env_value("SFFT_NUFFT3_SPREAD");
    const bool by_cell = !kTargets && dim == 1 && (spread.empty() || spread == "gather") &&
                         L_.axis[0].n1 < std::numeric_limits<int>::max();
    Geometry key_geo = g;
    if (by_cell) {
      key_geo.tile[0] = 1;
      key_geo.tiles[0] = static_cast<int>(L_.axis[0].n1);
    }
    std::size_t nbins = 1;
    for (int d = 0; d < dim; ++d) nbins = checked_mul(nbins, static_cast<std::size_t>(key_geo.tiles[d]), "tiles");
    require(nbins < (1ull << 31) - 1, "too many grid ", by_cell ? "cells" : "tiles", " (", nbins, ")");
    std::vector<std::unique_ptr<cuda::StreamBuffer>> keep;
    begin_step();
    Real *pos_tmp = temporary<Real>(keep, n * dim, stream_);
    C *fac_tmp = temporary<C>(keep, n, stream_);
    unsigned *keys = temporary<unsigned>(keep, n, stream_);
    unsigned *keys_sorted = temporary<unsigned>(keep, n, stream_);
    unsigned *order = temporary<unsigned>(keep, n, stream_);
    const unsigned grid = cuda::grid_for(n, kBlock);
    prepare_points<Real, kTargets><<<grid, kBlock, 0, stream_>>>(key_geo, coords, n, pos_tmp, fac_tmp, keys, order);
    SFFT_CUDA_CHECK_LAUNCH();
    int end_bit = 1;
    while (end_bit < 32 && (1ull << end_bit) < nbins) ++end_bit;
    std::size_t temp_bytes = 0;
    SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, keys_sorted, order, index.get(),
                                                    static_cast<int>(n), 0, end_bit, stream_));
    void *temp = temporary<unsigned char>(keep, temp_bytes, stream_);
    SFFT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, keys_sorted, order, index.get(),
                                                    static_cast<int>(n), 0, end_bit, stream_));
    if (kTargets) {
      gather_points<Real><<<grid, kBlock, 0, stream_>>>(dim, n, index.get(), pos_tmp, fac_tmp, pos.get(), factor.get());
      SFFT_CUDA_CHECK_LAUNCH();
      return;
    }
    if (by_cell) {
      if (choose_gathering(keys_sorted, n, nbins, spread == "gather", keep, spare)) {
        gather_points<Real>
            <<<grid, kBlock, 0, stream_>>>(dim, n, index.get(), pos_tmp, fac_tmp, pos.get(), factor.get());
        SFFT_CUDA_CHECK_LAUNCH();
        return;
      }
      // Tiles after all: the keys become tile numbers.
      tile_of_cell<<<grid, kBlock, 0, stream_>>>(keys_sorted, n, static_cast<unsigned>(g.tile[0]));
      SFFT_CUDA_CHECK_LAUNCH();
      nbins = static_cast<std::size_t>(g.tiles[0]);
    }

    // Subproblems: each non-empty tile, split into runs of at most `limit` sources. A small problem has only a
    // few hundred tiles (one 20-cell-wide Gaussian tile per block at N = 256^2 left most SMs idle), so the limit
    // shrinks until there are about kSubproblemsPerSm subproblems per SM, trading extra tile flushes for
    // occupancy. At most ceil(N / limit) + min(bins, N) of them: the table is sized for that bound and its
    // actual length stays on the device (pts_.nsub), read by the spreading blocks.
    // Tap by tap, a subproblem also holds at most twice the mean tile's sources (n / nbins over the sources'
    // box), so that dense tiles of clustered points are shared among blocks (H200, W = 4-5 in 2-D, exec ms:
    // Gaussian blobs 0.41 -> 0.35, spiral 0.57 -> 0.48; uniform points unchanged).
    const std::size_t wanted = static_cast<std::size_t>(sm_count_) * kSubproblemsPerSm;
    std::size_t per_block = (n + wanted - 1) / wanted;
    if (spread_taps_) per_block = std::min(per_block, 2 * n / nbins);
    per_block = (per_block + 31) / 32 * 32;
    const unsigned limit = static_cast<unsigned>(std::clamp<std::size_t>(per_block, kMinSubproblem, kMaxSubproblem));
    max_subproblems_ = (n + limit - 1) / limit + std::min(nbins, n);
    obtain(pts_.sub_bin, spare ? &spare->sub_bin : nullptr, max_subproblems_);
    obtain(pts_.sub_start, spare ? &spare->sub_start : nullptr, max_subproblems_);
    obtain(pts_.sub_count, spare ? &spare->sub_count : nullptr, max_subproblems_);
    obtain(pts_.nsub, spare ? &spare->nsub : nullptr, 1);
    unsigned *start = temporary<unsigned>(keep, nbins, stream_);
    unsigned *end = temporary<unsigned>(keep, nbins, stream_);
    unsigned *subs = temporary<unsigned>(keep, nbins + 1, stream_);
    unsigned *offset = temporary<unsigned>(keep, nbins + 1, stream_);
    SFFT_CUDA_CHECK(cudaMemsetAsync(start, 0, nbins * sizeof(unsigned), stream_));
    SFFT_CUDA_CHECK(cudaMemsetAsync(end, 0, nbins * sizeof(unsigned), stream_));
    SFFT_CUDA_CHECK(cudaMemsetAsync(subs + nbins, 0, sizeof(unsigned), stream_));
    bin_bounds<<<grid, kBlock, 0, stream_>>>(keys_sorted, n, start, end);
    SFFT_CUDA_CHECK_LAUNCH();
    const unsigned bin_grid = cuda::grid_for(nbins, kBlock);
    count_subproblems<<<bin_grid, kBlock, 0, stream_>>>(start, end, nbins, limit, subs);
    SFFT_CUDA_CHECK_LAUNCH();
    std::size_t scan_bytes = 0;
    SFFT_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, subs, offset, static_cast<int>(nbins + 1), stream_));
    void *scan_temp = temporary<unsigned char>(keep, scan_bytes, stream_);
    SFFT_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, subs, offset, static_cast<int>(nbins + 1), stream_));
    fill_subproblems<<<bin_grid, kBlock, 0, stream_>>>(start, end, offset, nbins, limit, pts_.sub_bin.get(),
                                                       pts_.sub_start.get(), pts_.sub_count.get(), pts_.nsub.get());
    SFFT_CUDA_CHECK_LAUNCH();
    unsigned *in_bin_order = temporary<unsigned>(keep, n, stream_);
    SFFT_CUDA_CHECK(
        cudaMemcpyAsync(in_bin_order, index.get(), n * sizeof(unsigned), cudaMemcpyDeviceToDevice, stream_));
    const unsigned sub_grid =
        static_cast<unsigned>(std::min<std::size_t>(max_subproblems_, static_cast<std::size_t>(sm_count_) * 8));
    interleave_subproblems<<<sub_grid, kBlock, 0, stream_>>>(pts_.sub_start.get(), pts_.sub_count.get(),
                                                             pts_.nsub.get(), in_bin_order, index.get());
    SFFT_CUDA_CHECK_LAUNCH();
    gather_points<Real><<<grid, kBlock, 0, stream_>>>(dim, n, index.get(), pos_tmp, fac_tmp, pos.get(), factor.get());
    SFFT_CUDA_CHECK_LAUNCH();
  }

  Config cfg_;
  cudaStream_t stream_;
  Layout L_;
  FourierFit fourier_;
  int sm_count_ = 1;
  std::size_t N_ = 0, K_ = 0, max_subproblems_ = 1;
  std::size_t f_count_ = 0, F_count_ = 0;  // ntransf N strengths, ntransf K outputs
  unsigned spread_blocks_ = 1;
  int spread_threads_ = kBlock;
  int smem_optin_ = 0;  // the device's opt-in shared memory per block
  using SpreadFn = void (*)(Geometry, TapPolynomials<Real>, SpreadArgs);
  using InterpFn = void (*)(Geometry, TapPolynomials<Real>, std::size_t, int, const unsigned *, const Real *, const C *,
                            const C *, std::size_t, C *);
  SpreadFn spread_fn_ = nullptr;
  InterpFn interp_fn_ = nullptr;
  unsigned interp_lanes_ = 1;  // threads per target: 1 (interpolate) or 32 (interpolate_warp)
  Geometry src_geo_{}, tgt_geo_{};
  bool use_tiles_ = false;
  bool spread_taps_ = false;    // spread_tiles_by_taps
  bool gather_ = false;         // spread_gather_1d (1-D sources spread evenly enough; sort_points decides)
  unsigned gather_lanes_ = 1;   // its threads per grid cell
  std::size_t tile_bytes_ = 0;  // dynamic shared memory of the spreading kernel (tile, and staging by taps)
  int tile_ext_[3] = {1, 1, 1};
  int batch_ = 1;  // transforms per pass of exec, the grids held (transforms_per_pass)
  PointBuffers pts_, spare_;
  // setpts' temporaries (range scan, keys, sort, bin tables): one buffer that each step carves from its start,
  // taken over from the previous points' engine (whose exec never uses it) and grown to the largest step seen,
  // so that points changing every call allocate no temporaries (a stream-ordered allocation after a
  // synchronisation maps new memory: the default pool releases what it holds at every synchronisation).
  DeviceBuffer<unsigned char> scratch_;
  std::size_t scratch_used_ = 0, step_bytes_ = 0, scratch_need_ = 0;
  DeviceBuffer<C> grid_, f_stage_, F_stage_;
  GridFft fft_;
  bool use_horner_ = false;   // prolate kernel or SFFT_NUFFT3_WEIGHTS=horner: weights from horner_table_ (tap_weight)
  bool exp_weights_ = false;  // SFFT_NUFFT3_WEIGHTS=exp: weights from exp/sqrt (A/B)
  HornerTable horner_table_;
  TapPolynomials<Real> poly_{};  // the kernel weights up to 16 cells (degree 0: kernel_value or horner_)
  double tap_tol_ = 0;
  DeviceBuffer<Real> horner_;
  bool stage_times_ = false;
  cuda::StageTimer timer_;
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(const Config &c) {
  if (c.is_double) return std::make_unique<CudaEngine<double>>(c);
  return std::make_unique<CudaEngine<float>>(c);
}

}  // namespace sfft::nufft3
