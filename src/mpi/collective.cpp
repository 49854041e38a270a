// SPDX-License-Identifier: Apache-2.0
#include "mpi/collective.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace sfft::mpi {

void check_mpi(int rc, const char *call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  fail(SFFT_ERROR_INTERNAL, call, " failed: ", std::string(text, static_cast<std::size_t>(length)));
}

void require_usable(MPI_Comm comm, const char *what) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  require(initialized && !finalized, "MPI is ", finalized ? "finalized" : "not initialized",
          " (libsfft_mpi runs between the caller's MPI_Init and MPI_Finalize)");
  require(comm != MPI_COMM_NULL, what, " is MPI_COMM_NULL");
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  require(!inter, what, " is an inter-communicator (libsfft_mpi needs an intra-communicator)");
}

Comm::Comm(MPI_Comm caller) {
  check_mpi(MPI_Comm_dup(caller, &comm_), "MPI_Comm_dup");
  int rc = MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(comm_, &rank_);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm_, &size_);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm_);
    check_mpi(rc, "MPI_Comm_set_errhandler / MPI_Comm_rank / MPI_Comm_size");
  }
}

Comm::~Comm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::vector<uint64_t> agree(const Comm &comm, const Contribution &mine) {
  // Per rank: status, the global fields, the local fields.
  const std::size_t stride = 1 + mine.global.size() + mine.local.size();
  std::vector<uint64_t> word(stride);
  word[0] = static_cast<uint64_t>(mine.status);
  std::copy(mine.global.begin(), mine.global.end(), word.begin() + 1);
  std::copy(mine.local.begin(), mine.local.end(), word.begin() + 1 + static_cast<long>(mine.global.size()));
  std::vector<uint64_t> all(stride * static_cast<std::size_t>(comm.size()));
  check_mpi(MPI_Allgather(word.data(), static_cast<int>(stride), MPI_UINT64_T, all.data(), static_cast<int>(stride),
                          MPI_UINT64_T, comm.get()),
            "MPI_Allgather");
  if (mine.status != SFFT_SUCCESS) throw Error(mine.status, mine.detail);
  for (int r = 0; r < comm.size(); ++r) {
    const uint64_t status = all[static_cast<std::size_t>(r) * stride];
    if (status != SFFT_SUCCESS)
      fail(static_cast<sfft_status>(status), "rank ", r, " refused its arguments (its sfft_mpi_last_error names ",
           "which); no rank ran the call");
  }
  for (std::size_t f = 0; f < mine.global.size(); ++f)
    for (int r = 1; r < comm.size(); ++r) {
      const uint64_t first = all[1 + f], other = all[static_cast<std::size_t>(r) * stride + 1 + f];
      if (other != first)
        fail(SFFT_ERROR_INVALID_ARGUMENT, mine.names[f], " differs across ranks: rank 0 passed ", first, ", rank ", r,
             " passed ", other, " (every rank must pass the same value)");
    }
  std::vector<uint64_t> locals;
  locals.reserve(mine.local.size() * static_cast<std::size_t>(comm.size()));
  for (int r = 0; r < comm.size(); ++r) {
    auto begin = all.begin() + static_cast<long>(static_cast<std::size_t>(r) * stride + 1 + mine.global.size());
    locals.insert(locals.end(), begin, begin + static_cast<long>(mine.local.size()));
  }
  return locals;
}

void require_tiling(const std::vector<uint64_t> &blocks, std::size_t stride, std::size_t field, uint64_t n,
                    const char *unit) {
  uint64_t end = 0;
  const std::size_t ranks = blocks.size() / stride;
  for (std::size_t r = 0; r < ranks; ++r) {
    const uint64_t offset = blocks[r * stride + field], length = blocks[r * stride + field + 1];
    require(offset == end, "the blocks do not tile [0, ", n, ") in rank order: rank ", r, "'s block starts at ", offset,
            " but the blocks of the ranks before it end at ", end);
    require(length <= n - end, "the blocks do not tile [0, ", n, "): rank ", r, "'s block [", offset, ", ",
            offset + length, ") ends past ", n, " ", unit);
    end += length;
  }
  require(end == n, "the blocks do not tile [0, ", n, "): together they hold ", end, " ", unit);
}

void sum_identical(const Comm &comm, void *values, std::size_t count, bool double_precision) {
  const MPI_Datatype type = double_precision ? MPI_DOUBLE : MPI_FLOAT;
  const std::size_t real_size = double_precision ? sizeof(double) : sizeof(float);
  const auto ranks = static_cast<std::size_t>(comm.size());
  const auto rank = static_cast<std::size_t>(comm.rank());
  const std::size_t reals = 2 * count;
  auto *bytes = static_cast<unsigned char *>(values);
  std::vector<int> counts(ranks), displs(ranks);
  // MPI counts are ints: chunks of at most 2^30 reals.
  constexpr std::size_t kChunk = std::size_t{1} << 30;
  for (std::size_t done = 0; done < reals; done += kChunk) {
    const std::size_t chunk = std::min(kChunk, reals - done);
    for (std::size_t r = 0, at = 0; r < ranks; ++r) {
      const std::size_t slice = chunk / ranks + (r < chunk % ranks ? 1 : 0);
      counts[r] = static_cast<int>(slice);
      displs[r] = static_cast<int>(at);
      at += slice;
    }
    unsigned char *at = bytes + done * real_size;
    // In place, MPI_Reduce_scatter leaves this rank's summed slice at the start of the buffer; MPI_Allgatherv
    // in place expects it at the slice's own place.
    check_mpi(MPI_Reduce_scatter(MPI_IN_PLACE, at, counts.data(), type, MPI_SUM, comm.get()), "MPI_Reduce_scatter");
    if (displs[rank] != 0)
      std::memmove(at + static_cast<std::size_t>(displs[rank]) * real_size, at,
                   static_cast<std::size_t>(counts[rank]) * real_size);
    check_mpi(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, at, counts.data(), displs.data(), type, comm.get()),
              "MPI_Allgatherv");
  }
}

bool true_on_every_rank(const Comm &comm, bool mine) {
  int everywhere = mine ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_LAND, comm.get()), "MPI_Allreduce");
  return everywhere != 0;
}

void copy_from_rank0(const Comm &comm, void *data, std::size_t bytes) {
  auto *at = static_cast<unsigned char *>(data);
  constexpr std::size_t kChunk = std::size_t{1} << 30;  // MPI counts are ints
  for (std::size_t done = 0; done < bytes; done += kChunk)
    check_mpi(MPI_Bcast(at + done, static_cast<int>(std::min(kChunk, bytes - done)), MPI_BYTE, 0, comm.get()),
              "MPI_Bcast");
}

std::vector<std::vector<unsigned char>> gather_blobs(const Comm &comm, const std::vector<unsigned char> &mine) {
  constexpr std::size_t kRecord = sizeof(uint64_t) + kMaxBlob;  // length, then the bytes
  std::vector<unsigned char> record(kRecord, 0);
  const uint64_t length = mine.size() <= kMaxBlob ? mine.size() : 0;
  std::memcpy(record.data(), &length, sizeof length);
  std::memcpy(record.data() + sizeof length, mine.data(), length);
  std::vector<unsigned char> all(kRecord * static_cast<std::size_t>(comm.size()));
  check_mpi(MPI_Allgather(record.data(), static_cast<int>(kRecord), MPI_BYTE, all.data(), static_cast<int>(kRecord),
                          MPI_BYTE, comm.get()),
            "MPI_Allgather");
  std::vector<std::vector<unsigned char>> blobs(static_cast<std::size_t>(comm.size()));
  for (std::size_t r = 0; r < blobs.size(); ++r) {
    const unsigned char *at = all.data() + r * kRecord;
    uint64_t n = 0;
    std::memcpy(&n, at, sizeof n);
    blobs[r].assign(at + sizeof n, at + sizeof n + std::min<uint64_t>(n, kMaxBlob));
  }
  return blobs;
}

bool on_one_node(const Comm &comm) {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int node_size = 0;
  const int rc = MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  check_mpi(rc, "MPI_Comm_size");
  return true_on_every_rank(comm, node_size == comm.size());
}

}  // namespace sfft::mpi
