// SPDX-License-Identifier: Apache-2.0
// CPU backend: OpenMP direct sparse sums and threaded FFTW; the tiled DIRECT method and the whole-spectrum
// DIRECT_ROWS / DENSE / PRUNED methods of plan.hpp.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/checked.hpp"
#include "common/env.hpp"
#include "common/fftw_bluestein.hpp"
#include "common/fftw_columns.hpp"
#include "common/fftw_plan.hpp"
#include "common/host_buffer.hpp"
#include "common/process.hpp"
#include "common/wall_stages.hpp"
#include "spfft2d/plan.hpp"
#include "spfft2d/sparse_row_r2c.hpp"

namespace sfft::spfft2d {
namespace {

// Outputs of one task of a row's or column's direct sums: each of its nonzeros starts its phase with a 64-bit
// remainder once per task. In tasks of 16 outputs those remainders were a large part of the sums (PRUNED at
// 4096^2: one for every 16 outputs of each nonzero).
constexpr uint64_t kRowSumOutputs = 128;
// A row's outputs split into tasks of kRowSumOutputs to 2 kRowSumOutputs - 1 (a width of 513 in four tasks, not
// four and a task of one output paying every nonzero's remainder).
struct RowTasks {
  explicit RowTasks(uint64_t width) : width(width), count(std::max<uint64_t>(1, width / kRowSumOutputs)) {}
  uint64_t first(uint64_t t) const { return t * width / count; }
  uint64_t size(uint64_t t) const { return first(t + 1) - first(t); }
  uint64_t width, count;
};
// PRUNED's plans and buffers on the CPU (CpuEngine::plan_pruned).
template <class Real>
struct PrunedPlans {
  std::vector<char> fft_row;  // per nonempty row: an FFT transforms it (else direct sums)
  bool direct_columns = false;
  HostBuffer<std::complex<Real>> spectra;  // K x width, direct column pass only
  SparseRowR2c<Real> sparse_r2c;           // the FFT rows that it prefers (fft_row), the others by
  fftw::Plan<Real> row_r2c;                // FFTW's R2C of a row (fft_row), or
  fftw::Bluestein<Real> row_bluestein;     // Bluestein's, where the row R2C measured faster so (RowR2c)
  // row_r2c's arrays, a slot per thread: the real row (kept zero but while a row's entries are in it) and its
  // spectrum, both at FFTW's alignment.
  HostBuffer<Real> row_in;
  HostBuffer<std::complex<Real>> row_out;
  std::size_t row_in_slot = 0, row_out_slot = 0;
  // The direct rows' sums: every nonempty row's entries (runs first; PrunedShape::entries' start, runs and
  // run_length, empty where no row has a run), each entry's column, weight (empty: binary) and table (runs), run
  // table t at t x width.
  FourStepEntries entries;
  std::vector<int32_t> entry_col, entry_table;
  HostBuffer<Real> entry_weight;
  HostBuffer<std::complex<Real>> run_tables;
};

// DENSE's plans and staging array on the CPU (CpuEngine::plan_dense).
template <class Real>
struct DensePlans {
  HostBuffer<Real> real;       // rows x cols, when staged (else empty: in place on the output)
  fftw::Plan<Real> aligned;    // staged, for outputs with FFTW alignment aligned_output
  fftw::Plan<Real> unaligned;  // any output (FFTW_UNALIGNED)
  int aligned_output = -1;
};
// PRUNED's row transform where cols' route is timed: one thread's time (ns) of the faster of FFTW's R2C and
// Bluestein's route on the real row, and Bluestein's transform where it was the faster.
template <class Real>
struct RowR2c {
  double ns = 0;
  fftw::Bluestein<Real> bluestein;
};

// Largest grid (rows x cols) DENSE stages in an array of its own.
constexpr uint64_t kDenseStagedCells = uint64_t{1} << 21;
// Tile rows timed for the choice of their DFTs' route (fftw_bluestein.hpp).
constexpr uint64_t kTileLinesTimed = 8;

template <class Real>
class CpuEngine final : public Engine {
 public:
  using Complex = std::complex<Real>;
  using Pruned = PrunedPlans<Real>;
  using Dense = DensePlans<Real>;

  CpuEngine(std::shared_ptr<const SparseColumns> m, const Options &opts)
      : m_(std::move(m)),
        threads_(opts.threads),
        layout_(m_->rows, m_->cols),
        tw_(make_twiddles<Real>(m_->rows)),
        tw_cols_(make_twiddles<Real>(m_->cols)) {
    if (!m_->binary()) {
      weight_.allocate(m_->nnz());
      row_weight_.allocate(m_->nnz());
      for (std::size_t k = 0; k < m_->nnz(); ++k) {
        weight_[k] = static_cast<Real>(m_->weight[k]);
        row_weight_[k] = static_cast<Real>(m_->row_weight[k]);
      }
    }
    configure(0, SPFFT2D_METHOD_AUTO);
  }

  void set_tile_rows(uint64_t tile) override { configure(tile, method_); }
  void set_method(spfft2d_method method) override { configure(requested_tile_, method); }
  spfft2d_method whole_method() const override { return method_ == SPFFT2D_METHOD_AUTO ? whole_auto_ : method_; }

  // Plans everything for (tile, method) and commits only after every allocation succeeded, so a failed
  // re-plan leaves the plan as it was.
  void configure(uint64_t tile, spfft2d_method method) {
    WallStages stages(env_flag("SFFT_SPFFT2D_STAGE_TIMES"));
    Layout next = layout_;
    std::size_t row_bytes = (layout_.cols + layout_.width) * sizeof(Complex);
    next.tile = tile == 0 ? auto_tile(layout_, row_bytes, auto_budget(layout_, sizeof(Complex)))
                          : std::min(tile, layout_.half + 1);
    HostBuffer<Complex> z(checked_mul(next.tile, layout_.cols, "tile size"));
    HostBuffer<Complex> staging(checked_mul(next.tile, layout_.width, "staging size"));
    int n = static_cast<int>(layout_.cols);
    auto plan = fftw::Plan<Real>::many_dft(1, &n, static_cast<int>(next.tile), z.get(), nullptr, 1, n, z.get(), nullptr,
                                           1, n, FFTW_FORWARD, FFTW_ESTIMATE, threads_);
    stages.mark("tile_plan");
    // Lengths that are not 7-smooth (up to fftw::kMaxTimedLength): each FFT's faster route on this host, timed.
    MeasuredFfts measured;
    fftw::LineDfts<Real> tile_rows;
    fftw::ColumnDfts<Real> down_columns;
    RowR2c<Real> row_r2c;
    if (fftw::route_is_timed(layout_.cols)) {
      tile_rows = fftw::LineDfts<Real>(n, static_cast<std::ptrdiff_t>(std::min<uint64_t>(next.tile, kTileLinesTimed)),
                                       FFTW_FORWARD, z.get());
      measured.row_line = tile_rows.line_ns();
      if (!tile_rows.bluestein()) tile_rows = fftw::LineDfts<Real>();
      row_r2c = time_row_r2c();
      measured.row_r2c = row_r2c.ns;
    }
    if (fftw::route_is_timed(layout_.rows) && planning_memory_available()) {
      down_columns = column_dfts();
      measured.column_line = down_columns.line_ns();
    }
    stages.mark("timed_ffts");
    PrunedShape shape = pruned_shape(*m_, CostBackend::Cpu, measured);
    spfft2d_method whole_auto = estimate_costs(*m_, next, CostBackend::Cpu, sizeof(Complex), shape).cheapest();
    if (is_whole_method(whole_auto) && !planning_memory_available()) whole_auto = SPFFT2D_METHOD_DIRECT;
    const spfft2d_method whole = method == SPFFT2D_METHOD_AUTO ? whole_auto : method;
    HostBuffer<Complex> workspace;
    stages.mark("model");
    if (is_whole_method(method)) workspace.allocate(checked_mul(layout_.rows, layout_.width, "workspace size"));
    Dense dense;
    Pruned pruned;
    if (whole == SPFFT2D_METHOD_PRUNED) pruned = plan_pruned(std::move(shape), std::move(row_r2c.bluestein));
    if (is_whole_method(whole) && !pruned.direct_columns) {
      plan_whole(whole, dense, down_columns);
    } else {
      down_columns = fftw::ColumnDfts<Real>();
    }
    stages.mark("whole_plan");
    // Work arrays of Bluestein's routes on the rows, a slot per thread.
    const auto work_slot = static_cast<std::ptrdiff_t>(aligned_slot<Complex>(static_cast<std::size_t>(
        std::max(tile_rows.work_size(), pruned.row_bluestein ? pruned.row_bluestein.work_size() : 0))));
    HostBuffer<Complex> row_work(
        checked_mul(static_cast<std::size_t>(work_slot), static_cast<std::size_t>(threads_), "FFT work"));
    layout_ = next;
    z_ = std::move(z);
    staging_ = std::move(staging);
    fft_ = std::move(plan);
    tile_rows_ = std::move(tile_rows);
    row_work_ = std::move(row_work);
    row_work_slot_ = work_slot;
    requested_tile_ = tile;
    method_ = method;
    whole_auto_ = whole_auto;
    workspace_ = std::move(workspace);
    dense_ = std::move(dense);
    down_columns_ = std::move(down_columns);
    pruned_ = std::move(pruned);
    stages.report("sfft spfft2d configure (CPU):");
  }

  uint64_t tile_rows() const override { return layout_.tile; }
  std::size_t workspace_bytes() const override {
    return (z_.size() + staging_.size() + workspace_.size() + pruned_.spectra.size() + pruned_.run_tables.size() +
            pruned_.row_out.size() + row_work_.size()) *
               sizeof(Complex) +
           (dense_.real.size() + pruned_.row_in.size()) * sizeof(Real) + pruned_.sparse_r2c.buffer_bytes() +
           down_columns_.buffer_bytes() + tile_rows_.buffer_bytes() + pruned_.row_bluestein.buffer_bytes() +
           (tw_.lo.size() + tw_.hi.size() + tw_cols_.lo.size() + tw_cols_.hi.size()) * sizeof(Complex);
  }

  void run(uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) override {
    require(!out_on_device, "out is CUDA device memory but this plan uses the CPU backend");
    const bool whole_native = sink.callback == nullptr && lo == 0 && hi == layout_.rows;
    const spfft2d_method method = method_of_call(method_, whole_auto_, whole_native);
    if (is_whole_method(method)) {
      Complex *b = whole_native ? static_cast<Complex *>(sink.out) : workspace_.get();
      compute_whole(method, b);
      if (!whole_native) deliver_whole(b, lo, hi, sink);
      return;
    }
    layout_.for_each_tile(lo, hi, [&](uint64_t k) {
      compute_tile(k);
      deliver(layout_.direct_block(k, lo, hi), k, false, sink);
      deliver(layout_.mirror_block(k, lo, hi), k, true, sink);
    });
  }

 private:
  static Complex twiddle(const TwiddleTables<Real> &t, uint64_t m) {
    if (t.hi.empty()) return t.lo[m];
    return t.hi[m >> TwiddleTables<Real>::kSplitBits] * t.lo[m & ((1u << TwiddleTables<Real>::kSplitBits) - 1)];
  }
  Complex twiddle(uint64_t m) const { return twiddle(tw_, m); }

  // PRUNED's R2C of one row by FFTW's plan (as plan_pruned makes it) and by Bluestein's route (either alone where
  // SFFT_FFT_ROUTE fixes it), the fastest of three runs each: FFTW_ESTIMATE's plans for lengths with a large prime
  // factor cost far more than the model says (8219: 315 us, 123 modelled; 12328 = 8 x 23 x 67: 153 us), so PRUNED
  // is costed, and its FFT rows chosen, with what this host measures.
  RowR2c<Real> time_row_r2c() const {
    HostBuffer<Complex> row(layout_.width), out(layout_.width);
    std::fill(row.get(), row.get() + layout_.width, Complex(0));
    Real *real_row = reinterpret_cast<Real *>(row.get());
    HostBuffer<Real> in(layout_.cols);
    std::fill(in.get(), in.get() + in.size(), Real(0));
    const int n = static_cast<int>(layout_.cols);
    const fftw::FftRoute route = fftw::route_from_environment();
    fftw::Plan<Real> plan;
    if (route != fftw::FftRoute::kBluestein) plan = row_r2c_plan();
    fftw::Bluestein<Real> bluestein;
    if (route != fftw::FftRoute::kFftw) bluestein = fftw::Bluestein<Real>(n, FFTW_FORWARD);
    HostBuffer<Complex> work(static_cast<std::size_t>(bluestein.work_size()));
    const auto width = static_cast<std::ptrdiff_t>(layout_.width);
    const fftw::TimedRoute timed = fftw::time_routes(
        route, 3,
        [&] {
          plan.execute_r2c(in.get(), out.get());
          std::memcpy(static_cast<void *>(row.get()), out.get(), layout_.width * sizeof(Complex));
        },
        [&] { bluestein.transform(static_cast<const Real *>(real_row), row.get(), width, work.get()); });
    RowR2c<Real> r;
    r.ns = timed.ns;
    if (timed.bluestein) r.bluestein = std::move(bluestein);
    return r;
  }

  // FFTW's R2C of one row out of place between arrays at FFTW's alignment (fft_row: the thread's, then a copy into
  // the row of b). In place on the rows of b, which start anywhere, the plan had to be FFTW_UNALIGNED, without
  // FFTW's SIMD codelets (docs/spfft2d.md, "FFT rows on the CPU").
  fftw::Plan<Real> row_r2c_plan() const {
    HostBuffer<Real> in(layout_.cols);
    HostBuffer<Complex> out(layout_.width);
    const int n = static_cast<int>(layout_.cols);
    return fftw::Plan<Real>::many_r2c(1, &n, 1, in.get(), nullptr, 1, 0, out.get(), nullptr, 1, 0,
                                      FFTW_ESTIMATE | FFTW_PRESERVE_INPUT, 1);
  }

  // The column pass's DFTs (rows points down each of the width columns, in place in a rows x width array).
  fftw::ColumnDfts<Real> column_dfts() const {
    return fftw::ColumnDfts<Real>(static_cast<std::ptrdiff_t>(layout_.rows), static_cast<std::ptrdiff_t>(layout_.width),
                                  FFTW_FORWARD, threads_);
  }

  Complex *row_work(int thread) const { return row_work_.get() + static_cast<std::size_t>(row_work_slot_) * thread; }

  // FFTW aborts the process when one of its own allocations fails, and its buffers for a whole-spectrum
  // plan stay below the spectrum's size: the host must be able to grant that much first, so a machine without
  // it gets SFFT_ERROR_OUT_OF_MEMORY here instead of an abort inside FFTW.
  void require_planning_memory() const {
    require_host_memory(checked_mul(layout_.rows, layout_.width, "whole-spectrum plan size"), sizeof(Complex),
                        "whole-spectrum plan");
  }

  // Whether a whole-spectrum method can be planned now; AUTO falls back to the tiles when not.
  bool planning_memory_available() const {
    try {
      require_planning_memory();
      return true;
    } catch (const Error &e) {
      if (e.status() != SFFT_ERROR_OUT_OF_MEMORY) throw;
      return false;
    }
  }

  // FFTW plans of a whole-spectrum method on a rows x width buffer: DIRECT_ROWS and PRUNED a DFT down the
  // columns in place by blocks of columns (fftw_columns.hpp; FFTW_ESTIMATE's in-place strided plan took 1.3-1.9x
  // as long: PRUNED at 1024^2 and 2048^2, 2 threads, development VM), DENSE FFTW's 2-D r2c (plan_dense:
  // FFTW_UNALIGNED, the buffer may be the caller's array; FFTW_ESTIMATE never touches the planning buffer).
  // down_columns: made already where the row count is not 7-smooth (configure timed its routes).
  void plan_whole(spfft2d_method method, Dense &dense, fftw::ColumnDfts<Real> &down_columns) {
    require_planning_memory();
    if (method == SPFFT2D_METHOD_DENSE) {
      down_columns = fftw::ColumnDfts<Real>();
      return plan_dense(dense);
    }
    if (!down_columns) down_columns = column_dfts();
  }

  // DENSE's r2c. Up to kDenseStagedCells cells, the rows are scattered into a real rows x cols array of the plan
  // and transformed out of place into the output, with a plan for outputs aligned like FFTW's planning arrays
  // and one (FFTW_UNALIGNED) for any other: the user's own scatter + r2c, which FFTW (FFTW_ESTIMATE, 2 threads,
  // development VM) ran 1.3x faster than the in-place r2c on padded rows at 512^2 and 1.1x at 1024^2. Larger
  // grids transform in place on the output's padded rows, needing no array of their own, and measured faster
  // that way: 1536^2 and 2048^2 9.5 and 21.9 ms against 11.0 and 24.5 ms out of place. (A batched r2c of the
  // rows in place, then the columns through buffers as PRUNED's, measured slower: 2048^2 17-22 ms against 13-19.)
  void plan_dense(Dense &dense) const {
    const uint64_t cells = checked_mul(layout_.rows, layout_.cols, "DENSE grid");
    const int R = static_cast<int>(layout_.rows), C = static_cast<int>(layout_.cols);
    const int W = static_cast<int>(layout_.width);
    const int n[2] = {R, C};
    HostBuffer<Complex> planning(1);
    if (cells <= kDenseStagedCells) {
      dense.real.allocate(cells);
      dense.aligned = fftw::Plan<Real>::many_r2c(2, n, 1, dense.real.get(), nullptr, 1, 0, planning.get(), nullptr, 1,
                                                 0, FFTW_ESTIMATE, threads_);
      dense.aligned_output = fftw::Api<Real>::alignment_of(planning.get());
      dense.unaligned = fftw::Plan<Real>::many_r2c(2, n, 1, dense.real.get(), nullptr, 1, 0, planning.get(), nullptr, 1,
                                                   0, FFTW_ESTIMATE | FFTW_UNALIGNED, threads_);
    } else {
      const int in_embed[2] = {R, 2 * W}, out_embed[2] = {R, W};
      dense.unaligned =
          fftw::Plan<Real>::many_r2c(2, n, 1, reinterpret_cast<Real *>(planning.get()), in_embed, 1, 0, planning.get(),
                                     out_embed, 1, 0, FFTW_ESTIMATE | FFTW_UNALIGNED, threads_);
    }
  }

  // DENSE into b: the nonzeros scattered into a zeroed real array (the plan's, or b's own padded rows), then the
  // r2c.
  void compute_dense(Complex *b) {
    const uint64_t R = layout_.rows, C = layout_.cols, W = layout_.width;
    const bool staged = dense_.real.size() > 0;
    Real *real = staged ? dense_.real.get() : reinterpret_cast<Real *>(b);
    const uint64_t pitch = staged ? C : 2 * W;
    std::memset(static_cast<void *>(real), 0, R * pitch * sizeof(Real));
    for (std::size_t j = 0; j < m_->row_id.size(); ++j)
      for (int64_t e = m_->row_start[j]; e < m_->row_start[j + 1]; ++e)
        real[static_cast<uint64_t>(m_->row_id[j]) * pitch + static_cast<uint64_t>(m_->row_col[e])] =
            row_weight_.size() ? row_weight_[e] : Real(1);
    const bool aligned = staged && fftw::Api<Real>::alignment_of(b) == dense_.aligned_output;
    (aligned ? dense_.aligned : dense_.unaligned).execute_r2c(real, b);
  }

  // dst[v] for v in [v0, v0 + count): the direct sums of nonempty row j along the columns,
  // sum_e w_e e^{-2 pi i col_e v / cols}, written over dst.
  void row_sums(int64_t j, uint64_t v0, uint64_t count, Complex *dst) const {
    direct_sums(m_->row_col.data(), row_weight_, m_->row_start[j], m_->row_start[j + 1], v0, count, layout_.cols,
                tw_cols_, dst + v0, true);
  }

  // PRUNED's row_sums: direct row j's runs through their tables, then its other nonzeros (a row without runs as
  // row_sums takes it).
  void pruned_row_sums(int64_t j, uint64_t v0, uint64_t count, Complex *dst) const {
    const FourStepEntries &entries = pruned_.entries;
    const auto row = static_cast<std::size_t>(j);
    if (entries.runs.empty() || entries.runs[row] == 0) return row_sums(j, v0, count, dst);
    const int64_t e0 = entries.start[row], singles = e0 + entries.runs[row], e1 = entries.start[row + 1];
    Complex *acc = dst + v0;
    // Run e's terms set the outputs (the first run: no zero fill) or add to them. The product is written
    // out: std::complex's operator* checks its result for NaN and calls __mulsc3.
    const auto run_sums = [&](int64_t e, const auto &at, auto store) {
      const auto k = static_cast<std::size_t>(e), step = static_cast<uint64_t>(pruned_.entry_col[k]);
      const uint64_t n = layout_.cols;
      const Real w = pruned_.entry_weight.size() != 0 ? pruned_.entry_weight[k] : Real(1);
      const Complex *table =
          pruned_.run_tables.get() + static_cast<uint64_t>(pruned_.entry_table[k]) * layout_.width + v0;
      uint64_t phase = step * v0 % n;
      for (uint64_t i = 0; i < count; ++i) {
        const Complex tw = at(phase), dv = table[i];
        store(acc[i], Complex(w * (tw.real() * dv.real() - tw.imag() * dv.imag()),
                              w * (tw.real() * dv.imag() + tw.imag() * dv.real())));
        advance(phase, step, n);
      }
    };
    with_twiddles(tw_cols_, [&](const auto &at) {
      run_sums(e0, at, [](Complex &out, Complex term) { out = term; });
      for (int64_t e = e0 + 1; e < singles; ++e) run_sums(e, at, [](Complex &out, Complex term) { out += term; });
    });
    direct_sums(pruned_.entry_col.data(), pruned_.entry_weight, singles, e1, v0, count, layout_.cols, tw_cols_, acc,
                false);
  }

  // acc[i] += sum over entries e in [e0, e1) of w_e e^{-2 pi i index_e (v0 + i) / n}, i < count: each entry's
  // phase starts with one 64-bit remainder and then advances by integer addition. Entries go four at a time: one
  // entry's phase (an add and a wrap per output, each waiting on the last) bounded the loop; four are independent
  // chains. Weights empty: every w_e is 1.
  // set: the sums are written over acc (zeros where e0 == e1) rather than added to it.
  static void direct_sums(const int32_t *index, const HostBuffer<Real> &weights, int64_t e0, int64_t e1, uint64_t v0,
                          uint64_t count, uint64_t n, const TwiddleTables<Real> &tables, Complex *acc, bool set) {
    const Real *w = weights.size() != 0 ? weights.get() : nullptr;
    with_twiddles(tables, [&](const auto &at) {
      w ? add_direct_sums<true>(index, w, e0, e1, v0, count, n, at, acc, set)
        : add_direct_sums<false>(index, w, e0, e1, v0, count, n, at, acc, set);
    });
  }
  // fn(at) with at(m) = e^{-2 pi i m / n} from `tables` (one table's entry, or a split table's product).
  template <class Fn>
  static void with_twiddles(const TwiddleTables<Real> &tables, Fn &&fn) {
    if (tables.hi.empty())
      fn([table = tables.lo.data()](uint64_t m) { return table[m]; });
    else
      fn([&tables](uint64_t m) { return twiddle(tables, m); });
  }
  // A direct sum's phase index, step by step: (phase + step) mod n, both below n.
  static void advance(uint64_t &phase, uint64_t step, uint64_t n) {
    phase += step;
    if (phase >= n) phase -= n;
  }
  template <bool kWeighted, class Twiddle>
  static void add_direct_sums(const int32_t *index, const Real *weights, int64_t e, int64_t end, uint64_t v0,
                              uint64_t count, uint64_t n, const Twiddle &at, Complex *acc, bool set) {
    if (set && e == end) std::fill(acc, acc + count, Complex(0));
    // The first group writes the outputs when `set` (no zero fill), the later ones add; the last 1-3 entries go
    // in one pass as well (one pass each had cost a row of 6 entries three passes).
    const auto group = [&](auto k) {
      constexpr int K = decltype(k)::value;
      if (set)
        add_entry_group<K, kWeighted, true>(index, weights, e, v0, count, n, at, acc);
      else
        add_entry_group<K, kWeighted, false>(index, weights, e, v0, count, n, at, acc);
      set = false;
      e += K;
    };
    while (e + 4 <= end) group(std::integral_constant<int, 4>());
    if (end - e == 3)
      group(std::integral_constant<int, 3>());
    else if (end - e == 2)
      group(std::integral_constant<int, 2>());
    else if (end - e == 1)
      group(std::integral_constant<int, 1>());
  }
  // acc[i] (+)= the terms of entries e..e + K - 1 at outputs v0 + i: one pass, K independent phase chains.
  template <int K, bool kWeighted, bool kSet, class Twiddle>
  static void add_entry_group(const int32_t *index, const Real *weights, int64_t e, uint64_t v0, uint64_t count,
                              uint64_t n, const Twiddle &at, Complex *acc) {
    uint64_t step[K], phase[K];
    Real w[K];
    for (int k = 0; k < K; ++k) {
      step[k] = static_cast<uint64_t>(index[e + k]);
      phase[k] = step[k] * v0 % n;
      w[k] = kWeighted ? weights[e + k] : Real(1);
    }
    const auto term = [&](int k) { return kWeighted ? w[k] * at(phase[k]) : at(phase[k]); };
    const auto sweep = [&](const auto &next) {
      for (uint64_t i = 0; i < count; ++i) {
        Complex sum;
        if constexpr (K == 4)
          sum = (term(0) + term(1)) + (term(2) + term(3));
        else if constexpr (K == 3)
          sum = (term(0) + term(1)) + term(2);
        else if constexpr (K == 2)
          sum = term(0) + term(1);
        else
          sum = term(0);
        if constexpr (kSet)
          acc[i] = sum;
        else
          acc[i] += sum;
        for (int k = 0; k < K; ++k) next(phase[k], step[k]);
      }
    };
    // A power-of-two n wraps by a mask (no compare and select waiting on the add).
    if ((n & (n - 1)) == 0)
      sweep([mask = n - 1](uint64_t &phase, uint64_t step) { phase = (phase + step) & mask; });
    else
      sweep([n](uint64_t &phase, uint64_t step) { advance(phase, step, n); });
  }

  // PRUNED's row plans: one padded row transformed in place (FFTW_UNALIGNED: rows of b start anywhere). With
  // an FFT column pass the row spectra go to their own rows of b, the empty rows are zeroed, and the DFT down
  // the columns in place (plan_whole) finishes (at 2048^2 FFTW's in-place strided plan ran twice as fast as
  // column blocks gathered into a buffer and transformed out of place into b; blocks of 16 columns transformed
  // in their buffer and copied back ran faster still); with direct column sums, which write every row of
  // b as they read the spectra, the spectra have a buffer of their own (K x width, K small).
  // row_bluestein: Bluestein's transform of a row where time_row_r2c found it faster, else empty.
  Pruned plan_pruned(PrunedShape shape, fftw::Bluestein<Real> row_bluestein) const {
    Pruned p;
    p.fft_row = std::move(shape.fft_row);
    p.direct_columns = shape.direct_columns;
    if (shape.fft_rows > 0 && row_bluestein) {
      p.row_bluestein = std::move(row_bluestein);
    } else if (shape.fft_rows > 0) {
      p.row_r2c = row_r2c_plan();
      const auto threads = static_cast<std::size_t>(threads_);
      p.row_in_slot = aligned_slot<Real>(layout_.cols);
      p.row_out_slot = aligned_slot<Complex>(layout_.width);
      p.row_in.allocate(checked_mul(p.row_in_slot, threads, "PRUNED row arrays"));
      p.row_out.allocate(checked_mul(p.row_out_slot, threads, "PRUNED row arrays"));
      std::fill(p.row_in.get(), p.row_in.get() + p.row_in.size(), Real(0));
    }
    if (shape.fft_rows > 0 && SparseRowR2c<Real>::fits(layout_.cols)) choose_sparse_rows(p);
    if (p.direct_columns) p.spectra.allocate(checked_mul(m_->row_id.size(), layout_.width, "PRUNED row spectra"));
    p.entries = std::move(shape.entries);
    const std::vector<FourStepEntries::Entry> &entry = p.entries.entry;
    if (!m_->binary()) p.entry_weight.allocate(entry.size());
    for (std::size_t e = 0; e < entry.size(); ++e) {
      p.entry_col.push_back(entry[e].col);
      p.entry_table.push_back(entry[e].table);
      if (!m_->binary()) p.entry_weight[e] = static_cast<Real>(entry[e].weight);
    }
    p.entries.entry = {};  // held as the arrays above
    p.run_tables = make_run_tables(p.entries.run_length);
    return p;
  }

  // SparseRowR2c for the FFT rows of at most a limit of nonzeros, from timings on this host (fastest of three runs
  // each) of the FFT row with the most nonzeros: the plan's dense route (FFTW's R2C, or Bluestein's) and the sparse
  // route on that row and on an empty one. The sparse route's time is about a + b x nonzeros, the dense route's does
  // not depend on them, so rows up to (dense - a) / b nonzeros take it. FFTW_ESTIMATE's R2C is slow at some lengths
  // (32768 points: 66 us against 48-50 for the sparse route with 33 nonzeros; 65752 = 8 x 8219 about 1 ms) and fast
  // at others (1024 points with 51 nonzeros: the sparse route 1.3 times slower). SFFT_SPFFT2D_SPARSE_ROWS=N
  // (diagnostics: tests, A/B runs) sets the limit to N nonzeros untimed (0: no FFT row this way).
  void choose_sparse_rows(Pruned &p) const {
    const std::string fixed = env_value("SFFT_SPFFT2D_SPARSE_ROWS");
    if (fixed == "0") return;
    SparseRowR2c<Real> sparse(layout_.cols, threads_);
    int64_t most = -1, row = -1;
    for (std::size_t j = 0; j < p.fft_row.size(); ++j) {
      const int64_t nonzeros = m_->row_start[j + 1] - m_->row_start[j];
      if (p.fft_row[j] && nonzeros > most) {
        most = nonzeros;
        row = static_cast<int64_t>(j);
      }
    }
    if (row < 0) return;
    constexpr int64_t kEveryRow = int64_t{1} << 62;
    if (!fixed.empty()) {
      sparse.set_limit(static_cast<int64_t>(std::min<unsigned long long>(std::strtoull(fixed.c_str(), nullptr, 10),
                                                                         static_cast<unsigned long long>(kEveryRow))));
      p.sparse_r2c = std::move(sparse);
      return;
    }
    HostBuffer<Complex> out(layout_.width), work(static_cast<std::size_t>(p.row_bluestein.work_size()));
    const double dense_ns = fftw::best_time_ns(3, [&] { fft_row(p, row, 0, out.get(), work.get()); });
    const int32_t *col = m_->row_col.data() + m_->row_start[row];
    const Real *weight = row_weight_.size() ? row_weight_.get() + m_->row_start[row] : nullptr;
    const double empty_ns = fftw::best_time_ns(3, [&] { sparse.transform(col, weight, 0, out.get(), 0); });
    const double full_ns = fftw::best_time_ns(3, [&] { sparse.transform(col, weight, most, out.get(), 0); });
    if (empty_ns >= dense_ns) return;
    const double per_nonzero = (full_ns - empty_ns) / static_cast<double>(std::max<int64_t>(most, 1));
    const double limit = per_nonzero > 0 ? (dense_ns - empty_ns) / per_nonzero : static_cast<double>(kEveryRow);
    sparse.set_limit(static_cast<int64_t>(std::min(limit, static_cast<double>(kEveryRow))));
    p.sparse_r2c = std::move(sparse);
  }

  // D_len(v) = sum_{k < len} e^{-2 pi i k v / cols} for v < width, a table per run length.
  HostBuffer<Complex> make_run_tables(const std::vector<int64_t> &lengths) const {
    const uint64_t C = layout_.cols, W = layout_.width;
    HostBuffer<Complex> t(checked_mul(lengths.size(), W, "PRUNED run tables"));
    const RunSums run_sum(C, lengths.size() * W);
    for (std::size_t k = 0; k < lengths.size(); ++k)
      for (uint64_t v = 0; v < W; ++v) {
        const std::complex<double> d = run_sum(static_cast<uint64_t>(lengths[k]), v);
        t[k * W + v] = Complex(static_cast<Real>(d.real()), static_cast<Real>(d.imag()));
      }
    return t;
  }

  // Nonempty row j's spectrum into row (width values), on thread `thread`: by SparseRowR2c where it takes the row's
  // nonzeros, else by Bluestein's route in place in the row (work: its work array) where the plan has it, else by
  // FFTW's R2C from the thread's real row (the entries go into it and are cleared after the transform, which
  // preserves its input).
  void fft_row(const Pruned &p, int64_t j, int thread, Complex *row, Complex *work) const {
    const int64_t e0 = m_->row_start[j], count = m_->row_start[j + 1] - e0;
    if (p.sparse_r2c.prefers(count))
      return p.sparse_r2c.transform(m_->row_col.data() + e0, row_weight_.size() ? row_weight_.get() + e0 : nullptr,
                                    count, row, thread);
    if (p.row_bluestein) {
      Real *real_row = reinterpret_cast<Real *>(row);
      std::fill(real_row, real_row + 2 * layout_.width, Real(0));
      for (int64_t e = e0; e < e0 + count; ++e)
        real_row[m_->row_col[e]] = row_weight_.size() ? row_weight_[e] : Real(1);
      return p.row_bluestein.transform(static_cast<const Real *>(real_row), row,
                                       static_cast<std::ptrdiff_t>(layout_.width), work);
    }
    Real *in = p.row_in.get() + p.row_in_slot * static_cast<std::size_t>(thread);
    Complex *out = p.row_out.get() + p.row_out_slot * static_cast<std::size_t>(thread);
    for (int64_t e = e0; e < e0 + count; ++e) in[m_->row_col[e]] = row_weight_.size() ? row_weight_[e] : Real(1);
    p.row_r2c.execute_r2c(in, out);
    for (int64_t e = e0; e < e0 + count; ++e) in[m_->row_col[e]] = Real(0);
    std::memcpy(static_cast<void *>(row), out, layout_.width * sizeof(Complex));
  }

  // PRUNED: the spectra of the nonempty rows (FFT or direct sums), then the column pass into b.
  void compute_pruned(Complex *b) {
    const uint64_t R = layout_.rows, W = layout_.width;
    const int64_t K = static_cast<int64_t>(m_->row_id.size());
    if (K == 0) {
      std::memset(static_cast<void *>(b), 0, R * W * sizeof(Complex));
      return;
    }
    const bool direct_columns = pruned_.direct_columns;
    const auto spectrum = [&](int64_t j) {
      return direct_columns ? pruned_.spectra.get() + static_cast<uint64_t>(j) * W
                            : b + static_cast<uint64_t>(m_->row_id[j]) * W;
    };
    const RowTasks tasks(W);
    const auto ntasks = static_cast<int64_t>(tasks.count);
#pragma omp parallel num_threads(usable_threads(threads_))
    {
      Complex *work = row_work(omp_get_thread_num());
      if (!direct_columns) {  // the empty rows: the gaps before, between and after the nonempty ones
#pragma omp for schedule(static) nowait
        for (int64_t j = 0; j <= K; ++j) {
          const uint64_t first = j == 0 ? 0 : static_cast<uint64_t>(m_->row_id[j - 1]) + 1;
          const uint64_t end = j == K ? R : static_cast<uint64_t>(m_->row_id[j]);
          if (first < end) std::memset(static_cast<void *>(b + first * W), 0, (end - first) * W * sizeof(Complex));
        }
      }
#pragma omp for schedule(dynamic, 1) nowait
      for (int64_t j = 0; j < K; ++j) {
        if (!pruned_.fft_row[static_cast<std::size_t>(j)]) continue;
        fft_row(pruned_, j, omp_get_thread_num(), spectrum(j), work);
      }
#pragma omp for collapse(2) schedule(dynamic, 4)
      for (int64_t j = 0; j < K; ++j)
        for (int64_t t = 0; t < ntasks; ++t)
          if (!pruned_.fft_row[static_cast<std::size_t>(j)])
            pruned_row_sums(j, tasks.first(static_cast<uint64_t>(t)), tasks.size(static_cast<uint64_t>(t)),
                            spectrum(j));
    }
    if (direct_columns)
      pruned_direct_columns(b);
    else
      down_columns_.execute(b);
  }

  // b[u][v] = sum_j S[j][v] e^{-2 pi i row_j u / rows}: each output row accumulated in place from the few spectra.
  void pruned_direct_columns(Complex *b) const {
    const uint64_t R = layout_.rows, W = layout_.width;
    const std::size_t K = m_->row_id.size();
    const Complex *spectra = pruned_.spectra.get();
#pragma omp parallel for schedule(static) num_threads(usable_threads(threads_))
    for (int64_t ui = 0; ui < static_cast<int64_t>(R); ++ui) {
      const uint64_t u = static_cast<uint64_t>(ui);
      Complex *out = b + u * W;
      for (std::size_t j = 0; j < K; ++j) {
        const Complex t = twiddle(static_cast<uint64_t>(m_->row_id[j]) * u % R);
        const Complex *s = spectra + j * W;
        if (j == 0)
          for (uint64_t v = 0; v < W; ++v) out[v] = s[v] * t;
        else
          for (uint64_t v = 0; v < W; ++v) out[v] += s[v] * t;
      }
    }
  }

  // The half spectrum into b (rows x width) by a whole-spectrum method.
  void compute_whole(spfft2d_method method, Complex *b) {
    if (method == SPFFT2D_METHOD_PRUNED) return compute_pruned(b);
    const uint64_t R = layout_.rows, W = layout_.width;
    if (method == SPFFT2D_METHOD_DIRECT_ROWS) {
      if (m_->has_empty_rows()) std::memset(static_cast<void *>(b), 0, R * W * sizeof(Complex));
      const int64_t nrows = static_cast<int64_t>(m_->row_id.size());
      const RowTasks tasks(W);
      const auto ntasks = static_cast<int64_t>(tasks.count);
#pragma omp parallel for collapse(2) schedule(dynamic, 4) num_threads(usable_threads(threads_))
      for (int64_t j = 0; j < nrows; ++j)
        for (int64_t t = 0; t < ntasks; ++t)
          row_sums(j, tasks.first(static_cast<uint64_t>(t)), tasks.size(static_cast<uint64_t>(t)),
                   b + static_cast<uint64_t>(m_->row_id[j]) * W);
    } else {
      compute_dense(b);
      return;
    }
    down_columns_.execute(b);
  }

  // Rows [lo, hi) of a whole spectrum in the workspace to the sink.
  void deliver_whole(const Complex *b, uint64_t lo, uint64_t hi, const Sink &sink) {
    const uint64_t W = layout_.width;
    if (sink.callback)
      sink.callback(lo, hi - lo, b + lo * W, sink.user);
    else
      std::memcpy(sink.out, b + lo * W, (hi - lo) * W * sizeof(Complex));
  }

  // Z[t][c] for source rows s0 + t, t < tile, then the in-place column-axis FFT.
  void compute_tile(uint64_t k) {
    const uint64_t s0 = k * layout_.tile, tile = layout_.tile, R = layout_.rows, C = layout_.cols;
    Complex *z = z_.get();
    if (m_->has_empty_columns()) std::memset(static_cast<void *>(z), 0, z_.size() * sizeof(Complex));
    const int64_t ncols = static_cast<int64_t>(m_->col_id.size());
    const int64_t nblocks = static_cast<int64_t>((tile + kRowSumOutputs - 1) / kRowSumOutputs);
#pragma omp parallel for collapse(2) schedule(dynamic, 4) num_threads(usable_threads(threads_))
    for (int64_t j = 0; j < ncols; ++j) {
      for (int64_t b = 0; b < nblocks; ++b) {
        const uint64_t t0 = static_cast<uint64_t>(b) * kRowSumOutputs, count = std::min(kRowSumOutputs, tile - t0);
        Complex acc[kRowSumOutputs];
        direct_sums(m_->row.data(), weight_, m_->col_start[j], m_->col_start[j + 1], s0 + t0, count, R, tw_, acc, true);
        const uint64_t c = static_cast<uint64_t>(m_->col_id[j]);
        for (uint64_t i = 0; i < count; ++i) z[(t0 + i) * C + c] = acc[i];
      }
    }
    const fftw::Bluestein<Real> *bluestein = tile_rows_.bluestein();
    if (bluestein == nullptr) return fft_.execute_dft(z, z);
#pragma omp parallel for schedule(static) num_threads(usable_threads(threads_))
    for (int64_t t = 0; t < static_cast<int64_t>(tile); ++t) {
      Complex *row = z + static_cast<uint64_t>(t) * C;
      bluestein->transform(static_cast<const Complex *>(row), row, static_cast<std::ptrdiff_t>(C),
                           row_work(omp_get_thread_num()));
    }
  }

  // Writes one block of output rows (direct, or mirrored from the tile) to the sink.
  void deliver(Layout::Block blk, uint64_t k, bool mirrored, const Sink &sink) {
    if (blk.count == 0) return;
    const uint64_t s0 = k * layout_.tile, R = layout_.rows, C = layout_.cols, W = layout_.width;
    Complex *dst = sink.callback ? staging_.get() : static_cast<Complex *>(sink.out) + (blk.first - sink.row0) * W;
    const Complex *z = z_.get();
#pragma omp parallel for schedule(static) num_threads(usable_threads(threads_))
    for (int64_t i = 0; i < static_cast<int64_t>(blk.count); ++i) {
      const uint64_t u = blk.first + static_cast<uint64_t>(i);
      Complex *out = dst + static_cast<uint64_t>(i) * W;
      if (!mirrored) {
        std::memcpy(static_cast<void *>(out), z + (u - s0) * C, W * sizeof(Complex));
      } else {
        const Complex *src = z + (R - u - s0) * C;
        out[0] = std::conj(src[0]);
        for (uint64_t v = 1; v < W; ++v) out[v] = std::conj(src[C - v]);
      }
    }
    if (sink.callback) sink.callback(blk.first, blk.count, dst, sink.user);
  }

  std::shared_ptr<const SparseColumns> m_;
  int threads_;
  Layout layout_;
  TwiddleTables<Real> tw_, tw_cols_;
  HostBuffer<Real> weight_, row_weight_;
  HostBuffer<Complex> z_, staging_;
  fftw::Plan<Real> fft_;            // the tile's row DFTs, or
  fftw::LineDfts<Real> tile_rows_;  // Bluestein's route for them where that measured faster (cols not 7-smooth)
  HostBuffer<Complex> row_work_;    // Bluestein's work arrays on the rows, row_work_slot_ values per thread
  std::ptrdiff_t row_work_slot_ = 0;
  uint64_t requested_tile_ = 0;  // 0: automatic
  spfft2d_method method_ = SPFFT2D_METHOD_AUTO;
  spfft2d_method whole_auto_ = SPFFT2D_METHOD_DIRECT;
  HostBuffer<Complex> workspace_;        // rows x width, explicit whole-spectrum methods only
  fftw::ColumnDfts<Real> down_columns_;  // DIRECT_ROWS and PRUNED: the column pass
  Dense dense_;                          // DENSE's plans and staging array, when it is the whole-spectrum method
  Pruned pruned_;                        // PRUNED's plans and buffers, when it is the whole-spectrum method
};

}  // namespace

template <class Real>
std::unique_ptr<Engine> make_cpu_engine(std::shared_ptr<const SparseColumns> matrix, const Options &opts) {
  return std::make_unique<CpuEngine<Real>>(std::move(matrix), opts);
}
template std::unique_ptr<Engine> make_cpu_engine<float>(std::shared_ptr<const SparseColumns>, const Options &);
template std::unique_ptr<Engine> make_cpu_engine<double>(std::shared_ptr<const SparseColumns>, const Options &);

}  // namespace sfft::spfft2d
