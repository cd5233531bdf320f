// The in-process references: dense GEMM throughput through Kokkos Kernels (KokkosBlas::gemm on LayoutLeft Views in
// the default space; OpenBLAS underneath when Kokkos Kernels was configured with its BLAS TPL) and a stream-like
// copy bandwidth. The J^T benchmarks divide by the cached GEMM figure (gemm_fraction), the probe and J benchmarks by
// the cached copy figure (bandwidth_fraction); these registrations show both over a range of sizes.
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

/// C = A B with square m x m operands.
template <class Scalar>
void BM_Gemm(benchmark::State& state) {
  using Device = Kokkos::Device<DefaultExec, DefaultExec::memory_space>;
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutLeft, Device>;
  std::size_t const m = std::size_t(state.range(0));
  DefaultExec space;
  Matrix a("t3k_bench::gemm_a", m, m), b("t3k_bench::gemm_b", m, m), c("t3k_bench::gemm_c", m, m);
  fill_random(space, a, 1);
  fill_random(space, b, 2);
  KokkosBlas::gemm("N", "N", Scalar(1), a, b, Scalar(0), c);  // warm-up
  double const total = timed_loop(state, space, [&] { KokkosBlas::gemm("N", "N", Scalar(1), a, b, Scalar(0), c); });
  set_throughput_counters(state, total, gemm_flops(double(m), double(m), double(m)), 3.0 * m * m * sizeof(Scalar));
  state.counters["peak_bytes"] = 3.0 * m * m * sizeof(Scalar);
  state.SetLabel(scalar_name<Scalar>());
}

/// b(i) = a(i) over n doubles; bytes/s counts read + write.
void BM_StreamCopy(benchmark::State& state) {
  using Vector = Kokkos::View<double*, DefaultExec::memory_space>;
  std::size_t const n = std::size_t(state.range(0));
  DefaultExec space;
  Vector a("t3k_bench::copy_a", n), b("t3k_bench::copy_b", n);
  fill_random(space, a, 3);
  double const total = timed_loop(state, space, [&] {
    Kokkos::parallel_for(
        "t3k_bench::copy", Kokkos::RangePolicy<DefaultExec>(space, 0, n),
        KOKKOS_LAMBDA(std::size_t i) { b(i) = a(i); });
  });
  set_throughput_counters(state, total, 0, 2.0 * sizeof(double) * n);
  state.counters["peak_bytes"] = 2.0 * sizeof(double) * n;
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
