#pragma once
/// \file bench_common.hpp
/// Shared pieces of t3k_bench: shapes from benchmark arguments, data fixtures cached across Google Benchmark's
/// repeated invocations of one benchmark, the timing loop (fence before and after every timed call), the counters,
/// and the two in-process references every benchmark is compared with: dense GEMM throughput through Kokkos Kernels
/// (gemm_fraction) and a stream-like copy bandwidth (bandwidth_fraction), with the same space, scalar type and
/// threads as the benchmarks themselves, sampled next to each timed call (PairedReference).

#include "flop_counts.hpp"

#include "t3k/t3k.hpp"

#include <benchmark/benchmark.h>
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace t3k_bench {

using DefaultExec = Kokkos::DefaultExecutionSpace;

// ------------------------------------------------------------------------------------------------------ shapes

/// A uniform problem shape: d modes of size N, Tucker ranks n, interior TT ranks r (boundaries 1), order K, W probes.
struct Shape {
  std::size_t d = 0, big_n = 0, n = 0, r = 0, order = 0, w = 0;

  std::vector<std::size_t> mode_shapes() const { return std::vector<std::size_t>(d, big_n); }
  std::vector<std::size_t> tucker_ranks() const { return std::vector<std::size_t>(d, n); }
  std::vector<std::size_t> tt_ranks() const {
    std::vector<std::size_t> r_(d + 1, r);
    r_.front() = r_.back() = 1;
    return r_;
  }
  std::size_t sum_n() const { return d * big_n; }
  FrameDims frame_dims() const { return frame_dims_of_t3(mode_shapes(), tucker_ranks(), tt_ranks()); }
  std::string key() const {
    std::ostringstream s;
    s << d << ',' << big_n << ',' << n << ',' << r << ',' << order << ',' << w;
    return s.str();
  }
};

/// The first six benchmark arguments (d, N, n, r, K, W) as a Shape.
inline Shape shape_of(benchmark::State const& state) {
  Shape s;
  s.d = std::size_t(state.range(0));
  s.big_n = std::size_t(state.range(1));
  s.n = std::size_t(state.range(2));
  s.r = std::size_t(state.range(3));
  s.order = std::size_t(state.range(4));
  s.w = std::size_t(state.range(5));
  return s;
}

/// The six shape arguments' names, for ->ArgNames.
inline std::vector<std::string> shape_arg_names() { return {"d", "N", "n", "r", "K", "W"}; }

/// Chunk-size argument encoding: 0 = none, -1 = auto, c > 0 = fixed c.
inline t3k::ChunkSize chunk_of(std::int64_t code) {
  return code == 0 ? t3k::ChunkSize::none() : code < 0 ? t3k::ChunkSize::automatic() : t3k::ChunkSize::of(code);
}
constexpr std::int64_t chunk_none = 0;
constexpr std::int64_t chunk_auto = -1;

template <class Scalar>
constexpr t3k::ScalarType scalar_type_of() {
  return sizeof(Scalar) == 4 ? t3k::ScalarType::float32 : t3k::ScalarType::float64;
}
template <class Scalar>
char const* scalar_name() {
  return sizeof(Scalar) == 4 ? "float" : "double";
}

/// The J^T chunk size actually used for a request (what the library resolves `auto` to).
template <class Scalar, class ExecSpace = DefaultExec>
std::size_t resolved_chunk(t3k::ChunkSize c, Shape const& s, std::size_t n_tangent) {
  if (c.kind() == t3k::ChunkSize::Kind::automatic) {
    return t3k::automatic_chunk_size<ExecSpace>(s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), s.order, s.w,
                                                n_tangent, 1, scalar_type_of<Scalar>());
  }
  if (c.kind() == t3k::ChunkSize::Kind::fixed)
    return t3k::impl::rows_per_chunk(c.rows(), s.w, t3k::reduction_block_size_for<ExecSpace>());
  return s.w;
}

// -------------------------------------------------------------------------------------------------- data

/// Fills a contiguous View with reproducible pseudo-random values in [-scale, scale) (a counter-based hash, so the
/// values do not depend on the backend or the thread count).
template <class ExecSpace, class View>
void fill_random(ExecSpace const& space, View const& v, std::uint64_t seed, double scale = 1.0) {
  using Value = typename View::non_const_value_type;
  Value* data = v.data();
  Kokkos::parallel_for(
      "t3k_bench::fill_random", Kokkos::RangePolicy<ExecSpace>(space, 0, v.span()), KOKKOS_LAMBDA(std::size_t e) {
        std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + e + 1;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        double const u = double(z >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
        data[e] = Value(scale * (2 * u - 1));
      });
}

template <class Scalar, class Mem>
using ProbeView = Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>;
template <class Scalar, class Mem>
using ResidualView = Kokkos::View<Scalar****, Kokkos::LayoutRight, Mem>;

/// W random probe vectors per mode, scaled by 1/sqrt(N_i) so that probe jets stay O(1).
template <class Scalar, class ExecSpace>
std::vector<ProbeView<Scalar, typename ExecSpace::memory_space>> random_probes(ExecSpace const& space, Shape const& s,
                                                                               std::uint64_t seed) {
  std::vector<ProbeView<Scalar, typename ExecSpace::memory_space>> out;
  for (std::size_t i = 0; i < s.d; ++i) {
    out.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k_bench::probes"), s.w, s.big_n);
    fill_random(space, out.back(), seed * 1000 + i, std::sqrt(3.0 / double(s.big_n)));
  }
  return out;
}

/// Bytes of every core of a T3 / a frame / a variation.
template <class Scalar, class Mem>
double bytes_of(t3k::TuckerTensorTrain<Scalar, Mem> const& x) {
  double b = 0;
  for (std::size_t i = 0; i < x.n_modes(); ++i) b += double(x.tucker_core(i).span() + x.tt_core(i).span());
  return b * sizeof(Scalar);
}
template <class Scalar, class Mem>
double bytes_of(t3k::OrthogonalFrame<Scalar, Mem> const& f) {
  double b = 0;
  for (std::size_t i = 0; i < f.n_modes(); ++i) {
    b += double(f.up_tucker(i).span() + f.left_tt(i).span() + f.right_tt(i).span() + f.outer_tt(i).span());
  }
  return b * sizeof(Scalar);
}
/// Entries of one variation at the frame (sum over cores of nO N + rL nU rR).
inline double variation_entries(FrameDims const& f) {
  double e = 0;
  for (std::size_t i = 0; i < f.d(); ++i) e += double(f.no[i] * f.big_n[i] + f.rl[i] * f.nu[i] * f.rr[i + 1]);
  return e;
}
template <class Scalar, class Mem>
FrameDims dims_of(t3k::OrthogonalFrame<Scalar, Mem> const& f) {
  return {f.mode_shapes(), f.up_ranks(), f.outer_ranks(), f.left_ranks(), f.right_ranks()};
}

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
// ------------------------------------------------------------------------------------------ timing loop

/// Peak bytes Kokkos allocates in the space's memory during one call (t3k::AllocationTracker around it). The call
/// doubles as the warm-up of the timed loop.
template <class ExecSpace, class Call>
double measure_peak_bytes(ExecSpace const& space, Call&& call) {
  space.fence();
  t3k::AllocationTracker tracker;
  call();
  space.fence();
  return double(tracker.peak(typename ExecSpace::memory_space().name()));
}

/// Counts of count_launches (one call at a time).
struct LaunchCounts {
  long kernels = 0;
  long blas_products = 0;
  static LaunchCounts& current() {
    static LaunchCounts counts;
    return counts;
  }
  static void on_kernel(char const*, std::uint32_t, std::uint64_t*) { ++current().kernels; }
  static void on_region(char const* name) {
    // Kokkos Kernels names the region of every product it hands to a vendor BLAS "KokkosBlas::gemm[TPL_...".
    if (std::strncmp(name, "KokkosBlas::gemm[TPL", 20) == 0) ++current().blas_products;
  }
};

/// Where `ExecSpace` takes the device code paths (device backends; host spaces in T3K_DEVICE_CODE_PATHS_ON_HOST
/// builds): counters `kernel_launches` (Kokkos kernels, through Kokkos Tools' begin-parallel callbacks) and
/// `blas_products` (products Kokkos Kernels hands to the vendor BLAS) of one more call. On a GPU each costs
/// microseconds of latency, so the counts say how near a call is to launch-bound (perf/README.md, "Counters"). Not
/// on host paths: there a tool watching kernels makes the sweeps run their blocks in order on one thread
/// (impl::tool_watches_kernels), which would be another call, and kernels inside row ranges are loops no tool sees.
/// A Kokkos tool's own callbacks are restored afterwards.
template <class ExecSpace, class Call>
void count_launches(benchmark::State& state, ExecSpace const& space, Call&& call) {
  if constexpr (!t3k::impl::runs_on_host<ExecSpace>()) {
    namespace tools = Kokkos::Tools::Experimental;
    auto const before = tools::get_callbacks();
    space.fence();
    LaunchCounts::current() = LaunchCounts{};
    tools::set_begin_parallel_for_callback(&LaunchCounts::on_kernel);
    tools::set_begin_parallel_reduce_callback(&LaunchCounts::on_kernel);
    tools::set_begin_parallel_scan_callback(&LaunchCounts::on_kernel);
    tools::set_push_region_callback(&LaunchCounts::on_region);
    call();
    space.fence();
    tools::set_begin_parallel_for_callback(before.begin_parallel_for);
    tools::set_begin_parallel_reduce_callback(before.begin_parallel_reduce);
    tools::set_begin_parallel_scan_callback(before.begin_parallel_scan);
    tools::set_push_region_callback(before.push_region);
    state.counters["kernel_launches"] = double(LaunchCounts::current().kernels);
    state.counters["blas_products"] = double(LaunchCounts::current().blas_products);
  } else {
    (void)state;
    (void)space;
    (void)call;
  }
}

// ---------------------------------------------------------------------------------------------- references

/// Square size of the cached GEMM reference (T3K_BENCH_GEMM_SIZE overrides; default 512).
inline std::size_t gemm_reference_size() {
  if (char const* env = std::getenv("T3K_BENCH_GEMM_SIZE")) {
    long const v = std::atol(env);
    if (v > 0) return std::size_t(v);
  }
  return 512;
}

/// A reference kernel: `run` does `work` units (FLOPs or bytes) per call and fences before it returns.
struct ReferenceKernel {
  std::function<void()> run;
  double work = 0;
};

/// KokkosBlas::gemm C = A B on m x k and k x n LayoutLeft Views in `ExecSpace`'s memory (FLOPs per run).
template <class Scalar, class ExecSpace>
ReferenceKernel gemm_reference_kernel(std::size_t m, std::size_t n, std::size_t k) {
  using Device = Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>;
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutLeft, Device>;
  ExecSpace space;
  Matrix a("t3k_bench::gemm_a", m, k), b("t3k_bench::gemm_b", k, n), c("t3k_bench::gemm_c", m, n);
  fill_random(space, a, 1);
  fill_random(space, b, 2);
  space.fence();
  ReferenceKernel kernel{[=] {
                           KokkosBlas::gemm("N", "N", Scalar(1), a, b, Scalar(0), c);
                           space.fence();
                         },
                         gemm_flops(double(m), double(n), double(k))};
  kernel.run();  // warm-up
  return kernel;
}

/// Copy b(i) = a(i) over `n` doubles (bytes per run: read + write counted, as STREAM does).
template <class ExecSpace>
ReferenceKernel copy_reference_kernel(std::size_t n) {
  using Vector = Kokkos::View<double*, Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>>;
  ExecSpace space;
  Vector a("t3k_bench::copy_a", n), b("t3k_bench::copy_b", n);
  fill_random(space, a, 3);
  ReferenceKernel kernel{[=] {
                           Kokkos::parallel_for(
                               "t3k_bench::copy", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
                               KOKKOS_LAMBDA(std::size_t i) { b(i) = a(i); });
                           space.fence();
                         },
                         2.0 * sizeof(double) * double(n)};
  kernel.run();  // warm-up (first touch of b)
  return kernel;
}

/// Runs the kernel repeatedly until at least `seconds` have passed (at least once); returns {runs, seconds}.
inline std::pair<int, double> run_for(ReferenceKernel const& kernel, double seconds) {
  using clock = std::chrono::steady_clock;
  auto const t0 = clock::now();
  int runs = 0;
  double spent = 0;
  do {
    kernel.run();
    ++runs;
    spent = std::chrono::duration<double>(clock::now() - t0).count();
  } while (spent < seconds);
  return {runs, spent};
}

/// The kernel's best rate (work per second) over several timed batches, each at least `min_seconds / 4` long.
inline double best_rate(ReferenceKernel const& kernel, double min_seconds = 1.0) {
  double best = 0, spent = 0;
  int batches = 0;
  while (batches < 3 || spent < min_seconds) {
    auto const batch = run_for(kernel, min_seconds / 4);
    best = std::max(best, kernel.work * batch.first / batch.second);
    spent += batch.second;
    ++batches;
  }
  return best;
}

/// A reference kernel sampled next to a benchmark's timed calls: after each call (timed_loop), the kernel runs for
/// about as long as the call took, and rate() is its work over its time across all samples. The benchmark's rate
/// and this one then come from the same stretches of the run. On a shared VM the machine's speed drifts while a
/// benchmark runs (two-thread GEMM on the reference VM moved between 42 and 76 GFLOP/s from one second to the next:
/// perf/README.md, "Two threads: whole block products per thread"), so a reference measured once per process can come
/// from another state of the machine than the benchmark it divides.
class PairedReference {
 public:
  explicit PairedReference(ReferenceKernel kernel) : kernel_(std::move(kernel)) {}

  /// Runs the kernel for at least `seconds` (at least once) and adds the runs to the sample.
  void sample(double seconds) {
    auto const batch = run_for(kernel_, seconds);
    work_ += kernel_.work * batch.first;
    seconds_ += batch.second;
  }

  /// Work per second over every sample so far (0 before the first).
  double rate() const { return seconds_ > 0 ? work_ / seconds_ : 0; }

 private:
  ReferenceKernel kernel_;
  double work_ = 0, seconds_ = 0;
};

/// Runs `call` once per benchmark iteration with a fence before the loop and after every call; reports the fenced
/// wall time as the iteration time (register with ->UseManualTime()). With `paired`, after every timed call the
/// reference kernel runs for about as long, untimed (PairedReference). Returns the total timed seconds of `call`.
template <class ExecSpace, class Call>
double timed_loop(benchmark::State& state, ExecSpace const& space, Call&& call, PairedReference* paired = nullptr) {
  using clock = std::chrono::steady_clock;
  space.fence();
  double total = 0;
  for (auto _ : state) {
    auto const t0 = clock::now();
    call();
    space.fence();
    double const seconds = std::chrono::duration<double>(clock::now() - t0).count();
    state.SetIterationTime(seconds);
    total += seconds;
    if (paired) paired->sample(seconds);
  }
  return total;
}

/// The GEMM reference paired with a benchmark: square at the reference size, of the benchmark's scalar type, space
/// and threads.
template <class Scalar, class ExecSpace>
PairedReference paired_gemm_reference() {
  std::size_t const s = gemm_reference_size();
  return PairedReference(gemm_reference_kernel<Scalar, ExecSpace>(s, s, s));
}

/// GEMM FLOP/s at the reference size, measured once per process, scalar type and execution space (best of several
/// batches): the roofline counters' compute ceiling.
template <class Scalar, class ExecSpace = DefaultExec>
double gemm_reference_flops() {
  static double const flops = [] {
    std::size_t const s = gemm_reference_size();
    return best_rate(gemm_reference_kernel<Scalar, ExecSpace>(s, s, s));
  }();
  return flops;
}

/// Copy size of the cached bandwidth reference: 2^24 doubles per array (128 MiB, far beyond the last-level cache);
/// T3K_BENCH_COPY_ELEMENTS overrides.
inline std::size_t copy_reference_elements() {
  if (char const* env = std::getenv("T3K_BENCH_COPY_ELEMENTS")) {
    long const v = std::atol(env);
    if (v > 0) return std::size_t(v);
  }
  return std::size_t(1) << 24;
}

/// The copy reference paired with a benchmark (at the reference size, in the benchmark's space and threads).
template <class ExecSpace>
PairedReference paired_copy_reference() {
  return PairedReference(copy_reference_kernel<ExecSpace>(copy_reference_elements()));
}

/// Copy bandwidth at the reference size, measured once per process and execution space (best of several batches):
/// the roofline counters' bandwidth ceiling.
template <class ExecSpace = DefaultExec>
double copy_reference_bandwidth() {
  static double const bandwidth = best_rate(copy_reference_kernel<ExecSpace>(copy_reference_elements()));
  return bandwidth;
}

// ------------------------------------------------------------------------------------------------ counters

/// Sets the common counters from the timed total: FLOP/s and bytes/s are computed from the fenced wall time (Google
/// Benchmark's own rate counters divide by the main thread's CPU time, which is wrong for threaded backends).
inline void set_throughput_counters(benchmark::State& state, double total_seconds, double flops_per_call,
                                    double bytes_per_call) {
  double const calls = double(state.iterations());
  double const seconds = total_seconds > 0 ? total_seconds : 1e-300;
  if (flops_per_call > 0) {
    state.counters["flops"] = flops_per_call;
    state.counters["FLOP/s"] = flops_per_call * calls / seconds;
  }
  state.counters["bytes"] = bytes_per_call;
  state.counters["bytes/s"] = bytes_per_call * calls / seconds;
}

/// gemm_fraction = this benchmark's FLOP/s over the GEMM reference sampled next to its calls (`paired`, of the same
/// scalar type, space and threads); gemm_ref_FLOP/s is that reference.
inline void set_gemm_fraction(benchmark::State& state, PairedReference const& paired) {
  double const reference = paired.rate();
  state.counters["gemm_ref_FLOP/s"] = reference;
  state.counters["gemm_fraction"] = state.counters["FLOP/s"].value / reference;
}

/// bandwidth_fraction = this benchmark's bytes/s (inputs + outputs) over the copy bandwidth sampled next to its calls
/// (`paired`, same space and threads); copy_ref_bytes/s is that reference.
///
/// Also the roofline counters, because whether a probe sweep is memory-bound at all depends on its shape:
/// FLOP/byte = flops / bytes of one call (the exact count of flop_counts.hpp over the bytes the call must move);
/// roofline_FLOP/s = min(GEMM reference, copy reference * FLOP/byte) with the best-of-batches references measured
/// once per process, the most any implementation could reach on this machine if it ran at the dense-kernel rate
/// and moved only those bytes at copy speed; roofline_fraction = FLOP/s over it. Where copy reference * FLOP/byte
/// exceeds the GEMM reference, the sweep is compute-bound and bandwidth_fraction cannot reach 1 (nor, past twice
/// the GEMM reference, 0.5).
template <class Scalar, class ExecSpace>
void set_bandwidth_fraction(benchmark::State& state, PairedReference const& paired) {
  double const reference = paired.rate();
  state.counters["copy_ref_bytes/s"] = reference;
  state.counters["bandwidth_fraction"] = state.counters["bytes/s"].value / reference;
  if (state.counters.count("flops") == 0 || state.counters["bytes"].value <= 0) return;
  double const flop_per_byte = state.counters["flops"].value / state.counters["bytes"].value;
  double const roofline =
      std::min(gemm_reference_flops<Scalar, ExecSpace>(), copy_reference_bandwidth<ExecSpace>() * flop_per_byte);
  state.counters["FLOP/byte"] = flop_per_byte;
  state.counters["roofline_FLOP/s"] = roofline;
  state.counters["roofline_fraction"] = state.counters["FLOP/s"].value / roofline;
}

}  // namespace t3k_bench
