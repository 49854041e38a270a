// SPDX-License-Identifier: Apache-2.0
// The distributed sparse FFT: each rank folds its block of the signal with the sparse FFT's engine
// (sparse/plan.hpp's Engine::run_block), the folds are summed over the ranks, and every rank decodes the
// same buckets. The plan behind an sfft_mpi_plan handle.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/backend.hpp"
#include "common/host_buffer.hpp"
#include "mpi/collective.hpp"
#include "sfft/sfft_mpi.h"
#include "sparse/plan.hpp"

namespace sfft::mpi {

class SparsePlan {
 public:
  // Collective over comm. local_checks: the C entry point's own argument checks, run where a failure still
  // reaches the other ranks through the agreement.
  SparsePlan(uint64_t n, uint64_t k, uint64_t local_offset, uint64_t local_length, const sfft_dtype &dtype,
             const sfft_options *opts, const sfft_sparse_options *knobs, MPI_Comm comm,
             const std::function<void()> &local_checks);
  // Collective over the plan's communicator.
  void exec(const void *x_local, uint64_t *freqs, void *values, uint64_t *count, int root);

 private:
  // Collective: where every rank's engine can open every other rank's fold buffer (CUDA plans on one node),
  // they do, and exec sums the folds on the GPUs instead of through host memory.
  void share_folds(sparse::Engine &engine);

  std::unique_ptr<Comm> comm_;
  uint64_t k_ = 0, offset_ = 0, length_ = 0;
  bool double_precision_ = false;
  Backend backend_ = Backend::Cpu;
  int device_ = 0;                               // opts->device: where a CUDA plan's kernels read x_local
  std::unique_ptr<sparse::Engine> engine_;       // ROBUST or EXACT as asked; AUTO: the ROBUST fallback
  std::unique_ptr<sparse::Engine> exact_first_;  // AUTO: tried first, kept when it explains the signal
  // Every rank decodes into result_ (capacity k) and copies out: the engines' calls, which are collective,
  // then never depend on a rank's own capacity. Layout: the count, k frequencies, k values, so that one
  // broadcast of it gives every rank rank 0's coefficients (root = every rank).
  HostVector<uint64_t> result_;
  std::size_t value_size_ = 0;  // bytes per coefficient value
  uint64_t *result_freqs() { return result_.data() + 1; }
  void *result_values() { return result_.data() + 1 + k_; }
};

}  // namespace sfft::mpi
