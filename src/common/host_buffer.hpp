// Owning, 64-byte aligned host allocation (SIMD/FFTW friendly) that reports its size on failure.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace sfft {

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
    ptr_ = static_cast<T *>(std::aligned_alloc(64, bytes));
    if (ptr_ == nullptr) fail(SFFT_ERROR_OUT_OF_MEMORY, "host allocation of ", bytes, " bytes failed");
    count_ = count;
  }
  T *get() const noexcept { return ptr_; }
  T &operator[](std::size_t i) const noexcept { return ptr_[i]; }
  std::size_t size() const noexcept { return count_; }

 private:
  T *ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Grows a std::vector workspace to n elements (resize) or n elements of capacity (reserve), reporting
// SFFT_ERROR_OUT_OF_MEMORY with the byte count when the memory is not there: std::vector's own failure
// carries no size, and under sanitizer runtimes it aborts instead of throwing. The probe is a plain
// malloc of the same size, released before the vector allocates.
template <class T>
void probe_host_allocation(std::size_t n, const char *what) {
  if (n > static_cast<std::size_t>(-1) / sizeof(T))
    fail(SFFT_ERROR_OUT_OF_MEMORY, what, ": ", n, " elements of ", sizeof(T), " bytes overflow the address space");
  std::size_t bytes = n * sizeof(T);
  void *probe = std::malloc(bytes == 0 ? 1 : bytes);
  if (probe == nullptr) fail(SFFT_ERROR_OUT_OF_MEMORY, what, ": host allocation of ", bytes, " bytes failed");
  std::free(probe);
}

template <class T>
void resize_or_fail(std::vector<T> &v, std::size_t n, const char *what) {
  if (n > v.capacity()) probe_host_allocation<T>(n, what);
  v.resize(n);
}

template <class T>
void reserve_or_fail(std::vector<T> &v, std::size_t n, const char *what) {
  if (n > v.capacity()) probe_host_allocation<T>(n, what);
  v.reserve(n);
}

}  // namespace sfft
