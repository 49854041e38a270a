// SPDX-License-Identifier: Apache-2.0
// Owning, 64-byte aligned host allocation (SIMD/FFTW friendly; large ones on huge pages where offered) that
// reports its size on failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "common/error.hpp"

namespace sfft {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
inline constexpr std::size_t kHugeBufferBytes = std::size_t{4} << 20;  // from here on a buffer asks for huge pages

// Large buffers on 2 MiB pages where the kernel offers them on request (transparent huge pages in "madvise"
// mode): a fresh buffer is mapped as it is first written, and 4 KiB faults cost several times the writes (3 x
// 4096 x 4096 float32 shifted in place, a third of it saved: 48 -> 26 ms on 2 threads). Advice only, for the
// whole 2 MiB pages inside [p, p + bytes); a refusal leaves 4 KiB pages.
inline void advise_huge_pages([[maybe_unused]] void *p, [[maybe_unused]] std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < kHugeBufferBytes) return;
  const auto first = (reinterpret_cast<std::uintptr_t>(p) + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) / kHugePageBytes * kHugePageBytes;
  if (end > first) (void)madvise(reinterpret_cast<void *>(first), end - first, MADV_HUGEPAGE);
#endif
}

// Fails with SFFT_ERROR_OUT_OF_MEMORY unless `count` elements of `size` bytes could be allocated now, touching
// none of them: the range is mapped and unmapped at once, as glibc's malloc maps a block this large, so the
// kernel's overcommit policy and RLIMIT_AS decide as they would for the allocation. Through the C allocator a
// sanitizer's allocator writes the freed block's shadow instead (AddressSanitizer: an eighth of the bytes, 3 GB
// resident for a 24 GB probe, 8-30 s; tests/fuzz/corpus/mtx/regression-whole-spectrum-probe.mtx).
inline void require_host_memory(std::size_t count, std::size_t size, const char *what) {
  if (count == 0 || size == 0) return;
  if (count > static_cast<std::size_t>(-1) / size)
    fail(SFFT_ERROR_OUT_OF_MEMORY, what, ": host allocation of ", count, " elements of ", size, " bytes overflows");
  const std::size_t bytes = count * size;
#if defined(__linux__)
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fail(SFFT_ERROR_OUT_OF_MEMORY, what, ": host allocation of ", bytes, " bytes failed");
  munmap(p, bytes);
#else
  void *p = std::malloc(bytes);
  if (p == nullptr) fail(SFFT_ERROR_OUT_OF_MEMORY, what, ": host allocation of ", bytes, " bytes failed");
  std::free(p);
#endif
}

template <class T>
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t count) { allocate(count); }
  ~HostBuffer() { std::free(ptr_); }
  HostBuffer(HostBuffer &&o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  HostBuffer &operator=(HostBuffer &&o) noexcept {
    if (this != &o) {
      std::free(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;

  void allocate(std::size_t count) {
    std::free(ptr_);
    ptr_ = nullptr;
    count_ = 0;
    if (count == 0) return;
    if (count > (static_cast<std::size_t>(-1) - 63) / sizeof(T))
      fail(SFFT_ERROR_OUT_OF_MEMORY, "host allocation of ", count, " elements of ", sizeof(T), " bytes overflows");
    std::size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
    const bool huge = bytes >= kHugeBufferBytes && bytes <= static_cast<std::size_t>(-1) / 2;
    if (huge) bytes = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;  // whole huge pages
    ptr_ = static_cast<T *>(std::aligned_alloc(huge ? kHugePageBytes : 64, bytes));
    if (ptr_ == nullptr) fail(SFFT_ERROR_OUT_OF_MEMORY, "host allocation of ", bytes, " bytes failed");
    advise_huge_pages(ptr_, bytes);
    count_ = count;
  }
  T *get() const noexcept { return ptr_; }
  T &operator[](std::size_t i) const noexcept { return ptr_[i]; }
  std::size_t size() const noexcept { return count_; }

 private:
  T *ptr_ = nullptr;
  std::size_t count_ = 0;
};

// std::allocator's failure carries no size, and under sanitizer runtimes it aborts instead of throwing.
// This one allocates with malloc and reports SFFT_ERROR_OUT_OF_MEMORY with the byte count; host
// workspaces that grow with user sizes are HostVectors.
template <class T>
struct ReportingAllocator {
  using value_type = T;
  ReportingAllocator() = default;
  template <class U>
  ReportingAllocator(const ReportingAllocator<U> &) noexcept {}
  T *allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T))
      fail(SFFT_ERROR_OUT_OF_MEMORY, "host allocation of ", n, " elements of ", sizeof(T), " bytes overflows");
    void *p = std::malloc(n * sizeof(T) == 0 ? 1 : n * sizeof(T));
    if (p == nullptr) fail(SFFT_ERROR_OUT_OF_MEMORY, "host allocation of ", n * sizeof(T), " bytes failed");
    advise_huge_pages(p, n * sizeof(T));
    return static_cast<T *>(p);
  }
  void deallocate(T *p, std::size_t) noexcept { std::free(p); }
  template <class U>
  bool operator==(const ReportingAllocator<U> &) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const ReportingAllocator<U> &) const noexcept {
    return false;
  }
};

template <class T>
using HostVector = std::vector<T, ReportingAllocator<T>>;

// Values of T in one thread's slot of a HostBuffer that threads share: count rounded up to whole 64-byte lines, so
// that every slot starts at the buffer's alignment (FFTW plans made on one slot run on the others).
template <class T>
constexpr std::size_t aligned_slot(std::size_t count) {
  constexpr std::size_t per_line = 64 / sizeof(T);
  return (count + per_line - 1) / per_line * per_line;
}

}  // namespace sfft
