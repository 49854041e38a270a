// SPDX-License-Identifier: Apache-2.0
// The avx2 variant of the CPU NUFFT loops (flags in module.cmake).
#define SFFT_NUFFT3_ISA avx2
#define SFFT_NUFFT3_ISA_NAME "avx2"
#define SFFT_NUFFT3_VECTOR_BYTES 32
#include "nufft3/cpu_kernels.inl"
