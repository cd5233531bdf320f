#pragma once
/// \file host_lapack.hpp
/// Thin host LAPACK wrappers (QR and SVD of small row-major matrices) for the orthogonalization sweeps, the frame
/// construction and the T3-SVD. Not API.
///
/// LAPACK is column-major and T3K's host buffers are row-major (LayoutRight). The wrappers below take and return
/// row-major data and do the transposition themselves with an explicit copy into a column-major work buffer, so
/// that no caller has to reason about it. The matrices are small (a core unfolding), so the copies are negligible.
///
/// The Fortran symbols are declared here (OpenBLAS and reference LAPACK export them with a trailing underscore and
/// 32-bit integers). Character arguments carry the hidden trailing length arguments that gfortran expects.

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "t3k/core/error.hpp"

extern "C" {
void dgeqrf_(int const* m, int const* n, double* a, int const* lda, double* tau, double* work, int const* lwork,
             int* info);
void sgeqrf_(int const* m, int const* n, float* a, int const* lda, float* tau, float* work, int const* lwork,
             int* info);
void dorgqr_(int const* m, int const* n, int const* k, double* a, int const* lda, double const* tau, double* work,
             int const* lwork, int* info);
void sorgqr_(int const* m, int const* n, int const* k, float* a, int const* lda, float const* tau, float* work,
             int const* lwork, int* info);
void dgesvd_(char const* jobu, char const* jobvt, int const* m, int const* n, double* a, int const* lda, double* s,
             double* u, int const* ldu, double* vt, int const* ldvt, double* work, int const* lwork, int* info,
             std::size_t jobu_len, std::size_t jobvt_len);
void sgesvd_(char const* jobu, char const* jobvt, int const* m, int const* n, float* a, int const* lda, float* s,
             float* u, int const* ldu, float* vt, int const* ldvt, float* work, int const* lwork, int* info,
             std::size_t jobu_len, std::size_t jobvt_len);
}

namespace t3k {
namespace impl {

/// Overloads on the scalar type: column-major LAPACK calls, exactly as in the Fortran interface.
inline void lapack_geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int& info) {
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
}
inline void lapack_geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int& info) {
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
}
inline void lapack_orgqr(int m, int n, int k, double* a, int lda, double const* tau, double* work, int lwork,
                         int& info) {
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
}
inline void lapack_orgqr(int m, int n, int k, float* a, int lda, float const* tau, float* work, int lwork, int& info) {
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
}
inline void lapack_gesvd(char jobu, char jobvt, int m, int n, double* a, int lda, double* s, double* u, int ldu,
                         double* vt, int ldvt, double* work, int lwork, int& info) {
  dgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, &info, 1, 1);
}
inline void lapack_gesvd(char jobu, char jobvt, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt,
                         int ldvt, float* work, int lwork, int& info) {
  sgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, &info, 1, 1);
}

/// Internal: LAPACK reported an error. A non-zero info on valid input means a broken LAPACK or non-finite input.
inline void lapack_check(char const* routine, int info) {
  if (info != 0) {
    throw InvalidArgument(
        concat("t3k: LAPACK ", routine, " failed with info = ", info, " (non-finite input, or a LAPACK error)"));
  }
}

/// The workspace size LAPACK asked for, rounded up (a float query may be rounded down in its own type).
template <class Scalar>
int workspace_size(Scalar query) {
  return static_cast<int>(double(query) * (1.0 + 1e-6)) + 1;
}

/// Thin QR of a row-major m x n matrix: A = Q Z with Q (m x k, orthonormal columns) and Z (k x n, upper
/// trapezoidal), k = min(m, n). Q and Z are returned row-major. No pivoting and no rank truncation: a rank-deficient
/// A still gives k columns (docs/math.md: QR does not truncate). Returns k.
template <class Scalar>
int host_thin_qr(int m, int n, Scalar const* a, std::vector<Scalar>& q, std::vector<Scalar>& z) {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value,
                "t3k::impl::host_thin_qr: Scalar must be float or double");
  int const k = std::min(m, n);
  // Column-major copy: element (r, c) at r + c * m.
  std::vector<Scalar> col(std::size_t(m) * std::size_t(n));
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) col[std::size_t(r) + std::size_t(c) * m] = a[std::size_t(r) * n + c];
  std::vector<Scalar> tau(std::size_t(std::max(k, 1)));
  int info = 0;
  Scalar query = 0;
  int const lda = std::max(m, 1);
  lapack_geqrf(m, n, col.data(), lda, tau.data(), &query, -1, info);
  lapack_check("geqrf (workspace query)", info);
  int lwork = std::max(workspace_size(query), std::max(n, 1));
  std::vector<Scalar> work(static_cast<std::size_t>(lwork));
  lapack_geqrf(m, n, col.data(), lda, tau.data(), work.data(), lwork, info);
  lapack_check("geqrf", info);
  z.assign(std::size_t(k) * std::size_t(n), Scalar(0));
  for (int r = 0; r < k; ++r)
    for (int c = r; c < n; ++c) z[std::size_t(r) * n + c] = col[std::size_t(r) + std::size_t(c) * m];
  // Q: the first k columns of the m x m reflector product, formed in place in the leading m x k block.
  lapack_orgqr(m, k, k, col.data(), lda, tau.data(), &query, -1, info);
  lapack_check("orgqr (workspace query)", info);
  lwork = std::max(workspace_size(query), std::max(k, 1));
  work.resize(std::size_t(lwork));
  lapack_orgqr(m, k, k, col.data(), lda, tau.data(), work.data(), lwork, info);
  lapack_check("orgqr", info);
  q.assign(std::size_t(m) * std::size_t(k), Scalar(0));
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < k; ++c) q[std::size_t(r) * k + c] = col[std::size_t(r) + std::size_t(c) * m];
  return k;
}

/// Thin SVD of a row-major m x n matrix: A = P diag(sigma) Qt with P (m x k), sigma (k, descending, >= 0) and
/// Qt (k x n), k = min(m, n). P and Qt are returned row-major. Returns k.
template <class Scalar>
int host_thin_svd(int m, int n, Scalar const* a, std::vector<Scalar>& p, std::vector<Scalar>& sigma,
                  std::vector<Scalar>& qt) {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value,
                "t3k::impl::host_thin_svd: Scalar must be float or double");
  int const k = std::min(m, n);
  std::vector<Scalar> col(std::size_t(m) * std::size_t(n));
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) col[std::size_t(r) + std::size_t(c) * m] = a[std::size_t(r) * n + c];
  sigma.assign(std::size_t(k), Scalar(0));
  std::vector<Scalar> ucol(std::size_t(m) * std::size_t(k)), vtcol(std::size_t(k) * std::size_t(n));
  int const lda = std::max(m, 1), ldu = std::max(m, 1), ldvt = std::max(k, 1);
  int info = 0;
  Scalar query = 0;
  lapack_gesvd('S', 'S', m, n, col.data(), lda, sigma.data(), ucol.data(), ldu, vtcol.data(), ldvt, &query, -1, info);
  lapack_check("gesvd (workspace query)", info);
  int const lwork = std::max(workspace_size(query), 5 * std::max(std::max(m, n), 1));
  std::vector<Scalar> work(static_cast<std::size_t>(lwork));
  lapack_gesvd('S', 'S', m, n, col.data(), lda, sigma.data(), ucol.data(), ldu, vtcol.data(), ldvt, work.data(), lwork,
               info);
  lapack_check("gesvd", info);
  p.assign(std::size_t(m) * std::size_t(k), Scalar(0));
  qt.assign(std::size_t(k) * std::size_t(n), Scalar(0));
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < k; ++c) p[std::size_t(r) * k + c] = ucol[std::size_t(r) + std::size_t(c) * ldu];
  for (int r = 0; r < k; ++r)
    for (int c = 0; c < n; ++c) qt[std::size_t(r) * n + c] = vtcol[std::size_t(r) + std::size_t(c) * ldvt];
  return k;
}

}  // namespace impl
}  // namespace t3k
