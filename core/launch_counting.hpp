#pragma once
/// \file launch_counting.hpp
/// Counts the kernels Kokkos launches and the products Kokkos Kernels hands to a vendor BLAS, through Kokkos Tools
/// callbacks. On a GPU each costs microseconds of latency, so the counts say how near a call is to launch-bound;
/// tests and benchmarks use them to check that launches do not grow with the reduction blocks of a chunk.
///
/// Kernels that host backends run as plain loops inside row ranges (t3k/algorithms/impl/host/host_blocks.hpp), and
/// kernels too small to pay for a parallel region (t3k/core/impl/small_kernels.hpp), are not launches and are not
/// seen; count on device backends or with the device code paths on a host space.

#include "t3k/core/impl/kokkos_compat.hpp"

#include <cstdint>
#include <cstring>

namespace t3k {

namespace impl {
namespace launch_tools = Kokkos::Tools::Experimental;
}  // namespace impl

/// While alive, counts kernel launches (begin parallel_for / reduce / scan) and vendor-BLAS products; the Kokkos
/// Tools callbacks it replaces are restored when it is destroyed. One counter at a time per process.
/// **Blocking:** no; fence the space before reading counts of asynchronous work.
class LaunchCounter {
 public:
  LaunchCounter() : before_(impl::launch_tools::get_callbacks()) {
    counts() = Counts{};
    impl::launch_tools::set_begin_parallel_for_callback(&on_kernel);
    impl::launch_tools::set_begin_parallel_reduce_callback(&on_kernel);
    impl::launch_tools::set_begin_parallel_scan_callback(&on_kernel);
    impl::launch_tools::set_push_region_callback(&on_region);
  }
  ~LaunchCounter() {
    impl::launch_tools::set_begin_parallel_for_callback(before_.begin_parallel_for);
    impl::launch_tools::set_begin_parallel_reduce_callback(before_.begin_parallel_reduce);
    impl::launch_tools::set_begin_parallel_scan_callback(before_.begin_parallel_scan);
    impl::launch_tools::set_push_region_callback(before_.push_region);
  }
  LaunchCounter(LaunchCounter const&) = delete;
  LaunchCounter& operator=(LaunchCounter const&) = delete;

  /// Kernels launched since the counter was created.
  std::int64_t kernels() const { return counts().kernels; }
  /// Matrix products Kokkos Kernels handed to a vendor BLAS since the counter was created.
  std::int64_t blas_products() const { return counts().blas_products; }

 private:
  struct Counts {
    std::int64_t kernels = 0;
    std::int64_t blas_products = 0;
  };
  static Counts& counts() {
    static Counts c;
    return c;
  }
  static void on_kernel(char const*, std::uint32_t, std::uint64_t*) { ++counts().kernels; }
  // Kokkos Kernels names the region of every product it hands to a vendor BLAS "KokkosBlas::gemm[TPL_...".
  static void on_region(char const* name) {
    if (std::strncmp(name, "KokkosBlas::gemm[TPL", 20) == 0) ++counts().blas_products;
  }

  decltype(impl::launch_tools::get_callbacks()) before_;
};

}  // namespace t3k
