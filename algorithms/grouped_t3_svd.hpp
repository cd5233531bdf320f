#pragma once
/// \file grouped_t3_svd.hpp
/// Truncation of a T3 to a model with shared Tucker factors (docs/math.md, "Shared Tucker factors"): one basis per
/// group from the group spectrum, then the TT bonds as t3_svd truncates them. Like t3_svd, the factorizations run on
/// the host with LAPACK (the cores are small); the T3 is copied there once and the result copied back.

#include <cstddef>
#include <string>
#include <vector>

#include "t3k/algorithms/impl/host/host_lapack.hpp"
#include "t3k/algorithms/orthogonalize.hpp"
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

namespace t3k {

/// The truncated, tied T3 and the spectra computed on the way (before truncation).
template <class Scalar, class MemorySpace>
struct GroupedT3SvdResult {
  /// The truncated T3: tied (has_tied_tucker_factors), boundary TT ranks 1, orthonormal Tucker rows, TT cores
  /// 0..d-2 left-orthogonal.
  TuckerTensorTrain<Scalar, MemorySpace> t3;
  /// group_singular_values[g]: the group spectrum of group g, descending: the singular values of the concatenation
  /// [X_(i_1) | ... | X_(i_k)] of the mode-i matricizations (N_g x prod_{m != i} N_m each) of the tensor, over the
  /// modes i of the group; for a one-mode group, the singular values of that mode's matricization.
  std::vector<std::vector<Scalar>> group_singular_values;
  /// tt_singular_values[e - 1]: the singular values at the interior bond e = 1..d-1 of the tensor after the Tucker
  /// truncation (d - 1 entries, descending).
  std::vector<std::vector<Scalar>> tt_singular_values;
};

namespace impl {

/// The group caps of `options`: d entries equal within every group, or none.
inline void check_group_caps(std::string const& where, T3SvdOptions const& options, ModeSharing const& sharing) {
  if (options.max_tucker_ranks.empty()) return;
  for (auto const& group : sharing.groups()) {
    for (std::size_t i : group) {
      if (options.max_tucker_ranks[i] != options.max_tucker_ranks[group.front()]) {
        throw InvalidArgument(concat(
            where, ": modes ", group.front(), " and ", i, " share a factor but max_tucker_ranks gives them ",
            options.max_tucker_ranks[group.front()], " and ", options.max_tucker_ranks[i], "; a group has one rank"));
      }
    }
  }
}

/// C (m x n) = A (m x k) B (k x n), row-major, from zero.
template <class Scalar>
void host_product(int m, int k, int n, Scalar const* a, Scalar const* b, Scalar* c) {
  for (int row = 0; row < m; ++row)
    for (int col = 0; col < n; ++col) {
      Scalar acc = 0;
      for (int l = 0; l < k; ++l) acc += a[std::size_t(row) * k + l] * b[std::size_t(l) * n + col];
      c[std::size_t(row) * n + col] = acc;
    }
}

template <class Scalar>
bool host_equal(HostMatrix<Scalar> const& a, HostMatrix<Scalar> const& b) {
  if (a.extent(0) != b.extent(0) || a.extent(1) != b.extent(1)) return false;
  for (std::size_t e = 0; e < a.span(); ++e) {
    if (a.data()[e] != b.data()[e]) return false;
  }
  return true;
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
GroupedT3SvdResult<Scalar, MemorySpace> grouped_t3_svd_impl(ExecutionSpace const& space,
                                                            TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                            ModeSharing const& sharing, T3SvdOptions const& options) {
  std::size_t const d = x.n_modes();
  auto h = to_host_cores(space, x);
  host_squash_tails(h);
  host_up_orthogonalize(h);
  host_right_sweep(h);
  // The centre core of every mode, all of the same untruncated tensor: with orthonormal U_i and orthogonal
  // interfaces, X_(i) X_(i)^T = U_i^T M_i M_i^T U_i, M_i[u, (a,b)] = C_i[a,u,b].
  std::vector<HostCore<Scalar>> centres(d);
  for (std::size_t i = 0; i < d; ++i) {
    centres[i] = h.g[i];
    if (i + 1 < d) host_left_step(h, i);
  }
  GroupedT3SvdResult<Scalar, MemorySpace> result;
  for (std::size_t gi = 0; gi < sharing.n_groups(); ++gi) {
    auto const& modes = sharing.groups()[gi];
    int const big_n = int(sharing.group_shape(gi));
    // The distinct factors of the group (a tied group has one): stacking a factor twice would only add directions
    // without signal to the basis.
    std::vector<std::size_t> distinct, which;
    for (std::size_t i : modes) {
      std::size_t j = 0;
      while (j < distinct.size() && !host_equal(h.u[distinct[j]], h.u[i])) ++j;
      if (j == distinct.size()) distinct.push_back(i);
      which.push_back(j);
    }
    // An orthonormal basis (m x N_g, rows) of the span of the factors' rows, and each factor's coordinates in it:
    // U_j^T = basis^T coef_j.
    int m = 0;
    std::vector<Scalar> basis;
    std::vector<std::vector<Scalar>> coef(distinct.size());
    if (distinct.size() == 1) {
      auto const u = h.u[distinct[0]];
      m = int(u.extent(0));
      basis.assign(u.data(), u.data() + u.span());
      coef[0].assign(std::size_t(m) * m, Scalar(0));
      for (int o = 0; o < m; ++o) coef[0][std::size_t(o) * m + o] = Scalar(1);
    } else {
      int total = 0;
      for (std::size_t j : distinct) total += int(h.u[j].extent(0));
      std::vector<Scalar> stacked(std::size_t(big_n) * total), q, z;
      int offset = 0;
      for (std::size_t j : distinct) {
        auto const u = h.u[j];
        for (int row = 0; row < int(u.extent(0)); ++row)
          for (int c = 0; c < big_n; ++c) stacked[std::size_t(c) * total + offset + row] = u(row, c);
        offset += int(u.extent(0));
      }
      m = host_thin_qr(big_n, total, stacked.data(), q, z);
      basis.assign(std::size_t(m) * big_n, Scalar(0));
      for (int o = 0; o < m; ++o)
        for (int c = 0; c < big_n; ++c) basis[std::size_t(o) * big_n + c] = q[std::size_t(c) * m + o];
      offset = 0;
      for (std::size_t j = 0; j < distinct.size(); ++j) {
        int const nj = int(h.u[distinct[j]].extent(0));
        coef[j].assign(std::size_t(m) * nj, Scalar(0));
        for (int o = 0; o < m; ++o)
          for (int u = 0; u < nj; ++u) coef[j][std::size_t(o) * nj + u] = z[std::size_t(o) * total + offset + u];
        offset += nj;
      }
    }
    // K = [coef_{i_1} M_{i_1} | ... ]: basis^T K is the concatenation of the group's matricizations up to an
    // orthogonal factor on the right, so K has the group spectrum and the left singular vectors in basis coordinates.
    int cols = 0;
    for (std::size_t i : modes) cols += int(centres[i].extent(0) * centres[i].extent(2));
    std::vector<Scalar> k_matrix(std::size_t(m) * cols);
    int col0 = 0;
    for (std::size_t l = 0; l < modes.size(); ++l) {
      auto const c = centres[modes[l]];
      int const ra = int(c.extent(0)), n = int(c.extent(1)), rb = int(c.extent(2));
      std::vector<Scalar> mi(std::size_t(n) * ra * rb), block(std::size_t(m) * ra * rb);
      for (int a = 0; a < ra; ++a)
        for (int u = 0; u < n; ++u)
          for (int b = 0; b < rb; ++b) mi[std::size_t(u) * ra * rb + std::size_t(a) * rb + b] = c(a, u, b);
      host_product(m, n, ra * rb, coef[which[l]].data(), mi.data(), block.data());
      for (int o = 0; o < m; ++o)
        for (int e = 0; e < ra * rb; ++e)
          k_matrix[std::size_t(o) * cols + col0 + e] = block[std::size_t(o) * ra * rb + e];
      col0 += ra * rb;
    }
    std::vector<Scalar> p, sigma, qt;
    int const k = host_thin_svd(m, cols, k_matrix.data(), p, sigma, qt);
    long long const cap = options.max_tucker_ranks.empty() ? 0 : options.max_tucker_ranks[modes.front()];
    int const keep = kept_count(sigma, cap, options.rtol);
    result.group_singular_values.push_back(sigma);
    // The shared factor F = P_keep^T basis; each mode's core takes A_i = F U_i^T = P_keep^T coef_i on its Tucker
    // index, which projects every mode of the group onto the kept subspace.
    std::vector<Scalar> pt(std::size_t(keep) * m);
    for (int o = 0; o < keep; ++o)
      for (int row = 0; row < m; ++row) pt[std::size_t(o) * m + row] = p[std::size_t(row) * k + o];
    auto factor = host_matrix<Scalar>(keep, big_n);
    host_product(keep, m, big_n, pt.data(), basis.data(), factor.data());
    std::vector<std::vector<Scalar>> a_of(distinct.size());
    for (std::size_t j = 0; j < distinct.size(); ++j) {
      int const nj = int(h.u[distinct[j]].extent(0));
      a_of[j].resize(std::size_t(keep) * nj);
      host_product(keep, m, nj, pt.data(), coef[j].data(), a_of[j].data());
    }
    for (std::size_t l = 0; l < modes.size(); ++l) {
      std::size_t const i = modes[l];
      auto const g = h.g[i];
      int const ra = int(g.extent(0)), n = int(g.extent(1)), rb = int(g.extent(2));
      auto const& a = a_of[which[l]];
      auto ng = host_core<Scalar>(ra, keep, rb);
      for (int r0 = 0; r0 < ra; ++r0)
        for (int o = 0; o < keep; ++o)
          for (int r1 = 0; r1 < rb; ++r1) {
            Scalar acc = 0;
            for (int u = 0; u < n; ++u) acc += a[std::size_t(o) * n + u] * g(r0, u, r1);
            ng(r0, o, r1) = acc;
          }
      h.g[i] = ng;
      h.u[i] = factor;
    }
  }
  // The Tucker factors are final; the bonds are truncated on the projected tensor as t3_svd truncates them.
  host_right_sweep(h);
  for (std::size_t i = 0; i + 1 < d; ++i) {
    long long const tt_cap = options.max_tt_ranks.empty() ? 0 : options.max_tt_ranks[i + 1];
    result.tt_singular_values.push_back(host_truncate_bond(h, i, tt_cap, options.rtol));
  }
  // One device allocation per group, referenced from every mode of the group: tied by construction.
  using T3 = TuckerTensorTrain<Scalar, MemorySpace>;
  std::vector<typename T3::tucker_core_type> us(d);
  std::vector<typename T3::tt_core_type> gs;
  for (std::size_t gi = 0; gi < sharing.n_groups(); ++gi) {
    auto const& modes = sharing.groups()[gi];
    auto const u = device_copy<MemorySpace>(space, h.u[modes.front()],
                                            "t3k::grouped_t3_svd::tucker_core_" + std::to_string(modes.front()));
    for (std::size_t i : modes) us[i] = u;
  }
  for (std::size_t i = 0; i < d; ++i) {
    gs.push_back(device_copy<MemorySpace>(space, h.g[i], "t3k::grouped_t3_svd::tt_core_" + std::to_string(i)));
  }
  space.fence();
  result.t3 = T3(std::move(us), std::move(gs));
  return result;
}

}  // namespace impl

/// Grouped T3-SVD: truncates a T3 to a model whose Tucker factors are shared within the groups of `sharing`, and
/// returns it tied (docs/math.md, "Shared Tucker factors").
///
/// 1. Squash tails, orthonormalize the Tucker factors and sweep the TT cores so that the centre core C_i of every
///    mode is known for the same, untruncated tensor X.
/// 2. Per group g: the group spectrum, the singular values of [X_(i_1) | ... | X_(i_k)], computed from the factors
///    and the centre cores (an SVD with at most min(N_g, sum_i n_i) rows and sum_i r_i r_{i+1} columns, never the
///    dense tensor); keep n'_g leading left singular vectors as the shared factor, and project every mode of the
///    group onto them.
/// 3. Truncate the TT bonds of the projected tensor left to right, as t3_svd does (its step (b)).
///
/// The number kept at each step is min(cap, #{sigma > rtol sigma_max}) (the tolerance only when rtol > 0), at least
/// one, and never more than the structural count of the SVD, so a group's rank stays within the group ceiling
/// n'_g <= min(N_g, sum over its modes i of min(N_g, r_i r_{i+1})) and is one rank for the whole group. The errors
/// are orthogonal: ||X - Y||^2 = ||X - X'||^2 + (the discarded TT sigma^2), with X' the projected tensor and
/// ||X - X'||^2 <= (the discarded group sigma^2). Since the best shared model of these ranks is at least
/// sqrt(discarded_g^2 / k_g) away for every group of k_g modes and at least every bond's discarded tail of X away,
/// the result is within sqrt(2d - 1) of the best. Without caps and with rtol = 0 nothing is discarded: for a T3 whose
/// group factors span a common space of its Tucker rank (a tied T3), the result is X in a tied orthogonal gauge.
/// For a T3 whose group factors differ, the result is its best shared model: the way into the shared format.
///
/// A trivial sharing (every mode its own group) runs t3_svd itself, bit for bit, and group_singular_values are its
/// tucker_singular_values. Those are computed after the truncations of the modes and bonds before each mode, where
/// step 2 above computes every spectrum of the untruncated X; without truncation the two agree.
///
/// \param space execution space for the copies
/// \param x the T3 (any ranks; boundary ranks are squashed; its mode shapes are the sharing's, its group factors need
/// not be tied nor of equal ranks)
/// \param sharing the groups
/// \param options rank caps and relative tolerance (T3SvdOptions); max_tucker_ranks equal within every group
/// \return the truncated tied T3 and the spectra
/// **Blocking:** yes (host LAPACK; fences `space`).
/// **Throws:** DimensionMismatch when the mode shapes differ from the sharing's or a cap list has the wrong length;
/// InvalidArgument for a cap <= 0, caps that differ within a group ("t3k::grouped_t3_svd: modes 0 and 2 share a
/// factor but max_tucker_ranks gives them 3 and 4; a group has one rank"), a negative or non-finite rtol, or a
/// LAPACK failure (non-finite cores).
template <class ExecutionSpace, class Scalar, class MemorySpace>
GroupedT3SvdResult<Scalar, MemorySpace> grouped_t3_svd(ExecutionSpace const& space,
                                                       TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                       ModeSharing const& sharing, T3SvdOptions const& options = {}) {
  impl::check_execution_space<ExecutionSpace>();
  std::string const where = "t3k::grouped_t3_svd";
  if (x.mode_shapes() != sharing.mode_shapes()) {
    throw DimensionMismatch(impl::concat(where, ": the T3 has mode shapes ", impl::shape_string(x.mode_shapes()),
                                         ", the sharing is for ", impl::shape_string(sharing.mode_shapes())));
  }
  impl::check_t3_svd_options(where, options, x.n_modes());
  impl::check_group_caps(where, options, sharing);
  impl::ProfilingRegion region(where);
  if (sharing.is_trivial()) {
    auto r = impl::t3_svd_impl(space, x, options);
    return {r.t3, std::move(r.tucker_singular_values), std::move(r.tt_singular_values)};
  }
  return impl::grouped_t3_svd_impl(space, x, sharing, options);
}

}  // namespace t3k
