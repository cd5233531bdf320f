#pragma once
/// \file edge_conditioning.hpp
/// The edge-conditioning growth rule of a rank continuation (docs/math.md, rank continuation): after a stage, the
/// Tucker factors and TT bonds whose retained singular values are conditioned much better than the worst edge's
/// grow, and the continuation stops before the training measurements per manifold dimension run short.

#include "t3k/algorithms/manifold_dimension.hpp"
#include "t3k/optimizers/fitting_problem.hpp"
#include "t3k/optimizers/optimizer_options.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace t3k {

/// One edge of a T3 whose rank a continuation may grow: a Tucker factor or an interior TT bond. A Tucker edge lists
/// the modes that use its factor (one mode each while fits do not share factors), so that a factor shared by a
/// group of modes is one edge with one spectrum.
struct ContinuationEdge {
  /// What the edge's rank is.
  enum class Kind {
    tucker,   ///< the rank of a Tucker factor
    tt_bond,  ///< the rank of an interior TT bond
  };
  Kind kind = Kind::tucker;          ///< a Tucker factor or a TT bond
  std::vector<std::size_t> indices;  ///< tucker: the modes using the factor; tt_bond: the bond e in 1..d-1
  std::size_t rank = 0;              ///< the current rank
  std::size_t max_rank = 0;          ///< the largest rank it may reach
  double condition_number = 0;       ///< sigma_1 / sigma_rank of its retained values, infinite if sigma_rank = 0
  /// \return "Tucker mode 2", "Tucker modes 0,3" or "TT bond 1", for notes
  std::string name() const {
    std::string out = kind == Kind::tt_bond ? "TT bond " : indices.size() > 1 ? "Tucker modes " : "Tucker mode ";
    for (std::size_t k = 0; k < indices.size(); ++k) out += (k ? "," : "") + std::to_string(indices[k]);
    return out;
  }
};

/// Which edges the edge-conditioning rule grows (select_edges_by_conditioning).
struct EdgeSelection {
  std::vector<std::size_t> candidates;  ///< indices into the edge list, best conditioned first
  std::vector<std::size_t> eligible;    ///< the edges below their maximum rank and at most the guard, in list order
  double worst_condition = 0;           ///< the largest condition number at most the guard (0: no such edge)
  std::size_t worst_edge = 0;           ///< the edge that has it
  bool uniform =
      false;  ///< no edge was condition_ratio times better than the worst: every eligible edge is a candidate
};

/// sigma_1 / sigma_{rank} of a descending spectrum: infinite when the rank-th value is missing or not positive.
/// \param sigma singular values, descending   \param rank the number retained (>= 1)   \return the condition number
template <class Scalar>
double retained_condition_number(std::vector<Scalar> const& sigma, std::size_t rank) {
  if (rank == 0 || sigma.size() < rank || !(double(sigma[rank - 1]) > 0)) {
    return std::numeric_limits<double>::infinity();
  }
  return double(sigma[0]) / double(sigma[rank - 1]);
}

/// The automatic condition guard: min(1 / rank_rtol, 1 / sqrt(epsilon)). Past 1 / rank_rtol the edge's last value
/// counts as unused (the saturation rule's test), and past 1 / sqrt(epsilon) it is below what minimizing a squared
/// loss resolves (loss rounding eps moves the iterate by sqrt(eps)); either way more rank there would fit nothing.
/// \param c the continuation   \return the guard
template <class Scalar>
double condition_guard(RankContinuation const& c) {
  if (c.condition_guard > 0) return c.condition_guard;
  double const rtol = c.rank_rtol > 0 ? c.rank_rtol : default_rank_rtol;
  return std::min(1 / rtol, 1 / std::sqrt(double(std::numeric_limits<Scalar>::epsilon())));
}

/// The edge-conditioning rule on given condition numbers (docs/math.md, rank continuation). Eligible: below its
/// maximum rank with a condition number at most `guard`. The worst condition number is taken over the edges at most
/// `guard` (those above it hold unused rank, and would make every other edge look well conditioned). Candidates:
/// eligible edges with condition_ratio * kappa <= the worst, best conditioned first; when there is none (every
/// edge comparably conditioned, as at rank 1), every eligible edge. The caller caps how many grow.
/// \param edges the edges with their ranks and condition numbers
/// \param condition_ratio tau >= 1   \param guard the largest condition number of an edge that may grow
/// \return the candidates, the worst condition number and whether the growth is uniform
/// **Blocking:** no (host only). **Throws:** nothing.
inline EdgeSelection select_edges_by_conditioning(std::vector<ContinuationEdge> const& edges, double condition_ratio,
                                                  double guard) {
  EdgeSelection out;
  for (std::size_t k = 0; k < edges.size(); ++k) {
    double const kappa = edges[k].condition_number;
    if (kappa <= guard && kappa > out.worst_condition) {
      out.worst_condition = kappa;
      out.worst_edge = k;
    }
  }
  for (std::size_t k = 0; k < edges.size(); ++k) {
    if (edges[k].rank < edges[k].max_rank && edges[k].condition_number <= guard) out.eligible.push_back(k);
  }
  for (std::size_t k : out.eligible) {
    if (condition_ratio * edges[k].condition_number <= out.worst_condition) out.candidates.push_back(k);
  }
  if (out.candidates.empty()) {
    out.candidates = out.eligible;
    out.uniform = !out.eligible.empty();
  }
  std::stable_sort(out.candidates.begin(), out.candidates.end(),
                   [&](std::size_t a, std::size_t b) { return edges[a].condition_number < edges[b].condition_number; });
  return out;
}

/// The scalars one training sample measures, which the samples-per-dimension stop counts: K + 1 for an entry or an
/// apply (one per jet order), (K + 1) (sum_i N_i - d + 1) for a probe (its d vectors at each order, whose
/// contractions with the w_i are one scalar counted once).
/// \param problem the fitting problem   \param mode_shapes N_0..N_{d-1}   \return scalars per sample
template <class Scalar, class MemorySpace>
std::size_t measurements_per_sample(FittingProblem<Scalar, MemorySpace> const& problem,
                                    std::vector<std::size_t> const& mode_shapes) {
  std::size_t const orders = problem.order + 1;
  if (problem.kind != MeasurementKind::probes) return orders;
  std::size_t const sum = std::accumulate(mode_shapes.begin(), mode_shapes.end(), std::size_t(0));
  return orders * (sum - mode_shapes.size() + 1);
}

}  // namespace t3k
