#pragma once
/// \file rank_continuation.hpp
/// Rank continuation (docs/math.md): fit at the current ranks until the stage converges or stalls, grow the ranks
/// whose singular values are all in use, embed the iterate exactly at the larger ranks, and continue; at the end
/// drop ranks the model does not use. The optimizers run it when OptimizerOptions::continuation is enabled, each
/// stage being an ordinary fit of that optimizer at fixed ranks.

#include "t3k/algorithms/grouped_t3_svd.hpp"
#include "t3k/algorithms/manifold_dimension.hpp"
#include "t3k/algorithms/orthogonalize.hpp"
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/optimizers/edge_conditioning.hpp"
#include "t3k/optimizers/optimizer_common.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace t3k {

namespace impl {

/// Appends rows to `u` (rows 0..n_old-1 given, (n, N) in all) that are orthonormal to each other and to the span of
/// the given rows: unit vectors e_j orthogonalized (twice) against the basis so far, in order of j, taking the first
/// that keep a good part of their length.
template <class Scalar>
void complete_rows(HostMatrix<Scalar> const& u, std::size_t n_old) {
  std::size_t const n = u.extent(0), big_n = u.extent(1);
  std::vector<std::vector<double>> basis;
  auto orthogonalize = [&](std::vector<double>& v) {
    for (int pass = 0; pass < 2; ++pass) {
      for (auto const& q : basis) {
        double dot = 0;
        for (std::size_t j = 0; j < big_n; ++j) dot += q[j] * v[j];
        for (std::size_t j = 0; j < big_n; ++j) v[j] -= dot * q[j];
      }
    }
    double sq = 0;
    for (double e : v) sq += e * e;
    return std::sqrt(sq);
  };
  auto add = [&](std::vector<double> v, double threshold) {
    double const norm = orthogonalize(v);
    if (!(norm > threshold)) return false;
    for (double& e : v) e /= norm;
    basis.push_back(std::move(v));
    return true;
  };
  for (std::size_t a = 0; a < n_old; ++a) {
    std::vector<double> v(big_n);
    double sq = 0;
    for (std::size_t j = 0; j < big_n; ++j) sq += double(u(a, j)) * double(u(a, j));
    for (std::size_t j = 0; j < big_n; ++j) v[j] = double(u(a, j));
    add(v, 1e-12 * std::sqrt(sq));
  }
  std::size_t next = n_old;
  for (double threshold : {0.5, 1e-6}) {
    for (std::size_t j = 0; j < big_n && next < n; ++j) {
      std::vector<double> e(big_n, 0.0);
      e[j] = 1;
      if (add(e, threshold)) {
        for (std::size_t k = 0; k < big_n; ++k) u(next, k) = Scalar(basis.back()[k]);
        ++next;
      }
    }
  }
}

/// The groups a continuation grows together: the fit's sharing when it ties factors, else every mode on its own
/// (the grouped T3-SVD of that sharing is t3_svd, bit for bit, so an unshared continuation is as it was).
inline ModeSharing continuation_sharing(OptimizerOptions const& o, std::vector<std::size_t> const& mode_shapes) {
  return ties_factors(o.sharing) ? o.sharing : ModeSharing::unshared(mode_shapes);
}

/// Lowers ranks to feasible ones with the groups' bounds, never below x's own (n0, r0).
inline void clip_growth(std::vector<std::size_t> const& big_n, ModeSharing const& sharing,
                        std::vector<std::size_t> const& n0, std::vector<std::size_t> const& r0,
                        std::vector<std::size_t>& n, std::vector<std::size_t>& r) {
  lower_to_feasible(big_n, sharing.groups(), n, r);
  for (std::size_t i = 0; i < n.size(); ++i) n[i] = std::max(n[i], n0[i]);
  for (std::size_t e = 0; e < r.size(); ++e) r[e] = std::max(r[e], r0[e]);
}

/// How many singular values are in use: those above rtol times the largest.
template <class Scalar>
std::size_t ranks_in_use(std::vector<Scalar> const& sigma, double rtol) {
  std::size_t k = 0;
  while (k < sigma.size() && double(sigma[k]) > rtol * double(sigma[0])) ++k;
  return k;
}

/// The relative threshold below which a singular value counts as unused: rank_rtol, or default_rank_rtol where it
/// is automatic (0).
inline double in_use_rank_rtol(RankContinuation const& c) { return c.rank_rtol > 0 ? c.rank_rtol : default_rank_rtol; }

/// The final drop of unused ranks (docs/math.md, rank continuation, end): singular values below rank_rtol of the
/// largest (default_rank_rtol where it is automatic). Automatic and with a stage that met tol_relative_residual, a drop
/// that would lift the relative residual above ten times the tolerance removed part of the tensor the data holds,
/// which polishing at the smaller ranks cannot win back: the threshold is then min(default_rank_rtol, tolerance / 10),
/// which moves the model by about a tenth of the tolerance per dropped value. `rtol` returns the threshold used.
/// A shared model is reduced by the grouped T3-SVD, so that a group keeps one rank and one factor.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> drop_unused_ranks(ExecutionSpace const& space,
                                                         FittingProblem<Scalar, MemorySpace> const& problem,
                                                         TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                         ModeSharing const& sharing, RankContinuation const& c,
                                                         double tol_relative_residual, bool met_tolerance,
                                                         double& rtol) {
  auto const minimal = [&](double threshold) {
    T3SvdOptions options;
    options.rtol = threshold;
    return grouped_t3_svd(space, x, sharing, options).t3;  // a trivial sharing: reduce_to_minimal_ranks' bits
  };
  rtol = in_use_rank_rtol(c);
  auto next = minimal(rtol);
  if (c.rank_rtol > 0 || !met_tolerance || !(tol_relative_residual > 0) ||
      (next.tucker_ranks() == x.tucker_ranks() && next.tt_ranks() == x.tt_ranks())) {
    return next;
  }
  double const zero = zero_model_loss(space, problem);
  double const loss = evaluate_loss(space, problem, next).loss;
  double const limit = 10 * tol_relative_residual;
  if (loss <= limit * limit * zero) return next;
  rtol = std::min(default_rank_rtol, tol_relative_residual / 10);
  return minimal(rtol);
}

/// Ranks of the next stage (docs/math.md, rank continuation): a Tucker factor (every mode of its group) or TT bond
/// grows by `rank_step`, up to its maximum, when all its singular values in the grouped T3-SVD of x are in use
/// (above in_use_rank_rtol times the largest); then the ranks are clipped to feasible ones. Returns false when no
/// rank grows.
template <class ExecutionSpace, class Scalar, class MemorySpace>
bool grown_ranks(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                 ModeSharing const& sharing, RankContinuation const& c, std::vector<std::size_t>& n,
                 std::vector<std::size_t>& r) {
  auto const sv = grouped_t3_svd(space, x, sharing, T3SvdOptions{});
  auto const n0 = x.tucker_ranks();
  auto const r0 = x.tt_ranks();
  n = n0;
  r = r0;
  std::size_t const d = n.size();
  double const rtol = in_use_rank_rtol(c);
  for (std::size_t g = 0; g < sharing.n_groups(); ++g) {
    auto const& group = sharing.groups()[g];
    if (ranks_in_use(sv.group_singular_values[g], rtol) >= n0[group.front()]) {
      for (std::size_t i : group) n[i] = std::min(c.max_tucker_ranks[i], n0[i] + c.rank_step);
    }
  }
  for (std::size_t e = 1; e < d; ++e) {
    if (ranks_in_use(sv.tt_singular_values[e - 1], rtol) >= r0[e]) {
      r[e] = std::min(c.max_tt_ranks[e], r0[e] + c.rank_step);
    }
  }
  clip_growth(x.mode_shapes(), sharing, n0, r0, n, r);
  return n != n0 || r != r0;
}

/// The edges of x (docs/math.md, rank continuation): one per Tucker factor (a group of modes that share one is one
/// edge), then one per interior TT bond, with their maximum ranks and the condition numbers of their retained
/// values in x's grouped T3-SVD `sv`.
template <class Scalar, class MemorySpace>
std::vector<ContinuationEdge> continuation_edges(TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                 GroupedT3SvdResult<Scalar, MemorySpace> const& sv,
                                                 ModeSharing const& sharing, RankContinuation const& c) {
  auto const n = x.tucker_ranks();
  auto const r = x.tt_ranks();
  std::vector<ContinuationEdge> edges;
  for (std::size_t g = 0; g < sharing.n_groups(); ++g) {
    auto const& group = sharing.groups()[g];
    std::size_t const i = group.front();
    edges.push_back({ContinuationEdge::Kind::tucker, group, n[i], c.max_tucker_ranks[i],
                     retained_condition_number(sv.group_singular_values[g], n[i])});
  }
  for (std::size_t e = 1; e < n.size(); ++e) {
    edges.push_back({ContinuationEdge::Kind::tt_bond,
                     {e},
                     r[e],
                     c.max_tt_ranks[e],
                     retained_condition_number(sv.tt_singular_values[e - 1], r[e])});
  }
  return edges;
}

enum class GrowthOutcome { grew, nothing_to_grow, too_few_samples };

/// Ranks of the next stage by edge conditioning (docs/math.md, rank continuation): the candidates of
/// select_edges_by_conditioning grow by rank_step in order, best conditioned first, until max_edges_per_stage of
/// them have grown after clipping to feasible ranks (a Tucker rank can need its bonds to grow first); when the
/// selected edges cannot grow at feasible ranks, every eligible edge is tried. `note` says which edges grew and
/// why, or why none did; the next ranks must leave min_samples_per_dimension training measurements per manifold
/// dimension.
template <class ExecutionSpace, class Scalar, class MemorySpace>
GrowthOutcome grown_ranks_by_conditioning(ExecutionSpace const& space,
                                          FittingProblem<Scalar, MemorySpace> const& problem,
                                          TuckerTensorTrain<Scalar, MemorySpace> const& x, ModeSharing const& sharing,
                                          RankContinuation const& c, std::size_t iteration, std::vector<std::size_t>& n,
                                          std::vector<std::size_t>& r, std::string& note) {
  auto const sv = grouped_t3_svd(space, x, sharing, T3SvdOptions{});
  auto const edges = continuation_edges(x, sv, sharing, c);
  double const guard = condition_guard<Scalar>(c);
  auto const selection = select_edges_by_conditioning(edges, c.condition_ratio, guard);
  auto const n0 = x.tucker_ranks();
  auto const r0 = x.tt_ranks();
  auto const big_n = x.mode_shapes();
  std::vector<std::size_t> grown;  // edges whose rank rose, in the order they were added
  auto grow = [&](std::vector<std::size_t> const& order) {
    n = n0;
    r = r0;
    grown.clear();
    for (std::size_t k : order) {
      auto const& edge = edges[k];
      if (edge.kind == ContinuationEdge::Kind::tucker) {
        for (std::size_t i : edge.indices) n[i] = std::min(edge.max_rank, edge.rank + c.rank_step);
      } else {
        r[edge.indices[0]] = std::min(edge.max_rank, edge.rank + c.rank_step);
      }
      auto tn = n, tr = r;
      clip_growth(big_n, sharing, n0, r0, tn, tr);
      grown.clear();
      for (std::size_t j = 0; j < edges.size(); ++j) {
        auto const& other = edges[j];
        std::size_t const now =
            other.kind == ContinuationEdge::Kind::tucker ? tn[other.indices[0]] : tr[other.indices[0]];
        if (now > other.rank) grown.push_back(j);
      }
      if (c.max_edges_per_stage > 0 && grown.size() >= c.max_edges_per_stage) {
        n = tn;
        r = tr;
        return;
      }
    }
    clip_growth(big_n, sharing, n0, r0, n, r);
  };
  bool uniform = selection.uniform;
  grow(selection.candidates);
  if (grown.empty() && !uniform) {
    uniform = true;
    grow(selection.eligible);
  }
  auto const kappa = [](double v) { return concat(v); };
  if (grown.empty()) {
    bool const room = std::any_of(edges.begin(), edges.end(), [](auto const& e) { return e.rank < e.max_rank; });
    note = concat("rank continuation stopped growing at iteration ", iteration, ": ",
                  room ? concat("no edge below its maximum rank has a condition number at most the guard ", guard,
                                " (or it cannot grow at feasible ranks)")
                       : std::string("every edge is at its maximum rank"));
    return GrowthOutcome::nothing_to_grow;
  }
  std::size_t const measurements = problem.n_global_probes() * measurements_per_sample(problem, big_n);
  std::size_t const dimension = manifold_dimension(big_n, n, r, sharing);
  double const per_dimension = double(measurements) / double(dimension);
  if (per_dimension < c.min_samples_per_dimension) {
    note = concat("rank continuation stopped growing at iteration ", iteration, ": the next Tucker ranks ",
                  shape_string(n), ", TT ranks ", shape_string(r), " (manifold dimension ", dimension, ") would leave ",
                  per_dimension, " training measurements per dimension, below min_samples_per_dimension ",
                  c.min_samples_per_dimension);
    n = n0;
    r = r0;
    return GrowthOutcome::too_few_samples;
  }
  note = concat("edge conditioning at iteration ", iteration, ": grew");
  for (std::size_t k = 0; k < grown.size(); ++k) {
    note += concat(k ? ", " : " ", edges[grown[k]].name(), " (kappa ", kappa(edges[grown[k]].condition_number), ")");
  }
  note += concat(
      "; worst kappa ", kappa(selection.worst_condition), " (",
      selection.worst_condition > 0 ? edges[selection.worst_edge].name() : std::string("none"), "); ",
      uniform ? concat("no edge ", c.condition_ratio, " times better conditioned: every eligible edge a candidate")
              : concat("candidates: the edges at least ", c.condition_ratio, " times better conditioned"),
      c.max_edges_per_stage > 0 ? concat(", at most ", c.max_edges_per_stage, " a stage, best first") : "");
  return GrowthOutcome::grew;
}

template <class Scalar, class MemorySpace>
void check_continuation(std::string const& where, RankContinuation const& c,
                        TuckerTensorTrain<Scalar, MemorySpace> const& x0, ModeSharing const& sharing) {
  auto const n = x0.tucker_ranks();
  auto const r = x0.tt_ranks();
  auto const big_n = x0.mode_shapes();
  std::size_t const d = n.size();
  if (c.max_tucker_ranks.size() != d || c.max_tt_ranks.size() != d + 1) {
    throw DimensionMismatch(concat(where, ": continuation.max_tucker_ranks has ", c.max_tucker_ranks.size(),
                                   " entries and max_tt_ranks ", c.max_tt_ranks.size(), ", expected d = ", d,
                                   " and d + 1 = ", d + 1));
  }
  for (std::size_t i = 0; i < d; ++i) {
    if (c.max_tucker_ranks[i] < n[i] || c.max_tucker_ranks[i] > big_n[i]) {
      throw InvalidArgument(concat(where, ": continuation.max_tucker_ranks[", i, "] = ", c.max_tucker_ranks[i],
                                   " must be between x0's Tucker rank ", n[i], " and N_", i, " = ", big_n[i]));
    }
  }
  for (std::size_t e = 0; e <= d; ++e) {
    bool const boundary = e == 0 || e == d;
    if (c.max_tt_ranks[e] < r[e] || (boundary && c.max_tt_ranks[e] != r[e])) {
      throw InvalidArgument(concat(where, ": continuation.max_tt_ranks[", e, "] = ", c.max_tt_ranks[e], " must be ",
                                   boundary ? "equal to" : "at least", " x0's TT rank ", r[e]));
    }
  }
  for (auto const& group : sharing.groups()) {
    for (std::size_t i : group) {
      if (c.max_tucker_ranks[i] != c.max_tucker_ranks[group.front()]) {
        throw InvalidArgument(concat(where, ": modes ", group.front(), " and ", i,
                                     " share a factor but continuation.max_tucker_ranks gives them ",
                                     c.max_tucker_ranks[group.front()], " and ", c.max_tucker_ranks[i],
                                     "; a group has one rank"));
      }
    }
  }
  if (c.stage_iterations == 0 || c.rank_step == 0 || !(c.rank_rtol >= 0) || !(c.stage_tol_decrease >= 0)) {
    throw InvalidArgument(where +
                          ": continuation needs stage_iterations >= 1, rank_step >= 1, rank_rtol >= 0 and "
                          "stage_tol_decrease >= 0");
  }
  if (!(c.condition_ratio >= 1) || !(c.condition_guard >= 0) || !(c.min_samples_per_dimension >= 0)) {
    throw InvalidArgument(where +
                          ": continuation needs condition_ratio >= 1, condition_guard >= 0 and "
                          "min_samples_per_dimension >= 0");
  }
}

/// Why a stage ended, as a checkpoint stores it.
inline double stage_outcome_code(std::string const& reason) {
  if (reason == "relative residual below tolerance") return 1;
  if (reason == "non-finite loss") return 2;
  if (reason == "validation stopped improving") return 3;
  return 0;
}
inline std::string stage_outcome_reason(double code) {
  if (code == 1) return "relative residual below tolerance";
  if (code == 2) return "non-finite loss";
  if (code == 3) return "validation stopped improving";
  return "stage converged";
}

template <class Scalar, class MemorySpace>
bool same_ranks(TuckerTensorTrain<Scalar, MemorySpace> const& a, TuckerTensorTrain<Scalar, MemorySpace> const& b) {
  return a.tucker_ranks() == b.tucker_ranks() && a.tt_ranks() == b.tt_ranks();
}

/// The continuation loop around `run(x, stage_options, stage_checkpoint)`, a fit of one stage at x's ranks.
/// Global iterations run on across stages; each stage's records carry rank_stage. Checkpoints are those of the
/// stage's optimizer, plus the stage state (continuation_* scalars, stage_best_x) and the global history; the
/// checkpoint of a stage's last iteration is marked done, so that a resumed run grows the ranks as the
/// uninterrupted one did.
template <class ExecutionSpace, class Scalar, class MemorySpace, class Options, class Run>
FitResult<Scalar, MemorySpace> rank_continuation(ExecutionSpace const& space,
                                                 FittingProblem<Scalar, MemorySpace> const& problem,
                                                 TuckerTensorTrain<Scalar, MemorySpace> const& x0,
                                                 Options const& options,
                                                 CheckpointControl<Scalar, MemorySpace> const& checkpoint, Run&& run) {
  using T3 = TuckerTensorTrain<Scalar, MemorySpace>;
  using Checkpoint = OptimizerCheckpoint<Scalar, MemorySpace>;
  auto const& o = options.common;
  auto const& c = o.continuation;
  auto const sharing = continuation_sharing(o, x0.mode_shapes());
  check_continuation("t3k::rank_continuation", c, x0, sharing);
  auto const start = std::chrono::steady_clock::now();
  FitResult<Scalar, MemorySpace> result;
  auto& history = result.history;
  std::size_t stage = 0, stage_start = 0;
  bool polish = false, done = false;
  double best_validation = std::numeric_limits<double>::infinity();
  std::size_t stages_without_best = 0;
  T3 stage_best_x;
  T3 x = x0;
  std::optional<Checkpoint> inner_resume;
  double done_outcome = 0;
  if (auto const* resume = checkpoint.resume_from) {
    stage = std::size_t(checkpoint_scalar(*resume, "continuation_stage"));
    stage_start = std::size_t(checkpoint_scalar(*resume, "continuation_stage_start"));
    polish = checkpoint_scalar(*resume, "continuation_polish") != 0;
    done = checkpoint_scalar(*resume, "continuation_stage_done") != 0;
    done_outcome = checkpoint_scalar(*resume, "continuation_stage_outcome");
    best_validation = checkpoint_scalar(*resume, "continuation_best_validation");
    stages_without_best = std::size_t(checkpoint_scalar(*resume, "continuation_stages_without_best"));
    stage_best_x = resume->stage_best_x;
    history = resume->history;
    x = resume->x;
    inner_resume = *resume;
    inner_resume->iteration -= stage_start;
    inner_resume->history.clear();
    for (auto rec : resume->history) {
      if (rec.rank_stage != stage) continue;
      rec.iteration -= stage_start;
      inner_resume->history.push_back(rec);
    }
  }
  std::optional<Checkpoint> pending;  // the checkpoint of the last recorded iteration, written once it is known
  auto write_pending = [&](bool stage_done, double outcome) {
    if (!pending) return;
    pending->scalars["continuation_stage_done"] = stage_done ? 1 : 0;
    pending->scalars["continuation_stage_outcome"] = outcome;
    Checkpoint out = std::move(*pending);
    pending.reset();
    checkpoint.write(out);
  };
  Options stage_options = options;
  stage_options.common.continuation = RankContinuation{};
  CheckpointControl<Scalar, MemorySpace> control;
  if (checkpoint.every > 0 && checkpoint.write) {
    control.every = 1;
    control.write = [&](Checkpoint const& inner) {
      std::size_t const global = stage_start + inner.iteration;
      if (global % checkpoint.every != 0) return;
      pending = inner;
      pending->iteration = global;
      pending->history = history;
      pending->scalars["continuation_stage"] = double(stage);
      pending->scalars["continuation_stage_start"] = double(stage_start);
      pending->scalars["continuation_polish"] = polish ? 1 : 0;
      pending->scalars["continuation_best_validation"] = best_validation;
      pending->scalars["continuation_stages_without_best"] = double(stages_without_best);
      pending->stage_best_x = stage_best_x;
    };
  }
  stage_options.common.callback = [&](IterationRecord const& inner) {
    write_pending(false, 0);
    IterationRecord rec = inner;
    rec.iteration += stage_start;
    rec.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rec.rank_stage = stage;
    history.push_back(rec);
    if (o.callback) o.callback(history.back());
  };
  // A stop request ends the stage and the continuation; it is asked with the continuation's record.
  if (o.stop_when) {
    stage_options.common.stop_when = [&](IterationRecord const&) { return o.stop_when(history.back()); };
  }
  while (true) {
    FitResult<Scalar, MemorySpace> r;
    if (done) {
      // Resumed from the checkpoint of a stage's last iteration: the stage's outcome, without running it again.
      bool const best = o.validation_patience > 0 && inner_resume->best_x.n_modes() > 0;
      r.x = best ? inner_resume->best_x : inner_resume->x;
      r.reason = stage_outcome_reason(done_outcome);
      r.converged = done_outcome != 2;
      if (problem.validation) {
        r.validation_relative_residual = best ? checkpoint_scalar(*inner_resume, "validation_best")
                                              : checkpoint_scalar(*inner_resume, "validation_last");
      }
      done = false;
      inner_resume.reset();
    } else {
      std::size_t const remaining = o.max_iterations > stage_start ? o.max_iterations - stage_start : 0;
      stage_options.common.max_iterations = std::min(c.stage_iterations, remaining);
      stage_options.common.tol_decrease = polish ? o.tol_decrease : std::max(o.tol_decrease, c.stage_tol_decrease);
      stage_options.common.seed = o.seed + 0x9E3779B97F4A7C15ull * stage;  // fresh minibatches per stage
      control.resume_from = inner_resume ? &*inner_resume : nullptr;
      r = run(x, stage_options, control);
      inner_resume.reset();
      // A stage stopped on request is not done: a resumed run continues it.
      bool const requested = r.reason == stop_request_reason;
      write_pending(!requested, requested ? 0 : stage_outcome_code(r.reason));
    }
    if (stage == 0 && result.notes.empty()) result.notes = r.notes;
    result.chunk_size = r.chunk_size;
    result.converged = r.converged;
    result.reason = r.reason;
    result.x = r.x;
    result.validation_relative_residual = r.validation_relative_residual;
    if (r.reason == "non-finite loss" || r.reason == stop_request_reason) break;
    std::size_t const last = history.empty() ? stage_start : history.back().iteration;
    if (problem.validation && !polish && !(r.validation_relative_residual < best_validation)) {
      // A stage cut short by a stall may not yet show what its ranks can do: stop after two stages in a row
      // without a better validation residual.
      if (++stages_without_best >= 2) {
        // The larger ranks do not generalize better: keep the best stage.
        if (stage_best_x.n_modes() > 0) {
          result.x = stage_best_x;
          result.validation_relative_residual = best_validation;
        }
        result.reason = "validation stopped improving over rank stages";
        result.converged = true;
        break;
      }
    } else if (problem.validation && !polish) {
      best_validation = r.validation_relative_residual;
      stage_best_x = r.x;
      stages_without_best = 0;
    }
    if (polish) {
      // The polishing stage ran to its own cap: say so, and keep "maximum iterations reached" for the fit's cap.
      if (r.reason == "maximum iterations reached" && last < o.max_iterations) {
        result.reason = "polishing stage reached stage_iterations";
      }
      break;
    }
    std::vector<std::size_t> n, rr;
    bool const tolerance = r.reason == "relative residual below tolerance";
    if (!tolerance && last >= o.max_iterations) {
      result.reason = "maximum iterations reached";
      break;
    }
    T3 next;
    bool grew = false;
    std::string growth_note;
    if (!tolerance && c.rule == GrowthRule::saturation) {
      grew = grown_ranks(space, r.x, sharing, c, n, rr);
    } else if (!tolerance) {
      grew =
          grown_ranks_by_conditioning(space, problem, r.x, sharing, c, last, n, rr, growth_note) == GrowthOutcome::grew;
      if (!grew) result.notes.push_back(growth_note);
    }
    if (grew) {
      next = embed_t3(space, r.x, n, rr);
      // The manifold dimension of each stage, which users weigh against their sample count.
      result.notes.push_back(concat("rank step at iteration ", last, ": Tucker ranks ",
                                    shape_string(r.x.tucker_ranks()), " -> ", shape_string(n), ", TT ranks ",
                                    shape_string(r.x.tt_ranks()), " -> ", shape_string(rr), ", manifold dimension ",
                                    manifold_dimension(r.x, sharing), " -> ", manifold_dimension(next, sharing)));
      if (!growth_note.empty()) result.notes.push_back(growth_note);
    } else {
      // Done growing: drop the ranks the model does not use, and polish at the smaller ranks.
      double drop_rtol = 0;
      next = drop_unused_ranks(space, problem, r.x, sharing, c, o.tol_relative_residual, tolerance, drop_rtol);
      if (same_ranks(next, r.x)) {
        if (!tolerance) result.reason = "rank continuation finished";
        break;
      }
      result.notes.push_back(concat("unused ranks dropped at iteration ", last, " (singular values below ", drop_rtol,
                                    " of the largest): Tucker ranks ", shape_string(next.tucker_ranks()), ", TT ranks ",
                                    shape_string(next.tt_ranks()), ", manifold dimension ",
                                    manifold_dimension(next, sharing)));
      polish = true;
    }
    x = next;
    ++stage;
    stage_start = last;
  }
  return result;
}

}  // namespace impl

/// x embedded at larger ranks, the same tensor: TT cores padded with zeros and Tucker cores completed with rows
/// orthonormal to each other and to the span of x's rows (the new rows meet only zero TT-core slices).
/// \param space execution space the copies run on
/// \param x the T3 to embed
/// \param tucker_ranks d entries, each between x's rank and N_i
/// \param tt_ranks d + 1 entries, each at least x's rank, the boundary ones equal to x's
/// **Blocking:** yes (the cores are built on the host). **Throws:** DimensionMismatch or InvalidArgument for ranks
/// that do not contain x's.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> embed_t3(ExecutionSpace const& space,
                                                TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                std::vector<std::size_t> const& tucker_ranks,
                                                std::vector<std::size_t> const& tt_ranks) {
  std::string const where = "t3k::embed_t3";
  std::size_t const d = x.n_modes();
  auto const n0 = x.tucker_ranks();
  auto const r0 = x.tt_ranks();
  auto const big_n = x.mode_shapes();
  if (tucker_ranks.size() != d || tt_ranks.size() != d + 1) {
    throw DimensionMismatch(impl::concat(where, ": got ", tucker_ranks.size(), " Tucker ranks and ", tt_ranks.size(),
                                         " TT ranks for a T3 of d = ", d, " modes (expected d and d + 1)"));
  }
  for (std::size_t i = 0; i < d; ++i) {
    if (tucker_ranks[i] < n0[i] || tucker_ranks[i] > big_n[i]) {
      throw InvalidArgument(impl::concat(where, ": tucker_ranks[", i, "] = ", tucker_ranks[i], " must be between ",
                                         n0[i], " (x's) and N_", i, " = ", big_n[i]));
    }
  }
  for (std::size_t e = 0; e <= d; ++e) {
    if (tt_ranks[e] < r0[e] || ((e == 0 || e == d) && tt_ranks[e] != r0[e])) {
      throw InvalidArgument(impl::concat(where, ": tt_ranks[", e, "] = ", tt_ranks[e], " must be ",
                                         e == 0 || e == d ? "equal to" : "at least", " x's ", r0[e]));
    }
  }
  auto const h = impl::to_host_cores(space, x);
  impl::HostT3Cores<Scalar> out;
  for (std::size_t i = 0; i < d; ++i) {
    auto const u = h.u[i];
    auto const g = h.g[i];
    auto nu = impl::host_matrix<Scalar>(tucker_ranks[i], big_n[i]);  // zero-initialized
    for (std::size_t a = 0; a < n0[i]; ++a)
      for (std::size_t j = 0; j < big_n[i]; ++j) nu(a, j) = u(a, j);
    impl::complete_rows(nu, n0[i]);
    auto ng = impl::host_core<Scalar>(tt_ranks[i], tucker_ranks[i], tt_ranks[i + 1]);  // zero-initialized
    for (std::size_t a = 0; a < g.extent(0); ++a)
      for (std::size_t v = 0; v < g.extent(1); ++v)
        for (std::size_t b = 0; b < g.extent(2); ++b) ng(a, v, b) = g(a, v, b);
    out.u.push_back(nu);
    out.g.push_back(ng);
  }
  return impl::from_host_cores<MemorySpace>(space, out, "t3k::embed_t3");
}

}  // namespace t3k
