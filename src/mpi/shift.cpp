// SPDX-License-Identifier: Apache-2.0
#include "mpi/shift.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "common/backend.hpp"
#include "common/dtype.hpp"
#include "common/host_buffer.hpp"
#include "common/options.hpp"
#include "mpi/collective.hpp"

namespace sfft::mpi {

namespace {

constexpr int kMaxDims = 8;  // fftshift_nd's limit

// Rows [source, source + rows) of the input go to rows [dest, dest + rows) of the output.
struct Piece {
  uint64_t source, dest, rows;
};

// The rows of the input block [src_start, src_start + src_rows) whose destinations (i + s) mod n0 fall in
// the output block [dst_start, dst_start + dst_rows), by increasing destination. Both ends of a transfer
// compute the same list, so their messages pair up in order (MPI keeps the order of messages between two
// ranks on one tag).
std::vector<Piece> pieces(uint64_t n0, uint64_t s, uint64_t src_start, uint64_t src_rows, uint64_t dst_start,
                          uint64_t dst_rows) {
  std::vector<Piece> out;
  if (src_rows == 0 || dst_rows == 0) return out;
  // The image of the source block is one cyclic range: at most two contiguous ranges of destinations.
  const uint64_t first = (src_start + s) % n0;
  const uint64_t head = std::min(src_rows, n0 - first);
  const Piece images[2] = {{src_start, first, head}, {src_start + head, 0, src_rows - head}};
  for (const Piece &image : images) {
    const uint64_t lo = std::max(image.dest, dst_start), hi = std::min(image.dest + image.rows, dst_start + dst_rows);
    if (lo < hi) out.push_back({image.source + (lo - image.dest), lo, hi - lo});
  }
  std::sort(out.begin(), out.end(), [](const Piece &a, const Piece &b) { return a.dest < b.dest; });
  return out;
}

// Frees a committed datatype on every exit.
struct RowType {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  ~RowType() {
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
};

void run_local_shift(void *out, const void *in, int ndim, const int64_t *shape, uint32_t mask, const sfft_dtype &dtype,
                     const sfft_options *opts, bool inverse) {
  const sfft_status status = inverse ? ifftshift_nd(out, in, ndim, shape, mask, dtype, opts)
                                     : fftshift_nd(out, in, ndim, shape, mask, dtype, opts);
  if (status != SFFT_SUCCESS) fail(status, "the local shift failed: ", sfft_last_error());
}

}  // namespace

void shift_slabs(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows, int64_t local_start,
                 uint32_t axes_mask, const sfft_dtype &dtype, const sfft_options *opts, MPI_Comm caller, bool inverse) {
  require_usable(caller, "comm");
  Comm comm(caller);
  Contribution mine;
  int64_t extents[kMaxDims] = {0};
  uint32_t mask = 0;
  std::size_t element = 0;
  uint64_t row_elements = 1;
  validate_into(mine, [&] {
    require(ndim >= 1 && ndim <= kMaxDims, "ndim = ", ndim, " is outside 1..", kMaxDims);
    require(shape != nullptr, "shape is NULL");
    for (int d = 0; d < ndim; ++d) {
      require(shape[d] >= 0, "shape[", d, "] = ", shape[d], " is negative");
      extents[d] = shape[d];
      if (d > 0) row_elements *= static_cast<uint64_t>(shape[d]);
    }
    require(axes_mask >> ndim == 0, "axes_mask = ", axes_mask, " names an axis beyond ndim = ", ndim);
    mask = axes_mask == 0 ? (1u << ndim) - 1 : axes_mask;
    element = dtype_size(dtype);
    require(local_rows >= 0 && local_start >= 0, "local_rows = ", local_rows, " and local_start = ", local_start,
            " must be >= 0");
    const Options o = resolve_options(opts);
    require(o.backend != SFFT_BACKEND_CUDA, "opts->backend = SFFT_BACKEND_CUDA: libsfft_mpi's shift runs on the CPU ",
            "(host memory)");
    const uint64_t bytes = static_cast<uint64_t>(local_rows) * row_elements * element;
    if (bytes == 0) return;
    require(in != nullptr && out != nullptr, in == nullptr ? "in" : "out", " is NULL but this rank holds ", bytes,
            " bytes");
    const auto *i = static_cast<const unsigned char *>(in);
    const auto *o_ = static_cast<const unsigned char *>(out);
    require(in == out || i + bytes <= o_ || o_ + bytes <= i, "out and in overlap without being equal");
    require(pointer_kind(in) == PointerKind::Host && pointer_kind(out) == PointerKind::Host,
            "in or out is CUDA device or managed memory: libsfft_mpi's shift takes host memory");
  });
  mine.names = {"function (sfft_mpi_fftshift or sfft_mpi_ifftshift)",
                "ndim",
                "dtype",
                "axes_mask",
                "shape[0]",
                "shape[1]",
                "shape[2]",
                "shape[3]",
                "shape[4]",
                "shape[5]",
                "shape[6]",
                "shape[7]"};
  mine.global = {inverse ? 1u : 0u, static_cast<uint64_t>(ndim), static_cast<uint64_t>(enum_value(dtype)), mask};
  for (int64_t e : extents) mine.global.push_back(static_cast<uint64_t>(e));
  mine.local = {static_cast<uint64_t>(local_start), static_cast<uint64_t>(local_rows)};
  const std::vector<uint64_t> blocks = agree(comm, mine);
  const uint64_t n0 = static_cast<uint64_t>(extents[0]);
  require_tiling(blocks, 2, 0, n0, "rows");

  int64_t local_shape[kMaxDims];
  std::copy(extents, extents + kMaxDims, local_shape);
  local_shape[0] = local_rows;
  const uint32_t rest = mask & ~1u;
  const uint64_t row_bytes = row_elements * element;
  if (!(mask & 1u)) {  // axis 0 stays: every rank shifts its own slab
    if (local_rows > 0 && row_bytes > 0) run_local_shift(out, in, ndim, local_shape, rest, dtype, opts, inverse);
    return;
  }
  if (n0 == 0 || row_bytes == 0) return;
  // Same values on every rank, so every rank refuses alike.
  if (row_bytes > static_cast<uint64_t>(INT_MAX) || n0 > static_cast<uint64_t>(INT_MAX))
    fail(SFFT_ERROR_UNSUPPORTED, "rows of ", row_bytes, " bytes or ", n0,
         " rows exceed MPI's int counts (at most 2^31 - 1 of each)");
  const uint64_t s = inverse ? (n0 + 1) / 2 : n0 / 2;
  const uint64_t my_start = static_cast<uint64_t>(local_start), my_rows = static_cast<uint64_t>(local_rows);

  // In place, the received rows land in scratch first: the input rows must stay until they are sent.
  HostVector<unsigned char> scratch;
  if (in == out && my_rows > 0) scratch.resize(my_rows * row_bytes);
  auto *target = in == out ? scratch.data() : static_cast<unsigned char *>(out);
  const auto *source = static_cast<const unsigned char *>(in);

  RowType row;
  check_mpi(MPI_Type_contiguous(static_cast<int>(row_bytes), MPI_BYTE, &row.type), "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&row.type), "MPI_Type_commit");
  constexpr int kTag = 0;
  std::vector<MPI_Request> requests;
  for (int r = 0; r < comm.size(); ++r) {
    if (r == comm.rank()) continue;
    const uint64_t r_start = blocks[2 * static_cast<std::size_t>(r)],
                   r_rows = blocks[2 * static_cast<std::size_t>(r) + 1];
    for (const Piece &p : pieces(n0, s, r_start, r_rows, my_start, my_rows)) {
      requests.emplace_back();
      check_mpi(MPI_Irecv(target + (p.dest - my_start) * row_bytes, static_cast<int>(p.rows), row.type, r, kTag,
                          comm.get(), &requests.back()),
                "MPI_Irecv");
    }
    for (const Piece &p : pieces(n0, s, my_start, my_rows, r_start, r_rows)) {
      requests.emplace_back();
      check_mpi(MPI_Isend(source + (p.source - my_start) * row_bytes, static_cast<int>(p.rows), row.type, r, kTag,
                          comm.get(), &requests.back()),
                "MPI_Isend");
    }
  }
  for (const Piece &p : pieces(n0, s, my_start, my_rows, my_start, my_rows))
    std::memcpy(target + (p.dest - my_start) * row_bytes, source + (p.source - my_start) * row_bytes,
                p.rows * row_bytes);
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  if (my_rows == 0) return;
  if (rest != 0)
    run_local_shift(out, target, ndim, local_shape, rest, dtype, opts, inverse);  // in place when target == out
  else if (target != out)
    std::memcpy(out, target, my_rows * row_bytes);
}

}  // namespace sfft::mpi
