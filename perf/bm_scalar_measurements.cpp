// The scalar measurement kinds (docs/math.md, measurements): J^T of entries and of applies
// (t3k::entry_derivatives_transpose, t3k::apply_derivatives_transpose), summed and per sample, at chunk none, auto
// and fixed sizes, and the evaluation of entries (t3k::entries, t3k::entry_derivatives) and applies. FLOP/s come
// from the exact per-sample counts of flop_counts.hpp (T3K's own contractions); each timed call is followed by both
// the GEMM and the copy reference of the same space and threads (gemm_fraction, bandwidth_fraction, and the
// roofline counters that say which of the two bounds a shape meets). peak_bytes is measured by allocation tracking
// around one call; for J^T, model_bytes is what t3k::transpose_memory_model(kind, ...) predicts.
#include "bench_common.hpp"

namespace t3k_bench {
namespace {

constexpr double dense_cap_bytes = 8e9;

template <class Mem>
using IndexView = t3k::EntryIndices<Mem>;
template <class Scalar, class Mem>
using ScalarResidualView = Kokkos::View<Scalar***, Kokkos::LayoutRight, Mem>;

/// W reproducible multi-indices (W, d), uniform over each mode (the same counter-based hash as fill_random).
template <class ExecSpace, class Mem>
void fill_random_indices(ExecSpace const& space, IndexView<Mem> const& idx, std::size_t big_n, std::uint64_t seed) {
  int* data = idx.data();
  std::uint64_t const n = big_n;
  Kokkos::parallel_for(
      "t3k_bench::fill_random_indices", Kokkos::RangePolicy<ExecSpace>(space, 0, idx.span()),
      KOKKOS_LAMBDA(std::size_t e) {
        std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + e + 1;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        data[e] = int(z % n);
      });
}

/// The data of a scalar benchmark: a random T3 and its frame, the samples of one kind (entries: indices (W, d);
/// applies: vectors ww; directions pp when K > 0) and a scalar residual stack (n_t, W, K+1).
template <class Scalar, class ExecSpace>
struct ScalarFixture {
  using Mem = typename ExecSpace::memory_space;
  t3k::TuckerTensorTrain<Scalar, Mem> x;
  t3k::OrthogonalFrame<Scalar, Mem> frame;
  FrameDims dims;
  IndexView<Mem> indices;
  std::vector<ProbeView<Scalar, Mem>> ww, pp;
  ScalarResidualView<Scalar, Mem> residuals;
};

template <class Scalar, class ExecSpace>
std::shared_ptr<ScalarFixture<Scalar, ExecSpace>> scalar_fixture(Shape const& s, t3k::MeasurementKind kind,
                                                                 std::size_t n_residuals) {
  using F = ScalarFixture<Scalar, ExecSpace>;
  std::string const key = s.key() + ";" + t3k::to_string(kind) + ";" + std::to_string(n_residuals);
  return cached_fixture<F>(key, [&] {
    ExecSpace space;
    auto f = std::make_shared<F>();
    f->x = t3k::random_t3<Scalar>(space, s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), 5);
    f->frame = t3k::orthogonal_frame(space, f->x);
    f->dims = dims_of(f->frame);
    if (kind == t3k::MeasurementKind::entries) {
      f->indices = IndexView<typename F::Mem>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k_bench::indices"), s.w, s.d);
      fill_random_indices(space, f->indices, s.big_n, 31);
    } else {
      f->ww = random_probes<Scalar>(space, s, 21);
    }
    if (s.order > 0) f->pp = random_probes<Scalar>(space, s, 22);
    if (n_residuals > 0) {
      f->residuals = ScalarResidualView<Scalar, typename F::Mem>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k_bench::scalar_residuals"), n_residuals, s.w,
          s.order + 1);
      fill_random(space, f->residuals, 100);
    }
    space.fence();
    return f;
  });
}

/// Bytes of one call's samples: entries' indices (d ints) or applies' vectors, and the directions when K > 0.
template <class Scalar>
double sample_bytes(Shape const& s, t3k::MeasurementKind kind) {
  bool const entries = kind == t3k::MeasurementKind::entries;
  double const vectors = (entries ? 0.0 : 1.0) + (s.order > 0 ? 1.0 : 0.0);
  return double(s.w) * ((entries ? sizeof(int) * double(s.d) : 0.0) + sizeof(Scalar) * vectors * double(s.sum_n()));
}

template <class Scalar, class ExecSpace>
t3k::TransposeMemoryModel scalar_model(t3k::MeasurementKind kind, Shape const& s, std::size_t nt, bool summed) {
  return t3k::transpose_memory_model(kind, s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), s.order, nt, summed,
                                     scalar_type_of<Scalar>(), t3k::reduction_block_size_for<ExecSpace>());
}

/// The scalar J^T chunk actually used for a request (auto resolved for the kind, as the library resolves it).
template <class Scalar, class ExecSpace>
std::size_t resolved_scalar_chunk(t3k::MeasurementKind kind, t3k::ChunkSize c, Shape const& s, std::size_t nt) {
  if (c.kind() == t3k::ChunkSize::Kind::automatic) {
    return t3k::automatic_chunk_size<ExecSpace>(kind, s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), s.order, s.w, nt,
                                                1, scalar_type_of<Scalar>());
  }
  return resolved_chunk<Scalar, ExecSpace>(c, s, nt);
}

/// One scalar J^T call of the kind on the fixture.
template <class Scalar, class ExecSpace>
auto scalar_transpose_call(ExecSpace const& space, ScalarFixture<Scalar, ExecSpace> const& f, t3k::MeasurementKind kind,
                           t3k::TransposeOptions const& options) {
  return [&space, &f, kind, options] {
    if (kind == t3k::MeasurementKind::entries) {
      auto g = t3k::entry_derivatives_transpose(space, f.frame, f.indices, f.pp, f.residuals, options);
    } else {
      auto g = t3k::apply_derivatives_transpose(space, f.frame, f.ww, f.pp, f.residuals, options);
    }
  };
}

/// Arguments d, N, n, r, K, W, chunk (0 none, -1 auto, c fixed), sum_over_probes (0/1), n_t.
template <class Scalar, class ExecSpace = DefaultExec>
void scalar_jt(benchmark::State& state, t3k::MeasurementKind kind) {
  Shape const s = shape_of(state);
  t3k::ChunkSize const chunk = chunk_of(state.range(6));
  bool const summed = state.range(7) != 0;
  std::size_t const nt = std::size_t(state.range(8));
  std::size_t const rows = resolved_scalar_chunk<Scalar, ExecSpace>(kind, chunk, s, nt);
  auto const model = scalar_model<Scalar, ExecSpace>(kind, s, nt, summed);
  if (double(model.peak_bytes(s.w, rows)) > dense_cap_bytes) {
    state.SkipWithError(("skipped: the model predicts a peak of " + std::to_string(model.peak_bytes(s.w, rows) / 1e9) +
                         " GB, over the 8 GB cap of these benchmarks")
                            .c_str());
    return;
  }
  ExecSpace space;
  auto f = scalar_fixture<Scalar, ExecSpace>(s, kind, nt);
  auto call = scalar_transpose_call(space, *f, kind, t3k::TransposeOptions{summed, chunk});
  state.counters["peak_bytes"] = measure_peak_bytes(space, call);
  count_launches(state, space, call);
  auto gemm = paired_gemm_reference<Scalar, ExecSpace>();
  auto copy = paired_copy_reference<ExecSpace>();
  double const total = timed_loop(state, space, call, &gemm, &copy);

  bool const entries = kind == t3k::MeasurementKind::entries;
  double const flops = double(s.w) * scalar_transpose_flops_per_sample(f->dims, s.order, entries, nt, summed);
  double const outputs = double(nt) * (summed ? 1.0 : double(s.w)) * variation_entries(f->dims);
  double const bytes = sample_bytes<Scalar>(s, kind) +
                       sizeof(Scalar) * (double(nt) * double(s.w) * double(s.order + 1) + outputs) + bytes_of(f->frame);
  set_throughput_counters(state, total, flops, bytes);
  set_gemm_fraction(state, gemm);
  set_bandwidth_fraction<Scalar, ExecSpace>(state, copy);
  state.counters["chunk"] = double(rows);
  state.counters["model_bytes"] = double(model.allocated_bytes(s.w, rows));
  state.SetLabel(std::string(scalar_name<Scalar>()) + (summed ? " summed" : " per-sample") +
                 " chunk=" + chunk.to_string());
}

template <class Scalar, class ExecSpace = DefaultExec>
void BM_EntriesJT(benchmark::State& state) {
  scalar_jt<Scalar, ExecSpace>(state, t3k::MeasurementKind::entries);
}
template <class Scalar, class ExecSpace = DefaultExec>
void BM_AppliesJT(benchmark::State& state) {
  scalar_jt<Scalar, ExecSpace>(state, t3k::MeasurementKind::applies);
}

std::vector<std::string> jt_arg_names() { return {"d", "N", "n", "r", "K", "W", "chunk", "sum", "nt"}; }

/// Chunk none, auto and fixed sizes, summed, then per sample at a fixed chunk, around one shape.
void scalar_jt_variants(benchmark::internal::Benchmark* b, Shape const& s, bool per_sample) {
  auto const d = std::int64_t(s.d), big_n = std::int64_t(s.big_n), n = std::int64_t(s.n), r = std::int64_t(s.r),
             k = std::int64_t(s.order), w = std::int64_t(s.w);
  for (std::int64_t c : {chunk_none, chunk_auto, std::int64_t(256), std::int64_t(4096)}) {
    if (c <= w) b->Args({d, big_n, n, r, k, w, c, 1, 1});
  }
  if (per_sample) b->Args({d, big_n, n, r, k, w, 256, 0, 1});
}

Shape shape(std::size_t d, std::size_t big_n, std::size_t n, std::size_t r, std::size_t order, std::size_t w) {
  Shape s;
  s.d = d;
  s.big_n = big_n;
  s.n = n;
  s.r = r;
  s.order = order;
  s.w = w;
  return s;
}

/// Sweeps around d=6, N=64, n=r=8, K=2, W=10^4 (entries also at K=0, N=100): chunk variants, then one argument at a
/// time; per sample at W=10^4 writes W variations (W x 4.9k entries).
void scalar_jt_sweep(benchmark::internal::Benchmark* b, bool entries) {
  b->ArgNames(jt_arg_names());
  std::int64_t const d = 6, big_n = 64, n = 8, r = 8, k = 2, w = 10000, c = chunk_auto;
  scalar_jt_variants(b, shape(6, 64, 8, 8, 2, 10000), true);
  if (entries) scalar_jt_variants(b, shape(6, 100, 8, 8, 0, 10000), true);
  for (std::int64_t v : {0, 1, 3}) b->Args({d, big_n, n, r, v, w, c, 1, 1});
  for (std::int64_t v : {16, 256}) b->Args({d, v, n, r, k, w, c, 1, 1});
  for (std::int64_t v : {4, 16}) b->Args({d, big_n, v, r, k, w, c, 1, 1});
  for (std::int64_t v : {4, 16, 32}) b->Args({d, big_n, n, v, k, w, c, 1, 1});
  b->Args({d, big_n, n, r, k, w, c, 1, 2});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK_TEMPLATE(BM_EntriesJT, double)->Apply([](benchmark::internal::Benchmark* b) { scalar_jt_sweep(b, true); });
BENCHMARK_TEMPLATE(BM_AppliesJT, double)->Apply([](benchmark::internal::Benchmark* b) { scalar_jt_sweep(b, false); });

// The scalar J^T target shapes (target: >= 0.3 of whichever bound applies, gemm_fraction where the roofline says
// FLOP-bound, bandwidth_fraction where it says bandwidth-bound). Entries d=6, N=100, n=8, r=8, K=0 at W = 10^5 by
// default and the target's W = 10^6 opt-in; applies d=6, N=64, n=r=8, K=2 at W = 10^5.
void entries_target(benchmark::internal::Benchmark* b, std::size_t w) {
  b->ArgNames(jt_arg_names());
  scalar_jt_variants(b, shape(6, 100, 8, 8, 0, w), false);
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(w > 100000 ? 1 : 3);
}
void applies_target(benchmark::internal::Benchmark* b) {
  b->ArgNames(jt_arg_names());
  scalar_jt_variants(b, shape(6, 64, 8, 8, 2, 100000), false);
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(2);
}
void BM_EntriesJT_Target(benchmark::State& state) { BM_EntriesJT<double>(state); }
void BM_EntriesJT_Target_Optin(benchmark::State& state) { BM_EntriesJT<double>(state); }
void BM_AppliesJT_Target(benchmark::State& state) { BM_AppliesJT<double>(state); }
BENCHMARK(BM_EntriesJT_Target)->Apply([](benchmark::internal::Benchmark* b) { entries_target(b, 100000); });
BENCHMARK(BM_EntriesJT_Target_Optin)->Apply([](benchmark::internal::Benchmark* b) { entries_target(b, 1000000); });
BENCHMARK(BM_AppliesJT_Target)->Apply(applies_target);

// ------------------------------------------------------------------------------------------- peak vs model

/// The measured peak of one summed entries J^T against the memory model, one call (no references): peak_bytes,
/// model_bytes (what J^T allocates by the model), peak_over_model, model_peak_bytes (with the caller's indices and
/// residuals) and input_bytes. Arguments d, N, n, r, K, W, chunk.
void BM_EntriesJT_Memory(benchmark::State& state) {
  using Scalar = double;
  auto const kind = t3k::MeasurementKind::entries;
  Shape const s = shape_of(state);
  t3k::ChunkSize const chunk = chunk_of(state.range(6));
  DefaultExec space;
  auto f = scalar_fixture<Scalar, DefaultExec>(s, kind, 1);
  auto call = scalar_transpose_call(space, *f, kind, t3k::TransposeOptions{true, chunk});
  double peak = 0;
  for (auto _ : state) {
    auto const t0 = std::chrono::steady_clock::now();
    peak = measure_peak_bytes(space, call);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::size_t const rows = resolved_scalar_chunk<Scalar, DefaultExec>(kind, chunk, s, 1);
  auto const model = scalar_model<Scalar, DefaultExec>(kind, s, 1, true);
  double const allocated = double(model.allocated_bytes(s.w, rows));
  state.counters["chunk"] = double(rows);
  state.counters["peak_bytes"] = peak;
  state.counters["model_bytes"] = allocated;
  state.counters["peak_over_model"] = peak / allocated;
  state.counters["model_peak_bytes"] = double(model.peak_bytes(s.w, rows));
  state.counters["input_bytes"] = double(s.w) * double(model.input_bytes_per_row);
  state.SetLabel("chunk=" + chunk.to_string());
}
void memory_shapes(benchmark::internal::Benchmark* b, std::int64_t w) {
  b->ArgNames({"d", "N", "n", "r", "K", "W", "chunk"});
  b->Args({6, 100, 8, 8, 0, w, chunk_auto})->Args({6, 100, 8, 8, 0, w, 4096});
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
}
void BM_EntriesJT_Memory_Optin(benchmark::State& state) { BM_EntriesJT_Memory(state); }
BENCHMARK(BM_EntriesJT_Memory)->Apply([](benchmark::internal::Benchmark* b) { memory_shapes(b, 100000); });
BENCHMARK(BM_EntriesJT_Memory_Optin)->Apply([](benchmark::internal::Benchmark* b) { memory_shapes(b, 10000000); });

// -------------------------------------------------------------------------------------------- evaluation

/// The scalar measurements themselves: entries (t3k::entries at K = 0, t3k::entry_derivatives above) or applies
/// (t3k::applies, t3k::apply_derivatives) of the fixture's T3, chunk auto. Arguments d, N, n, r, K, W.
template <class Scalar, class ExecSpace = DefaultExec>
void scalar_evaluation(benchmark::State& state, t3k::MeasurementKind kind) {
  Shape const s = shape_of(state);
  ExecSpace space;
  auto f = scalar_fixture<Scalar, ExecSpace>(s, kind, 0);
  bool const entries = kind == t3k::MeasurementKind::entries;
  auto call = [&] {
    if (entries && s.order == 0) {
      auto a = t3k::entries(space, f->x, f->indices);
    } else if (entries) {
      auto a = t3k::entry_derivatives(space, f->x, f->indices, f->pp, s.order);
    } else if (s.order == 0) {
      auto a = t3k::applies(space, f->x, f->ww);
    } else {
      auto a = t3k::apply_derivatives(space, f->x, f->ww, f->pp, s.order);
    }
  };
  state.counters["peak_bytes"] = measure_peak_bytes(space, call);
  count_launches(state, space, call);
  auto gemm = paired_gemm_reference<Scalar, ExecSpace>();
  auto copy = paired_copy_reference<ExecSpace>();
  double const total = timed_loop(state, space, call, &gemm, &copy);
  double const flops =
      double(s.w) * scalar_flops_per_sample(f->x.mode_shapes(), f->x.tucker_ranks(), f->x.tt_ranks(), s.order, entries);
  double const bytes =
      sample_bytes<Scalar>(s, kind) + sizeof(Scalar) * double(s.w) * double(s.order + 1) + bytes_of(f->x);
  set_throughput_counters(state, total, flops, bytes);
  set_gemm_fraction(state, gemm);
  set_bandwidth_fraction<Scalar, ExecSpace>(state, copy);
  state.SetLabel(scalar_name<Scalar>());
}
template <class Scalar, class ExecSpace = DefaultExec>
void BM_Entries(benchmark::State& state) {
  scalar_evaluation<Scalar, ExecSpace>(state, t3k::MeasurementKind::entries);
}
template <class Scalar, class ExecSpace = DefaultExec>
void BM_Applies(benchmark::State& state) {
  scalar_evaluation<Scalar, ExecSpace>(state, t3k::MeasurementKind::applies);
}
void BM_Entries_Optin(benchmark::State& state) { BM_Entries<double>(state); }
BENCHMARK_TEMPLATE(BM_Entries, double)
    ->ArgNames(shape_arg_names())
    ->Args({6, 100, 8, 8, 0, 1000000})
    ->Args({6, 100, 8, 8, 2, 1000000})
    ->Args({6, 100, 8, 32, 0, 1000000})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Entries_Optin)
    ->ArgNames(shape_arg_names())
    ->Args({6, 100, 8, 8, 0, 10000000})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK_TEMPLATE(BM_Applies, double)
    ->ArgNames(shape_arg_names())
    ->Args({6, 64, 8, 8, 0, 100000})
    ->Args({6, 64, 8, 8, 2, 100000})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// ------------------------------------------------------------------------------------------------- smoke

void scalar_jt_smoke(benchmark::internal::Benchmark* b) {
  b->ArgNames(jt_arg_names());
  for (std::int64_t k : {0, 2}) {
    for (std::int64_t c : {chunk_none, chunk_auto, std::int64_t(64)}) {
      for (std::int64_t sum : {1, 0}) b->Args({3, 5, 3, 2, k, 150, c, sum, 1});
    }
  }
  b->Args({3, 5, 3, 2, 2, 150, chunk_none, 1, 2});
  b->UseManualTime()->Iterations(1);
}
void BM_EntriesJT_Smoke(benchmark::State& state) { BM_EntriesJT<double>(state); }
void BM_AppliesJT_Smoke(benchmark::State& state) { BM_AppliesJT<double>(state); }
void BM_EntriesJT_Smoke_float(benchmark::State& state) { BM_EntriesJT<float>(state); }
BENCHMARK(BM_EntriesJT_Smoke)->Apply(scalar_jt_smoke);
BENCHMARK(BM_AppliesJT_Smoke)->Apply(scalar_jt_smoke);
BENCHMARK(BM_EntriesJT_Smoke_float)
    ->ArgNames(jt_arg_names())
    ->Args({3, 5, 3, 2, 1, 40, chunk_auto, 1, 1})
    ->UseManualTime()
    ->Iterations(1);
void BM_EntriesJT_Memory_Smoke(benchmark::State& state) { BM_EntriesJT_Memory(state); }
BENCHMARK(BM_EntriesJT_Memory_Smoke)
    ->ArgNames({"d", "N", "n", "r", "K", "W", "chunk"})
    ->Args({3, 5, 3, 2, 0, 150, chunk_auto})
    ->Args({3, 5, 3, 2, 0, 150, 64})
    ->UseManualTime()
    ->Iterations(1);
void BM_Entries_Smoke(benchmark::State& state) { BM_Entries<double>(state); }
void BM_Applies_Smoke(benchmark::State& state) { BM_Applies<double>(state); }
void scalar_smoke(benchmark::internal::Benchmark* b) {
  b->ArgNames(shape_arg_names())->Args({3, 5, 3, 2, 0, 150})->Args({3, 5, 3, 2, 2, 150});
  b->UseManualTime()->Iterations(1);
}
BENCHMARK(BM_Entries_Smoke)->Apply(scalar_smoke);
BENCHMARK(BM_Applies_Smoke)->Apply(scalar_smoke);

}  // namespace
}  // namespace t3k_bench
