// SPDX-License-Identifier: Apache-2.0
// The generic variant of the CPU NUFFT loops (flags in module.cmake).
#define SFFT_NUFFT3_ISA generic
#define SFFT_NUFFT3_ISA_NAME "generic"
#define SFFT_NUFFT3_VECTOR_BYTES 16
#include "nufft3/cpu_kernels.inl"
