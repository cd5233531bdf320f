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
/// Exit codes: exit_codes.hpp.

#include "drivers/fit_config.hpp"

#include "t3k/core/communicator.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace t3k {
namespace fit {

/// Flags of `t3k fit` beyond the configuration.
struct RunOptions {
  bool resume = false;           ///< continue from output.directory/checkpoint.h5
  bool quiet = false;            ///< no progress lines and no closing report
  std::string log_json;          ///< one JSON object per iteration to this file ("" = none)
  std::size_t stop_after = 0;    ///< test aid: exit 3 right after the checkpoint of this iteration is written (0: off)
  bool force_plain_log = false;  ///< plain log lines even on a terminal
};

/// Bad input found after the configuration was loaded that is not tied to a key (a missing or foreign checkpoint
/// for --resume). Exit code 2.
class FitUsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A failure while running (non-finite loss, an output that cannot be written). Exit code 1. The last good
/// checkpoint and the outputs of earlier runs are left as they were.
class FitRuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The run was stopped on purpose by RunOptions::stop_after after writing its checkpoint. Exit code 3.
class FitStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The names of the files of a run directory.
struct RunFiles {
  static constexpr char const* model = "model.h5";
  static constexpr char const* history = "history.csv";
  static constexpr char const* summary = "summary.yaml";
  static constexpr char const* plot = "convergence.svg";
  static constexpr char const* checkpoint = "checkpoint.h5";
};

/// Runs the fit and writes the run directory. Returns 0 when the outputs were written. With several ranks in
/// `comm` it is collective, and every rank throws the same exception: failures that can happen on some ranks
/// only (reading data, rank 0 writing) become t3k::cli::CollectiveError.
/// **Throws:** ConfigError (data shapes that disagree with the configuration, exit 2), FitUsageError (exit 2),
/// FitRuntimeError (exit 1), FitStopped (exit 3); t3k::io::FileError for outputs that cannot be written;
/// t3k::cli::CollectiveError (its exit code) with several ranks.
int run_fit(Config const& config, RunOptions const& options, Communicator const& comm = Communicator());

}  // namespace fit
}  // namespace t3k
