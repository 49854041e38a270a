// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the libFuzzer targets: a reader that turns the fuzzer's bytes into call arguments
// (sizes, enums, special floating-point values), poisoned output buffers, and the contract checks every
// target asserts:
//   SFFT_SUCCESS  => sfft_last_error() is empty and the result matches a cheap reference;
//   any failure   => sfft_last_error() is non-empty and no output byte changed.
// A violated contract prints what happened and aborts, which libFuzzer reports as a crash with the input.
#pragma once

#include <climits>
#include <cmath>
#include <complex>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "c_abi.h"
#include "sfft/sfft.h"

namespace sfft_fuzz {

[[noreturn]] inline void violation(const std::string &what) {
  std::fprintf(stderr, "CONTRACT VIOLATION: %s\n  sfft_last_error(): \"%s\"\n", what.c_str(), sfft_last_error());
  std::fflush(stderr);
  std::abort();
}

// printf-style message for contract checks (std::to_string prints %f, which hides small errors).
template <class... Args>
std::string format(const char *fmt, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

inline void check(bool ok, const std::string &what) {
  if (!ok) violation(what);
}

// Reads arguments from the fuzzer's bytes; past the end every read returns zero bytes.
class Input {
 public:
  Input(const uint8_t *data, std::size_t size) : data_(data), size_(size) {}

  template <class T>
  T take() {
    T v{};
    std::size_t n = std::min(sizeof v, size_ - pos_);
    std::memcpy(&v, data_ + pos_, n);
    pos_ += n;
    return v;
  }
  uint8_t byte() { return take<uint8_t>(); }
  bool flag() { return byte() & 1u; }
  // Uniform-ish integer in [lo, hi].
  int64_t in_range(int64_t lo, int64_t hi) {
    auto span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(take<uint32_t>() % span);
  }
  // A size: mostly small, sometimes a boundary value that overflows byte counts or the address space.
  uint64_t size(uint64_t small_max) {
    uint8_t mode = byte();
    if (mode < 224) return take<uint16_t>() % (small_max + 1);
    static const uint64_t special[] = {0,
                                       1,
                                       uint64_t{1} << 31,
                                       (uint64_t{1} << 31) - 1,
                                       uint64_t{1} << 32,
                                       uint64_t{1} << 40,
                                       uint64_t{1} << 62,
                                       uint64_t{1} << 63,
                                       std::numeric_limits<uint64_t>::max(),
                                       std::numeric_limits<uint64_t>::max() / 16 + 1};
    return special[mode % (sizeof special / sizeof special[0])];
  }
  // A real: mostly in [-scale, scale], sometimes NaN, +-Inf, huge, tiny, denormal, negative zero.
  double real(double scale) {
    uint8_t mode = byte();
    if (mode < 232) return scale * (static_cast<double>(take<uint16_t>()) / 32767.5 - 1.0);
    static const double special[] = {std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity(),
                                     1e300,
                                     -1e300,
                                     1e-300,
                                     std::numeric_limits<double>::denorm_min(),
                                     -0.0,
                                     3.4e38,
                                     1e30};
    return special[mode % (sizeof special / sizeof special[0])];
  }
  // The int a C caller may pass for an enum: mostly the valid range [lo, hi], sometimes any bits.
  int enumeration(int lo, int hi) { return byte() < 240 ? static_cast<int>(in_range(lo, hi)) : take<int32_t>(); }
  // Stores such an int into an enum-typed struct field without an enum-typed store of an invalid value.
  template <class Enum>
  void enumeration_into(Enum *field, int lo, int hi) {
    int v = enumeration(lo, hi);
    std::memcpy(field, &v, sizeof v);
  }
  std::size_t remaining() const { return size_ - pos_; }

 private:
  const uint8_t *data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// A C enum's bits as an int (the fuzzers pass invalid values on purpose).
template <class Enum>
int bits(const Enum &e) {
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// sfft_options as a caller might pass them: NULL, defaults, a smaller/larger struct_size, any backend,
// negative device/threads. `valid`: resolve_options accepts them; `cuda`: they ask for the CUDA backend
// (which fails on a machine without a GPU once a call gets that far).
struct FuzzedOptions {
  // Room for a caller compiled against a newer header (struct_size > sizeof(sfft_options)).
  struct {
    sfft_options o;
    unsigned char newer_fields[32];
  } storage{};
  bool is_null = false;
  bool valid = true;
  bool cuda = false;
  bool valid_cpu() const { return valid && !cuda; }
  const sfft_options *get() const { return is_null ? nullptr : &storage.o; }
};

inline FuzzedOptions fuzz_options(Input &in) {
  FuzzedOptions f;
  uint8_t mode = in.byte();
  if (mode % 8 == 0) {
    f.is_null = true;
    return f;
  }
  sfft_options_init(&f.storage.o);
  f.storage.o.threads = static_cast<int>(in.in_range(0, 2));
  f.storage.o.seed = in.take<uint16_t>();
  if (mode % 8 == 1) {
    in.enumeration_into(&f.storage.o.backend, 0, 3);
    f.storage.o.device = static_cast<int>(in.in_range(-2, 2));
    // Any int: the library caps large counts (INT_MAX ended the process in the OpenMP runtime).
    static const int threads[] = {-2, -1, 0, 1, 2, 3, 4, 64, 5000, INT_MAX, INT_MIN};
    f.storage.o.threads = threads[in.byte() % 11];
    int b = bits(f.storage.o.backend);
    f.valid = b >= SFFT_BACKEND_AUTO && b <= SFFT_BACKEND_CUDA && f.storage.o.device >= 0 && f.storage.o.threads >= 0;
    f.cuda = b == SFFT_BACKEND_CUDA;
  } else if (mode % 8 == 2) {
    static const std::size_t sizes[] = {0, 4, sizeof(size_t), sizeof(sfft_options) + 32};
    f.storage.o.struct_size = sizes[in.byte() % 4];
    f.valid = f.storage.o.struct_size >= offsetof(sfft_options, backend) + sizeof(sfft_backend);
  } else {
    f.storage.o.backend = SFFT_BACKEND_CPU;
  }
  return f;
}

// Host bytes filled with a recognisable pattern; unchanged() tells whether anything wrote to them.
class Poisoned {
 public:
  explicit Poisoned(std::size_t bytes) : bytes_(bytes, 0xA5) {}
  void *get() { return bytes_.empty() ? static_cast<void *>(&empty_) : static_cast<void *>(bytes_.data()); }
  std::size_t size() const { return bytes_.size(); }
  bool unchanged() const {
    for (unsigned char b : bytes_)
      if (b != 0xA5) return false;
    return empty_ == 0xA5;
  }

 private:
  std::vector<unsigned char> bytes_;
  unsigned char empty_ = 0xA5;
};

// The failure half of the contract: a specific status, a message, and no output written.
inline void check_failure(sfft_status s, const char *call, std::initializer_list<const Poisoned *> outputs) {
  check(s != SFFT_SUCCESS, std::string(call) + " failed but returned SFFT_SUCCESS");
  check(bits(s) >= SFFT_ERROR_INVALID_ARGUMENT && bits(s) <= SFFT_ERROR_INTERNAL,
        std::string(call) + " returned an unknown status " + std::to_string(bits(s)));
  check(s != SFFT_ERROR_INTERNAL, std::string(call) + " returned SFFT_ERROR_INTERNAL (a bug by its own definition)");
  check(*sfft_last_error() != '\0', std::string(call) + " failed without a message");
  for (const Poisoned *p : outputs) check(p->unchanged(), std::string(call) + " failed but wrote to an output");
}

inline void check_success_clean(const char *call) {
  check(*sfft_last_error() == '\0', std::string(call) + " succeeded but left a message");
}

// True when every status allowed on a machine without a GPU for a CUDA request was returned.
inline bool is_no_gpu_status(sfft_status s) { return s == SFFT_ERROR_NO_DEVICE || s == SFFT_ERROR_UNSUPPORTED; }

}  // namespace sfft_fuzz
