// SPDX-License-Identifier: Apache-2.0
// `sfft SUBCOMMAND [options]`: demonstrations of each family on built-in data.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "sfft/sfft.h"

#if SFFT_CLI_HAS_SHIFT
int cmd_shift(int argc, char **argv);
#endif
#if SFFT_CLI_HAS_SPARSE
int cmd_sparse(int argc, char **argv);
#endif
#if SFFT_CLI_HAS_NUFFT3
int cmd_nufft3(int argc, char **argv);
#endif
#if SFFT_CLI_HAS_SPFFT2D
int cmd_spfft2d(int argc, char **argv);
#endif

namespace {

struct Command {
  const char *name;
  int (*run)(int, char **);
  const char *summary;
};

const Command commands[] = {
#if SFFT_CLI_HAS_SHIFT
    {"shift", cmd_shift, "N-d fftshift/ifftshift of a built-in array, checked against NumPy's index rule"},
#endif
#if SFFT_CLI_HAS_SPARSE
    {"sparse", cmd_sparse, "sparse FFT of a built-in k-sparse signal vs. dense FFTW"},
#endif
#if SFFT_CLI_HAS_NUFFT3
    {"nufft3", cmd_nufft3, "type-3 NUFFT of built-in points, checked against the direct sum"},
#endif
#if SFFT_CLI_HAS_SPFFT2D
    {"spfft2d", cmd_spfft2d, "2-D FFT of a sparse 0/1 matrix (.mtx file or built-in)"},
#endif
};

// `sfft --version`: the library's version and what this build and host provide (sfft_get_build_info).
int print_version() {
  sfft_build_info info;
  if (sfft_get_build_info(&info, sizeof info) != SFFT_SUCCESS) {
    std::fprintf(stderr, "sfft: %s\n", sfft_last_error());
    return 1;
  }
  std::printf("sfft %s\n", sfft_version_string());
  std::printf("families: ");
  const char *names[] = {"shift", "sparse", "nufft3", "spfft2d"};
  const char *separator = "";
  for (unsigned bit = 0; bit < 4; ++bit)
    if (info.families & (1u << bit)) {
      std::printf("%s%s", separator, names[bit]);
      separator = " ";
    }
  std::printf("\nCPU FFT: %s\n", info.fft_library);
  if (!info.cuda_compiled) {
    std::printf("CUDA: not built\n");
  } else if (!info.cuda_loaded) {
    std::printf("CUDA: built for architectures %s, not loaded: %s\n", info.cuda_architectures, info.cuda_unavailable);
  } else {
    std::printf("CUDA: built for architectures %s; runtime %d, driver %d, cuFFT %d; %d device(s)\n",
                info.cuda_architectures, info.cuda_runtime_version, info.cuda_driver_version, info.cufft_version,
                info.cuda_device_count);
  }
  return 0;
}

void usage(FILE *to) {
  std::fprintf(to, "sfft %s — structured Fourier transforms (CUDA devices: %d)\n\n", sfft_version_string(),
               sfft_cuda_device_count());
  std::fprintf(to, "usage: sfft SUBCOMMAND [--help] [options]\n\nsubcommands:\n");
  for (const auto &c : commands) std::fprintf(to, "  %-8s %s\n", c.name, c.summary);
  std::fprintf(to, "  all      run every subcommand on its built-in data\n");
  std::fprintf(to, "\n  --version  the version, families, FFT libraries and CUDA availability\n");
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) return print_version();
  try {
    if (std::strcmp(argv[1], "all") == 0) {
      int failures = 0;
      for (const auto &c : commands) {
        std::printf("==== sfft %s\n", c.name);
        std::fflush(stdout);
        char *sub_argv[] = {const_cast<char *>(c.name), nullptr};
        failures += c.run(1, sub_argv) != 0;
      }
      return failures == 0 ? 0 : 1;
    }
    for (const auto &c : commands)
      if (std::strcmp(argv[1], c.name) == 0) return c.run(argc - 1, argv + 1);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "sfft %s: %s (see --help)\n", argv[1], e.what());
    return 2;
  }
  std::fprintf(stderr, "sfft: unknown subcommand '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
