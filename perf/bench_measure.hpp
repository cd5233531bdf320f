#pragma once
/// \file bench_measure.hpp
/// How t3k_bench measures: the timing loop (fence before and after every timed call), peak bytes, kernel launches,
/// the counters, and the two in-process references every benchmark is compared with: dense GEMM throughput through
/// Kokkos Kernels (gemm_fraction) and a stream-like copy bandwidth (bandwidth_fraction), with the same space, scalar
/// type and threads as the benchmarks themselves, sampled next to each timed call (PairedReference).

#include "bench_fixtures.hpp"

namespace t3k_bench {

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
    space.fence();
    t3k::LaunchCounter counter;
    call();
    space.fence();
    state.counters["kernel_launches"] = double(counter.kernels());
    state.counters["blas_products"] = double(counter.blas_products());
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
/// benchmark runs (two-thread GEMM on a VM can nearly halve from one second to the next), so a reference measured once
/// per process can come
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
/// reference kernel runs for about as long, untimed (PairedReference); with `second` too, so does a second one after
/// it (a benchmark compared with both the GEMM and the copy reference). Returns the total timed seconds of `call`.
template <class ExecSpace, class Call>
double timed_loop(benchmark::State& state, ExecSpace const& space, Call&& call, PairedReference* paired = nullptr,
                  PairedReference* second = nullptr) {
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
    if (second) second->sample(seconds);
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
