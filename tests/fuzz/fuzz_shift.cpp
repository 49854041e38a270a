// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for fftshift_nd / ifftshift_nd: arbitrary rank, extents (negative, zero, overflowing),
// axes masks, dtypes, options, and out == in / separate / partially overlapping buffers. Success must
// equal the element-by-element NumPy definition; failure must leave every byte of both buffers as it was.
#include "fuzz_support.hpp"
#include "shift_reference.hpp"

namespace {

constexpr std::size_t kMaxBytes = std::size_t{1} << 16;  // arrays the harness really allocates

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  using namespace sfft_fuzz;
  Input in(data, size);
  const bool inverse = in.flag();
  const int ndim = static_cast<int>(in.in_range(-1, 9));
  std::vector<int64_t> shape(static_cast<std::size_t>(std::max(ndim, 1)));
  for (auto &e : shape) {
    uint8_t mode = in.byte();
    if (mode < 200)
      e = mode % 9;
    else if (mode < 240)
      e = in.take<uint8_t>();
    else
      e = static_cast<int64_t>(in.size(64));  // boundary values, including ones that wrap negative
  }
  uint32_t mask = in.take<uint32_t>();
  if (in.byte() < 224) mask &= ndim > 0 && ndim < 32 ? (1u << ndim) - 1 : 0u;
  const int dt = in.enumeration(0, 5);
  const uint8_t placement = in.byte() % 3;  // 0 separate, 1 in place, 2 partial overlap
  FuzzedOptions opts = fuzz_options(in);

  // What the harness expects, from the public contract.
  bool valid =
      ndim >= 1 && ndim <= 8 && dt >= SFFT_FLOAT32 && dt <= SFFT_COMPLEX128 && (mask >> ndim) == 0 && opts.valid;
  bool empty = false, overflow = false;
  std::size_t count = 1;
  for (int d = 0; d < std::max(ndim, 0) && d < static_cast<int>(shape.size()); ++d) {
    if (shape[d] < 0) valid = false;
    if (shape[d] == 0) empty = true;
  }
  if (valid && !empty) {
    for (int d = 0; d < ndim; ++d)
      overflow |= __builtin_mul_overflow(count, static_cast<std::size_t>(shape[d]), &count);
    std::size_t bytes_claimed = 0;
    overflow |= __builtin_mul_overflow(count, sfft_test::shift_dtype_bytes(dt), &bytes_claimed);
    overflow |= bytes_claimed > static_cast<std::size_t>(INT64_MAX);
    if (!overflow && bytes_claimed > kMaxBytes) return 0;  // a real array this large is not the harness's job
  }
  const std::size_t bytes = valid && !empty && !overflow ? count * sfft_test::shift_dtype_bytes(dt) : 64;

  // Input bytes from the fuzzer; the output (or the shared buffer) poisoned.
  std::vector<unsigned char> input(bytes);
  for (auto &b : input) b = in.byte();
  std::size_t offset = 0;
  if (placement == 2) offset = 4 * (1 + in.take<uint16_t>() % std::max<std::size_t>(1, bytes / 4 - 1));
  Poisoned out(placement == 2 ? bytes + offset : bytes);
  std::vector<unsigned char> shared_before;
  void *dst = out.get();
  const void *src = input.data();
  if (placement == 1) {
    std::memcpy(out.get(), input.data(), bytes);
    src = dst;
  } else if (placement == 2) {
    std::memcpy(out.get(), input.data(), bytes);
    src = out.get();
    dst = static_cast<unsigned char *>(out.get()) + offset;
    shared_before.assign(static_cast<unsigned char *>(out.get()), static_cast<unsigned char *>(out.get()) + out.size());
  }
  const std::vector<unsigned char> input_before = input;

  auto fn = inverse ? fuzz_ifftshift_nd : fuzz_fftshift_nd;
  const char *name = inverse ? "ifftshift_nd" : "fftshift_nd";
  sfft_status s = fn(dst, src, ndim, shape.data(), mask, dt, opts.get());

  const bool overlapping = placement == 2 && offset < bytes;
  if (s != SFFT_SUCCESS) {
    check(input == input_before, std::string(name) + " failed but changed its input");
    if (placement == 0) {
      check_failure(s, name, {&out});
    } else {
      check_failure(s, name, {});
      check(placement == 1 || std::memcmp(out.get(), shared_before.data(), out.size()) == 0,
            std::string(name) + " failed but changed the overlapping buffer");
      if (placement == 1)
        check(std::memcmp(out.get(), input.data(), bytes) == 0,
              std::string(name) + " failed but changed the array in place");
    }
    check(!valid || overflow || overlapping || opts.cuda,
          std::string(name) + " rejected a valid request: " + sfft_status_string(s));
    return 0;
  }
  check_success_clean(name);
  check(valid && !overflow, std::string(name) + " accepted an invalid request");
  check(empty || !opts.cuda, std::string(name) + " ran on the CUDA backend without a GPU");
  check(empty || !overlapping, std::string(name) + " accepted partially overlapping buffers");
  if (empty) {
    check(placement != 0 || out.unchanged(), std::string(name) + " wrote to the output of an empty array");
    return 0;
  }
  std::vector<int64_t> used(shape.begin(), shape.begin() + ndim);
  auto want = sfft_test::shift_reference(input_before, used, mask, sfft_test::shift_dtype_bytes(dt), inverse);
  check(std::memcmp(dst, want.data(), bytes) == 0, std::string(name) + " result differs from the NumPy definition");
  if (placement == 0) check(input == input_before, std::string(name) + " changed its input out of place");
  return 0;
}
