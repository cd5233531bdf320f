// The memory/time trade-off of J^T: for |W| = 10^3 .. 10^6 probes at chunk none (only where the model says
// the call fits in 8 GB), auto (automatic_chunk_size) and fixed 256 and 4096, the measured peak bytes (allocation
// tracking around one call), the model's prediction of the bytes J^T allocates (model_bytes) and of the whole peak
// including the caller's probe and residual data (model_peak_bytes), and the time. Shapes d=6, N=16, n=4, r=8, K=2,
// double, summed. |W| = 10^5 and 10^6 are opt-in (--benchmark_filter=JtChunkSweep_Optin: seconds and tens of
// seconds per call).
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

constexpr double dense_cap_bytes = 8e9;

/// Arguments W, chunk (0 none, -1 auto, c fixed).
void BM_JtChunkSweep(benchmark::State& state) {
  using Scalar = double;
  Shape s;
  s.d = 6;
  s.big_n = 16;
  s.n = 4;
  s.r = 8;
  s.order = 2;
  s.w = std::size_t(state.range(0));
  if (state.range(2) > 0) {  // the smoke registration shrinks the shapes
    s.d = 3;
    s.big_n = 5;
    s.n = 3;
    s.r = 2;
  }
  t3k::ChunkSize const chunk = chunk_of(state.range(1));
  std::size_t const rows = resolved_chunk<Scalar>(chunk, s, 1);
  auto const model =
      t3k::transpose_memory_model(s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), s.order, 1, true,
                                  scalar_type_of<Scalar>(), t3k::reduction_block_size_for<DefaultExec>());
  double const predicted_peak = double(model.peak_bytes(s.w, rows));
  if (chunk.kind() == t3k::ChunkSize::Kind::none && predicted_peak > dense_cap_bytes) {
    state.SkipWithError(("chunk none skipped: the model predicts a peak of " + std::to_string(predicted_peak / 1e9) +
                         " GB, over the 8 GB cap of this benchmark")
                            .c_str());
    return;
  }
  DefaultExec space;
  auto f = frame_fixture<Scalar, DefaultExec>(s, 1, 0);
  t3k::TransposeOptions const options{true, chunk};
  auto call = [&] { auto g = t3k::probe_derivatives_transpose(space, f->frame, f->ww, f->pp, f->residuals, options); };
  double const peak = measure_peak_bytes(space, call);
  auto gemm = paired_gemm_reference<Scalar, DefaultExec>();
  double const total = timed_loop(state, space, call, &gemm);
  double const flops = double(s.w) * transpose_flops_per_probe(f->dims, s.order, 1);
  double const inputs = double(s.w) * double(model.input_bytes_per_row);
  set_throughput_counters(state, total, flops, inputs + sizeof(Scalar) * variation_entries(f->dims));
  set_gemm_fraction(state, gemm);
  state.counters["chunk"] = double(rows);
  state.counters["peak_bytes"] = peak;
  state.counters["model_bytes"] = double(model.allocated_bytes(s.w, rows));
  state.counters["model_peak_bytes"] = predicted_peak;
  state.counters["input_bytes"] = inputs;
  state.counters["peak_over_model"] = peak / double(model.allocated_bytes(s.w, rows));
  state.SetLabel("chunk=" + chunk.to_string());
}

void sweep(benchmark::internal::Benchmark* b, std::vector<std::int64_t> const& ws) {
  b->ArgNames({"W", "chunk", "tiny"});
  for (std::int64_t w : ws) {
    for (std::int64_t c : {chunk_none, chunk_auto, std::int64_t(256), std::int64_t(4096)}) b->Args({w, c, 0});
  }
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}

void BM_JtChunkSweep_Optin(benchmark::State& state) { BM_JtChunkSweep(state); }
void BM_JtChunkSweep_Smoke(benchmark::State& state) { BM_JtChunkSweep(state); }
BENCHMARK(BM_JtChunkSweep)->Apply([](benchmark::internal::Benchmark* b) { sweep(b, {1000, 10000}); });
BENCHMARK(BM_JtChunkSweep_Optin)
    ->Apply([](benchmark::internal::Benchmark* b) {
      sweep(b, {100000, 1000000});
    })
    ->Iterations(1);
BENCHMARK(BM_JtChunkSweep_Smoke)
    ->ArgNames({"W", "chunk", "tiny"})
    ->Args({150, chunk_none, 1})
    ->Args({150, chunk_auto, 1})
    ->Args({150, 64, 1})
    ->UseManualTime()
    ->Iterations(1);

}  // namespace
}  // namespace t3k_bench
