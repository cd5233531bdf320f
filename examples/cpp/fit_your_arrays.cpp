// Fits a T3 to probe jets held in arrays of your own (row-major host std::vectors), copied into a
// t3k::FittingProblem. The target jets here are those of a random T3, so that the fit can be checked; yours come from
// your measurements. Prints the relative residual and exits 0 when it is small.
#include <t3k/t3k.hpp>

#include <cstdio>
#include <random>
#include <vector>

int main(int argc, char* argv[]) {
  t3k::KokkosScope kokkos(argc, argv);  // Kokkos::ScopeGuard, with the host threads started where they cost least
  {
    using Space = Kokkos::DefaultExecutionSpace;
    using Problem = t3k::FittingProblem<double, Space::memory_space>;
    // Views over the host arrays, without a copy: the source of the copies into the problem.
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    using HostMatrix = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace, Unmanaged>;
    using HostJets = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace, Unmanaged>;
    Space space;

    std::vector<std::size_t> const shapes{6, 7, 5};  // N_0 .. N_{d-1}
    std::size_t const d = shapes.size(), n_probes = 300, order = 1;

    // Your probe vectors w[i] and directions p[i]: W x N_i each, row-major.
    std::mt19937_64 generator(1);
    std::normal_distribution<double> normal;
    std::vector<std::vector<double>> w(d), p(d), y(d);
    for (std::size_t i = 0; i < d; ++i) {
      for (std::size_t k = 0; k < n_probes * shapes[i]; ++k) w[i].push_back(normal(generator));
      for (std::size_t k = 0; k < n_probes * shapes[i]; ++k) p[i].push_back(normal(generator));
    }

    // The problem holds Views in the execution space's memory (a GPU's on a device build): copy the arrays in.
    Problem problem;
    problem.order = order;  // K: the targets hold the jet orders 0..K
    for (std::size_t i = 0; i < d; ++i) {
      Problem::probe_type wi(Kokkos::view_alloc(Kokkos::WithoutInitializing, "w"), n_probes, shapes[i]);
      Problem::probe_type pi(Kokkos::view_alloc(Kokkos::WithoutInitializing, "p"), n_probes, shapes[i]);
      Kokkos::deep_copy(space, wi, HostMatrix(w[i].data(), n_probes, shapes[i]));
      Kokkos::deep_copy(space, pi, HostMatrix(p[i].data(), n_probes, shapes[i]));
      problem.ww.push_back(wi);
      problem.pp.push_back(pi);
    }

    // Stand-in for your measurements: the jets of a random T3 (Tucker ranks 2-3-2, TT ranks 1-2-2-1).
    std::vector<std::size_t> const tucker{2, 3, 2}, tt{1, 2, 2, 1};
    auto const truth = t3k::random_t3<double>(space, shapes, tucker, tt, /*seed=*/2);
    auto const jets = t3k::probe_derivatives(space, truth, problem.ww, problem.pp, order);
    for (std::size_t i = 0; i < d; ++i) {
      y[i].resize(n_probes * (order + 1) * shapes[i]);
      Kokkos::deep_copy(space, HostJets(y[i].data(), n_probes, order + 1, shapes[i]), jets[i]);
    }
    space.fence();

    // Your target jets y[i]: W x (K+1) x N_i each, row-major.
    for (std::size_t i = 0; i < d; ++i) {
      Problem::jet_type yi(Kokkos::view_alloc(Kokkos::WithoutInitializing, "y"), n_probes, order + 1, shapes[i]);
      Kokkos::deep_copy(space, yi, HostJets(y[i].data(), n_probes, order + 1, shapes[i]));
      problem.targets.push_back(yi);
    }

    auto const x0 = t3k::random_t3<double>(space, shapes, tucker, tt, /*seed=*/3);
    t3k::NewtonCgOptions options;
    options.common.max_iterations = 50;
    options.common.tol_relative_residual = 1e-10;
    auto const result = t3k::newton_cg(space, problem, x0, options);

    auto const& last = result.history.back();
    std::printf("%zu iterations, relative residual %.3e (%s)\n", last.iteration, last.relative_residual,
                result.reason.c_str());
    if (!(last.relative_residual < 1e-8)) return 1;
  }
  return 0;
}
