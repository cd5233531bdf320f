#pragma once
/// \file retraction.hpp
/// The retraction R_X(v) = T3SVD(X + T(v)) of docs/math.md: from a tangent vector at X back to the manifold of
/// T3s with X's ranks.

#include "t3k/algorithms/grouped_t3_svd.hpp"
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/algorithms/tangent_to_t3.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <cstddef>
#include <vector>

namespace t3k {

namespace impl {

/// The ranks of the frame's base point as T3-SVD caps: Tucker ranks nU_i, TT ranks min(rL_e, rR_e).
template <class Scalar, class MemorySpace>
T3SvdOptions retraction_caps(OrthogonalFrame<Scalar, MemorySpace> const& frame) {
  auto const rl = frame.left_ranks();
  auto const rr = frame.right_ranks();
  T3SvdOptions options;
  for (auto n : frame.up_ranks()) options.max_tucker_ranks.push_back(static_cast<long long>(n));
  for (std::size_t e = 0; e < rl.size(); ++e) {
    options.max_tt_ranks.push_back(static_cast<long long>(rl[e] < rr[e] ? rl[e] : rr[e]));
  }
  return options;
}

}  // namespace impl

/// Retraction of stack entry t of `v` at the frame's base point X: T3SVD of the rank-doubled T3 of X + T(v_t)
/// (tangent_to_t3 with shift), truncated to Tucker ranks nU_i and TT ranks min(rL_e, rR_e) (docs/math.md).
/// R_X(0) = X and R_X(εv) = X + εT(v) + O(ε²). The result has boundary TT ranks 1, orthonormal Tucker rows and
/// left-orthogonal TT cores 0..d-2.
/// \param space execution space the kernels and copies run on
/// \param frame the frame of X
/// \param v variation stack at `frame` (normally gauged; any variation is accepted)
/// \param t stack index of the variation to use (default 0)
/// \return the retracted T3
/// **Blocking:** yes (the T3-SVD runs on the host). **Throws:** DimensionMismatch when v does not fit the frame,
/// InvalidArgument when t is out of range or the SVD fails (non-finite entries).
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> retract(ExecutionSpace const& space,
                                               OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                               T3Variation<Scalar, MemorySpace> const& v, std::size_t t = 0) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_variation("t3k::retract", frame, v);
  impl::check_stack_index("t3k::retract", v, t);
  impl::ProfilingRegion region("t3k::retract");
  auto doubled = tangent_to_t3(space, frame, v, t, true);
  return t3_svd(space, doubled, impl::retraction_caps(frame)).t3;
}

/// Retraction of a shared model (docs/math.md, "Shared Tucker factors"): the grouped T3-SVD of the rank-doubled T3
/// of X + T(v_t), truncated to X's ranks, one factor per group. The result is tied (has_tied_tucker_factors) by
/// construction; for a tied tangent v (tie_variation) it is R_X(εv) = X + εT(v) + O(ε²), and for any v it is the
/// best shared model of X + T(v) up to the grouped T3-SVD's quasi-optimality. A trivial sharing gives retract's
/// bits.
/// \param space execution space the kernels and copies run on   \param frame the frame of a tied X
/// \param sharing the groups of modes that share a factor   \param v variation stack at `frame`
/// \param t stack index of the variation to use (default 0)
/// \return the retracted, tied T3
/// **Blocking:** yes. **Throws:** as retract, and DimensionMismatch when the frame's shapes or Tucker ranks do not
/// fit the sharing.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> retract(ExecutionSpace const& space,
                                               OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                               ModeSharing const& sharing, T3Variation<Scalar, MemorySpace> const& v,
                                               std::size_t t = 0) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  if (sharing.is_trivial() && frame.mode_shapes() == sharing.mode_shapes()) return retract(space, frame, v, t);
  impl::check_variation("t3k::retract", frame, v);
  impl::check_stack_index("t3k::retract", v, t);
  if (frame.mode_shapes() != sharing.mode_shapes()) {
    throw DimensionMismatch(impl::concat("t3k::retract: the frame has mode shapes ",
                                         impl::shape_string(frame.mode_shapes()), ", the sharing is for ",
                                         impl::shape_string(sharing.mode_shapes())));
  }
  sharing.check_tucker_ranks(frame.up_ranks(), "t3k::retract");
  impl::ProfilingRegion region("t3k::retract");
  auto doubled = tangent_to_t3(space, frame, v, t, true);
  return grouped_t3_svd(space, doubled, sharing, impl::retraction_caps(frame)).t3;
}

}  // namespace t3k
