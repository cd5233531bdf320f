#pragma once
/// \file contract_jets.hpp
/// Jet contractions out [+]= Y (*) v over one axis of a jet of matrices: the dispatch point between the host rows
/// kernels (host/contract_jets_rows.hpp) and the device per-entry kernel (device/entry_kernels.hpp). Not API.

#include "t3k/algorithms/impl/device/entry_kernels.hpp"
#include "t3k/algorithms/impl/host/contract_jets_rows.hpp"
#include "t3k/algorithms/impl/jet_pairing.hpp"

namespace t3k {
namespace impl {

/// out (rows, Lo, X) [+]= Y (rows, LY, P, Q) (*) v (rows, Lv, Y-axis), with the pairing and axis given. Each entry
/// sums over the pairs (a, b) and then over the contracted axis, in that order, from zero.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void contract_jets(ExecutionSpace const& space, char const* label, Jet3<Scalar, MemorySpace> out,
                   Jet4<Scalar const, MemorySpace> ymat, ContractAxis axis, Jet3<Scalar const, MemorySpace> v,
                   JetPairing pairing, bool accumulate) {
  ContractJetsExtents const e(out, ymat, v);
  if (e.rows == 0 || e.lo == 0 || e.n_out == 0) return;
  bool const first = axis == ContractAxis::first;
  if constexpr (runs_on_host<ExecutionSpace>()) {
    host_contract_jets(space, label, e, out, ymat, first, v, pairing, accumulate);
  } else {
    Kokkos::parallel_for(
        label, Policy3<ExecutionSpace>(space, {0, 0, 0}, {e.rows, e.lo, e.n_out}),
        ContractJetsEntry<Scalar, MemorySpace>{out, ymat, v, pairing, e.ly, e.lv, e.n_sum, first, accumulate});
  }
}

}  // namespace impl
}  // namespace t3k
