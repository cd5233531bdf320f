#pragma once
/// \file errors.hpp
/// The exit codes of the `t3k` tool and the exception types of its commands, at the bottom of the driver: every
/// other driver file may include this one, and it includes none of them. Which exception gives which exit code is
/// decided in exit_codes.hpp. docs/config.md lists the codes of `t3k fit`:
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
#include <string>

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

/// A failure that every rank throws identically, with the exit code of the failing rank's exception. The message
/// is the failing rank's, prefixed with "rank k: " unless every rank failed. Rank 0 prints it (collective.hpp).
class CollectiveError : public std::runtime_error {
 public:
  CollectiveError(int exit_code, std::string const& message) : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

/// A result that is not finite (exit 1: the inputs passed every check; the arithmetic overflowed).
class NonFiniteResult : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cli

namespace fit {

/// A position in the YAML file, 1-based; 0 when unknown.
struct Location {
  int line = 0;
  int column = 0;
};

/// A configuration the driver cannot run (exit code 2): the message names the file, line:column and key path.
/// Defined in fit_config.cpp, which formats the message.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string const& file, std::string key_path, Location where, std::string const& message);
  std::string const& key_path() const { return key_path_; }
  Location location() const { return location_; }

 private:
  std::string key_path_;
  Location location_;
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

}  // namespace fit
}  // namespace t3k
