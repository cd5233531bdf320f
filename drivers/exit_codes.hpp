#pragma once
/// \file exit_codes.hpp
/// The exit codes of the `t3k` tool and which exception gives which, for every command in one place
/// (docs/config.md lists those of `t3k fit`):
///
/// | code | meaning |
/// |---|---|
/// | 0 | success |
/// | 1 | any other failure: a non-finite loss, an output that cannot be written |
/// | 2 | bad input: a flag, a configuration key, a missing or misshapen dataset, an unreadable file |
/// | 3 | `t3k fit` stopped by the test-only `--stop-after N` after writing its checkpoint |
/// | 128 + N | `t3k fit` interrupted by signal N (SIGINT: 130, SIGTERM: 143) after writing its outputs |

#include <exception>
#include <stdexcept>

namespace t3k {
namespace cli {

enum ExitCode : int {
  exit_success = 0,
  exit_failure = 1,
  exit_bad_input = 2,
  exit_stopped = 3,
  exit_interrupted = 128
};

/// Bad input the user can fix (exit code 2); the message names the flag or the dataset.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The exit code of jets, jv, jtr, frame, demo and estimate-chunk: their inputs are checked as they are read, so
/// an unreadable file and what the library refuses (InvalidArgument, DimensionMismatch) are bad input.
int command_exit_code(std::exception const& e);

/// The exit code of `t3k fit`: its configuration and data are checked before the fit (ConfigError, FitUsageError),
/// so what fails later, an output file or a library check included, is a failure of the run.
int fit_exit_code(std::exception const& e);

/// Whether a sharded run throws `e` on every rank alike (a CollectiveError, a replicated decision or a collective
/// library check), so that every rank can return its exit code; anything else may have failed on one rank alone
/// while the others wait in a collective call, and only MPI_Abort ends them.
bool thrown_on_every_rank(std::exception const& e);

}  // namespace cli
}  // namespace t3k
