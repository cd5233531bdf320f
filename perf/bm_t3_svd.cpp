// T3-SVD (docs/math.md): sequential truncation by QR and SVD of the small cores on the host (LAPACK), here
// to half the Tucker and TT ranks. There is no FLOP count for it, so this reports time and bytes (input cores
// + truncated cores) only.
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

/// Arguments d, N, n, r: truncation to Tucker ranks n/2 and TT ranks r/2.
template <class Scalar>
void BM_T3Svd(benchmark::State& state) {
  Shape s = shape_of(state);
  DefaultExec space;
  auto f = core_fixture<Scalar>(s);
  t3k::T3SvdOptions options;
  options.max_tucker_ranks.assign(s.d, std::max<long long>(1, (long long)s.n / 2));
  options.max_tt_ranks.assign(s.d + 1, std::max<long long>(1, (long long)s.r / 2));
  double out_bytes = 0;
  auto call = [&] {
    auto y = t3k::t3_svd(space, f->x, options);
    out_bytes = bytes_of(y.t3);
  };
  state.counters["peak_bytes"] = measure_peak_bytes(space, call);
  double const total = timed_loop(state, space, call);
  set_throughput_counters(state, total, 0, bytes_of(f->x) + out_bytes);
  state.SetLabel(scalar_name<Scalar>());
}

BENCHMARK_TEMPLATE(BM_T3Svd, double)->Apply(core_sweep);
BENCHMARK_TEMPLATE(BM_T3Svd, float)
    ->ArgNames(shape_arg_names())
    ->Args({8, 64, 16, 32, 0, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_T3Svd_Smoke(benchmark::State& state) { BM_T3Svd<double>(state); }
BENCHMARK(BM_T3Svd_Smoke)->ArgNames(shape_arg_names())->Args({3, 5, 3, 2, 0, 0})->UseManualTime()->Iterations(1);

}  // namespace
}  // namespace t3k_bench
