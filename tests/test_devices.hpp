#pragma once
// The execution spaces every typed test runs on: all enabled backends of the Kokkos this build uses.

#include "t3k/core/chunk_size.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace t3k_test {

template <class ExecutionSpace, class Scalar>
struct Config {
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  using scalar_type = Scalar;
};

// clang-format off
// The non-default spaces are listed explicitly and the default space last, so no space appears twice.
// T3K_TEST_DEFAULT_SPACE_ONLY and T3K_TEST_DOUBLE_ONLY (CMake: T3K_TEST_EVERY_SPACE=OFF, T3K_TEST_FLOAT=OFF) narrow
// them for builds that test one thing: the device code paths, a compile check, the sanitizers.
#if defined(KOKKOS_ENABLE_SERIAL) && !defined(T3K_TEST_DEFAULT_SPACE_ONLY) &&                         \
    (defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_THREADS) || defined(KOKKOS_ENABLE_CUDA) || \
     defined(KOKKOS_ENABLE_HIP))
#define T3K_TEST_SERIAL_CONFIG(Scalar) Config<Kokkos::Serial, Scalar>,
#else
#define T3K_TEST_SERIAL_CONFIG(Scalar)
#endif
#if defined(KOKKOS_ENABLE_OPENMP) && !defined(T3K_TEST_DEFAULT_SPACE_ONLY) && \
    (defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP))
#define T3K_TEST_OPENMP_CONFIG(Scalar) Config<Kokkos::OpenMP, Scalar>,
#else
#define T3K_TEST_OPENMP_CONFIG(Scalar)
#endif

/// Every enabled backend in double.
using DoubleConfigs = ::testing::Types<T3K_TEST_SERIAL_CONFIG(double) T3K_TEST_OPENMP_CONFIG(double)
                                       Config<Kokkos::DefaultExecutionSpace, double>>;
/// Every enabled backend in double, and the default space in float as well.
#ifdef T3K_TEST_DOUBLE_ONLY
using TestConfigs = DoubleConfigs;
#else
using TestConfigs = ::testing::Types<T3K_TEST_SERIAL_CONFIG(double) T3K_TEST_OPENMP_CONFIG(double)
                                     Config<Kokkos::DefaultExecutionSpace, double>,
                                     Config<Kokkos::DefaultExecutionSpace, float>>;
#endif
// clang-format on

/// The reduction block of a configuration's space (64 probes on host backends, 2048 on device backends): tests of
/// chunking size their probe sets in it, so that they chunk on every backend.
template <class C>
constexpr std::size_t block_of() {
  return t3k::reduction_block_size_for<typename C::execution_space>();
}

/// The passes a chunked call on a configuration's space makes over `w` probes with chunk size `chunk`, as the library
/// sizes them (fixed sizes rounded down to whole reduction blocks): tests of chunking assert it is more than one, so
/// that they compare several passes with one rather than one pass with itself.
template <class C>
std::size_t chunk_passes(t3k::ChunkSize const& chunk, std::size_t w) {
  std::size_t const rows = t3k::impl::rows_per_chunk(chunk, w, block_of<C>());
  return (w + rows - 1) / rows;
}

/// Tolerance as a multiple of the scalar's epsilon.
template <class Scalar>
double eps_times(double factor) {
  return factor * double(std::numeric_limits<Scalar>::epsilon());
}

/// LayoutLeft copies of rank-2 Views (same values, same memory space): probe stacks whose rows are not one contiguous
/// matrix, which the sweeps pack block by block instead of multiplying in place.
template <class View>
auto layout_left_copies(std::vector<View> const& views) {
  using Strided = Kokkos::View<typename View::non_const_value_type**, Kokkos::LayoutLeft, typename View::memory_space>;
  std::vector<Strided> out;
  for (auto const& v : views) {
    out.emplace_back("layout_left_copy", v.extent(0), v.extent(1));
    Kokkos::deep_copy(out.back(), v);
  }
  return out;
}

/// Two results of the same probes that must agree bitwise (a, b) and agree with a reference computed another way
/// (ref) to `tolerance` relative to 1 + |ref|; all flattened, `what` names them in failures.
inline void expect_bitwise_equal_and_near(std::vector<double> const& a, std::vector<double> const& b,
                                          std::vector<double> const& ref, double tolerance, std::string const& what) {
  EXPECT_EQ(a, b) << what;
  ASSERT_EQ(a.size(), ref.size()) << what;
  for (std::size_t e = 0; e < ref.size(); ++e) {
    EXPECT_NEAR(a[e], ref[e], tolerance * (1 + std::abs(ref[e]))) << what << " entry " << e;
  }
}

/// Expects f() to throw Exception whose message contains `expected`.
template <class Exception, class F>
void expect_throw_with(F&& f, std::string const& expected) {
  try {
    f();
    ADD_FAILURE() << "expected an exception with \"" << expected << "\"";
  } catch (Exception const& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

}  // namespace t3k_test
