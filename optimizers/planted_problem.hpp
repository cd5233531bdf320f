#pragma once
/// \file planted_problem.hpp
/// Synthetic fitting problems with a known answer: probe jets of a planted T3 at random probe pairs, plus optional
/// noise. Used by the tests, the benchmarks and the `synthetic` problems of `t3k fit`.

#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/core/impl/host_random.hpp"
#include "t3k/optimizers/fitting_problem.hpp"

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

namespace t3k {

namespace impl {

/// `count` distinct multi-indices of a tensor of the given shapes, uniformly at random by `seed` (the same list on
/// every rank), in the order drawn. **Throws:** InvalidArgument when the tensor has fewer than `count` entries.
inline std::vector<std::vector<std::size_t>> distinct_multi_indices(std::vector<std::size_t> const& shapes,
                                                                    std::size_t count, std::uint64_t seed) {
  // Linear indices when the tensor's size fits 62 bits; otherwise the shapes are so large that collisions are
  // negligible, and a repeated tuple is simply drawn again.
  long double size = 1;
  for (auto n : shapes) size *= static_cast<long double>(n);
  if (size < static_cast<long double>(count)) {
    throw InvalidArgument(concat("t3k::make_planted_problem: ", count, " distinct entries asked of a tensor with ",
                                 static_cast<double>(size), " entries"));
  }
  HostNormalGenerator gen(seed ^ 0x656e7472696573ULL);  // "entries": a stream apart from the vectors'
  std::set<std::vector<std::size_t>> seen;
  std::vector<std::vector<std::size_t>> out;
  out.reserve(count);
  std::vector<std::size_t> all;
  if (size <= static_cast<long double>(2 * count)) {  // dense draw: a partial shuffle of every linear index
    all.resize(std::size_t(size));
    for (std::size_t e = 0; e < all.size(); ++e) all[e] = e;
    for (std::size_t q = 0; q < count; ++q) std::swap(all[q], all[q + std::size_t(gen.next() % (all.size() - q))]);
  }
  while (out.size() < count) {
    std::vector<std::size_t> idx(shapes.size());
    if (!all.empty()) {
      std::size_t e = all[out.size()];
      for (std::size_t i = shapes.size(); i-- > 0;) {
        idx[i] = e % shapes[i];
        e /= shapes[i];
      }
    } else {
      for (std::size_t i = 0; i < shapes.size(); ++i) idx[i] = std::size_t(gen.next() % shapes[i]);
      if (!seen.insert(idx).second) continue;
    }
    out.push_back(std::move(idx));
  }
  return out;
}

}  // namespace impl

/// Samples of `kind` drawn by `seed` and targets = the measurement jets of `truth` of order K at them, plus
/// noise * rms(targets) * i.i.d. normal: probes and applies at random vectors (i.i.d. normal entries scaled by
/// 1/sqrt(N_i)), with random directions; entries at n_samples distinct multi-indices drawn uniformly (no repeats),
/// with random directions for K >= 1. Drawn on the host in a fixed order: the same seed gives the same problem on
/// every backend.
///
/// Sharded: with a communicator of several ranks every rank generates only its own rows
/// (comm.shard_range(n_samples)) of the very same global problem, so memory stays local; the rows of the other ranks
/// are skipped in the random stream in O(1) (HostNormalGenerator::discard_normals), not drawn (entries: every rank
/// draws the global index list, O(W) host work, and keeps its rows). Samples are the same bits as in the unsharded
/// problem; with noise the rms is a sum over ranks, equal to rounding.
/// **Blocking:** yes (collective when noise > 0 and comm has several ranks).
/// **Throws:** InvalidArgument for n_samples = 0, negative or non-finite noise, or more entries than the tensor has.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FittingProblem<Scalar, MemorySpace> make_planted_problem(ExecutionSpace const& space, Communicator const& comm,
                                                         TuckerTensorTrain<Scalar, MemorySpace> const& truth,
                                                         MeasurementKind kind, std::size_t n_samples,
                                                         std::size_t order, double noise, std::uint64_t seed) {
  if (n_samples == 0) throw InvalidArgument("t3k::make_planted_problem: n_probes must be >= 1");
  if (!(noise >= 0) || !std::isfinite(noise)) {
    throw InvalidArgument("t3k::make_planted_problem: noise must be finite and >= 0");
  }
  FittingProblem<Scalar, MemorySpace> p;
  p.kind = kind;
  p.order = order;
  ShardRange const rows = comm.shard_range(n_samples);
  if (comm.size() > 1) {
    p.comm = comm;
    p.global_offset = rows.begin;
    p.global_probes = n_samples;
  }
  std::size_t const w = rows.size();
  impl::HostNormalGenerator gen(seed);
  auto const shapes = truth.mode_shapes();
  for (int which = 0; which < 2; ++which) {
    bool const drawn = which == 0 ? kind != MeasurementKind::entries : (kind == MeasurementKind::probes || order > 0);
    for (std::size_t i = 0; drawn && i < shapes.size(); ++i) {
      typename FittingProblem<Scalar, MemorySpace>::probe_type v(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::planted::probes"), w, shapes[i]);
      auto h = Kokkos::create_mirror_view(v);
      double const scale = 1.0 / std::sqrt(double(shapes[i]));
      gen.discard_normals(std::uint64_t(rows.begin * shapes[i]));
      for (std::size_t s = 0; s < w; ++s)
        for (std::size_t j = 0; j < shapes[i]; ++j) h(s, j) = Scalar(scale * gen.normal());
      gen.discard_normals(std::uint64_t((n_samples - rows.end) * shapes[i]));
      Kokkos::deep_copy(space, v, h);
      (which == 0 ? p.ww : p.pp).push_back(v);
    }
  }
  if (kind == MeasurementKind::entries) {
    auto const drawn = impl::distinct_multi_indices(shapes, n_samples, seed);
    p.indices = typename FittingProblem<Scalar, MemorySpace>::index_type(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::planted::indices"), w, shapes.size());
    auto h = Kokkos::create_mirror_view(p.indices);
    for (std::size_t s = 0; s < w; ++s)
      for (std::size_t i = 0; i < shapes.size(); ++i) h(s, i) = int(drawn[rows.begin + s][i]);
    Kokkos::deep_copy(space, p.indices, h);
  }
  if (kind == MeasurementKind::probes) {
    p.targets = probe_derivatives(space, truth, p.ww, p.pp, order);
  } else {
    p.targets.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::planted::targets"), w,
                           order + 1, 1);
    impl::measure_into(space, p, truth, p.targets);
  }
  if (noise > 0) {
    std::size_t const width = impl::max_element_or(impl::measurement_widths(kind, shapes), 1);
    double const rms = std::sqrt(2 * zero_model_loss(space, p) / double(n_samples * (order + 1) * width));
    for (auto& y : p.targets) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
      std::size_t const per_row = y.extent(1) * y.extent(2);
      gen.discard_normals(std::uint64_t(rows.begin * per_row));
      for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] += Scalar(noise * rms * gen.normal());
      gen.discard_normals(std::uint64_t((n_samples - rows.end) * per_row));
      Kokkos::deep_copy(space, y, h);
    }
  }
  space.fence();
  return p;
}

/// The planted problem of probes (make_planted_problem with MeasurementKind::probes). **Blocking:** yes.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FittingProblem<Scalar, MemorySpace> make_planted_problem(ExecutionSpace const& space, Communicator const& comm,
                                                         TuckerTensorTrain<Scalar, MemorySpace> const& truth,
                                                         std::size_t n_probes, std::size_t order, double noise,
                                                         std::uint64_t seed) {
  return make_planted_problem(space, comm, truth, MeasurementKind::probes, n_probes, order, noise, seed);
}

/// The planted problem of `kind` of this process alone (all n_samples rows). **Blocking:** yes.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FittingProblem<Scalar, MemorySpace> make_planted_problem(ExecutionSpace const& space,
                                                         TuckerTensorTrain<Scalar, MemorySpace> const& truth,
                                                         MeasurementKind kind, std::size_t n_samples,
                                                         std::size_t order, double noise, std::uint64_t seed) {
  return make_planted_problem(space, Communicator(), truth, kind, n_samples, order, noise, seed);
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
