# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU machine's MPI checks: uses the machine's own mpiexec when it has one, else the OpenMPI staged
# by tests/mpi/stage-openmpi.sh under $1 (the build folder's openmpi-root unless $2 names one), and lets
# mpiexec run as root. Usage: source tests/mpi/mpiexec-env.sh BUILD_DIR [OPENMPI_ROOT]
root=${2:-$1/openmpi-root}
if ! mpiexec --version > /dev/null 2>&1; then  # none, or a broken one
  root=$(cd "$root" && pwd)
  export OPAL_PREFIX="$root/usr"
  export PATH="$root/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu/openmpi/lib:$root/usr/lib/x86_64-linux-gnu/pmix2/lib:$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PMIX_INSTALL_PREFIX="$root/usr/lib/x86_64-linux-gnu/pmix2"
  export PMIX_MCA_mca_base_component_path="$root/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
