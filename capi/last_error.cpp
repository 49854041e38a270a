// SPDX-License-Identifier: Apache-2.0
// The thread-local detail behind sfft_last_error() (and, compiled into libsfft_mpi, sfft_mpi_last_error()).
#include <string>

#include "boundary.hpp"

namespace sfft::capi {

namespace {
thread_local std::string last_error;
}

void clear_last_error() noexcept { last_error.clear(); }

void set_last_error(const char *function, const char *detail) noexcept {
  try {
    last_error = std::string(function) + ": " + detail;
  } catch (...) {
    last_error.clear();  // out of memory while reporting; the status code still tells what happened
  }
}

const char *last_error_message() noexcept { return last_error.c_str(); }

}  // namespace sfft::capi
