// SPDX-License-Identifier: Apache-2.0
// bench_mpi's planted signal: k tones, and a rank's block of their inverse DFT built in device memory (--gpu),
// so that blocks of 2^33 samples need neither a host copy nor a host FFT of that length.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace bench_mpi {

// One planted coefficient: X[f] = value; the signal is x[t] = (1/n) sum over tones of value * e^{2 pi i f t / n}.
struct Tone {
  uint64_t f;
  std::complex<double> value;
};

// Samples [offset, offset + length) of the signal of `tones` (length n), in complex64, into device memory x.
// Each sample is the direct sum over the tones in double precision, rounded once to complex64.
void tones_block_on_device(std::complex<float> *x, uint64_t n, uint64_t offset, uint64_t length,
                           const std::vector<Tone> &tones);

}  // namespace bench_mpi
