#pragma once
/// \file fit_run.hpp
/// Running a validated `t3k fit` configuration: building the problem (synthetic or from an HDF5 probe set) and the
/// initial model, running the optimizer with progress reporting and checkpoints, and writing the run directory
/// (model.h5, history.csv, summary.yaml, convergence.svg, checkpoint.h5). docs/config.md describes the outputs.
///
/// Kokkos must be initialized before `run_fit` (the command initializes it after parsing the configuration, with
/// the configured thread count).
///
/// Under MPI (docs/math.md, sharding) every rank holds only its rows of the probe set (fit_setup.hpp). The optimizer
/// runs on every rank with the same iterates; rank 0 alone prints and writes the run directory and the checkpoints.
/// Exit codes: errors.hpp.

#include "drivers/errors.hpp"
#include "drivers/fit_config.hpp"
#include "drivers/fit_types.hpp"

#include "t3k/core/communicator.hpp"

namespace t3k {
namespace fit {

/// Runs the fit and writes the run directory. Returns 0 when the outputs were written. With several ranks in
/// `comm` it is collective, and every rank throws the same exception: failures that can happen on some ranks
/// only (reading data, rank 0 writing) become t3k::cli::CollectiveError.
/// **Throws:** ConfigError (data shapes that disagree with the configuration, exit 2), FitUsageError (exit 2),
/// FitRuntimeError (exit 1), FitStopped (exit 3); t3k::io::FileError for outputs that cannot be written;
/// t3k::cli::CollectiveError (its exit code) with several ranks.
int run_fit(Config const& config, RunOptions const& options, Communicator const& comm = Communicator());

}  // namespace fit
}  // namespace t3k
