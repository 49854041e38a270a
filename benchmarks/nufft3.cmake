# SPDX-License-Identifier: Apache-2.0
# The nufft3 benchmark is a Python driver (benchmarks/nufft3_bench.py) that loads libsfft through ctypes
# and the peer (finufft / cufinufft) in the same process. This target runs it on the CPU backend through
# nufft3_cpu.sh, which installs the pinned FINUFFT (benchmarks/requirements.txt) into a virtual environment.
add_custom_target(bench_nufft3_cpu
  COMMAND ${CMAKE_COMMAND} -E env SFFT_BUILD=${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/nufft3_cpu.sh --scale 0.05
  DEPENDS sfft USES_TERMINAL
  COMMENT "nufft3: sfft vs FINUFFT type 3 on the CPU (needs the finufft Python module)")
