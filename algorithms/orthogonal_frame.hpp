#pragma once
/// \file orthogonal_frame.hpp
/// Construction of the orthogonal frame of a T3 by QR sweeps (docs/math.md).
///
/// The cores are small, so the QR factorizations run on the host with LAPACK: the T3 is copied to host memory once,
/// the frame is built there and its cores are copied into the T3's memory space (see t3k/algorithms/orthogonalize.hpp).

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "t3k/algorithms/orthogonalize.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/tucker_tensor_train.hpp"
#include "t3k/core/uniform_tucker_tensor_train.hpp"

namespace t3k {

/// The orthogonal frame of `x`, with the centre factors S_i, built exactly as in docs/math.md:
/// 1. squash tails; 2. U_i^T = Q Z, U_i <- Q^T, G_i <- G_i x_2 Z; 3. left QR sweep giving L_0..L_{d-2} and the end
/// core L_{d-1}; 4. right sweep from C_{d-1} = L_{d-1}: C_i^T (unfolded) = Q Z, R_i = Q^T, C_{i-1} = L_{i-1} x_3 Z,
/// R_0 = C_0; 5. outer step: M[(a,b),u] = C_i[a,u,b] = Q S_i, O_i[a,o,b] = Q[(a,b),o].
///
/// Shapes (QR never truncates, so these hold for any input, rank-deficient or not): nU_i = min(n_i, N_i);
/// rL_0 = 1, rL_{i+1} = min(rL_i nU_i, r_{i+1}) (r after squashing), rL_d = 1; rR_d = 1,
/// rR_i = min(rL_i, nU_i rR_{i+1}); nO_i = min(rL_i rR_{i+1}, nU_i).
/// Then X = D(L_0..L_{i-1}, C_i, R_{i+1}..R_{d-1}; U) with C_i[a,u,b] = Σ_o O_i[a,o,b] S_i[o,u] for every i.
///
/// \param space execution space for the copies into `MemorySpace`
/// \param x the T3 (any ragged ranks, boundary ranks r_0, r_d != 1 allowed, n_i > N_i allowed)
/// \return the frame, with centre_tucker(i) = S_i (has_centre() is true)
/// **Blocking:** yes (host LAPACK; fences `space`). **Throws:** InvalidArgument if LAPACK fails (non-finite cores).
template <class ExecutionSpace, class Scalar, class MemorySpace>
OrthogonalFrame<Scalar, MemorySpace> orthogonal_frame(ExecutionSpace const& space,
                                                      TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  impl::check_execution_space<ExecutionSpace>();
  impl::ProfilingRegion region("t3k::orthogonal_frame");
  using Frame = OrthogonalFrame<Scalar, MemorySpace>;
  auto h = impl::to_host_cores(space, x);
  std::size_t const d = h.d();
  impl::host_squash_tails(h);
  impl::host_up_orthogonalize(h);
  impl::host_left_sweep(h);
  // The sweeps never write into a core in place, so the left cores survive the right sweep.
  std::vector<impl::HostCore<Scalar>> const left = h.g;
  std::vector<impl::HostCore<Scalar>> centres;
  impl::host_right_sweep(h, &centres);
  std::vector<impl::HostCore<Scalar>> const& right = h.g;

  std::vector<typename Frame::matrix_type> up, centre_tucker;
  std::vector<typename Frame::core_type> left_tt, right_tt, outer_tt;
  for (std::size_t i = 0; i < d; ++i) {
    // Outer step: M[(a,b),u] = C_i[a,u,b] = Q S_i.
    auto const c = centres[i];
    int const ra = int(c.extent(0)), n = int(c.extent(1)), rb = int(c.extent(2));
    std::vector<Scalar> m(std::size_t(ra) * rb * n), q, s;
    for (int a = 0; a < ra; ++a)
      for (int u = 0; u < n; ++u)
        for (int b = 0; b < rb; ++b) m[(std::size_t(a) * rb + b) * n + u] = c(a, u, b);
    int const no = impl::host_thin_qr(ra * rb, n, m.data(), q, s);
    auto o = impl::host_core<Scalar>(ra, no, rb);
    for (int a = 0; a < ra; ++a)
      for (int k = 0; k < no; ++k)
        for (int b = 0; b < rb; ++b) o(a, k, b) = q[(std::size_t(a) * rb + b) * no + k];
    auto sm = impl::host_matrix<Scalar>(no, n);
    std::copy(s.begin(), s.end(), sm.data());

    std::string const core = std::to_string(i);
    up.push_back(impl::device_copy<MemorySpace>(space, h.u[i], "t3k::orthogonal_frame::up_tucker_" + core));
    left_tt.push_back(impl::device_copy<MemorySpace>(space, left[i], "t3k::orthogonal_frame::left_tt_" + core));
    right_tt.push_back(impl::device_copy<MemorySpace>(space, right[i], "t3k::orthogonal_frame::right_tt_" + core));
    outer_tt.push_back(impl::device_copy<MemorySpace>(space, o, "t3k::orthogonal_frame::outer_tt_" + core));
    centre_tucker.push_back(impl::device_copy<MemorySpace>(space, sm, "t3k::orthogonal_frame::centre_tucker_" + core));
  }
  // The host buffers are released on return: the copies must have completed.
  space.fence();
  return Frame(std::move(up), std::move(left_tt), std::move(right_tt), std::move(outer_tt), std::move(centre_tucker));
}

/// The orthogonal frame of a T3 in the uniform (padded) form: the live blocks are cut out first (to_ragged), so the
/// frame is the same as that of the ragged T3 (ragged frame shapes).
/// **Blocking:** yes. **Throws:** as the ragged overload.
template <class ExecutionSpace, class Scalar, class MemorySpace>
OrthogonalFrame<Scalar, MemorySpace> orthogonal_frame(ExecutionSpace const& space,
                                                      UniformTuckerTensorTrain<Scalar, MemorySpace> const& x) {
  return orthogonal_frame(space, to_ragged(space, x));
}

}  // namespace t3k
