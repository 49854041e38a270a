// SPDX-License-Identifier: Apache-2.0
// What every collective call of libsfft_mpi shares: the checks of the caller's communicator, the agreement
// step that turns a bad or mismatched argument on any rank into an error on every rank, and the reduction
// whose result is bit-identical on every rank.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace sfft::mpi {

// Throws SFFT_ERROR_INTERNAL naming the MPI call and MPI's error string when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char *call);

// Throws SFFT_ERROR_INVALID_ARGUMENT unless MPI is initialised and not finalised and comm is an
// intra-communicator (no collective can report these: only the ranks that pass such a comm learn of it).
void require_usable(MPI_Comm comm, const char *what);

// A duplicate of the caller's communicator with MPI_ERRORS_RETURN, so that MPI failures inside the library
// come back as statuses; freed on destruction.
class Comm {
 public:
  explicit Comm(MPI_Comm caller);
  Comm(const Comm &) = delete;
  Comm &operator=(const Comm &) = delete;
  ~Comm();
  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

// One rank's contribution to an agreement: the arguments that must be equal on every rank (with their
// names, for the message), the per-rank values the caller wants to see from every rank (block offsets and
// lengths), and whether this rank's local validation failed (status and detail).
struct Contribution {
  std::vector<const char *> names;
  std::vector<uint64_t> global;
  std::vector<uint64_t> local;
  sfft_status status = SFFT_SUCCESS;
  std::string detail;
};

// Collective (one MPI_Allgather of a few words per rank). Throws on every rank when any rank's validation
// failed (that rank rethrows its own detail, the others name it) or a global argument differs between ranks
// (naming the argument, rank 0's value and the first differing rank's). Returns every rank's local values,
// rank-major (local.size() per rank).
std::vector<uint64_t> agree(const Comm &comm, const Contribution &mine);

// Runs validate(); an sfft::Error it throws becomes mine.status / mine.detail instead of leaving this rank
// before the agreement (which would leave the other ranks waiting in it).
template <class Validate>
void validate_into(Contribution &mine, Validate &&validate) {
  try {
    validate();
  } catch (const Error &e) {
    mine.status = e.status();
    mine.detail = e.what();
  }
}

// Throws SFFT_ERROR_INVALID_ARGUMENT unless the blocks (offset, length) of ranks 0..size-1, rank-major in
// `blocks` as agree() returns them (offset at field, length at field + 1 of each rank's stride), tile
// [0, n) in rank order. `unit` names what is counted ("samples", "rows").
void require_tiling(const std::vector<uint64_t> &blocks, std::size_t stride, std::size_t field, uint64_t n,
                    const char *unit);

// Collective: replaces count complex values (float or double pairs) by their sum over the ranks, the same
// bits on every rank: each rank sums one slice (MPI_Reduce_scatter) and the slices are gathered
// (MPI_Allgatherv), so every value is summed in one place. MPI_Allreduce may combine in a different order on
// different ranks, and ranks that decoded different buckets would return different results; a reduction to
// one rank and a broadcast gives the same bits but moves all the data through that rank twice.
void sum_identical(const Comm &comm, void *values, std::size_t count, bool double_precision);

// Collective: true on every rank when `mine` is true on every rank (an integer reduction: exact everywhere).
bool true_on_every_rank(const Comm &comm, bool mine);

// Collective: rank 0's `bytes` bytes at `data` replace every other rank's.
void copy_from_rank0(const Comm &comm, void *data, std::size_t bytes);

// Collective: every rank's `mine` (at most kMaxBlob bytes; a longer one arrives empty), in rank order.
constexpr std::size_t kMaxBlob = 248;
std::vector<std::vector<unsigned char>> gather_blobs(const Comm &comm, const std::vector<unsigned char> &mine);

// Collective: true when every rank of comm runs on this node (MPI_COMM_TYPE_SHARED).
bool on_one_node(const Comm &comm);

}  // namespace sfft::mpi
