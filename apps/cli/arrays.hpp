// SPDX-License-Identifier: Apache-2.0
// NumPy files for the CLI: .npy arrays (read and write, little-endian, C order) and .npz archives (read:
// np.savez, np.savez_compressed and scipy.sparse.save_npz), so each subcommand takes and returns user data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cli {

// One array: NumPy's type code without byte order ("f4", "f8", "c8", "c16", "i4", "i8", "u4", "u8", "b1",
// or a fixed-width string "S<n>"/"U<n>"),
// its shape (empty for a 0-d array) and its bytes in C order.
struct Array {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  std::size_t count() const;
  std::size_t item_bytes() const;
  // The values as double (real dtypes) or as (re, im) pairs (complex dtypes); throws for other dtypes.
  std::vector<double> to_real(const std::string &what) const;
  std::vector<double> to_complex(const std::string &what) const;  // 2 doubles per element
  std::vector<int64_t> to_index(const std::string &what) const;   // integer dtypes, or whole-valued floats
  std::string to_text() const;  // S<n> / U<n> string arrays (ASCII), "" for other dtypes
};

// Throws std::runtime_error naming the file and what is wrong (not .npy, big-endian, Fortran order, ...).
Array read_npy(const std::string &path);
std::map<std::string, Array> read_npz(const std::string &path);

// Writes a C-order little-endian .npy of `count` items of `dtype` (a NumPy descr, e.g. "<c16", or a
// structured list such as "[('freq', '<u8'), ('value', '<c16')]").
void write_npy(const std::string &path, const std::string &descr, const std::vector<int64_t> &shape, const void *data,
               std::size_t bytes);

// Bytes of `count` items of `item` bytes, refusing sizes that overflow or exceed what this process may
// allocate (std::runtime_error naming `what`), so that absurd shapes get a message instead of bad_alloc.
std::size_t checked_bytes(std::size_t count, std::size_t item, const std::string &what);

}  // namespace cli
