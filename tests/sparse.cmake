# sparse_decode_test checks the header-only bucket arithmetic the sparse FFT's backends share
# (src/sparse/bucket_math.hpp) on hand-built buckets.
sfft_add_gtest(sparse_decode_test sparse_decode_test.cpp)
target_include_directories(sparse_decode_test PRIVATE ${PROJECT_SOURCE_DIR}/src)
