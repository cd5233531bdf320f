// The forward Jacobian J (docs/math.md): t3k::tangent_probe_derivatives of one variation at a frame. Like the
// probes it streams probe vectors in and jets out; the counters compare with the in-process copy bandwidth and
// report FLOP/s from the "Forward J per probe" count of flop_counts.hpp.
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

/// Arguments d, N, n, r, K, W. With `into`, t3k::tangent_probe_derivatives_into on output arrays allocated once
/// outside the timed loop (what the optimizers' Gauss-Newton products do between CG iterations).
template <class Scalar, class ExecSpace>
void j_benchmark(benchmark::State& state, bool into) {
  Shape const s = shape_of(state);
  ExecSpace space;
  auto f = frame_fixture<Scalar, ExecSpace>(s, 0, 1);
  t3k::TangentProbeJets<Scalar, typename ExecSpace::memory_space> z;
  if (into) z = t3k::tangent_probe_derivatives(space, f->frame, f->variation, f->ww, f->pp, s.order);
  auto call = [&] {
    if (into) {
      t3k::tangent_probe_derivatives_into(space, f->frame, f->variation, f->ww, f->pp, s.order, z);
    } else {
      auto fresh = t3k::tangent_probe_derivatives(space, f->frame, f->variation, f->ww, f->pp, s.order);
    }
  };
  state.counters["peak_bytes"] = measure_peak_bytes(space, call);
  count_launches(state, space, call);
  auto copy = paired_copy_reference<ExecSpace>();
  double const total = timed_loop(state, space, call, &copy);
  double const flops = double(s.w) * tangent_flops_per_probe(f->dims, s.order);
  double const bytes = sizeof(Scalar) * double(s.w) * double(s.sum_n()) * (2.0 + double(s.order + 1)) +
                       bytes_of(f->frame) + sizeof(Scalar) * variation_entries(f->dims);
  set_throughput_counters(state, total, flops, bytes);
  set_bandwidth_fraction<Scalar, ExecSpace>(state, copy);
  state.SetLabel(scalar_name<Scalar>());
}

template <class Scalar, class ExecSpace = DefaultExec>
void BM_J(benchmark::State& state) {
  j_benchmark<Scalar, ExecSpace>(state, false);
}
template <class Scalar, class ExecSpace = DefaultExec>
void BM_JInto(benchmark::State& state) {
  j_benchmark<Scalar, ExecSpace>(state, true);
}

/// One-at-a-time sweeps around d=6, N=64, n=8, r=8, K=2, W=10^4.
void j_sweep(benchmark::internal::Benchmark* b) {
  b->ArgNames(shape_arg_names());
  std::int64_t const d = 6, big_n = 64, n = 8, r = 8, k = 2, w = 10000;
  b->Args({d, big_n, n, r, k, w});
  for (std::int64_t v : {3, 8}) b->Args({v, big_n, n, r, k, w});
  for (std::int64_t v : {16, 256}) b->Args({d, v, n, r, k, w});
  for (std::int64_t v : {4, 16}) b->Args({d, big_n, v, r, k, w});
  for (std::int64_t v : {4, 16, 32}) b->Args({d, big_n, n, v, k, w});
  for (std::int64_t v : {0, 1, 3}) b->Args({d, big_n, n, r, v, w});
  for (std::int64_t v : {1000, 100000}) b->Args({d, big_n, n, r, k, v});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK_TEMPLATE(BM_J, double)->Apply(j_sweep);
BENCHMARK_TEMPLATE(BM_JInto, double)
    ->ArgNames(shape_arg_names())
    ->Args({6, 64, 8, 8, 2, 10000})
    ->Args({6, 64, 8, 8, 2, 100000})
    ->Args({6, 256, 8, 8, 2, 10000})
    ->Args({6, 1024, 8, 8, 2, 10000})
    ->Args({8, 64, 16, 32, 2, 4096})  // the J^T target shape: wide ranks (Khatri-Rao-first right-to-left steps)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_J, float)
    ->ArgNames(shape_arg_names())
    ->Args({6, 64, 8, 8, 2, 10000})
    ->Args({6, 64, 8, 32, 2, 10000})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_J_Smoke(benchmark::State& state) { BM_J<double>(state); }
void BM_J_Smoke_float(benchmark::State& state) { BM_J<float>(state); }
BENCHMARK(BM_J_Smoke)->ArgNames(shape_arg_names())->Args({3, 5, 3, 2, 2, 40})->UseManualTime()->Iterations(1);
BENCHMARK(BM_J_Smoke_float)->ArgNames(shape_arg_names())->Args({3, 5, 3, 2, 2, 40})->UseManualTime()->Iterations(1);

}  // namespace
}  // namespace t3k_bench
