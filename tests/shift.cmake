# shift_test also checks the header-only index arithmetic the kernels share (src/shift/layout.hpp).
target_include_directories(shift_test PRIVATE ${PROJECT_SOURCE_DIR}/src)
