// SPDX-License-Identifier: Apache-2.0
// Element types: sizes, names, and the real/complex precision each dtype maps to.
//
// Enums arrive from C, where any int value can be passed. Loading an out-of-range value as a C++ enum is
// undefined behaviour, so these helpers take the enum by reference and read its bits as an int; capi code
// passes user-supplied enums on by reference until they are validated.
#pragma once

#include <complex>
#include <cstddef>
#include <cstring>

#include "common/error.hpp"

namespace sfft {

// The value of a C enum object as an int, without an enum-typed load.
template <class Enum>
int enum_value(const Enum &e) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized on every supported ABI");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

inline bool dtype_valid(const sfft_dtype &d) {
  int v = enum_value(d);
  return v >= SFFT_FLOAT32 && v <= SFFT_COMPLEX128;
}

inline std::size_t dtype_size(const sfft_dtype &d) {
  switch (enum_value(d)) {
    case SFFT_FLOAT32:
      return 4;
    case SFFT_FLOAT64:
      return 8;
    case SFFT_COMPLEX64:
      return 8;
    case SFFT_COMPLEX128:
      return 16;
    default:
      break;
  }
  fail(SFFT_ERROR_INVALID_ARGUMENT, "dtype ", enum_value(d), " is not an sfft_dtype");
}

inline const char *dtype_name(const sfft_dtype &d) {
  switch (enum_value(d)) {
    case SFFT_FLOAT32:
      return "SFFT_FLOAT32";
    case SFFT_FLOAT64:
      return "SFFT_FLOAT64";
    case SFFT_COMPLEX64:
      return "SFFT_COMPLEX64";
    case SFFT_COMPLEX128:
      return "SFFT_COMPLEX128";
    default:
      return "(invalid dtype)";
  }
}

// Throws unless dtype is one of the complex types; returns true for double precision.
inline bool require_complex_dtype(const sfft_dtype &d, const char *what) {
  int v = enum_value(d);
  require(v == SFFT_COMPLEX64 || v == SFFT_COMPLEX128, what, " must be SFFT_COMPLEX64 or SFFT_COMPLEX128, got ",
          dtype_valid(d) ? dtype_name(d) : "an invalid value");
  return v == SFFT_COMPLEX128;
}

}  // namespace sfft
