// The chunk estimator's cost per call at a large shape (d = 8, N = 64, n = 16, r = 32, K = 2, W = 10^5): it is
// cached per shape, so repeated calls (every optimizer iteration resolves `auto`) should cost well under a
// millisecond each. Cold: the first call of a new probe count; warm: the same call again.
#include "bench_common.hpp"
#include "t3k/algorithms/estimate_chunk_size.hpp"

namespace t3k_bench {
namespace {

std::vector<std::size_t> const big_n(8, 64), n(8, 16), r{1, 16, 32, 32, 32, 32, 32, 16, 1};

void BM_EstimateChunkSize_Warm(benchmark::State& state) {
  (void)t3k::estimate_chunk_size(big_n, n, r, 2, 100000);
  for (auto _ : state) benchmark::DoNotOptimize(t3k::estimate_chunk_size(big_n, n, r, 2, 100000));
}

void BM_EstimateChunkSize_Cold(benchmark::State& state) {
  std::size_t w = 100000;
  for (auto _ : state) benchmark::DoNotOptimize(t3k::estimate_chunk_size(big_n, n, r, 2, ++w));
}

void BM_EstimateChunkSize_Smoke(benchmark::State& state) { BM_EstimateChunkSize_Cold(state); }

BENCHMARK(BM_EstimateChunkSize_Warm)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EstimateChunkSize_Smoke)->Iterations(1);
BENCHMARK(BM_EstimateChunkSize_Cold)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace t3k_bench
