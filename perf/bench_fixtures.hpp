#pragma once
/// \file bench_fixtures.hpp
/// t3k_bench's data fixtures, cached across Google Benchmark's repeated invocations of one benchmark, and the
/// thread settings of the Serial benchmarks.

#include "bench_data.hpp"

namespace t3k_bench {

// ------------------------------------------------------------------------------------------ Serial threads

/// Kokkos::Serial benchmarks run on one thread throughout, their GEMM reference included. Kokkos Kernels' host BLAS
/// (OpenBLAS's OpenMP build with setup.sh) threads a product with omp_get_max_threads() threads whatever the Kokkos
/// space calling it, so with OMP_NUM_THREADS=2 a "Serial" benchmark compared a partly threaded call with a
/// two-thread reference. Sets the OpenMP thread count to 1 for the benchmark's scope and restores it; does nothing
/// for other spaces (Kokkos' own OpenMP pool sizes its parallel regions itself).
template <class ExecSpace>
class OneThreadForSerial {
 public:
  OneThreadForSerial() {
#ifdef _OPENMP
    if (std::is_same<ExecSpace, Kokkos::Serial>::value) {
      saved_ = omp_get_max_threads();
      omp_set_num_threads(1);
    }
#endif
  }
  ~OneThreadForSerial() {
#ifdef _OPENMP
    if (saved_ > 0) omp_set_num_threads(saved_);
#endif
  }
  OneThreadForSerial(OneThreadForSerial const&) = delete;
  OneThreadForSerial& operator=(OneThreadForSerial const&) = delete;

 private:
  [[maybe_unused]] int saved_ = 0;  // 0: nothing to restore
};

// ----------------------------------------------------------------------------------------- fixture cache

/// Releases every cached fixture; main calls it before Kokkos is finalized (no View may outlive Kokkos).
void release_fixtures();
void register_fixture_release(std::function<void()> release);

/// One cached fixture per type: Google Benchmark invokes a benchmark function several times (to size the
/// iteration count), so expensive set-up (frames, probes, planted problems) is kept while the key stays the same.
template <class T>
std::shared_ptr<T> cached_fixture(std::string const& key, std::function<std::shared_ptr<T>()> const& make) {
  static std::string cached_key;
  static std::shared_ptr<T> cached;
  static bool registered = false;
  if (!registered) {
    register_fixture_release([] {
      cached.reset();
      cached_key.clear();
    });
    registered = true;
  }
  if (!cached || cached_key != key) {
    cached.reset();  // free the previous fixture before building the next one
    cached = make();
    cached_key = key;
  }
  return cached;
}

/// The data of a J or J^T benchmark: a frame of a random T3 (public API: random_t3 + orthogonal_frame), W probe
/// pairs, and, when asked for, a residual stack (n_t, W, K+1, N_i) per mode and a variation stack of n_t entries.
template <class Scalar, class ExecSpace>
struct FrameFixture {
  using Mem = typename ExecSpace::memory_space;
  t3k::OrthogonalFrame<Scalar, Mem> frame;
  std::vector<ProbeView<Scalar, Mem>> ww, pp;
  std::vector<ResidualView<Scalar, Mem>> residuals;
  t3k::T3Variation<Scalar, Mem> variation;
  FrameDims dims;
};

template <class Scalar, class ExecSpace>
std::shared_ptr<FrameFixture<Scalar, ExecSpace>> frame_fixture(Shape const& s, std::size_t n_residuals,
                                                               std::size_t n_variations) {
  using F = FrameFixture<Scalar, ExecSpace>;
  std::string const key = s.key() + ";" + std::to_string(n_residuals) + ";" + std::to_string(n_variations);
  return cached_fixture<F>(key, [&] {
    ExecSpace space;
    auto f = std::make_shared<F>();
    auto x = t3k::random_t3<Scalar>(space, s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), 5);
    f->frame = t3k::orthogonal_frame(space, x);
    f->dims = dims_of(f->frame);
    f->ww = random_probes<Scalar>(space, s, 21);
    f->pp = random_probes<Scalar>(space, s, 22);
    for (std::size_t i = 0; n_residuals > 0 && i < s.d; ++i) {
      f->residuals.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k_bench::residual"),
                                n_residuals, s.w, s.order + 1, s.big_n);
      fill_random(space, f->residuals.back(), 100 + i);
    }
    if (n_variations > 0) f->variation = t3k::random_variation(space, f->frame, n_variations, 23);
    space.fence();
    return f;
  });
}

/// A random T3 of the given shape (the input of the frame and T3-SVD benchmarks).
template <class Scalar>
struct CoreFixture {
  t3k::TuckerTensorTrain<Scalar, DefaultExec::memory_space> x;
};

template <class Scalar>
std::shared_ptr<CoreFixture<Scalar>> core_fixture(Shape const& s) {
  return cached_fixture<CoreFixture<Scalar>>(s.key(), [&] {
    auto f = std::make_shared<CoreFixture<Scalar>>();
    f->x = t3k::random_t3<Scalar>(DefaultExec(), s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), 3);
    return f;
  });
}

/// Shapes (d, N, n, r) of the frame and T3-SVD benchmarks, up to the FLOP-count example N=1000, n=64, r=128.
inline void core_sweep(benchmark::internal::Benchmark* b) {
  b->ArgNames(shape_arg_names());
  b->Args({6, 64, 8, 8, 0, 0})->Args({8, 64, 8, 8, 0, 0})->Args({8, 64, 16, 32, 0, 0})->Args({8, 1000, 64, 128, 0, 0});
  b->Args({16, 64, 16, 32, 0, 0});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}

}  // namespace t3k_bench
