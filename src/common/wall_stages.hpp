// SPDX-License-Identifier: Apache-2.0
// Wall-clock stage times of host-side work (a plan's creation), for the families' profiling switches: off, it
// records nothing; on, each mark ends a stage and report prints "<header> <stage> <ms> ... | total <ms>" to stderr.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace sfft {

class WallStages {
 public:
  explicit WallStages(bool on) : on_(on), start_(Clock::now()), last_(start_) {}

  void mark(const char *name) {
    if (!on_) return;
    const Clock::time_point now = Clock::now();
    char item[96];
    std::snprintf(item, sizeof item, " %s %.3f", name, ms(last_, now));
    line_ += item;
    last_ = now;
  }

  void report(const char *header) const {
    if (!on_) return;
    std::fprintf(stderr, "%s%s | total %.3f\n", header, line_.c_str(), ms(start_, Clock::now()));
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double ms(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  }
  bool on_;
  Clock::time_point start_, last_;
  std::string line_;
};

}  // namespace sfft
