// SPDX-License-Identifier: Apache-2.0
// Host scratch of a plan-less call (fftshift_nd in place) that outlives the call: a freshly allocated block is
// mapped page by page as the call first writes it, which cost as much as the call's own copies. The last block
// given back, if at most kKeptScratchBytes, waits in one process-wide slot for the next call (lock-free, so a
// forked child never waits on a lock its parent held).
#pragma once

#include <cstddef>

#include "common/host_buffer.hpp"

namespace sfft {

// The most a waiting block keeps mapped between calls (the CUDA backend's temporary pool keeps as much).
inline constexpr std::size_t kKeptScratchBytes = std::size_t{64} << 20;

class KeptScratch {
 public:
  // At least `bytes`: the waiting block where it is large enough, else a new one (the waiting one is freed).
  explicit KeptScratch(std::size_t bytes);
  // Back into the slot (a block already waiting there, from a concurrent call, is freed), or freed when larger
  // than kKeptScratchBytes.
  ~KeptScratch();
  KeptScratch(const KeptScratch &) = delete;
  KeptScratch &operator=(const KeptScratch &) = delete;

  unsigned char *get() const noexcept { return block_->get(); }

 private:
  HostBuffer<unsigned char> *block_ = nullptr;
};

}  // namespace sfft
