#pragma once
/// \file planted_problem.hpp
/// Synthetic fitting problems with a known answer: probe jets of a planted T3 at random probe pairs, plus optional
/// noise. Used by the tests, the benchmarks and the `synthetic` problems of `t3k fit`.

#include "algorithms/probe_derivatives.hpp"
#include "core/impl/host_random.hpp"
#include "optimizers/fitting_problem.hpp"

#include <cmath>
#include <cstdint>

namespace t3k {

/// Random probe pairs (i.i.d. normal entries scaled by 1/sqrt(N_i)), targets = probe jets of `truth` of order K,
/// plus noise * rms(jets) * i.i.d. normal. Drawn on the host in a fixed order: the same seed gives the same problem
/// on every backend. **Blocking:** yes.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FittingProblem<Scalar, MemorySpace> make_planted_problem(ExecutionSpace const& space,
                                                         TuckerTensorTrain<Scalar, MemorySpace> const& truth,
                                                         std::size_t n_probes, std::size_t order, double noise,
                                                         std::uint64_t seed) {
  if (n_probes == 0) throw InvalidArgument("t3k::make_planted_problem: n_probes must be >= 1");
  if (!(noise >= 0)) throw InvalidArgument("t3k::make_planted_problem: noise must be >= 0");
  FittingProblem<Scalar, MemorySpace> p;
  p.order = order;
  impl::HostNormalGenerator gen(seed);
  auto const shapes = truth.mode_shapes();
  for (int which = 0; which < 2; ++which) {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      typename FittingProblem<Scalar, MemorySpace>::probe_type v(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::planted::probes"), n_probes, shapes[i]);
      auto h = Kokkos::create_mirror_view(v);
      double const scale = 1.0 / std::sqrt(double(shapes[i]));
      for (std::size_t s = 0; s < n_probes; ++s)
        for (std::size_t j = 0; j < shapes[i]; ++j) h(s, j) = Scalar(scale * gen.normal());
      Kokkos::deep_copy(space, v, h);
      (which == 0 ? p.ww : p.pp).push_back(v);
    }
  }
  p.targets = probe_derivatives(space, truth, p.ww, p.pp, order);
  if (noise > 0) {
    double const rms = std::sqrt(2 * zero_model_loss(space, p) /
                                 double(n_probes * (order + 1) * impl::max_element_or(shapes, 1)));
    for (auto& y : p.targets) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
      for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] += Scalar(noise * rms * gen.normal());
      Kokkos::deep_copy(space, y, h);
    }
  }
  space.fence();
  return p;
}

/// x with every core perturbed by relative noise eps (entry-wise eps * rms(core) * normal): a nearby start.
/// **Blocking:** yes.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> perturb_t3(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                  double eps, std::uint64_t seed) {
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
