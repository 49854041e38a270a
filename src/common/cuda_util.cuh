// SPDX-License-Identifier: Apache-2.0
// CUDA helpers shared by every algorithm: error checks, RAII for device memory, pinned memory,
// events, device selection and cuFFT plans. Algorithm code never calls cudaMalloc/cudaFree directly.
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

#include <cstddef>
#include <type_traits>
#include <utility>

#include "common/error.hpp"
#include "common/options.hpp"

namespace sfft::cuda {

// A complex value of Real as CUDA's aligned vector type (float2 / double2): one 8- or 16-byte access.
template <class Real>
using Vector2 = std::conditional_t<std::is_same_v<Real, float>, float2, double2>;

[[noreturn]] void throw_cuda(cudaError_t err, const char *expr, const char *file, int line);
[[noreturn]] void throw_cufft(cufftResult err, const char *expr, const char *file, int line);
const char *cufft_result_name(cufftResult r);

}  // namespace sfft::cuda

// Throws sfft::Error (SFFT_ERROR_OUT_OF_MEMORY for allocation failures, else SFFT_ERROR_DEVICE).
#define SFFT_CUDA_CHECK(expr)                                                                     \
  do {                                                                                            \
    cudaError_t sfft_err_ = (expr);                                                               \
    if (sfft_err_ != cudaSuccess) ::sfft::cuda::throw_cuda(sfft_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// Checks the launch that just happened (configuration errors, not asynchronous faults).
#define SFFT_CUDA_CHECK_LAUNCH() SFFT_CUDA_CHECK(cudaGetLastError())

#define SFFT_CUFFT_CHECK(expr)                                                                       \
  do {                                                                                               \
    cufftResult sfft_res_ = (expr);                                                                  \
    if (sfft_res_ != CUFFT_SUCCESS) ::sfft::cuda::throw_cufft(sfft_res_, #expr, __FILE__, __LINE__); \
  } while (0)

namespace sfft::cuda {

inline cudaStream_t as_stream(void *s) { return static_cast<cudaStream_t>(s); }

// Makes opts.device current for the scope and restores the caller's device afterwards.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

 private:
  int previous_ = -1;
};

// Owning device allocation of `count` elements of T (uninitialised).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) { allocate(count); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer &&o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void allocate(std::size_t count) {
    release();
    if (count == 0) return;
    void *p = nullptr;
    cudaError_t err = cudaMalloc(&p, count * sizeof(T));
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      fail(err == cudaErrorMemoryAllocation ? SFFT_ERROR_OUT_OF_MEMORY : SFFT_ERROR_DEVICE, "cudaMalloc of ",
           count * sizeof(T), " bytes failed: ", cudaGetErrorString(err));
    }
    ptr_ = static_cast<T *>(p);
    count_ = count;
  }
  void release() noexcept {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T *get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  T *ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Stream-ordered temporary for one-shot calls without a plan to own workspace, from the library's pool of the
// current device, which keeps up to 64 MiB mapped between calls (cuda_util.cu).
class StreamBuffer {
 public:
  StreamBuffer(std::size_t bytes, cudaStream_t stream);
  ~StreamBuffer();
  StreamBuffer(const StreamBuffer &) = delete;
  StreamBuffer &operator=(const StreamBuffer &) = delete;
  void *get() const noexcept { return ptr_; }

 private:
  void *ptr_ = nullptr;
  cudaStream_t stream_;
};

// Owning pinned host allocation (for staged/streamed transfers).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count) { allocate(count); }
  ~PinnedBuffer() { release(); }
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;
  void allocate(std::size_t count) {
    release();
    if (count == 0) return;
    void *p = nullptr;
    cudaError_t err = cudaMallocHost(&p, count * sizeof(T));
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      fail(SFFT_ERROR_OUT_OF_MEMORY, "cudaMallocHost of ", count * sizeof(T),
           " bytes failed: ", cudaGetErrorString(err));
    }
    ptr_ = static_cast<T *>(p);
    count_ = count;
  }
  void release() noexcept {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T *get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }

 private:
  T *ptr_ = nullptr;
  std::size_t count_ = 0;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  cudaEvent_t get() const noexcept { return ev_; }

 private:
  cudaEvent_t ev_ = nullptr;
};

// RAII cufftHandle. Create with cufftCreate semantics; configure via the make_* helpers.
class CufftPlan {
 public:
  CufftPlan() = default;
  ~CufftPlan() { reset(); }
  CufftPlan(CufftPlan &&o) noexcept
      : handle_(std::exchange(o.handle_, 0)),
        valid_(std::exchange(o.valid_, false)),
        work_bytes_(std::exchange(o.work_bytes_, 0)) {}
  CufftPlan &operator=(CufftPlan &&o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, 0);
      valid_ = std::exchange(o.valid_, false);
      work_bytes_ = std::exchange(o.work_bytes_, 0);
    }
    return *this;
  }
  CufftPlan(const CufftPlan &) = delete;
  CufftPlan &operator=(const CufftPlan &) = delete;

  // Batched plan with cufftPlanMany's arguments (inembed/onembed NULL = contiguous).
  void make_many(int rank, long long *n, long long *inembed, long long istride, long long idist, long long *onembed,
                 long long ostride, long long odist, cufftType type, long long batch);
  void set_stream(cudaStream_t s);
  cufftHandle get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return valid_; }
  // The work area cuFFT allocated for the plan (cufftMakePlanMany64's report; 0 before make_many).
  std::size_t work_bytes() const noexcept { return work_bytes_; }
  void reset() noexcept;

 private:
  cufftHandle handle_ = 0;
  bool valid_ = false;
  std::size_t work_bytes_ = 0;
};

// Complex-to-complex execution for either precision (direction: CUFFT_FORWARD / CUFFT_INVERSE).
void exec_c2c(const CufftPlan &plan, cufftComplex *in, cufftComplex *out, int direction);
void exec_c2c(const CufftPlan &plan, cufftDoubleComplex *in, cufftDoubleComplex *out, int direction);

// Grid size for a grid-stride loop over `n` items, capped to fill the device a few times over.
unsigned grid_for(std::size_t n, unsigned block);

// `device`'s peak memory bandwidth in bytes/s from its memory clock and bus width (2 transfers a clock), or 0
// where the runtime does not report them.
double memory_bandwidth(int device);

// Raises `kernel`'s dynamic shared memory limit on the current device to at least `bytes`, never lowering it.
// The limit belongs to the function, process-wide: set to each launch's own size, a smaller launch's setting
// (another thread's, or another plan's made later) made a larger launch fail with an invalid argument.
// What was set is remembered per kernel and device, so a launch that needs no more costs no runtime call (the
// attribute calls had been a few microseconds of every fftshift_nd call on an idle GPU). A cudaDeviceReset makes
// the driver forget what was set but not this record: a launch needing more than the default 48 KiB then fails
// with an invalid argument until the process restarts.
void allow_dynamic_shared(const void *kernel, std::size_t bytes);

// Asks for the largest shared-memory carveout for `kernel` on the current device, once per kernel and device.
void prefer_max_shared_carveout(const void *kernel);

// Launches `kernel` on `stream` as a programmatic dependent launch (sm_90+): it may be scheduled while the
// previous kernel on the stream is still finishing, and must call wait_for_previous_kernel() before it
// touches anything that kernel writes. Hides the launch gap between short dependent kernels (also inside
// a captured graph); on older devices it is an ordinary launch.
// launch_overlapped_shared: the same with `shared_bytes` of dynamic shared memory.
template <class... Params, class... Args>
void launch_overlapped_shared(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                              cudaStream_t stream, Args &&...args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  SFFT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
}
template <class... Params, class... Args>
void launch_overlapped(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args &&...args) {
  launch_overlapped_shared(kernel, grid, block, 0, stream, std::forward<Args>(args)...);
}

// Whether `kernel` may be launched in thread-block clusters on the current device: the device launches them
// (sm_90 on) and the kernel's code was compiled for such a device (remembered per kernel and device).
bool cluster_launch_supported(const void *kernel);

// Launches `kernel` on `stream` in clusters of `cluster` blocks along x (`grid` a multiple of it), with
// `shared_bytes` of dynamic shared memory a block. Only where cluster_launch_supported(kernel).
template <class... Params, class... Args>
void launch_clusters(void (*kernel)(Params...), unsigned grid, unsigned block, unsigned cluster,
                     std::size_t shared_bytes, cudaStream_t stream, Args &&...args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  SFFT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
}

#if defined(__CUDACC__)
// First statement of a kernel started with launch_overlapped(): waits until the previous kernel on the
// stream has finished and its writes are visible.
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}

// In a kernel followed by one started with launch_overlapped(): lets that kernel's blocks be scheduled from now
// on (each still waits in wait_for_previous_kernel() until this kernel has finished), instead of from this
// kernel's end.
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

// Starts bringing the line holding p into the L1, without waiting: a later load from the same SM then hits it.
__device__ __forceinline__ void prefetch_to_l1(const void *p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }
#endif

}  // namespace sfft::cuda
