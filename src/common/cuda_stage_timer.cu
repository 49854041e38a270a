// SPDX-License-Identifier: Apache-2.0
#include "common/cuda_stage_timer.cuh"

#include <cstdio>
#include <utility>

#include "common/cuda_util.cuh"

namespace sfft::cuda {

StageTimer::~StageTimer() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

void StageTimer::begin(cudaStream_t stream) {
  used_ = 0;
  names_.clear();
  mark("", stream);
}

void StageTimer::mark(std::string name, cudaStream_t stream) {
  if (used_ == events_.size()) {
    cudaEvent_t e = nullptr;
    SFFT_CUDA_CHECK(cudaEventCreate(&e));
    events_.push_back(e);
  }
  names_.push_back(std::move(name));
  SFFT_CUDA_CHECK(cudaEventRecord(events_[used_++], stream));
}

void StageTimer::report(const std::string &header) const {
  if (used_ == 0) return;
  SFFT_CUDA_CHECK(cudaEventSynchronize(events_[used_ - 1]));
  std::string line = header;
  float total = 0;
  for (std::size_t i = 1; i < used_; ++i) {
    float ms = 0;
    SFFT_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[i - 1], events_[i]));
    total += ms;
    char item[96];
    std::snprintf(item, sizeof item, " %s %.4f", names_[i].c_str(), static_cast<double>(ms));
    line += item;
  }
  char sum[48];
  std::snprintf(sum, sizeof sum, " | total %.4f\n", static_cast<double>(total));
  std::fputs((line + sum).c_str(), stderr);
}

double StageTimer::total_ms() const {
  if (used_ < 2) return 0;
  SFFT_CUDA_CHECK(cudaEventSynchronize(events_[used_ - 1]));
  float ms = 0;
  SFFT_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[0], events_[used_ - 1]));
  return static_cast<double>(ms);
}

}  // namespace sfft::cuda
