# SPDX-License-Identifier: Apache-2.0
# shift_test also checks the index arithmetic the kernels share (src/shift/layout.hpp, inplace.hpp) and the
# in-place chunk plan on its own: those internal units are compiled into the test (libsfft hides them).
target_link_libraries(shift_test PRIVATE sfft_internal)
