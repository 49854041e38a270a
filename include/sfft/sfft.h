/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sfft — structured Fourier transforms on CPU (FFTW) and CUDA (cuFFT).
 *
 * The one public header. Pure C99; valid C++; includes no CUDA header.
 *
 * Conventions shared by every family:
 *   - Every function returns an sfft_status. On failure, sfft_last_error() gives a thread-local
 *     human-readable detail; outputs are left untouched and plans stay usable.
 *   - Arrays are C-order (row-major). Complex numbers are interleaved (re, im) pairs, i.e. the layout
 *     of C99 `float complex` / `double complex`, `std::complex`, `fftw_complex` and `cufftComplex`.
 *   - Pointers may be host memory, CUDA device memory or CUDA managed memory unless a comment says
 *     otherwise; the library detects which. The caller owns every buffer it passes.
 *   - opts may be NULL (defaults). Plans/handles are used by one thread at a time; distinct handles are
 *     independent and may be used concurrently. A call on a plan while another call on the same plan is
 *     still running (from inside that plan's own callback, or from a second thread) returns
 *     SFFT_ERROR_INVALID_ARGUMENT without touching the plan; destroying such a plan is refused likewise.
 *   - A handle is an opaque value, not the plan's address, and is never issued twice: a destroyed handle
 *     gives SFFT_ERROR_INVALID_ARGUMENT in every later call, whatever plans have been created since.
 */
#ifndef SFFT_SFFT_H
#define SFFT_SFFT_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(SFFT_BUILDING_LIBRARY)
#define SFFT_API __declspec(dllexport)
#else
#define SFFT_API __declspec(dllimport)
#endif
#else
#define SFFT_API __attribute__((visibility("default")))
#endif

#define SFFT_VERSION_MAJOR 0
#define SFFT_VERSION_MINOR 1
#define SFFT_VERSION_PATCH 0
/* MAJOR*10000 + MINOR*100 + PATCH, the value sfft_version() returns. */
#define SFFT_VERSION_NUMBER (SFFT_VERSION_MAJOR * 10000 + SFFT_VERSION_MINOR * 100 + SFFT_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================== Common ===================================== */

typedef enum sfft_status {
  SFFT_SUCCESS = 0,
  SFFT_ERROR_INVALID_ARGUMENT = 1, /* NULL pointer, bad size/shape/dtype, NaN input, overlap, ... */
  SFFT_ERROR_UNSUPPORTED = 2,      /* valid request this build or backend cannot serve */
  SFFT_ERROR_OUT_OF_MEMORY = 3,    /* host or device allocation failed; message gives the size */
  SFFT_ERROR_NO_DEVICE = 4,        /* CUDA backend asked for but no usable GPU */
  SFFT_ERROR_DEVICE = 5,           /* a CUDA/cuFFT call failed */
  SFFT_ERROR_INTERNAL = 6          /* a bug in sfft; please report with sfft_last_error() */
} sfft_status;

typedef enum sfft_dtype {
  SFFT_FLOAT32 = 1,   /* float */
  SFFT_FLOAT64 = 2,   /* double */
  SFFT_COMPLEX64 = 3, /* 2 x float, interleaved */
  SFFT_COMPLEX128 = 4 /* 2 x double, interleaved */
} sfft_dtype;

/* Backends. One rule for every family, applied by the call that fixes where the work runs (each shift call,
   sfft_create, nufft3_setpts, spfft2d_create / spfft2d_create_from_mtx), to the arrays that call receives:
     CPU:  the CPU; CUDA device memory among them is refused (SFFT_ERROR_INVALID_ARGUMENT).
     CUDA: opts->device; SFFT_ERROR_UNSUPPORTED without CUDA support, SFFT_ERROR_NO_DEVICE without that GPU.
     AUTO: follows the memory: CUDA when any of the arrays is device or managed memory, else the CPU; a call that
           receives no arrays (sfft_create, spfft2d_create_from_mtx) takes CUDA when opts->device is a usable GPU.
   A CUDA plan runs on opts->device and reaches host, managed and that device's memory: device memory of another
   GPU is refused with SFFT_ERROR_INVALID_ARGUMENT naming the array (here and at every exec). */
typedef enum sfft_backend {
  SFFT_BACKEND_AUTO = 0,
  SFFT_BACKEND_CPU = 1,
  SFFT_BACKEND_CUDA = 2 /* host pointers are staged through the device */
} sfft_backend;

typedef struct sfft_options {
  size_t struct_size;   /* sizeof(sfft_options) as the caller was compiled; lets the struct grow */
  sfft_backend backend; /* see "Backends" above */
  int device;           /* CUDA device ordinal */
  void *stream;         /* a cudaStream_t, or NULL for the default stream */
  int threads;          /* CPU threads, 0 = all hardware threads; see "Threads, fork and processes" */
  uint64_t seed;        /* for randomized algorithms; same seed => same result */
} sfft_options;

/* Fills *opts with defaults (AUTO backend, device 0, default stream, all threads, seed 0) and sets
   struct_size. NULL is ignored. sfft_options_init(opts) is a macro passing sizeof(sfft_options), so the library
   never writes past the struct this header declares (see "Option structs across versions" below); the
   function of that name exists for callers that bind symbols (ctypes, Fortran), and fills only the fields
   of sfft 0.1's layout: such callers should call sfft_options_init_sized with their struct's size. */
SFFT_API void sfft_options_init(sfft_options *opts);
SFFT_API void sfft_options_init_sized(sfft_options *opts, size_t struct_size);
#define sfft_options_init(opts) sfft_options_init_sized((opts), sizeof(sfft_options))

/* Option structs across versions (sfft_options, sfft_sparse_options, nufft3_options, sfft_build_info).
   Within SONAME libsfft.so.0 a struct only grows: new fields are appended, never reordered, resized or
   removed, and a zero in a new field means "the default". struct_size records the size the caller was
   compiled with. The *_init_sized functions write exactly struct_size bytes (zeros past the fields the
   library knows). Reading, the library takes the fields the caller's size covers and defaults for the
   rest; a caller's struct larger than the library's is accepted when its unknown tail is all zero and
   refused with SFFT_ERROR_INVALID_ARGUMENT otherwise (settings this older library would ignore). A
   struct_size smaller than the first field after struct_size is SFFT_ERROR_INVALID_ARGUMENT. Functions
   and enum values are only added; an incompatible change gets a new SONAME. */

/* What this build of the library contains and what this host provides; usable before any plan exists. */
enum {
  SFFT_FAMILY_SHIFT = 1,  /* fftshift_nd / ifftshift_nd */
  SFFT_FAMILY_SPARSE = 2, /* sfft_create / sfft_exec */
  SFFT_FAMILY_NUFFT3 = 4, /* nufft3_* */
  SFFT_FAMILY_SPFFT2D = 8 /* spfft2d_* */
};
typedef struct sfft_build_info {
  size_t struct_size;          /* sizeof(sfft_build_info) as the caller was compiled */
  int version;                 /* SFFT_VERSION_NUMBER of the loaded library */
  uint32_t families;           /* SFFT_FAMILY_* bits of the families compiled in */
  int cuda_compiled;           /* 1: the CUDA backend (plugin libsfft_cuda.so.0) was built */
  int cuda_loaded;             /* 1: the plugin and the CUDA runtime/cuFFT it needs loaded on this host
                                  (asking loads them; CPU-only hosts get 0 and the reason below) */
  int cuda_device_count;       /* usable CUDA devices (0 unless cuda_loaded) */
  int cuda_runtime_version;    /* cudaRuntimeGetVersion, e.g. 13000; 0 unless cuda_loaded */
  int cuda_driver_version;     /* cudaDriverGetVersion; 0 without a driver */
  int cufft_version;           /* cufftGetVersion; 0 unless cuda_loaded */
  char cuda_architectures[64]; /* the GPU architectures compiled for, e.g. "80;90"; "" without CUDA */
  char fft_library[64];        /* the CPU FFT library, e.g. "fftw-3.3.10-sse2-avx" */
  char cuda_unavailable[256];  /* why cuda_loaded is 0 ("" when it is 1), e.g. a missing libcudart */
} sfft_build_info;

/* Fills *info (struct_size bytes, see above: call with sizeof *info). Loads the CUDA backend if it is not
   loaded yet. SFFT_ERROR_INVALID_ARGUMENT for NULL or a struct_size below 16. */
SFFT_API sfft_status sfft_get_build_info(sfft_build_info *info, size_t struct_size);

/* Threads, fork and processes.
   - opts->threads: 0 = the hardware thread count; a positive value is used up to 4 x the hardware thread
     count and capped there (INT_MAX is valid and means "as many as help"); a negative value is
     SFFT_ERROR_INVALID_ARGUMENT. It bounds the OpenMP and FFTW threads of the call or plan (OMP_THREAD_LIMIT
     still applies).
   - Thread safety: fftshift_nd / ifftshift_nd may run concurrently from any threads (on distinct output
     buffers). An nufft3, spfft2d or sparse-FFT plan is used by one thread at a time; distinct plans run
     concurrently. The application may use FFTW itself at the same time: sfft serialises its own FFTW planning
     and switches on FFTW's planner lock (fftw_make_planner_thread_safe).
   - FFTW's process-wide planner thread count (fftw_plan_with_nthreads) is set for each sfft plan and then
     restored to the application's value (read with fftw_planner_nthreads, FFTW >= 3.3.9; an older FFTW is
     left at its default, 1).
   - fork(): in a child forked after the library was loaded (Python multiprocessing's default), the inherited
     plans and new ones work on the CPU backend, single-threaded whatever opts->threads says: the parent's
     OpenMP and FFTW worker threads do not exist there, and the runtimes would wait for them forever. An
     inherited multithreaded FFTW plan is re-planned single-threaded (FFTW_ESTIMATE) at its first use in the
     child. The CUDA backend follows CUDA's rule: a child cannot use its parent's CUDA context (use the "spawn"
     or "forkserver" start methods, or exec). */

/* Static, never-NULL name and description of a status code ("SFFT_ERROR_INVALID_ARGUMENT: ..."). */
SFFT_API const char *sfft_status_string(sfft_status s);
/* Detail of this thread's last failure (empty string if none). Valid until this thread's next sfft call. */
SFFT_API const char *sfft_last_error(void);
/* "MAJOR.MINOR.PATCH" of the loaded library, and its SFFT_VERSION_NUMBER. */
SFFT_API const char *sfft_version_string(void);
SFFT_API int sfft_version(void);
/* Number of usable CUDA devices; 0 when built without CUDA or when no driver/GPU is present. */
SFFT_API int sfft_cuda_device_count(void);

/* ================================ N-d fftshift / ifftshift ================================ */

/* fftshift / ifftshift of a C-order array of `ndim` dims (1..8) with extents `shape` (each >= 0).
   axes_mask bit d set = shift along dim d; 0 = all dims. Matches NumPy's np.fft.fftshift(a, axes) and
   np.fft.ifftshift exactly: along a shifted axis of extent n, fftshift moves element i to (i + n/2) % n
   (integer division), ifftshift moves i to (i + (n+1)/2) % n; they are inverses and equal for even n.
   out == in shifts in place; any other overlap of the two buffers is SFFT_ERROR_INVALID_ARGUMENT.
   Zero-size extents are a valid no-op. Every sfft_dtype. Host, device or managed pointers (in and out
   of the same kind). CUDA backend: asynchronous on opts->stream when both pointers are device memory;
   host pointers are staged through the device and the call returns when out is written.
   In place, every element is read and written once. Extra memory (allocated and freed by the call, on
   the device for the CUDA backend, on the host for the CPU backend): none when every shifted extent is
   even, nor on the CUDA backend when a single odd extent of at most 15 is shifted and the rows under it
   are not short; otherwise, with n the odd extent of the first shifted axis (in C order) whose extent is
   odd and size the element count, at most size/n + size/32 elements (saved hyperplanes of that axis)
   and, on the CPU, a buffer of up to 128 KiB per thread; on the CPU, where size/n would be 64 MiB or more and
   that axis is the first of at most 3 dims whose chunks of rows span 4 KiB or more (e.g. 3 x 4096 x 4096),
   instead a buffer of up to 256 KiB per thread. The CUDA backend takes its temporaries (these, and the staging
   buffers of host pointers) from a memory pool of the library's own per device that keeps up to 64 MiB
   mapped between calls, which spares each call the mapping of fresh memory; nufft3_setpts uses it too. The
   CPU backend likewise keeps its last block of saved hyperplanes, when at most 64 MiB, for the next call. */
SFFT_API sfft_status fftshift_nd(void *out, const void *in, int ndim, const int64_t *shape, uint32_t axes_mask,
                                 sfft_dtype dtype, const sfft_options *opts);
SFFT_API sfft_status ifftshift_nd(void *out, const void *in, int ndim, const int64_t *shape, uint32_t axes_mask,
                                  sfft_dtype dtype, const sfft_options *opts);

/* ============================ Type-3 NUFFT (nufft3) ============================ */

/* F[k] = sum_{i<N} f[i] * exp(sign * 1i * (x[i]*s[k] + y[i]*t[k] + z[i]*u[k])), k < K, in dim 1, 2 or 3
   (only the first dim coordinate arrays are used), to relative l2 tolerance tol, by spreading onto an
   oversampled grid, an FFT and interpolation (the FINUFFT type-3 structure). Accuracy: with many points
   (thousands, well spread, phases x*s far from the precision's limit) the relative l2 error lands in
   [tol/10, tol]: the kernel is the narrowest whose predicted error reaches tol, not one with digits to spare
   (tests: 1-3 D, both precisions, half-decade tolerances; benchmarks/nufft3_bench.py reports where it lands
   on its suite). For any number of points, down to a single source, the worst case is bounded:
   ||F - F_exact||_2 <= 10 tol max(||F_exact||_2, sqrt(K) sum_i |f[i]| / 2) (tests: 1 to 8 sources in
   1-3 D; with many points the first term dominates). Clustered points average their errors out less than
   well-spread ones: on the benchmark suites' dense 3-D clusters, double, up to 2.6 tol. Each term's error is a
   fraction of that term, so where the outputs cancel, the second term (as FINUFFT states its error) applies.
   Near tol = 1e-14 rounding of the
   phases x*s (relative 1e-16 of |x*s|) adds to it. F_exact is the sum for the coordinates as given. The CPU backend
   holds the points' grid positions in double in both precisions, so large phases cost single precision no
   accuracy (uniform 1-D, |x s| up to 6e5, tol 1e-5: 9.6e-6; the CPU suite: 202 of 208 single-precision runs
   from tol 1e-2 to 1e-6 within tol, the worst 10 tol at 1e-6 on dense 3-D clusters). The CUDA backend holds them in
   the working precision (relative u: 6e-8 in float), which shifts each phase by up to u |x*s|: no tol gets
   its error below about u X S / 6 for points spread over |x| <= X, |s| <= S (per dimension, added up), so
   large phases in single precision have a floor far above tol there (measured on the H100 suite: 1.2e-4 with
   X S = 1.2e4, 6.5e-3 with X S = 6e5; cuFINUFFT on the same float coordinates: 8.8e-4 and 3.4e-2); a tol
   below it only costs time.
   Phases x*s beyond the double range are refused.
   Strengths whose sum comes within ~1e12 of the type's largest value may overflow on the grid (the
   deconvolution factors exceed 1), and strengths all within ~1e12 of its smallest normal value may
   underflow to zero.
   dtype SFFT_COMPLEX64: strengths/outputs are complex float, coordinates float; tol in [1e-6, 1).
   dtype SFFT_COMPLEX128: complex double, coordinates double; tol in [1e-14, 1).
   The phase x*s is in radians; coordinates may be any finite reals (nothing is assumed periodic). */
typedef struct nufft3_plan_s *nufft3_plan;

typedef enum nufft3_kernel {
  NUFFT3_KERNEL_ES = 0,       /* "exponential of semicircle" (FINUFFT), width from tol: the default */
  NUFFT3_KERNEL_GAUSSIAN = 1, /* the Capozzoli et al. Gaussian scheme with exp(sigma x^2)/exp(tau s^2) compensation;
                                 its compensation's dynamic range limits it (double: about 1e-9 in 1-D and 2-D,
                                 1e-7 in 3-D; single: 1e-5, 1e-4, 1e-3; a smaller tol is refused) */
  NUFFT3_KERNEL_PSWF = 2      /* the prolate spheroidal wave function psi_0 (FINUFFT 2.5's kernel): width and
                                 bandwidth from tol under the same contract as ES. Its error per cell of width is
                                 smaller: tol from 1e-2 to 1e-6 takes one cell less per dimension (3-D: 6 cells
                                 at 1e-5, ES 7), the achieved error then nearer tol; below 1e-7 (double) the
                                 same widths as ES at about half its error. On tightly clustered points, whose
                                 errors average out less, it exceeds tol more often than ES (up to 1.5 tol at
                                 1e-3 and 1e-5 on dense 3-D clusters; ES 0.2-0.4 tol). At equal achieved error
                                 it ran about as fast as ES on both backends' suites (benchmarks/RESULTS.md).
                                 upsampfac as for ES */
} nufft3_kernel;

typedef struct nufft3_options {
  size_t struct_size;   /* sizeof(nufft3_options) as the caller was compiled */
  int ntransf;          /* strength vectors per nufft3_exec (batch), >= 1; default 1 */
  nufft3_kernel kernel; /* default NUFFT3_KERNEL_ES */
  double upsampfac;     /* grid oversampling sigma (the Gaussian scheme's R). ES: 0 = automatic (one of 2,
                           1.75, 1.6, 1.5, 1.4, 1.3 and 1.25, on the CPU backend also 2.5 and 3, each with the
                           narrowest kernel that meets tol there, whichever the backend predicts cheapest for
                           the points and ntransf; below 2 only for tol >= 2e-8 in double, 1e-4 in single
                           (CPU backend: from 2e-6 to 1e-4 also 1.5 to 1.75, where few sources share a grid cell);
                           above 2 a narrower kernel on a grid of up to (sigma / 2)^dim times the cells, taken
                           where spreading outweighs the FFT, e.g. clustered points; PSWF: 2 or 1.25), else
                           [1.25, 4];
                           Gaussian: 0 = 2.25, else (2, 4]. A sigma below 2 cannot reach every tol (1.25
                           reaches about 1e-10 in 1-D and 2-D and 1e-8 in 3-D in double, 1e-4 in 2-D and 3-D
                           in single): nufft3_create / nufft3_set_options then fail with
                           SFFT_ERROR_INVALID_ARGUMENT */
  int maxbatchsize;     /* transforms spread, transformed and interpolated together, i.e. the grids a plan holds
                           (the ntransf run in passes of at most that many): 0 = automatic (at most 8 a pass,
                           fewer where half the free memory, the device's or the host's, holds fewer grids;
                           passes of near-equal sizes), else >= 1, capped at ntransf. Fewer hold less memory but cost
                           time: each pass reads the points again (H200, 16 transforms, 2-D and 3-D: 1 a pass
                           took 1.1-2.7x the time of 8, holding 17-64 % of its memory) */
} nufft3_options;

/* Fills *opts with the defaults and sets struct_size. NULL is ignored. A macro over the _sized form, as for
   sfft_options_init. */
SFFT_API void nufft3_options_init(nufft3_options *opts);
SFFT_API void nufft3_options_init_sized(nufft3_options *opts, size_t struct_size);
#define nufft3_options_init(opts) nufft3_options_init_sized((opts), sizeof(nufft3_options))

/* Creates a plan. dim 1..3; sign +1 or -1; opts (NULL = defaults) picks backend, device, stream, threads.
   The backend is fixed by the first nufft3_setpts: CUDA when opts->backend is CUDA, or AUTO and a coordinate
   pointer is device/managed memory; else CPU. The CPU backend's spreading loops use the widest of AVX-512,
   AVX2+FMA and baseline x86-64 that the CPU has; the environment variable SFFT_NUFFT3_ISA=generic|avx2, read
   by nufft3_setpts, caps that choice. */
SFFT_API sfft_status nufft3_create(nufft3_plan *plan, int dim, sfft_dtype dtype, int sign, double tol,
                                   const sfft_options *opts);
/* Sets ntransf / kernel / upsampfac / maxbatchsize (NULL = defaults). Forgets the points: call nufft3_setpts
   next. */
SFFT_API sfft_status nufft3_set_options(nufft3_plan plan, const nufft3_options *opts);
/* Sets N sources (x, y, z) and K targets (s, t, u), each an array of N resp. K reals; arrays of dims beyond
   `dim` are ignored and may be NULL. Coordinates must be finite: a NaN or infinite one is
   SFFT_ERROR_INVALID_ARGUMENT naming the first ("x[17] is NaN"). N or K may be 0. The plan copies what it
   needs (the arrays may be freed afterwards) and allocates its workspace here; may be called again with new
   points to reuse the plan. Host or device pointers (CUDA backend: host arrays are copied over).
   A failed call leaves the previous points in place (nufft3_exec keeps computing with them). The grids of one
   pass (nufft3_options.maxbatchsize) must fit the memory the process can still use (host: MemAvailable, its
   memory cgroup and RLIMIT_AS; device: free memory), counting the previous points' workspace as released; else
   SFFT_ERROR_OUT_OF_MEMORY with the bytes needed, before the grid is allocated. Only where an allocation fails
   with both workspaces held is the old one released first; if the new one then fails too, the plan has no
   points until the next nufft3_setpts.
   Strengths are not checked: a NaN or infinite strength makes the outputs NaN. */
SFFT_API sfft_status nufft3_setpts(nufft3_plan plan, uint64_t N, const void *x, const void *y, const void *z,
                                   uint64_t K, const void *s, const void *t, const void *u);
/* f: ntransf x N strengths (C-order, one vector after another); F: ntransf x K outputs, overwritten.
   CPU backend: host pointers. CUDA backend: device pointers run asynchronously on opts->stream; host
   pointers are staged and the call returns once F is written. Allocates nothing, except on the CUDA backend
   the first call that passes a host f (or F) since nufft3_setpts: it allocates the device staging for it,
   ntransf x N (ntransf x K) complex values, which the plan keeps for later calls and for new points of the
   same N (K); SFFT_ERROR_OUT_OF_MEMORY if that fails, with nothing computed and the plan usable. */
SFFT_API sfft_status nufft3_exec(nufft3_plan plan, const void *f, void *F);
/* Frees the plan; NULL is a no-op. */
SFFT_API sfft_status nufft3_destroy(nufft3_plan plan);

/* ============================ Sparse-input 2-D FFT (spfft2d) ============================ */

/* The forward, unnormalised 2-D DFT of a rows x cols real matrix given by its nonzeros,
       Y[u][v] = sum over nonzeros (r, c) of w_rc * exp(-2*pi*i*(r*u/rows + c*v/cols)),
   returned as the real-to-complex half spectrum: rows x (cols/2 + 1) complex values, C-order, exactly
   the layout of fftw_plan_dft_r2c_2d(rows, cols) and cufftPlan2d(rows, cols, CUFFT_R2C) output.
   Binary mode (values == NULL): every listed (r, c) is 1 and a repeated coordinate is still 1 (a 0/1
   pattern). Values mode: w_rc = values[k], and repeated coordinates are summed (scipy COO convention).
   A plan owns its workspace (allocated at create/set time; exec does not allocate) and a copy of the
   matrix, so the caller's arrays may be freed after create. The backend is fixed at create by the rule of
   "Backends": under AUTO, spfft2d_create follows its COO arrays (host arrays: the CPU, device or managed
   memory: CUDA; nnz = 0 with NULL arrays: as for no arrays) and spfft2d_create_from_mtx, which receives no
   arrays, takes CUDA when opts->device is a usable GPU. */
typedef struct spfft2d_plan_s *spfft2d_plan;

/* rows, cols: 1 .. 2^31-1. nnz entries of row_idx/col_idx (0-based int64, row_idx[k] < rows,
   col_idx[k] < cols) and optionally values (finite doubles); nnz = 0 (all-zero matrix) allows NULL arrays.
   The three arrays may be host or device pointers. out_dtype: SFFT_COMPLEX64 or SFFT_COMPLEX128.
   Overflow: the sum of |w_rc| (after merging repeats) bounds every output coefficient, and create refuses
   with SFFT_ERROR_INVALID_ARGUMENT, naming the entry, a matrix whose sum exceeds 0.999 times the largest
   value of out_dtype (3.4e38 for complex64, 1.8e308 for complex128) or whose repeats sum beyond the double
   range; so no plan's spectrum overflows, though a matrix whose coefficients cancel below that bound may
   be refused. NaN/Inf values are refused (also by spfft2d_create_from_mtx). Create sorts the entries by
   (col, row) on the host with opts->threads threads (CUDA plans too); entries that come sorted that way (CSC,
   most Matrix Market files) are not sorted again, and entries in row order (CSR, scipy's tocoo) only by column. */
SFFT_API sfft_status spfft2d_create(spfft2d_plan *plan, uint64_t rows, uint64_t cols, uint64_t nnz,
                                    const int64_t *row_idx, const int64_t *col_idx, const double *values,
                                    sfft_dtype out_dtype, const sfft_options *opts);

/* Reads a Matrix Market file: "coordinate" format, field pattern/real/integer, symmetry general,
   symmetric or skew-symmetric (both triangles are generated; the diagonal once). binary != 0 turns every
   stored nonzero into 1 (pattern files are always binary); binary == 0 keeps the values. A malformed file
   gives SFFT_ERROR_INVALID_ARGUMENT with the line number in sfft_last_error(); complex/hermitian/array
   files give SFFT_ERROR_UNSUPPORTED; an unreadable file or a directory SFFT_ERROR_INVALID_ARGUMENT.
   The file is read front to back, never seeked: pipes, FIFOs and <(zcat file.mtx.gz) work. A line longer
   than 65536 bytes or holding a NUL byte is malformed; every number must be the whole token: indices and
   integer values decimal with an optional sign, real values in C strtod syntax whatever the process's
   locale (a value below the double range reads as 0). */
SFFT_API sfft_status spfft2d_create_from_mtx(spfft2d_plan *plan, const char *path, int binary, sfft_dtype out_dtype,
                                             const sfft_options *opts);

/* The whole half spectrum into out: rows * (cols/2 + 1) elements of out_dtype. out may be host or
   device memory (device memory needs a CUDA plan). CUDA plan: with device out the call is asynchronous
   on opts->stream; with host out the spectrum is streamed tile by tile through pinned buffers (device
   memory stays at the plan's workspace; the buffers are allocated by the plan's first call that delivers to
   the host, and kept) and the call returns when out is written. */
SFFT_API sfft_status spfft2d_exec(spfft2d_plan plan, void *out);

/* Output rows [row0, row0 + nrows) into out (nrows * (cols/2 + 1) elements, row row0 first). Same
   memory rules as spfft2d_exec; the values are bit-identical to the same rows of spfft2d_exec when the
   plan's method is explicit, and equal to them up to rounding under SPFFT2D_METHOD_AUTO (see
   spfft2d_set_method). */
SFFT_API sfft_status spfft2d_exec_rows(spfft2d_plan plan, uint64_t row0, uint64_t nrows, void *out);

/* Receives nrows consecutive output rows starting at row0 (nrows * (cols/2 + 1) elements of the plan's
   dtype, host memory owned by the plan and valid only during the call). */
typedef void (*spfft2d_rows_callback)(uint64_t row0, uint64_t nrows, const void *rows, void *user);

/* Streams the whole half spectrum to callback, block by block, in no particular order; every output row
   is delivered exactly once, bit-identical to spfft2d_exec with an explicit method (up to rounding under
   SPFFT2D_METHOD_AUTO, as for spfft2d_exec_rows). Called on the calling thread; returns when
   the last block was delivered. Memory stays bounded by the plan's workspace whatever the matrix size.
   The callback may use other plans; a call on this plan from inside it (exec, destroy, ...) returns
   SFFT_ERROR_INVALID_ARGUMENT and leaves the stream running; destroy the plan after the call returns. */
SFFT_API sfft_status spfft2d_exec_stream(spfft2d_plan plan, spfft2d_rows_callback callback, void *user);

/* Sets how many spectrum rows one tile computes (0 = automatic: a workspace of about a quarter of
   the full output, between 8 and 128 MiB); re-plans the workspace. Smaller tiles use less memory; values do not depend
   on it beyond floating-point rounding of the batched FFT. */
SFFT_API sfft_status spfft2d_set_tile_rows(spfft2d_plan plan, uint64_t tile_rows);

/* How a plan computes the spectrum. DIRECT: direct sparse sums down each column for a tile of spectrum
   rows, then an FFT along each row; memory bounded by the tile, streams tile by tile. DIRECT_ROWS: direct
   sparse sums along each row for the half width, then an FFT down each column. DENSE: the rows scattered
   into a dense buffer, a real-to-complex FFT along each row, then an FFT down each column. PRUNED: only the
   nonempty rows are transformed (a real FFT of the row, or direct sums for a row with few nonzeros), then
   one pass down the columns reads those row spectra and writes each output once (an FFT per column whose
   input is nonzero only at the nonempty rows, or direct sums when they are few): the dense input is never
   formed and empty rows and columns cost nothing. DIRECT_ROWS, DENSE and PRUNED need the whole half
   spectrum at once: written to an array of the plan's native memory
   (device for a CUDA plan, host for a CPU plan) they compute in place in it (except DENSE on a CUDA plan of
   at least 2 rows and 2 columns, and on a CPU plan's grids of up to 2^21 cells, which scatters into a
   rows * cols real array of the plan and transforms from there, counted in the workspace
   spfft2d_get_info reports); any other output goes
   through a plan workspace of rows * (cols/2 + 1) elements in native memory, allocated when the method
   is set. A CPU plan whose row or column count has a prime factor above 7 times its FFTs of that length
   when it is planned (FFTW's plan against Bluestein's algorithm over a 7-smooth length, a few milliseconds)
   and uses the faster, so two plans of one matrix may round differently. AUTO (the default): a whole
   spectrum written to native memory uses the method a cost model fitted to measurements predicts fastest
   (see spfft2d_get_method; on a CUDA plan DIRECT then runs as one tile of its own, whatever the tile
   height; a CUDA plan whose column count has a prime factor of 5 or more but none above 97 times cuFFT's
   transform of rows of that length when it is planned, in a temporary device buffer of 2^22 elements, so
   its choice can differ between GPUs); every other output (host output of a CUDA plan, row ranges,
   streams) uses DIRECT, so memory stays bounded. Under AUTO only those other outputs are bit-identical
   among themselves; with an explicit method every output of the plan is bit-identical to spfft2d_exec. */
typedef enum spfft2d_method {
  SPFFT2D_METHOD_AUTO = 0,
  SPFFT2D_METHOD_DIRECT = 1,
  SPFFT2D_METHOD_DIRECT_ROWS = 2,
  SPFFT2D_METHOD_DENSE = 3,
  SPFFT2D_METHOD_PRUNED = 4
} spfft2d_method;

/* Sets the method and re-plans; on failure (e.g. SFFT_ERROR_OUT_OF_MEMORY for the workspace) the plan
   keeps its previous method. */
SFFT_API sfft_status spfft2d_set_method(spfft2d_plan plan, spfft2d_method method);

/* *method = the method that computes a whole spectrum written to the plan's native memory (never
   AUTO: what AUTO resolved to). */
SFFT_API sfft_status spfft2d_get_method(spfft2d_plan plan, spfft2d_method *method);

/* Plan facts: the shape, the stored nonzeros (after symmetric expansion and merging of repeats), the
   tile height, the workspace bytes (device bytes for a CUDA plan, host bytes for a CPU plan) and the
   backend (SFFT_BACKEND_CPU or SFFT_BACKEND_CUDA). Any output pointer may be NULL. */
SFFT_API sfft_status spfft2d_get_info(spfft2d_plan plan, uint64_t *rows, uint64_t *cols, uint64_t *nnz,
                                      uint64_t *tile_rows, uint64_t *workspace_bytes, sfft_backend *backend);

/* Frees the plan and its workspace. NULL is a no-op. */
SFFT_API sfft_status spfft2d_destroy(spfft2d_plan plan);

/* ==================================== Sparse FFT ==================================== */

/* The k largest coefficients of the unnormalised forward DFT X[f] = sum_t x[t] e^(-2 pi i f t / n)
   (FFTW_FORWARD's sign and scale) of n complex samples, in time sublinear in n when X is k-sparse.
   Randomised (random spectral permutations, drawn from opts->seed at create time: a plan gives the same
   result on every exec, and the same seed the same plan; CUDA plans up to the last bits of the values,
   whose atomic subtractions may sum in any order). */
typedef struct sfft_plan_s *sfft_plan;

typedef enum sfft_sparse_variant {
  SFFT_SPARSE_AUTO = 0,   /* EXACT first; ROBUST when EXACT's last loop still holds energy that its
                             coefficients do not explain (noise, or a collision it could not peel). Costs an
                             EXACT run more than ROBUST on noisy input, and twice the plan memory */
  SFFT_SPARSE_ROBUST = 1, /* location by votes over loops, median value estimates: tolerates noise */
  SFFT_SPARSE_EXACT = 2   /* peeling of recovered coefficients: fastest, for (near-)exactly sparse X */
} sfft_sparse_variant;

/* Algorithm knobs; 0 in any field means "the default for the variant and precision". */
typedef struct sfft_sparse_options {
  size_t struct_size; /* sizeof(sfft_sparse_options) as the caller was compiled */
  sfft_sparse_variant variant;
  double filter_tolerance; /* window leakage into buckets other than the home one, in (0, 0.1]:
                              a Kaiser-windowed sinc whose response is within it of 1 over the home
                              bucket's central half and below it from one bucket width away;
                              default 1e-14 (EXACT complex128), 1e-7 (EXACT complex64), 1e-9 (ROBUST;
                              its location stages past the second use 1e-2); values under
                              1e-15 get the 1e-15 window (the double-precision floor). Returned values
                              cannot be more accurate than about 1e3 times it */
  double bucket_factor;    /* in [1, 64]; default 2 (EXACT), 4 (ROBUST): buckets B = the smallest even
                              divisor of n in [bucket_factor * k, n/2] (the power of two >= it when n
                              is a power of two); when bucket_factor * k > n/2, the largest even
                              divisor <= n/2. ROBUST's default, where n has no even divisor in
                              [4k, n/2], takes EXACT's (the smallest even divisor in [2k, n/2]) */
  int location_loops;      /* 1..64; default 6 (EXACT with B >= 128; 7 below), 6 (ROBUST; more loops
                              find more of the weakest coefficients at low SNR). EXACT stops early after
                              a loop whose buckets all hold one matching coefficient or nothing (to 1e-10
                              complex128 / 1e-5 complex64 of the rms bucket): later loops would find
                              nothing */
  int estimation_loops;    /* ROBUST: extra loops used only for median estimates, 0..64 (-1 = none);
                              default 2 (more give smaller value errors under noise). Must be 0 or -1
                              for EXACT */
  int bits_per_stage;      /* offset bits resolved per location hashing, 1..30; default 20 (EXACT
                              complex128), 12 (EXACT complex64), 4 (ROBUST) */
  int min_votes;           /* ROBUST: location loops that must find a frequency, 1..location_loops;
                              default 2 */
  int comb_loops;          /* ROBUST: sFFT 2.0's comb pre-pass, 0..16 comb loops; 0 = off (the default).
                              Comb loop c takes comb_width samples x[o_c + j n/comb_width] (o_c random
                              per plan) and their comb_width-point FFT, whose bin r sums the X[f] with
                              f = r mod comb_width; a frequency can then be located only if its residue
                              is among the comb_keep largest bins of some comb loop. Fewer false
                              candidates under noise (it pairs with min_votes = 1, which finds more
                              weak coefficients), for comb_loops * comb_width more samples read.
                              Must be 0 for EXACT (AUTO uses it in its ROBUST stage) */
  uint64_t comb_width;     /* the comb's W: a power of two, 2 <= W <= min(n, 2^26) (so W divides n);
                              0 = the power of two >= 128 k, at most n/16 and 2^26 (and >= 2). Only
                              with comb_loops */
  uint64_t comb_keep;      /* bins approved per comb loop, 1..comb_width; 0 = min(2 k, comb_width).
                              Only with comb_loops */
} sfft_sparse_options;

/* Fills *knobs with zeros (= defaults) and sets struct_size. NULL is ignored. A macro over the _sized form,
   as for sfft_options_init. */
SFFT_API void sfft_sparse_options_init(sfft_sparse_options *knobs);
SFFT_API void sfft_sparse_options_init_sized(sfft_sparse_options *knobs, size_t struct_size);
#define sfft_sparse_options_init(knobs) sfft_sparse_options_init_sized((knobs), sizeof(sfft_sparse_options))

/* Plans a sparse FFT of length n (2^4 <= n <= 2^40) returning at most k coefficients (1 <= k <= n/4).
   n is a power of two, or any even n < 2^32 with an even divisor in [bucket_factor * k, n/2] (the bucket
   count B, see sfft_sparse_options; with the default knobs, in [2k, n/2] for every variant): 3 x 2^20,
   10^6, 1920 x 1080 and 2 x 1009 with k = 1 work; an odd n, or 2 x 1009 with k > 1, does not
   (SFFT_ERROR_INVALID_ARGUMENT says why). dtype: SFFT_COMPLEX64 or SFFT_COMPLEX128.
   All filter design, FFTW/cuFFT planning and workspace allocation happen here. Backend: opts->backend
   CUDA, or AUTO with a usable GPU, gives a CUDA plan bound to opts->device and opts->stream; otherwise a
   CPU plan using opts->threads.
   sfft_create(...) = sfft_create_ex(..., NULL). */
SFFT_API sfft_status sfft_create(sfft_plan *plan, uint64_t n, uint64_t k, sfft_dtype dtype, const sfft_options *opts);
SFFT_API sfft_status sfft_create_ex(sfft_plan *plan, uint64_t n, uint64_t k, sfft_dtype dtype, const sfft_options *opts,
                                    const sfft_sparse_options *knobs);

/* Runs the plan on x (n samples of the plan's dtype). Writes up to *count (the capacity) coefficients:
   freqs[i] in [0, n) and values[i] = X[freqs[i]] (the plan's dtype), ordered by decreasing |X|, and sets
   *count to the number written (<= k, so a capacity of k always suffices). If more were found than the
   capacity, returns SFFT_ERROR_INVALID_ARGUMENT, sets *count to the number needed and writes nothing else.
   Non-finite samples among those read give SFFT_ERROR_INVALID_ARGUMENT, and so do samples so close to the
   type's largest value that the windowed sums overflow. Results scale with the input: the buckets are
   normalised by a power of two before any magnitude is squared, so |X| far from 1 is found as at unit scale
   (tested from 1e-290 to 1e300 for complex128, 1e-25 to 1e25 for complex64; near the smallest normal
   values, subnormal rounding of the windowed samples costs accuracy).
   CPU plan: x, freqs and values in host memory. CUDA plan: x host, device or managed memory (host input is
   window-folded on the CPU, only B-sized arrays travel); freqs/values host or device memory. The call runs
   on the plan's stream and returns once the outputs are written; it allocates nothing. */
SFFT_API sfft_status sfft_exec(sfft_plan plan, const void *x, uint64_t *freqs, void *values, uint64_t *count);

/* Runs the plan on `batch` >= 1 signals: signal i is the n samples at x + i * x_dist (elements of the plan's
   dtype; C-order contiguous when x_dist = n; any x_dist, signals may overlap since x is only read). Its
   coefficients go to freqs + i * out_dist and values + i * out_dist (elements), at most counts[i] of them
   (its capacity; counts[i] <= out_dist when batch > 1, so that no two signals' outputs overlap, and freqs
   and values must not overlap), ordered as by sfft_exec; counts[i] is set to the number written. Each
   signal's result is the one sfft_exec gives for it alone (x in the same kind of memory: host input is folded
   on the CPU, device input on the GPU, and the two round differently): the same frequencies, the values up
   to rounding, except where rounding flips a decoding decision, which can move a value by up to the plan's
   accuracy (measured: one value of a complex128 signal by 1.3e-10 of the largest |X|, which sfft_exec also
   shows for that signal when its input changes by one ulp). counts is host memory; x, freqs and values follow
   sfft_exec's rules. A signal whose capacity is too small fails the call (SFFT_ERROR_INVALID_ARGUMENT naming the first
   such signal and what it needs) after every signal ran: every counts[i] then holds the number found, and
   the signals whose capacity sufficed were written. Any other failure (e.g. a non-finite sample: the message
   names the first failing signal) leaves counts unchanged and the outputs unspecified.
   CPU plan: threads over signals, min(opts->threads, batch) of them, each with an engine of its own.
   CUDA plan, EXACT or AUTO: up to 1024 signals per pass run in the same kernels (the folds, one batched
   cuFFT call, the peeling and the top-k of every signal; AUTO then runs the signals EXACT leaves
   unresolved through ROBUST one by one), on the plan's stream, one synchronisation per pass; ROBUST plans
   and designs whose candidate lists need a sort run the signals in turn.
   Workspace: the first call of a plan with a larger batch than any before allocates the batch workspace
   (CPU: up to opts->threads single-threaded engines, planned with FFTW; CUDA: an engine holding
   min(batch, 1024) signals; a failure leaves the plan as it was); later calls with at most that batch
   allocate nothing (a CUDA pass of fewer signals than the workspace holds still pays its FFT step in full).
   Call once with the largest batch, outputs of capacity 0 are allowed, to move that cost out of a timed
   loop. */
SFFT_API sfft_status sfft_exec_batch(sfft_plan plan, uint64_t batch, const void *x, uint64_t x_dist, uint64_t *freqs,
                                     void *values, uint64_t out_dist, uint64_t *counts);

/* What an exec found out about its own answer, from the buckets it already holds (no extra pass over x;
   docs/sparse-noise.md). Energies are in units of |X|^2 (the unnormalised DFT). A struct that grows by
   appending fields, like the option structs: set struct_size = sizeof(sfft_report) before the call. */
typedef struct sfft_report {
  size_t struct_size;           /* sizeof(sfft_report) as the caller was compiled */
  sfft_sparse_variant variant;  /* the variant whose result was returned: EXACT or ROBUST (AUTO: its stage) */
  int unexplained;              /* 1: energy is left that neither the returned coefficients nor the noise floor
                                   explain (coefficients missed, colliding, or beyond k): the answer is not the
                                   k-sparse approximation a full FFT + top-k gives. AUTO falls back from EXACT
                                   to ROBUST on it */
  uint64_t count;               /* coefficients returned (*count after sfft_exec) */
  uint64_t significant;         /* of them, those with |X|^2 above 4x the noise energy per bucket; the others
                                   are indistinguishable from noise (all of them for pure noise) */
  uint64_t unexplained_buckets; /* residual buckets per loop above 18x the noise energy per bucket (about
                                   the number of coefficients above the noise that the answer lacks) */
  double explained;             /* fraction of the signal energy sum_f |X[f]|^2 that the returned coefficients
                                   explain, in [0, 1]: ~1 for a clean sparse signal, ~SNR / (SNR + 1) for a
                                   right answer under white noise, small for noise or a dense spectrum */
  double signal_energy;         /* estimate of sum_f |X[f]|^2 */
  double noise_floor;           /* estimated noise energy per bin, E|N[f]|^2 (the median residual bucket's) */
  double excess;                /* residual energy / what the noise floor accounts for: ~1 when only noise
                                   is left */
} sfft_report;

/* The report of the plan's last sfft_exec (signal 0), or of signal `signal` of its last sfft_exec_batch.
   Writes min(report->struct_size, sizeof(sfft_report)) bytes. Before any exec, or for a signal beyond the
   last batch: SFFT_ERROR_INVALID_ARGUMENT. A CPU plan measures every field; a CUDA plan does for ROBUST
   (and AUTO's ROBUST stage); its EXACT peeling kernels report count, unexplained and unexplained_buckets
   (the buckets of the last loop that decoded to no coefficient) and NaN for explained, signal_energy,
   noise_floor and excess; so do the signals of a batch that ran in the batched CUDA kernels. */
SFFT_API sfft_status sfft_get_report(sfft_plan plan, uint64_t signal, sfft_report *report);

/* Frees the plan. NULL is a no-op; a destroyed or foreign handle gives SFFT_ERROR_INVALID_ARGUMENT. */
SFFT_API sfft_status sfft_destroy(sfft_plan plan);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SFFT_SFFT_H */
