// SPDX-License-Identifier: Apache-2.0
// SFFT_HD marks small functions shared verbatim by the CPU backends and the CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define SFFT_HD __host__ __device__ __forceinline__
#else
#define SFFT_HD inline
#endif

// Unrolls the loop that follows in the device pass (the host compiler does not know the pragma).
#if defined(__CUDA_ARCH__)
#define SFFT_UNROLL _Pragma("unroll")
#else
#define SFFT_UNROLL
#endif
