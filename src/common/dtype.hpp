// Element types: sizes, names, and the real/complex precision each dtype maps to.
#pragma once

#include <complex>
#include <cstddef>

#include "common/error.hpp"

namespace sfft {

inline bool dtype_valid(int d) { return d >= SFFT_FLOAT32 && d <= SFFT_COMPLEX128; }

inline std::size_t dtype_size(sfft_dtype d) {
  switch (d) {
    case SFFT_FLOAT32: return 4;
    case SFFT_FLOAT64: return 8;
    case SFFT_COMPLEX64: return 8;
    case SFFT_COMPLEX128: return 16;
  }
  fail(SFFT_ERROR_INVALID_ARGUMENT, "dtype ", static_cast<int>(d), " is not an sfft_dtype");
}

inline const char *dtype_name(sfft_dtype d) {
  switch (d) {
    case SFFT_FLOAT32: return "SFFT_FLOAT32";
    case SFFT_FLOAT64: return "SFFT_FLOAT64";
    case SFFT_COMPLEX64: return "SFFT_COMPLEX64";
    case SFFT_COMPLEX128: return "SFFT_COMPLEX128";
  }
  return "(invalid dtype)";
}

// Throws unless dtype is one of the complex types; returns true for double precision.
inline bool require_complex_dtype(sfft_dtype d, const char *what) {
  require(d == SFFT_COMPLEX64 || d == SFFT_COMPLEX128, what, " must be SFFT_COMPLEX64 or SFFT_COMPLEX128, got ",
          dtype_valid(d) ? dtype_name(d) : "an invalid value");
  return d == SFFT_COMPLEX128;
}

}  // namespace sfft
