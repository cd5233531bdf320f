/// \file exit_codes.cpp
/// Exceptions to exit codes (exit_codes.hpp).

#include "drivers/exit_codes.hpp"

#include "t3k/io/hdf5_io.hpp"

#include "t3k/core/error.hpp"

namespace t3k {
namespace cli {

namespace {

template <class... Errors>
bool is_one_of(std::exception const& e) {
  return ((dynamic_cast<Errors const*>(&e) != nullptr) || ...);
}

}  // namespace

int command_exit_code(std::exception const& e) {
  if (auto const* collective = dynamic_cast<CollectiveError const*>(&e)) return collective->exit_code();
  return is_one_of<io::FileError, UsageError, InvalidArgument, DimensionMismatch>(e) ? exit_bad_input : exit_failure;
}

int fit_exit_code(std::exception const& e) {
  if (auto const* collective = dynamic_cast<CollectiveError const*>(&e)) return collective->exit_code();
  if (is_one_of<fit::ConfigError, fit::FitUsageError>(e)) return exit_bad_input;
  if (is_one_of<fit::FitStopped>(e)) return exit_stopped;
  return exit_failure;
}

bool thrown_on_every_rank(std::exception const& e) {
  return is_one_of<CollectiveError, fit::ConfigError, fit::FitUsageError, fit::FitRuntimeError, fit::FitStopped,
                   InvalidArgument, DimensionMismatch>(e);
}

}  // namespace cli
}  // namespace t3k
