#!/usr/bin/env bash
# The main job: builds the t3k command-line tool (Release, against the OpenMP+Serial Kokkos of scripts/setup.sh, in
# build/, configured exactly like the main leg of scripts/run_tests.sh) and fits the built-in synthetic quickstart
# problem (examples/quickstart.yaml); the run prints where its outputs are.
#
# Run scripts/setup.sh first. Environment: T3K_KOKKOS_PREFIX (as in setup.sh), T3K_JOBS (build jobs, default 2),
# OMP_NUM_THREADS (default 2).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"  # CI runners may not set it
PREFIX="${T3K_KOKKOS_PREFIX:-$HOME/.cache/t3k/kokkos-3.4.01-openmp-blas}"
JOBS="${T3K_JOBS:-2}"
log() { printf '[run_main] %s\n' "$*"; }

if [[ ! -f "$PREFIX/.t3k-complete" ]]; then
  log "no OpenMP+Serial Kokkos in $PREFIX: run scripts/setup.sh first"
  exit 1
fi

log "configuring build/ (Release, Kokkos from $PREFIX)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DT3K_KOKKOS_PREFIX="$PREFIX" -DT3K_USE_SYSTEM_KOKKOS=OFF \
  -DT3K_ENABLE_TESTS=ON -DT3K_ENABLE_DRIVERS=ON -DT3K_ENABLE_SANITIZERS=OFF -DT3K_ENABLE_MPI=ON
log "building the t3k command-line tool"
cmake --build build -j "$JOBS" --target t3k_cli

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
log "build/drivers/t3k --version"
build/drivers/t3k --version
log "build/drivers/t3k fit examples/quickstart.yaml"
build/drivers/t3k fit examples/quickstart.yaml
log "done"
