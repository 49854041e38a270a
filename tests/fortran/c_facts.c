/* SPDX-License-Identifier: Apache-2.0 */
/* What the Fortran module must agree with, read from the C header: the size and field offsets of each option
   struct, every enum value and the version, in the order tests/fortran/api_test.f90 lists them. */
#include <sfft/sfft.h>
#include <stddef.h>
#include <stdint.h>

int sfft_test_c_facts(int64_t *facts, int capacity) {
  const int64_t all[] = {
      sizeof(sfft_options), offsetof(sfft_options, struct_size), offsetof(sfft_options, backend),
      offsetof(sfft_options, device), offsetof(sfft_options, stream), offsetof(sfft_options, threads),
      offsetof(sfft_options, seed),
      sizeof(sfft_build_info), offsetof(sfft_build_info, struct_size), offsetof(sfft_build_info, version),
      offsetof(sfft_build_info, families), offsetof(sfft_build_info, cuda_compiled),
      offsetof(sfft_build_info, cuda_loaded), offsetof(sfft_build_info, cuda_device_count),
      offsetof(sfft_build_info, cuda_runtime_version), offsetof(sfft_build_info, cuda_driver_version),
      offsetof(sfft_build_info, cufft_version), offsetof(sfft_build_info, cuda_architectures),
      offsetof(sfft_build_info, fft_library), offsetof(sfft_build_info, cuda_unavailable),
      sizeof(nufft3_options), offsetof(nufft3_options, struct_size), offsetof(nufft3_options, ntransf),
      offsetof(nufft3_options, kernel), offsetof(nufft3_options, upsampfac),
      sizeof(sfft_sparse_options), offsetof(sfft_sparse_options, struct_size),
      offsetof(sfft_sparse_options, variant), offsetof(sfft_sparse_options, filter_tolerance),
      offsetof(sfft_sparse_options, bucket_factor), offsetof(sfft_sparse_options, location_loops),
      offsetof(sfft_sparse_options, estimation_loops), offsetof(sfft_sparse_options, bits_per_stage),
      offsetof(sfft_sparse_options, min_votes), offsetof(sfft_sparse_options, comb_loops),
      offsetof(sfft_sparse_options, comb_width), offsetof(sfft_sparse_options, comb_keep),
      sizeof(sfft_status), sizeof(sfft_dtype), sizeof(sfft_backend), sizeof(nufft3_kernel),
      sizeof(spfft2d_method), sizeof(sfft_sparse_variant),
      SFFT_SUCCESS, SFFT_ERROR_INVALID_ARGUMENT, SFFT_ERROR_UNSUPPORTED, SFFT_ERROR_OUT_OF_MEMORY,
      SFFT_ERROR_NO_DEVICE, SFFT_ERROR_DEVICE, SFFT_ERROR_INTERNAL,
      SFFT_FLOAT32, SFFT_FLOAT64, SFFT_COMPLEX64, SFFT_COMPLEX128,
      SFFT_BACKEND_AUTO, SFFT_BACKEND_CPU, SFFT_BACKEND_CUDA,
      SFFT_FAMILY_SHIFT, SFFT_FAMILY_SPARSE, SFFT_FAMILY_NUFFT3, SFFT_FAMILY_SPFFT2D,
      NUFFT3_KERNEL_ES, NUFFT3_KERNEL_GAUSSIAN,
      SPFFT2D_METHOD_AUTO, SPFFT2D_METHOD_DIRECT, SPFFT2D_METHOD_DIRECT_ROWS, SPFFT2D_METHOD_DENSE,
      SFFT_SPARSE_AUTO, SFFT_SPARSE_ROBUST, SFFT_SPARSE_EXACT,
      SFFT_VERSION_MAJOR, SFFT_VERSION_MINOR, SFFT_VERSION_PATCH, SFFT_VERSION_NUMBER};
  const int count = (int)(sizeof all / sizeof all[0]);
  for (int i = 0; i < count && i < capacity; ++i) facts[i] = all[i];
  return count;
}
