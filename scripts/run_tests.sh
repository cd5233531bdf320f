#!/usr/bin/env bash
# Builds T3K and runs its tests in five legs (one of them compile only); any failure fails the script (nonzero exit).
#
#   main    Release build against the OpenMP+Serial Kokkos of scripts/setup.sh (build/), tests, the t3k CLI and the
#           Python module (no benchmarks: the device-paths leg builds perf/), whole suite through ctest (every typed
#           test runs on Serial and OpenMP, two OpenMP threads that sleep while they wait; two processors each, so
#           only single-threaded tests run side by side);
#           then the examples (examples/your_data with Python, examples/cpp against the installed package); then the
#           Python module's tests (pytest, python/tests) and examples/python in the venv of scripts/setup.sh; then the
#           API reference (Doxygen, warnings are errors) and every code block of README.md and docs/
#           (scripts/check_docs.py).
#   device-paths
#           Release build with assertions against the same Kokkos, configured with -DT3K_DEVICE_CODE_PATHS_ON_HOST=ON
#           (build-device-paths/): the library's tests and the benchmarks' smoke run on OpenMP (two threads; typed
#           tests in double and float, not again on Serial, which takes the same paths), running the code paths of
#           device backends (CUDA, HIP: per-entry kernels, 2048-probe blocks, uncapped auto chunks), which no GPU-less
#           machine would otherwise run; perf/'s programs compiled.
#   hip     Compile only (no AMD GPU here): every test (typed ones on the HIP space alone) and t3k_bench with Debian's
#           hipcc against the HIP Kokkos of scripts/setup.sh (build-hip/).
#   debian  Release build against Debian's prebuilt Serial-only Kokkos 3.4 (build-debian/, no CLI): a smoke subset.
#   asan    AddressSanitizer + UndefinedBehaviorSanitizer, Debug (-O0 -g, assertions on), against Debian's
#           Serial-only Kokkos (build-asan/): the whole suite (CLI and driver included; one long planted-recovery fit
#           left to the other legs) on the Serial space in double (float's memory accesses are double's), two tests
#           at a time (each is single-threaded), and every public header compiled on its own. -O0 compiles about 2.5x
#           faster than -O1 here, and compiling dominates this leg.
#
# Run scripts/setup.sh first. Environment: T3K_KOKKOS_PREFIX, T3K_KOKKOS_HIP_PREFIX and T3K_VENV (as in setup.sh),
# T3K_JOBS (build jobs, default 2), T3K_TEST_LEGS (default "main device-paths hip debian asan"), T3K_SMOKE_TESTS
# (ctest regex of the debian leg).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"  # CI runners may not set it
PREFIX="${T3K_KOKKOS_PREFIX:-$HOME/.cache/t3k/kokkos-3.4.01-openmp-blas}"
VENV="${T3K_VENV:-$HOME/.cache/t3k/venv}"
JOBS="${T3K_JOBS:-2}"
LEGS="${T3K_TEST_LEGS:-main device-paths hip debian asan}"
HIP_PREFIX="${T3K_KOKKOS_HIP_PREFIX:-$HOME/.cache/t3k/kokkos-3.4.01-hip}"
SMOKE="${T3K_SMOKE_TESTS:-TuckerTensorTrain|ProbeDerivatives}"

summary=()
current=""
started=0
log() { printf '[run_tests] %s\n' "$*"; }

finish() {
  local rc=$?
  if [[ -n "$current" && $rc -ne 0 ]]; then summary+=("$current FAILED after $(($(date +%s) - started)) s"); fi
  local line
  line="$(IFS=';'; echo "${summary[*]:-no legs run}")"
  if [[ $rc -eq 0 ]]; then
    echo "[run_tests] ALL LEGS PASSED: ${line//;/; }"
  else
    echo "[run_tests] FAILED (exit $rc): ${line//;/; }"
  fi
}
trap finish EXIT

begin() {
  current="$1"
  started=$(date +%s)
  log "=== leg '$1': $2"
}
end() {
  summary+=("$current passed ($1, $(($(date +%s) - started)) s)")
  current=""
}

# "100% tests passed, 0 tests failed out of 57" -> "57 tests"
count_tests() { grep -Eo 'out of [0-9]+' "$1" | tail -n 1 | sed 's/out of /ctest: /; s/$/ tests/'; }

# The user guide's examples against the main leg's build: the Python walk-through of docs/your-data.md (write a data
# problem with numpy and h5py, fit it with t3k, read the model back), and the C++ program of examples/cpp/ built
# against T3K installed to build/install through find_package(t3k).
run_examples() {
  local python=/usr/bin/python3
  [[ -x "$python" ]] || python=python3
  log "example: examples/your_data (write_data.py, t3k fit, read_model.py)"
  rm -rf examples/your_data/runs
  "$python" examples/your_data/write_data.py
  OMP_NUM_THREADS=2 build/drivers/t3k fit examples/your_data/fit.yaml --quiet
  "$python" examples/your_data/read_model.py
  log "example: examples/cpp against cmake --install build --prefix build/install"
  rm -rf build/install build/example-cpp
  cmake --install build --prefix build/install >/dev/null
  cmake -S examples/cpp -B build/example-cpp -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PWD/build/install"
  cmake --build build/example-cpp -j "$JOBS"
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false build/example-cpp/fit_planted
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false build/example-cpp/fit_your_arrays
}

# The Python module built in build/python (PYTHONPATH), its tests and its example, in the venv of scripts/setup.sh.
run_python() {
  log "python: pytest python/tests and examples/python (build/python, $VENV)"
  # No bytecode or pytest cache in the source tree.
  (export PYTHONPATH="$PWD/build/python" PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=2 OMP_PROC_BIND=false
    "$VENV/bin/python" -m pytest -q -p no:cacheprovider python/tests
    "$VENV/bin/python" examples/python/fit_or_probe.py
    "$VENV/bin/python" examples/python/derivative_tensors.py) 2>&1 | tee build/pytest.log
}

# The documentation: the API reference from the headers (Doxygen, any warning fails: an undocumented public name, a
# \param out of step with its function), and every code block of README.md and docs/ run as written against this
# build (scripts/check_docs.py; blocks that need a GPU, mpirun or minutes say so in their marker).
run_docs() {
  log "docs: Doxygen API reference (build/api) and the code blocks of README.md and docs/ (scripts/check_docs.py)"
  cmake --build build --target t3k_api_docs
  "$VENV/bin/python" scripts/check_docs.py --build build --python "$VENV/bin/python"
}

if [[ ! -f "$PREFIX/.t3k-complete" ]]; then
  log "no OpenMP+Serial Kokkos in $PREFIX: run scripts/setup.sh first (the main and device-paths legs need it)"
  [[ " $LEGS " == *" main "* || " $LEGS " == *" device-paths "* ]] && exit 1
fi

if [[ " $LEGS " == *" main "* && ! -x "$VENV/bin/python" ]]; then
  log "no Python environment in $VENV: run scripts/setup.sh first (the main leg builds and tests the Python module)"
  exit 1
fi

./scripts/lint.sh

for leg in $LEGS; do
  case "$leg" in
    main)
      begin main "Release, OpenMP+Serial Kokkos ($PREFIX), all tests (build/)"
      cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DT3K_KOKKOS_PREFIX="$PREFIX" -DT3K_USE_SYSTEM_KOKKOS=OFF \
        -DT3K_ENABLE_TESTS=ON -DT3K_ENABLE_DRIVERS=ON -DT3K_ENABLE_SANITIZERS=OFF -DT3K_ENABLE_MPI=ON \
        -DT3K_ENABLE_BENCHMARKS=OFF -DT3K_ENABLE_PYTHON=ON -DPython_EXECUTABLE="$VENV/bin/python"
      cmake --build build -j "$JOBS"
      (cd build && ctest --output-on-failure --no-tests=error --timeout 900 -j "$JOBS") 2>&1 | tee build/ctest.log
      run_examples
      run_python
      run_docs
      end "$(count_tests build/ctest.log), examples, pytest: $(grep -Eo '[0-9]+ passed' build/pytest.log | tail -n 1), docs"
      ;;
    device-paths)
      begin device-paths "Release with assertions, device code paths on host spaces, tests and bench smoke (build-device-paths/)"
      # -O2 without -DNDEBUG: T3K_DEBUG_ASSERT checks the device paths' block and buffer invariants too.
      cmake -S . -B build-device-paths -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O2 \
        -DT3K_KOKKOS_PREFIX="$PREFIX" -DT3K_USE_SYSTEM_KOKKOS=OFF -DT3K_DEVICE_CODE_PATHS_ON_HOST=ON \
        -DT3K_ENABLE_TESTS=ON -DT3K_ENABLE_DRIVERS=OFF -DT3K_ENABLE_SANITIZERS=OFF -DT3K_ENABLE_BENCHMARKS=ON \
        -DT3K_ENABLE_MPI=OFF -DT3K_TEST_EVERY_SPACE=OFF
      # Every test executable (without the drivers, the CLI, fit driver and HDF5 ones hold no tests), the
      # benchmarks for their smoke run (which counts kernel launches on device paths only), and perf/'s other
      # programs, which only this leg builds.
      cmake --build build-device-paths -j "$JOBS" --target t3k_tests
      cmake --build build-device-paths -j "$JOBS" --target t3k_bench t3k_bench_flop_counts_check
      cmake --build build-device-paths -j "$JOBS" --target t3k_large_assembly t3k_rank_continuation_targets
      (cd build-device-paths && ctest --output-on-failure --no-tests=error --timeout 900 -j "$JOBS") 2>&1 |
        tee build-device-paths/ctest.log
      end "$(count_tests build-device-paths/ctest.log)"
      ;;
    hip)
      begin hip "compile only: every test and t3k_bench for HIP with hipcc ($HIP_PREFIX, build-hip/)"
      [[ -f "$HIP_PREFIX/.t3k-complete" ]] || {
        log "no HIP Kokkos in $HIP_PREFIX: run scripts/setup.sh first"
        exit 1
      }
      # No AMD GPU here to run on: the leg fails on any compile error, and nothing it builds runs (hence -O0).
      cmake -S . -B build-hip -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O0 -DCMAKE_CXX_COMPILER=hipcc \
        -DKokkos_ROOT="$HIP_PREFIX" -DKokkosKernels_ROOT="$HIP_PREFIX" -DT3K_USE_SYSTEM_KOKKOS=OFF \
        -DT3K_ENABLE_TESTS=ON -DT3K_ENABLE_DRIVERS=OFF -DT3K_ENABLE_BENCHMARKS=ON -DT3K_ENABLE_MPI=OFF \
        -DT3K_ENABLE_SANITIZERS=OFF -DT3K_TEST_EVERY_SPACE=OFF
      # The tests and the benchmarks include every header; each header compiling on its own is checked by the asan leg.
      cmake --build build-hip -j "$JOBS" --target t3k_tests t3k_bench
      end "compiled"
      ;;
    debian)
      begin debian "Release, Debian's prebuilt Serial Kokkos, smoke tests '$SMOKE' (build-debian/)"
      cmake -S . -B build-debian -DCMAKE_BUILD_TYPE=Release -DT3K_USE_SYSTEM_KOKKOS=ON -DT3K_ENABLE_TESTS=ON \
        -DT3K_ENABLE_DRIVERS=OFF -DT3K_ENABLE_SANITIZERS=OFF -DT3K_ENABLE_BENCHMARKS=OFF
      # The smoke executables: those whose name matches the regex in snake case (TuckerTensorTrain ->
      # t3k_test_tucker_tensor_train), if their test file exists.
      targets=()
      IFS='|' read -r -a smoke_names <<<"$SMOKE"
      for name in "${smoke_names[@]}"; do
        snake="$(sed -E 's/([a-z0-9])([A-Z])/\1_\2/g' <<<"$name" | tr '[:upper:]' '[:lower:]')"
        [[ -f "tests/test_$snake.cpp" ]] && targets+=("t3k_test_$snake")
      done
      if ((${#targets[@]} == 0)); then
        log "no test file matches T3K_SMOKE_TESTS='$SMOKE'"
        exit 1
      fi
      cmake --build build-debian -j "$JOBS" --target "${targets[@]}"
      (cd build-debian && ctest --output-on-failure --no-tests=error --timeout 900 -R "$SMOKE") 2>&1 | tee build-debian/ctest.log
      end "$(count_tests build-debian/ctest.log)"
      ;;
    asan)
      begin asan "AddressSanitizer + UBSan, Debug, Debian's prebuilt Serial Kokkos, all tests (build-asan/)"
      cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DT3K_USE_SYSTEM_KOKKOS=ON \
        -DT3K_ENABLE_TESTS=ON -DT3K_ENABLE_DRIVERS=ON -DT3K_ENABLE_SANITIZERS=ON -DT3K_ENABLE_BENCHMARKS=OFF \
        -DT3K_TEST_FLOAT=OFF
      cmake --build build-asan -j "$JOBS"
      export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
      export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
      # The whole suite but one planted-recovery fit (three fits to 1e-8, 100 s here under the sanitizers; the other
      # legs run it, and shorter tests run its code paths). Serial only: every test is single-threaded, so JOBS of
      # them run at a time.
      (cd build-asan && ctest --output-on-failure --no-tests=error --timeout 1800 -j "$JOBS" \
        -E '^FitMeasurementKinds\.ApplyFitsRecoverThePlantedTensor$') 2>&1 |
        tee build-asan/ctest.log
      end "$(count_tests build-asan/ctest.log)"
      ;;
    *)
      log "unknown leg '$leg' in T3K_TEST_LEGS (known: main device-paths hip debian asan)"
      exit 2
      ;;
  esac
done
