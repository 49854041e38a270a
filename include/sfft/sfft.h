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
 *     independent and may be used concurrently.
 */
#ifndef SFFT_SFFT_H
#define SFFT_SFFT_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  if defined(SFFT_BUILDING_LIBRARY)
#    define SFFT_API __declspec(dllexport)
#  else
#    define SFFT_API __declspec(dllimport)
#  endif
#else
#  define SFFT_API __attribute__((visibility("default")))
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

typedef enum sfft_backend {
  SFFT_BACKEND_AUTO = 0, /* CUDA when a pointer is device memory, else CPU */
  SFFT_BACKEND_CPU = 1,
  SFFT_BACKEND_CUDA = 2 /* host pointers are staged through the device */
} sfft_backend;

typedef struct sfft_options {
  size_t struct_size;   /* sizeof(sfft_options) as the caller was compiled; lets the struct grow */
  sfft_backend backend; /* AUTO: CUDA for device pointers / when a GPU is usable, else CPU */
  int device;           /* CUDA device ordinal */
  void *stream;         /* a cudaStream_t, or NULL for the default stream */
  int threads;          /* CPU threads, 0 = all hardware threads */
  uint64_t seed;        /* for randomized algorithms; same seed => same result */
} sfft_options;

/* Fills *opts with defaults (AUTO backend, device 0, default stream, all threads, seed 0) and sets
   struct_size. NULL is ignored. */
SFFT_API void sfft_options_init(sfft_options *opts);

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
   host pointers are staged through the device and the call returns when out is written. */
SFFT_API sfft_status fftshift_nd(void *out, const void *in, int ndim, const int64_t *shape,
                                 uint32_t axes_mask, sfft_dtype dtype, const sfft_options *opts);
SFFT_API sfft_status ifftshift_nd(void *out, const void *in, int ndim, const int64_t *shape,
                                  uint32_t axes_mask, sfft_dtype dtype, const sfft_options *opts);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SFFT_SFFT_H */
