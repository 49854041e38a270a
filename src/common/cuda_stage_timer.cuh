// SPDX-License-Identifier: Apache-2.0
// Stage times of one call, for the families' profiling switches (SFFT_NUFFT3_STAGE_TIMES,
// SFFT_SPARSE_STAGE_TIMES): a cudaEvent after each stage, one line to stderr at the end. Host-side work between
// stages (layouts, planning) shows in the next stage's time when the GPU is idle then.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace sfft::cuda {

class StageTimer {
 public:
  StageTimer() = default;
  ~StageTimer();
  StageTimer(const StageTimer &) = delete;
  StageTimer &operator=(const StageTimer &) = delete;

  // Starts a call: its first event. The events are kept for the next calls.
  void begin(cudaStream_t stream);
  // The end of stage `name`.
  void mark(std::string name, cudaStream_t stream);
  // Waits for the last event, then prints "<header> <stage> <ms> ... | total <ms>" to stderr.
  void report(const std::string &header) const;
  // Waits for the last event; the milliseconds from the first to it.
  double total_ms() const;

 private:
  std::vector<cudaEvent_t> events_;
  std::vector<std::string> names_;
  std::size_t used_ = 0;
};

}  // namespace sfft::cuda
