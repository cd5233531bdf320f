#pragma once
/// \file t3_from_dense.hpp
/// A T3 of a dense tensor that fits in memory (docs/math.md, T3-SVD): for users who hold a dense reference, and as a
/// spectral starting point (e.g. the observed entries of a completion problem, zero-filled and rescaled).

#include "t3k/algorithms/impl/host/host_lapack.hpp"
#include "t3k/algorithms/orthogonalize.hpp"
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <vector>

namespace t3k {

namespace impl {

/// Y[a, u, b] = sum_j M[u, j] X[a, j, b] for X of shape (a, N, b) row-major, M (n x N) row-major.
template <class Scalar>
std::vector<Scalar> host_mode_product(std::vector<Scalar> const& x, std::size_t left, std::size_t big_n,
                                      std::size_t right, std::vector<Scalar> const& m, std::size_t n) {
  std::vector<Scalar> y(left * n * right, Scalar(0));
  for (std::size_t a = 0; a < left; ++a)
    for (std::size_t u = 0; u < n; ++u) {
      Scalar* out = &y[(a * n + u) * right];
      for (std::size_t j = 0; j < big_n; ++j) {
        Scalar const c = m[u * big_n + j];
        Scalar const* in = &x[(a * big_n + j) * right];
        for (std::size_t b = 0; b < right; ++b) out[b] += c * in[b];
      }
    }
  return y;
}

}  // namespace impl

/// The T3 of a dense tensor, truncated as `options` asks (caps on the ranks, a relative tolerance, or neither for an
/// exact T3): the Tucker factor of each mode from the leading left singular vectors of that mode's unfolding
/// (truncated by max_tucker_ranks and rtol), the dense core projected onto them and written as an exact tensor
/// train by thin QRs, then t3_svd with `options`. Without caps and tolerance the result equals the dense tensor to
/// rounding; with them the error is within sqrt(2d - 1) of the best of those ranks (the HOSVD and T3-SVD bounds).
/// Runs on the host (LAPACK); meant for tensors of up to some millions of entries.
/// \param space execution space the result lives on
/// \param dense the tensor, row-major, prod(mode_shapes) entries (any rank-1 View in any memory space)
/// \param mode_shapes N_0..N_{d-1}
/// \param options caps on the Tucker and TT ranks and a relative tolerance, as for t3_svd
/// \return as t3_svd: the T3 (boundary ranks 1, orthonormal Tucker rows) and the singular values of its final T3-SVD
/// **Blocking:** yes. **Throws:** DimensionMismatch when dense has not prod(mode_shapes) entries; InvalidArgument for
/// an empty shape list, a mode of size 0 or bad options (as t3_svd).
template <class ExecutionSpace, class DenseView>
T3SvdResult<typename DenseView::non_const_value_type, typename ExecutionSpace::memory_space> t3_from_dense(
    ExecutionSpace const& space, DenseView const& dense, std::vector<std::size_t> const& mode_shapes,
    T3SvdOptions const& options = {}) {
  using Scalar = typename DenseView::non_const_value_type;
  using MemorySpace = typename ExecutionSpace::memory_space;
  static_assert(Kokkos::is_view<DenseView>::value && int(DenseView::rank) == 1,
                "t3k::t3_from_dense: dense must be a rank-1 View (row-major entries)");
  std::string const where = "t3k::t3_from_dense";
  std::size_t const d = mode_shapes.size();
  if (d == 0) throw InvalidArgument(where + ": mode_shapes is empty");
  std::size_t total = 1;
  for (std::size_t i = 0; i < d; ++i) {
    if (mode_shapes[i] == 0) throw InvalidArgument(impl::concat(where, ": mode_shapes[", i, "] is 0"));
    total *= mode_shapes[i];
  }
  if (dense.extent(0) != total) {
    throw DimensionMismatch(impl::concat(where, ": dense has ", dense.extent(0), " entries, expected prod(",
                                         impl::shape_string(mode_shapes), ") = ", total));
  }
  impl::check_t3_svd_options(where, options, d);
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, dense);
  std::vector<Scalar> x(h.data(), h.data() + total);

  // Tucker factors: leading left singular vectors of each unfolding (N_i x rest).
  impl::HostT3Cores<Scalar> cores;
  std::vector<std::size_t> n(d);
  for (std::size_t i = 0; i < d; ++i) {
    std::size_t const big_n = mode_shapes[i], rest = total / big_n;
    std::size_t left = 1;
    for (std::size_t m = 0; m < i; ++m) left *= mode_shapes[m];
    std::size_t const right = rest / left;
    std::vector<Scalar> unfolding(total);
    for (std::size_t a = 0; a < left; ++a)
      for (std::size_t j = 0; j < big_n; ++j)
        for (std::size_t b = 0; b < right; ++b) unfolding[j * rest + a * right + b] = x[(a * big_n + j) * right + b];
    std::vector<Scalar> p, sigma, qt;
    int const k = impl::host_thin_svd(int(big_n), int(rest), unfolding.data(), p, sigma, qt);
    long long const cap = options.max_tucker_ranks.empty() ? 0 : options.max_tucker_ranks[i];
    n[i] = std::size_t(impl::kept_count(sigma, cap, options.rtol));
    auto u = impl::host_matrix<Scalar>(n[i], big_n);
    for (std::size_t q = 0; q < n[i]; ++q)
      for (std::size_t j = 0; j < big_n; ++j) u(q, j) = p[j * std::size_t(k) + q];
    cores.u.push_back(u);
  }
  // The core tensor, projected mode by mode (it shrinks as it goes).
  std::vector<std::size_t> shape = mode_shapes;
  for (std::size_t i = 0; i < d; ++i) {
    std::size_t left = 1, right = 1;
    for (std::size_t m = 0; m < i; ++m) left *= shape[m];
    for (std::size_t m = i + 1; m < d; ++m) right *= shape[m];
    std::vector<Scalar> m(cores.u[i].data(), cores.u[i].data() + n[i] * mode_shapes[i]);
    x = impl::host_mode_product(x, left, mode_shapes[i], right, m, n[i]);
    shape[i] = n[i];
  }
  // An exact tensor train of the core: thin QR of each left unfolding.
  std::size_t rank = 1, rest = x.size();
  for (std::size_t i = 0; i < d; ++i) {
    rest /= n[i];
    if (i + 1 == d) {
      auto g = impl::host_core<Scalar>(rank, n[i], 1);
      std::copy(x.begin(), x.end(), g.data());
      cores.g.push_back(g);
      break;
    }
    std::vector<Scalar> q, z;
    int const k = impl::host_thin_qr(int(rank * n[i]), int(rest), x.data(), q, z);
    auto g = impl::host_core<Scalar>(rank, n[i], std::size_t(k));
    std::copy(q.begin(), q.end(), g.data());
    cores.g.push_back(g);
    x = std::move(z);
    rank = std::size_t(k);
  }
  auto exact = impl::from_host_cores<MemorySpace>(space, cores, "t3k::t3_from_dense");
  return t3_svd(space, exact, options);
}

}  // namespace t3k
