// SPDX-License-Identifier: Apache-2.0
// The library's diagnostic environment switches (stage timers, A/B kernel overrides; listed in each family's
// documentation), read in one way everywhere.
#pragma once

#include <cstdlib>
#include <string>

namespace sfft {

// The value of environment variable `name`, or "" when it is unset.
inline std::string env_value(const char *name) {
  const char *v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// Whether `name` is set to something other than "" and "0" (a switch that is on).
inline bool env_flag(const char *name) {
  const std::string v = env_value(name);
  return !v.empty() && v != "0";
}

}  // namespace sfft
