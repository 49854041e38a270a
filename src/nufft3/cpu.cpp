// SPDX-License-Identifier: Apache-2.0
// CPU engine of the type-3 NUFFT: OpenMP spreading into per-chunk subgrids (sources sorted by grid row,
// so each chunk owns a narrow slab and no two threads write the same memory), a row-parallel reduction
// fused with the deconvolution and zero-padding, a threaded batched FFTW transform, and interpolation
// with one target per iteration. Kernel weights come from a plan-time Horner table; the per-point loops
// live in cpu_kernels.inl, built per instruction set and chosen for the running CPU.
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/checked.hpp"
#include "common/cpu_isa.hpp"
#include "common/env.hpp"
#include "common/fftw_lines.hpp"
#include "common/fftw_plan.hpp"
#include "common/host_buffer.hpp"
#include "common/process.hpp"
#include "nufft3/cpu_kernels.hpp"
#include "nufft3/cpu_phase.hpp"
#include "nufft3/horner.hpp"
#include "nufft3/params.hpp"
#include "nufft3/plan.hpp"

namespace sfft::nufft3 {
namespace {

inline long long wrap(long long c, long long n) { return c < 0 ? c + n : c; }

constexpr long long kTile = 16;  // cells per sorting tile
// Targets per interpolation work item: kTargetBlock, fewer (down to kMinTargetBlock) where that would leave a
// thread fewer than kTargetBlocksPerThread items: 1e4 targets were five items on two threads, one thread
// interpolating three while the other waited after two (target_block).
constexpr std::size_t kTargetBlock = 2048, kMinTargetBlock = 256, kTargetBlocksPerThread = 8;
std::size_t target_block(std::size_t targets, int threads) {
  const std::size_t items = kTargetBlocksPerThread * static_cast<std::size_t>(std::max(threads, 1));
  return std::clamp((targets + items - 1) / items, kMinTargetBlock, kTargetBlock);
}
constexpr int kSpreadGroup = 4;                       // transforms spread at once (CpuEngine::group_)
constexpr std::size_t kParallelSortPoints = 1 << 14;  // fewer points: one thread sorts
constexpr std::size_t kPhaseBlock = 256;              // sources whose phase factors are made together

// Stable counting sort: order[j] = index of the j-th smallest key (keys < nkeys). On several threads each counts
// and then places a contiguous range of the keys, the ranges' starts per key in thread order, so the order is the
// serial sort's (the serial placement took 0.7-0.9 ms of setpts per 1e5 points).
void counting_sort(const HostVector<std::size_t> &key, std::size_t nkeys, HostBuffer<std::size_t> &order, int threads) {
  const std::size_t n = key.size();
  order.allocate(n);
  const std::size_t parts = threads > 1 && n >= kParallelSortPoints ? static_cast<std::size_t>(threads) : 1;
  HostVector<std::size_t> start(checked_mul(parts, nkeys, "threads * sort keys"), 0);  // [thread][key]
#pragma omp parallel num_threads(static_cast <int>(parts)) if (parts > 1)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t lo = n * t / parts, hi = n * (t + 1) / parts;
    std::size_t *mine = start.data() + t * nkeys;
    for (std::size_t i = lo; i < hi; ++i) ++mine[key[i]];
#pragma omp barrier
#pragma omp single
    {
      std::size_t at = 0;
      for (std::size_t b = 0; b < nkeys; ++b) {
        for (std::size_t u = 0; u < parts; ++u) {
          const std::size_t count = start[u * nkeys + b];
          start[u * nkeys + b] = at;
          at += count;
        }
      }
    }
    for (std::size_t i = lo; i < hi; ++i) order[mine[key[i]]++] = i;
  }
}

template <class Real>
class CpuEngine final : public Engine {
 public:
  using Complex = std::complex<Real>;
  // SFFT_NUFFT3_STAGE_TIMES (set and not 0): every exec prints its stages' times and the layout to stderr (A/B
  // measurements), as the CUDA backend does.
  explicit CpuEngine(const Config &c) : cfg_(c), stage_times_(env_flag("SFFT_NUFFT3_STAGE_TIMES")) {}

  void setpts(const Points &p) override {
    const int dim = cfg_.dim;
    double x_lo[3], x_hi[3], s_lo[3], s_hi[3];
    static const char *src_names[3] = {"x", "y", "z"};
    static const char *tgt_names[3] = {"s", "t", "u"};
    for (int d = 0; d < dim; ++d) {
      scan_host_coordinates(static_cast<const Real *>(p.src[d]), p.N, src_names[d], x_lo[d], x_hi[d]);
      scan_host_coordinates(static_cast<const Real *>(p.tgt[d]), p.K, tgt_names[d], s_lo[d], s_hi[d]);
    }
    // The grids of one pass of batch_ transforms (transforms_per_pass) and the subgrids of the transforms
    // spread at once (at most kSpreadGroup).
    auto cell_bytes = [](int grids) {
      return sizeof(Complex) * (grids + static_cast<double>(std::min(grids, kSpreadGroup)));
    };
    // Single precision from tol 2e-6 to 1e-4: the sources' occupancy decides whether sigmas below 2 may be taken.
    SourceSample sample;
    if (cfg_.upsampfac == 0 && occupancy_decides(cfg_.is_double, cfg_.tol)) {
      const Real *src[3] = {};
      for (int d = 0; d < dim; ++d) src[d] = static_cast<const Real *>(p.src[d]);
      sample = sample_sources(src, dim, p.N);
    }
    auto layout_within = [&](double memory_limit, int grids) {
      return choose_layout(dim, cfg_.kernel, cfg_.tol, cfg_.upsampfac, p.N, p.K, cfg_.ntransf, x_lo, x_hi, s_lo, s_hi,
                           cell_bytes(grids), memory_limit, kCpuCost, cfg_.is_double,
                           sample.total > 0 ? &sample : nullptr);
    };
    L_ = layout_for_passes(cfg_.ntransf, cfg_.max_batch, available_host_memory() + p.reclaimable_bytes, cell_bytes(1),
                           layout_within, &batch_);
    // Points that need the previous points' grid shape take over their grid and FFT plan (below, once nothing
    // can fail): with new points every call, allocating and first touching the grid cost as much as an FFT.
    auto *previous = dynamic_cast<CpuEngine *>(p.previous);
    const bool reuse = previous != nullptr && previous->batch_ == batch_ && adopt_grid_shape(L_, previous->L_, 1.0);
    grid_bytes_ = static_cast<double>(L_.n2_total) * cell_bytes(batch_);
    const KernelSpec &kernel = L_.kernel;
    N_ = p.N;
    K_ = p.K;
    const int threads = usable_threads(cfg_.opts.threads);
    // The kernel's polynomial table and Fourier fit (about 1 ms together, more than sorting 2e4 points) are
    // copied from the previous points when they used the same kernel at the same sigma.
    const double tap_tol = tap_tolerance(L_, cfg_.tol);
    const bool same_kernel = previous != nullptr && previous->L_.upsampfac == L_.upsampfac &&
                             previous->L_.kernel.kind == kernel.kind && previous->L_.kernel.width == kernel.width &&
                             previous->L_.kernel.beta == kernel.beta && previous->L_.kernel.b == kernel.b &&
                             previous->tap_tol_ == tap_tol;
    tap_tol_ = tap_tol;
    fourier_ = same_kernel ? previous->fourier_ : fit_fourier(kernel, L_.upsampfac, fourier_fit_error(cfg_.tol));
    if (same_kernel) {
      horner_.allocate(previous->horner_.size());
      std::copy(previous->horner_.get(), previous->horner_.get() + previous->horner_.size(), horner_.get());
      horner_view_ = previous->horner_view_;
      horner_view_.coeff = horner_.get();
    } else {
      const HornerTable table =
          fit_horner(kernel, tap_tol, sizeof(Real) == 8 ? 0x1p-53 : 0x1p-24, cpu::kStrideMultiple<Real>);
      horner_.allocate(table.coeff.size());
      std::copy(table.coeff.begin(), table.coeff.end(), horner_.get());
      horner_view_ = cpu::HornerView<Real>{horner_.get(), table.width, table.degree, table.stride,
                                           static_cast<Real>(kernel.half_width)};
    }
    const FourierFit &fourier = fourier_;
    kernels_ = cpu::select_kernels<Real>(kernel.width, dim);
    const int W = kernel.width;
    // Transforms spread together, each source's weights computed once for all of them, at a subgrid each: in
    // 1-D and 2-D, and in 3-D up to W = 4, where the weights are a large share of a source's work. Wider 3-D
    // kernels spend it on W^2 lines per transform, and the extra subgrids only cost cache (2 threads, ntransf
    // 16, clustered 3-D double: 286-309 ms against 309-355 at tol 1e-13; uniform 2-D double 1e-3: 23 against
    // 33-38 ms).
    group_ = dim < 3 || W <= 4 ? std::min(batch_, kSpreadGroup) : 1;
    const DimLayout *ax = L_.axis;

    // Sources: sorted by the first row (dim 0 cell) they touch, then by 16-cell column tile (dim 1) and in 3-d
    // by 16-cell tile of dim 2, so a chunk owns a slab of rows and consecutive sources touch nearby memory. In
    // 1-d a row is one cell: sorting by tiles of 16 rows keeps the counting sort's table small (a key per cell
    // took 1 ms of setpts for 1e5 sources). In 3-d, without the dim-2 tiles the sources of one (row, column
    // tile) came in random order along dim 2 and each read its W^2 lines at another place of W rows' planes:
    // exec 4-16 % slower on uniform and sphere-shell 3-D (development VM, 2 threads, N = K = 1e5, one process:
    // uniform double tol 1e-9 88.9 -> 76.3 ms, 1e-12 137.8 -> 132.3, sphere shell 1e-11 119.6 -> 100.2;
    // clustered and dense clusters within noise). Tiles of 8 or 16 rows as well (a 3-d tile's sources together)
    // measured slower, not faster: uniform double 1e-9 69-71 / 74-82 ms against 64-65, dense clusters 1e-11
    // 71-72 / 78 against 62-64 (same setup).
    const long long rows = ax[0].n1;
    // Subgrid rows: the source cells of the dimensions after the first; in 3-d, lines of the last dimension and
    // rows padded to an odd number of 64-byte blocks (cpu::odd_blocks, SpreadTask).
    line_cells_ = dim == 3 ? cpu::odd_blocks<Real>(static_cast<std::size_t>(ax[2].n1))
                           : static_cast<std::size_t>(dim == 2 ? ax[1].n1 : 1);
    row_size_ = dim == 3 ? cpu::odd_blocks<Real>(static_cast<std::size_t>(ax[1].n1) * line_cells_) : line_cells_;
    const int row_shift = dim == 1 ? 4 : 0;  // rows per sorting tile: kTile in 1-d
    const long long row_tile = 1LL << row_shift;
    const long long col_tiles = dim > 1 ? ax[1].n1 / kTile + 1 : 1;
    const long long depth_tiles = dim > 2 ? ax[2].n1 / kTile + 1 : 1;
    const long long row_keys = col_tiles * depth_tiles;  // keys per row tile
    HostVector<std::size_t> key(N_);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t i = 0; i < N_; ++i) {
      long long cell[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) {
        const double pos = (static_cast<const Real *>(p.src[d])[i] - ax[d].src_center) / ax[d].h1;
        cell[d] = static_cast<long long>(std::ceil(pos - kernel.half_width)) + ax[d].n1 / 2;
      }
      key[i] = static_cast<std::size_t>(((cell[0] >> row_shift) * col_tiles + cell[1] / kTile) * depth_tiles +
                                        cell[2] / kTile);  // cells >= 0
    }
    counting_sort(key, static_cast<std::size_t>((rows / row_tile + 1) * row_keys), src_index_, threads);

    src_pos_.allocate(checked_mul(N_, dim, "dim * N"));
    src_phase_.allocate(N_);
    const std::size_t phase_blocks = (N_ + kPhaseBlock - 1) / kPhaseBlock;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t b = 0; b < phase_blocks; ++b) {
      const std::size_t j0 = b * kPhaseBlock, m = std::min(kPhaseBlock, N_ - j0);
      double phase[kPhaseBlock];
      for (std::size_t q = 0; q < m; ++q) {
        const std::size_t j = j0 + q, i = src_index_[j];
        phase[q] = 0;
        for (int d = 0; d < dim; ++d) {
          double xr = static_cast<const Real *>(p.src[d])[i] - ax[d].src_center;
          src_pos_[d * N_ + j] = xr / ax[d].h1;
          phase[q] += ax[d].tgt_center * xr;
        }
      }
      cpu::unit_phases<Real>(phase, m, cfg_.sign, src_phase_.get() + j0);
    }

    // Chunks of equal source counts; each owns the slab of rows its sources touch.
    const std::size_t nchunks = std::max<std::size_t>(1, std::min<std::size_t>(N_, 2 * threads));
    chunks_.assign(nchunks, Chunk{});
    std::size_t sub_cells = 0;
    for (std::size_t c = 0; c < nchunks; ++c) {
      Chunk &ch = chunks_[c];
      ch.begin = N_ * c / nchunks;
      ch.end = N_ * (c + 1) / nchunks;
      if (ch.begin == ch.end) continue;
      // The rows of the first and last sources' row tiles; a source's kernel ends within the n1 rows.
      ch.row_lo = static_cast<long long>(key[src_index_[ch.begin]]) / row_keys * row_tile;
      const long long last_row =
          static_cast<long long>(key[src_index_[ch.end - 1]]) / row_keys * row_tile + row_tile - 1;
      ch.rows = std::min(last_row + W, rows) - ch.row_lo;
      ch.offset = sub_cells;
      const std::size_t cells = cpu::whole_blocks<Real>(checked_add(
          checked_mul(static_cast<std::size_t>(ch.rows), row_size_, "subgrid"), cpu::kLineSlack, "subgrid"));
      sub_cells = checked_add(sub_cells, cells, "subgrids");
    }
    sub_cells_ = sub_cells;
    subgrids_.allocate(checked_mul(sub_cells, static_cast<std::size_t>(group_), "subgrids"));
    row_buffer_.allocate(checked_mul(row_size_, threads, "row buffers"));

    // Targets: sorted by tiles of the periodic grid in every dimension (16 cells, 8 in 3-d) for cache reuse in
    // interpolation; periodic grid coordinates and the combined phase / deconvolution factor in that order. In
    // 3-d, tiles over (x, y) only left each target's W^2 lines spread over the whole z range: interpolation
    // took twice as long as spreading (W = 13, N = K = 2e4).
    key.resize(K_);
    const int tile_shift = dim == 3 ? 3 : 4;  // target tiles of 8 cells a side in 3-d, kTile otherwise
    const long long tile_cells = 1LL << tile_shift;
    long long tiles[3] = {1, 1, 1};
    for (int d = 0; d < dim; ++d) tiles[d] = ax[d].n2 / tile_cells + 1;
    // Along the last (contiguous) dimension the grid holds its spectrum moved by n2 / 2 (the deconvolution
    // factors alternate in sign along it, correction_), so the targets, which fill about the middle half of the
    // centred band, stay clear of the grid's ends there and every interpolation line is contiguous. Windows
    // across the end had to be gathered cell by cell: 3-d with 16 transforms spent 45 % of its interpolation on
    // that path. The kernels add n2 / 2 to the first cell (InterpTask); positions stay small, as float rounds.
    const auto half_shift = [&](int d) { return d == dim - 1 ? static_cast<double>(ax[d].n2 / 2) : 0.0; };
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t k = 0; k < K_; ++k) {
      std::size_t t = 0;
      for (int d = 0; d < dim; ++d) {
        double v = (static_cast<const Real *>(p.tgt[d])[k] - ax[d].tgt_center) * ax[d].tgt_scale + half_shift(d);
        // Targets lie within (-n2, 2 n2) (h1 S <= pi / sigma): one wrap, not a 64-bit remainder per coordinate.
        long long c = static_cast<long long>(std::floor(v));
        c = c < 0 ? c + ax[d].n2 : c >= ax[d].n2 ? c - ax[d].n2 : c;
        if (c < 0 || c >= ax[d].n2) c = (c % ax[d].n2 + ax[d].n2) % ax[d].n2;
        t = t * static_cast<std::size_t>(tiles[d]) + static_cast<std::size_t>(c >> tile_shift);
      }
      key[k] = t;
    }
    counting_sort(key, static_cast<std::size_t>(tiles[0] * tiles[1] * tiles[2]), tgt_index_, threads);
    tgt_pos_.allocate(checked_mul(K_, dim, "dim * K"));
    tgt_factor_.allocate(K_);
    // In blocks of kLogFourierBlock targets: their deconvolution factors 1 / phihat of every dimension come as
    // one exp of a sum of logarithms evaluated side by side (target by target, 3.3-7.9 ms of setpts for 1e5
    // targets in 1-d to 3-d).
    const std::size_t target_blocks = (K_ + kLogFourierBlock - 1) / kLogFourierBlock;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t b = 0; b < target_blocks; ++b) {
      const std::size_t j0 = b * kLogFourierBlock, m = std::min(kLogFourierBlock, K_ - j0);
      double phase[kLogFourierBlock] = {}, log_phihat[kLogFourierBlock] = {}, w[kLogFourierBlock];
      for (int d = 0; d < dim; ++d) {
        for (std::size_t i = 0; i < m; ++i) {
          const double s = static_cast<const Real *>(p.tgt[d])[tgt_index_[j0 + i]];
          const double sr = s - ax[d].tgt_center;
          tgt_pos_[d * K_ + j0 + i] = sr * ax[d].tgt_scale;  // unshifted: the kernels add n2 / 2
          phase[i] += ax[d].src_center * s;
          w[i] = sr * ax[d].h1;
        }
        add_log_fourier(kernel, fourier, w, m, log_phihat);
      }
      for (std::size_t i = 0; i < m; ++i)
        tgt_factor_[j0 + i] = cpu::unit_phase<Real>(phase[i], cfg_.sign, std::exp(-log_phihat[i]));
    }

    HostVector<double> corr;
    for (int d = 0; d < dim; ++d) {
      // The same kernel on the same grid (new points over the same extents): the previous factors, copied (0.3
      // ms to compute for 8e4 cells in 1-d).
      correction_[d].allocate(ax[d].n1);
      if (same_kernel && previous->L_.axis[d].n1 == ax[d].n1 && previous->L_.axis[d].n2 == ax[d].n2) {
        std::copy(previous->correction_[d].get(), previous->correction_[d].get() + ax[d].n1, correction_[d].get());
        continue;
      }
      corr.resize(static_cast<std::size_t>(ax[d].n1));
      grid_correction(kernel, fourier, ax[d], corr.data(), threads);
      // Along the last dimension, (-1)^cell: the FFT's output moves by n2 / 2 (see the targets above).
      for (long long c = 0; c < ax[d].n1; ++c)
        correction_[d][c] = static_cast<Real>(d == dim - 1 && ((c - ax[d].n1 / 2) & 1) ? -corr[c] : corr[c]);
    }

    // The previous points' grid and FFT plans are taken over (the plan drops that engine next) where the plans
    // transform every line these points need; new plans are made on whichever grid before anything moves, so
    // that a failure leaves the previous points intact.
    GridFft fft = wanted_fft(s_lo, s_hi, threads);
    const bool reuse_fft = reuse && fft_covers(previous->fft_, fft);
    HostBuffer<Complex> fresh;
    Complex *grid = reuse ? previous->grid_.get() : nullptr;
    if (!reuse) {
      const std::size_t grid_cells = checked_mul(L_.n2_total, batch_, "maxbatchsize * grid cells");
      fresh.allocate(checked_add(grid_cells, cpu::kLineSlack, "grid cells"));
      std::fill(fresh.get() + grid_cells, fresh.get() + grid_cells + cpu::kLineSlack, Complex(0));
      grid = fresh.get();
    }
    if (!reuse_fft) make_fft(fft, grid);
    grid_ = reuse ? std::move(previous->grid_) : std::move(fresh);
    fft_ = reuse_fft ? std::move(previous->fft_) : std::move(fft);
  }

  void exec(const void *f_in, void *F_out) override {
    using Clock = std::chrono::steady_clock;
    const Complex *f = static_cast<const Complex *>(f_in);
    Complex *F = static_cast<Complex *>(F_out);
    auto ms = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    double spread_ms = 0, fft_ms = 0, interp_ms = 0;
    // Passes of batch_ transforms (the last may have fewer), each spread, transformed and interpolated.
    for (int first = 0; first < cfg_.ntransf; first += batch_) {
      const int count = std::min(batch_, cfg_.ntransf - first);
      const Clock::time_point start = Clock::now();
      for (int tr = 0; tr < count; tr += group_)
        spread_group(f + (first + tr) * N_, grid_.get() + tr * L_.n2_total, std::min(group_, count - tr));
      const Clock::time_point spread = Clock::now();
      run_fft(count);
      const Clock::time_point fft = Clock::now();
      interpolate(F + first * K_, count);
      spread_ms += ms(start, spread);
      fft_ms += ms(spread, fft);
      interp_ms += ms(fft, Clock::now());
    }
    if (!stage_times_) return;
    std::string grid;
    for (int d = 0; d < cfg_.dim; ++d) grid += (d ? "x" : "") + std::to_string(L_.axis[d].n2);
    auto at_both_ends = [&](int d, long long count) { return fft_lines_at_both_ends(L_, d, count); };
    std::fprintf(
        stderr,
        "sfft nufft3 exec stages, cpu, %s, dim %d, N %zu, K %zu, ntransf %d (passes of %d), W %d, sigma %.2f, grid %s, "
        "fft %s%s "
        "(source rows %lld x %lld, band %lld, ends %lld; line work %.3g) (ms): spread %.4f fft %.4f interp %.4f | "
        "total "
        "%.4f\n",
        sizeof(Real) == 8 ? "double" : "single", cfg_.dim, N_, K_, cfg_.ntransf, batch_, L_.kernel.width, L_.upsampfac,
        grid.c_str(), fft_.pruned ? "pruned" : "full", fft_.per_grid ? " per grid" : "",
        cfg_.dim > 1 ? at_both_ends(0, fft_.rows[0]) : 0, cfg_.dim > 2 ? at_both_ends(1, fft_.rows[1]) : 0, fft_.band,
        cfg_.dim > 2 ? at_both_ends(1, fft_.ends) : 0, fft_line_work(L_, fft_), spread_ms, fft_ms, interp_ms,
        spread_ms + fft_ms + interp_ms);
  }

  void zero_output(void *F, std::size_t count) override { std::memset(F, 0, count * sizeof(Complex)); }

 private:
  // The grid's FFT, over the batch_ grids of an exec pass. 1-D: one batched plan. 2-D and 3-D: axis by axis, each
  // over every grid, over only the lines that hold sources or feed a cell the interpolation reads (the other cells are
  // left unfinished; all lines where the points fill the grid). Sources fill the first and the last n1/2 indices
  // of each dimension (rows); the targets read a band of the last dimension about n2/2 (the deconvolution's
  // alternating sign moved the spectrum there) and, in 3-D, the first and last `ends` indices of dimension 1.
  // 2-D: along dimension 1 on the source rows of dimension 0, then along dimension 0 on the band. 3-D: along
  // dimension 2 on the lines whose dimensions 0 and 1 both hold sources, along dimension 1 on the source rows of
  // dimension 0 crossing the band, along dimension 0 on the `ends` of dimension 1 crossing the band. The passes
  // along strided dimensions go through buffers (fftw_lines.hpp).
  // With at least as many grids as threads (and few left over), each thread transforms whole grids, all axes of
  // one before the next, with single-threaded plans and buffers of its own (per_grid): the axis passes over all
  // the grids stream the pass's grids through the cache once per axis (8 grids of 40x42x42 single, 2 threads:
  // 4.5-5.3 ms against 6.5-9.4 ms; docs/nufft3.md).
  struct GridFft : FftLines {
    fftw::Plan<Real> full;        // 1-D
    fftw::Plan<Real> along_last;  // 2-D, 3-D: the contiguous pass
    fftw::BufferedLines<Real> strided[2];
    bool per_grid = false;
    int workers = 1;  // threads running the transforms (per_grid: one buffer slot each in strided)
  };

  // The blocks of lines at the ends of dimension d that a count of FftLines stands for: their first indices (-1: one
  // block, the whole axis).
  std::array<long long, 2> end_starts(int d, long long count) const {
    const long long n = L_.axis[d].n2;
    return {0, count >= n ? -1 : n - count};
  }

  // The lines these points need (SFFT_NUFFT3_FFT=full: every line, for A/B measurements) and how `threads` share
  // them: per grid where at most a fifth of the thread-rounds over the batch_ grids would idle (8 grids on 2
  // threads; not 3 on 2, which measured even).
  GridFft wanted_fft(const double *s_lo, const double *s_hi, int threads) const {
    GridFft f;
    static_cast<FftLines &>(f) = env_value("SFFT_NUFFT3_FFT") == "full" ? all_fft_lines(L_) : fft_lines(L_, s_lo, s_hi);
    const int rounds = (batch_ + threads - 1) / threads;
    f.per_grid = cfg_.dim > 1 && batch_ >= threads && 4 * rounds * threads <= 5 * batch_;
    f.workers = threads;
    return f;
  }

  // Whether `have` (the previous points' plans, on a grid of the same shape) transforms every line `want` needs,
  // shared among the threads the same way.
  static bool fft_covers(const GridFft &have, const GridFft &want) {
    return have.per_grid == want.per_grid && have.workers == want.workers && have.rows[0] >= want.rows[0] &&
           have.rows[1] >= want.rows[1] && have.ends >= want.ends && have.band_lo <= want.band_lo &&
           have.band_lo + have.band >= want.band_lo + want.band;
  }

  // Plans f's transforms on `grid` (FFTW_ESTIMATE leaves it untouched). Shared passes take the batch_ grids at once
  // (each axis's outermost batch dimension): grid by grid, ntransf 16 lost what pruning saved. rows and ends below
  // the axis length are the count at each end (two blocks of lines), the axis length one block.
  void make_fft(GridFft &f, Complex *grid) const {
    const int dim = cfg_.dim, sign = cfg_.sign;
    std::ptrdiff_t n[3] = {1, 1, 1};
    for (int d = 0; d < dim; ++d) n[d] = static_cast<std::ptrdiff_t>(L_.axis[d].n2);
    const auto dist = static_cast<std::ptrdiff_t>(L_.n2_total);  // above 2^31 for large grids
    if (dim == 1) {
      f.full = fftw::Plan<Real>::many_dft(1, n, batch_, grid, nullptr, 1, dist, grid, nullptr, 1, dist, sign,
                                          FFTW_ESTIMATE, f.workers);
      return;
    }
    using Plan = fftw::Plan<Real>;
    using Strided = fftw::BufferedLines<Real>;
    // per_grid: one grid's lines; the contiguous pass single-threaded (the workers execute it at once on their
    // grids), the strided ones with a buffer slot a worker.
    const std::ptrdiff_t transforms = f.per_grid ? 1 : batch_;
    const int contiguous_threads = f.per_grid ? 1 : f.workers;
    if (dim == 2) {
      const std::ptrdiff_t c0[2] = {transforms, f.rows[0]}, d0[2] = {dist, n[1]};
      f.along_last = Plan::lines(n[1], 1, 2, c0, d0, grid, sign, FFTW_ESTIMATE, contiguous_threads);
      const std::ptrdiff_t c1[2] = {transforms, f.band}, d1[2] = {dist, 1};
      f.strided[0] = Strided(n[0], n[1], 2, c1, d1, sign, f.workers);
      return;
    }
    const std::ptrdiff_t plane = n[1] * n[2];
    const std::ptrdiff_t c0[3] = {transforms, f.rows[0], f.rows[1]}, d0[3] = {dist, plane, n[2]};
    f.along_last = Plan::lines(n[2], 1, 3, c0, d0, grid, sign, FFTW_ESTIMATE, contiguous_threads);
    const std::ptrdiff_t c1[3] = {transforms, f.rows[0], f.band}, d1[3] = {dist, plane, 1};
    f.strided[0] = Strided(n[1], n[2], 3, c1, d1, sign, f.workers);
    const std::ptrdiff_t c2[3] = {transforms, f.ends, f.band}, d2[3] = {dist, n[2], 1};
    f.strided[1] = Strided(n[0], plane, 3, c2, d2, sign, f.workers);
  }

  // The first `count` grids' FFTs (shared passes transform all batch_ grids: a short last pass's extra grids hold
  // the previous pass's values and are not read).
  void run_fft(int count) {
    Complex *grid = grid_.get();
    if (cfg_.dim == 1) {
      fft_.full.execute_dft(grid, grid);
      return;
    }
    if (!fft_.per_grid) {
      transform_grids(grid, 0);
      return;
    }
#pragma omp parallel for num_threads(usable_threads(fft_.workers)) schedule(static)
    for (int g = 0; g < count; ++g)
      transform_grids(grid + static_cast<std::size_t>(g) * L_.n2_total, omp_get_thread_num());
  }

  // The axis passes of fft_ on the grids at `grid` (one or batch_ of them, as the plans were made); per_grid, on
  // the calling worker, through its buffer slot.
  void transform_grids(Complex *grid, int slot) const {
    const int dim = cfg_.dim;
    auto strided = [&](int axis, Complex *at) {
      if (fft_.per_grid) {
        fft_.strided[axis].execute_on(at, slot);
      } else {
        fft_.strided[axis].execute(at);
      }
    };
    std::size_t n[3] = {1, 1, 1};
    for (int d = 0; d < dim; ++d) n[d] = static_cast<std::size_t>(L_.axis[d].n2);
    auto for_ends = [&](int d, long long count, auto &&body) {
      for (long long first : end_starts(d, count))
        if (first >= 0) body(static_cast<std::size_t>(first));
    };
    Complex *band = grid + fft_.band_lo;
    if (dim == 2) {
      for_ends(0, fft_.rows[0], [&](std::size_t r) { fft_.along_last.execute_dft(grid + r * n[1], grid + r * n[1]); });
      strided(0, band);
      return;
    }
    const std::size_t plane = n[1] * n[2];
    for_ends(0, fft_.rows[0], [&](std::size_t r0) {
      for_ends(1, fft_.rows[1], [&](std::size_t r1) {
        Complex *at = grid + r0 * plane + r1 * n[2];
        fft_.along_last.execute_dft(at, at);
      });
    });
    for_ends(0, fft_.rows[0], [&](std::size_t r0) { strided(0, band + r0 * plane); });
    for_ends(1, fft_.ends, [&](std::size_t e1) { strided(1, band + e1 * n[2]); });
  }

  struct Chunk {
    std::size_t begin = 0, end = 0;
    long long row_lo = 0, rows = 0;
    std::size_t offset = 0;
  };

  // Spreads `count` transforms (at most group_): strengths f + g N into grid + g n2_total.
  void spread_group(const Complex *f, Complex *grid, int count) {
    const int dim = cfg_.dim;
    const DimLayout *ax = L_.axis;
    const long long n1y = dim > 1 ? ax[1].n1 : 1, n1z = dim > 2 ? ax[2].n1 : 1;
    const int threads = usable_threads(cfg_.opts.threads);

#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const Chunk &ch = chunks_[c];
      if (ch.begin == ch.end) continue;
      Complex *sub = subgrids_.get() + ch.offset;
      for (int g = 0; g < count; ++g) {
        Complex *sub_g = sub + static_cast<std::size_t>(g) * sub_cells_;
        std::fill(sub_g, sub_g + static_cast<std::size_t>(ch.rows) * row_size_ + cpu::kLineSlack, Complex(0));
      }
      cpu::SpreadTask<Real> task{};
      task.kernel = horner_view_;
      for (int d = 0; d < dim; ++d) task.pos[d] = src_pos_.get() + d * N_;
      task.index = src_index_.get();
      task.phase = src_phase_.get();
      task.f = f;
      task.begin = ch.begin;
      task.end = ch.end;
      task.offset[0] = ax[0].n1 / 2 - ch.row_lo;
      task.offset[1] = n1y / 2;
      task.offset[2] = n1z / 2;
      task.stride0 = row_size_;
      task.stride1 = line_cells_;
      task.sub = reinterpret_cast<Real *>(sub);
      task.count = count;
      task.f_stride = N_;
      task.sub_stride = sub_cells_;
      kernels_.spread(task);
    }

    if (dim == 1) {
      reduce_1d(grid, count, threads);
      return;
    }
    // Row-parallel reduction of the subgrids, deconvolution and placement into the zero-padded FFT grid: source
    // cell c of an axis goes to grid index (c - n1/2) mod n2, two runs a line (place_line), and only the cells no
    // source cell reaches are zeroed. (Zeroing each row whole, then storing its cells one by one, each index
    // wrapped on its own, took 3.7 % of a 2-D ntransf 16 single exec's samples on two threads, 4.4 % on one.)
    const long long n2y = dim > 1 ? ax[1].n2 : 1, n2z = dim > 2 ? ax[2].n2 : 1;
    const std::size_t row2 = static_cast<std::size_t>(n2y * n2z);
    const Real *cy = dim > 1 ? correction_[1].get() : nullptr;
    const Real *cz = dim > 2 ? correction_[2].get() : nullptr;
#pragma omp parallel for num_threads(threads) schedule(static) collapse(2)
    for (int g = 0; g < count; ++g) {
      for (long long r = 0; r < ax[0].n2; ++r) {
        Complex *dst_row = grid + static_cast<std::size_t>(g) * L_.n2_total + static_cast<std::size_t>(r) * row2;
        long long c1 = r < ax[0].n2 / 2 ? r : r - ax[0].n2;  // centred cell
        long long src_row = c1 + ax[0].n1 / 2;
        bool any = false;
        Complex *acc = row_buffer_.get() + static_cast<std::size_t>(omp_get_thread_num()) * row_size_;
        if (src_row >= 0 && src_row < ax[0].n1) {
          std::fill(acc, acc + row_size_, Complex(0));
          for (const Chunk &ch : chunks_) {
            if (ch.begin == ch.end || src_row < ch.row_lo || src_row >= ch.row_lo + ch.rows) continue;
            const Complex *s = subgrids_.get() + static_cast<std::size_t>(g) * sub_cells_ + ch.offset +
                               static_cast<std::size_t>(src_row - ch.row_lo) * row_size_;
            for (std::size_t i = 0; i < row_size_; ++i) acc[i] += s[i];
            any = true;
          }
        }
        if (!any) {
          std::fill(dst_row, dst_row + row2, Complex(0));
          continue;
        }
        const Real cx = correction_[0][src_row];
        if (dim == 2) {
          place_line(dst_row, acc, n1y, n2y, [&](long long iy) { return cx * cy[iy]; });
          continue;
        }
        const long long half_y = n1y / 2;
        std::fill(dst_row + (n1y - half_y) * n2z, dst_row + (n2y - half_y) * n2z, Complex(0));
        for (long long iy = 0; iy < n1y; ++iy) {
          const Real cxy = cx * cy[iy];
          place_line(dst_row + wrap(iy - half_y, n2y) * n2z, acc + iy * line_cells_, n1z, n2z,
                     [&](long long iz) { return cxy * cz[iz]; });
        }
      }
    }
  }

  // dst[(i - n1/2) mod n2] = src[i] * factor(i) for i < n1 (n1 <= n2), the other n2 - n1 cells of dst zeroed.
  template <class Factor>
  static void place_line(Complex *dst, const Complex *src, long long n1, long long n2, Factor factor) {
    const long long half = n1 / 2;
    for (long long i = half; i < n1; ++i) dst[i - half] = src[i] * factor(i);
    std::fill(dst + (n1 - half), dst + (n2 - half), Complex(0));
    for (long long i = 0; i < half; ++i) dst[n2 - half + i] = src[i] * factor(i);
  }

  // spread_group's reduction in 1-D, where a row is one cell (the row loop's bookkeeping per cell took 7 % of a
  // uniform 1-D double exec at W = 13): blocks of cells, each the sum of the chunks' subgrids that cover it,
  // deconvolved and placed at grid index (c - n1/2) mod n2; the n2 - n1 indices no cell maps to are zeroed.
  void reduce_1d(Complex *grid, int count, int threads) {
    constexpr long long kCells = 4096;
    const long long n1 = L_.axis[0].n1, n2 = L_.axis[0].n2, half = n1 / 2;
    const long long blocks = (n1 + kCells - 1) / kCells;
    const Real *corr = correction_[0].get();
#pragma omp parallel for num_threads(threads) schedule(static) collapse(2)
    for (int g = 0; g < count; ++g) {
      for (long long b = 0; b < blocks; ++b) {
        Complex *out = grid + static_cast<std::size_t>(g) * L_.n2_total;
        const Complex *subs = subgrids_.get() + static_cast<std::size_t>(g) * sub_cells_;
        const long long lo = b * kCells, hi = std::min(n1, lo + kCells);
        // Cells [lo, hi) in at most two runs of consecutive grid indices (split where c - n1/2 turns >= 0).
        const long long split = std::clamp(half, lo, hi);
        const long long run_lo[2] = {lo, split}, run_hi[2] = {split, hi};
        for (int r = 0; r < 2; ++r) {
          if (run_lo[r] == run_hi[r]) continue;
          Complex *dst = out + (run_lo[r] - half + (r == 0 ? n2 : 0));
          const long long cells = run_hi[r] - run_lo[r];
          std::fill(dst, dst + cells, Complex(0));
          for (const Chunk &ch : chunks_) {
            const long long from = std::max(run_lo[r], ch.row_lo), to = std::min(run_hi[r], ch.row_lo + ch.rows);
            if (ch.begin == ch.end || from >= to) continue;
            const Complex *src = subs + ch.offset + static_cast<std::size_t>(from - ch.row_lo);
            Complex *d = dst + (from - run_lo[r]);
            for (long long i = 0; i < to - from; ++i) d[i] += src[i];
          }
          const Real *cc = corr + run_lo[r];
          for (long long i = 0; i < cells; ++i) dst[i] *= cc[i];
        }
      }
    }
    // Grid indices [n1 - n1/2, n2 - n1/2): no source cell.
    const long long gap_lo = n1 - half, gap = n2 - n1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int g = 0; g < count; ++g) {
      Complex *out = grid + static_cast<std::size_t>(g) * L_.n2_total + gap_lo;
      std::fill(out, out + gap, Complex(0));
    }
  }

  // Outputs F (count x K) of the count transforms whose grids the pass holds.
  void interpolate(Complex *F, int count) {
    const int dim = cfg_.dim;
    const int threads = usable_threads(cfg_.opts.threads);
    const std::size_t per_block = target_block(K_, threads), blocks = (K_ + per_block - 1) / per_block;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (std::size_t blk = 0; blk < blocks; ++blk) {
      cpu::InterpTask<Real> task{};
      task.kernel = horner_view_;
      for (int d = 0; d < 3; ++d) {
        task.pos[d] = d < dim ? tgt_pos_.get() + d * K_ : nullptr;
        task.n2[d] = d < dim ? L_.axis[d].n2 : 1;
      }
      task.grid = reinterpret_cast<const Real *>(grid_.get());
      task.n2_total = L_.n2_total;
      task.ntransf = count;
      task.index = tgt_index_.get();
      task.factor = tgt_factor_.get();
      task.begin = blk * per_block;
      task.end = std::min(K_, task.begin + per_block);
      task.K = K_;
      task.F = F;
      kernels_.interpolate(task);
    }
  }

  Config cfg_;
  Layout L_;
  std::size_t N_ = 0, K_ = 0, row_size_ = 1, sub_cells_ = 0;  // sub_cells_: one transform's subgrids
  std::size_t line_cells_ = 1;                                // subgrid line stride (3-d: cpu::odd_blocks)
  int batch_ = 1;                                             // transforms per pass (transforms_per_pass)
  int group_ = 1;                                             // transforms spread at once
  HostBuffer<std::size_t> src_index_;                         // sorted position -> original source index
  HostBuffer<double> src_pos_;                                // dim x N grid coordinates (centred cells), sorted
  HostBuffer<Complex> src_phase_;                             // exp(i sign D.(x - C)), sorted
  HostBuffer<std::size_t> tgt_index_;                         // sorted position -> original target index
  HostBuffer<double> tgt_pos_;                                // dim x K periodic grid coordinates, sorted
  HostBuffer<Complex> tgt_factor_;                            // exp(i sign C.s) / prod phihat, sorted
  HostBuffer<Real> correction_[3];                            // per-dim grid deconvolution, n1 entries
  HostBuffer<Real> horner_;                                   // kernel polynomial table (horner.hpp)
  double tap_tol_ = 0;                                        // the tap tolerance horner_ was fitted to
  FourierFit fourier_;                                        // phihat's fit (kernel.hpp)
  cpu::HornerView<Real> horner_view_{};
  cpu::Kernels<Real> kernels_{};
  std::vector<Chunk> chunks_;
  HostBuffer<Complex> subgrids_;
  HostBuffer<Complex> row_buffer_;  // one source-grid row per thread
  HostBuffer<Complex> grid_;        // batch_ x n2 cells
  GridFft fft_;
  bool stage_times_ = false;
};

}  // namespace

namespace cpu {

template <class Real>
Kernels<Real> select_kernels(int width, int dim) {
  switch (cpu_isa("SFFT_NUFFT3_ISA")) {
#if defined(SFFT_X86_VARIANTS)
    case CpuIsa::kAvx512:
      return avx512::kernels<Real>(width, dim);
    case CpuIsa::kAvx2:
      return avx2::kernels<Real>(width, dim);
#endif
    default:
      return generic::kernels<Real>(width, dim);
  }
}

template Kernels<float> select_kernels<float>(int, int);
template Kernels<double> select_kernels<double>(int, int);

}  // namespace cpu

std::unique_ptr<Engine> make_cpu_engine(const Config &c) {
  if (c.is_double) return std::make_unique<CpuEngine<double>>(c);
  return std::make_unique<CpuEngine<float>>(c);
}

}  // namespace sfft::nufft3
