// SPDX-License-Identifier: Apache-2.0
// PNG pictures of results for the CLI's --plot: a heat map of a 2-D array and a stem plot of a spectrum.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cli {

// values: rows x cols, row-major; drawn as a heat map (dark = small, bright = large), log10 scale when
// `log_scale`, down-sampled (block maxima) to at most 1024 pixels a side. Throws std::runtime_error.
void plot_heatmap(const std::string &path, const std::vector<double> &values, std::size_t rows, std::size_t cols,
                  bool log_scale);

// One stem per (x, y) with x in [0, x_end) and y >= 0, on a 1024 x 400 canvas (log10 y when `log_scale`).
void plot_stems(const std::string &path, const std::vector<double> &x, const std::vector<double> &y, double x_end,
                bool log_scale);

}  // namespace cli
