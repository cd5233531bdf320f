#!/usr/bin/env bash
# Builds T3K against a Kokkos with a GPU backend (CUDA or HIP), runs the test suite on the GPU and the GPU benchmark
# set, and prints one summary table: each target, its figure, met or not.
#
#   scripts/run_gpu.sh KOKKOS_PREFIX [BUILD_DIR]
#
# KOKKOS_PREFIX holds Kokkos 4.x (or 3.4+) with CUDA or HIP and Kokkos Kernels (with cuBLAS/rocBLAS: the GEMM
# reference of the benchmarks). The C++ compiler is the prefix's bin/nvcc_wrapper when it has one (CUDA), else
# hipcc (HIP), unless CXX is set. Environment: T3K_JOBS (build jobs, default nproc), T3K_GPU_SKIP_TESTS=1 (benchmarks
# only), T3K_GPU_PYTHON=PYTHON (also build the Python module for the GPU with that interpreter, which needs nanobind,
# numpy, pytest and JAX for the GPU, and run python/tests/test_device_arrays.py; Kokkos must then be built shared or
# position-independent). Outputs land in BUILD_DIR (default build-gpu/): ctest.log, bench.json, pytest.log and
# summary.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

prefix="${1:?usage: scripts/run_gpu.sh KOKKOS_PREFIX [BUILD_DIR]}"
build="${2:-build-gpu}"
jobs="${T3K_JOBS:-$(nproc)}"
[[ -d "$prefix" ]] || {
  echo "run_gpu: no Kokkos install at $prefix" >&2
  exit 2
}
cxx="${CXX:-}"
if [[ -z "$cxx" ]]; then
  if [[ -x "$prefix/bin/nvcc_wrapper" ]]; then cxx="$prefix/bin/nvcc_wrapper"; else cxx="$(command -v hipcc || true)"; fi
fi
[[ -n "$cxx" ]] || {
  echo "run_gpu: no compiler: $prefix has no bin/nvcc_wrapper and hipcc is not on PATH (set CXX)" >&2
  exit 2
}

echo "[run_gpu] configuring $build against $prefix with $cxx"
python_flags=(-DT3K_ENABLE_PYTHON=OFF)
if [[ -n "${T3K_GPU_PYTHON:-}" ]]; then
  python_flags=(-DT3K_ENABLE_PYTHON=ON -DT3K_PYTHON_HDF5=OFF -DPython_EXECUTABLE="$T3K_GPU_PYTHON")
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DKokkos_ROOT="$prefix" \
  -DKokkosKernels_ROOT="$prefix" -DT3K_ENABLE_TESTS=ON -DT3K_ENABLE_BENCHMARKS=ON -DT3K_ENABLE_DRIVERS=OFF \
  -DT3K_ENABLE_MPI=OFF "${python_flags[@]}" >"$build.configure.log" 2>&1 || {
  tail -n 30 "$build.configure.log" >&2
  exit 1
}
cmake --build "$build" -j "$jobs" --target t3k_tests t3k_bench

tests_line="not run"
if [[ "${T3K_GPU_SKIP_TESTS:-0}" != 1 ]]; then
  (cd "$build" && ctest --output-on-failure --timeout 900 2>&1 | tee ctest.log) || true
  tests_line="$(grep -E 'tests passed' "$build/ctest.log" | tail -n 1 || echo 'no ctest summary')"
fi
if [[ -n "${T3K_GPU_PYTHON:-}" ]]; then
  cmake --build "$build" -j "$jobs" --target t3k_python
  (PYTHONPATH="$build/python" "$T3K_GPU_PYTHON" -m pytest -q -p no:cacheprovider python/tests/test_device_arrays.py \
    2>&1 | tee "$build/pytest.log") || true
  tests_line+="; python device arrays: $(grep -Eo '[0-9]+ (passed|failed|skipped)[^=]*' "$build/pytest.log" | tail -n 1)"
fi

# The GPU set: J^T at its target shape (W = 10^5, auto chunk) with its same-run GEMM reference, the probe sweeps
# and J against the copy reference, and the launch counts of summed J^T at two probe counts.
filter='BM_JT_Target_Optin/.*chunk:-1/|BM_JT<double>/d:6/N:32/n:8/r:16/K:2/W:(2000|20000)/chunk:0/sum:1/nt:1'
filter+='|BM_(Probes|ProbeJets)Into<double>/d:6/N:(64|1024)/n:8/r:8/K:2/W:10000/'
filter+='|BM_JInto<double>/d:6/N:(64|256|1024)/n:8/r:8/K:2/W:10000/'
"$build/perf/t3k_bench" --benchmark_filter="$filter" --benchmark_format=json --benchmark_out="$build/bench.json" \
  --benchmark_out_format=json >/dev/null

python3 perf/gpu_summary.py "$build/bench.json" --tests "$tests_line" | tee "$build/summary.txt"
