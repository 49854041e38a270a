# SPDX-License-Identifier: Apache-2.0
# The nufft3 benchmark is a Python driver (benchmarks/nufft3_bench.py) that loads libsfft through ctypes
# and the peer (finufft / cufinufft) in the same process. This target just runs it on the CPU backend.
add_custom_target(bench_nufft3_cpu
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/nufft3_bench.py --lib $<TARGET_FILE:sfft> --backend cpu
  DEPENDS sfft USES_TERMINAL
  COMMENT "nufft3: sfft vs FINUFFT type 3 on the CPU (needs the finufft Python module)")
