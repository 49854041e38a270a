// SPDX-License-Identifier: Apache-2.0
// The avx512 variant of the CPU NUFFT loops (flags in module.cmake).
#define SFFT_NUFFT3_ISA avx512
#define SFFT_NUFFT3_ISA_NAME "avx512"
#define SFFT_NUFFT3_VECTOR_BYTES 64
#include "nufft3/cpu_kernels.inl"
