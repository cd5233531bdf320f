/// \file fit_command.cpp
/// `t3k fit`: command-line registration and the order of work (configuration, Kokkos, fit).

#include "drivers/fit_command.hpp"

#include "drivers/collective.hpp"
#include "drivers/exit_codes.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/kokkos_scope.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace t3k {
namespace fit {

CLI::App* add_fit_command(CLI::App& app, FitCommandOptions& options) {
  auto* fit = app.add_subcommand("fit",
                                 "fit a T3 to a synthetic or HDF5 probe set as a YAML file describes "
                                 "(docs/config.md); writes model.h5, history.csv, summary.yaml, "
                                 "convergence.svg and checkpoints to output.directory");
  fit->add_option("config", options.config, "YAML configuration file")->required();
  fit->add_flag("--resume", options.run.resume,
                "continue from output.directory/checkpoint.h5 (same problem, model and optimizer keys)");
  fit->add_flag("--quiet", options.run.quiet, "no progress lines and no closing report");
  fit->add_option("--log-json", options.run.log_json, "write one JSON object per iteration to this file");
  fit->add_flag("--plain-log", options.run.force_plain_log, "plain log lines even on a terminal");
  // Test aid (hidden): simulates a kill right after the checkpoint of iteration N is written; exits 3.
  fit->add_option_function<std::string>(
         "--stop-after",
         [&options](std::string const& text) {
           // Digits only: CLI11 reads "-1" into an unsigned option as 2^64 - 1.
           if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) {
             throw CLI::ValidationError("--stop-after", "must be a whole number (digits only), got '" + text + "'");
           }
           options.run.stop_after = std::stoull(text);
         },
         "")
      ->group("");
  return fit;
}

namespace {

bool starts_with(std::string const& s, char const* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

int run_fit_command(FitCommandOptions const& options, std::vector<char*> kokkos_args, Communicator const& comm) {
  bool const root = comm.rank_index() == 0;  // prints once
  Config config;
  try {
    // Every rank reads the configuration (a file every rank must see, like the data file).
    cli::collectively(comm, cli::fit_exit_code, [&] { config = load_config(options.config); });
  } catch (std::exception const& e) {
    if (root) fmt::print(stderr, "t3k fit: error: {}\n", e.what());
    return cli::fit_exit_code(e);
  }

  // The configuration's Kokkos settings, unless the command line gives them.
  bool has_threads = false, has_device = false;
  for (std::size_t a = 1; a < kokkos_args.size(); ++a) {
    std::string const arg = kokkos_args[a];
    has_threads = has_threads || starts_with(arg, "--kokkos-threads") || starts_with(arg, "--kokkos-num-threads");
    // The command line's thread count is the one in effect, and the one summary.yaml records.
    for (char const* flag : {"--kokkos-threads=", "--kokkos-num-threads="}) {
      if (starts_with(arg, flag) && std::atoi(arg.c_str() + std::strlen(flag)) > 0)
        config.kokkos.threads = std::atoi(arg.c_str() + std::strlen(flag));
    }
    has_device = has_device || starts_with(arg, "--kokkos-device-id");
  }
  std::vector<std::string> extra;
  if (config.kokkos.threads && !has_threads) {
    extra.push_back(t3k::impl::kokkos_threads_flag() + std::to_string(*config.kokkos.threads));
  }
  if (config.kokkos.device && !has_device)
    extra.push_back("--kokkos-device-id=" + std::to_string(*config.kokkos.device));
  for (auto& e : extra) kokkos_args.push_back(&e[0]);
  int kokkos_argc = int(kokkos_args.size());
  kokkos_args.push_back(nullptr);

  // Kokkos::initialize throws on arguments it rejects (a flag that disagrees with its KOKKOS_* environment
  // variable): a message and exit 2 rather than an uncaught exception.
  std::optional<t3k::KokkosScope> kokkos;
  try {
    kokkos.emplace(kokkos_argc, kokkos_args.data(), t3k::IdleHostThreads::released);
  } catch (std::exception const& e) {
    if (root) fmt::print(stderr, "t3k fit: error: {}\n", e.what());
    return cli::exit_bad_input;
  }
  try {
    return run_fit(config, options.run, comm);
  } catch (std::exception const& e) {
    int const code = cli::fit_exit_code(e);
    // With several ranks, run_fit throws on every rank alike (CollectiveError for what may fail on one rank, the
    // others from replicated decisions or the library's collective checks). Any other exception failed on this
    // rank alone while the others may wait in a collective call: MPI_Abort ends them.
    bool const on_every_rank = cli::thrown_on_every_rank(e);
    if (root || !on_every_rank) {
      std::string const where =
          comm.size() > 1 && !on_every_rank ? "rank " + std::to_string(comm.rank_index()) + ": " : std::string();
      // FitStopped is not an error: the run did what --stop-after asked.
      if (code == cli::exit_stopped) {
        fmt::print(stderr, "t3k fit: {}{}\n", where, e.what());
      } else {
        fmt::print(stderr, "t3k fit: error: {}{}\n", where, e.what());
      }
    }
    if (!on_every_rank) cli::abort_if_distributed(comm, code);
    return code;
  }
}

}  // namespace fit
}  // namespace t3k
