#pragma once
/// \file flag_checks.hpp
/// Checks of command-line values that CLI11 cannot make with a message that reads well, and of the --kokkos-*
/// arguments that go to Kokkos instead of CLI11. Every command of `t3k` uses them, so a bad value gets the same line
/// (and exit 2) whichever command it was given to.

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace t3k {
namespace cli {

/// An integer flag value in [minimum, maximum] ("must be an integer from 0 to 8, got '9'").
CLI::Validator integer_in(long long minimum, long long maximum);

/// An integer flag value >= `minimum` ("must be an integer >= 0, got '-1'").
CLI::Validator integer_at_least(long long minimum);

/// A whole number written in plain digits: CLI11 reads "-1" into an unsigned option as 2^64 - 1.
CLI::Validator whole_number();

/// Checks every --kokkos-* argument (`kokkos_args[0]` is the program name) before Kokkos parses it: Kokkos 3 throws
/// from Kokkos::initialize on a value that is not plain digits ("+4", "-5", "abc"), or overflows a thread table on a
/// huge one, and ignores a misspelt flag. Returns the message for the first bad one.
std::optional<std::string> check_kokkos_args(std::vector<char*> const& kokkos_args);

}  // namespace cli
}  // namespace t3k
