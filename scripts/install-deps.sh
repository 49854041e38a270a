#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the system packages sfft needs to build, test and run its demo on Debian/Ubuntu.
# Idempotent: packages already present are left alone; needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(cmake ninja-build g++ gfortran pkg-config python3 python3-venv libfftw3-dev libgtest-dev zlib1g-dev
          libopenmpi-dev openmpi-bin)  # OpenMPI: libsfft_mpi and its tests (optional target)
if [[ "${SFFT_WITH_SANITIZERS:-0}" == 1 ]]; then
  packages+=(clang libclang-rt-14-dev libomp-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
