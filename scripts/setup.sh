#!/usr/bin/env bash
# Sets up a fresh Debian bookworm machine for T3K (run as root, or as a user with sudo). Idempotent: a second run
# installs nothing and rebuilds nothing.
#
#   1. Installs the Debian packages T3K needs (only the missing ones).
#   2. Builds Kokkos 3.4.01 with OpenMP + Serial, and Kokkos Kernels, from Debian's own Trilinos 13.2.0 source
#      package into $T3K_KOKKOS_PREFIX (default: $HOME/.cache/t3k/kokkos-3.4.01-openmp-blas), unless that prefix holds
#      the marker .t3k-complete. Debian's prebuilt Kokkos (libtrilinos-kokkos-dev) is Serial-only; T3K's CMake
#      finds this OpenMP build first (cmake/T3KDependencies.cmake). About 170 MB download, under a minute of build.
#      Kokkos Kernels uses OpenBLAS as its BLAS TPL (dense GEMMs of J^T).
#   3. Creates the Python environment of the Python module t3k in $T3K_VENV (default: $HOME/.cache/t3k/venv; a venv
#      of Debian's python3 with the pinned packages of python/requirements.txt from PyPI), unless it already holds
#      exactly those requirements.
#   4. Configures that Kokkos for this machine's CPU (a Kokkos host architecture such as HSW, SKX or ZEN2, detected
#      below): Kokkos passes the matching -march flags to everything built against it, T3K included, so T3K's host
#      kernels use this CPU's vector instructions (AVX2 and FMA, AVX-512) instead of the x86-64 baseline (SSE2).
#      The prefix records the architecture; a machine with another CPU rebuilds it.
#
# Works unattended (CI=true, no stdin). Environment: T3K_KOKKOS_PREFIX, T3K_VENV, T3K_SETUP_JOBS (build jobs, default
# nproc), T3K_KOKKOS_ARCH (a Kokkos 3.4 host architecture such as HSW, SKX, ZEN2; `none` for a portable build that runs on
# any x86-64 CPU; default: detected from this machine, `none` where no known one matches).
set -euo pipefail

export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"  # CI runners may not set it
PREFIX="${T3K_KOKKOS_PREFIX:-$HOME/.cache/t3k/kokkos-3.4.01-openmp-blas}"
VENV="${T3K_VENV:-$HOME/.cache/t3k/venv}"
REQUIREMENTS="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/python/requirements.txt"
JOBS="${T3K_SETUP_JOBS:-$(nproc)}"
PACKAGES=(build-essential cmake libyaml-cpp-dev libgtest-dev libbenchmark-dev libhdf5-dev libopenmpi-dev openmpi-bin
  libopenblas-dev libopenblas0-openmp libcli11-dev libfmt-dev libspdlog-dev libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  dpkg-dev hdf5-tools python3-numpy python3-h5py python3-dev python3-venv)
SOURCES_FILE=/etc/apt/sources.list.d/t3k-src.sources

log() { printf '[setup] %s\n' "$*"; }
die() {
  printf '[setup] error: %s\n' "$*" >&2
  exit 1
}

export DEBIAN_FRONTEND=noninteractive
SUDO=()
if [[ "$(id -u)" != 0 ]]; then
  command -v sudo >/dev/null 2>&1 || die "run as root (or install sudo): apt-get needs root"
  SUDO=(sudo -n env DEBIAN_FRONTEND=noninteractive)
fi
apt_get() { "${SUDO[@]}" apt-get -y -q "$@" </dev/null; }

# ---------------------------------------------------------------------------------------------- Debian packages
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then missing+=("$p"); fi
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  apt_get update
  apt_get install --no-install-recommends "${missing[@]}"
else
  log "Debian packages: all ${#PACKAGES[@]} present"
fi

# ------------------------------------------------------------------------------------------ Python environment
# The marker is a copy of the requirements the venv was made with: changed requirements make a fresh venv.
if [[ -x "$VENV/bin/python" ]] && cmp -s "$REQUIREMENTS" "$VENV/.t3k-requirements"; then
  log "Python environment: present in $VENV"
else
  log "creating the Python environment $VENV (python/requirements.txt from PyPI)"
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS" </dev/null
  cp "$REQUIREMENTS" "$VENV/.t3k-requirements"
fi

# ------------------------------------------------------------------------------------- host architecture
# The Kokkos 3.4 host architecture whose -march this machine runs: AMD Zen by the compiler's name for the CPU (Kokkos
# 3.4 knows Zen 1-3; later Zens run Zen 3's code), Intel and others by the vector extensions GCC would use for it.
# Only instructions the compiler generates by itself are checked: SKX's -march also enables intrinsics-only
# extensions (RTM, PKU, SGX) that virtual machines often hide, and T3K calls none of them.
detect_kokkos_arch() {
  local cxx="${CXX:-c++}" native_name macros feature
  native_name="$("$cxx" -march=native -Q --help=target 2>/dev/null | awk '$1 == "-march=" { print $2; exit }')" || true
  macros="$("$cxx" -march=native -dM -E -x c++ /dev/null 2>/dev/null)" || true
  has() {
    for feature in "$@"; do grep -q "^#define __${feature}__ 1\$" <<<"$macros" || return 1; done
  }
  case "$native_name" in
    znver1) echo ZEN ;;
    znver2) echo ZEN2 ;;
    znver[3-9]*) echo ZEN3 ;;
    *)
      if has AVX2 FMA BMI BMI2 LZCNT MOVBE F16C POPCNT AVX512F AVX512CD AVX512BW AVX512DQ AVX512VL; then
        echo SKX
      elif has AVX2 FMA BMI BMI2 LZCNT MOVBE F16C POPCNT; then
        echo HSW
      else
        echo none
      fi
      ;;
  esac
}
ARCH="${T3K_KOKKOS_ARCH:-$(detect_kokkos_arch)}"
ARCH="${ARCH^^}" # Kokkos' spelling, and one spelling in the prefix's marker
case "$ARCH" in
  NONE) ARCH=none ;;
  AMDAVX | ARMV80 | ARMV81 | ARMV8_THUNDERX | ARMV8_THUNDERX2 | A64FX | WSM | SNB | HSW | BDW | SKX | KNC | KNL | BGQ | \
    POWER7 | POWER8 | POWER9 | ZEN | ZEN2 | ZEN3) ;;
  *) die "T3K_KOKKOS_ARCH='${T3K_KOKKOS_ARCH:-}': not a Kokkos 3.4 host architecture (HSW, SKX, ZEN2, ... or none)" ;;
esac
ARCH_FLAGS=()
[[ "$ARCH" == none ]] || ARCH_FLAGS=("-DKokkos_ARCH_${ARCH}=ON")

# ------------------------------------------------------------------------------ Kokkos + Kokkos Kernels (OpenMP)
# The marker holds the architecture the prefix was built for (empty: built before architectures were recorded).
if [[ -f "$PREFIX/.t3k-complete" ]]; then
  built_arch="$(cat "$PREFIX/.t3k-complete")"
  if [[ "$built_arch" == "$ARCH" ]]; then
    log "Kokkos (OpenMP+Serial, host architecture $ARCH): present in $PREFIX"
    log "done"
    exit 0
  fi
  log "Kokkos in $PREFIX was built for host architecture '${built_arch:-unrecorded}', wanted now: $ARCH; rebuilding"
fi

log "building Kokkos 3.4.01 (OpenMP+Serial, host architecture $ARCH) and Kokkos Kernels from Debian's trilinos" \
  "source package into $PREFIX"

# Source packages need a deb-src entry; add one for bookworm main unless some source list already has one.
if ! grep -rqsE '^[[:space:]]*(Types:.*deb-src|deb-src[[:space:]])' /etc/apt/sources.list /etc/apt/sources.list.d/ ||
  [[ -f "$SOURCES_FILE" ]]; then
  log "adding deb-src for bookworm main ($SOURCES_FILE)"
  printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm' 'Components: main' \
    'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' | "${SUDO[@]}" tee "$SOURCES_FILE" >/dev/null
fi
apt_get update

work="$(mktemp -d "${TMPDIR:-/tmp}/t3k-kokkos.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# apt downloads as the unprivileged user _apt when it can write the target directory (else it warns).
if [[ "$(id -u)" == 0 ]] && id _apt >/dev/null 2>&1; then chown _apt "$work"; fi
cd "$work"

log "downloading the trilinos source package"
apt-get source --download-only -q trilinos </dev/null
tarball="$(ls trilinos_*.orig.tar.* 2>/dev/null | head -n 1 || true)"
[[ -n "$tarball" ]] || die "apt-get source trilinos produced no trilinos_*.orig.tar.* in $work"
log "extracting packages/kokkos and packages/kokkos-kernels from $tarball"
tar -xf "$tarball" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
kokkos_src="$(find "$work" -maxdepth 3 -type d -path '*/packages/kokkos' | head -n 1)"
kernels_src="$(find "$work" -maxdepth 3 -type d -path '*/packages/kokkos-kernels' | head -n 1)"
[[ -d "$kokkos_src" && -d "$kernels_src" ]] || die "packages/kokkos or packages/kokkos-kernels missing in $tarball"

rm -rf "$PREFIX"
mkdir -p "$PREFIX"

log "configuring and building Kokkos ($JOBS jobs)"
cmake -S "$kokkos_src" -B "$work/build-kokkos" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DCMAKE_CXX_STANDARD=17 "${ARCH_FLAGS[@]}" \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_BUILD_TYPE=Release >"$work/kokkos-configure.log" 2>&1 ||
  {
    tail -n 40 "$work/kokkos-configure.log" >&2
    die "Kokkos configuration failed (host architecture $ARCH; T3K_KOKKOS_ARCH=none configures it without one)"
  }
cmake --build "$work/build-kokkos" -j "$JOBS" >"$work/kokkos-build.log" 2>&1 ||
  {
    tail -n 40 "$work/kokkos-build.log" >&2
    die "Kokkos build failed"
  }
cmake --install "$work/build-kokkos" >/dev/null

# OpenBLAS as Kokkos Kernels' BLAS TPL: KokkosBlas::gemm on host Views then calls OpenBLAS's dgemm/sgemm (about 8x
# Kokkos Kernels' own host GEMM on this hardware), which is what J^T's core contractions run on.
log "configuring and building Kokkos Kernels ($JOBS jobs; BLAS TPL OpenBLAS; no explicit instantiations)"
cmake -S "$kernels_src" -B "$work/build-kernels" -DCMAKE_INSTALL_PREFIX="$PREFIX" -DKokkos_ROOT="$PREFIX" \
  -DCMAKE_BUILD_TYPE=Release -DKokkosKernels_ENABLE_TPL_BLAS=ON \
  -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_INST_DOUBLE=OFF \
  -DKokkosKernels_INST_FLOAT=OFF -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_OFFSET_INT=OFF \
  -DKokkosKernels_INST_OFFSET_SIZE_T=OFF -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=OFF \
  -DKokkosKernels_ENABLE_TESTS=OFF >"$work/kernels-configure.log" 2>&1 ||
  {
    tail -n 40 "$work/kernels-configure.log" >&2
    die "Kokkos Kernels configuration failed"
  }
cmake --build "$work/build-kernels" -j "$JOBS" >"$work/kernels-build.log" 2>&1 ||
  {
    tail -n 40 "$work/kernels-build.log" >&2
    die "Kokkos Kernels build failed"
  }
cmake --install "$work/build-kernels" >/dev/null

echo "$ARCH" >"$PREFIX/.t3k-complete"
log "Kokkos (OpenMP+Serial, host architecture $ARCH) and Kokkos Kernels installed in $PREFIX"
log "done"
