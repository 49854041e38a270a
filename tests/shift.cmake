# SPDX-License-Identifier: Apache-2.0
# shift_test also checks the index arithmetic the kernels share (src/shift/layout.hpp, pairs.hpp) and the
# in-place pair order on its own: those internal units come from the internal archive (libsfft hides them).
target_link_libraries(shift_test PRIVATE sfft_internal)
