// SPDX-License-Identifier: Apache-2.0
// The subcommands on the user's own data (.npy / .npz / .mtx in, .npy / .csv / .json / .png out); the
// built-in demonstrations stay in cmd_<family>.cpp and run when no input is named.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli_util.hpp"

namespace cli {

int shift_file(const Args &args, const std::string &input);
int sparse_file(const Args &args, const std::string &input);
int nufft3_files(const Args &args);
// A sparse matrix read from a COO .npz (np.savez(row=, col=, shape=[, data=]) or scipy.sparse.save_npz).
struct CooMatrix {
  uint64_t rows = 0, cols = 0;
  std::vector<int64_t> row, col;
  std::vector<double> values;  // empty: binary
};
CooMatrix read_coo_npz(const std::string &path, bool with_values);
// Runs an spfft2d plan into a host array and writes --out (.npy), --plot (.png), --summary (.json/.csv).
int spfft2d_write(const Args &args, spfft2d_plan plan, const std::string &source, bool dbl);

}  // namespace cli
