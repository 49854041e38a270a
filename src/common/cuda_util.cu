// SPDX-License-Identifier: Apache-2.0
#include "common/cuda_util.cuh"

#include <algorithm>

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

StreamBuffer::StreamBuffer(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
  if (bytes == 0) return;
  cudaError_t err = cudaMallocAsync(&ptr_, bytes, stream);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    ptr_ = nullptr;
    fail(err == cudaErrorMemoryAllocation ? SFFT_ERROR_OUT_OF_MEMORY : SFFT_ERROR_DEVICE, "cudaMallocAsync of ", bytes,
         " bytes failed: ", cudaGetErrorString(err));
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
  std::size_t work = 0;
  SFFT_CUFFT_CHECK(
      cufftMakePlanMany64(handle_, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, &work));
}

void CufftPlan::set_stream(cudaStream_t s) { SFFT_CUFFT_CHECK(cufftSetStream(handle_, s)); }

void CufftPlan::reset() noexcept {
  if (valid_) (void)cufftDestroy(handle_);
  valid_ = false;
  handle_ = 0;
}

void exec_c2c(const CufftPlan &plan, cufftComplex *in, cufftComplex *out, int direction) {
  SFFT_CUFFT_CHECK(cufftExecC2C(plan.get(), in, out, direction));
}

void exec_c2c(const CufftPlan &plan, cufftDoubleComplex *in, cufftDoubleComplex *out, int direction) {
  SFFT_CUFFT_CHECK(cufftExecZ2Z(plan.get(), in, out, direction));
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
