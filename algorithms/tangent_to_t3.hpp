#pragma once
/// \file tangent_to_t3.hpp
/// The rank-doubled T3 of s·X + T(v) (docs/math.md): the tangent tensor of a variation as an explicit Tucker
/// tensor train, without any dense tensor. Used by the retraction, by vector transport and by tests.

#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace t3k {

/// The rank-doubled T3 of shift·X + T(v_t), where X is the frame's base point and v_t stack entry t of `v`
/// (docs/math.md).
///
/// Tucker core i is [U_i; V_i] ((nU_i + nO_i) x N_i: "U-rows" then "V-rows"). Inner TT bond e has size
/// rR_e + rL_e, ordered (R-block | L-block): the L-block carries "no variation placed yet", the R-block "variation
/// already placed to the left"; the boundary bonds have size 1 (the left one is an L-block, the right one an
/// R-block). TT core i, rows = left bond block, columns = right bond block, unlisted blocks zero:
///   U-rows: (R,R) = R_i, (L,R) = H_i (+ shift·L_{d-1} when i = d-1), (L,L) = L_i;   V-rows: (L,R) = O_i.
/// For d = 1 this is the single core [H_0 + shift·L_0; O_0]. Summing over the paths through the blocks gives the
/// 2d terms of T(v) (docs/math.md), plus X = D(L_0..L_{d-1}; U) when shifted.
/// \param space execution space the kernels run on
/// \param frame the frame of X
/// \param v variation stack at `frame` (gauged or not)
/// \param t stack index of the variation to use (default 0)
/// \param shift add the base point X (default false)
/// \return a new T3 with Tucker ranks nU_i + nO_i and TT ranks (1, rR_1 + rL_1, .., rR_{d-1} + rL_{d-1}, 1)
/// **Blocking:** no. **Throws:** DimensionMismatch when v does not fit the frame, InvalidArgument when t is out of
/// range.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> tangent_to_t3(ExecutionSpace const& space,
                                                     OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                     T3Variation<Scalar, MemorySpace> const& v, std::size_t t = 0,
                                                     bool shift = false) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_variation("t3k::tangent_to_t3", frame, v);
  impl::check_stack_index("t3k::tangent_to_t3", v, t);
  using T3 = TuckerTensorTrain<Scalar, MemorySpace>;
  std::size_t const d = frame.n_modes();
  auto const big_n = frame.mode_shapes();
  auto const nu = frame.up_ranks();
  auto const no = frame.outer_ranks();
  auto const rl = frame.left_ranks();
  auto const rr = frame.right_ranks();
  std::vector<typename T3::tucker_core_type> tucker;
  std::vector<typename T3::tt_core_type> tt;
  int const ts = int(t);
  for (std::size_t i = 0; i < d; ++i) {
    int const n_u = int(nu[i]), n_o = int(no[i]), n_j = int(big_n[i]);
    // Sizes of the R- and L-blocks of the left and right bonds (the boundary bonds have one block of size 1).
    int const left_r = i > 0 ? int(rr[i]) : 0;
    int const left_l = int(rl[i]);
    int const right_r = int(rr[i + 1]);
    int const right_l = i + 1 < d ? int(rl[i + 1]) : 0;
    bool const add_base = shift && i + 1 == d;

    auto u_out = impl::allocate_uninitialized<typename T3::tucker_core_type>(
        space, "t3k::tangent_to_t3::tucker_core_" + std::to_string(i), std::size_t(n_u + n_o), std::size_t(n_j));
    auto ui = frame.up_tucker(i);
    auto vi = v.tucker[i];
    impl::for_each_index(
        space, "t3k::tangent_to_t3::tucker_core", {n_u + n_o, n_j}, 1,
        KOKKOS_LAMBDA(int q, int j) { u_out(q, j) = q < n_u ? ui(q, j) : vi(ts, q - n_u, j); });

    auto g_out = impl::allocate_uninitialized<typename T3::tt_core_type>(
        space, "t3k::tangent_to_t3::tt_core_" + std::to_string(i), std::size_t(left_r + left_l), std::size_t(n_u + n_o),
        std::size_t(right_r + right_l));
    auto ri = frame.right_tt(i);
    auto li = frame.left_tt(i);
    auto oi = frame.outer_tt(i);
    auto hi = v.tt[i];
    impl::for_each_index(
        space, "t3k::tangent_to_t3::tt_core", {left_r + left_l, n_u + n_o, right_r + right_l}, 1,
        KOKKOS_LAMBDA(int a, int q, int b) {
          bool const a_in_r = a < left_r;
          bool const b_in_r = b < right_r;
          int const al = a - left_r, bl = b - right_r;
          Scalar value = 0;
          if (q < n_u) {
            if (a_in_r && b_in_r) {
              value = ri(a, q, b);
            } else if (!a_in_r && b_in_r) {
              value = hi(ts, al, q, b);
              if (add_base) value += li(al, q, b);
            } else if (!a_in_r) {
              value = li(al, q, bl);
            }
          } else if (!a_in_r && b_in_r) {
            value = oi(al, q - n_u, b);
          }
          g_out(a, q, b) = value;
        });
    tucker.push_back(u_out);
    tt.push_back(g_out);
  }
  return T3(std::move(tucker), std::move(tt));
}

}  // namespace t3k
