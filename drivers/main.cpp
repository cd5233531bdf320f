/// \file main.cpp
/// The command-line tool `t3k` (docs/file-format.md lists what each command reads and writes): probe jets, frames, J v
/// and J^T r on HDF5 files (probe_commands.hpp), a model's predictions and scores on data files
/// (measurement_commands.hpp), fitting (fit_command.hpp), the memory model of J^T (estimate_chunk_command.hpp) and a
/// self-checking demo (demo_command.hpp). This file only registers the commands and dispatches to the one selected.
///
/// Exit codes (errors.hpp): 0 success; 2 bad input (a flag, a missing or misshapen dataset, an unreadable file),
/// with one line naming the flag or the dataset; 1 any other failure. Outputs are written atomically (hdf5_io.hpp).
///
/// Under `mpirun -np P` (built with T3K_ENABLE_MPI; docs/math.md, sharding) jets, jv, jtr, predict, score and fit
/// shard the samples: each rank reads only its rows (Communicator::shard_range) and rank 0 alone writes the one
/// output file, equal to the single-process one. frame, demo and estimate-chunk have no probe set to share and run on
/// rank 0. A failure on any rank ends every rank with the single-process exit code, printed once (collective.hpp).

#include "drivers/collective.hpp"
#include "drivers/demo_command.hpp"
#include "drivers/estimate_chunk_command.hpp"
#include "drivers/exit_codes.hpp"
#include "drivers/fit_command.hpp"
#include "drivers/flag_checks.hpp"
#include "drivers/measurement_commands.hpp"
#include "drivers/probe_commands.hpp"
#include "drivers/version.hpp"
#include "drivers/wait_policy.hpp"

#include "t3k/algorithms/impl/host/host_blas.hpp"
#include "t3k/core/communicator.hpp"
#include "t3k/core/kokkos_scope.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace cli = t3k::cli;
using t3k::Communicator;

int main(int argc, char** argv) {
  // Before anything starts threads or connects to mpirun: this may execute the program again (wait_policy.hpp).
  cli::apply_default_wait_policy(argv);

  // MPI (with T3K_ENABLE_MPI) outlives Kokkos and everything else: it is finalized when `mpi` goes out of scope.
  cli::MpiSession mpi(argc, argv);
  Communicator const comm = mpi.world();
  bool const root = comm.rank_index() == 0;  // prints help, versions and errors once

  // Kokkos' OpenMP backend prints four lines of advice to stdout when OMP_PROC_BIND is unset, into every command's
  // output (`fit --quiet` too). false is what the OpenMP runtime does when neither variable is set, so this default
  // changes no thread binding; values the user sets are kept.
  if (!std::getenv("OMP_PROC_BIND") && !std::getenv("OMP_PLACES")) ::setenv("OMP_PROC_BIND", "false", 0);

  // --kokkos-* arguments go to Kokkos, everything else to the command line parser.
  std::vector<char*> kokkos_args{argv[0]}, cli_args{argv[0]};
  for (int a = 1; a < argc; ++a) {
    (std::string(argv[a]).rfind("--kokkos-", 0) == 0 ? kokkos_args : cli_args).push_back(argv[a]);
  }

  if (auto const bad = cli::check_kokkos_args(kokkos_args)) {
    if (root) fmt::print(stderr, "t3k: error: {}\n", *bad);
    return cli::exit_bad_input;
  }

  CLI::App app{"t3k: probe jets, orthogonal frames, J v and J^T r of Tucker tensor trains on HDF5 files"};
  app.name("t3k");
  bool version = false;
  app.add_flag("--version", version, "print the T3K and Kokkos versions and the enabled backends");
  app.require_subcommand(0, 1);

  // Registered in the order `t3k --help` lists them.
  cli::DemoOptions demo_options;
  CLI::App* const demo = cli::add_demo_command(app, demo_options);
  cli::ProbeCommandOptions probe_options;
  cli::ProbeCommands const probe = cli::add_probe_commands(app, probe_options);
  cli::EstimateChunkOptions estimate_options;
  CLI::App* const estimate = cli::add_estimate_chunk_command(app, estimate_options);
  cli::MeasurementCommandOptions measurement_options;
  CLI::App* const predict = cli::add_predict_command(app, measurement_options);
  CLI::App* const score = cli::add_score_command(app, measurement_options);
  t3k::fit::FitCommandOptions fit_options;
  CLI::App* const fit = t3k::fit::add_fit_command(app, fit_options);

  // Every rank parses the same arguments, so every rank reaches the same outcome; rank 0 alone says so.
  try {
    app.parse(int(cli_args.size()), cli_args.data());
  } catch (CLI::CallForHelp const& e) {
    return root ? app.exit(e) : e.get_exit_code();
  } catch (CLI::CallForAllHelp const& e) {
    return root ? app.exit(e) : e.get_exit_code();
  } catch (CLI::ParseError const& e) {
    if (root) fmt::print(stderr, "t3k: error: {}\n", e.what());
    return cli::exit_bad_input;
  }
  if (version) {
    if (root) cli::print_version();
    return cli::exit_success;
  }
  auto const selected = app.get_subcommands();
  if (selected.empty()) {
    if (root) {
      fmt::print(stderr, "{}", app.help());
      fmt::print(stderr, "t3k: error: a command is required\n");
    }
    return cli::exit_bad_input;
  }
  CLI::App* const command = selected.front();
  std::string const name = command->get_name();
  // fit reads its configuration before initializing Kokkos (the configuration sets the thread count).
  if (command == fit) return t3k::fit::run_fit_command(fit_options, kokkos_args, comm);

  try {
    int kokkos_argc = int(kokkos_args.size());
    t3k::KokkosScope kokkos(kokkos_argc, kokkos_args.data(), t3k::IdleHostThreads::released);
    if (root && (command == probe.jets || command == probe.jv || command == probe.jtr || command == predict ||
                 command == score)) {
      std::string const blas_warning = t3k::host_blas_warning();
      if (!blas_warning.empty()) fmt::print(stderr, "t3k {}: warning: {}\n", name, blas_warning);
    }
    if (command == probe.jets) return cli::run_jets(probe_options, comm);
    if (command == probe.jv) return cli::run_jv(probe_options, comm);
    if (command == probe.jtr) return cli::run_jtr(probe_options, comm);
    if (command == predict) return cli::run_predict(measurement_options, comm);
    if (command == score) return cli::run_score(measurement_options, comm);
    // Commands without a probe set to share run on rank 0; the other ranks wait for its exit code.
    int code = cli::exit_failure;
    if (root) {
      try {
        if (command == demo) {
          code = cli::run_demo(demo_options);
        } else if (command == probe.frame) {
          code = cli::run_frame(probe_options);
        } else if (command == estimate) {
          code = cli::run_estimate_chunk(estimate_options);
        } else {
          fmt::print(stderr, "t3k {}: error: not implemented\n", name);
        }
      } catch (std::exception const& e) {
        fmt::print(stderr, "t3k {}: error: {}\n", name, e.what());
        code = cli::command_exit_code(e);
      }
    }
    comm.broadcast(&code, 1);
    return code;
  } catch (cli::CollectiveError const& e) {
    // Every rank holds this error; rank 0 prints it.
    if (root) fmt::print(stderr, "t3k {}: error: {}\n", name, e.what());
    return e.exit_code();
  } catch (std::exception const& e) {
    // The library's collective checks throw on every rank alike; anything else failed on this rank alone, and the
    // other ranks may wait for it in a collective call: then MPI_Abort is the only way to end them.
    bool const on_every_rank = cli::thrown_on_every_rank(e);
    if (root || !on_every_rank) {
      fmt::print(stderr, "t3k {}: error: {}{}\n", name,
                 comm.size() > 1 && !on_every_rank ? fmt::format("rank {}: ", comm.rank_index()) : std::string(),
                 e.what());
    }
    if (!on_every_rank) cli::abort_if_distributed(comm, cli::command_exit_code(e));
    return cli::command_exit_code(e);
  }
}
