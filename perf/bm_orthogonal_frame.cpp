// The orthogonal frame of a T3 (docs/math.md): QR sweeps over the small cores on the host (LAPACK). There is
// no FLOP count for it, so this reports time and bytes (input cores + frame cores) only.
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

/// Arguments d, N, n, r.
template <class Scalar>
void BM_OrthogonalFrame(benchmark::State& state) {
  Shape s = shape_of(state);
  DefaultExec space;
  auto f = core_fixture<Scalar>(s);
  double out_bytes = 0;
  auto call = [&] {
    auto frame = t3k::orthogonal_frame(space, f->x);
    out_bytes = bytes_of(frame);
  };
  state.counters["peak_bytes"] = measure_peak_bytes(space, call);
  double const total = timed_loop(state, space, call);
  set_throughput_counters(state, total, 0, bytes_of(f->x) + out_bytes);
  state.SetLabel(scalar_name<Scalar>());
}

BENCHMARK_TEMPLATE(BM_OrthogonalFrame, double)->Apply(core_sweep);
BENCHMARK_TEMPLATE(BM_OrthogonalFrame, float)
    ->ArgNames(shape_arg_names())
    ->Args({8, 64, 16, 32, 0, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_OrthogonalFrame_Smoke(benchmark::State& state) { BM_OrthogonalFrame<double>(state); }
BENCHMARK(BM_OrthogonalFrame_Smoke)
    ->ArgNames(shape_arg_names())
    ->Args({3, 5, 3, 2, 0, 0})
    ->UseManualTime()
    ->Iterations(1);

}  // namespace
}  // namespace t3k_bench
