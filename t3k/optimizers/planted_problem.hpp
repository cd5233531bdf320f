#pragma once
/// \file planted_problem.hpp
/// Synthetic fitting problems with a known answer: probe jets of a planted T3 at random probe pairs, plus optional
/// noise. Used by the tests, the benchmarks and the `synthetic` problems of `t3k fit`.

#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/core/impl/host_random.hpp"
#include "t3k/optimizers/fitting_problem.hpp"

#include <cmath>
#include <cstdint>

namespace t3k {

/// Random probe pairs (i.i.d. normal entries scaled by 1/sqrt(N_i)), targets = probe jets of `truth` of order K,
/// plus noise * rms(jets) * i.i.d. normal. Drawn on the host in a fixed order: the same seed gives the same problem
/// on every backend.
///
/// Sharded: with a communicator of several ranks every rank generates only its own rows
/// (comm.shard_range(n_probes)) of the very same global problem, so memory stays local; the rows of the other ranks
/// are skipped in the random stream in O(1) (HostNormalGenerator::discard_normals), not drawn. Probes are the same
/// bits as in the unsharded problem; with noise the rms is a sum over ranks, equal to rounding.
/// **Blocking:** yes (collective when noise > 0 and comm has several ranks).
/// **Throws:** InvalidArgument for n_probes = 0 or negative noise.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FittingProblem<Scalar, MemorySpace> make_planted_problem(ExecutionSpace const& space, Communicator const& comm,
                                                         TuckerTensorTrain<Scalar, MemorySpace> const& truth,
                                                         std::size_t n_probes, std::size_t order, double noise,
                                                         std::uint64_t seed) {
  if (n_probes == 0) throw InvalidArgument("t3k::make_planted_problem: n_probes must be >= 1");
  if (!(noise >= 0)) throw InvalidArgument("t3k::make_planted_problem: noise must be >= 0");
  FittingProblem<Scalar, MemorySpace> p;
  p.order = order;
  ShardRange const rows = comm.shard_range(n_probes);
  if (comm.size() > 1) {
    p.comm = comm;
    p.global_offset = rows.begin;
    p.global_probes = n_probes;
  }
  std::size_t const w = rows.size();
  impl::HostNormalGenerator gen(seed);
  auto const shapes = truth.mode_shapes();
  for (int which = 0; which < 2; ++which) {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      typename FittingProblem<Scalar, MemorySpace>::probe_type v(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::planted::probes"), w, shapes[i]);
      auto h = Kokkos::create_mirror_view(v);
      double const scale = 1.0 / std::sqrt(double(shapes[i]));
      gen.discard_normals(std::uint64_t(rows.begin * shapes[i]));
      for (std::size_t s = 0; s < w; ++s)
        for (std::size_t j = 0; j < shapes[i]; ++j) h(s, j) = Scalar(scale * gen.normal());
      gen.discard_normals(std::uint64_t((n_probes - rows.end) * shapes[i]));
      Kokkos::deep_copy(space, v, h);
      (which == 0 ? p.ww : p.pp).push_back(v);
    }
  }
  p.targets = probe_derivatives(space, truth, p.ww, p.pp, order);
  if (noise > 0) {
    double const rms =
        std::sqrt(2 * zero_model_loss(space, p) / double(n_probes * (order + 1) * impl::max_element_or(shapes, 1)));
    for (auto& y : p.targets) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
      std::size_t const per_row = y.extent(1) * y.extent(2);
      gen.discard_normals(std::uint64_t(rows.begin * per_row));
      for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] += Scalar(noise * rms * gen.normal());
      gen.discard_normals(std::uint64_t((n_probes - rows.end) * per_row));
      Kokkos::deep_copy(space, y, h);
    }
  }
  space.fence();
  return p;
}

/// The planted problem of this process alone (all n_probes rows). **Blocking:** yes.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FittingProblem<Scalar, MemorySpace> make_planted_problem(ExecutionSpace const& space,
                                                         TuckerTensorTrain<Scalar, MemorySpace> const& truth,
                                                         std::size_t n_probes, std::size_t order, double noise,
                                                         std::uint64_t seed) {
  return make_planted_problem(space, Communicator(), truth, n_probes, order, noise, seed);
}

/// x with every core perturbed by relative noise eps (entry-wise eps * rms(core) * normal): a nearby start.
/// **Blocking:** yes.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> perturb_t3(ExecutionSpace const& space,
                                                  TuckerTensorTrain<Scalar, MemorySpace> const& x, double eps,
                                                  std::uint64_t seed) {
  auto y = deep_copy_t3(space, x);
  impl::HostNormalGenerator gen(seed);
  auto perturb = [&](auto view) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
    double sq = 0;
    for (std::size_t e = 0; e < h.span(); ++e) sq += double(h.data()[e]) * double(h.data()[e]);
    double const rms = std::sqrt(sq / double(h.span()));
    for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] += Scalar(eps * rms * gen.normal());
    Kokkos::deep_copy(space, view, h);
  };
  for (std::size_t i = 0; i < y.n_modes(); ++i) {
    perturb(y.tucker_core(i));
    perturb(y.tt_core(i));
  }
  space.fence();
  return y;
}

}  // namespace t3k
