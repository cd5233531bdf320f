// Probes and probe jets of a T3 (docs/math.md): t3k::probes (order 0, one probe vector per mode) and
// t3k::probe_derivatives (jets of order K along probe directions). Memory-bound for small ranks: the counters
// compare the bytes moved (probe vectors in, jets out, cores) with the in-process copy bandwidth.
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

template <class Scalar, class ExecSpace>
struct T3Fixture {
  using Mem = typename ExecSpace::memory_space;
  t3k::TuckerTensorTrain<Scalar, Mem> x;
  std::vector<ProbeView<Scalar, Mem>> ww, pp;
};

template <class Scalar, class ExecSpace>
std::shared_ptr<T3Fixture<Scalar, ExecSpace>> t3_fixture(Shape const& s) {
  using F = T3Fixture<Scalar, ExecSpace>;
  return cached_fixture<F>(s.key(), [&] {
    ExecSpace space;
    auto f = std::make_shared<F>();
    f->x = t3k::random_t3<Scalar>(space, s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), 7);
    f->ww = random_probes<Scalar>(space, s, 11);
    f->pp = random_probes<Scalar>(space, s, 12);
    space.fence();
    return f;
  });
}

/// t3k::probes (z_i = X contracted with w_m, m != i; arguments d, N, n, r, (K ignored), W), or with `into` the
/// same sweep writing into output arrays allocated once outside the timed loop (t3k::probes_into): the difference
/// is the cost of allocating and first touching a fresh output on every call.
template <class Scalar, class ExecSpace>
void probes_benchmark(benchmark::State& state, bool into) {
  Shape const s = shape_of(state);
  ExecSpace space;
  auto f = t3_fixture<Scalar, ExecSpace>(s);
  t3k::Probes<Scalar, typename ExecSpace::memory_space> z;
  if (into) z = t3k::probes(space, f->x, f->ww);
  auto call = [&] {
    if (into) {
      t3k::probes_into(space, f->x, f->ww, z);
    } else {
      auto fresh = t3k::probes(space, f->x, f->ww);
    }
  };
  state.counters["peak_bytes"] = measure_peak_bytes(space, call);
  count_launches(state, space, call);
  auto copy = paired_copy_reference<ExecSpace>();
  double const total = timed_loop(state, space, call, &copy);
  double const flops = double(s.w) * t3_probe_jet_flops_per_probe(s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), 0);
  double const bytes = sizeof(Scalar) * 2.0 * double(s.w) * double(s.sum_n()) + bytes_of(f->x);
  set_throughput_counters(state, total, flops, bytes);
  set_bandwidth_fraction<Scalar, ExecSpace>(state, copy);
  state.SetLabel(scalar_name<Scalar>());
}

/// t3k::probe_derivatives (jets of order K; arguments d, N, n, r, K, W), or with `into` probe_derivatives_into on
/// output arrays allocated once.
template <class Scalar, class ExecSpace>
void probe_jets_benchmark(benchmark::State& state, bool into) {
  Shape const s = shape_of(state);
  ExecSpace space;
  auto f = t3_fixture<Scalar, ExecSpace>(s);
  t3k::ProbeJets<Scalar, typename ExecSpace::memory_space> z;
  if (into) z = t3k::probe_derivatives(space, f->x, f->ww, f->pp, s.order);
  auto call = [&] {
    if (into) {
      t3k::probe_derivatives_into(space, f->x, f->ww, f->pp, s.order, z);
    } else {
      auto fresh = t3k::probe_derivatives(space, f->x, f->ww, f->pp, s.order);
    }
  };
  state.counters["peak_bytes"] = measure_peak_bytes(space, call);
  count_launches(state, space, call);
  auto copy = paired_copy_reference<ExecSpace>();
  double const total = timed_loop(state, space, call, &copy);
  double const flops =
      double(s.w) * t3_probe_jet_flops_per_probe(s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), s.order);
  double const bytes = sizeof(Scalar) * double(s.w) * double(s.sum_n()) * (2.0 + double(s.order + 1)) + bytes_of(f->x);
  set_throughput_counters(state, total, flops, bytes);
  set_bandwidth_fraction<Scalar, ExecSpace>(state, copy);
  state.SetLabel(scalar_name<Scalar>());
}

template <class Scalar, class ExecSpace = DefaultExec>
void BM_Probes(benchmark::State& state) {
  probes_benchmark<Scalar, ExecSpace>(state, false);
}
template <class Scalar, class ExecSpace = DefaultExec>
void BM_ProbesInto(benchmark::State& state) {
  probes_benchmark<Scalar, ExecSpace>(state, true);
}
template <class Scalar, class ExecSpace = DefaultExec>
void BM_ProbeJets(benchmark::State& state) {
  probe_jets_benchmark<Scalar, ExecSpace>(state, false);
}
template <class Scalar, class ExecSpace = DefaultExec>
void BM_ProbeJetsInto(benchmark::State& state) {
  probe_jets_benchmark<Scalar, ExecSpace>(state, true);
}

/// One-at-a-time sweeps around a base shape (d=6, N=64, n=8, r=8, K=2, W=10^4).
void probe_sweep(benchmark::internal::Benchmark* b) {
  b->ArgNames(shape_arg_names());
  std::int64_t const d = 6, big_n = 64, n = 8, r = 8, k = 2, w = 10000;
  b->Args({d, big_n, n, r, k, w});
  for (std::int64_t v : {3, 4, 8}) b->Args({v, big_n, n, r, k, w});
  for (std::int64_t v : {16, 256, 1024}) b->Args({d, v, n, r, k, w});
  for (std::int64_t v : {4, 16}) b->Args({d, big_n, v, r, k, w});
  for (std::int64_t v : {4, 16, 32}) b->Args({d, big_n, n, v, k, w});
  for (std::int64_t v : {0, 1, 3}) b->Args({d, big_n, n, r, v, w});
  for (std::int64_t v : {1000, 100000}) b->Args({d, big_n, n, r, k, v});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}
/// The shapes of docs/performance.md's table (d=6, n=8, r=8, K=2): N = 64 and 1024 at W = 10^4, N = 64 at W = 10^5.
void output_reuse_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames(shape_arg_names());
  b->Args({6, 64, 8, 8, 2, 10000})->Args({6, 1024, 8, 8, 2, 10000})->Args({6, 64, 8, 8, 2, 100000});
  b->Args({8, 64, 16, 32, 2, 4096});  // the J^T target shape: wide ranks (Khatri-Rao-first right-to-left steps)
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}
void probe_sweep_float(benchmark::internal::Benchmark* b) {
  b->ArgNames(shape_arg_names());
  b->Args({6, 64, 8, 8, 2, 10000})->Args({6, 256, 8, 32, 2, 10000});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK_TEMPLATE(BM_Probes, double)->Apply(probe_sweep);
BENCHMARK_TEMPLATE(BM_Probes, float)->Apply(probe_sweep_float);
BENCHMARK_TEMPLATE(BM_ProbeJets, double)->Apply(probe_sweep);
BENCHMARK_TEMPLATE(BM_ProbeJets, float)->Apply(probe_sweep_float);
BENCHMARK_TEMPLATE(BM_ProbesInto, double)->Apply(output_reuse_shapes);
BENCHMARK_TEMPLATE(BM_ProbeJetsInto, double)->Apply(output_reuse_shapes);

void BM_Probes_Smoke(benchmark::State& state) { BM_Probes<double>(state); }
void BM_ProbeJets_Smoke(benchmark::State& state) { BM_ProbeJets<double>(state); }
void BM_ProbeJets_Smoke_float(benchmark::State& state) { BM_ProbeJets<float>(state); }
BENCHMARK(BM_Probes_Smoke)->ArgNames(shape_arg_names())->Args({3, 5, 3, 2, 0, 40})->UseManualTime()->Iterations(1);
BENCHMARK(BM_ProbeJets_Smoke)->ArgNames(shape_arg_names())->Args({3, 5, 3, 2, 2, 40})->UseManualTime()->Iterations(1);
BENCHMARK(BM_ProbeJets_Smoke_float)
    ->ArgNames(shape_arg_names())
    ->Args({3, 5, 3, 2, 2, 40})
    ->UseManualTime()
    ->Iterations(1);

}  // namespace
}  // namespace t3k_bench
