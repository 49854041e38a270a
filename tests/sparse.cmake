# SPDX-License-Identifier: Apache-2.0
# sparse_decode_test checks the header-only bucket arithmetic the sparse FFT's backends share
# (src/sparse/bucket_math.hpp) on hand-built buckets, and the CUDA backend's bucket FFT arithmetic
# (src/sparse/bucket_fft.hpp) on the host against a direct DFT.
sfft_add_gtest(sparse_decode_test sparse_decode_test.cpp)
target_link_libraries(sparse_decode_test PRIVATE sfft_internal)

# sparse_window_test builds the plan-time design (src/sparse/filter.cpp, compiled into the test: the
# library exports only the C API) and checks the window's truncated taps against the analytic response.
sfft_add_gtest(sparse_window_test sparse_window_test.cpp)
target_link_libraries(sparse_window_test PRIVATE sfft_internal)

# The `sfft sparse` demo (exit status 1 when a planted frequency is missed) at a power of two and at a
# length that is not one, on the CPU backend.
if(TARGET sfft_cli)
  add_test(NAME cli.sparse_power_of_two COMMAND sfft_cli sparse --log2n 16 --k 8 --backend cpu)
  add_test(NAME cli.sparse_other_length COMMAND sfft_cli sparse --n 12288 --k 8 --variant exact --backend cpu)
endif()

# sparse_test (recovery, top-k, AUTO) is added with every family's test; the comb pre-pass and the C API contract
# are programs of their own, sharing sparse_fixture.hpp.
sfft_add_gtest(sparse_comb_test sparse_comb_test.cpp)
sfft_add_gtest(sparse_api_test sparse_api_test.cpp)

# sfft_exec_batch against sfft_exec and FFTW on every signal (CPU, and CUDA with host and device pointers).
sfft_add_gtest(sparse_batch_test sparse_batch_test.cpp)

# Recall under white noise down to 3 dB over 100 seeded trials per row, and the exec report (sfft_get_report):
# it flags pure noise, a dense spectrum and k far too small.
sfft_add_gtest(sparse_noise_test sparse_noise_test.cpp)
