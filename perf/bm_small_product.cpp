// The probe sweeps' small block products, C = A op(B) over 64-row blocks of a 10^4-row A (the probe rows, streamed)
// into one C (the sweep's workspace, in cache): host_small_product (t3k/algorithms/impl/host/host_small_product.hpp)
// against the host BLAS through Kokkos Kernels, single-threaded, the way the sweeps call both (one block per call).
// Whether a build hands these products to host_small_product depends on its target (matrix_product.hpp); both sides run
// here in every build that has the kernel and Kokkos Kernels, so that a host with another BLAS core type (an AVX-512
// host whose OpenBLAS has small-matrix kernels) can tell which is faster there.
#include "bench_common.hpp"
#include "t3k/algorithms/impl/host/host_small_product.hpp"
#include "t3k/algorithms/impl/matrix_product.hpp"

#if defined(T3K_HAVE_HOST_SMALL_PRODUCT) && defined(T3K_HAVE_KOKKOSKERNELS)

namespace t3k_bench {
namespace {

constexpr int small_product_total_rows = 10000;

/// Args: m (rows of a block), n, k, transpose_b (B stored n x k), kernel (0: the BLAS, 1: host_small_product).
template <class Scalar>
void BM_SmallProduct(benchmark::State& state) {
  int const m = int(state.range(0)), n = int(state.range(1)), k = int(state.range(2));
  bool const transpose_b = state.range(3) != 0, t3k_kernel = state.range(4) != 0;
  int const blocks = (small_product_total_rows + m - 1) / m;
  using Host = Kokkos::DefaultHostExecutionSpace;
  using Matrix = t3k::impl::Matrix<Scalar, Kokkos::HostSpace>;
  using ConstMatrix = t3k::impl::Matrix<Scalar const, Kokkos::HostSpace>;
  Host space;
  Kokkos::View<Scalar*, Kokkos::HostSpace> a("t3k_bench::small_product_a", std::size_t(blocks) * m * k);
  Kokkos::View<Scalar*, Kokkos::HostSpace> b("t3k_bench::small_product_b", std::size_t(n) * k);
  Kokkos::View<Scalar*, Kokkos::HostSpace> c("t3k_bench::small_product_c", std::size_t(m) * n);
  fill_random(space, a, 1);
  fill_random(space, b, 2);
  space.fence();
  Matrix const cm(c.data(), m, n);
  ConstMatrix const bm(b.data(), transpose_b ? n : k, transpose_b ? k : n);
  auto const run = [&] {
    for (int block = 0; block < blocks; ++block) {
      ConstMatrix const am(a.data() + std::size_t(block) * m * k, m, k);
      if (t3k_kernel) {
        t3k::impl::host_small_product(m, n, k, am.data(), std::size_t(k), bm.data(), bm.stride(0), transpose_b,
                                      cm.data(), std::size_t(n), false);
      } else {
        t3k::impl::kokkos_blas_gemm(space, "N", transpose_b ? "T" : "N", Scalar(1), am, bm, Scalar(0), cm);
      }
    }
  };
  run();  // warm-up
  double const total = timed_loop(state, space, run);
  double const flops = 2.0 * m * n * k * blocks;
  set_throughput_counters(state, total, flops, double(sizeof(Scalar)) * (double(blocks) * m * k + double(n) * k));
  state.counters["us_per_block"] = total / double(state.iterations()) / blocks * 1e6;
  state.counters["peak_bytes"] = double(sizeof(Scalar)) * double(a.size() + b.size() + c.size());
  state.SetLabel(std::string(scalar_name<Scalar>()) + (t3k_kernel ? " host_small_product" : " BLAS"));
}

/// The sweeps' shapes (d = 6, n = r = 8, one block of 64 probes; K = 2 makes 192 rows): the TT steps (64 x 8 by
/// 8 x 64), the end cores (inner dimension 1), the output z = eta U (8 by 8 x N), and xi = w U^T (N by B^T 8 x N).
void small_product_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k", "tb", "t3k"});
  for (std::int64_t kernel : {0, 1}) {
    for (auto const& s : std::vector<std::vector<std::int64_t>>{{64, 64, 8, 0},
                                                                {192, 64, 8, 0},
                                                                {64, 64, 1, 0},
                                                                {64, 64, 8, 1},
                                                                {64, 1024, 8, 0},
                                                                {64, 8, 64, 1},
                                                                {64, 8, 1024, 1},
                                                                {64, 256, 16, 0},
                                                                {64, 16, 256, 1}}) {
      b->Args({s[0], s[1], s[2], s[3], kernel});
    }
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_TEMPLATE(BM_SmallProduct, double)->Apply(small_product_shapes);
BENCHMARK_TEMPLATE(BM_SmallProduct, float)->Apply(small_product_shapes);

// Smoke: one tiny shape, both kernels.
void BM_SmallProduct_Smoke(benchmark::State& state) { BM_SmallProduct<double>(state); }
BENCHMARK(BM_SmallProduct_Smoke)->Args({7, 9, 3, 1, 0})->Args({7, 9, 3, 1, 1})->UseManualTime()->Iterations(1);

}  // namespace
}  // namespace t3k_bench

#endif
