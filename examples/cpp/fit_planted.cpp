// Fits a T3 to the probe jets of a planted random T3 with the library alone (no HDF5, no YAML): the same problem
// `t3k fit` builds for a `synthetic` configuration. Prints the relative residual and exits 0 when it is small.
#include <t3k/t3k.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
  t3k::KokkosScope kokkos(argc, argv);  // Kokkos::ScopeGuard, with the host threads started where they cost least
  {
    using Space = Kokkos::DefaultExecutionSpace;
    Space space;

    // The planted T3: d = 4 modes of size 8, Tucker ranks 3, TT ranks 1-3-3-3-1.
    std::vector<std::size_t> const shapes{8, 8, 8, 8}, tucker{3, 3, 3, 3}, tt{1, 3, 3, 3, 1};
    auto truth = t3k::random_t3<double>(space, shapes, tucker, tt, /*seed=*/1);

    // Its probe jets up to order K = 2 at W = 200 random probe pairs, without noise.
    auto problem = t3k::make_planted_problem(space, truth, /*n_probes=*/200, /*order=*/2, /*noise=*/0.0,
                                             /*seed=*/2);

    // Riemannian Gauss-Newton from a random start with the same ranks.
    auto x0 = t3k::random_t3<double>(space, shapes, tucker, tt, /*seed=*/3);
    t3k::NewtonCgOptions options;
    options.common.max_iterations = 50;
    options.common.tol_relative_residual = 1e-10;
    auto result = t3k::newton_cg(space, problem, x0, options);

    auto const& last = result.history.back();
    std::printf("%zu iterations, relative residual %.3e (%s)\n", last.iteration, last.relative_residual,
                result.reason.c_str());
    if (!(last.relative_residual < 1e-8)) return 1;
  }
  return 0;
}
