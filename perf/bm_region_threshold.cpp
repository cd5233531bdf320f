// What a Kokkos launch costs on the host against the work it carries: the basis of default_inline_work_threshold
// (t3k/core/impl/small_kernels.hpp). A y += alpha x over n elements, each call either launched as a parallel_for on
// the default host space or run as a plain loop on the calling thread (for_each_index with the threshold at its
// extremes). Where the loop's time reaches the launch's, the threads start to pay for their region; run it with the
// waiting policy of interest (t3k itself runs with OMP_WAIT_POLICY=passive) and with other work on the cores.
#include "bench_common.hpp"
#include "t3k/core/impl/small_kernels.hpp"

#include <limits>
#include <string>

namespace t3k_bench {
namespace {

/// Args: n (elements), inline (0: launched, 1: on the calling thread).
void BM_RegionThreshold(benchmark::State& state) {
  int const n = int(state.range(0));
  bool const inline_loop = state.range(1) != 0;
  using Host = Kokkos::DefaultHostExecutionSpace;
  Host space;
  Kokkos::View<double*, Kokkos::HostSpace> x("t3k_bench::region_x", std::size_t(n > 0 ? n : 1));
  Kokkos::View<double*, Kokkos::HostSpace> y("t3k_bench::region_y", std::size_t(n > 0 ? n : 1));
  fill_random(space, x, 1);
  fill_random(space, y, 2);
  space.fence();
  std::size_t const previous =
      t3k::impl::set_inline_work_threshold(inline_loop ? std::numeric_limits<std::size_t>::max() : 0);
  // Calls of n = 0 still open a region (an empty kernel): the launch cost alone.
  int const extent = n > 0 ? n : 1;
  double const alpha = n > 0 ? 1e-3 : 0.0;
  auto const run = [&] {
    t3k::impl::for_each_index(
        space, "t3k_bench::region_axpy", {extent}, 1, KOKKOS_LAMBDA(int i) { y(i) += alpha * x(i); });
  };
  run();  // warm-up
  double const total = timed_loop(state, space, run);
  t3k::impl::set_inline_work_threshold(previous);
  state.counters["us_per_call"] = total / double(state.iterations()) * 1e6;
  state.counters["threads"] = double(space.concurrency());
  state.SetLabel(inline_loop ? "calling thread" : "launched");
}

void region_sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "inline"});
  for (std::int64_t mode : {0, 1})
    for (std::int64_t n : {0, 256, 1024, 4096, 16384, 65536, 262144}) b->Args({n, mode});
}

BENCHMARK(BM_RegionThreshold)->Apply(region_sizes)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_RegionThreshold_Smoke(benchmark::State& state) { BM_RegionThreshold(state); }
BENCHMARK(BM_RegionThreshold_Smoke)
    ->ArgNames({"n", "inline"})
    ->Args({64, 0})
    ->Args({64, 1})
    ->UseManualTime()
    ->Iterations(1);

}  // namespace
}  // namespace t3k_bench
