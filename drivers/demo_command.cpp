/// \file demo_command.cpp
/// `t3k demo` (demo_command.hpp).

#include "drivers/demo_command.hpp"

#include "drivers/device_copies.hpp"
#include "drivers/errors.hpp"
#include "drivers/flag_checks.hpp"
#include "t3k/io/file_safety.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/host_random.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace t3k {
namespace cli {

namespace {

using Space = Kokkos::DefaultExecutionSpace;

/// Order-0 probes of the first `n_check` probes by brute force on the dense tensor (host, row-major).
double dense_probe_error(std::vector<double> const& dense, std::vector<std::size_t> const& shapes,
                         std::vector<io::Matrix> const& w, std::vector<io::Matrix> const& z0, std::size_t n_check) {
  std::size_t const d = shapes.size();
  double max_err = 0, scale = 0;
  std::vector<std::size_t> idx(d);
  for (std::size_t s = 0; s < n_check; ++s) {
    for (std::size_t i = 0; i < d; ++i) {
      std::vector<double> ref(shapes[i], 0.0);
      for (std::size_t e = 0; e < dense.size(); ++e) {
        std::size_t rem = e;
        for (std::size_t m = d; m-- > 0;) {
          idx[m] = rem % shapes[m];
          rem /= shapes[m];
        }
        double weight = dense[e];
        for (std::size_t m = 0; m < d; ++m) {
          if (m != i) weight *= w[m](s, idx[m]);
        }
        ref[idx[i]] += weight;
      }
      for (std::size_t j = 0; j < shapes[i]; ++j) {
        max_err = std::max(max_err, std::abs(ref[j] - z0[i](s, j)));
        scale = std::max(scale, std::abs(ref[j]));
      }
    }
  }
  return scale > 0 ? max_err / scale : max_err;
}

}  // namespace

CLI::App* add_demo_command(CLI::App& app, DemoOptions& opt) {
  auto* demo = app.add_subcommand("demo", "probe jets of a built-in random T3, checked against a dense contraction");
  demo->add_option("--probes", opt.probes, "number of probe pairs W")->check(integer_at_least(1));
  demo->add_option("--seed", opt.seed, "random seed")->check(whole_number());
  return demo;
}

int run_demo(DemoOptions const& opt) {
  std::vector<std::size_t> const big_n(5, 8), n(5, 4), r{1, 5, 5, 5, 5, 1};
  std::size_t const d = big_n.size(), w = opt.probes, order = 2;
  if (w == 0) throw UsageError("--probes: must be >= 1");
  // Probes, directions, jets (3 orders), order-0 probes and their host copies: 16 doubles per probe and mode entry.
  auto const bytes = io::checked_product(w, 16 * sizeof(double) * d * big_n[0]);
  if (auto const shortfall = io::memory_shortfall(bytes)) {
    throw UsageError("--probes: " + std::to_string(w) + " probes " + *shortfall + "; lower --probes");
  }
  Space space;
  auto const x = t3k::random_t3<double>(space, big_n, n, r, opt.seed);

  // Probe pairs: i.i.d. normal, scaled by 1/sqrt(N) so that probes stay of order one.
  t3k::impl::HostNormalGenerator gen(opt.seed + 1);
  std::vector<io::Matrix> w_host, p_host;
  for (std::size_t i = 0; i < d; ++i) {
    io::Matrix wi("t3k::demo::w", w, big_n[i]), pi("t3k::demo::p", w, big_n[i]);
    double const scale = 1.0 / std::sqrt(double(big_n[i]));
    for (std::size_t s = 0; s < w; ++s)
      for (std::size_t j = 0; j < big_n[i]; ++j) {
        wi(s, j) = scale * gen.normal();
        pi(s, j) = scale * gen.normal();
      }
    w_host.push_back(wi);
    p_host.push_back(pi);
  }
  auto const ww = to_device(w_host);
  auto const pp = to_device(p_host);
  space.fence();

  Kokkos::Timer timer;
  auto const jets = t3k::probe_derivatives(space, x, ww, pp, order);
  space.fence();
  double const t_jets = timer.seconds();
  timer.reset();
  auto const z0_dev = t3k::probes(space, x, ww);
  space.fence();
  double const t_probes = timer.seconds();

  std::vector<io::Array3> jets_host;
  std::vector<io::Matrix> z0;
  for (std::size_t i = 0; i < d; ++i) {
    jets_host.push_back(to_host(jets[i]));
    z0.push_back(to_host(z0_dev[i]));
  }
  std::vector<double> norms(order + 1, 0.0);
  double jet_vs_probe = 0, probe_scale = 0;
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t s = 0; s < w; ++s)
      for (std::size_t j = 0; j < big_n[i]; ++j) {
        for (std::size_t k = 0; k <= order; ++k) norms[k] += jets_host[i](s, k, j) * jets_host[i](s, k, j);
        jet_vs_probe = std::max(jet_vs_probe, std::abs(jets_host[i](s, 0, j) - z0[i](s, j)));
        probe_scale = std::max(probe_scale, std::abs(z0[i](s, j)));
      }
  if (probe_scale > 0) jet_vs_probe /= probe_scale;

  auto const dense_view = to_host(t3k::to_dense(space, x));
  std::vector<double> dense(dense_view.data(), dense_view.data() + dense_view.extent(0));
  std::size_t const n_check = std::min<std::size_t>(w, 4);
  double const dense_err = dense_probe_error(dense, big_n, w_host, z0, n_check);

  fmt::print("t3k demo: random T3, d = {}, N = {}, n = {}, r = {}, seed {}\n", d, t3k::impl::shape_string(big_n),
             t3k::impl::shape_string(n), t3k::impl::shape_string(r), opt.seed);
  fmt::print("execution space: {} (concurrency {})\n", Space::name(), Space().concurrency());
  fmt::print("probe_derivatives: W = {}, order {}: {} arrays of shape [{} x {} x {}] in {:.3e} s\n", w, order, d, w,
             order + 1, big_n[0], t_jets);
  fmt::print("probes (order 0): {} arrays of shape [{} x {}] in {:.3e} s\n", d, w, big_n[0], t_probes);
  for (std::size_t k = 0; k <= order; ++k) fmt::print("  ||z^({})||_F = {:.6e}\n", k, std::sqrt(norms[k]));
  fmt::print("check: order-0 jets vs probes, max relative difference {:.2e}\n", jet_vs_probe);
  fmt::print("check: probes vs dense contraction ({} probes), max relative error {:.2e}\n", n_check, dense_err);
  double const tolerance = 1e-12;  // ~4500 eps: sums of a few thousand terms of order one
  bool const ok = jet_vs_probe <= tolerance && dense_err <= tolerance;
  fmt::print("{}\n", ok ? "demo OK" : "demo FAILED: a check exceeded 1e-12");
  return ok ? exit_success : exit_failure;
}

}  // namespace cli
}  // namespace t3k
