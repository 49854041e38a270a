// SPDX-License-Identifier: Apache-2.0
// Hot loops of the CPU type-3 NUFFT (spreading into a subgrid, interpolation from the FFT grid), compiled once
// per instruction set (cpu_kernels_<isa>.cpp include cpu_kernels.inl with their own -m flags) and picked at
// plan time for the running CPU. Kernel weights come from a Horner table (horner.hpp); loops are specialised
// on the kernel width (2..16; wider Gaussian kernels use the run-time-width variant) and the dimension.
#pragma once

#include <complex>
#include <cstddef>

namespace sfft::nufft3::cpu {

template <class Real>
struct HornerView {
  const Real *coeff;  // (degree + 1) x stride, highest power first
  int width, degree, stride;
  Real half_width;
};

// Taps per coefficient row of the Horner table: one 64-byte vector of Real.
template <class Real>
constexpr int kStrideMultiple = static_cast<int>(64 / sizeof(Real));

// Cells that the per-line loops may touch past a window's end (zero weights): the engine allocates this much
// after every subgrid and after the FFT grid. Covers rounding any width up to 64 bytes of complex values.
constexpr int kLineSlack = 8;

// n cells of complex Real rounded up to whole 64-byte blocks: how the engine sizes each subgrid (SpreadTask).
template <class Real>
constexpr std::size_t whole_blocks(std::size_t n) {
  constexpr std::size_t block = 64 / (2 * sizeof(Real));
  return (n + block - 1) / block * block;
}
// ... and up to an odd number of them: the 3-d subgrids' line and row strides, so that a window's lines fall in every
// set of the L1 cache. Lines of 32 double cells (512 bytes) used an eighth of the sets, and 3-d spreading at W =
// 11 and 12 took 40 % longer than with 36-cell lines (clustered 3-D, 16 transforms, development VM).
template <class Real>
constexpr std::size_t odd_blocks(std::size_t n) {
  constexpr std::size_t block = 64 / (2 * sizeof(Real));
  const std::size_t blocks = (n + block - 1) / block;
  return (blocks | 1) * block;
}

template <class Real>
struct SpreadTask {
  HornerView<Real> kernel;
  const double *pos[3];                 // sorted source grid coordinates (centred cells), per dimension
  const std::size_t *index;             // sorted position -> original source
  const std::complex<Real> *phase, *f;  // sorted phase factors; strengths in original order
  std::size_t begin, end;               // sorted sources of this chunk
  long long offset[3];                  // subgrid index of first cell 0, per dimension
  std::size_t stride0, stride1;         // subgrid cells per step in dimension 0 and 1
  // Interleaved complex subgrid, added to. In 3-d it starts on a 64-byte boundary and stride0, stride1 are
  // multiples of 64 bytes: every line of a window shares its first cell's alignment, and the loops may read and
  // add whole aligned vectors around each window line (zeros outside it), inside the line's padding.
  Real *sub;
  // Transforms spread at once (each source's weights computed once for all of them): transform g's strengths
  // at f + g * f_stride, its subgrid at sub + 2 * g * sub_stride (cells).
  int count;
  std::size_t f_stride, sub_stride;
};

template <class Real>
struct InterpTask {
  HornerView<Real> kernel;
  const double *pos[3];  // sorted target grid coordinates (periodic cells), per dimension
  long long n2[3];       // FFT grid size per dimension (1 past dim)
  const Real *grid;      // interleaved complex, ntransf x n2_total; the last dim's cell c holds frequency c - n2/2
  std::size_t n2_total;
  int ntransf;
  const std::size_t *index;          // sorted position -> original target
  const std::complex<Real> *factor;  // sorted output factors
  std::size_t begin, end, K;         // sorted targets of this chunk; K = output stride between transforms
  std::complex<Real> *F;
};

template <class Real>
struct Kernels {
  void (*spread)(const SpreadTask<Real> &);
  void (*interpolate)(const InterpTask<Real> &);
  const char *isa;
};

// The variants for `width` and `dim` on the widest instruction set this CPU has. SFFT_NUFFT3_ISA=generic|avx2|
// avx512 in the environment caps the choice (to test every variant on one machine).
template <class Real>
Kernels<Real> select_kernels(int width, int dim);

#define SFFT_NUFFT3_DECLARE_ISA(ns)          \
  namespace ns {                             \
  template <class Real>                      \
  Kernels<Real> kernels(int width, int dim); \
  }
SFFT_NUFFT3_DECLARE_ISA(generic)
SFFT_NUFFT3_DECLARE_ISA(avx2)
SFFT_NUFFT3_DECLARE_ISA(avx512)
#undef SFFT_NUFFT3_DECLARE_ISA

}  // namespace sfft::nufft3::cpu
