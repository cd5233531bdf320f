#pragma once
/// \file demo_command.hpp
/// `t3k demo`: probe jets of a built-in random T3 on the default execution space, timed, and checked against the
/// order-0 probes and a brute-force dense contraction. Needs no files; runs on rank 0 under mpirun.

#include <cstddef>
#include <cstdint>

namespace CLI {
class App;
}

namespace t3k {
namespace cli {

struct DemoOptions {
  std::size_t probes = 1000;  ///< --probes: number of probe pairs W
  std::uint64_t seed = 1;     ///< --seed
};

/// Adds `demo` to `app`, storing its flags in `options` (which must outlive parsing). \return the subcommand.
CLI::App* add_demo_command(CLI::App& app, DemoOptions& options);

/// Runs the demo (Kokkos initialized) and prints its checks. \return 0 when every check passed, else 1.
/// **Throws:** UsageError when the probes would not fit in memory.
int run_demo(DemoOptions const& opt);

}  // namespace cli
}  // namespace t3k
