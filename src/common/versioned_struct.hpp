// SPDX-License-Identifier: Apache-2.0
// The one reader and writer of the public option structs, which grow by appending fields and carry their
// size as the caller was compiled in their first field (struct_size). Either side may be the newer one:
//  - a caller's struct that is smaller than the library's: only its bytes are read or written, and the
//    fields it lacks take their defaults;
//  - a caller's struct that is larger: accepted when the bytes the library does not know are zero (what
//    the caller's init left there), refused otherwise, since they would be settings the library ignores.
#pragma once

#include <cstddef>
#include <cstring>

#include "common/error.hpp"

namespace sfft {

// Fills the caller's struct of `caller_size` bytes with `defaults`, never writing past caller_size, and
// records caller_size in it. A caller_size smaller than the size field itself writes nothing.
template <class Struct>
void init_versioned(Struct *out, std::size_t caller_size, const Struct &defaults) noexcept {
  if (out == nullptr || caller_size < sizeof out->struct_size) return;
  unsigned char *bytes = reinterpret_cast<unsigned char *>(out);
  const std::size_t known = caller_size < sizeof(Struct) ? caller_size : sizeof(Struct);
  std::memcpy(bytes, &defaults, known);
  if (caller_size > known) std::memset(bytes + known, 0, caller_size - known);
  out->struct_size = caller_size;
}

// The library's copy of the caller's struct: the caller's fields over `defaults`. `min_size` is the size
// of the first published layout's leading fields that every caller has; `name` and `init` word errors.
template <class Struct>
Struct read_versioned(const Struct *in, std::size_t min_size, const Struct &defaults, const char *name,
                      const char *init) {
  Struct out = defaults;
  if (in == nullptr) return out;
  const std::size_t caller_size = in->struct_size;
  require(caller_size >= min_size, name, "->struct_size = ", caller_size, " is too small; call ", init, "() first");
  const unsigned char *bytes = reinterpret_cast<const unsigned char *>(in);
  for (std::size_t i = sizeof(Struct); i < caller_size; ++i)
    require(bytes[i] == 0, name, "->struct_size = ", caller_size, " is larger than this library's ", sizeof(Struct),
            " and byte ", i, " is set: the caller was built against a newer sfft.h with fields this library (",
            SFFT_VERSION_MAJOR, ".", SFFT_VERSION_MINOR, ".", SFFT_VERSION_PATCH, ") does not have");
  std::memcpy(&out, in, caller_size < sizeof(Struct) ? caller_size : sizeof(Struct));
  out.struct_size = sizeof(Struct);
  return out;
}

}  // namespace sfft
