// Unit check of perf/flop_counts.hpp against worked examples. Exits 1 on a mismatch.
#include "flop_counts.hpp"

#include <cmath>
#include <cstdio>

int main() {
  using namespace t3k_bench;
  int failures = 0;
  auto expect = [&](char const* what, double got, double want, double rel) {
    bool const ok = std::abs(got - want) <= rel * std::abs(want);
    std::printf("%-58s %16.6g (expected %.6g) %s\n", what, got, want, ok ? "ok" : "MISMATCH");
    if (!ok) ++failures;
  };
  // N=(4,5,6,3), n=(3,4,2,3), r=(1,2,3,2,1), K=2: frame ranks nU=(3,4,2,3), nO=(2,4,2,2), rL=rR=(1,2,3,2,1).
  auto small = frame_dims_of_t3({4, 5, 6, 3}, {3, 4, 2, 3}, {1, 2, 3, 2, 1});
  bool shapes_ok = small.no == std::vector<std::size_t>{2, 4, 2, 2} &&
                   small.rl == std::vector<std::size_t>{1, 2, 3, 2, 1} &&
                   small.rr == std::vector<std::size_t>{1, 2, 3, 2, 1};
  std::printf("%-58s %s\n", "frame ranks of the small example", shapes_ok ? "ok" : "MISMATCH");
  if (!shapes_ok) ++failures;
  expect("J^T flops/probe, N=(4,5,6,3) n=(3,4,2,3) r=(1,2,3,2,1) K=2", transpose_flops_per_probe(small, 2), 5642, 0);
  // The scalar kinds on the same frame, term by term (scalar_transpose_flops_per_sample's table), per core i = 0..3.
  // Entries, K = 0 (K1 = Kl = P = Pl = 1; xi_i a column read, V~ a scatter of o adds):
  //   frame    (mu + nu + E + eta):  18 + 0 + 8 + 8 = 34,  64 + 72 + 48 + 24 = 208,  36 + 32 + 24 + 8 = 100,
  //                                  0 + 18 + 8 + 4 = 30                                               -> 372
  //   residual (delta + Z + g + H~ + V~): 6 + 12 + 4 + 12 + 2 = 36,  8 + 24 + 8 + 48 + 4 = 92,
  //                                  4 + 8 + 4 + 24 + 2 = 42,  6 + 6 + 4 + 12 + 2 = 30                 -> 200
  expect("scalar J^T flops/sample, entries K=0", scalar_transpose_flops_per_sample(small, 0, true), 572, 0);
  // Applies, K = 2 (K1 = 3, Kl = 2, P = 6, Pl = 5):
  //   frame    (xi + mu + nu + E + eta): 48 + 66 + 0 + 24 + 48 = 186,  80 + 224 + 264 + 144 + 144 = 856,
  //                                  48 + 132 + 112 + 72 + 48 = 412,  36 + 0 + 66 + 24 + 24 = 150     -> 1604
  //   residual (delta + Z + g + H~ + V~): 30 + 72 + 20 + 36 + 32 = 190,  40 + 144 + 40 + 144 + 80 = 448,
  //                                  20 + 48 + 20 + 72 + 48 = 208,  30 + 36 + 20 + 36 + 24 = 146       -> 992
  expect("scalar J^T flops/sample, applies K=2", scalar_transpose_flops_per_sample(small, 2, false), 2596, 0);
  // With jets an entry's omega_i is packed like an apply's: the two kinds cost the same.
  expect("scalar J^T flops/sample, entries K=2", scalar_transpose_flops_per_sample(small, 2, true), 2596, 0);
  // Two residual stacks add the residual part once more; per sample, entries at K = 0 copy instead of adding.
  expect("scalar J^T flops/sample, entries K=0 n_t=2", scalar_transpose_flops_per_sample(small, 0, true, 2), 772, 0);
  expect("scalar J^T flops/sample, entries K=0 per sample", scalar_transpose_flops_per_sample(small, 0, true, 1, false),
         572 - 10, 0);
  // Evaluation of the T3 N=(4,5,6,3), n=(3,4,2,3), r=(1,2,3,2,1): entries K=0, 2 r n + 2 r n r1 per core:
  // 18 + 64 + 36 + 24, + 1 (the closing sum) = 143; applies K=2: xi 48 + 80 + 48 + 36, Khatri-Rao 30 + 80 + 60 + 60,
  // products 36 + 144 + 72 + 36, closing sum 3 = 733.
  std::vector<std::size_t> const sn{4, 5, 6, 3}, sr{3, 4, 2, 3}, st{1, 2, 3, 2, 1};
  expect("entries flops/sample, K=0", scalar_flops_per_sample(sn, sr, st, 0, true), 143, 0);
  expect("applies flops/sample, K=2", scalar_flops_per_sample(sn, sr, st, 2, false), 733, 0);
  // J of entries, K=0, on the frame: frame (mu ⊛ xi + L) 18 + 64 + 36 + 12 = 130; tangent (H + R + mu ⊛ dxi + O)
  // 12 + 0 + 4 + 8 = 24, 48 + 64 + 16 + 48 = 176, 24 + 36 + 12 + 24 = 96, 12 + 24 + 8 + 8 = 52, + 1 (the write) = 349.
  expect("scalar J flops/sample, entries K=0", scalar_tangent_flops_per_sample(small, 0, true), 479, 0);
  // N=1000, n=64, r=128, d=8, K=2: J^T ~ 3.07e8 flops/probe (three significant digits known).
  std::vector<std::size_t> const big_n(8, 1000), n(8, 64);
  std::vector<std::size_t> r(9, 128);
  r.front() = r.back() = 1;
  expect("J^T flops/probe, N=1000 n=64 r=128 d=8 K=2", transpose_flops_per_probe(frame_dims_of_t3(big_n, n, r), 2),
         3.07e8, 0.005);
  // n_t stacks add the tangent part only: total(2) - total(1) = total(1) - total(0).
  double const t0 = transpose_flops_per_probe(small, 2, 0), t1 = transpose_flops_per_probe(small, 2, 1),
               t2 = transpose_flops_per_probe(small, 2, 2);
  expect("J^T tangent part is linear in n_t", t2 - t1, t1 - t0, 1e-15);
  return failures == 0 ? 0 : 1;
}
