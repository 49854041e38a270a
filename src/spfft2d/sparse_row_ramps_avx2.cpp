// SPDX-License-Identifier: Apache-2.0
// The avx2 variant of the sparse R2C's ramp loop (flags in module.cmake).
#define SFFT_SPFFT2D_RAMPS ramps_avx2
#define SFFT_SPFFT2D_RAMPS_ISA "avx2"
#include "spfft2d/sparse_row_ramps.inl"
