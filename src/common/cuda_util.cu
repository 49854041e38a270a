// SPDX-License-Identifier: Apache-2.0
#include "common/cuda_util.cuh"

#include <algorithm>
#include <mutex>
#include <vector>

namespace sfft::cuda {

void throw_cuda(cudaError_t err, const char *expr, const char *file, int line) {
  (void)cudaGetLastError();
  sfft_status status = err == cudaErrorMemoryAllocation                                   ? SFFT_ERROR_OUT_OF_MEMORY
                       : (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) ? SFFT_ERROR_NO_DEVICE
                                                                                          : SFFT_ERROR_DEVICE;
  fail(status, cudaGetErrorName(err), " (", cudaGetErrorString(err), ") in ", expr, " at ", file, ":", line);
}

const char *cufft_result_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE:
      return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA:
      return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE:
      return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE:
      return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED:
      return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    default:
      return "CUFFT_(unknown result)";
  }
}

void throw_cufft(cufftResult err, const char *expr, const char *file, int line) {
  sfft_status status = err == CUFFT_ALLOC_FAILED ? SFFT_ERROR_OUT_OF_MEMORY : SFFT_ERROR_DEVICE;
  fail(status, cufft_result_name(err), " in ", expr, " at ", file, ":", line);
}

DeviceScope::DeviceScope(int device) {
  SFFT_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) SFFT_CUDA_CHECK(cudaSetDevice(device));
}

DeviceScope::~DeviceScope() {
  int now = -1;
  if (previous_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
}

namespace {

// Bytes a device's temporary pool keeps mapped across synchronisations.
constexpr uint64_t kPoolKeepBytes = uint64_t{64} << 20;

// The pool of the library's stream-ordered temporaries on `device`, or nullptr where the device has none (then
// the default pool serves them). The default pool releases its unused memory at every synchronisation, so
// each call's temporaries were mapped anew: about 70 us of an in-place shift of 2^26 + 1 floats on the H200
// (0.23 ms in all, its kernels 0.15 ms). Pools live until the process exits.
cudaMemPool_t temporary_pool(int device) {
  static std::mutex mutex;
  static std::vector<cudaMemPool_t> pools;
  static std::vector<bool> made;
  std::lock_guard<std::mutex> lock(mutex);
  const auto d = static_cast<std::size_t>(device);
  if (d >= pools.size()) {
    pools.resize(d + 1, nullptr);
    made.resize(d + 1, false);
  }
  if (!made[d]) {
    made[d] = true;
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess || !supported) {
      (void)cudaGetLastError();
      return nullptr;
    }
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    uint64_t keep = kPoolKeepBytes;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaMemPoolDestroy(pool);
      return nullptr;
    }
    pools[d] = pool;
  }
  return pools[d];
}

}  // namespace

StreamBuffer::StreamBuffer(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
  if (bytes == 0) return;
  int device = 0;
  SFFT_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool = temporary_pool(device);
  cudaError_t err =
      pool != nullptr ? cudaMallocFromPoolAsync(&ptr_, bytes, pool, stream) : cudaMallocAsync(&ptr_, bytes, stream);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    ptr_ = nullptr;
    fail(err == cudaErrorMemoryAllocation ? SFFT_ERROR_OUT_OF_MEMORY : SFFT_ERROR_DEVICE,
         "stream-ordered allocation of ", bytes, " bytes failed: ", cudaGetErrorString(err));
  }
}

StreamBuffer::~StreamBuffer() {
  if (ptr_ != nullptr) (void)cudaFreeAsync(ptr_, stream_);
}

Event::Event() { SFFT_CUDA_CHECK(cudaEventCreateWithFlags(&ev_, cudaEventDisableTiming)); }
Event::~Event() {
  if (ev_ != nullptr) (void)cudaEventDestroy(ev_);
}

void CufftPlan::make_many(int rank, long long *n, long long *inembed, long long istride, long long idist,
                          long long *onembed, long long ostride, long long odist, cufftType type, long long batch) {
  reset();
  SFFT_CUFFT_CHECK(cufftCreate(&handle_));
  valid_ = true;
  SFFT_CUFFT_CHECK(cufftMakePlanMany64(handle_, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch,
                                       &work_bytes_));
}

void CufftPlan::set_stream(cudaStream_t s) { SFFT_CUFFT_CHECK(cufftSetStream(handle_, s)); }

void CufftPlan::reset() noexcept {
  if (valid_) (void)cufftDestroy(handle_);
  valid_ = false;
  handle_ = 0;
  work_bytes_ = 0;
}

void exec_c2c(const CufftPlan &plan, cufftComplex *in, cufftComplex *out, int direction) {
  SFFT_CUFFT_CHECK(cufftExecC2C(plan.get(), in, out, direction));
}

void exec_c2c(const CufftPlan &plan, cufftDoubleComplex *in, cufftDoubleComplex *out, int direction) {
  SFFT_CUFFT_CHECK(cufftExecZ2Z(plan.get(), in, out, direction));
}

namespace {

// What this process has set on a kernel on one device: its dynamic shared-memory limit and whether it asked for
// the largest shared-memory carveout; and whether it may be launched in clusters there.
struct KernelSetting {
  const void *kernel;
  int device;
  std::size_t dynamic_shared;
  bool max_shared_carveout;
  bool clusters;
};

std::mutex kernel_settings_lock;  // a lookup and the raise it leads to as one step
std::vector<KernelSetting> kernel_settings;

// The calling device's entry for `kernel`, made (from the kernel's current limit) on first use. Under the lock.
KernelSetting &kernel_setting(const void *kernel) {
  int device = 0;
  SFFT_CUDA_CHECK(cudaGetDevice(&device));
  for (KernelSetting &s : kernel_settings)
    if (s.kernel == kernel && s.device == device) return s;
  cudaFuncAttributes attributes{};
  SFFT_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  int cluster_launch = 0;
  SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device));
  // The device code's own architecture too: a build for older GPUs only runs here from PTX compiled for them.
  const bool clusters = cluster_launch != 0 && attributes.ptxVersion >= 90;
  kernel_settings.push_back(
      {kernel, device, static_cast<std::size_t>(attributes.maxDynamicSharedSizeBytes), false, clusters});
  return kernel_settings.back();
}

}  // namespace

void allow_dynamic_shared(const void *kernel, std::size_t bytes) {
  std::lock_guard<std::mutex> hold(kernel_settings_lock);
  KernelSetting &s = kernel_setting(kernel);
  if (s.dynamic_shared >= bytes) return;
  SFFT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  s.dynamic_shared = bytes;
}

void prefer_max_shared_carveout(const void *kernel) {
  std::lock_guard<std::mutex> hold(kernel_settings_lock);
  KernelSetting &s = kernel_setting(kernel);
  if (s.max_shared_carveout) return;
  SFFT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  s.max_shared_carveout = true;
}

bool cluster_launch_supported(const void *kernel) {
  std::lock_guard<std::mutex> hold(kernel_settings_lock);
  return kernel_setting(kernel).clusters;
}

double memory_bandwidth(int device) {
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return 2.0 * 1e3 * clock_khz * bus_bits / 8.0;
}

unsigned grid_for(std::size_t n, unsigned block) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) {
    (void)cudaGetLastError();
    sms = 132;
  }
  std::size_t blocks = (n + block - 1) / block;
  std::size_t cap = static_cast<std::size_t>(sms) * 32;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(blocks, cap)));
}

}  // namespace sfft::cuda
