// SPDX-License-Identifier: Apache-2.0
#include "common/process.hpp"

#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

namespace sfft {
namespace {

std::atomic<bool> forked_child{false};

// Set in the child of every fork() from the moment the library is loaded (atfork handlers run in the child
// before fork() returns there), whatever thread forks.
[[maybe_unused]] const bool atfork_registered = [] {
  return pthread_atfork(nullptr, nullptr, [] { forked_child.store(true, std::memory_order_relaxed); }) == 0;
}();

constexpr double kUnlimited = std::numeric_limits<double>::infinity();
// cgroup v1 reports "no limit" as a page-rounded LONG_MAX; anything this large is no limit.
constexpr double kNoLimit = 0x1p62;

// The number that follows `key` in a "key value" file (meminfo's "MemAvailable:", memory.stat's
// "inactive_file"), or -1.
double field(const std::string &path, const std::string &key) {
  std::ifstream in(path);
  std::string k;
  double v = 0;
  while (in >> k) {
    if (k == key && in >> v) return v;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return -1;
}

// The single number a cgroup file holds, or -1 (absent, or "max").
double number(const std::string &path) {
  std::ifstream in(path);
  double v = -1;
  return in >> v ? v : -1;
}

// What a cgroup directory and its ancestors up to `mount` still allow: per level limit - usage + inactive
// file cache (reclaimed before the limit bites), the least over the levels.
double cgroup_room(const std::string &mount, std::string path, const char *limit_file, const char *usage_file,
                   const char *inactive_key) {
  double room = kUnlimited;
  for (;;) {
    const std::string dir = mount + path;
    const double limit = number(dir + "/" + limit_file), usage = number(dir + "/" + usage_file);
    if (limit >= 0 && limit < kNoLimit && usage >= 0)
      room = std::min(room, std::max(0.0, limit - usage + std::max(0.0, field(dir + "/memory.stat", inactive_key))));
    if (path.empty() || path == "/") break;
    path = path.substr(0, path.find_last_of('/'));
  }
  return room;
}

}  // namespace

int hardware_threads() {
  static const int count = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 1u << 20));
  return count;
}

int max_threads() { return 4 * hardware_threads(); }

bool in_forked_child() { return forked_child.load(std::memory_order_relaxed); }

double available_host_memory(const std::string &root) {
  double avail = field(root + "/proc/meminfo", "MemAvailable:");
  if (avail < 0) avail = field(root + "/proc/meminfo", "MemTotal:");
  double bytes = avail < 0 ? kUnlimited : avail * 1024;
  // "0::/path" (v2) or "N:memory:/path" (v1, memory possibly among other controllers).
  std::ifstream cgroups(root + "/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    const std::size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",", path = line.substr(b + 1);
    if (controllers == ",,")
      bytes =
          std::min(bytes, cgroup_room(root + "/sys/fs/cgroup", path, "memory.max", "memory.current", "inactive_file"));
    else if (controllers.find(",memory,") != std::string::npos)
      bytes = std::min(bytes, cgroup_room(root + "/sys/fs/cgroup/memory", path, "memory.limit_in_bytes",
                                          "memory.usage_in_bytes", "total_inactive_file"));
  }
  return bytes;
}

double available_host_memory() {
  double bytes = available_host_memory("");
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const double mapped = field("/proc/self/status", "VmSize:");
    if (mapped >= 0) bytes = std::min(bytes, std::max(0.0, static_cast<double>(as.rlim_cur) - mapped * 1024));
  }
  return bytes;
}

}  // namespace sfft
