// SPDX-License-Identifier: Apache-2.0
// Host and callback outputs of the CUDA engine: the DIRECT tiles are folded into device staging and copied
// to pinned host buffers on a second stream, double-buffered, so the device-to-host traffic of one tile
// overlaps the compute of the next; a whole spectrum in the workspace goes out in pinned chunks.
#include <algorithm>

#include "spfft2d/cuda/engine.cuh"

namespace sfft::spfft2d::gpu {

// Rows [lo, hi) of a whole spectrum in the workspace to the sink: device arrays asynchronously on the
// plan's stream, host arrays and callbacks synchronously (callbacks through the pinned buffers).
template <class Real>
void CudaEngine<Real>::deliver_whole(const C *b, uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) {
  const uint64_t W = layout_.width;
  if (sink.callback == nullptr) {
    SFFT_CUDA_CHECK(cudaMemcpyAsync(sink.out, b + lo * W, (hi - lo) * W * sizeof(C),
                                    out_on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost, stream_));
    if (!out_on_device) SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  ensure_pinned();
  const uint64_t chunk = std::max<uint64_t>(1, pinned_[0].size() / W);
  for (uint64_t r = lo; r < hi; r += chunk) {
    const uint64_t n = std::min(chunk, hi - r);
    SFFT_CUDA_CHECK(cudaMemcpyAsync(pinned_[0].get(), b + r * W, n * W * sizeof(C), cudaMemcpyDeviceToHost, stream_));
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    sink.callback(r, n, pinned_[0].get(), sink.user);
  }
}

template <class Real>
void CudaEngine<Real>::stream_to_host(uint64_t lo, uint64_t hi, const Sink &sink) {
  ensure_pinned();
  Pending pending[2];
  int slot = 0;
  const uint64_t W = layout_.width;
  const Layout &lay = tiled_.layout;
  lay.for_each_tile(lo, hi, [&](uint64_t k) {
    compute_tile(tiled_, k);
    Pending p{true, lay.direct_block(k, lo, hi), lay.mirror_block(k, lo, hi)};
    // staging_[slot] is free once the copy of two tiles ago has left it.
    SFFT_CUDA_CHECK(cudaStreamWaitEvent(stream_, copied_[slot]->get(), 0));
    fold(tiled_, p.direct, k, false, staging_[slot].get(), p.direct.first);
    fold(tiled_, p.mirror, k, true, staging_[slot].get() + p.direct.count * W, p.mirror.first);
    SFFT_CUDA_CHECK(cudaEventRecord(folded_[slot]->get(), stream_));
    // pinned_[slot] is free once the host has delivered the tile of two iterations ago.
    if (pending[slot].valid) deliver(pending[slot], slot, sink);
    SFFT_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_->get(), folded_[slot]->get(), 0));
    SFFT_CUDA_CHECK(cudaMemcpyAsync(pinned_[slot].get(), staging_[slot].get(),
                                    (p.direct.count + p.mirror.count) * W * sizeof(C), cudaMemcpyDeviceToHost,
                                    copy_stream_->get()));
    SFFT_CUDA_CHECK(cudaEventRecord(copied_[slot]->get(), copy_stream_->get()));
    pending[slot] = p;
    slot ^= 1;
  });
  for (int i = 0; i < 2; ++i, slot ^= 1)
    if (pending[slot].valid) deliver(pending[slot], slot, sink);
}

template <class Real>
void CudaEngine<Real>::ensure_pinned() {
  for (PinnedBuffer<C> &buffer : pinned_)
    if (buffer.size() != pinned_count_) buffer.allocate(pinned_count_);
}

// Waits for the copy into pinned_[slot] and hands its blocks to the sink.
template <class Real>
void CudaEngine<Real>::deliver(Pending &p, int slot, const Sink &sink) {
  SFFT_CUDA_CHECK(cudaEventSynchronize(copied_[slot]->get()));
  p.valid = false;
  const uint64_t W = layout_.width;
  const C *src = pinned_[slot].get();
  const Layout::Block blocks[2] = {p.direct, p.mirror};
  for (const Layout::Block &blk : blocks) {
    if (blk.count == 0) continue;
    if (sink.callback)
      sink.callback(blk.first, blk.count, src, sink.user);
    else
      std::copy(src, src + blk.count * W, static_cast<C *>(sink.out) + (blk.first - sink.row0) * W);
    src += blk.count * W;
  }
}

template class CudaEngine<float>;
template class CudaEngine<double>;

}  // namespace sfft::spfft2d::gpu
