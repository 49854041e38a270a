// SPDX-License-Identifier: Apache-2.0
// Body of one instruction-set variant of the sparse R2C's ramp loop; included by sparse_row_ramps_<isa>.cpp with
// SFFT_SPFFT2D_RAMPS naming the namespace and SFFT_SPFFT2D_RAMPS_ISA the instruction set. Everything but adders() has internal linkage, and nothing here calls an
// inline function of another header, so no code built with wider -m flags can be picked by the linker for another
// variant.
#include <cstdint>

#include "spfft2d/sparse_row_ramps.hpp"

namespace sfft::spfft2d::SFFT_SPFFT2D_RAMPS {
namespace {

// Adds the ramps of G nonzeros of one row of T. The terms come in blocks of kRampBlock: each block's first term (the
// anchor) from the table, the block's terms as anchor x e^{-2 pi i m j / M}, j < kRampBlock (the steps, from the
// table once a nonzero). Two roundings a term however long the ramp, and the inner loop has no gathers, so it
// vectorises; G ramps at once read and write the row once. docs/spfft2d.md ("Sparse FFT rows on the CPU").
template <class Real, int G>
void add_ramps(Real *__restrict__ row, const Real *__restrict__ ramp, uint64_t q, uint64_t M,
               const RampSource<Real> *source) {
  alignas(64) Real steps[G][2 * kRampBlock], turned[G][2 * kRampBlock];  // interleaved; turned = i x steps
  uint64_t phase[G], block_phase[G];
  for (int g = 0; g < G; ++g) {
    uint64_t at = 0;
    for (int j = 0; j < kRampBlock; ++j) {
      steps[g][2 * j] = ramp[2 * at];
      steps[g][2 * j + 1] = ramp[2 * at + 1];
      turned[g][2 * j] = -ramp[2 * at + 1];
      turned[g][2 * j + 1] = ramp[2 * at];
      at += source[g].m;
      if (at >= M) at -= M;
    }
    phase[g] = 0;
    block_phase[g] = at;
  }
  for (uint64_t k0 = 0; k0 < q; k0 += kRampBlock) {
    Real ar[G], ai[G];
    for (int g = 0; g < G; ++g) {
      const Real re = ramp[2 * phase[g]], im = ramp[2 * phase[g] + 1], w = source[g].w;
      ar[g] = source[g].odd ? -w * im : w * re;
      ai[g] = source[g].odd ? w * re : w * im;
      phase[g] += block_phase[g];
      if (phase[g] >= M) phase[g] -= M;
    }
    const uint64_t left = q - k0, reals = 2 * (left < kRampBlock ? left : kRampBlock);
    Real *__restrict__ out = row + 2 * k0;
    for (uint64_t j = 0; j < reals; ++j) {
      Real sum = out[j];
      for (int g = 0; g < G; ++g) sum += ar[g] * steps[g][j] + ai[g] * turned[g][j];
      out[j] = sum;
    }
  }
}

}  // namespace

static_assert(kRampGroup == 4, "adders() lists one adder per group size");

template <class Real>
RampAdders<Real> adders() {
  return {{&add_ramps<Real, 1>, &add_ramps<Real, 2>, &add_ramps<Real, 3>, &add_ramps<Real, 4>}, SFFT_SPFFT2D_RAMPS_ISA};
}

template RampAdders<float> adders<float>();
template RampAdders<double> adders<double>();

}  // namespace sfft::spfft2d::SFFT_SPFFT2D_RAMPS
