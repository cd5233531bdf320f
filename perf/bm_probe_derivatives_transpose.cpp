// J^T (docs/math.md): t3k::probe_derivatives_transpose, summed over probes and per probe, dense
// (chunk none) and chunked (auto and fixed sizes), over d, N, n, r, K, W, n_t and float/double. FLOP/s come from
// the exact per-probe count of flop_counts.hpp; gemm_fraction divides them by the dense GEMM throughput of the
// same scalar type with the same threads, sampled after each timed call for as long as the call took (Serial
// registrations against one-thread Serial GEMM). peak_bytes is measured by allocation tracking around one call,
// model_bytes is what the memory model (t3k::transpose_memory_model) predicts J^T allocates for that call.
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

/// Arguments d, N, n, r, K, W, chunk (0 none, -1 auto, c fixed), sum_over_probes (0/1), n_t.
template <class Scalar, class ExecSpace = DefaultExec>
void BM_JT(benchmark::State& state) {
  OneThreadForSerial<ExecSpace> const one_thread;
  Shape const s = shape_of(state);
  t3k::ChunkSize const chunk = chunk_of(state.range(6));
  bool const summed = state.range(7) != 0;
  std::size_t const nt = std::size_t(state.range(8));
  ExecSpace space;
  auto f = frame_fixture<Scalar, ExecSpace>(s, nt, 0);
  t3k::TransposeOptions const options{summed, chunk};
  auto call = [&] { auto g = t3k::probe_derivatives_transpose(space, f->frame, f->ww, f->pp, f->residuals, options); };
  state.counters["peak_bytes"] = measure_peak_bytes(space, call);
  count_launches(state, space, call);
  auto gemm = paired_gemm_reference<Scalar, ExecSpace>();
  double const total = timed_loop(state, space, call, &gemm);

  double const flops = double(s.w) * transpose_flops_per_probe(f->dims, s.order, nt);
  double const outputs = double(nt) * (summed ? 1.0 : double(s.w)) * variation_entries(f->dims);
  double const bytes =
      sizeof(Scalar) * (double(s.w) * double(s.sum_n()) * (2.0 + double(nt * (s.order + 1))) + outputs) +
      bytes_of(f->frame);
  set_throughput_counters(state, total, flops, bytes);
  set_gemm_fraction(state, gemm);
  std::size_t const rows = resolved_chunk<Scalar, ExecSpace>(chunk, s, nt);
  auto const model = t3k::transpose_memory_model(s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), s.order, nt, summed,
                                                 scalar_type_of<Scalar>(), t3k::reduction_block_size_for<ExecSpace>());
  state.counters["chunk"] = double(rows);
  state.counters["model_bytes"] = double(model.allocated_bytes(s.w, rows));
  state.SetLabel(std::string(scalar_name<Scalar>()) + (summed ? " summed" : " per-probe") +
                 " chunk=" + chunk.to_string());
}

std::vector<std::string> jt_arg_names() { return {"d", "N", "n", "r", "K", "W", "chunk", "sum", "nt"}; }

/// One-at-a-time sweeps around d=6, N=32, n=8, r=16, K=2, W=2000, chunk none, summed, n_t=1.
void jt_sweep(benchmark::internal::Benchmark* b) {
  b->ArgNames(jt_arg_names());
  std::int64_t const d = 6, big_n = 32, n = 8, r = 16, k = 2, w = 2000, c = chunk_none, sum = 1, nt = 1;
  b->Args({d, big_n, n, r, k, w, c, sum, nt});
  for (std::int64_t v : {3, 8}) b->Args({v, big_n, n, r, k, w, c, sum, nt});
  for (std::int64_t v : {8, 128}) b->Args({d, v, n, r, k, w, c, sum, nt});
  for (std::int64_t v : {4, 16}) b->Args({d, big_n, v, r, k, w, c, sum, nt});
  for (std::int64_t v : {8, 32}) b->Args({d, big_n, n, v, k, w, c, sum, nt});
  for (std::int64_t v : {0, 1, 3}) b->Args({d, big_n, n, r, v, w, c, sum, nt});
  for (std::int64_t v : {500, 20000}) b->Args({d, big_n, n, r, k, v, c, sum, nt});
  for (std::int64_t v : std::initializer_list<std::int64_t>{chunk_auto, 64, 256, 1024})
    b->Args({d, big_n, n, r, k, w, v, sum, nt});
  b->Args({d, big_n, n, r, k, w, c, sum, 2});
  // Per probe: the output is W variations (W x 13.8k entries here), dense and chunked.
  for (std::int64_t v : std::initializer_list<std::int64_t>{chunk_none, 256}) b->Args({d, big_n, n, r, k, w, v, 0, nt});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}
void jt_sweep_float(benchmark::internal::Benchmark* b) {
  b->ArgNames(jt_arg_names());
  b->Args({6, 32, 8, 16, 2, 2000, chunk_none, 1, 1});
  b->Args({6, 32, 8, 16, 2, 2000, chunk_auto, 1, 1});
  b->Args({6, 32, 8, 16, 2, 2000, chunk_none, 0, 1});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK_TEMPLATE(BM_JT, double)->Apply(jt_sweep);
BENCHMARK_TEMPLATE(BM_JT, float)->Apply(jt_sweep_float);

// The J^T target shapes: d=8, N=64, n=16, r=32, K=2 (target: >= 50% of GEMM at W = 10^5), at chunk none, auto
// and fixed sizes from one block up (auto against the best fixed chunk: target within 10%). At W = 4096 by default
// (the FLOPs per probe do not depend on W); W = 10^5 is opt-in (_Optin: about half a minute per call on one core).
void jt_target(benchmark::internal::Benchmark* b, std::int64_t w) {
  b->ArgNames(jt_arg_names());
  for (std::int64_t c : {chunk_none, chunk_auto, std::int64_t(64), std::int64_t(128), std::int64_t(256),
                         std::int64_t(1024), std::int64_t(4096)}) {
    if (c <= w) b->Args({8, 64, 16, 32, 2, w, c, 1, 1});
  }
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(w > 10000 ? 1 : 2);
}
void BM_JT_Target(benchmark::State& state) { BM_JT<double>(state); }
void BM_JT_Target_float(benchmark::State& state) { BM_JT<float>(state); }
void BM_JT_Target_Optin(benchmark::State& state) { BM_JT<double>(state); }
void BM_JT_Target_float_Optin(benchmark::State& state) { BM_JT<float>(state); }
BENCHMARK(BM_JT_Target)->Apply([](benchmark::internal::Benchmark* b) { jt_target(b, 4096); });
BENCHMARK(BM_JT_Target_float)->Apply([](benchmark::internal::Benchmark* b) { jt_target(b, 4096); });
BENCHMARK(BM_JT_Target_Optin)->Apply([](benchmark::internal::Benchmark* b) { jt_target(b, 100000); });
BENCHMARK(BM_JT_Target_float_Optin)->Apply([](benchmark::internal::Benchmark* b) { jt_target(b, 100000); });

#if defined(KOKKOS_ENABLE_SERIAL)
// Serial against one-thread Serial GEMM (only distinct from the above when the default space is not Serial).
void BM_JT_Target_Serial(benchmark::State& state) { BM_JT<double, Kokkos::Serial>(state); }
void BM_JT_Target_Serial_float(benchmark::State& state) { BM_JT<float, Kokkos::Serial>(state); }
BENCHMARK(BM_JT_Target_Serial)->Apply([](benchmark::internal::Benchmark* b) { jt_target(b, 4096); });
BENCHMARK(BM_JT_Target_Serial_float)->Apply([](benchmark::internal::Benchmark* b) { jt_target(b, 4096); });
void BM_JT_Smoke_Serial(benchmark::State& state) { BM_JT<double, Kokkos::Serial>(state); }
BENCHMARK(BM_JT_Smoke_Serial)
    ->ArgNames(jt_arg_names())
    ->Args({3, 5, 3, 2, 2, 40, 0, 1, 1})
    ->UseManualTime()
    ->Iterations(1);
#endif

void BM_JT_Smoke(benchmark::State& state) { BM_JT<double>(state); }
void BM_JT_Smoke_float(benchmark::State& state) { BM_JT<float>(state); }
void jt_smoke(benchmark::internal::Benchmark* b) {
  b->ArgNames(jt_arg_names());
  for (std::int64_t c : {chunk_none, chunk_auto, std::int64_t(64)}) {
    for (std::int64_t sum : {1, 0}) b->Args({3, 5, 3, 2, 2, 150, c, sum, 1});
  }
  b->Args({3, 5, 3, 2, 2, 150, chunk_none, 1, 2});
  b->UseManualTime()->Iterations(1);
}
BENCHMARK(BM_JT_Smoke)->Apply(jt_smoke);
BENCHMARK(BM_JT_Smoke_float)
    ->ArgNames(jt_arg_names())
    ->Args({3, 5, 3, 2, 2, 40, chunk_auto, 1, 1})
    ->UseManualTime()
    ->Iterations(1);

}  // namespace
}  // namespace t3k_bench
