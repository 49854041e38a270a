// SPDX-License-Identifier: Apache-2.0
// The CUDA engine of spfft2d (internal): its state, and which unit defines what. engine.cu: construction, plans
// and workspaces, method choice, the tiles into device memory, the whole-spectrum methods. streaming.cu:
// host and callback outputs. Kernels and their launchers: direct_tiles.cu, bluestein.cu, whole.cu.
#pragma once

#include <memory>

#include "spfft2d/cuda/device.cuh"

namespace sfft::spfft2d::gpu {

using cuda::CufftPlan;
using cuda::DeviceScope;
using cuda::Event;
using cuda::PinnedBuffer;

template <class Real>
class CudaEngine final : public Engine {
 public:
  using C = Cplx<Real>;

  CudaEngine(std::shared_ptr<const SparseColumns> m, const Options &opts);
  ~CudaEngine() override;

  void set_tile_rows(uint64_t tile) override { reconfigure(tile, method_); }
  void set_method(spfft2d_method method) override { reconfigure(requested_tile_, method); }
  spfft2d_method whole_method() const override { return method_ == SPFFT2D_METHOD_AUTO ? whole_auto_ : method_; }
  uint64_t tile_rows() const override { return tiled_.layout.tile; }
  std::size_t workspace_bytes() const override;
  void run(uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) override;

 private:
  // The DIRECT method's buffers for one tile height: tile rows of length row_len_ and their C2C plan on one
  // stream. Whole-spectrum passes with Bluestein put the column sums in `padded`, whose zero padding is
  // written once, and transform out of place into z (rewriting the padding each time cost a third of the
  // sums' writes); memory-bounded tiled passes keep one buffer and rewrite it.
  struct TilePass {
    Layout layout;
    CufftPlan fft;
    std::size_t work = 0;  // cuFFT's work area
    DeviceBuffer<C> z, padded;
  };

  struct Pending {
    bool valid = false;
    Layout::Block direct, mirror;
  };

  static constexpr cufftType kC2C = std::is_same_v<Real, float> ? CUFFT_C2C : CUFFT_Z2Z;
  // Shared memory for the column sums' twiddle tables: 32 KiB leaves room for several blocks per SM (rows up
  // to 2^22 in float, 2^20 in double).
  static constexpr std::size_t kSharedTableBytes = std::size_t{32} << 10;

  void reconfigure(uint64_t tile, spfft2d_method method);
  void configure(uint64_t tile, spfft2d_method method);
  bool bluestein() const { return row_len_ != m_->cols; }
  // Plans a DIRECT pass: tile rows (0: as many as `budget` holds at row_len_ plus extra_row_bytes per row,
  // cuFFT's work area included), its cuFFT plan on the plan's stream and its buffer.
  TilePass make_pass(uint64_t tile, std::size_t budget, std::size_t extra_row_bytes, bool padded_input);
  // cuFFT plans of a whole-spectrum method on a rows x width buffer (DENSE: from dense_real_).
  void plan_whole(spfft2d_method method);
  // AUTO's whole-spectrum method in device memory, planned where it fits (else DIRECT in tiles).
  spfft2d_method plan_auto_whole(spfft2d_method whole, uint64_t tiled_rows);
  static std::size_t work_size(const CufftPlan &plan);
  // cuFFT's time a row (ns) of its batched C2C at the row length on this GPU, or 0 where it cannot be timed.
  double time_row_transform();
  // Tile k of a pass: column sums (chirped and padded for Bluestein), then the row transform.
  void compute_tile(TilePass &p, uint64_t k);
  // The half spectrum into b (rows x width, device) by a whole-spectrum method, on the plan's stream.
  void compute_whole(spfft2d_method method, C *b);
  // Writes output rows blk of tile k of a pass into `base`, whose first row is output row base_row.
  void fold(const TilePass &p, Layout::Block blk, uint64_t k, bool mirrored, C *base, uint64_t base_row);
  void release_workspace();
  // streaming.cu: a whole spectrum in the workspace to host memory or a callback, and the tiles of rows
  // [lo, hi) through the double-buffered pinned copies.
  void deliver_whole(const C *b, uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device);
  void stream_to_host(uint64_t lo, uint64_t hi, const Sink &sink);
  // The pinned buffers of pinned_count_ elements each, allocated by the first call that delivers to the host.
  void ensure_pinned();
  void deliver(Pending &p, int slot, const Sink &sink);

  std::shared_ptr<const SparseColumns> m_;
  int device_;
  cudaStream_t stream_;
  bool stream_ready_ = false;
  Layout layout_;  // tile unset: the geometry the passes share
  DeviceBuffer<int64_t> col_ptr_;
  DeviceBuffer<ColumnEntry<Real>> entries_;  // the nonzeros by column, for the column sums
  DeviceBuffer<int32_t> heavy_col_;          // the columns the column sums give a warp each
  int64_t heavy_limit_ = 0;
  DeviceBuffer<int32_t> row_id_;
  DeviceBuffer<int64_t> row_start_;
  DeviceBuffer<int32_t> row_col_;
  DeviceBuffer<Real> row_weight_;
  DeviceBuffer<C> tw_lo_, tw_hi_, tw_cols_lo_, tw_cols_hi_;
  DeviceBuffer<C> tw_split_;  // the column sums' shared-memory tables (lo then hi), when they fit
  uint32_t tw_split_lo_ = 0;
  unsigned tw_split_bits_ = 0;
  uint64_t row_len_ = 0;            // length of the row FFTs: cols, or the Bluestein length
  DeviceBuffer<C> chirp_, kernel_;  // Bluestein only (cols and row_len_ elements)
  std::unique_ptr<Stream> copy_stream_;
  std::unique_ptr<Event> folded_[2], copied_[2];
  TilePass tiled_;       // tiles of the plan's height: ranges, streams, explicit DIRECT
  TilePass whole_pass_;  // one tile: AUTO's whole spectrum in device memory, when planned
  DeviceBuffer<C> staging_[2];
  // Pinned at the first host delivery, not at planning: cudaMallocHost took 10-46 ms of a 16384^2 plan's
  // creation (H100 host), which plans writing device memory never use.
  PinnedBuffer<C> pinned_[2];
  std::size_t pinned_count_ = 0;
  uint64_t requested_tile_ = 0;  // 0: automatic
  spfft2d_method method_ = SPFFT2D_METHOD_AUTO;
  spfft2d_method whole_auto_ = SPFFT2D_METHOD_DIRECT;
  CufftPlan dense_r2c_, down_columns_;
  // DENSE's real input for the 2-D R2C, out of place: cuFFT's in-place 2-D R2C on padded rows was slower at
  // some smooth sizes (H200, 12000^2: 2.15 ms against 1.82 for the same transform out of place).
  DeviceBuffer<Real> dense_real_;
  DeviceBuffer<uint64_t> dense_at_;  // DENSE: each nonzero's index in its real rows (row order)
  std::size_t whole_work_ = 0;
  DeviceBuffer<C> workspace_;  // rows x width, explicit whole-spectrum methods only
  PrunedPass<Real> pruned_;    // PRUNED's slots and plan, when it is the whole-spectrum method
};

}  // namespace sfft::spfft2d::gpu
