// t3k_bench: the one main of the Google Benchmark executable. It holds the Kokkos::ScopeGuard, records the Kokkos
// configuration as benchmark context, applies the default filter that leaves out the opt-in (slow) registrations,
// and releases the cached fixtures before Kokkos is finalized.
#include "bench_common.hpp"

#include "t3k/algorithms/impl/host/host_blas.hpp"
#include "t3k/core/build_info.hpp"
#include "t3k/version.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace t3k_bench {
namespace {
std::vector<std::function<void()>>& releases() {
  static std::vector<std::function<void()>> r;
  return r;
}
}  // namespace
void register_fixture_release(std::function<void()> release) { releases().push_back(std::move(release)); }
void release_fixtures() {
  for (auto& r : releases()) r();
}
}  // namespace t3k_bench

int main(int argc, char** argv) {
  // Without OMP_PROC_BIND Kokkos' OpenMP backend prints four lines of advice to stdout, which would break
  // --benchmark_format=json > file. false is the OpenMP runtime's own behaviour when neither variable is set.
  if (!std::getenv("OMP_PROC_BIND") && !std::getenv("OMP_PLACES")) ::setenv("OMP_PROC_BIND", "false", 0);
  Kokkos::ScopeGuard guard(argc, argv);
  // Registrations whose name contains "_Optin" (e.g. |W| = 10^6, the W = 10^5 target shapes) take minutes on a
  // small machine: they run only when a --benchmark_filter names them.
  std::vector<char*> args(argv, argv + argc);
  bool has_filter = false;
  for (int i = 1; i < argc; ++i) has_filter = has_filter || std::strncmp(argv[i], "--benchmark_filter", 18) == 0;
  static char default_filter[] = "--benchmark_filter=-_Optin";
  if (!has_filter) args.push_back(default_filter);
  int n_args = int(args.size());
  benchmark::Initialize(&n_args, args.data());
  if (benchmark::ReportUnrecognizedArguments(n_args, args.data())) return 1;

  benchmark::AddCustomContext("kokkos_version", std::to_string(KOKKOS_VERSION));
  benchmark::AddCustomContext("kokkos_backends", t3k::kokkos_backends(","));
  benchmark::AddCustomContext("kokkos_default_execution_space", t3k_bench::DefaultExec::name());
  benchmark::AddCustomContext("kokkos_default_concurrency", std::to_string(t3k_bench::DefaultExec().concurrency()));
  benchmark::AddCustomContext("t3k_version", T3K_VERSION_STRING);
  benchmark::AddCustomContext("gemm_reference_size", std::to_string(t3k_bench::gemm_reference_size()));
  benchmark::AddCustomContext("copy_reference_elements", std::to_string(t3k_bench::copy_reference_elements()));
#ifdef KOKKOSKERNELS_ENABLE_TPL_BLAS
  benchmark::AddCustomContext("kokkos_kernels_tpl_blas", "ON");
#else
  benchmark::AddCustomContext("kokkos_kernels_tpl_blas", "OFF");
#endif
  // The core decides how fast the dense products run: OpenBLAS 0.3.21 runs small-matrix kernels only with its
  // SkylakeX and Cooper Lake (AVX-512) kernels and takes its general path for the probe sweeps' products with the
  // others (docs/performance.md), and falls back to SSE3 kernels on CPUs newer than itself (docs/development.md).
  benchmark::AddCustomContext("host_blas", t3k::host_blas_description());
  std::string const blas_warning = t3k::host_blas_warning();
  if (!blas_warning.empty()) {
    benchmark::AddCustomContext("host_blas_warning", blas_warning);
    std::fprintf(stderr, "t3k_bench: warning: %s\n", blas_warning.c_str());
  }

  benchmark::RunSpecifiedBenchmarks();
  t3k_bench::release_fixtures();
  benchmark::Shutdown();
  return 0;
}
