// The one door from C into C++: every exported function body runs inside sfft::capi::guarded(),
// which clears/sets the thread-local last error and turns every exception into an sfft_status.
#pragma once

#include <mutex>
#include <new>
#include <unordered_set>

#include "common/error.hpp"

namespace sfft::capi {

void clear_last_error() noexcept;
void set_last_error(const char *function, const char *detail) noexcept;

template <class Body>
sfft_status guarded(const char *function, Body &&body) noexcept {
  clear_last_error();
  try {
    body();
    return SFFT_SUCCESS;
  } catch (const Error &e) {
    set_last_error(function, e.what());
    return e.status();
  } catch (const std::bad_alloc &) {
    set_last_error(function, "host memory allocation failed");
    return SFFT_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    set_last_error(function, e.what());
    return SFFT_ERROR_INTERNAL;
  } catch (...) {
    set_last_error(function, "unknown exception");
    return SFFT_ERROR_INTERNAL;
  }
}

// Live handles of one family. Checking membership before use turns a destroyed, foreign or garbage
// handle into SFFT_ERROR_INVALID_ARGUMENT instead of a wild dereference.
template <class Handle>
class HandleRegistry {
 public:
  void add(Handle h) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(h);
  }
  // Removes h; false if it was not live.
  bool remove(Handle h) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.erase(h) != 0;
  }
  void require_live(Handle h, const char *what) {
    require(h != nullptr, what, " is NULL");
    std::lock_guard<std::mutex> lock(mutex_);
    require(live_.count(h) != 0, what, " is not a live handle (destroyed, or never created)");
  }

 private:
  std::mutex mutex_;
  std::unordered_set<Handle> live_;
};

}  // namespace sfft::capi
