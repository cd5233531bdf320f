#pragma once
/// \file t3_svd.hpp
/// T3-SVD: rank truncation of a T3 by sequential SVDs (docs/math.md), and the reduction of a T3 to its
/// minimal (numerical) ranks.
///
/// The cores are small, so the factorizations run on the host with LAPACK: the T3 is copied to host memory once,
/// truncated there and copied back into its memory space (see t3k/algorithms/orthogonalize.hpp).

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "t3k/algorithms/impl/host/host_lapack.hpp"
#include "t3k/algorithms/orthogonalize.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/tucker_tensor_train.hpp"
#include "t3k/core/uniform_tucker_tensor_train.hpp"

namespace t3k {

/// Truncation targets of t3_svd.
struct T3SvdOptions {
  /// Caps on the Tucker ranks n'_i: empty = no cap, otherwise d entries, each >= 1.
  std::vector<long long> max_tucker_ranks;
  /// Caps on the TT ranks r'_e: empty = no cap, otherwise d + 1 entries (one per bond, like tt_ranks()), each >= 1.
  /// The boundary entries (e = 0 and e = d) are checked but otherwise ignored: the result always has boundary
  /// ranks 1 (tails are squashed), so that the list of another T3's tt_ranks() can be passed as it is.
  std::vector<long long> max_tt_ranks;
  /// Relative tolerance: keep the singular values sigma > rtol * sigma_max of each unfolding (at least one).
  /// 0 (the default) applies no tolerance, only the caps. Must be finite and >= 0.
  double rtol = 0;
};

/// The truncated T3 and every singular value computed on the way (before truncation).
template <class Scalar, class MemorySpace>
struct T3SvdResult {
  /// The truncated T3 (boundary TT ranks 1, orthonormal Tucker rows, TT cores 0..d-2 left-orthogonal).
  TuckerTensorTrain<Scalar, MemorySpace> t3;
  /// tucker_singular_values[i]: all singular values of the outer unfolding of the centre core at mode i
  /// (descending), min(r_i r_{i+1}, nU_i) values, computed after the truncations of the modes and bonds before it.
  std::vector<std::vector<Scalar>> tucker_singular_values;
  /// tt_singular_values[e - 1]: all singular values at the interior bond e = 1..d-1 (d - 1 entries, descending).
  std::vector<std::vector<Scalar>> tt_singular_values;
};

/// t3_svd of a uniform T3: the same numbers, the truncated T3 in uniform form.
template <class Scalar, class MemorySpace>
struct UniformT3SvdResult {
  UniformTuckerTensorTrain<Scalar, MemorySpace> t3;         ///< the truncated T3
  std::vector<std::vector<Scalar>> tucker_singular_values;  ///< singular values of each Tucker unfolding, descending
  std::vector<std::vector<Scalar>> tt_singular_values;      ///< singular values of each TT bond, descending
};

namespace impl {

inline void check_rank_caps(std::string const& where, char const* name, std::vector<long long> const& caps,
                            std::size_t expected, char const* expected_text) {
  if (caps.empty()) return;
  if (caps.size() != expected) {
    throw DimensionMismatch(concat(where, ": ", name, " has ", caps.size(), " entries, expected ", expected_text, " = ",
                                   expected, " (or none for no cap)"));
  }
  for (std::size_t k = 0; k < caps.size(); ++k) {
    if (caps[k] <= 0) {
      throw InvalidArgument(concat(where, ": ", name, "[", k, "] is ", caps[k], "; ranks must be >= 1"));
    }
  }
}

inline void check_t3_svd_options(std::string const& where, T3SvdOptions const& options, std::size_t d) {
  check_rank_caps(where, "max_tucker_ranks", options.max_tucker_ranks, d, "d");
  check_rank_caps(where, "max_tt_ranks", options.max_tt_ranks, d + 1, "d + 1");
  if (!(options.rtol >= 0) || !std::isfinite(options.rtol)) {
    throw InvalidArgument(concat(where, ": rtol is ", options.rtol, "; it must be finite and >= 0"));
  }
}

/// How many of the descending singular values `sigma` to keep: all, or those > rtol * sigma_max when rtol > 0,
/// at most `cap` (cap <= 0: none), and at least one.
template <class Scalar>
int kept_count(std::vector<Scalar> const& sigma, long long cap, double rtol) {
  int keep = int(sigma.size());
  if (rtol > 0) {
    double const threshold = rtol * double(sigma[0]);
    keep = 0;
    while (keep < int(sigma.size()) && double(sigma[std::size_t(keep)]) > threshold) ++keep;
  }
  if (cap > 0 && keep > cap) keep = int(cap);
  return keep < 1 ? 1 : keep;
}

/// TT truncation at bond i + 1 (docs/math.md): the (r_i n_i) x r_{i+1} unfolding of G_i = P diag(sigma) Qt; keep
/// kept_count(sigma, cap, rtol) triplets: G_i <- P, G_{i+1} <- diag(sigma) Qt G_{i+1}. Returns all of sigma.
template <class Scalar>
std::vector<Scalar> host_truncate_bond(HostT3Cores<Scalar>& h, std::size_t i, long long cap, double rtol) {
  auto const g = h.g[i];
  int const ra = int(g.extent(0)), nk = int(g.extent(1)), rb = int(g.extent(2));
  std::vector<Scalar> p2, sigma2, qt2;
  int const k2 = host_thin_svd(ra * nk, rb, g.data(), p2, sigma2, qt2);
  int const rk = kept_count(sigma2, cap, rtol);
  auto left = host_core<Scalar>(ra, nk, rk);
  for (int row = 0; row < ra * nk; ++row)
    for (int c = 0; c < rk; ++c) left.data()[std::size_t(row) * rk + c] = p2[std::size_t(row) * k2 + c];
  auto const next = h.g[i + 1];
  int const cols = int(next.extent(1) * next.extent(2));
  auto nn = host_core<Scalar>(rk, next.extent(1), next.extent(2));
  for (int x = 0; x < rk; ++x)
    for (int c = 0; c < cols; ++c) {
      Scalar acc = 0;
      for (int b = 0; b < rb; ++b) acc += qt2[std::size_t(x) * rb + b] * next.data()[std::size_t(b) * cols + c];
      nn.data()[std::size_t(x) * cols + c] = sigma2[std::size_t(x)] * acc;
    }
  h.g[i] = left;
  h.g[i + 1] = nn;
  return sigma2;
}

template <class ExecutionSpace, class Scalar, class MemorySpace>
T3SvdResult<Scalar, MemorySpace> t3_svd_impl(ExecutionSpace const& space,
                                             TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                             T3SvdOptions const& options) {
  std::size_t const d = x.n_modes();
  auto h = to_host_cores(space, x);
  host_squash_tails(h);
  host_up_orthogonalize(h);
  host_right_sweep(h);  // the centre is core 0; cores 1..d-1 are right-orthogonal
  T3SvdResult<Scalar, MemorySpace> result;
  for (std::size_t i = 0; i < d; ++i) {
    // (a) Tucker truncation: M[(a,b),u] = G_i[a,u,b] = P diag(sigma) Qt; G_i <- P diag(sigma), U_i <- Qt U_i.
    auto const g = h.g[i];
    auto const u = h.u[i];
    int const ra = int(g.extent(0)), n = int(g.extent(1)), rb = int(g.extent(2)), big_n = int(u.extent(1));
    std::vector<Scalar> m(std::size_t(ra) * rb * n), p, sigma, qt;
    for (int a = 0; a < ra; ++a)
      for (int v = 0; v < n; ++v)
        for (int b = 0; b < rb; ++b) m[(std::size_t(a) * rb + b) * n + v] = g(a, v, b);
    int const k = host_thin_svd(ra * rb, n, m.data(), p, sigma, qt);
    long long const tucker_cap = options.max_tucker_ranks.empty() ? 0 : options.max_tucker_ranks[i];
    int const nk = kept_count(sigma, tucker_cap, options.rtol);
    result.tucker_singular_values.push_back(sigma);
    auto ng = host_core<Scalar>(ra, nk, rb);
    for (int a = 0; a < ra; ++a)
      for (int o = 0; o < nk; ++o)
        for (int b = 0; b < rb; ++b) ng(a, o, b) = p[(std::size_t(a) * rb + b) * k + o] * sigma[std::size_t(o)];
    auto nu = host_matrix<Scalar>(nk, big_n);
    for (int o = 0; o < nk; ++o)
      for (int j = 0; j < big_n; ++j) {
        Scalar acc = 0;
        for (int v = 0; v < n; ++v) acc += qt[std::size_t(o) * n + v] * u(v, j);
        nu(o, j) = acc;
      }
    h.u[i] = nu;
    h.g[i] = ng;
    if (i + 1 == d) break;
    // (b) TT truncation at bond i+1.
    long long const tt_cap = options.max_tt_ranks.empty() ? 0 : options.max_tt_ranks[i + 1];
    result.tt_singular_values.push_back(host_truncate_bond(h, i, tt_cap, options.rtol));
  }
  result.t3 = from_host_cores<MemorySpace>(space, h, "t3k::t3_svd");
  return result;
}

}  // namespace impl

/// T3-SVD with sequential truncation (docs/math.md): squash tails; QR of every U_i^T (U_i <- Q^T, Z into
/// G_i); right-orthogonalize by LQ from i = d-1 down to 1; then for i = 0..d-1: (a) SVD of the outer unfolding
/// M[(a,b),u] of the centre core, keep n'_i triplets: core <- P diag(sigma), U_i <- Qt U_i; (b) if i < d-1, SVD of
/// the left unfolding (a n'_i) x b, keep r'_{i+1}: core <- P, core_{i+1} <- diag(sigma) Qt core_{i+1}.
///
/// The number kept is min(cap, #{sigma > rtol sigma_max}) (the tolerance only when rtol > 0), at least one. The
/// successive truncation errors are mutually orthogonal, so ||X - t3_svd(X).t3||_F^2 equals the sum of the
/// squares of all discarded singular values (up to rounding). Without caps and with rtol = 0 nothing is discarded
/// and the result is X in an orthogonal gauge with ranks nU_i <= min(n_i, N_i).
///
/// \param space execution space for the copies   \param x the T3 (any ranks; boundary ranks are squashed)
/// \param options rank caps and relative tolerance (see T3SvdOptions)
/// \return the truncated T3 and all singular values
/// **Blocking:** yes (host LAPACK; fences `space`).
/// **Throws:** DimensionMismatch when a cap list has the wrong length ("t3k::t3_svd: max_tt_ranks has 3 entries,
/// expected d + 1 = 5 ..."); InvalidArgument for a cap <= 0 ("t3k::t3_svd: max_tt_ranks[2] is -1; ranks must be
/// >= 1"), a negative or non-finite rtol, or a LAPACK failure (non-finite cores).
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3SvdResult<Scalar, MemorySpace> t3_svd(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                        T3SvdOptions const& options = {}) {
  impl::check_execution_space<ExecutionSpace>();
  impl::check_t3_svd_options("t3k::t3_svd", options, x.n_modes());
  impl::ProfilingRegion region("t3k::t3_svd");
  return impl::t3_svd_impl(space, x, options);
}

/// t3_svd of a T3 in uniform (padded) form: the live blocks are truncated exactly as by the ragged overload, and the
/// truncated T3 is returned padded again (to_uniform). **Blocking:** yes. **Throws:** as the ragged overload.
template <class ExecutionSpace, class Scalar, class MemorySpace>
UniformT3SvdResult<Scalar, MemorySpace> t3_svd(ExecutionSpace const& space,
                                               UniformTuckerTensorTrain<Scalar, MemorySpace> const& x,
                                               T3SvdOptions const& options = {}) {
  impl::check_execution_space<ExecutionSpace>();
  impl::check_t3_svd_options("t3k::t3_svd", options, x.n_modes());
  impl::ProfilingRegion region("t3k::t3_svd");
  auto r = impl::t3_svd_impl(space, to_ragged(space, x), options);
  UniformT3SvdResult<Scalar, MemorySpace> out;
  out.t3 = to_uniform(space, r.t3);
  out.tucker_singular_values = std::move(r.tucker_singular_values);
  out.tt_singular_values = std::move(r.tt_singular_values);
  space.fence();
  return out;
}

/// The default tolerance of reduce_to_minimal_ranks: 100 epsilon of the scalar type, above the rounding noise of
/// the orthogonalizations (a few epsilon times the largest singular value) and far below any meaningful value.
template <class Scalar>
constexpr double default_minimal_rank_rtol() {
  return 100.0 * double(std::numeric_limits<Scalar>::epsilon());
}

/// X with numerically zero singular values removed: t3_svd without caps and with the relative tolerance `rtol`
/// (singular values <= rtol sigma_max of each unfolding are dropped). For a T3 written with padded or redundant
/// ranks this recovers the minimal ranks; the tensor changes only at the level of rtol.
/// \param space execution space the kernels run on
/// \param x the T3
/// \param rtol relative tolerance, default 100 epsilon of Scalar; must be finite and >= 0
/// **Blocking:** yes. **Throws:** InvalidArgument for a negative or non-finite rtol.
template <class ExecutionSpace, class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> reduce_to_minimal_ranks(ExecutionSpace const& space,
                                                               TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                               double rtol = default_minimal_rank_rtol<Scalar>()) {
  impl::check_execution_space<ExecutionSpace>();
  T3SvdOptions options;
  options.rtol = rtol;
  impl::check_t3_svd_options("t3k::reduce_to_minimal_ranks", options, x.n_modes());
  impl::ProfilingRegion region("t3k::reduce_to_minimal_ranks");
  return impl::t3_svd_impl(space, x, options).t3;
}

/// reduce_to_minimal_ranks of a T3 in uniform form; the result is padded again. **Blocking:** yes.
/// **Throws:** InvalidArgument for a negative or non-finite rtol.
template <class ExecutionSpace, class Scalar, class MemorySpace>
UniformTuckerTensorTrain<Scalar, MemorySpace> reduce_to_minimal_ranks(
    ExecutionSpace const& space, UniformTuckerTensorTrain<Scalar, MemorySpace> const& x,
    double rtol = default_minimal_rank_rtol<Scalar>()) {
  auto y = reduce_to_minimal_ranks(space, to_ragged(space, x), rtol);
  auto out = to_uniform(space, y);
  space.fence();
  return out;
}

}  // namespace t3k
