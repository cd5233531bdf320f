#pragma once
// What the tests that run the t3k binary share: the shipped test data, a scratch directory per test, and running
// the CLI with its exit code and output captured.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <string>

namespace t3k_test {

inline std::string testdata(std::string const& name) { return std::string(T3K_TESTDATA_DIR) + "/" + name; }

/// A fresh empty directory per test, removed at the end.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(std::string const& prefix = "t3k_test") {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(ScratchDirectory const&) = delete;
  ScratchDirectory& operator=(ScratchDirectory const&) = delete;
  std::string file(std::string const& name) const { return (path_ / name).string(); }
  std::size_t n_entries() const {
    return std::size_t(
        std::distance(std::filesystem::directory_iterator(path_), std::filesystem::directory_iterator()));
  }

 private:
  std::filesystem::path path_;
};

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline std::string quoted(std::string const& s) { return "'" + s + "'"; }

/// Runs a shell command line and captures its exit code and its output (stdout and stderr together).
inline RunResult run_shell(std::string const& command_line) {
  std::string const command = command_line + " 2>&1";
  RunResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return result;
  }
  char buffer[4096];
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, got);
  int const status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

/// Runs `t3k <arguments>` (OMP_PROC_BIND=false, as ctest sets for the tests themselves) and captures its exit
/// code and output.
inline RunResult run_cli(std::string const& arguments) {
  return run_shell("OMP_PROC_BIND=false " + quoted(T3K_CLI_PATH) + " " + arguments);
}

}  // namespace t3k_test
