// SPDX-License-Identifier: Apache-2.0
// The sparse FFT plan the C API drives (capi/sparse_api.cpp forwards each call here in one line): it owns the
// backend choice, the engines and the AUTO policy (EXACT first, ROBUST when EXACT leaves energy unexplained).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "common/backend.hpp"
#include "common/options.hpp"
#include "sfft/sfft.h"
#include "sparse/plan.hpp"

namespace sfft::sparse {

class Plan {
 public:
  // dtype by reference: an out-of-range value from C is read as an int (common/dtype.hpp), never loaded as the enum.
  Plan(uint64_t n, uint64_t k, const sfft_dtype &dtype, const sfft_options *opts, const sfft_sparse_options *knobs);
  // sfft_exec: count holds the capacity in and the number found out (sfft.h).
  void exec(const void *x, uint64_t *freqs, void *values, uint64_t *count);
  // sfft_exec_batch: `batch` signals x + i x_dist, outputs at freqs/values + i out_dist, counts[i] capacity in
  // and number found out (sfft.h). batch >= 1 and the pointers' NULL-ness are checked by the caller.
  void exec_batch(uint64_t batch, const void *x, uint64_t x_dist, uint64_t *freqs, void *values, uint64_t out_dist,
                  uint64_t *counts);
  // sfft_get_report: the report of signal `signal` of the last exec (sfft_exec: signal 0).
  sfft_report report(uint64_t signal) const;

 private:
  // One signal's engines: `engine` runs the variant asked for (AUTO: the ROBUST fallback); `exact_first` is
  // AUTO's EXACT attempt, kept when it explains the signal.
  struct Engines {
    std::unique_ptr<Engine> engine, exact_first;
  };
  Engines make_engines(const Options &o) const;
  // One signal through `e` with the AUTO policy; returns the number found (outputs written only if it fits)
  // and sets `report` to the report of the engine whose result that is.
  std::size_t run(Engines &e, const void *x, uint64_t *freqs, void *values, std::size_t capacity,
                  Report &report) const;
  // The batch workspace for `batch` signals (sfft.h's growth rule: kept for later calls, grown only when a
  // call needs more). CPU: one single-threaded engine pair per worker thread, min(threads, batch) of them.
  // CUDA, EXACT and AUTO: an engine whose kernels run up to kCudaBatchSignals signals at once.
  void reserve_batch(std::size_t batch);
  // CUDA: the signals through batch_engine_, kCudaBatchSignals at a time, with AUTO's policy per signal
  // (unresolved signals again through the ROBUST engine); false when the engine declines the design.
  bool run_cuda_batch(std::size_t signals, const unsigned char *x, std::size_t x_dist, uint64_t *freqs,
                      unsigned char *values, std::size_t out_dist, const uint64_t *counts);

  uint64_t k_ = 0;
  bool double_ = true;
  Backend backend_ = Backend::Cpu;
  Options opts_;
  Design design_;
  std::unique_ptr<Design> exact_design_;  // AUTO only
  Engines main_;
  // Batch workspace (reserve_batch).
  std::vector<Engines> workers_;
  std::vector<std::exception_ptr> worker_failure_;  // per worker: its first failure in the current batch
  std::vector<std::size_t> worker_failed_at_;       // and the signal it failed on
  std::vector<uint64_t> batch_found_;               // per signal: the number found, published into counts[] at the end
  std::vector<Report> reports_;                     // per signal of the last exec (reserve_batch grows it)
  std::size_t reported_ = 0;                        // signals of the last exec that completed (0: none yet)
  std::unique_ptr<Engine> batch_engine_;            // CUDA (EXACT, or AUTO's EXACT stage)
  std::size_t batch_engine_signals_ = 0;            // its capacity
  bool batch_engine_declined_ = false;              // the design has no batched CUDA form: signals run in turn
  std::vector<uint64_t> batch_capacities_;
  std::vector<std::size_t> batch_unresolved_;
};

}  // namespace sfft::sparse
