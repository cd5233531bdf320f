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
