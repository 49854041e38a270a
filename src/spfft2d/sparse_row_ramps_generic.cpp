// SPDX-License-Identifier: Apache-2.0
// The generic variant of the sparse R2C's ramp loop (flags in module.cmake).
#define SFFT_SPFFT2D_RAMPS ramps_generic
#define SFFT_SPFFT2D_RAMPS_ISA "generic"
#include "spfft2d/sparse_row_ramps.inl"
