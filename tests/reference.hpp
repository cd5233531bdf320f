#pragma once
// Independent brute-force references on tiny shapes: dense tensors by explicit multi-index sums and probe jets by
// the subset expansion of docs/math.md. Host only, plain std::vector, no library code.

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

namespace t3k_test {

/// Host copy of a core in plain nested-index form.
struct HostT3 {
  std::vector<std::size_t> shapes, n, r;
  std::vector<std::vector<double>> u;  // u[i][q * N_i + j]
  std::vector<std::vector<double>> g;  // g[i][(a * n_i + q) * r_{i+1} + b]
};

template <class T3>
HostT3 host_t3(T3 const& x) {
  HostT3 h;
  h.shapes = x.mode_shapes();
  h.n = x.tucker_ranks();
  h.r = x.tt_ranks();
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x.tucker_core(i));
    auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x.tt_core(i));
    std::vector<double> uu, gg;
    for (std::size_t q = 0; q < u.extent(0); ++q)
      for (std::size_t j = 0; j < u.extent(1); ++j) uu.push_back(double(u(q, j)));
    for (std::size_t a = 0; a < g.extent(0); ++a)
      for (std::size_t q = 0; q < g.extent(1); ++q)
        for (std::size_t b = 0; b < g.extent(2); ++b) gg.push_back(double(g(a, q, b)));
    h.u.push_back(uu);
    h.g.push_back(gg);
  }
  return h;
}

/// X[j_0..j_{d-1}] = sum over all bond and Tucker indices of the core products (boundary bonds summed).
inline double dense_entry(HostT3 const& x, std::vector<std::size_t> const& j) {
  std::size_t const d = x.shapes.size();
  // Explicit recursion over (a_0, u_0, a_1, u_1, ..., a_d): the most literal form of docs/math.md.
  std::function<double(std::size_t, std::size_t)> rec = [&](std::size_t i, std::size_t a) -> double {
    if (i == d) return 1.0;
    double total = 0;
    for (std::size_t q = 0; q < x.n[i]; ++q) {
      double const uq = x.u[i][q * x.shapes[i] + j[i]];
      for (std::size_t b = 0; b < x.r[i + 1]; ++b) {
        total += x.g[i][(a * x.n[i] + q) * x.r[i + 1] + b] * uq * rec(i + 1, b);
      }
    }
    return total;
  };
  double total = 0;
  for (std::size_t a = 0; a < x.r[0]; ++a) total += rec(0, a);
  return total;
}

/// Row-major dense tensor.
inline std::vector<double> dense_tensor(HostT3 const& x) {
  std::size_t total = 1;
  for (auto s : x.shapes) total *= s;
  std::vector<double> out(total);
  std::vector<std::size_t> j(x.shapes.size(), 0);
  for (std::size_t e = 0; e < total; ++e) {
    std::size_t rem = e;
    for (std::size_t i = x.shapes.size(); i-- > 0;) {
      j[i] = rem % x.shapes[i];
      rem /= x.shapes[i];
    }
    out[e] = dense_entry(x, j);
  }
  return out;
}

/// Contracts a dense tensor with vectors vec[m] in every mode m != i (vec[i] ignored); returns a vector of N_i.
inline std::vector<double> contract_all_but(std::vector<double> const& dense, std::vector<std::size_t> const& shapes,
                                            std::size_t i, std::vector<std::vector<double>> const& vec) {
  std::vector<double> z(shapes[i], 0.0);
  std::vector<std::size_t> j(shapes.size(), 0);
  for (std::size_t e = 0; e < dense.size(); ++e) {
    std::size_t rem = e;
    for (std::size_t m = shapes.size(); m-- > 0;) {
      j[m] = rem % shapes[m];
      rem /= shapes[m];
    }
    double w = dense[e];
    for (std::size_t m = 0; m < shapes.size(); ++m)
      if (m != i) w *= vec[m][j[m]];
    z[j[i]] += w;
  }
  return z;
}

/// Probe jet z_i^(k) by subset expansion: sum over subsets S of the other modes with |S| = k of the dense tensor
/// contracted with p_m (m in S) and w_m (m not in S). w[m], p[m] are one probe's vectors.
inline std::vector<double> subset_expansion_jet(std::vector<double> const& dense,
                                                std::vector<std::size_t> const& shapes, std::size_t i, std::size_t k,
                                                std::vector<std::vector<double>> const& w,
                                                std::vector<std::vector<double>> const& p) {
  std::size_t const d = shapes.size();
  std::vector<double> z(shapes[i], 0.0);
  for (std::size_t mask = 0; mask < (std::size_t(1) << d); ++mask) {
    if (mask & (std::size_t(1) << i)) continue;
    if (std::size_t(__builtin_popcountll(mask)) != k) continue;
    std::vector<std::vector<double>> vec(d);
    for (std::size_t m = 0; m < d; ++m) vec[m] = (mask & (std::size_t(1) << m)) ? p[m] : w[m];
    auto part = contract_all_but(dense, shapes, i, vec);
    for (std::size_t j = 0; j < z.size(); ++j) z[j] += part[j];
  }
  return z;
}

/// ||a - b|| / ||b|| of two T3s as dense tensors.
template <class X>
double relative_dense_error(X const& a, X const& b) {
  auto da = dense_tensor(host_t3(a));
  auto db = dense_tensor(host_t3(b));
  double num = 0, den = 0;
  for (std::size_t e = 0; e < da.size(); ++e) {
    num += (da[e] - db[e]) * (da[e] - db[e]);
    den += db[e] * db[e];
  }
  return std::sqrt(num / den);
}

}  // namespace t3k_test
