#pragma once
// The Jacobian of the map from core entries to the dense tensor, as exact dense columns (the tensor is linear in each
// core, so a column is the dense tensor with one core replaced by a unit core), for tied parametrizations too, and
// the singular values of a matrix of such columns: the references of the manifold dimension and of the tied tangent
// space.

#include "reference.hpp"

#include "t3k/algorithms/impl/host/host_lapack.hpp"
#include "t3k/core/mode_sharing.hpp"

#include <cstddef>
#include <vector>

namespace t3k_test {

/// The exact Jacobian columns of the tied parametrization at x (reference dense sums, no library kernels).
inline std::vector<std::vector<double>> tied_jacobian_columns(HostT3 const& x, t3k::ModeSharing const& sharing) {
  std::vector<std::vector<double>> columns;
  for (auto const& group : sharing.groups()) {
    std::size_t const first = group.front();
    for (std::size_t e = 0; e < x.u[first].size(); ++e) {
      std::vector<double> column;
      for (std::size_t m : group) {
        auto y = x;
        y.u[m].assign(y.u[m].size(), 0.0);
        y.u[m][e] = 1.0;
        auto part = dense_tensor(y);
        if (column.empty()) column.assign(part.size(), 0.0);
        for (std::size_t k = 0; k < part.size(); ++k) column[k] += part[k];
      }
      columns.push_back(column);
    }
  }
  for (std::size_t i = 0; i < x.g.size(); ++i) {
    for (std::size_t e = 0; e < x.g[i].size(); ++e) {
      auto y = x;
      y.g[i].assign(y.g[i].size(), 0.0);
      y.g[i][e] = 1.0;
      columns.push_back(dense_tensor(y));
    }
  }
  return columns;
}

/// Left singular vectors and singular values of the matrix with the given columns.
struct ColumnSvd {
  std::vector<double> p, sigma;
  int rows = 0, k = 0;
};

inline ColumnSvd column_svd(std::vector<std::vector<double>> const& columns) {
  ColumnSvd out;
  out.rows = int(columns.front().size());
  int const cols = int(columns.size());
  std::vector<double> a(std::size_t(out.rows) * cols), qt;
  for (int r = 0; r < out.rows; ++r)
    for (int c = 0; c < cols; ++c) a[std::size_t(r) * cols + c] = columns[std::size_t(c)][std::size_t(r)];
  out.k = t3k::impl::host_thin_svd(out.rows, cols, a.data(), out.p, out.sigma, qt);
  return out;
}

// Generic cores of these sizes have their smallest nonzero singular value far above 1e-9 of the largest, and the
// zero ones at rounding level (1e-15 relative).
inline std::size_t numerical_rank(ColumnSvd const& s) {
  std::size_t rank = 0;
  while (rank < s.sigma.size() && s.sigma[rank] > 1e-9 * s.sigma[0]) ++rank;
  return rank;
}

}  // namespace t3k_test
