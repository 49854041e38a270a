// SPDX-License-Identifier: Apache-2.0
// Small helpers shared by the CLI subcommands: argument parsing, timing, status checks.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "sfft/sfft.h"

namespace cli {

// Parsed "--name value" / "--flag" arguments after the subcommand.
class Args {
 public:
  Args(int argc, char **argv);
  bool has(const std::string &name) const;
  std::string get(const std::string &name, const std::string &fallback) const;
  // Strict: the whole value must parse; the message names the option and the value.
  int64_t get_int(const std::string &name, int64_t fallback) const;
  int64_t get_int_in(const std::string &name, int64_t fallback, int64_t lo, int64_t hi) const;
  double get_double(const std::string &name, double fallback) const;
  const std::vector<std::string> &positional() const { return positional_; }
  // Names given that are not in `known`; the subcommand reports them as errors.
  std::vector<std::string> unknown(const std::vector<std::string> &known) const;

 private:
  std::vector<std::pair<std::string, std::string>> named_;
  std::vector<std::string> positional_;
};

// "511x512" -> {511, 512}; "0,1" -> {0, 1}. Throw std::invalid_argument on malformed text.
std::vector<int64_t> parse_list(const std::string &text, char sep);

// Parses --backend cpu|cuda|auto into opts (defaults otherwise).
sfft_options options_from(const Args &args);

// --kernel es|pswf|gaussian (default es) as a nufft3_kernel; throws std::invalid_argument on another name.
nufft3_kernel nufft3_kernel_from(const Args &args);

// Writes key/value pairs as JSON (path ends in .json) or CSV (.csv).
void write_summary(const std::string &path, const std::vector<std::pair<std::string, std::string>> &fields);

// Prints "sfft <what> failed: <status>: <detail>" to stderr and returns 1 when s != SFFT_SUCCESS.
int report(sfft_status s, const char *what);

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median wall time (seconds) of `repeats` calls of run() after one warm-up call; stops at the first call
// that returns false (then the result is meaningless and the caller reports the failure). Runs longer than
// a few seconds report their progress on stderr.
template <class Run>
double median_seconds(int repeats, Run &&run) {
  const auto start = std::chrono::steady_clock::now();
  if (!run()) return 0;
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (!run()) return 0;
    times.push_back(seconds_since(t0));
    if (seconds_since(start) > 3 && r + 1 < repeats)
      std::fprintf(stderr, "sfft: run %d of %d done, %.1f s elapsed\n", r + 2, repeats + 1, seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  return times.empty() ? 0 : times[times.size() / 2];
}

}  // namespace cli
