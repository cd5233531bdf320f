#pragma once
/// \file t3_tangent.hpp
/// T3Tangent: a frame (the orthogonal representation of a base point X) with a stack of n_tangent variations at it,
/// and the tangent-space operations as members. Every member forwards to the free function of the same concept,
/// which remains the primary API (and takes an execution space instance first).

#include "t3k/algorithms/gauge_projection.hpp"
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/retraction.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/algorithms/tangent_space_projection.hpp"
#include "t3k/algorithms/tangent_to_t3.hpp"
#include "t3k/algorithms/variation_operations.hpp"

namespace t3k {

/// A stack of tangent vectors at one point: the orthogonal frame of the point and a variation stack at it
/// (docs/math.md, the tangent space).
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class T3Tangent {
 public:
  using frame_type = OrthogonalFrame<Scalar, MemorySpace>;  ///< the frame of the point
  using variation_type = T3Variation<Scalar, MemorySpace>;  ///< the variation stack at the frame

  T3Tangent() = default;
  /// **Throws:** DimensionMismatch when the variation does not fit the frame.
  T3Tangent(frame_type frame, variation_type variation) : frame_(std::move(frame)), variation_(std::move(variation)) {
    impl::check_variation("t3k::T3Tangent", frame_, variation_);
  }

  /// n_tangent zero tangents at the frame of `x`. **Blocking:** yes (the frame is built on the host).
  template <class ExecutionSpace>
  static T3Tangent zero(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                        std::size_t n_tangent = 1) {
    auto frame = orthogonal_frame(space, x);
    return T3Tangent(frame, zero_variation<Scalar>(space, frame, n_tangent));
  }
  /// n_tangent random gauged tangents at `frame` (seeded, reproducible across backends). **Blocking:** yes.
  template <class ExecutionSpace>
  static T3Tangent random(ExecutionSpace const& space, frame_type const& frame, std::size_t n_tangent,
                          std::uint64_t seed) {
    auto v = random_variation(space, frame, n_tangent, seed);
    gauge_project_in_place(space, frame, v);
    return T3Tangent(frame, v);
  }

  frame_type const& frame() const { return frame_; }              ///< the frame of the point
  variation_type const& variation() const { return variation_; }  ///< the variation stack
  std::size_t n_tangent() const { return variation_.n_stack(); }  ///< tangents in the stack

  /// this += alpha * other (same frame). **Blocking:** no.
  template <class ExecutionSpace>
  void axpy(ExecutionSpace const& space, Scalar alpha, T3Tangent const& other) {
    axpy_variation(space, alpha, other.variation_, variation_);
  }
  /// this *= alpha. **Blocking:** no.
  template <class ExecutionSpace>
  void scale(ExecutionSpace const& space, Scalar alpha) {
    scale_variation(space, alpha, variation_);
  }
  /// Corewise inner product of stack entry t. **Blocking:** yes.
  template <class ExecutionSpace>
  Scalar dot(ExecutionSpace const& space, T3Tangent const& other, std::size_t t = 0) const {
    return variation_dot(space, variation_, other.variation_, t);
  }
  /// Orthogonal gauge projection in place. **Blocking:** no.
  template <class ExecutionSpace>
  void gauge_project(ExecutionSpace const& space) {
    gauge_project_in_place(space, frame_, variation_);
  }
  /// Rank-doubled T3 of T(v_t) (+ X when `shift`). **Blocking:** no.
  template <class ExecutionSpace>
  TuckerTensorTrain<Scalar, MemorySpace> to_t3(ExecutionSpace const& space, std::size_t t = 0,
                                               bool shift = false) const {
    return tangent_to_t3(space, frame_, variation_, t, shift);
  }
  /// R_X(v_t). **Blocking:** yes.
  template <class ExecutionSpace>
  TuckerTensorTrain<Scalar, MemorySpace> retract(ExecutionSpace const& space, std::size_t t = 0) const {
    return t3k::retract(space, frame_, variation_, t);
  }
  /// The tangent at this frame closest to y (docs/math.md). **Blocking:** yes.
  template <class ExecutionSpace>
  T3Tangent project(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& y) const {
    return T3Tangent(frame_, project_onto_tangent_space(space, frame_, y));
  }
  /// J applied to every tangent of the stack: (n_tangent, W, K+1, N_i) per mode. **Blocking:** no.
  template <class ExecutionSpace, class ProbeView>
  TangentProbeJets<Scalar, MemorySpace> probe_derivatives(ExecutionSpace const& space, std::vector<ProbeView> const& ww,
                                                          std::vector<ProbeView> const& pp, std::size_t order) const {
    return tangent_probe_derivatives(space, frame_, variation_, ww, pp, order);
  }
  /// J^T at this tangent's frame: the gradient tangents of residual jets (stack as in the free function).
  /// **Blocking:** no.
  template <class ExecutionSpace, class ProbeView, class ResidualView>
  T3Tangent probe_derivatives_transpose(ExecutionSpace const& space, std::vector<ProbeView> const& ww,
                                        std::vector<ProbeView> const& pp, std::vector<ResidualView> const& residuals,
                                        TransposeOptions const& options = {}) const {
    return T3Tangent(frame_, t3k::probe_derivatives_transpose(space, frame_, ww, pp, residuals, options));
  }

 private:
  frame_type frame_;
  variation_type variation_;
};

}  // namespace t3k
