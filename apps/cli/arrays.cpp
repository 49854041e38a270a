// SPDX-License-Identifier: Apache-2.0
#include "arrays.hpp"

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

namespace cli {
namespace {

[[noreturn]] void bad(const std::string &path, const std::string &why) { throw std::runtime_error(path + ": " + why); }

std::vector<unsigned char> slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, std::string("cannot open (") + std::strerror(errno) + ")");
  std::vector<unsigned char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) bad(path, "read error");
  return data;
}

std::size_t item_size(const std::string &dtype) {
  if (dtype == "b1") return 1;
  // Fixed-width strings: bytes (S<n>) and UTF-32 (U<n>), as NumPy saves str and bytes scalars.
  if ((dtype[0] == 'S' || dtype[0] == 'U') && dtype.size() > 1 && dtype.size() < 6 &&
      dtype.find_first_not_of("0123456789", 1) == std::string::npos)
    return (dtype[0] == 'U' ? 4u : 1u) * static_cast<std::size_t>(std::stoul(dtype.substr(1)));
  if (dtype == "f4" || dtype == "i4" || dtype == "u4") return 4;
  if (dtype == "f8" || dtype == "c8" || dtype == "i8" || dtype == "u8") return 8;
  if (dtype == "c16") return 16;
  return 0;
}

// The value of `key` in NumPy's header dict, e.g. "'<f8'" or "(3, 4)".
std::string header_value(const std::string &header, const std::string &key, const std::string &path) {
  auto k = header.find("'" + key + "'");
  if (k == std::string::npos) bad(path, "the .npy header has no '" + key + "'");
  auto colon = header.find(':', k);
  if (colon == std::string::npos) bad(path, "malformed .npy header");
  std::size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) bad(path, "malformed .npy header");
  std::size_t end = start;
  if (header[start] == '(') {
    end = header.find(')', start);
    if (end == std::string::npos) bad(path, "malformed shape in the .npy header");
    return header.substr(start, end - start + 1);
  }
  if (header[start] == '\'') {
    end = header.find('\'', start + 1);
    if (end == std::string::npos) bad(path, "malformed .npy header");
    return header.substr(start + 1, end - start - 1);
  }
  end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

Array parse_npy(const std::vector<unsigned char> &data, const std::string &path) {
  static const unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (data.size() < 10 || std::memcmp(data.data(), magic, 6) != 0) bad(path, "not a .npy file (no NUMPY magic)");
  const unsigned major = data[6];
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = data[8] | (std::size_t{data[9]} << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) bad(path, "truncated .npy header");
    header_len = data[8] | (std::size_t{data[9]} << 8) | (std::size_t{data[10]} << 16) | (std::size_t{data[11]} << 24);
    offset = 12;
  } else {
    bad(path, ".npy format version " + std::to_string(major) + " is not supported");
  }
  if (offset + header_len > data.size()) bad(path, "truncated .npy header");
  const std::string header(reinterpret_cast<const char *>(data.data()) + offset, header_len);
  Array a;
  std::string descr = header_value(header, "descr", path);
  if (descr.size() < 2 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '='))
    bad(path, "dtype '" + descr + "' is not a little-endian number (save it with .astype('<f8') or similar)");
  a.dtype = descr.substr(1);
  if (item_size(a.dtype) == 0)
    bad(path, "dtype '" + descr + "' is not supported (float32/64, complex64/128, int32/64)");
  if (header_value(header, "fortran_order", path) != "False")
    bad(path, "Fortran-ordered arrays are not supported (save np.ascontiguousarray(a))");
  std::string shape = header_value(header, "shape", path);
  std::stringstream ss(shape.substr(1, shape.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto first = item.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    char *end = nullptr;
    long long e = std::strtoll(item.c_str() + first, &end, 10);
    if (e < 0 || end == item.c_str() + first) bad(path, "malformed shape " + shape);
    a.shape.push_back(e);
  }
  const std::size_t bytes = checked_bytes(a.count(), a.item_bytes(), path);
  if (data.size() - offset - header_len < bytes)
    bad(path, "holds " + std::to_string(data.size() - offset - header_len) + " data bytes, the shape " + shape +
                  " needs " + std::to_string(bytes));
  a.bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(offset + header_len),
                 data.begin() + static_cast<std::ptrdiff_t>(offset + header_len + bytes));
  return a;
}

uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::vector<unsigned char> inflate_raw(const unsigned char *src, std::size_t n, std::size_t out_bytes,
                                       const std::string &what) {
  std::vector<unsigned char> out(out_bytes);
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) bad(what, "zlib initialisation failed");
  z.next_in = const_cast<unsigned char *>(src);
  z.avail_in = static_cast<uInt>(n);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out_bytes);
  const int status = inflate(&z, Z_FINISH);
  inflateEnd(&z);
  if (status != Z_STREAM_END || z.total_out != out_bytes) bad(what, "corrupt deflate data");
  return out;
}

}  // namespace

std::size_t Array::item_bytes() const { return item_size(dtype); }

std::string Array::to_text() const {
  if (dtype.empty() || (dtype[0] != 'S' && dtype[0] != 'U')) return {};
  std::string text;
  const std::size_t step = dtype[0] == 'U' ? 4 : 1;  // UTF-32: keep the ASCII code units
  for (std::size_t i = 0; i < bytes.size(); i += step)
    if (bytes[i] != 0) text += static_cast<char>(bytes[i]);
  return text;
}

std::size_t Array::count() const {
  std::size_t n = 1;
  for (int64_t e : shape) {
    if (e != 0 && n > std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(e))
      throw std::runtime_error("array shape overflows");
    n *= static_cast<std::size_t>(e);
  }
  return n;
}

std::vector<double> Array::to_real(const std::string &what) const {
  std::vector<double> out(count());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const unsigned char *p = bytes.data() + i * item_bytes();
    if (dtype == "f8") {
      std::memcpy(&out[i], p, 8);
    } else if (dtype == "f4") {
      float f;
      std::memcpy(&f, p, 4);
      out[i] = f;
    } else {
      out[i] = static_cast<double>(to_index(what)[i]);
    }
  }
  return out;
}

std::vector<double> Array::to_complex(const std::string &what) const {
  std::vector<double> out(2 * count(), 0.0);
  if (dtype == "c16") {
    std::memcpy(out.data(), bytes.data(), bytes.size());
  } else if (dtype == "c8") {
    for (std::size_t i = 0; i < 2 * count(); ++i) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      out[i] = f;
    }
  } else {
    std::vector<double> re = to_real(what);
    for (std::size_t i = 0; i < re.size(); ++i) out[2 * i] = re[i];
  }
  return out;
}

std::vector<int64_t> Array::to_index(const std::string &what) const {
  std::vector<int64_t> out(count());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const unsigned char *p = bytes.data() + i * item_bytes();
    if (dtype == "i4") {
      int32_t v;
      std::memcpy(&v, p, 4);
      out[i] = v;
    } else if (dtype == "i8" || dtype == "u8") {
      std::memcpy(&out[i], p, 8);
      if (dtype == "u8" && out[i] < 0) throw std::runtime_error(what + ": index beyond 2^63");
    } else if (dtype == "u4") {
      uint32_t v;
      std::memcpy(&v, p, 4);
      out[i] = v;
    } else if (dtype == "f8" || dtype == "f4") {
      double v = 0;
      if (dtype == "f8") {
        std::memcpy(&v, p, 8);
      } else {
        float f;
        std::memcpy(&f, p, 4);
        v = f;
      }
      if (v != std::floor(v) || std::fabs(v) > 9e15)
        throw std::runtime_error(what + ": value " + std::to_string(v) + " is not an integer");
      out[i] = static_cast<int64_t>(v);
    } else {
      throw std::runtime_error(what + ": dtype " + dtype + " cannot be read as integers");
    }
  }
  return out;
}

Array read_npy(const std::string &path) { return parse_npy(slurp(path), path); }

std::map<std::string, Array> read_npz(const std::string &path) {
  const std::vector<unsigned char> zip = slurp(path);
  // The end-of-central-directory record (the last 22 bytes plus an optional comment of up to 64 KiB).
  std::size_t eocd = std::string::npos;
  for (std::size_t i = zip.size() >= 22 ? zip.size() - 22 : 0; i + 22 <= zip.size(); --i) {
    if (le(&zip[i], 4) == 0x06054b50) {
      eocd = i;
      break;
    }
    if (i == 0 || zip.size() - i > 22 + 65535) break;
  }
  if (eocd == std::string::npos) bad(path, "not a .npz (zip) file");
  uint64_t entries = le(&zip[eocd + 10], 2), cd_offset = le(&zip[eocd + 16], 4);
  if ((entries == 0xFFFF || cd_offset == 0xFFFFFFFF) && eocd >= 20 && le(&zip[eocd - 20], 4) == 0x07064b50) {
    const uint64_t z64 = le(&zip[eocd - 20 + 8], 8);  // zip64 end-of-central-directory record
    if (z64 + 56 > zip.size() || le(&zip[z64], 4) != 0x06064b50) bad(path, "corrupt zip64 directory");
    entries = le(&zip[z64 + 32], 8);
    cd_offset = le(&zip[z64 + 48], 8);
  }
  std::map<std::string, Array> arrays;
  uint64_t p = cd_offset;
  for (uint64_t e = 0; e < entries; ++e) {
    if (p + 46 > zip.size() || le(&zip[p], 4) != 0x02014b50) bad(path, "corrupt zip central directory");
    const unsigned method = static_cast<unsigned>(le(&zip[p + 10], 2));
    uint64_t csize = le(&zip[p + 20], 4), usize = le(&zip[p + 24], 4), local = le(&zip[p + 42], 4);
    const std::size_t name_len = le(&zip[p + 28], 2), extra_len = le(&zip[p + 30], 2),
                      comment_len = le(&zip[p + 32], 2);
    if (p + 46 + name_len + extra_len > zip.size()) bad(path, "corrupt zip central directory");
    std::string name(reinterpret_cast<const char *>(&zip[p + 46]), name_len);
    // zip64 extra field: the 64-bit values of whichever fields hold 0xFFFFFFFF, in this order.
    for (std::size_t x = p + 46 + name_len; x + 4 <= p + 46 + name_len + extra_len;) {
      const uint64_t id = le(&zip[x], 2), len = le(&zip[x + 2], 2);
      if (id == 1) {
        std::size_t q = x + 4;
        if (usize == 0xFFFFFFFF) usize = le(&zip[q], 8), q += 8;
        if (csize == 0xFFFFFFFF) csize = le(&zip[q], 8), q += 8;
        if (local == 0xFFFFFFFF) local = le(&zip[q], 8);
      }
      x += 4 + len;
    }
    p += 46 + name_len + extra_len + comment_len;
    if (local + 30 > zip.size() || le(&zip[local], 4) != 0x04034b50) bad(path, "corrupt zip entry " + name);
    const uint64_t data = local + 30 + le(&zip[local + 26], 2) + le(&zip[local + 28], 2);
    if (data + csize > zip.size()) bad(path, "truncated zip entry " + name);
    std::vector<unsigned char> member;
    if (method == 0) {
      member.assign(zip.begin() + static_cast<std::ptrdiff_t>(data),
                    zip.begin() + static_cast<std::ptrdiff_t>(data + csize));
    } else if (method == 8) {
      member = inflate_raw(&zip[data], csize, checked_bytes(usize, 1, path + ":" + name), path + ":" + name);
    } else {
      bad(path, "zip entry " + name + " uses compression method " + std::to_string(method));
    }
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    arrays[name] = parse_npy(member, path + ":" + name);
  }
  return arrays;
}

void write_npy(const std::string &path, const std::string &descr, const std::vector<int64_t> &shape, const void *data,
               std::size_t bytes) {
  std::string dims = "(";
  for (std::size_t d = 0; d < shape.size(); ++d)
    dims += std::to_string(shape[d]) + (shape.size() == 1 ? "," : d + 1 < shape.size() ? ", " : "");
  dims += ")";
  std::string header = "{'descr': " + (descr.front() == '[' ? descr : "'" + descr + "'") +
                       ", 'fortran_order': False, 'shape': " + dims + ", }";
  // Pad with spaces to a multiple of 64 bytes including the 10-byte preamble and the closing newline.
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  if (header.size() > 65535) throw std::runtime_error(path + ": .npy header too long");
  std::ofstream out(path, std::ios::binary);
  if (!out) bad(path, std::string("cannot create (") + std::strerror(errno) + ")");
  const unsigned char preamble[10] = {0x93,
                                      'N',
                                      'U',
                                      'M',
                                      'P',
                                      'Y',
                                      1,
                                      0,
                                      static_cast<unsigned char>(header.size() & 0xFF),
                                      static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char *>(preamble), 10);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char *>(data), static_cast<std::streamsize>(bytes));
  if (!out) bad(path, "write error");
}

std::size_t checked_bytes(std::size_t count, std::size_t item, const std::string &what) {
  if (item != 0 && count > std::numeric_limits<std::size_t>::max() / item)
    throw std::runtime_error(what + ": " + std::to_string(count) + " items overflow the address space");
  const std::size_t bytes = count * item;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const double physical = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
  if (physical > 0 && static_cast<double>(bytes) > physical)
    throw std::runtime_error(what + ": needs " + std::to_string(bytes) + " bytes, more than this machine's " +
                             std::to_string(static_cast<unsigned long long>(physical)) + " bytes of memory");
  return bytes;
}

}  // namespace cli
