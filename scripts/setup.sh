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
#   3. Builds the same Kokkos and Kokkos Kernels for AMD GPUs (HIP, gfx908) with Debian's hipcc into
#      $T3K_KOKKOS_HIP_PREFIX (default: $HOME/.cache/t3k/kokkos-3.4.01-hip): the hip leg of scripts/run_tests.sh compiles
#      T3K against it, so that every change compiles for HIP. About two minutes of build.
#   4. Creates the Python environment of the Python module t3k in $T3K_VENV (default: $HOME/.cache/t3k/venv; a venv
#      of Debian's python3 with the pinned packages of python/requirements.txt from PyPI), unless it already holds
#      exactly those requirements.
#   5. Configures the OpenMP Kokkos for this machine's CPU (a Kokkos host architecture such as HSW, SKX or ZEN2, detected
#      below): Kokkos passes the matching -march flags to everything built against it, T3K included, so T3K's host
#      kernels use this CPU's vector instructions (AVX2 and FMA, AVX-512) instead of the x86-64 baseline (SSE2).
#      The prefix records the architecture; a machine with another CPU rebuilds it.
#
# Works unattended (CI=true, no stdin). Environment: T3K_KOKKOS_PREFIX, T3K_KOKKOS_HIP_PREFIX, T3K_VENV,
# T3K_SETUP_JOBS (build jobs, default nproc), T3K_KOKKOS_ARCH (a Kokkos 3.4 host architecture such as HSW, SKX, ZEN2;
# `none` for a portable build that runs on
# any x86-64 CPU; default: detected from this machine, `none` where no known one matches).
set -euo pipefail

export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"  # CI runners may not set it
PREFIX="${T3K_KOKKOS_PREFIX:-$HOME/.cache/t3k/kokkos-3.4.01-openmp-blas}"
VENV="${T3K_VENV:-$HOME/.cache/t3k/venv}"
SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REQUIREMENTS="$SCRIPTS_DIR/../python/requirements.txt"
JOBS="${T3K_SETUP_JOBS:-$(nproc)}"
PACKAGES=(build-essential cmake libyaml-cpp-dev libgtest-dev libbenchmark-dev libhdf5-dev libopenmpi-dev openmpi-bin
  libopenblas-dev libopenblas0-openmp libcli11-dev libfmt-dev libspdlog-dev libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  dpkg-dev doxygen hdf5-tools python3-numpy python3-h5py python3-dev python3-venv hipcc libamdhip64-dev rocm-device-libs)
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

# ------------------------------------------------------------------------------ Kokkos + Kokkos Kernels
# Two prefixes from the same sources: OpenMP+Serial for this CPU (the main and device-paths legs, the t3k tool), and
# HIP+Serial for AMD GPUs of architecture gfx908, built with Debian's hipcc (the hip leg compiles T3K against it; this
# machine has no AMD GPU to run it on). Each holds a marker when complete: the OpenMP one records its host
# architecture (empty: built before architectures were recorded), the HIP one its GPU architecture.
HIP_PREFIX="${T3K_KOKKOS_HIP_PREFIX:-$HOME/.cache/t3k/kokkos-3.4.01-hip}"
HIP_ARCH=VEGA908
need_openmp=1
need_hip=1
if [[ -f "$PREFIX/.t3k-complete" ]]; then
  built_arch="$(cat "$PREFIX/.t3k-complete")"
  if [[ "$built_arch" == "$ARCH" ]]; then
    log "Kokkos (OpenMP+Serial, host architecture $ARCH): present in $PREFIX"
    need_openmp=0
  else
    log "Kokkos in $PREFIX was built for host architecture '${built_arch:-unrecorded}', wanted now: $ARCH; rebuilding"
  fi
fi
if [[ "$(cat "$HIP_PREFIX/.t3k-complete" 2>/dev/null)" == "$HIP_ARCH" ]]; then
  log "Kokkos (HIP+Serial, $HIP_ARCH): present in $HIP_PREFIX"
  need_hip=0
fi
if ((need_openmp == 0 && need_hip == 0)); then
  log "done"
  exit 0
fi

# Source packages need a deb-src entry. Unless another source list has one, add one that repeats the machine's own
# bookworm `deb` entries (mirror, components, key), so that this works wherever apt does.
if ! grep -rqsE '^[[:space:]]*(Types:.*deb-src|deb-src[[:space:]])' /etc/apt/sources.list /etc/apt/sources.list.d/ ||
  [[ -f "$SOURCES_FILE" ]]; then
  entry="$(/usr/bin/python3 "$SCRIPTS_DIR/deb_src_sources.py" bookworm --skip "$SOURCES_FILE")" ||
    die "cannot derive a deb-src entry from this machine's apt sources (see the line above)"
  log "adding deb-src for bookworm main from this machine's apt sources ($SOURCES_FILE)"
  printf '%s\n' "$entry" | "${SUDO[@]}" tee "$SOURCES_FILE" >/dev/null
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

# build_step NAME LOG COMMAND...: runs COMMAND with its output in LOG; on failure shows LOG's tail and stops.
build_step() {
  local name="$1" log_file="$2"
  shift 2
  "$@" >"$log_file" 2>&1 || {
    tail -n 40 "$log_file" >&2
    die "$name failed"
  }
}

# Kokkos Kernels without explicit instantiations (T3K instantiates what it uses), in the prefix of its Kokkos.
kernels_flags=(-DCMAKE_BUILD_TYPE=Release -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_INST_DOUBLE=OFF
  -DKokkosKernels_INST_FLOAT=OFF -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_OFFSET_INT=OFF
  -DKokkosKernels_INST_OFFSET_SIZE_T=OFF -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=OFF
  -DKokkosKernels_ENABLE_TESTS=OFF)

if ((need_openmp)); then
  log "building Kokkos 3.4.01 (OpenMP+Serial, host architecture $ARCH) and Kokkos Kernels into $PREFIX ($JOBS jobs)"
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX"
  build_step "Kokkos configuration (host architecture $ARCH; T3K_KOKKOS_ARCH=none configures it without one)" \
    "$work/kokkos-configure.log" cmake -S "$kokkos_src" -B "$work/build-kokkos" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DCMAKE_CXX_STANDARD=17 "${ARCH_FLAGS[@]}" \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_BUILD_TYPE=Release
  build_step "Kokkos build" "$work/kokkos-build.log" cmake --build "$work/build-kokkos" -j "$JOBS"
  cmake --install "$work/build-kokkos" >/dev/null
  # OpenBLAS as Kokkos Kernels' BLAS TPL: KokkosBlas::gemm on host Views then calls OpenBLAS's dgemm/sgemm (about 8x
  # Kokkos Kernels' own host GEMM), which is what J^T's core contractions run on.
  build_step "Kokkos Kernels configuration" "$work/kernels-configure.log" cmake -S "$kernels_src" \
    -B "$work/build-kernels" -DCMAKE_INSTALL_PREFIX="$PREFIX" -DKokkos_ROOT="$PREFIX" \
    -DKokkosKernels_ENABLE_TPL_BLAS=ON "${kernels_flags[@]}"
  build_step "Kokkos Kernels build" "$work/kernels-build.log" cmake --build "$work/build-kernels" -j "$JOBS"
  cmake --install "$work/build-kernels" >/dev/null
  echo "$ARCH" >"$PREFIX/.t3k-complete"
  log "Kokkos (OpenMP+Serial, host architecture $ARCH) and Kokkos Kernels installed in $PREFIX"
fi

if ((need_hip)); then
  command -v hipcc >/dev/null 2>&1 || die "hipcc not found (Debian package hipcc)"
  log "building Kokkos 3.4.01 (HIP+Serial, $HIP_ARCH) and Kokkos Kernels with hipcc into $HIP_PREFIX ($JOBS jobs)"
  rm -rf "$HIP_PREFIX"
  mkdir -p "$HIP_PREFIX"
  build_step "Kokkos HIP configuration" "$work/kokkos-hip-configure.log" cmake -S "$kokkos_src" \
    -B "$work/build-kokkos-hip" -DCMAKE_INSTALL_PREFIX="$HIP_PREFIX" -DCMAKE_CXX_COMPILER=hipcc \
    -DKokkos_ENABLE_HIP=ON -DKokkos_ENABLE_SERIAL=ON "-DKokkos_ARCH_$HIP_ARCH=ON" -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_BUILD_TYPE=Release
  build_step "Kokkos HIP build" "$work/kokkos-hip-build.log" cmake --build "$work/build-kokkos-hip" -j "$JOBS"
  cmake --install "$work/build-kokkos-hip" >/dev/null
  build_step "Kokkos Kernels HIP configuration" "$work/kernels-hip-configure.log" cmake -S "$kernels_src" \
    -B "$work/build-kernels-hip" -DCMAKE_INSTALL_PREFIX="$HIP_PREFIX" -DKokkos_ROOT="$HIP_PREFIX" \
    -DCMAKE_CXX_COMPILER=hipcc "${kernels_flags[@]}"
  build_step "Kokkos Kernels HIP build" "$work/kernels-hip-build.log" cmake --build "$work/build-kernels-hip" -j "$JOBS"
  cmake --install "$work/build-kernels-hip" >/dev/null
  echo "$HIP_ARCH" >"$HIP_PREFIX/.t3k-complete"
  log "Kokkos (HIP+Serial, $HIP_ARCH) and Kokkos Kernels installed in $HIP_PREFIX"
fi
log "done"
