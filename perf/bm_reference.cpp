// The in-process references: dense GEMM throughput through Kokkos Kernels (KokkosBlas::gemm on LayoutLeft Views in
// the default space; OpenBLAS underneath when Kokkos Kernels was configured with its BLAS TPL) and a stream-like
// copy bandwidth. The J^T benchmarks divide by the GEMM kernel sampled next to their calls (gemm_fraction), the probe
// and J benchmarks by the copy kernel sampled so (bandwidth_fraction); these registrations time the same kernels
// over a range of sizes.
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

/// C = A B with square m x m operands.
template <class Scalar>
void BM_Gemm(benchmark::State& state) {
  std::size_t const m = std::size_t(state.range(0));
  auto const gemm = gemm_reference_kernel<Scalar, DefaultExec>(m, m, m);
  double const total = timed_loop(state, DefaultExec(), gemm.run);
  set_throughput_counters(state, total, gemm.work, 3.0 * m * m * sizeof(Scalar));
  state.counters["peak_bytes"] = 3.0 * m * m * sizeof(Scalar);
  state.SetLabel(scalar_name<Scalar>());
}

/// b(i) = a(i) over n doubles; bytes/s counts read + write.
void BM_StreamCopy(benchmark::State& state) {
  std::size_t const n = std::size_t(state.range(0));
  auto const copy = copy_reference_kernel<DefaultExec>(n);
  double const total = timed_loop(state, DefaultExec(), copy.run);
  set_throughput_counters(state, total, 0, copy.work);
  state.counters["peak_bytes"] = copy.work;
}

BENCHMARK_TEMPLATE(BM_Gemm, double)
    ->ArgName("m")
    ->RangeMultiplier(2)
    ->Range(64, 1024)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Gemm, float)
    ->ArgName("m")
    ->RangeMultiplier(2)
    ->Range(64, 1024)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StreamCopy)
    ->ArgName("n")
    ->Arg(1 << 16)
    ->Arg(1 << 20)
    ->Arg(1 << 24)
    ->Arg(1 << 26)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// Smoke: tiny sizes, one per family (t3k_bench --benchmark_filter=Smoke).
void BM_Gemm_Smoke(benchmark::State& state) { BM_Gemm<double>(state); }
void BM_StreamCopy_Smoke(benchmark::State& state) { BM_StreamCopy(state); }
BENCHMARK(BM_Gemm_Smoke)->Arg(16)->UseManualTime()->Iterations(1);
BENCHMARK(BM_StreamCopy_Smoke)->Arg(1024)->UseManualTime()->Iterations(1);

}  // namespace
}  // namespace t3k_bench
