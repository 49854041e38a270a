// SPDX-License-Identifier: Apache-2.0
// Which build of a CPU hot loop to run. On x86-64 with GCC or Clang a family's hot loops are compiled once per
// instruction set, for the baseline, AVX2 + FMA and AVX-512 (the flags in CMakeLists.txt, the units in
// src/<family>/module.cmake), and the widest this CPU runs is taken. An environment variable per family caps the
// choice, so that tests run every variant on one machine.
#pragma once

namespace sfft {

enum class CpuIsa { kGeneric, kAvx2, kAvx512 };

// The widest variant built and supported here, capped by the environment variable `cap_variable` where it names one
// (generic, avx2 or avx512; unset or anything else: no cap). Elsewhere than x86-64 with GCC or Clang: kGeneric.
CpuIsa cpu_isa(const char *cap_variable);

const char *cpu_isa_name(CpuIsa isa);

}  // namespace sfft
