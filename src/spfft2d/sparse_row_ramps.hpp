// SPDX-License-Identifier: Apache-2.0
// The sparse R2C's inner loop (SparseRowR2c: the ramps of a row's nonzeros added into the rows of its table), built
// once per CPU instruction set (common/cpu_isa.hpp): sparse_row_ramps.inl, compiled by sparse_row_ramps_<isa>.cpp.
#pragma once

#include <cstdint>

namespace sfft::spfft2d {

constexpr int kRampBlock = 32;  // terms from one anchor
constexpr int kRampGroup = 4;   // ramps added in one pass over a row

// One nonzero's ramp: z[m] = w (odd: i w), adding w e^{-2 pi i m k / M} (odd: times i) to T's row m mod P.
template <class Real>
struct RampSource {
  uint64_t m;
  bool odd;
  Real w;
};

// add[g] adds the ramps of g + 1 nonzeros to one row of T (q values, interleaved reals); ramp holds
// e^{-2 pi i m / M}, m < M, interleaved. isa: the instruction set they were built for (cpu_isa_name's names).
template <class Real>
struct RampAdders {
  void (*add[kRampGroup])(Real *row, const Real *ramp, uint64_t q, uint64_t M, const RampSource<Real> *source);
  const char *isa;
};

#define SFFT_SPFFT2D_DECLARE_RAMPS(isa) \
  namespace ramps_##isa {               \
    template <class Real>               \
    RampAdders<Real> adders();          \
  }
SFFT_SPFFT2D_DECLARE_RAMPS(generic)
SFFT_SPFFT2D_DECLARE_RAMPS(avx2)
SFFT_SPFFT2D_DECLARE_RAMPS(avx512)
#undef SFFT_SPFFT2D_DECLARE_RAMPS

}  // namespace sfft::spfft2d
