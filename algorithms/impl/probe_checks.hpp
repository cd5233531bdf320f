#pragma once
/// \file probe_checks.hpp
/// Boundary checks shared by every call that takes a probe set: what the compiler can check (View type, rank,
/// accessibility) fails the build, the rest (counts, shapes) throws a t3k error naming the argument. Not API.

#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"

#include <string>
#include <type_traits>
#include <vector>

namespace t3k {
namespace impl {

/// Compile-time checks for a View argument: a View, of `rank`, accessible from `ExecutionSpace`.
template <class ExecutionSpace, class ViewType, int Rank>
struct CheckViewArgument {
  static_assert(Kokkos::is_view<ViewType>::value, "t3k: probe vectors, jets and residuals must be Kokkos Views");
  static_assert(int(ViewType::rank) == Rank, "t3k: View argument has the wrong rank");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename ViewType::memory_space>::accessible,
                "t3k: View argument is not accessible from the execution space");
  static constexpr bool value = true;
};

/// Checks a probe-vector stack: one (W, N_i) View per mode, equal W. Returns W.
template <class ProbeView>
std::size_t check_probe_stack(std::string const& where, std::string const& name, std::vector<ProbeView> const& ww,
                              std::vector<std::size_t> const& mode_shapes) {
  std::size_t const d = mode_shapes.size();
  if (ww.size() != d) {
    throw DimensionMismatch(concat(where, ": got ", ww.size(), " ", name, " probe-vector arrays for a T3 with d = ", d,
                                   " modes; expected one (W x N_i) array per mode"));
  }
  std::size_t const w = ww[0].extent(0);
  for (std::size_t i = 0; i < d; ++i) {
    check_shape(where, concat(name, "[", i, "]"), ww[i], {w, mode_shapes[i]});
  }
  return w;
}

/// Checks a stack of jets for every mode: (W, K+1, N_i).
template <class JetView>
void check_jet_stack(std::string const& where, std::string const& name, std::vector<JetView> const& jets,
                     std::size_t n_probes, std::size_t order, std::vector<std::size_t> const& mode_shapes) {
  std::size_t const d = mode_shapes.size();
  if (jets.size() != d) {
    throw DimensionMismatch(concat(where, ": got ", jets.size(), " ", name, " arrays for d = ", d,
                                   " modes; expected one (W x (K+1) x N_i) array per mode"));
  }
  for (std::size_t i = 0; i < d; ++i) {
    check_shape(where, concat(name, "[", i, "]"), jets[i], {n_probes, order + 1, mode_shapes[i]});
  }
}

/// K1 = min(K, d-1) + 1: the stored coefficients of a general jet (docs/math.md).
inline int general_jet_length(std::size_t order, std::size_t d) { return int((order < d - 1 ? order : d - 1) + 1); }
/// Kl = min(K1, 2): the stored coefficients of a linear jet.
inline int linear_jet_length(int k1) { return k1 < 2 ? k1 : 2; }

}  // namespace impl
}  // namespace t3k
