// SPDX-License-Identifier: Apache-2.0
#include "mpi/sparse_plan.hpp"

#include <cstring>

#include "common/backend.hpp"
#include "common/dtype.hpp"
#include "common/options.hpp"

namespace sfft::mpi {

namespace {

uint64_t bits_of(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// The arguments every rank must pass alike, with the names the mismatch message uses.
void describe(Contribution &c, uint64_t n, uint64_t k, const sfft_dtype &dtype, const Options &o, Backend backend,
              const sfft_sparse_options &knobs) {
  c.names = {"n",
             "k",
             "dtype",
             "opts->seed",
             "the backend (opts->backend, AUTO resolved on each rank)",
             "knobs->variant",
             "knobs->filter_tolerance",
             "knobs->bucket_factor",
             "knobs->location_loops",
             "knobs->estimation_loops",
             "knobs->bits_per_stage",
             "knobs->min_votes",
             "knobs->comb_loops",
             "knobs->comb_width",
             "knobs->comb_keep"};
  auto u = [](long long v) { return static_cast<uint64_t>(v); };
  c.global = {n,
              k,
              u(enum_value(dtype)),
              o.seed,
              u(backend == Backend::Cuda),
              u(knobs.variant),
              bits_of(knobs.filter_tolerance),
              bits_of(knobs.bucket_factor),
              u(knobs.location_loops),
              u(knobs.estimation_loops),
              u(knobs.bits_per_stage),
              u(knobs.min_votes),
              u(knobs.comb_loops),
              knobs.comb_width,
              knobs.comb_keep};
}

}  // namespace

SparsePlan::SparsePlan(uint64_t n, uint64_t k, uint64_t local_offset, uint64_t local_length, const sfft_dtype &dtype,
                       const sfft_options *opts, const sfft_sparse_options *knobs, MPI_Comm comm,
                       const std::function<void()> &local_checks)
    : k_(k), offset_(local_offset), length_(local_length) {
  require_usable(comm, "comm");
  comm_ = std::make_unique<Comm>(comm);
  Contribution mine;
  Options o;
  sfft_sparse_options resolved{};
  validate_into(mine, [&] {
    local_checks();
    double_precision_ = require_complex_dtype(dtype, "dtype");
    o = resolve_options(opts);
    resolved = sparse::resolve_knobs(knobs);
    // Every rank must run the same engine: CPU and CUDA decode with different roundings, and ranks that
    // decoded differently could make different collective calls (AUTO's fallback).
    backend_ = resolve_backend(o, {}, "sfft_mpi_create");
    device_ = o.device;
  });
  describe(mine, n, k, dtype, o, backend_, resolved);
  mine.local = {local_offset, local_length};
  const std::vector<uint64_t> blocks = agree(*comm_, mine);
  require_tiling(blocks, 2, 0, n, "samples");

  // From here every rank holds the same arguments: design errors (k > n, ...) are the same on every rank.
  // An allocation can still fail on one rank only: a second agreement makes creation succeed everywhere or
  // nowhere.
  sparse::Design design = sparse::make_design(n, k, double_precision_, resolved, o.seed);
  Contribution built;
  validate_into(built, [&] {
    try {
      engine_ = sparse::make_engine(design, o, backend_, double_precision_);
      if (resolved.variant == SFFT_SPARSE_AUTO)  // the same EXACT stage as sfft_create_ex's AUTO
        exact_first_ = sparse::make_engine(
            sparse::make_design(n, k, double_precision_, sparse::exact_stage_knobs(resolved), o.seed), o, backend_,
            double_precision_);
      value_size_ = 2 * (double_precision_ ? sizeof(double) : sizeof(float));
      result_.resize(1 + k + k * value_size_ / sizeof(uint64_t));  // value_size_: 1 or 2 words
    } catch (const std::bad_alloc &) {
      fail(SFFT_ERROR_OUT_OF_MEMORY, "host memory allocation failed for the plan's workspaces");
    }
  });
  agree(*comm_, built);
  if (backend_ == Backend::Cuda && comm_->size() > 1 && on_one_node(*comm_)) {
    share_folds(*engine_);
    if (exact_first_) share_folds(*exact_first_);
  }
}

void SparsePlan::share_folds(sparse::Engine &engine) {
  const bool opened = engine.open_rank_folds(gather_blobs(*comm_, engine.fold_handle()), comm_->rank());
  // Every rank sums on the devices, or none does: a rank that could not open every buffer (no peer access
  // between two of the GPUs) makes the others close theirs.
  if (!true_on_every_rank(*comm_, opened)) engine.close_rank_folds();
}

void SparsePlan::exec(const void *x_local, uint64_t *freqs, void *values, uint64_t *count, int root) {
  Contribution mine;
  mine.names = {"root"};
  mine.global = {static_cast<uint64_t>(static_cast<int64_t>(root))};
  const bool receives = root == SFFT_MPI_ALL_RANKS || root == comm_->rank();
  uint64_t capacity = 0;
  validate_into(mine, [&] {
    require(root >= SFFT_MPI_ALL_RANKS && root < comm_->size(), "root = ", root, " is neither SFFT_MPI_ALL_RANKS nor ",
            "a rank of the plan's communicator (size ", comm_->size(), ")");
    require(x_local != nullptr || length_ == 0, "x_local is NULL but this rank holds ", length_, " samples");
    if (!receives) return;
    require(count != nullptr, "count (capacity in, number written out) is NULL");
    capacity = *count;
    require(capacity == 0 || (freqs != nullptr && values != nullptr), freqs == nullptr ? "freqs" : "values",
            " is NULL but the capacity *count = ", capacity);
    for (const void *p : {static_cast<const void *>(freqs), static_cast<const void *>(values)})
      require(pointer_kind(p) == PointerKind::Host, p == freqs ? "freqs" : "values",
              " is CUDA device or managed memory: libsfft_mpi returns the coefficients in host memory");
  });
  validate_into(mine, [&] {
    if (mine.status != SFFT_SUCCESS || length_ == 0) return;
    if (backend_ == Backend::Cuda) {
      require_arrays_on_device(device_, {{x_local, "x_local"}});
      return;
    }
    require(pointer_kind(x_local) == PointerKind::Host,
            "x_local is CUDA device or managed memory but the plan runs on the CPU (create it with ",
            "SFFT_BACKEND_CUDA)");
  });
  agree(*comm_, mine);

  sparse::Distribution dist;
  dist.offset = offset_;
  dist.length = length_;
  dist.reduce = [this](void *v, std::size_t c) { sum_identical(*comm_, v, c, double_precision_); };
  dist.barrier = [this] { check_mpi(MPI_Barrier(comm_->get()), "MPI_Barrier"); };
  // Every rank decodes the same sums, but ranks may still round differently (FFTW_MEASURE picks each rank's
  // FFT algorithm by timing; ranks may run on different processors): a decision that leads to collective calls
  // is agreed, and the coefficients every rank returns are rank 0's.
  std::size_t found = 0;
  bool exact_kept = false;
  if (exact_first_) {
    found = exact_first_->run_block(x_local, dist, result_freqs(), result_values(), k_);
    exact_kept = true_on_every_rank(*comm_, exact_first_->unresolved() == 0);
  }
  if (!exact_kept) found = engine_->run_block(x_local, dist, result_freqs(), result_values(), k_);
  if (root == SFFT_MPI_ALL_RANKS && comm_->size() > 1) {
    result_[0] = found;
    copy_from_rank0(*comm_, result_.data(), result_.size() * sizeof(uint64_t));
    found = static_cast<std::size_t>(result_[0]);
  }
  if (!receives) return;
  *count = found;
  if (found > capacity)
    fail(SFFT_ERROR_INVALID_ARGUMENT, "capacity *count = ", capacity, " is smaller than the ", found,
         " coefficients found (a capacity of k = ", k_, " always suffices); *count now holds ", found);
  if (found == 0) return;
  std::memcpy(freqs, result_freqs(), found * sizeof(uint64_t));
  std::memcpy(values, result_values(), found * value_size_);
}

}  // namespace sfft::mpi
