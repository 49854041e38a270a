// SPDX-License-Identifier: Apache-2.0
// Sparse FFT, CUDA: ROBUST's comb pre-pass (sFFT 2.0): the strided samples of device input, and the exact
// selection of each comb loop's largest bins after their FFT.
#include <cub/block/block_scan.cuh>

#include "sparse/cuda/internal.cuh"

namespace sfft::sparse::cuda_stages {
namespace {

// ROBUST comb pre-pass, device input: comb loop c's samples x[(offsets[c] + j stride) mod n], j < width,
// into comb_z[c * width + j] (then one batched cuFFT call). Non-finite samples raise the exec's flag; the
// largest sample's exponent scales the bins before they are squared (comb_bin_key).
// kPartial (distributed execution): x holds the samples [offset, offset + length) only; the others read zero,
// and the flag and exponent are left to the host, after the samples are summed over the ranks.
template <class Real, bool kPowerOfTwo, bool kPartial>
__global__ void comb_gather_kernel(const Cplx<Real> *__restrict__ x, const uint64_t *offsets, uint64_t width,
                                   uint64_t stride, int comb_loops, Geometry g, Cplx<Real> *comb_z,
                                   Counters *counters, uint64_t block_offset, uint64_t block_length) {
  specialise<kPowerOfTwo>(g);
  const std::size_t total = static_cast<std::size_t>(comb_loops) * width;
  bool finite = true;
  Real largest = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint64_t j = i & (width - 1);
    const uint64_t index = mod_n(offsets[i / width] + j * stride, g);
    if constexpr (kPartial) {
      comb_z[i] = index - block_offset < block_length ? x[index - block_offset] : Cplx<Real>{Real(0), Real(0)};
      continue;
    }
    const Cplx<Real> v = x[index];
    finite = finite && isfinite(v.re) && isfinite(v.im);
    largest = fmax(largest, fmax(fabs(v.re), fabs(v.im)));
    comb_z[i] = v;
  }
  if constexpr (kPartial) return;
  if (!finite) atomicOr(&counters->nonfinite, 1u);
  const unsigned exponent = biased_exponent(largest);
  if (exponent != 0) atomicMax(&counters->comb_exponent, exponent);
}

// ROBUST comb pre-pass selection: the `keep` largest keys (bucket_math.hpp's comb_key) of each comb loop's
// W bins, exactly and without a sort, in three steps so that the W-sized steps spread over the whole GPU:
//  1. comb_histogram_kernel (many blocks): per comb loop, a histogram of the keys' top kCombDigitBits.
//  2. comb_split_kernel (many blocks): every block finds the boundary digit (the one holding the keep-th
//     largest key) from that histogram; keys of higher digits are approved, keys of the boundary digit are
//     listed (a small share of W for spread magnitudes).
//  3. comb_finish_kernel (one block per comb loop): an MSB-first radix select over the listed keys, a digit
//     a pass, stopping once the digit it narrows to holds exactly the keys still wanted; approves those.
// The bins times 2^shift before squaring (scale-safe magnitudes; the ranking needs no unscale): shift from
// the device gather's largest sample, 0 for host input (normalised on the CPU before the upload).
template <class Real>
__device__ uint64_t comb_bin_key(const Cplx<Real> *comb_z, uint64_t width, std::size_t i, double factor, bool &finite) {
  const Cplx<double> v = widen(comb_z[i]);
  const double mag2 = cabs2(Cplx<double>{v.re * factor, v.im * factor});
  finite = finite && isfinite(mag2);
  return comb_key(mag2, i & (width - 1));
}

// Block-wide: the digit (shift `low`, width digit_mask, among keys matching prefix/mask) that holds the
// wanted-th largest key, from a histogram of kCombDigits counters. Thread t owns kCombDigits / kThreads
// digits from the top down; an exclusive scan gives the keys of the digits above its own, and the thread
// whose digits hold the wanted-th key writes *digit and *above (keys in higher digits). Ends synchronised.
template <unsigned kThreads>
__device__ void comb_boundary(const unsigned *histogram, unsigned wanted, unsigned *digit, unsigned *above_out) {
  using Scan = cub::BlockScan<unsigned, kThreads>;
  __shared__ typename Scan::TempStorage scan_storage;
  constexpr unsigned kPerThread = kCombDigits / kThreads;
  unsigned counts[kPerThread], sum = 0;
#pragma unroll
  for (unsigned e = 0; e < kPerThread; ++e) {
    counts[e] = histogram[kCombDigits - 1 - kPerThread * threadIdx.x - e];
    sum += counts[e];
  }
  unsigned above = 0;
  Scan(scan_storage).ExclusiveSum(sum, above);
  if (above < wanted && wanted <= above + sum) {
    for (unsigned e = 0; e < kPerThread; ++e) {
      if (wanted <= above + counts[e]) {
        *digit = kCombDigits - 1 - kPerThread * threadIdx.x - e;
        *above_out = above;
        break;
      }
      above += counts[e];
    }
  }
  __syncthreads();
}

// Step 1: histogram[c * kCombDigits + d] = keys of comb loop c with top digit d. A block takes kCombChunk
// consecutive bins of one comb loop (W is a power of two: chunks never straddle loops).
template <class Real>
__global__ void __launch_bounds__(kCombThreads)
    comb_histogram_kernel(const Cplx<Real> *comb_z, uint64_t width, unsigned *histogram, Counters *counters) {
  __shared__ unsigned local[kCombDigits];
  for (unsigned i = threadIdx.x; i < kCombDigits; i += kCombThreads) local[i] = 0;
  __syncthreads();
  const uint64_t chunk = width < kCombChunk ? width : kCombChunk;
  const std::size_t first = blockIdx.x * chunk;
  const double factor = ldexp(1.0, normalising_shift<Real>(counters->comb_exponent));
  bool finite = true;
  for (std::size_t i = first + threadIdx.x; i < first + chunk; i += kCombThreads)
    atomicAdd(&local[comb_bin_key(comb_z, width, i, factor, finite) >> (64 - kCombDigitBits)], 1u);
  __syncthreads();
  unsigned *global = histogram + (first / width) * kCombDigits;
  for (unsigned i = threadIdx.x; i < kCombDigits; i += kCombThreads)
    if (local[i] != 0) atomicAdd(&global[i], local[i]);
  if (!finite) atomicOr(&counters->nonfinite, 1u);
}

// Step 2: approves the keys above the boundary digit and lists the boundary digit's keys (list c holds
// comb loop c's, at list[c * W], list_count[c] of them).
template <class Real>
__global__ void __launch_bounds__(kCombThreads)
    comb_split_kernel(const Cplx<Real> *comb_z, uint64_t width, uint64_t keep, const unsigned *histogram,
                      uint32_t *approved, uint64_t *list, unsigned *list_count, const Counters *counters) {
  __shared__ unsigned boundary, above;
  const uint64_t chunk = width < kCombChunk ? width : kCombChunk;
  const std::size_t first = blockIdx.x * chunk;
  const std::size_t loop = first / width;
  comb_boundary<kCombThreads>(histogram + loop * kCombDigits, static_cast<unsigned>(keep), &boundary, &above);
  const uint64_t digit = boundary;
  const double factor = ldexp(1.0, normalising_shift<Real>(counters->comb_exponent));
  bool finite = true;  // step 1 reported overflows
  for (std::size_t i = first + threadIdx.x; i < first + chunk; i += kCombThreads) {
    const uint64_t key = comb_bin_key(comb_z, width, i, factor, finite);
    const uint64_t top = key >> (64 - kCombDigitBits);
    if (top > digit) {
      const uint64_t r = i & (width - 1);
      atomicOr(&approved[r >> 5], 1u << (r & 31));
    } else if (top == digit) {
      list[loop * width + atomicAdd(&list_count[loop], 1u)] = key;
    }
  }
}

// Step 3, one block per comb loop: the keys still wanted (keep minus those above the boundary digit) are
// the largest of the listed ones, all of which share the top digit.
__global__ void __launch_bounds__(kCombFinishThreads)
    comb_finish_kernel(uint64_t width, uint64_t keep, const unsigned *histogram, const uint64_t *list,
                       const unsigned *list_count, uint32_t *approved) {
  __shared__ unsigned digits[kCombDigits];
  __shared__ unsigned digit_s, above_s;
  __shared__ uint64_t prefix_s, mask_s;
  __shared__ unsigned wanted_s;
  const std::size_t loop = blockIdx.x;
  comb_boundary<kCombFinishThreads>(histogram + loop * kCombDigits, static_cast<unsigned>(keep), &digit_s, &above_s);
  const uint64_t *keys = list + loop * width;
  const unsigned count = list_count[loop];
  if (threadIdx.x == 0) {
    prefix_s = static_cast<uint64_t>(digit_s) << (64 - kCombDigitBits);
    mask_s = ((uint64_t{1} << kCombDigitBits) - 1) << (64 - kCombDigitBits);
    wanted_s = static_cast<unsigned>(keep) - above_s;
  }
  for (int high = 64 - kCombDigitBits; high > 0; high -= kCombDigitBits) {
    const int low = high > kCombDigitBits ? high - kCombDigitBits : 0;
    const uint64_t digit_mask = (uint64_t{1} << (high - low)) - 1;
    for (unsigned i = threadIdx.x; i < kCombDigits; i += kCombFinishThreads) digits[i] = 0;
    __syncthreads();
    const uint64_t prefix = prefix_s, mask = mask_s;
    const unsigned wanted = wanted_s;
    for (unsigned i = threadIdx.x; i < count; i += kCombFinishThreads)
      if ((keys[i] & mask) == prefix) atomicAdd(&digits[(keys[i] >> low) & digit_mask], 1u);
    __syncthreads();
    comb_boundary<kCombFinishThreads>(digits, wanted, &digit_s, &above_s);
    const uint64_t digit = digit_s;
    const unsigned left = wanted - above_s;
    const bool done = digits[digit] == left;
    __syncthreads();  // every thread has read digit_s, above_s and the digit counts
    if (threadIdx.x == 0) {
      prefix_s = prefix | digit << low;
      mask_s = mask | digit_mask << low;
      wanted_s = left;
    }
    __syncthreads();
    if (done) break;
  }
  // Keys are distinct: exactly the wanted ones have (key & mask) >= prefix.
  const uint64_t prefix = prefix_s, mask = mask_s;
  for (unsigned i = threadIdx.x; i < count; i += kCombFinishThreads) {
    if ((keys[i] & mask) >= prefix) {
      const uint64_t r = 0xffffffffu - (keys[i] & 0xffffffffu);
      atomicOr(&approved[r >> 5], 1u << (r & 31));
    }
  }
}

}  // namespace

template <class Real>
void launch_comb_gather(bool power_of_two, const Cplx<Real> *x, const uint64_t *offsets, uint64_t width,
                        uint64_t stride, int comb_loops, const Geometry &g, Cplx<Real> *comb_z, Counters *counters,
                        cudaStream_t stream) {
  const std::size_t samples = static_cast<std::size_t>(comb_loops) * width;
  auto *gather = power_of_two ? comb_gather_kernel<Real, true, false> : comb_gather_kernel<Real, false, false>;
  gather<<<cuda::grid_for(samples, kBlock), kBlock, 0, stream>>>(x, offsets, width, stride, comb_loops, g, comb_z,
                                                                 counters, 0, 0);
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void launch_comb_gather_block(bool power_of_two, const Cplx<Real> *x, uint64_t offset, uint64_t length,
                              const uint64_t *offsets, uint64_t width, uint64_t stride, int comb_loops,
                              const Geometry &g, Cplx<Real> *comb_z, cudaStream_t stream) {
  const std::size_t samples = static_cast<std::size_t>(comb_loops) * width;
  auto *gather = power_of_two ? comb_gather_kernel<Real, true, true> : comb_gather_kernel<Real, false, true>;
  gather<<<cuda::grid_for(samples, kBlock), kBlock, 0, stream>>>(x, offsets, width, stride, comb_loops, g, comb_z,
                                                                 nullptr, offset, length);
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void launch_comb_select(const Cplx<Real> *comb_z, uint64_t width, uint64_t keep, int comb_loops, unsigned *histogram,
                        uint32_t *approved, uint64_t *list, unsigned *list_count, Counters *counters,
                        cudaStream_t stream) {
  const auto loops = static_cast<std::size_t>(comb_loops);
  const auto blocks = static_cast<unsigned>(loops * width / (width < kCombChunk ? width : kCombChunk));
  comb_histogram_kernel<Real><<<blocks, kCombThreads, 0, stream>>>(comb_z, width, histogram, counters);
  SFFT_CUDA_CHECK_LAUNCH();
  comb_split_kernel<Real>
      <<<blocks, kCombThreads, 0, stream>>>(comb_z, width, keep, histogram, approved, list, list_count, counters);
  SFFT_CUDA_CHECK_LAUNCH();
  comb_finish_kernel<<<static_cast<unsigned>(loops), kCombFinishThreads, 0, stream>>>(width, keep, histogram, list,
                                                                                      list_count, approved);
  SFFT_CUDA_CHECK_LAUNCH();
}

template void launch_comb_gather<float>(bool, const Cplx<float> *, const uint64_t *, uint64_t, uint64_t, int,
                                        const Geometry &, Cplx<float> *, Counters *, cudaStream_t);
template void launch_comb_gather_block<float>(bool, const Cplx<float> *, uint64_t, uint64_t, const uint64_t *,
                                              uint64_t, uint64_t, int, const Geometry &, Cplx<float> *, cudaStream_t);
template void launch_comb_gather_block<double>(bool, const Cplx<double> *, uint64_t, uint64_t, const uint64_t *,
                                               uint64_t, uint64_t, int, const Geometry &, Cplx<double> *,
                                               cudaStream_t);
template void launch_comb_select<float>(const Cplx<float> *, uint64_t, uint64_t, int, unsigned *, uint32_t *,
                                        uint64_t *, unsigned *, Counters *, cudaStream_t);
template void launch_comb_gather<double>(bool, const Cplx<double> *, const uint64_t *, uint64_t, uint64_t, int,
                                         const Geometry &, Cplx<double> *, Counters *, cudaStream_t);
template void launch_comb_select<double>(const Cplx<double> *, uint64_t, uint64_t, int, unsigned *, uint32_t *,
                                         uint64_t *, unsigned *, Counters *, cudaStream_t);

}  // namespace sfft::sparse::cuda_stages
