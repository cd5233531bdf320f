#pragma once
/// \file probe_jet_output.hpp
/// Probe jets written into the caller's output: the dispatch point between the host rows kernels
/// (host/probe_jet_rows.hpp) and the device per-entry kernel (device/entry_kernels.hpp). Not API.

#include "t3k/algorithms/impl/device/entry_kernels.hpp"
#include "t3k/algorithms/impl/host/probe_jet_rows.hpp"
#include "t3k/algorithms/impl/jet_packing.hpp"

namespace t3k {
namespace impl {

/// Writes probe jets z[s0+s, k, j] = sum_u M1[u,j] e1[s,k,u] (+ sum_o M2[o,j] e2[s,k,o]) for k < K1 and zeros for
/// the orders K1..K that a T3 of this d cannot have. `z` is any rank-3 View (W, K+1, N). Each entry is one
/// sequential sum (over u, then o), so a probe's row does not depend on the chunk nor on the other probes: on host
/// backends a group of probes' rows per iteration (WriteProbeJetsRows; WriteProbeJetsTiles in builds that dispatch
/// small products to host_small_product), on device backends one entry per thread.
template <class ExecutionSpace, class Scalar, class MemorySpace, class OutputView>
void write_probe_jets(ExecutionSpace const& space, char const* label, OutputView z, int s0, int rows,
                      Matrix<Scalar const, MemorySpace> m1, Jet3<Scalar const, MemorySpace> e1,
                      Matrix<Scalar const, MemorySpace> m2, Jet3<Scalar const, MemorySpace> e2) {
  int const n_orders = int(z.extent(1));
  int const n = int(z.extent(2));
  if (rows == 0 || n_orders == 0 || n == 0) return;
  auto const operands = write_probe_jets_operands(z, s0, m1, e1, m2, e2);
  if constexpr (runs_on_host<ExecutionSpace>()) {
    host_write_probe_jets(space, label, operands, rows);
  } else {
    for_each_jet_entry(space, label, rows, n_orders, n, operands);
  }
}

}  // namespace impl
}  // namespace t3k
