// SPDX-License-Identifier: Apache-2.0
// The one door from C into C++: every exported function body runs inside sfft::capi::guarded(),
// which clears/sets the thread-local last error and turns every exception into an sfft_status.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

#include "common/error.hpp"

namespace sfft::capi {

void clear_last_error() noexcept;
void set_last_error(const char *function, const char *detail) noexcept;
// The calling thread's detail of its last failed call ("" after a success). Defined in capi/last_error.cpp,
// which each shared library compiles in, so libsfft and libsfft_mpi keep separate details.
const char *last_error_message() noexcept;

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

// Process-wide source of handle numbers: 64 bits never wrap, so no number is issued twice.
inline uint64_t next_handle_number() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

// The lock of every family's registry. It is held across fork() (pthread_atfork), so a child forked while
// another thread was inside a registry call does not inherit it locked and hang in its first call.
inline std::mutex &registry_mutex() {
  static std::mutex mutex;
  static const bool held_across_fork = [] {
    return pthread_atfork([] { registry_mutex().lock(); }, [] { registry_mutex().unlock(); },
                          [] { registry_mutex().unlock(); }) == 0;
  }();
  (void)held_across_fork;
  return mutex;
}

// Live plans of one family behind opaque handles. A handle is a number from next_handle_number() with the
// top bit set, never the plan's address: a destroyed handle stays dead when the allocator gives its memory
// to a new plan, a handle of one family is unknown to the others, and no handle equals a small or garbage
// pointer value. Every call on a plan holds it through a Lease; a call that finds its plan held (from inside
// one of the plan's own callbacks, or from a second thread) is refused, and so is destroying a held plan.
template <class Handle, class Plan>
class HandleRegistry {
  static_assert(sizeof(std::uintptr_t) >= sizeof(uint64_t), "handle numbers need 64-bit pointers");
  static constexpr std::uintptr_t kTag = ~(~std::uintptr_t{0} >> 1);
  struct Entry {
    std::unique_ptr<Plan> plan;
    bool busy = false;
  };

 public:
  // Holds a live plan for the duration of one call.
  class Lease {
   public:
    Lease(HandleRegistry &registry, std::uintptr_t key, Plan &plan) : registry_(registry), key_(key), plan_(plan) {}
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    ~Lease() { registry_.release(key_); }
    Plan *operator->() const { return &plan_; }
    Plan &operator*() const { return plan_; }

   private:
    HandleRegistry &registry_;
    std::uintptr_t key_;
    Plan &plan_;
  };

  // Takes ownership of plan and returns its new handle.
  Handle add(std::unique_ptr<Plan> plan) {
    const std::uintptr_t key = kTag | static_cast<std::uintptr_t>(next_handle_number());
    std::lock_guard<std::mutex> lock(registry_mutex());
    live_.emplace(key, Entry{std::move(plan), false});
    return reinterpret_cast<Handle>(key);
  }

  Lease acquire(Handle h, const char *what) {
    require(h != nullptr, what, " is NULL");
    std::lock_guard<std::mutex> lock(registry_mutex());
    Entry &e = find(h, what);
    e.busy = true;
    return Lease(*this, reinterpret_cast<std::uintptr_t>(h), *e.plan);
  }

  // Frees the plan of h; NULL is a no-op.
  void destroy(Handle h, const char *what) {
    if (h == nullptr) return;
    std::unique_ptr<Plan> doomed;
    {
      std::lock_guard<std::mutex> lock(registry_mutex());
      doomed = std::move(find(h, what).plan);
      live_.erase(reinterpret_cast<std::uintptr_t>(h));
    }
  }

 private:
  Entry &find(Handle h, const char *what) {
    auto it = live_.find(reinterpret_cast<std::uintptr_t>(h));
    require(it != live_.end(), what, " is not a live handle (destroyed, or never created)");
    require(!it->second.busy, what,
            " is in use by another call (a call from inside one of its own callbacks, or from a second thread)");
    return it->second;
  }
  void release(std::uintptr_t key) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    live_.find(key)->second.busy = false;
  }

  std::unordered_map<std::uintptr_t, Entry> live_;
};

}  // namespace sfft::capi
