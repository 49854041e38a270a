// SPDX-License-Identifier: Apache-2.0
#include "plot.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace cli {
namespace {

// RGB image, row-major.
struct Image {
  std::size_t width, height;
  std::vector<unsigned char> rgb;
  Image(std::size_t w, std::size_t h, unsigned char background) : width(w), height(h), rgb(3 * w * h, background) {}
  void set(std::size_t x, std::size_t y, const unsigned char c[3]) { std::memcpy(&rgb[3 * (y * width + x)], c, 3); }
};

// A perceptually ordered dark-blue -> yellow ramp (t in [0, 1]).
void colour(double t, unsigned char out[3]) {
  t = std::clamp(t, 0.0, 1.0);
  out[0] = static_cast<unsigned char>(255 * std::clamp(1.6 * t - 0.3, 0.0, 1.0));
  out[1] = static_cast<unsigned char>(255 * std::clamp(1.1 * t, 0.0, 1.0) * 0.9);
  out[2] = static_cast<unsigned char>(255 * std::clamp(0.6 + 0.8 * t - 1.4 * t * t, 0.0, 1.0) * 0.7);
}

void put_be32(std::string &s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}

void chunk(std::ofstream &out, const char *type, const std::string &data) {
  std::string c;
  put_be32(c, static_cast<uint32_t>(data.size()));
  c += type;
  c += data;
  uLong crc = crc32(0, reinterpret_cast<const Bytef *>(c.data() + 4), static_cast<uInt>(c.size() - 4));
  put_be32(c, static_cast<uint32_t>(crc));
  out.write(c.data(), static_cast<std::streamsize>(c.size()));
}

void write_png(const std::string &path, const Image &img) {
  std::string raw;
  raw.reserve((3 * img.width + 1) * img.height);
  for (std::size_t y = 0; y < img.height; ++y) {
    raw += '\0';  // filter type: none
    raw.append(reinterpret_cast<const char *>(&img.rgb[3 * y * img.width]), 3 * img.width);
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(packed_size, '\0');
  if (compress2(reinterpret_cast<Bytef *>(&packed[0]), &packed_size, reinterpret_cast<const Bytef *>(raw.data()),
                static_cast<uLong>(raw.size()), 6) != Z_OK)
    throw std::runtime_error(path + ": PNG compression failed");
  packed.resize(packed_size);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot create (" + std::strerror(errno) + ")");
  out.write("\x89PNG\r\n\x1a\n", 8);
  std::string header;
  put_be32(header, static_cast<uint32_t>(img.width));
  put_be32(header, static_cast<uint32_t>(img.height));
  header += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, no interlace
  chunk(out, "IHDR", header);
  chunk(out, "IDAT", packed);
  chunk(out, "IEND", "");
  if (!out) throw std::runtime_error(path + ": write error");
}

double scaled(double v, bool log_scale) { return log_scale ? std::log10(std::max(v, 1e-300)) : v; }

}  // namespace

void plot_heatmap(const std::string &path, const std::vector<double> &values, std::size_t rows, std::size_t cols,
                  bool log_scale) {
  if (rows == 0 || cols == 0) throw std::runtime_error(path + ": nothing to plot (empty array)");
  const std::size_t step = std::max((rows + 1023) / 1024, (cols + 1023) / 1024);
  // Small arrays are enlarged (whole pixels per element) to at least 256 pixels on their longer side.
  const std::size_t zoom = step == 1 ? std::max<std::size_t>(1, 256 / std::max(rows, cols)) : 1;
  const Image img((cols + step - 1) / step, (rows + step - 1) / step, 0);
  std::vector<double> cell(img.width * img.height, -INFINITY);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      double &m = cell[(r / step) * img.width + c / step];
      m = std::max(m, scaled(values[r * cols + c], log_scale));
    }
  double lo = INFINITY, hi = -INFINITY;
  for (double v : cell)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (log_scale) lo = std::max(lo, hi - 12);  // twelve decades are all an eye can tell apart
  unsigned char c[3];
  Image zoomed(img.width * zoom, img.height * zoom, 0);
  for (std::size_t i = 0; i < cell.size(); ++i) {
    colour(hi > lo ? (cell[i] - lo) / (hi - lo) : 0.5, c);
    for (std::size_t dy = 0; dy < zoom; ++dy)
      for (std::size_t dx = 0; dx < zoom; ++dx) zoomed.set((i % img.width) * zoom + dx, (i / img.width) * zoom + dy, c);
  }
  write_png(path, zoomed);
}

void plot_stems(const std::string &path, const std::vector<double> &x, const std::vector<double> &y, double x_end,
                bool log_scale) {
  if (x.empty()) throw std::runtime_error(path + ": nothing to plot (no values)");
  Image img(1024, 400, 255);
  double lo = INFINITY, hi = -INFINITY;
  for (double v : y) lo = std::min(lo, scaled(v, log_scale)), hi = std::max(hi, scaled(v, log_scale));
  if (!log_scale) lo = 0;
  const unsigned char axis[3] = {0, 0, 0};
  for (std::size_t px = 0; px < img.width; ++px) img.set(px, img.height - 1, axis);
  unsigned char c[3];
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double t = hi > lo ? (scaled(y[i], log_scale) - lo) / (hi - lo) : 1.0;
    const auto px = static_cast<std::size_t>(std::clamp(x[i] / x_end, 0.0, 1.0) * static_cast<double>(img.width - 1));
    const auto top =
        static_cast<std::size_t>((1 - std::clamp(t, 0.0, 1.0) * 0.95) * static_cast<double>(img.height - 1));
    colour(0.25 + 0.5 * t, c);
    for (std::size_t py = top; py < img.height - 1; ++py)
      for (std::size_t x0 = px > 0 ? px - 1 : 0; x0 <= std::min(px + 1, img.width - 1); ++x0) img.set(x0, py, c);
  }
  write_png(path, img);
}

}  // namespace cli
