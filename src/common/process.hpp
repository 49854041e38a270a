// SPDX-License-Identifier: Apache-2.0
// Process-wide facts every family shares: how many threads a call may use (the cap on opts->threads and the
// single-threaded rule of a forked child) and how much host memory a new workspace may take.
#pragma once

#include <string>

namespace sfft {

// The hardware thread count (>= 1), read once: std::thread::hardware_concurrency() reads /sys on every
// call (about 6 us here), which small transforms would pay per call.
int hardware_threads();

// Largest thread count a call uses: 4 x the hardware threads. More threads than that only add overhead, and
// OpenMP runtimes end the process when they cannot create a team (INT_MAX threads: "out of memory").
int max_threads();

// Whether this process is a child created by fork() after the library was loaded. The parent's OpenMP
// and FFTW worker threads do not exist in the child, and both runtimes would wait for them forever.
bool in_forked_child();

// Threads for one parallel region or FFTW plan now: `requested`, or 1 in a forked child.
inline int usable_threads(int requested) { return in_forked_child() ? 1 : requested; }

// Bytes of host memory a new workspace may take: the least of the kernel's MemAvailable, what the memory
// cgroup (v2 or v1) of this process still allows (its limit minus its usage, plus reclaimable file cache),
// and the address-space limit (RLIMIT_AS) minus what the process maps. Allocation may still fail.
double available_host_memory();
// The same from the files below `root` ("/proc/meminfo", "/proc/self/cgroup", "/sys/fs/cgroup/..."),
// without the address-space limit: for tests with made-up files.
double available_host_memory(const std::string &root);

}  // namespace sfft
