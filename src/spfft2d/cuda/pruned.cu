// SPDX-License-Identifier: Apache-2.0
// The PRUNED method on the GPU (plan.hpp): the spectra of the nonempty rows only, in a compact buffer of K
// rows (slots: the rows an R2C transforms first, then the rows of direct sums), then the column pass into
// the output: direct sums over the K slots when they are few; at power-of-two row counts the four-step FFT
// of four_step.cu, which sums the direct rows itself (only the R2C slots are stored); else the slots
// expanded into their rows (every output written once, empty rows as zeros) for the engine's in-place
// strided C2C down the columns.
#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/checked.hpp"
#include "common/env.hpp"
#include "spfft2d/cuda/device.cuh"

namespace sfft::spfft2d::gpu {
namespace {

// Padded real rows (2W reals) of the R2C slots: real[s][col] = w for every nonzero of slot s; one block per
// slot, its threads over the slot's nonzeros (the rows were zeroed before).
template <class Real>
__global__ void scatter_slots(const int64_t *__restrict__ start, const int32_t *__restrict__ col,
                              const Real *__restrict__ weight, uint64_t slots, uint64_t padded,
                              Real *__restrict__ real) {
  for (uint64_t s = blockIdx.x; s < slots; s += gridDim.x)
    for (int64_t e = start[s] + threadIdx.x; e < start[s + 1]; e += blockDim.x)
      real[s * padded + static_cast<uint64_t>(col[e])] = weight != nullptr ? weight[e] : Real(1);
}

// out[u][v] = S[slot of row u][v], or 0 for an empty row: each output element written once.
template <class Real>
__global__ void expand_slots(const Cplx<Real> *__restrict__ spectra, const int32_t *__restrict__ row_slot, uint64_t R,
                             uint64_t W, Cplx<Real> *__restrict__ out) {
  const uint64_t v = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= W) return;
  for (uint64_t u = blockIdx.y; u < R; u += gridDim.y) {
    const int32_t s = row_slot[u];
    out[u * W + v] = s >= 0 ? spectra[static_cast<uint64_t>(s) * W + v] : Cplx<Real>{Real(0), Real(0)};
  }
}

// out[u][v] = sum_s S[s][v] e^{-2 pi i row_s u / R} over the K slots (few: PrunedShape::direct_columns).
template <class Real>
__global__ void slot_column_sums(const Cplx<Real> *__restrict__ spectra, const int32_t *__restrict__ slot_row,
                                 uint64_t K, DeviceTwiddles<Real> tw, Modulus R, uint64_t W,
                                 Cplx<Real> *__restrict__ out) {
  const uint64_t v = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= W) return;
  for (uint64_t u = blockIdx.y; u < R.n; u += gridDim.y) {
    Cplx<Real> acc{Real(0), Real(0)};
    for (uint64_t s = 0; s < K; ++s) {
      const Cplx<Real> t = tw(R(static_cast<uint64_t>(slot_row[s]) * u));
      const Cplx<Real> x = spectra[s * W + v];
      acc.x = fma(x.x, t.x, fma(-x.y, t.y, acc.x));
      acc.y = fma(x.x, t.y, fma(x.y, t.x, acc.y));
    }
    out[u * W + v] = acc;
  }
}

// The four-step exec's stage times (PrunedPass::stage_times): events at the start, after the R2C rows, between
// the passes and at the end; report synchronises on the last one and prints one line to stderr.
class StageEvents {
 public:
  StageEvents(bool on, cudaStream_t stream) {
    if (!on) return;
    try {
      for (cudaEvent_t &e : events_) SFFT_CUDA_CHECK(cudaEventCreate(&e));
    } catch (...) {
      destroy();
      throw;
    }
    mark(stream);
  }
  ~StageEvents() { destroy(); }
  StageEvents(const StageEvents &) = delete;
  StageEvents &operator=(const StageEvents &) = delete;
  // The next event (nullptr when off), for a launcher to record.
  cudaEvent_t take() { return events_[0] != nullptr ? events_[used_++] : nullptr; }
  void mark(cudaStream_t stream) {
    if (cudaEvent_t e = take()) SFFT_CUDA_CHECK(cudaEventRecord(e, stream));
  }
  void report(uint64_t R, uint64_t C, uint64_t fft_rows, uint64_t direct_nnz) const {
    if (events_[0] == nullptr) return;
    SFFT_CUDA_CHECK(cudaEventSynchronize(events_[3]));
    float ms[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) SFFT_CUDA_CHECK(cudaEventElapsedTime(&ms[i], events_[i], events_[i + 1]));
    std::fprintf(
        stderr,
        "sfft spfft2d four-step stages (%llu x %llu, %llu R2C rows, %llu direct nonzeros, ms): rows %.4f pass1 "
        "%.4f pass2 %.4f\n",
        static_cast<unsigned long long>(R), static_cast<unsigned long long>(C),
        static_cast<unsigned long long>(fft_rows), static_cast<unsigned long long>(direct_nnz),
        static_cast<double>(ms[0]), static_cast<double>(ms[1]), static_cast<double>(ms[2]));
  }

 private:
  void destroy() {
    for (cudaEvent_t &e : events_)
      if (e != nullptr) (void)cudaEventDestroy(e), e = nullptr;
  }
  cudaEvent_t events_[4] = {nullptr, nullptr, nullptr, nullptr};
  int used_ = 0;
};

dim3 rows_grid(uint64_t W, uint64_t R, unsigned block) {
  return dim3(static_cast<unsigned>((W + block - 1) / block), static_cast<unsigned>(std::min<uint64_t>(R, 65535)));
}

}  // namespace

template <class Real>
PrunedPass<Real> make_pruned(const SparseColumns &m, cudaStream_t stream) {
  using C = Cplx<Real>;
  PrunedPass<Real> p;
  const PrunedShape shape = pruned_shape(m, CostBackend::Cuda);
  const uint64_t K = m.row_id.size(), W = m.cols / 2 + 1;
  p.slots = K;
  p.fft_slots = shape.fft_rows;
  p.direct_columns = shape.direct_columns;
  p.four_step = shape.four_step;
  p.four_step_p = shape.four_step_p;
  p.stage_times = p.four_step && env_flag("SFFT_SPFFT2D_STAGE_TIMES");
  // Slots: the R2C rows first (one batched plan over them), then the direct rows, each in row order.
  std::vector<int32_t> slot_row, row_slot(p.direct_columns ? 0 : m.rows, -1), direct_slot;
  std::vector<int64_t> fft_start{0}, direct_start{0};
  std::vector<int32_t> fft_col, direct_col;
  std::vector<Real> fft_weight, direct_weight;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t j = 0; j < K; ++j) {
      if ((shape.fft_row[j] != 0) != (pass == 0)) continue;
      const auto slot = static_cast<int32_t>(slot_row.size());
      slot_row.push_back(m.row_id[j]);
      if (!p.direct_columns) row_slot[static_cast<std::size_t>(m.row_id[j])] = slot;
      auto &col = pass == 0 ? fft_col : direct_col;
      auto &weight = pass == 0 ? fft_weight : direct_weight;
      // The four-step pass reads the direct rows as its own entries (four_step_entries below).
      for (int64_t e = m.row_start[j]; e < m.row_start[j + 1] && (pass == 0 || !p.four_step); ++e) {
        col.push_back(m.row_col[static_cast<std::size_t>(e)]);
        if (!m.binary()) weight.push_back(static_cast<Real>(m.row_weight[static_cast<std::size_t>(e)]));
      }
      (pass == 0 ? fft_start : direct_start).push_back(static_cast<int64_t>(col.size()));
      if (pass == 1) direct_slot.push_back(slot);
    }
  // The four-step pass keeps only the R2C slots' spectra: it sums the direct rows as it reads them.
  p.spectra.allocate(checked_mul(std::max<uint64_t>(p.four_step ? p.fft_slots : K, 1), W, "PRUNED row spectra"));
  p.slot_row = upload(slot_row.data(), slot_row.size());
  if (!p.direct_columns && !p.four_step) p.row_slot = upload(row_slot.data(), row_slot.size());
  p.fft_start = upload(fft_start.data(), fft_start.size());
  p.fft_col = upload(fft_col.data(), fft_col.size());
  p.fft_weight = upload(fft_weight.data(), fft_weight.size());
  // The four-step generation reads the direct rows as entries (single nonzeros and runs with a table).
  const FourStepEntries generation = p.four_step ? four_step_entries(m, shape) : FourStepEntries{};
  if (p.four_step) {
    std::vector<RowEntry<Real>> entries(generation.entry.size());
    const TwiddleMemo<Real> col_twiddle(m.cols, entries.size());
    for (std::size_t e = 0; e < entries.size(); ++e) {
      const FourStepEntries::Entry &g = generation.entry[e];
      entries[e] = RowEntry<Real>{device_value(col_twiddle(static_cast<uint64_t>(g.col))), g.col, g.table,
                                  static_cast<Real>(g.weight)};
    }
    p.entries = upload(entries.data(), entries.size());
    // D_len(v) = sum_{k < len} z^k and the mirror's alternating sum sum_k (-z)^k, z = e^{-2 pi i v / C}, for v < W
    // (-z = e^{-2 pi i (2 v + C) / 2C}), in closed form: the products z^k had taken up to len x W x tables steps.
    const uint64_t S = run_stride(W);
    std::vector<C> runs(checked_mul(2 * generation.run_length.size(), S, "PRUNED run tables"), C{0, 0});
    const uint64_t uses = generation.run_length.size() * W;
    const RunSums sums(m.cols, uses), mirror_sums(2 * m.cols, uses);
    for (std::size_t t = 0; t < generation.run_length.size(); ++t)
      for (uint64_t v = 0; v < W; ++v) {
        const auto len = static_cast<uint64_t>(generation.run_length[t]);
        const std::complex<double> d = sums(len, v), e = mirror_sums(len, 2 * v + m.cols);
        runs[2 * t * S + v] = C{static_cast<Real>(d.real()), static_cast<Real>(d.imag())};
        runs[2 * t * S + S + v] = C{static_cast<Real>(e.real()), static_cast<Real>(e.imag())};
      }
    p.runs = upload(runs.data(), runs.size());
  } else {
    p.direct_start = upload(direct_start.data(), direct_start.size());
    p.direct_slot = upload(direct_slot.data(), direct_slot.size());
    p.direct_col = upload(direct_col.data(), direct_col.size());
    p.direct_weight = upload(direct_weight.data(), direct_weight.size());
  }
  if (p.four_step) {
    // The generation's twiddles e^{-2 pi i m / C} as lo[m & (lo_n - 1)] * hi[m >> bits] for shared memory
    // when both tables fit in kFourStepSplitBytes (lo then hi in one buffer), else the global tables below.
    unsigned bits = 0;
    while ((uint64_t{1} << (2 * bits)) < m.cols) ++bits;
    const uint64_t lo_n = uint64_t{1} << bits, hi_n = (m.cols + lo_n - 1) >> bits;
    if ((lo_n + hi_n) * sizeof(C) <= kFourStepSplitBytes) {
      std::vector<C> split(lo_n + hi_n);
      for (uint64_t j = 0; j < lo_n; ++j) split[j] = device_twiddle<Real>(j, m.cols);
      for (uint64_t q = 0; q < hi_n; ++q) split[lo_n + q] = device_twiddle<Real>(q << bits, m.cols);
      p.tw_cols_split = upload(split.data(), split.size());
      p.split_lo = static_cast<uint32_t>(lo_n);
      p.split_bits = bits;
    }
    // Pass 1's rows: within each block's rows r1 + P r2, by decreasing entries (the R2C rows and empty rows,
    // read or zeroed, last).
    const uint64_t P = p.four_step_p, Q = m.rows / P;
    std::vector<FourStepRow> row_of(m.rows, FourStepRow{0, 0, -1, 0, 0});
    for (uint64_t r = 0; r < m.rows; ++r) {
      const int32_t slot = row_slot[r];
      if (slot < 0) continue;
      if (static_cast<uint64_t>(slot) < p.fft_slots) {
        row_of[r].spectrum = slot;
      } else {
        const std::size_t d = static_cast<std::size_t>(slot) - p.fft_slots;
        row_of[r].begin = generation.start[d];
        row_of[r].count = static_cast<int32_t>(generation.start[d + 1] - generation.start[d]);
        row_of[r].runs = generation.runs[d];
      }
    }
    std::vector<FourStepRow> rows(m.rows);
    for (uint64_t r1 = 0; r1 < P; ++r1) {
      FourStepRow *block = rows.data() + r1 * Q;
      for (uint64_t r2 = 0; r2 < Q; ++r2) {
        block[r2] = row_of[r1 + P * r2];
        block[r2].r2 = static_cast<int32_t>(r2);
      }
      std::stable_sort(block, block + Q, [](const FourStepRow &x, const FourStepRow &y) { return x.count > y.count; });
    }
    p.rows = upload(rows.data(), rows.size());
    // One table of R entries (R <= kFourStepMaxRows): both passes index it directly.
    static_assert(kFourStepMaxRows <= TwiddleTables<Real>::kSingleTableMax);
    auto rows_tw = make_twiddles<Real>(m.rows);
    p.tw_rows_lo = upload(reinterpret_cast<const C *>(rows_tw.lo.data()), rows_tw.lo.size());
  } else if (p.direct_columns) {
    auto rows_tw = make_twiddles<Real>(m.rows);
    p.tw_rows_lo = upload(reinterpret_cast<const C *>(rows_tw.lo.data()), rows_tw.lo.size());
    p.tw_rows_hi = upload(reinterpret_cast<const C *>(rows_tw.hi.data()), rows_tw.hi.size());
  }
  if (!p.four_step || p.tw_cols_split.size() == 0) {
    auto cols_tw = make_twiddles<Real>(m.cols);
    p.tw_cols_lo = upload(reinterpret_cast<const C *>(cols_tw.lo.data()), cols_tw.lo.size());
    p.tw_cols_hi = upload(reinterpret_cast<const C *>(cols_tw.hi.data()), cols_tw.hi.size());
  }
  if (p.fft_slots > 0) {
    // In place in the slots' rows: 2W padded reals in, W complex out (cuFFT's in-place R2C layout).
    long long n = static_cast<long long>(m.cols), in_embed = 2 * static_cast<long long>(W),
              out_embed = static_cast<long long>(W);
    const cufftType r2c = std::is_same_v<Real, float> ? CUFFT_R2C : CUFFT_D2Z;
    p.row_r2c.make_many(1, &n, &in_embed, 1, in_embed, &out_embed, 1, out_embed, r2c,
                        static_cast<long long>(p.fft_slots));
    p.row_r2c.set_stream(stream);
    SFFT_CUFFT_CHECK(cufftGetSize(p.row_r2c.get(), &p.work));
  }
  return p;
}

template <class Real>
std::size_t PrunedPass<Real>::bytes() const {
  return entries.bytes() + tw_cols_split.bytes() + rows.bytes() + runs.bytes() + spectra.bytes() + slot_row.bytes() +
         row_slot.bytes() + fft_start.bytes() + fft_col.bytes() + fft_weight.bytes() + direct_slot.bytes() +
         direct_start.bytes() + direct_col.bytes() + direct_weight.bytes() + tw_cols_lo.bytes() + tw_cols_hi.bytes() +
         tw_rows_lo.bytes() + tw_rows_hi.bytes() + work;
}

template <class Real>
void run_pruned(const PrunedPass<Real> &p, uint64_t R, uint64_t Cn, Cplx<Real> *b, cudaStream_t stream) {
  using C = Cplx<Real>;
  const uint64_t W = Cn / 2 + 1;
  if (p.slots == 0) {
    SFFT_CUDA_CHECK(cudaMemsetAsync(b, 0, R * W * sizeof(C), stream));
    return;
  }
  C *spectra = p.spectra.get();
  StageEvents events(p.stage_times, stream);
  if (p.fft_slots > 0) {
    Real *real = reinterpret_cast<Real *>(spectra);
    SFFT_CUDA_CHECK(cudaMemsetAsync(spectra, 0, p.fft_slots * W * sizeof(C), stream));
    scatter_slots<Real><<<static_cast<unsigned>(std::min<uint64_t>(p.fft_slots, 65535)), 128, 0, stream>>>(
        p.fft_start.get(), p.fft_col.get(), p.fft_weight.size() ? p.fft_weight.get() : nullptr, p.fft_slots, 2 * W,
        real);
    SFFT_CUDA_CHECK_LAUNCH();
    if constexpr (std::is_same_v<Real, float>)
      SFFT_CUFFT_CHECK(cufftExecR2C(p.row_r2c.get(), real, reinterpret_cast<cufftComplex *>(spectra)));
    else
      SFFT_CUFFT_CHECK(cufftExecD2Z(p.row_r2c.get(), real, reinterpret_cast<cufftDoubleComplex *>(spectra)));
  }
  if (p.four_step) {
    FourStepArgs<Real> a;
    a.rows = p.rows.get();
    a.spectra = spectra;
    a.entries = p.entries.get();
    a.tw_cols = DeviceTwiddles<Real>{p.tw_cols_lo.get(), p.tw_cols_hi.size() ? p.tw_cols_hi.get() : nullptr};
    if (p.tw_cols_split.size() != 0)
      a.split_cols = SharedTwiddles<Real>{p.tw_cols_split.get(), p.split_lo,
                                          static_cast<uint32_t>(p.tw_cols_split.size()) - p.split_lo, p.split_bits};
    a.cols = Modulus(Cn);
    a.col_mask = (Cn & (Cn - 1)) == 0 && Cn <= (uint64_t{1} << 31) ? static_cast<uint32_t>(Cn - 1) : 0;
    a.tw_rows = p.tw_rows_lo.get();
    a.P = p.four_step_p;
    a.W = W;
    a.mirror = Cn % 2 == 0;
    a.runs = p.runs.get();
    events.mark(stream);
    launch_four_step<Real>(a, R, b, stream, events.take());
    events.mark(stream);
    events.report(R, Cn, p.fft_slots, p.entries.size());
    return;
  }
  // The direct rows write their slots (row_id = the destination slot).
  launch_row_sums<Real>(p.direct_slot.get(), p.direct_start.get(), p.direct_col.get(),
                        p.direct_weight.size() ? p.direct_weight.get() : nullptr, p.slots - p.fft_slots,
                        p.tw_cols_lo.get(), p.tw_cols_hi.size() ? p.tw_cols_hi.get() : nullptr, Cn, W, spectra, stream);
  constexpr unsigned block = 256;
  if (p.direct_columns) {
    DeviceTwiddles<Real> tw{p.tw_rows_lo.get(), p.tw_rows_hi.size() ? p.tw_rows_hi.get() : nullptr};
    slot_column_sums<Real>
        <<<rows_grid(W, R, block), block, 0, stream>>>(spectra, p.slot_row.get(), p.slots, tw, Modulus(R), W, b);
  } else {
    expand_slots<Real><<<rows_grid(W, R, block), block, 0, stream>>>(spectra, p.row_slot.get(), R, W, b);
  }
  SFFT_CUDA_CHECK_LAUNCH();
}

template PrunedPass<float> make_pruned<float>(const SparseColumns &, cudaStream_t);
template PrunedPass<double> make_pruned<double>(const SparseColumns &, cudaStream_t);
template struct PrunedPass<float>;
template struct PrunedPass<double>;
template void run_pruned<float>(const PrunedPass<float> &, uint64_t, uint64_t, Cplx<float> *, cudaStream_t);
template void run_pruned<double>(const PrunedPass<double> &, uint64_t, uint64_t, Cplx<double> *, cudaStream_t);

}  // namespace sfft::spfft2d::gpu
