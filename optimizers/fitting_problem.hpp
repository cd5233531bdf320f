#pragma once
/// \file fitting_problem.hpp
/// The fitting problem (docs/math.md): W samples of one measurement kind (entries, applies or probes), order K,
/// target jets y, optional per-sample weights c and per-order weights omega. Loss
/// f(X) = 0.5 sum_s c_s sum_k omega_k^2 ||z_s^(k)(X) - y_s^(k)||^2 (z: the sample's measurement jets, the d probe
/// jets or one scalar jet), residual jets r = c omega^2 (z - y), Riemannian gradient gauge_project(J^T r),
/// Gauss-Newton products gauge_project(J^T (c omega^2 J v)). The kind is dispatched once here: the optimizers see
/// only these functions.
///
/// Sharding (docs/math.md): a problem may hold only this rank's contiguous rows of a probe set sharded
/// across the ranks of `comm`. Losses and the J^T-based products then sum over ranks (J^T: this rank's chunked sum,
/// then one reduction per call, before the gauge projection); J and every tangent-space operation stay local
/// (the frame and the tangents are replicated), so the optimizers produce the same iterates on every rank.

#include "t3k/algorithms/apply_derivatives.hpp"
#include "t3k/algorithms/apply_derivatives_transpose.hpp"
#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/gauge_projection.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/tangent_apply_derivatives.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/algorithms/tie_variation.hpp"
#include "t3k/core/communicator.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/host_random.hpp"
#include "t3k/core/impl/ordered_sum.hpp"
#include "t3k/core/measurement_kind.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace t3k {

/// Data of a fit, in `MemorySpace`: W samples of one kind (docs/math.md, measurements). All Views are LayoutRight.
/// - probes: ww[i], pp[i] (W, N_i); targets[i] (W, K+1, N_i), one per mode.
/// - applies: ww[i] (W, N_i), pp[i] (W, N_i) for K >= 1 (may be empty for K = 0); targets[0] (W, K+1, 1).
/// - entries: indices (W, d), 0-based (a multi-index may repeat); pp[i] (W, N_i) for K >= 1; targets[0] (W, K+1, 1).
/// weights (W) or empty for all ones; order_weights (K+1) or empty for all ones. W here is this rank's row count; a
/// sharded problem (comm.size() > 1) holds rows [global_offset, global_offset + W) of a sample set of global_probes
/// rows (make one with make_planted_problem(space, comm, ...) or by reading this rank's rows,
/// Communicator::shard_range).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
struct FittingProblem {
  using probe_type = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;  ///< ww[i], pp[i]: (W, N_i)
  using jet_type = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>;   ///< targets[i]: (W, K+1, N_i or 1)
  using index_type = EntryIndices<MemorySpace>;                                 ///< entries' indices: (W, d)
  MeasurementKind kind = MeasurementKind::probes;                               ///< what each sample measures
  std::vector<probe_type> ww;                                                   ///< vectors w_i (probes, applies)
  std::vector<probe_type> pp;                                                   ///< directions p_i, one per mode
  index_type indices;                                                           ///< multi-indices (entries)
  std::vector<jet_type> targets;                                                ///< target jets y
  Kokkos::View<Scalar*, MemorySpace> weights;                                   ///< c_s per sample; empty: all ones
  /// omega_k per jet order k = 0..K; empty: all ones. The residual of order k counts omega_k^2 times in the loss.
  Kokkos::View<Scalar*, MemorySpace> order_weights;
  std::size_t order = 0;          ///< the jet order K
  Communicator comm;              ///< ranks sharing the sample set (default: this process alone)
  std::size_t global_offset = 0;  ///< index of this rank's first row in the whole sample set
  std::size_t global_probes = 0;  ///< W of all ranks together; 0 means n_probes() (an unsharded problem)
  /// Held-out samples (optional): their relative residual is recorded whenever the loss is evaluated, and
  /// OptimizerOptions::validation_patience stops on it. Sharded like this problem (same communicator).
  std::shared_ptr<FittingProblem const> validation;

  /// Rows (samples) held by this rank.
  std::size_t n_probes() const {
    if (!targets.empty()) return targets[0].extent(0);
    return kind == MeasurementKind::entries ? indices.extent(0) : ww.empty() ? 0 : ww[0].extent(0);
  }
  /// Rows of all ranks together.
  std::size_t n_global_probes() const { return global_probes != 0 ? global_probes : n_probes(); }
  /// d
  std::size_t n_modes() const { return kind == MeasurementKind::entries ? indices.extent(1) : ww.size(); }
};

namespace impl {

/// The width of each measurement jet of a kind: the mode shapes for probes, one scalar for entries and applies.
inline std::vector<std::size_t> measurement_widths(MeasurementKind kind, std::vector<std::size_t> const& mode_shapes) {
  return kind == MeasurementKind::probes ? mode_shapes : std::vector<std::size_t>{1};
}

/// This rank's checks of check_problem (no collective step). Returns W.
template <class Scalar, class MemorySpace>
std::size_t check_problem_rows(std::string const& where, FittingProblem<Scalar, MemorySpace> const& p,
                               std::vector<std::size_t> const& mode_shapes) {
  std::size_t w = 0;
  if (p.kind == MeasurementKind::probes) {
    w = check_probe_stack(where, "ww", p.ww, mode_shapes);
    std::size_t const wp = check_probe_stack(where, "pp", p.pp, mode_shapes);
    if (wp != w) throw DimensionMismatch(concat(where, ": ww has ", w, " probes but pp has ", wp));
  } else {
    ScalarSamples<typename FittingProblem<Scalar, MemorySpace>::probe_type, EntryIndices<MemorySpace>> const samples{
        p.kind, p.ww, p.pp, p.indices};
    w = check_scalar_samples(typename MemorySpace::execution_space(), where, samples, mode_shapes, p.order > 0);
  }
  check_jet_stack(where, "targets", p.targets, w, p.order, measurement_widths(p.kind, mode_shapes));
  if (p.weights.data() != nullptr && p.weights.extent(0) != w) {
    throw DimensionMismatch(concat(where, ": weights has ", p.weights.extent(0), " entries, expected W = ", w));
  }
  if (p.order_weights.data() != nullptr && p.order_weights.extent(0) != p.order + 1) {
    throw DimensionMismatch(
        concat(where, ": order_weights has ", p.order_weights.extent(0), " entries, expected K + 1 = ", p.order + 1));
  }
  if (p.comm.size() == 1 && (p.global_offset != 0 || p.n_global_probes() != w)) {
    throw InvalidArgument(concat(where, ": a problem of one rank holds all its samples, but global_offset = ",
                                 p.global_offset, " and global_probes = ", p.global_probes, " for W = ", w));
  }
  if (p.global_offset + w > p.n_global_probes()) {
    throw InvalidArgument(concat(where, ": rows [", p.global_offset, ", ", p.global_offset + w,
                                 ") of this shard exceed global_probes = ", p.n_global_probes()));
  }
  return w;
}

/// Validates a problem against a model's mode shapes. Collective for a sharded problem: every rank checks its own
/// rows and the shards' consistency, and a failure on any rank throws on every rank with that rank's message.
/// **Throws:** DimensionMismatch naming the array; InvalidArgument for an empty or inconsistent sample set or an
/// entry index out of range.
template <class Scalar, class MemorySpace>
void check_problem(std::string const& where, FittingProblem<Scalar, MemorySpace> const& p,
                   std::vector<std::size_t> const& mode_shapes) {
  std::size_t w = 0;
  collective_check(p.comm, [&] { w = check_problem_rows(where, p, mode_shapes); });
  if (p.comm.size() > 1) {
    std::size_t const total = p.comm.allreduce_sum(w);
    std::size_t const lo = p.comm.allreduce_min(p.n_global_probes()), hi = p.comm.allreduce_max(p.n_global_probes());
    if (lo != hi || total != hi) {
      throw InvalidArgument(
          concat(where, ": the ", p.comm.size(), " shards hold ", total, " samples in all but global_probes is ",
                 lo == hi ? concat(hi) : concat(lo, "..", hi), " (set global_probes and global_offset on every rank)"));
    }
    w = total;
  }
  if (w == 0) throw InvalidArgument(where + ": the problem has no samples");
}

/// sum_s c_s sum_k omega_k^2 sum_j a[s,k,j] b[s,k,j] over every jet array (on host spaces the same bits for any thread
/// count, ordered_sum); empty weights or order weights count as ones.
template <class ExecutionSpace, class Scalar, class MemorySpace>
double weighted_jet_dot(ExecutionSpace const& space,
                        std::vector<Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>> const& a,
                        std::vector<Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>> const& b,
                        Kokkos::View<Scalar*, MemorySpace> weights,
                        Kokkos::View<Scalar*, MemorySpace> order_weights = {}) {
  double total = 0;
  bool const weighted = weights.data() != nullptr;
  bool const order_weighted = order_weights.data() != nullptr;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = a[i];
    auto y = b[i];
    int const w = int(x.extent(0)), k = int(x.extent(1)), n = int(x.extent(2));
    total += ordered_sum<double>(
        space, "t3k::fitting::weighted_jet_dot", w, std::size_t(k) * std::size_t(n), KOKKOS_LAMBDA(int s, double& acc) {
          double row = 0;
          if (order_weighted) {
            for (int q = 0; q < k; ++q) {
              double order_row = 0;
              for (int j = 0; j < n; ++j) order_row += double(x(s, q, j)) * double(y(s, q, j));
              row += double(order_weights(q)) * double(order_weights(q)) * order_row;
            }
          } else {
            for (int q = 0; q < k; ++q)
              for (int j = 0; j < n; ++j) row += double(x(s, q, j)) * double(y(s, q, j));
          }
          acc += weighted ? double(weights(s)) * row : row;
        });
  }
  return total;
}

/// Whether `views` holds one array per mode of extents (leading..., N_i): a reusable output buffer fits.
template <class View>
bool stack_fits(std::vector<View> const& views, std::vector<std::size_t> const& leading,
                std::vector<std::size_t> const& mode_shapes) {
  if (views.size() != mode_shapes.size()) return false;
  for (std::size_t i = 0; i < views.size(); ++i) {
    auto expected = leading;
    expected.push_back(mode_shapes[i]);
    if (view_shape(views[i]) != expected) return false;
  }
  return true;
}

}  // namespace impl

/// Loss, residual and probe jets at one point.
template <class Scalar, class MemorySpace>
struct LossEvaluation {
  double loss = 0;                                                                  ///< 0.5 sum c ||z - y||^2
  std::vector<Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>> residual;  ///< r = c (z - y)
};

/// 0.5 sum_s c_s sum_k omega_k^2 ||y_s^(k)||^2: the loss of X = 0, the normalization of the relative residual.
/// Summed over ranks (collective) for a sharded problem. **Blocking:** yes.
template <class ExecutionSpace, class Scalar, class MemorySpace>
double zero_model_loss(ExecutionSpace const& space, FittingProblem<Scalar, MemorySpace> const& problem) {
  return 0.5 * problem.comm.allreduce_sum(impl::weighted_jet_dot(space, problem.targets, problem.targets,
                                                                 problem.weights, problem.order_weights));
}

namespace impl {

/// A (W, K+1, 1) jet array of a scalar kind as the (W, K+1) View its kernels take.
template <class View>
auto as_scalar_jets(View const& v) {
  return Kokkos::View<typename View::value_type**, Kokkos::LayoutRight, typename View::memory_space,
                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.extent(0), v.extent(1));
}
/// A (n_t, W, K+1, 1) stack of a scalar kind as the (n_t, W, K+1) View its kernels take.
template <class View>
auto as_scalar_jet_stack(View const& v) {
  return Kokkos::View<typename View::value_type***, Kokkos::LayoutRight, typename View::memory_space,
                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.extent(0), v.extent(1), v.extent(2));
}

/// The measurement jets of x at the problem's samples, into z (one array per measurement_widths entry, fitting the
/// problem's shapes).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void measure_into(ExecutionSpace const& space, FittingProblem<Scalar, MemorySpace> const& problem,
                  TuckerTensorTrain<Scalar, MemorySpace> const& x, ProbeJets<Scalar, MemorySpace> const& z) {
  switch (problem.kind) {
    case MeasurementKind::probes:
      probe_derivatives_into(space, x, problem.ww, problem.pp, problem.order, z);
      return;
    case MeasurementKind::applies:
      apply_derivatives_into(space, x, problem.ww, problem.pp, problem.order, as_scalar_jets(z[0]));
      return;
    case MeasurementKind::entries:
      entry_derivatives_into(space, x, problem.indices, problem.pp, problem.order, as_scalar_jets(z[0]));
      return;
  }
}

/// J v at the problem's samples for a stack of variations, into jv (one (n_t, W, K+1, width) array per
/// measurement_widths entry).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void tangent_measure_into(ExecutionSpace const& space, FittingProblem<Scalar, MemorySpace> const& problem,
                          OrthogonalFrame<Scalar, MemorySpace> const& frame, T3Variation<Scalar, MemorySpace> const& v,
                          TangentProbeJets<Scalar, MemorySpace> const& jv) {
  switch (problem.kind) {
    case MeasurementKind::probes:
      tangent_probe_derivatives_into(space, frame, v, problem.ww, problem.pp, problem.order, jv);
      return;
    case MeasurementKind::applies:
      tangent_apply_derivatives_into(space, frame, v, problem.ww, problem.pp, problem.order,
                                     TangentScalarJets<Scalar, MemorySpace>(as_scalar_jet_stack(jv[0])));
      return;
    case MeasurementKind::entries:
      tangent_entry_derivatives_into(space, frame, v, problem.indices, problem.pp, problem.order,
                                     TangentScalarJets<Scalar, MemorySpace>(as_scalar_jet_stack(jv[0])));
      return;
  }
}

/// J^T summed over this rank's samples of residual jets r (ResidualView: (W, K+1, width) or (n_t, W, K+1, width)
/// arrays, one per measurement_widths entry).
template <class ExecutionSpace, class Scalar, class MemorySpace, class ResidualView>
T3Variation<Scalar, MemorySpace> transpose_of(ExecutionSpace const& space,
                                              FittingProblem<Scalar, MemorySpace> const& problem,
                                              OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                              std::vector<ResidualView> const& r, ChunkSize chunk_size) {
  TransposeOptions const options{true, chunk_size};
  auto scalar_view = [](ResidualView const& v) {
    if constexpr (int(ResidualView::rank) == 4) {
      return as_scalar_jet_stack(v);
    } else {
      return as_scalar_jets(v);
    }
  };
  switch (problem.kind) {
    case MeasurementKind::applies:
      return apply_derivatives_transpose(space, frame, problem.ww, problem.pp, scalar_view(r[0]), options);
    case MeasurementKind::entries:
      return entry_derivatives_transpose(space, frame, problem.indices, problem.pp, scalar_view(r[0]), options);
    default:
      return probe_derivatives_transpose(space, frame, problem.ww, problem.pp, r, options);
  }
}

}  // namespace impl

/// Loss and residual jets of `x`: the loss is summed over ranks (collective), the residual holds this rank's rows.
/// `recycled` (optional) is a residual this call may overwrite and return (an earlier evaluation's, no longer
/// needed): when its shapes fit, the probe jets are written into it instead of a fresh allocation, which spares an
/// optimizer iteration first touching W x (K+1) x sum N_i new entries (perf/README.md).
/// **Blocking:** yes (returns the loss). **Throws:** DimensionMismatch.
template <class ExecutionSpace, class Scalar, class MemorySpace>
LossEvaluation<Scalar, MemorySpace> evaluate_loss(ExecutionSpace const& space,
                                                  FittingProblem<Scalar, MemorySpace> const& problem,
                                                  TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                  ProbeJets<Scalar, MemorySpace> recycled = {}) {
  LossEvaluation<Scalar, MemorySpace> out;
  ProbeJets<Scalar, MemorySpace> z;
  auto const widths = impl::measurement_widths(problem.kind, x.mode_shapes());
  if (impl::stack_fits(recycled, {problem.n_probes(), problem.order + 1}, widths)) {
    z = std::move(recycled);
  } else {
    for (std::size_t i = 0; i < widths.size(); ++i) {
      z.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::fitting::jets_" + std::to_string(i)),
                     problem.n_probes(), problem.order + 1, widths[i]);
    }
  }
  impl::measure_into(space, problem, x, z);
  // z becomes the residual c omega^2 (z - y) in place, and the loss 0.5 sum (z - y) . c omega^2 (z - y) is summed in
  // the same pass (each sample's row in a fixed order, then the rows as weighted_jet_dot sums them).
  bool const weighted = problem.weights.data() != nullptr;
  auto weights = problem.weights;
  bool const order_weighted = problem.order_weights.data() != nullptr;
  auto order_weights = problem.order_weights;
  double total = 0;
  for (std::size_t i = 0; i < z.size(); ++i) {
    auto zi = z[i];
    auto yi = problem.targets[i];
    int const k = int(zi.extent(1)), n = int(zi.extent(2));
    total += impl::ordered_sum<double>(
        space, "t3k::fitting::residual", int(zi.extent(0)), std::size_t(k) * std::size_t(n),
        KOKKOS_LAMBDA(int s, double& acc) {
          double row = 0;
          for (int q = 0; q < k; ++q) {
            Scalar const omega2 = order_weighted ? order_weights(q) * order_weights(q) : Scalar(1);
            for (int j = 0; j < n; ++j) {
              Scalar const e = zi(s, q, j) - yi(s, q, j);
              Scalar r = weighted ? weights(s) * e : e;
              if (order_weighted) r *= omega2;
              zi(s, q, j) = r;
              row += double(e) * double(r);
            }
          }
          acc += row;
        });
  }
  out.loss = 0.5 * problem.comm.allreduce_sum(total);
  out.residual = std::move(z);
  return out;
}

/// How well a model fits a problem (for instance a test set it was not fitted to).
struct Score {
  double loss = 0;               ///< 0.5 sum_s c_s sum_k omega_k^2 ||z_s^(k) - y_s^(k)||^2
  double zero_loss = 0;          ///< the loss of X = 0
  double relative_residual = 0;  ///< sqrt(loss / zero_loss) (sqrt(loss) when zero_loss is 0), as the optimizers report
};

/// The loss, the loss of X = 0 and the relative residual of `x` on `problem`, of any kind, without running an
/// optimizer. Summed over ranks for a sharded problem (collective). **Blocking:** yes. **Throws:** as check_problem.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Score score(ExecutionSpace const& space, FittingProblem<Scalar, MemorySpace> const& problem,
            TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  impl::check_problem("t3k::score", problem, x.mode_shapes());
  Score s;
  s.loss = evaluate_loss(space, problem, x).loss;
  s.zero_loss = zero_model_loss(space, problem);
  s.relative_residual =
      s.zero_loss > 0 ? std::sqrt(std::max(s.loss, 0.0) / s.zero_loss) : std::sqrt(std::max(s.loss, 0.0));
  return s;
}

/// The full loss at x for the minibatch optimizers (mc_sgd, adam), which evaluate it every few steps. With `keep`,
/// the probe jets go into `stack` (the previous evaluation's, when it fits) and stay there for the next call: no
/// fresh W x (K+1) x sum N_i allocation to first-touch per evaluation, at the price of holding it through the
/// minibatch steps in between (BM_Optimizer_McSgdKeptLossStack). Without, `stack` is left empty. The loss has the same
/// bits either way. **Blocking:** yes (collective for a sharded problem). **Throws:** as evaluate_loss.
template <class ExecutionSpace, class Scalar, class MemorySpace>
double full_loss_at(ExecutionSpace const& space, FittingProblem<Scalar, MemorySpace> const& problem,
                    TuckerTensorTrain<Scalar, MemorySpace> const& x, bool keep, ProbeJets<Scalar, MemorySpace>& stack) {
  if (!keep) return evaluate_loss(space, problem, x).loss;
  auto eval = evaluate_loss(space, problem, x, std::move(stack));
  stack = std::move(eval.residual);
  return eval.loss;
}

/// Riemannian gradient gauge_project(J^T r) at the frame (one gauged variation). For a sharded problem J^T sums
/// this rank's rows and one reduction over ranks finishes the sum (collective; the result is the same bits on every
/// rank). **Blocking:** no for one rank, yes for several.
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> riemannian_gradient(ExecutionSpace const& space,
                                                     FittingProblem<Scalar, MemorySpace> const& problem,
                                                     OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                     LossEvaluation<Scalar, MemorySpace> const& at,
                                                     ChunkSize chunk_size) {
  auto g = impl::transpose_of(space, problem, frame, at.residual, chunk_size);
  allreduce_sum(space, problem.comm, g);
  gauge_project_in_place(space, frame, g);
  return g;
}

/// Riemannian gradient of a shared model (docs/math.md, "Shared Tucker factors"): the gradient on the tangent space
/// of the models whose factors are tied as `sharing` asks, tie_variation(gauge_project(J^T r)), the orthogonal
/// projection of the untied Riemannian gradient. Its inner product with a tied tangent is the derivative of the loss
/// along any tied curve with that tangent.
/// \param space execution space the kernels run on   \param problem the fitting problem
/// \param frame the frame of the tied point, with its centre factors (t3k::orthogonal_frame)
/// \param sharing the groups of modes that share a factor   \param at the loss evaluation at the point
/// \param chunk_size chunking of J^T
/// \return one tied, gauged variation
/// **Blocking:** yes (the projection runs on the host). **Throws:** as tie_variation.
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> riemannian_gradient(ExecutionSpace const& space,
                                                     FittingProblem<Scalar, MemorySpace> const& problem,
                                                     OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                     ModeSharing const& sharing,
                                                     LossEvaluation<Scalar, MemorySpace> const& at,
                                                     ChunkSize chunk_size) {
  auto g = riemannian_gradient(space, problem, frame, at, chunk_size);
  tie_variation_in_place(space, frame, sharing, g);
  return g;
}

/// Gauss-Newton products v -> gauge_project(J^T (c J v)) for a stack of gauged variations. J is local to this rank's
/// rows; J^T is summed over ranks by one reduction per call (collective). `jv_buffer` (optional) holds the J v
/// arrays between calls: reused when its shapes fit, (re)allocated otherwise, so CG iterations do not each allocate
/// and first touch n_tangent x W x (K+1) x sum N_i entries. **Blocking:** no for one rank, yes for several.
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> gauss_newton_product(ExecutionSpace const& space,
                                                      FittingProblem<Scalar, MemorySpace> const& problem,
                                                      OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                      T3Variation<Scalar, MemorySpace> const& v, ChunkSize chunk_size,
                                                      TangentProbeJets<Scalar, MemorySpace>* jv_buffer = nullptr) {
  TangentProbeJets<Scalar, MemorySpace> jv;
  auto const widths = impl::measurement_widths(problem.kind, frame.mode_shapes());
  bool const fits = jv_buffer != nullptr &&
                    impl::stack_fits(*jv_buffer, {v.n_stack(), problem.n_probes(), problem.order + 1}, widths);
  if (fits) {
    jv = *jv_buffer;
  } else {
    for (std::size_t i = 0; i < widths.size(); ++i) {
      jv.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::fitting::jv_" + std::to_string(i)),
                      v.n_stack(), problem.n_probes(), problem.order + 1, widths[i]);
    }
    if (jv_buffer != nullptr) *jv_buffer = jv;
  }
  impl::tangent_measure_into(space, problem, frame, v, jv);
  if (problem.weights.data() != nullptr) {
    auto weights = problem.weights;
    for (auto& ji : jv) {
      auto j = ji;
      int const nt = int(j.extent(0)), w = int(j.extent(1)), rest = int(j.extent(2) * j.extent(3));
      Kokkos::parallel_for(
          "t3k::fitting::weight_jv", impl::Policy3<ExecutionSpace>(space, {0, 0, 0}, {nt, w, rest}),
          KOKKOS_LAMBDA(int t, int s, int e) { j.data()[(std::size_t(t) * w + s) * rest + e] *= weights(s); });
    }
  }
  if (problem.order_weights.data() != nullptr) {
    auto order_weights = problem.order_weights;
    for (auto& ji : jv) {
      auto j = ji;
      int const rows = int(j.extent(0) * j.extent(1)), k = int(j.extent(2)), n = int(j.extent(3));
      Kokkos::parallel_for(
          "t3k::fitting::order_weight_jv", impl::Policy3<ExecutionSpace>(space, {0, 0, 0}, {rows, k, n}),
          KOKKOS_LAMBDA(int row, int q, int e) {
            j.data()[(std::size_t(row) * k + q) * n + e] *= order_weights(q) * order_weights(q);
          });
    }
  }
  auto out = impl::transpose_of(space, problem, frame, jv, chunk_size);
  allreduce_sum(space, problem.comm, out);
  gauge_project_in_place(space, frame, out);
  return out;
}

namespace impl {
/// Rows index(q) of a (W, n) array, in that order, as a new (|index|, n) array.
template <class ExecutionSpace, class View, class IndexView>
View gather_rows(ExecutionSpace const& space, View const& src, IndexView const& index, char const* label) {
  int const b = int(index.extent(0)), n = int(src.extent(1));
  View dst(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), index.extent(0), src.extent(1));
  Kokkos::parallel_for(
      "t3k::subset::gather_rows", Policy2<ExecutionSpace>(space, {0, 0}, {b, n}),
      KOKKOS_LAMBDA(int q, int j) { dst(q, j) = src(index(q), j); });
  return dst;
}
}  // namespace impl

/// The sub-problem of the probes listed in `rows` (indices into this rank's rows; packed into new contiguous arrays,
/// in the order given). The result is a problem of this process alone (default communicator), even when `problem`
/// is sharded: see impl::minibatch_problem for a sharded minibatch. **Blocking:** no.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FittingProblem<Scalar, MemorySpace> subset_problem(ExecutionSpace const& space,
                                                   FittingProblem<Scalar, MemorySpace> const& problem,
                                                   std::vector<std::size_t> const& rows) {
  FittingProblem<Scalar, MemorySpace> sub;
  sub.kind = problem.kind;
  sub.order = problem.order;
  sub.order_weights = problem.order_weights;
  std::size_t const b = rows.size();
  Kokkos::View<std::size_t*, MemorySpace> index(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::subset::rows"), b);
  auto h = Kokkos::create_mirror_view(index);
  for (std::size_t q = 0; q < b; ++q) h(q) = rows[q];
  Kokkos::deep_copy(space, index, h);
  for (auto const& src : problem.ww) sub.ww.push_back(impl::gather_rows(space, src, index, "t3k::subset::probes"));
  for (auto const& src : problem.pp) sub.pp.push_back(impl::gather_rows(space, src, index, "t3k::subset::probes"));
  if (problem.kind == MeasurementKind::entries) {
    sub.indices = impl::gather_rows(space, problem.indices, index, "t3k::subset::indices");
  }
  for (auto const& ys : problem.targets) {
    typename FittingProblem<Scalar, MemorySpace>::jet_type yd(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::subset::targets"), b, ys.extent(1), ys.extent(2));
    Kokkos::parallel_for(
        "t3k::subset::gather_targets",
        impl::Policy3<ExecutionSpace>(space, {0, 0, 0}, {int(b), int(ys.extent(1)), int(ys.extent(2))}),
        KOKKOS_LAMBDA(int q, int k, int j) { yd(q, k, j) = ys(index(q), k, j); });
    sub.targets.push_back(yd);
  }
  if (problem.weights.data() != nullptr) {
    auto src = problem.weights;
    Kokkos::View<Scalar*, MemorySpace> dst(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::subset::weights"), b);
    Kokkos::parallel_for(
        "t3k::subset::gather_weights", Kokkos::RangePolicy<ExecutionSpace>(space, 0, b),
        KOKKOS_LAMBDA(std::size_t q) { dst(q) = src(index(q)); });
    sub.weights = dst;
  }
  return sub;
}

namespace impl {

/// The minibatch of the probes listed in `global_rows` (indices into the whole probe set, every rank passing the
/// same list): each rank keeps the listed rows of its own shard, and the result is sharded like `problem` with
/// global_probes = |global_rows|. For an unsharded problem it is subset_problem. **Blocking:** no.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FittingProblem<Scalar, MemorySpace> minibatch_problem(ExecutionSpace const& space,
                                                      FittingProblem<Scalar, MemorySpace> const& problem,
                                                      std::vector<std::size_t> const& global_rows) {
  if (problem.comm.size() == 1 && problem.global_offset == 0) return subset_problem(space, problem, global_rows);
  std::size_t const begin = problem.global_offset, end = begin + problem.n_probes();
  std::vector<std::size_t> local;
  std::size_t before = 0;
  for (std::size_t r : global_rows) {
    if (r < begin)
      ++before;
    else if (r < end)
      local.push_back(r - begin);
  }
  auto sub = subset_problem(space, problem, local);
  sub.comm = problem.comm;
  sub.global_offset = before;  // the batch keeps the global order of its rows when they are sorted
  sub.global_probes = global_rows.size();
  return sub;
}

}  // namespace impl

/// Splits off `count` held-out probes: drawn by `seed` among the global probe indices 0..W-1 (a seeded partial
/// Fisher-Yates shuffle on the host), so the same probes are held out on every rank layout. Returns the training
/// problem (the other probes, in their order) with the held-out ones as its `validation`, both sharded like
/// `problem`. **Blocking:** no. **Throws:** InvalidArgument unless 1 <= count < W.
template <class ExecutionSpace, class Scalar, class MemorySpace>
FittingProblem<Scalar, MemorySpace> hold_out(ExecutionSpace const& space,
                                             FittingProblem<Scalar, MemorySpace> const& problem, std::size_t count,
                                             std::uint64_t seed) {
  std::size_t const w = problem.n_global_probes();
  if (count == 0 || count >= w) {
    throw InvalidArgument(impl::concat("t3k::hold_out: holding out ", count, " of ", w,
                                       " probes leaves none to fit or none to validate (need 1 <= count < W)"));
  }
  std::vector<std::size_t> order(w);
  for (std::size_t k = 0; k < w; ++k) order[k] = k;
  impl::HostNormalGenerator gen(seed);
  for (std::size_t k = 0; k < count; ++k) {
    std::size_t const j = k + std::size_t(gen.next() % (w - k));
    std::swap(order[k], order[j]);
  }
  std::vector<bool> held(w, false);
  for (std::size_t k = 0; k < count; ++k) held[order[k]] = true;
  std::vector<std::size_t> train_rows, validation_rows;
  for (std::size_t k = 0; k < w; ++k) (held[k] ? validation_rows : train_rows).push_back(k);
  auto train = impl::minibatch_problem(space, problem, train_rows);
  auto validation = impl::minibatch_problem(space, problem, validation_rows);
  train.comm = problem.comm;
  validation.comm = problem.comm;
  if (problem.comm.size() == 1) {
    train.global_offset = validation.global_offset = 0;
    train.global_probes = validation.global_probes = 0;
  }
  train.validation = std::make_shared<FittingProblem<Scalar, MemorySpace> const>(std::move(validation));
  return train;
}

}  // namespace t3k
