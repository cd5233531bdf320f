#pragma once
/// \file exit_codes.hpp
/// Which exception gives which exit code (errors.hpp lists the codes), for every command in one place.

#include "drivers/errors.hpp"

#include <exception>

namespace t3k {
namespace cli {

/// The exit code of jets, jv, jtr, frame, demo, estimate-chunk, predict and score: their inputs are checked as they
/// are read, so an unreadable file and what the library refuses (InvalidArgument, DimensionMismatch) are bad input.
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
