// SPDX-License-Identifier: Apache-2.0
#include "common/kept_scratch.hpp"

#include <atomic>
#include <memory>

namespace sfft {
namespace {

// The waiting block. Freed at exit, so that leak checkers see no block of ours left.
struct Slot {
  std::atomic<HostBuffer<unsigned char> *> block{nullptr};
  ~Slot() { delete block.exchange(nullptr); }
};
Slot slot;

}  // namespace

KeptScratch::KeptScratch(std::size_t bytes) {
  std::unique_ptr<HostBuffer<unsigned char>> waiting(slot.block.exchange(nullptr));
  if (waiting != nullptr && waiting->size() >= bytes) {
    block_ = waiting.release();
    return;
  }
  waiting.reset();  // too small: freed before the new one is mapped
  auto fresh = std::make_unique<HostBuffer<unsigned char>>(bytes == 0 ? 1 : bytes);
  block_ = fresh.release();
}

KeptScratch::~KeptScratch() {
  if (block_->size() > kKeptScratchBytes) {
    delete block_;
    return;
  }
  delete slot.block.exchange(block_);
}

}  // namespace sfft
