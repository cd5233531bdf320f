#pragma once
/// \file fit_command.hpp
/// The `t3k fit CONFIG.yaml [--resume] [--quiet] [--log-json FILE]` subcommand: registration on the CLI11 app and
/// the run (load and validate the configuration, then initialize Kokkos with its settings, then fit).
///
/// Exit codes: 0 success; 2 an invalid configuration or input (message with file:line:column and key path),
/// a missing or foreign checkpoint for --resume; 1 a runtime failure (non-finite loss, an output that cannot be
/// written), leaving the last good checkpoint and earlier outputs as they were; 3 stopped by the test-only
/// --stop-after N after writing the checkpoint of iteration N.

#include "drivers/fit_run.hpp"

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace t3k {
namespace fit {

struct FitCommandOptions {
  std::string config;
  RunOptions run;
};

/// Adds the `fit` subcommand to `app`, storing its arguments in `options` (which must outlive parsing).
/// \return the subcommand, to compare with the one selected.
CLI::App* add_fit_command(CLI::App& app, FitCommandOptions& options);

/// Runs `t3k fit`. Kokkos must not be initialized yet: it is initialized here, after the configuration is read,
/// with `kokkos_args` (argv[0] and the --kokkos-* arguments of the command line) plus the configuration's
/// kokkos.threads / kokkos.device unless the command line already sets them. With several ranks in `comm` (under
/// mpirun) the probe set is sharded across them, rank 0 prints and writes, and every rank returns the same exit
/// code; a failure on one rank alone that the others cannot learn of ends the run with MPI_Abort.
/// \return the exit code.
int run_fit_command(FitCommandOptions const& options, std::vector<char*> kokkos_args,
                    Communicator const& comm = Communicator());

}  // namespace fit
}  // namespace t3k
