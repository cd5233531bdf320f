#pragma once
/// \file flop_counts.hpp
/// The exact per-probe FLOP counts (FLOPs = 2 x scalar multiply-adds of the pairwise
/// contractions of the reference evaluation order), written out term by term so that every benchmark reports
/// FLOP/s against the same yardstick, independently of how the library schedules its kernels. The scalar kinds'
/// counts (entries, applies) are per sample and follow T3K's own sweeps contraction by contraction. Pure host code:
/// no Kokkos, so the unit check (flop_counts_check.cpp) compiles in a second.

#include <algorithm>
#include <cstddef>
#include <vector>

namespace t3k_bench {

/// Frame shapes of docs/math.md: per core u = nU_i, o = nO_i, N = N_i; rl, rr have d + 1 entries.
struct FrameDims {
  std::vector<std::size_t> big_n, nu, no, rl, rr;
  std::size_t d() const { return big_n.size(); }
};

/// Frame shapes of a generic (random) T3 by the rank rules of docs/math.md (tails squashed).
/// \param big_n mode sizes N_i, \param n Tucker ranks n_i, \param r TT ranks r_0..r_d (boundaries ignored)
inline FrameDims frame_dims_of_t3(std::vector<std::size_t> const& big_n, std::vector<std::size_t> const& n,
                                  std::vector<std::size_t> const& r) {
  std::size_t const d = big_n.size();
  FrameDims f;
  f.big_n = big_n;
  f.nu.resize(d);
  f.no.resize(d);
  f.rl.assign(d + 1, 1);
  f.rr.assign(d + 1, 1);
  for (std::size_t i = 0; i < d; ++i) f.nu[i] = std::min(n[i], big_n[i]);
  for (std::size_t i = 0; i + 1 < d; ++i) f.rl[i + 1] = std::min(f.rl[i] * f.nu[i], r[i + 1]);
  for (std::size_t i = d - 1; i >= 1; --i) f.rr[i] = std::min(f.rl[i], f.nu[i] * f.rr[i + 1]);
  for (std::size_t i = 0; i < d; ++i) f.no[i] = std::min(f.rl[i] * f.rr[i + 1], f.nu[i]);
  return f;
}

/// The jet lengths of docs/math.md for order K and d modes.
struct JetLengths {
  double k1, kl, p, pl;
  JetLengths(std::size_t order, std::size_t d) {
    std::size_t const k1i = std::min(order, d - 1) + 1;
    k1 = double(k1i);
    kl = double(std::min<std::size_t>(k1i, 2));
    p = double(k1i * (k1i + 1) / 2);
    pl = double(2 * k1i - 1);
  }
};

/// FLOPs per probe of J^T (frame part + n_t x tangent part, summed over cores).
inline double transpose_flops_per_probe(FrameDims const& f, std::size_t order, std::size_t n_tangent = 1) {
  std::size_t const d = f.d();
  JetLengths const j(order, d);
  double const K1 = j.k1, Kl = j.kl, P = j.p, Pl = j.pl;
  double frame = 0, tangent = 0;
  for (std::size_t i = 0; i < d; ++i) {
    double const u = double(f.nu[i]), o = double(f.no[i]), N = double(f.big_n[i]);
    double const a = double(f.rl[i]), a1 = double(f.rl[i + 1]), b = double(f.rr[i]), b1 = double(f.rr[i + 1]);
    double const first = i >= 1 ? 1 : 0;                  // [i >= 1]
    double const last = i + 2 <= d ? 1 : 0;               // [i <= d-2]
    double const inner = (i >= 1 && i + 2 <= d) ? 1 : 0;  // [1 <= i <= d-2]
    frame += 2 * Kl * u * N + last * (2 * K1 * a * u * a1 + 2 * Pl * u * a1) +
             first * (2 * K1 * b * u * b1 + 2 * Pl * b * u) + 2 * K1 * a * o * b1 + 2 * P * o * b1 +
             first * 2 * K1 * a * o * b1 + 2 * P * a * b1 + last * 2 * Pl * a * u + first * 2 * Pl * u * b1;
    tangent += 2 * K1 * u * N + last * 2 * P * u * a1 + inner * (2 * K1 * a * u * a1 + 2 * Pl * u * a1) +
               first * 2 * P * b * u + inner * (2 * K1 * b * u * b1 + 2 * Pl * b * u) + last * 2 * Pl * o * b1 +
               first * 2 * Pl * a * o + 2 * (K1 + Kl) * o * N + 2 * K1 * a * u * b1 * (1 + last + first);
  }
  return frame + double(n_tangent) * tangent;
}

/// FLOPs per probe of the forward J for one tangent ("Forward J per probe").
inline double tangent_flops_per_probe(FrameDims const& f, std::size_t order) {
  std::size_t const d = f.d();
  JetLengths const j(order, d);
  double const K1 = j.k1, Kl = j.kl, P = j.p, Pl = j.pl;
  double total = 0;
  for (std::size_t i = 0; i < d; ++i) {
    double const u = double(f.nu[i]), o = double(f.no[i]), N = double(f.big_n[i]);
    double const a = double(f.rl[i]), a1 = double(f.rl[i + 1]), b = double(f.rr[i]), b1 = double(f.rr[i + 1]);
    double const first = i >= 1 ? 1 : 0;
    double const last = i + 2 <= d ? 1 : 0;
    total += 2 * Kl * (u + o) * N +
             first * (2 * K1 * b * u * b1 + 2 * Pl * b * u + 2 * K1 * a * u * b1 + last * 2 * K1 * a * u * a1 +
                      2 * K1 * a * o * b1 + 2 * Pl * a * u + 2 * Pl * a * o) +
             2 * K1 * a * u * b1 + first * 2 * K1 * b * u * b1 + 2 * K1 * a * o * b1 + 2 * P * o * b1 + 2 * P * u * b1 +
             last * (2 * K1 * a * u * a1 + 2 * P * u * a1 + 2 * Pl * u * b1 + 2 * Pl * o * b1 + 2 * Pl * u * a1) +
             2 * K1 * (u + o) * N;
  }
  return total;
}

/// FLOPs per probe of the probe jets of a T3 ("T3 probe jets per probe"); order 0 gives the
/// plain probes. \param r TT ranks r_0..r_d as stored (boundary ranks may differ from 1).
inline double t3_probe_jet_flops_per_probe(std::vector<std::size_t> const& big_n, std::vector<std::size_t> const& n,
                                           std::vector<std::size_t> const& r, std::size_t order) {
  std::size_t const d = big_n.size();
  JetLengths const j(order, d);
  double const K1 = j.k1, Kl = j.kl, P = j.p, Pl = j.pl;
  double total = 0;
  for (std::size_t i = 0; i < d; ++i) {
    double const ni = double(n[i]), Ni = double(big_n[i]), ri = double(r[i]), ri1 = double(r[i + 1]);
    double const first = i >= 1 ? 1 : 0;
    double const last = i + 2 <= d ? 1 : 0;
    total += 2 * (Kl + K1) * ni * Ni + 2 * K1 * ri * ni * ri1 * (1 + first) + first * 2 * Pl * ri * ni +
             2 * P * ni * ri1 + last * 2 * Pl * ni * ri1;
  }
  return total;
}

/// The jet lengths of the scalar kinds (entries, applies; docs/math.md): a scalar measurement's jet has
/// K1 = min(K, d) + 1 coefficients (scalar_jet_length), the linear jets omega_i = w_i + t p_i Kl = min(K1, 2).
/// p = K1 (K1 + 1) / 2 pairs in a truncated product or correlation of two K1-jets; pl = 2 K1 - 1 pairs in a
/// K1-jet times (or correlated with) a linear jet.
struct ScalarJetLengths {
  double k1, kl, p, pl;
  ScalarJetLengths(std::size_t order, std::size_t d) {
    std::size_t const k1i = std::min(order, d) + 1;
    k1 = double(k1i);
    kl = double(std::min<std::size_t>(k1i, 2));
    p = double(k1i * (k1i + 1) / 2);
    pl = double(2 * k1i - 1);
  }
};

/// FLOPs per sample of the scalar J^T (t3k::apply_derivatives_transpose, t3k::entry_derivatives_transpose) in the
/// contractions T3K's sweep performs (scalar_transpose_sweep), per core i with u = nU_i, o = nO_i, N = N_i,
/// a = rL_i, a1 = rL_{i+1}, b = rR_i, b1 = rR_{i+1}. Frame part, once per sample:
///   xi_i = U_i omega_i                  2 Kl u N  (entries at order 0: a column read, none)
///   mu[i+1] = (mu[i] ⊛ xi_i) . L_i      2 Pl a u + 2 K1 a u a1        (i <= d-2)
///   nu[i] = R_i . (xi_i ⊛ nu[i+1])      2 Pl u b1 + 2 K1 b u b1       (i >= 1)
///   E = mu[i] . O_i                     2 K1 a b1 o
///   eta_i = E ⊛_b nu[i+1]               2 P o b1
/// Residual part, once per residual stack entry (n_t of them):
///   delta = xi_i ⋆ r                    2 Pl u
///   Z = delta ⋆ nu[i+1]                 2 P u b1
///   g = eta_i ⋆ r (orders < Kl)         2 Pl o
///   H~_i += mu[i]^T Z                   2 K1 a u b1
///   V~_i += g^T omega_i                 2 Kl o N  (entries at order 0: a scatter of o adds when summed, a copy per
///                                                  sample otherwise)
/// \param entries whether the samples are entries (else applies) \param summed sum_over_probes
inline double scalar_transpose_flops_per_sample(FrameDims const& f, std::size_t order, bool entries,
                                                std::size_t n_tangent = 1, bool summed = true) {
  std::size_t const d = f.d();
  ScalarJetLengths const j(order, d);
  double const K1 = j.k1, Kl = j.kl, P = j.p, Pl = j.pl;
  bool const packed = !entries || Kl > 1;  // omega_i formed (ScalarSamples::packs_omega)
  double frame = 0, residual = 0;
  for (std::size_t i = 0; i < d; ++i) {
    double const u = double(f.nu[i]), o = double(f.no[i]), N = double(f.big_n[i]);
    double const a = double(f.rl[i]), a1 = double(f.rl[i + 1]), b = double(f.rr[i]), b1 = double(f.rr[i + 1]);
    double const first = i >= 1 ? 1 : 0;     // [i >= 1]
    double const last = i + 2 <= d ? 1 : 0;  // [i <= d-2]
    frame += (packed ? 2 * Kl * u * N : 0) + last * (2 * Pl * a * u + 2 * K1 * a * u * a1) +
             first * (2 * Pl * u * b1 + 2 * K1 * b * u * b1) + 2 * K1 * a * b1 * o + 2 * P * o * b1;
    residual += 2 * Pl * u + 2 * P * u * b1 + 2 * Pl * o + 2 * K1 * a * u * b1 +
                (packed   ? 2 * Kl * o * N
                 : summed ? o
                          : 0);
  }
  return frame + double(n_tangent) * residual;
}

/// FLOPs per sample of the scalar evaluation (t3k::entries, entry_derivatives, applies, apply_derivatives) in
/// T3K's sweep (t3_scalar_sweep), per core i of the T3 (n = n_i, N = N_i, r = r_i, r1 = r_{i+1}):
///   xi_i = U_i omega_i                  2 Kl n N  (entries at order 0: a column read, none)
///   mu[i+1] = (mu[i] ⊛ xi_i) . G_i      2 Pl r n + 2 K1 r n r1
/// and the closing sum of mu[d] against the all-ones boundary, K1 r_d adds.
/// \param r TT ranks r_0..r_d as stored
inline double scalar_flops_per_sample(std::vector<std::size_t> const& big_n, std::vector<std::size_t> const& n,
                                      std::vector<std::size_t> const& r, std::size_t order, bool entries) {
  std::size_t const d = big_n.size();
  ScalarJetLengths const j(order, d);
  double const K1 = j.k1, Kl = j.kl, Pl = j.pl;
  bool const packed = !entries || Kl > 1;
  double total = K1 * double(r[d]);
  for (std::size_t i = 0; i < d; ++i) {
    double const ni = double(n[i]), Ni = double(big_n[i]), ri = double(r[i]), ri1 = double(r[i + 1]);
    total += (packed ? 2 * Kl * ni * Ni : 0) + 2 * Pl * ri * ni + 2 * K1 * ri * ni * ri1;
  }
  return total;
}

/// FLOPs per sample of the scalar J (t3k::tangent_apply_derivatives, tangent_entry_derivatives) in T3K's sweep
/// (scalar_tangent_sweep), per core i (shapes as for the scalar J^T). Frame part:
///   xi_i = U_i omega_i                  2 Kl u N  (entries at order 0: none)
///   mu[i] ⊛ xi_i                        2 Pl a u
///   mu[i+1] = (mu[i] ⊛ xi_i) . L_i      2 K1 a u a1                   (i <= d-2)
/// Tangent part, per variation (n_t of them):
///   dxi_i = V_i omega_i                 2 Kl o N  (entries at order 0: a column read, none)
///   (mu[i] ⊛ xi_i) . H_i                2 K1 a u b1
///   (sigma[i] ⊛ xi_i) . R_i             2 Pl b u + 2 K1 b u b1        (i >= 1)
///   (mu[i] ⊛ dxi_i) . O_i               2 Pl a o + 2 K1 a o b1
/// and the closing write of sigma[d] (width rR_d = 1), K1 adds.
inline double scalar_tangent_flops_per_sample(FrameDims const& f, std::size_t order, bool entries,
                                              std::size_t n_tangent = 1) {
  std::size_t const d = f.d();
  ScalarJetLengths const j(order, d);
  double const K1 = j.k1, Kl = j.kl, Pl = j.pl;
  bool const packed = !entries || Kl > 1;
  double frame = 0, tangent = K1;
  for (std::size_t i = 0; i < d; ++i) {
    double const u = double(f.nu[i]), o = double(f.no[i]), N = double(f.big_n[i]);
    double const a = double(f.rl[i]), a1 = double(f.rl[i + 1]), b = double(f.rr[i]), b1 = double(f.rr[i + 1]);
    double const first = i >= 1 ? 1 : 0;
    double const last = i + 2 <= d ? 1 : 0;
    frame += (packed ? 2 * Kl * u * N : 0) + 2 * Pl * a * u + last * 2 * K1 * a * u * a1;
    tangent += (packed ? 2 * Kl * o * N : 0) + 2 * K1 * a * u * b1 + first * (2 * Pl * b * u + 2 * K1 * b * u * b1) +
               2 * Pl * a * o + 2 * K1 * a * o * b1;
  }
  return frame + double(n_tangent) * tangent;
}

/// 2 m n k: the FLOPs of one dense GEMM.
inline double gemm_flops(double m, double n, double k) { return 2 * m * n * k; }

}  // namespace t3k_bench
