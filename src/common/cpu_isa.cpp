// SPDX-License-Identifier: Apache-2.0
#include "common/cpu_isa.hpp"

#include <cstdlib>
#include <cstring>

namespace sfft {

CpuIsa cpu_isa(const char *cap_variable) {
#if defined(SFFT_X86_VARIANTS)
  const char *cap = std::getenv(cap_variable);
  const bool to_generic = cap != nullptr && std::strcmp(cap, "generic") == 0;
  const bool to_avx2 = cap != nullptr && std::strcmp(cap, "avx2") == 0;
  if (!to_generic && !to_avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return CpuIsa::kAvx512;
  if (!to_generic && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::kAvx2;
#else
  (void)cap_variable;
#endif
  return CpuIsa::kGeneric;
}

const char *cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    default:
      return "generic";
  }
}

}  // namespace sfft
