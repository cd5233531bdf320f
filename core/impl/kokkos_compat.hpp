#pragma once
/// \file kokkos_compat.hpp
/// Every difference between Kokkos 3.4 (Debian) and Kokkos 4.x lives here, each tagged for removal.

#include <Kokkos_Core.hpp>
#ifdef T3K_HAVE_KOKKOSKERNELS
#include <KokkosBlas3_gemm.hpp>
#endif

#include <string>
#include <type_traits>

#ifndef KOKKOS_VERSION
#error "T3K needs a Kokkos that defines KOKKOS_VERSION (3.4 or newer)"
#endif

namespace t3k {

// FIXME_KOKKOS3: remove when Kokkos >= 4 is required (math functions left Kokkos::Experimental in 4.0).
#if KOKKOS_VERSION >= 40000
using Kokkos::abs;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::sqrt;
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar abs(Scalar x) {
  return Kokkos::Experimental::fabs(x);
}
#endif

/// Smaller / larger of two values, usable in kernels (3.4 has no Kokkos::min/max).
template <class T>
KOKKOS_INLINE_FUNCTION constexpr T min_of(T a, T b) {
  return b < a ? b : a;
}
template <class T>
KOKKOS_INLINE_FUNCTION constexpr T max_of(T a, T b) {
  return a < b ? b : a;
}

namespace impl {

/// Whether `ExecutionSpace` runs on the host (its memory is HostSpace): host backends get cache-blocked and
/// BLAS-backed variants of some kernels; device backends one fully parallel kernel.
/// A build with T3K_DEVICE_CODE_PATHS_ON_HOST (the CMake option of that name; testing only) answers false for every
/// space, so that the device backends' code paths run, and are tested, on host backends too (no GPU needed).
template <class ExecutionSpace>
constexpr bool runs_on_host() {
#ifdef T3K_DEVICE_CODE_PATHS_ON_HOST
  return false;
#else
  return std::is_same<typename ExecutionSpace::memory_space, Kokkos::HostSpace>::value;
#endif
}

/// RAII profiling region. FIXME_KOKKOS3: remove when Kokkos >= 4 is required (use Kokkos::Profiling::ScopedRegion).
class ProfilingRegion {
 public:
  explicit ProfilingRegion(std::string const& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(ProfilingRegion const&) = delete;
  ProfilingRegion& operator=(ProfilingRegion const&) = delete;
};

#ifdef T3K_HAVE_KOKKOSKERNELS
/// KokkosBlas::gemm on the instance `space` where Kokkos Kernels takes one (4.1 and later); before that on the
/// Views' default instance, which on host backends is the same serial order of work.
/// FIXME_KOKKOS3: remove when Kokkos Kernels >= 4.1 is required (call KokkosBlas::gemm(space, ...) directly).
template <class ExecutionSpace, class AView, class BView, class CView>
void kokkos_blas_gemm(ExecutionSpace const& space, char const* trans_a, char const* trans_b,
                      typename AView::const_value_type& alpha, AView const& a, BView const& b,
                      typename CView::const_value_type& beta, CView const& c) {
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40100
  // Kokkos Kernels calls its BLAS TPL only where the Views' device is Device<instance's space, memory space>
  // (gemm_tpl_spec_avail). A HostSpace View's device has the default host execution space, so a product on
  // Kokkos::Serial in a build whose default host space is OpenMP ran Kokkos Kernels' own GEMM, with a team-scratch
  // allocation, several times slower (BM_JT_Target_Serial with Kokkos 4.x). Hence the same data,
  // layout and strides, seen on the instance's execution space.
  auto const on_space = [](auto const& v) {
    using V = std::decay_t<decltype(v)>;
    return Kokkos::View<typename V::data_type, typename V::array_layout,
                        Kokkos::Device<ExecutionSpace, typename V::memory_space>,
                        Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v);
  };
  KokkosBlas::gemm(space, trans_a, trans_b, alpha, on_space(a), on_space(b), beta, on_space(c));
#else
  (void)space;
  KokkosBlas::gemm(trans_a, trans_b, alpha, a, b, beta, c);
#endif
}
#endif

/// The command-line flag that sets Kokkos' host thread count, with its "=".
inline char const* kokkos_threads_flag() {
#if KOKKOS_VERSION >= 30700
  return "--kokkos-num-threads=";
#else
  // FIXME_KOKKOS3: remove when Kokkos >= 4 is required (3.4 knows only --kokkos-threads).
  return "--kokkos-threads=";
#endif
}

}  // namespace impl
}  // namespace t3k
