#pragma once
/// \file orthogonalize.hpp
/// Gauge transformations of a T3 that keep the tensor: squashing the boundary bonds, QR of the Tucker cores
/// ("up" orthogonalization) and QR/LQ sweeps over the TT cores (docs/math.md).
///
/// **Where the work runs.** Every core here is small (a core unfolding has at most r·n rows), so the QR
/// factorizations run on the host with LAPACK: the cores are copied to host memory once, transformed there, and
/// copied back into the T3's memory space. This is intended; it is the same on every backend, and the device copy
/// only moves the cores. All functions therefore block (they fence `space`).

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "t3k/algorithms/impl/host/host_lapack.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

namespace t3k {
namespace impl {

template <class Scalar>
using HostMatrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Kokkos::HostSpace>;
template <class Scalar>
using HostCore = Kokkos::View<Scalar***, Kokkos::LayoutRight, Kokkos::HostSpace>;

/// The cores of a T3 in host memory. Every operation below replaces cores with new allocations (never writes into a
/// core in place), so a caller may keep earlier cores (the frame keeps the left-orthogonal cores of the left sweep).
template <class Scalar>
struct HostT3Cores {
  std::vector<HostMatrix<Scalar>> u;  ///< U_i (n_i, N_i)
  std::vector<HostCore<Scalar>> g;    ///< G_i (r_i, n_i, r_{i+1})
  std::size_t d() const { return g.size(); }
};

// Zeroed through the small-kernel dispatch: Kokkos' own initialization is a launch even for a few entries.
template <class Scalar>
HostMatrix<Scalar> host_matrix(std::size_t rows, std::size_t cols) {
  HostMatrix<Scalar> m(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::host_matrix"), rows, cols);
  fill_contiguous(Kokkos::DefaultHostExecutionSpace{}, m, Scalar(0));
  return m;
}
template <class Scalar>
HostCore<Scalar> host_core(std::size_t a, std::size_t n, std::size_t b) {
  HostCore<Scalar> g(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::host_core"), a, n, b);
  fill_contiguous(Kokkos::DefaultHostExecutionSpace{}, g, Scalar(0));
  return g;
}

/// Host copies of the cores of `x` (never aliases of x's Views). **Blocking:** yes (fences `space`).
template <class ExecutionSpace, class Scalar, class MemorySpace>
HostT3Cores<Scalar> to_host_cores(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  HostT3Cores<Scalar> h;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    auto const& u = x.tucker_core(i);
    auto const& g = x.tt_core(i);
    HostMatrix<Scalar> hu(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::host_tucker_core"), u.extent(0),
                          u.extent(1));
    HostCore<Scalar> hg(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::host_tt_core"), g.extent(0), g.extent(1),
                        g.extent(2));
    Kokkos::deep_copy(space, hu, u);
    Kokkos::deep_copy(space, hg, g);
    h.u.push_back(hu);
    h.g.push_back(hg);
  }
  space.fence();
  return h;
}

/// Copies host cores into `MemorySpace` as a new T3. **Blocking:** yes (fences `space` so that the host buffers may
/// be released as soon as this returns).
template <class MemorySpace, class ExecutionSpace, class Scalar>
TuckerTensorTrain<Scalar, MemorySpace> from_host_cores(ExecutionSpace const& space, HostT3Cores<Scalar> const& h,
                                                       std::string const& label) {
  using T3 = TuckerTensorTrain<Scalar, MemorySpace>;
  std::vector<typename T3::tucker_core_type> us;
  std::vector<typename T3::tt_core_type> gs;
  for (std::size_t i = 0; i < h.d(); ++i) {
    us.push_back(device_copy<MemorySpace>(space, h.u[i], label + "::tucker_core_" + std::to_string(i)));
    gs.push_back(device_copy<MemorySpace>(space, h.g[i], label + "::tt_core_" + std::to_string(i)));
  }
  space.fence();
  return T3(std::move(us), std::move(gs));
}

/// docs/math.md: G_0 <- sum_a G_0[a,:,:], G_{d-1} <- sum_b G_{d-1}[:,:,b] (both for d = 1).
template <class Scalar>
void host_squash_tails(HostT3Cores<Scalar>& h) {
  std::size_t const d = h.d();
  auto const g0 = h.g[0];
  if (g0.extent(0) != 1) {
    auto s = host_core<Scalar>(1, g0.extent(1), g0.extent(2));
    for (std::size_t a = 0; a < g0.extent(0); ++a)
      for (std::size_t u = 0; u < g0.extent(1); ++u)
        for (std::size_t b = 0; b < g0.extent(2); ++b) s(0, u, b) += g0(a, u, b);
    h.g[0] = s;
  }
  auto const gl = h.g[d - 1];
  if (gl.extent(2) != 1) {
    auto s = host_core<Scalar>(gl.extent(0), gl.extent(1), 1);
    for (std::size_t a = 0; a < gl.extent(0); ++a)
      for (std::size_t u = 0; u < gl.extent(1); ++u)
        for (std::size_t b = 0; b < gl.extent(2); ++b) s(a, u, 0) += gl(a, u, b);
    h.g[d - 1] = s;
  }
}

/// docs/math.md: U_i^T = Q Z (Q: N_i x m, m = min(N_i, n_i)); U_i <- Q^T; G_i[a,x,b] <- sum_u Z[x,u]
/// G_i[a,u,b].
template <class Scalar>
void host_up_orthogonalize(HostT3Cores<Scalar>& h) {
  for (std::size_t i = 0; i < h.d(); ++i) {
    auto const u = h.u[i];
    auto const g = h.g[i];
    int const n = int(u.extent(0)), big_n = int(u.extent(1));
    std::vector<Scalar> ut(std::size_t(big_n) * n), q, z;
    for (int x = 0; x < n; ++x)
      for (int j = 0; j < big_n; ++j) ut[std::size_t(j) * n + x] = u(x, j);
    int const m = host_thin_qr(big_n, n, ut.data(), q, z);
    auto nu = host_matrix<Scalar>(m, big_n);
    for (int x = 0; x < m; ++x)
      for (int j = 0; j < big_n; ++j) nu(x, j) = q[std::size_t(j) * m + x];
    auto ng = host_core<Scalar>(g.extent(0), m, g.extent(2));
    for (std::size_t a = 0; a < g.extent(0); ++a)
      for (int x = 0; x < m; ++x)
        for (std::size_t b = 0; b < g.extent(2); ++b) {
          Scalar acc = 0;
          for (int y = x; y < n; ++y) acc += z[std::size_t(x) * n + y] * g(a, y, b);  // Z is upper trapezoidal
          ng(a, x, b) = acc;
        }
    h.u[i] = nu;
    h.g[i] = ng;
  }
}

/// One step of the left sweep (docs/math.md): the (r_i n_i) x r_{i+1} unfolding of G_i = Q Z; G_i <- Q reshaped
/// (r_i, n_i, m); G_{i+1} <- Z G_{i+1}, which moves the centre from core i to core i + 1 (i <= d - 2).
template <class Scalar>
void host_left_step(HostT3Cores<Scalar>& h, std::size_t i) {
  auto const g = h.g[i];
  auto const next = h.g[i + 1];
  int const ra = int(g.extent(0)), n = int(g.extent(1)), rb = int(g.extent(2));
  std::vector<Scalar> q, z;
  int const m = host_thin_qr(ra * n, rb, g.data(), q, z);
  auto ng = host_core<Scalar>(ra, n, m);
  std::copy(q.begin(), q.end(), ng.data());
  int const cols = int(next.extent(1) * next.extent(2));
  auto nn = host_core<Scalar>(m, next.extent(1), next.extent(2));
  for (int x = 0; x < m; ++x)
    for (int c = 0; c < cols; ++c) {
      Scalar acc = 0;
      for (int b = x; b < rb; ++b) acc += z[std::size_t(x) * rb + b] * next.data()[std::size_t(b) * cols + c];
      nn.data()[std::size_t(x) * cols + c] = acc;
    }
  h.g[i] = ng;
  h.g[i + 1] = nn;
}

/// docs/math.md: host_left_step for i = 0..d-2. Afterwards G_0..G_{d-2} are left-orthogonal.
template <class Scalar>
void host_left_sweep(HostT3Cores<Scalar>& h) {
  for (std::size_t i = 0; i + 1 < h.d(); ++i) host_left_step(h, i);
}

/// docs/math.md (LQ sweep): for i = d-1..1, the transpose of the r_i x (n_i r_{i+1})
/// unfolding of G_i = Q Z, so G_i = Z^T Q^T; G_i <- Q^T reshaped (m, n_i, r_{i+1}); G_{i-1}[a,u,x] <- sum_b
/// G_{i-1}[a,u,b] Z[x,b]. Afterwards G_1..G_{d-1} are right-orthogonal. If `centres` is given it receives the
/// centre cores C_i (the core i just before it is factored, C_{d-1} = G_{d-1}; C_0 = the final G_0).
template <class Scalar>
void host_right_sweep(HostT3Cores<Scalar>& h, std::vector<HostCore<Scalar>>* centres = nullptr) {
  std::size_t const d = h.d();
  if (centres) centres->assign(d, HostCore<Scalar>());
  for (std::size_t i = d - 1; i >= 1; --i) {
    auto const g = h.g[i];
    auto const prev = h.g[i - 1];
    if (centres) (*centres)[i] = g;
    int const ra = int(g.extent(0)), cols = int(g.extent(1) * g.extent(2));
    std::vector<Scalar> gt(std::size_t(cols) * ra), q, z;
    for (int a = 0; a < ra; ++a)
      for (int c = 0; c < cols; ++c) gt[std::size_t(c) * ra + a] = g.data()[std::size_t(a) * cols + c];
    int const m = host_thin_qr(cols, ra, gt.data(), q, z);
    auto ng = host_core<Scalar>(m, g.extent(1), g.extent(2));
    for (int x = 0; x < m; ++x)
      for (int c = 0; c < cols; ++c) ng.data()[std::size_t(x) * cols + c] = q[std::size_t(c) * m + x];
    int const rows = int(prev.extent(0) * prev.extent(1));
    auto np = host_core<Scalar>(prev.extent(0), prev.extent(1), m);
    for (int row = 0; row < rows; ++row)
      for (int x = 0; x < m; ++x) {
        Scalar acc = 0;
        for (int b = x; b < ra; ++b) acc += prev.data()[std::size_t(row) * ra + b] * z[std::size_t(x) * ra + b];
        np.data()[std::size_t(row) * m + x] = acc;
      }
    h.g[i] = ng;
    h.g[i - 1] = np;
  }
  if (centres) (*centres)[0] = h.g[0];
}

template <class ExecutionSpace>
void check_execution_space() {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "t3k: the first argument must be a Kokkos execution space instance");
}

}  // namespace impl

/// The same tensor with boundary TT ranks 1: G_0 <- sum_a G_0[a,:,:], G_{d-1} <- sum_b G_{d-1}[:,:,b]
/// (docs/math.md). The other cores are copied.
/// \param space execution space for the copies   \param x the T3 (any boundary ranks)
/// \return a new T3 (no View shared with x) with r_0 = r_d = 1
/// **Blocking:** yes (host computation, see the file comment). **Throws:** nothing beyond allocation failures.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> squash_tails(ExecutionSpace const& space,
                                                    TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  impl::check_execution_space<ExecutionSpace>();
  impl::ProfilingRegion region("t3k::squash_tails");
  auto h = impl::to_host_cores(space, x);
  impl::host_squash_tails(h);
  return impl::from_host_cores<MemorySpace>(space, h, "t3k::squash_tails");
}

/// The same tensor with orthonormal Tucker rows: U_i^T = Q Z (thin QR), U_i <- Q^T (min(n_i, N_i) x N_i),
/// G_i <- G_i x_2 Z (docs/math.md). Tucker ranks n_i > N_i become N_i; TT ranks are unchanged.
/// \param space execution space for the copies   \param x the T3
/// \return a new T3 with Σ_j U_i[u,j] U_i[u',j] = δ_{uu'}
/// **Blocking:** yes (host LAPACK). **Throws:** InvalidArgument if LAPACK fails (non-finite cores).
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> up_orthogonalize(ExecutionSpace const& space,
                                                        TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  impl::check_execution_space<ExecutionSpace>();
  impl::ProfilingRegion region("t3k::up_orthogonalize");
  auto h = impl::to_host_cores(space, x);
  impl::host_up_orthogonalize(h);
  return impl::from_host_cores<MemorySpace>(space, h, "t3k::up_orthogonalize");
}

/// The same tensor with left-orthogonal TT cores G_0..G_{d-2} (Σ_{a,u} G_i[a,u,b] G_i[a,u,b'] = δ_{bb'}) by a QR
/// sweep from left to right (docs/math.md); the last core carries the norm. Boundary ranks are kept
/// as they are (call squash_tails first for the standard form); interior ranks become min(r_i n_i, r_{i+1})
/// (QR does not truncate numerically rank-deficient cores). Tucker cores are copied.
/// \return a new T3   **Blocking:** yes (host LAPACK). **Throws:** InvalidArgument if LAPACK fails.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> left_orthogonalize(ExecutionSpace const& space,
                                                          TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  impl::check_execution_space<ExecutionSpace>();
  impl::ProfilingRegion region("t3k::left_orthogonalize");
  auto h = impl::to_host_cores(space, x);
  impl::host_left_sweep(h);
  return impl::from_host_cores<MemorySpace>(space, h, "t3k::left_orthogonalize");
}

/// The same tensor with right-orthogonal TT cores G_1..G_{d-1} (Σ_{u,b} G_i[a,u,b] G_i[a',u,b] = δ_{aa'}) by an LQ
/// sweep from right to left (docs/math.md); the first core carries the norm. Boundary ranks
/// are kept; interior ranks become min(r_i, n_i r_{i+1}). Tucker cores are copied.
/// \return a new T3   **Blocking:** yes (host LAPACK). **Throws:** InvalidArgument if LAPACK fails.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> right_orthogonalize(ExecutionSpace const& space,
                                                           TuckerTensorTrain<Scalar, MemorySpace> const& x) {
  impl::check_execution_space<ExecutionSpace>();
  impl::ProfilingRegion region("t3k::right_orthogonalize");
  auto h = impl::to_host_cores(space, x);
  impl::host_right_sweep(h);
  return impl::from_host_cores<MemorySpace>(space, h, "t3k::right_orthogonalize");
}

}  // namespace t3k
