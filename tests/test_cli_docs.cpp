// What the user guide promises about the t3k tool's output: nothing but T3K's own lines on stdout (Kokkos' advice on
// OMP_PROC_BIND stays out, so `--quiet` is quiet and output can be parsed), error locations that mean something, and
// a summary that records the thread count in effect.
#ifdef T3K_TESTS_HAVE_IO

#include "cli_harness.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

using t3k_test::quoted;
using t3k_test::run_shell;
using t3k_test::ScratchDirectory;

/// Runs `t3k <arguments>` with OMP_PROC_BIND and OMP_PLACES unset, as a user's shell usually has them, and only
/// stdout captured (stderr discarded).
t3k_test::RunResult run_cli_stdout_unbound(std::string const& arguments) {
  return run_shell("env -u OMP_PROC_BIND -u OMP_PLACES OMP_NUM_THREADS=2 " + quoted(T3K_CLI_PATH) + " " + arguments +
                   " 2>/dev/null");
}

std::string read_file(std::string const& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_tiny_fit_config(std::string const& path, std::string const& directory) {
  std::ofstream out(path);
  out << "problem:\n"
         "  synthetic: {mode_shapes: [4, 4, 4], tucker_ranks: [2, 2, 2], tt_ranks: [1, 2, 2, 1], order: 1,\n"
         "              n_probes: 64, seed: 1}\n"
         "model:\n"
         "  init: {random: {seed: 2}}\n"
         "optimizer: {name: gradient_descent, max_iterations: 1}\n"
         "output: {directory: "
      << directory
      << "}\n"
         "kokkos: {threads: 2}\n";
}

void commands_print_no_kokkos_advice_on_stdout() {
  auto const chunk = run_cli_stdout_unbound(
      "estimate-chunk --mode-shapes 8,8,8 --tucker-ranks 2,2,2 --tt-ranks 1,2,2,1 --order 2 --n-probes 1000");
  EXPECT_EQ(chunk.exit_code, 0) << chunk.output;
  EXPECT_EQ(chunk.output.find("OMP_PROC_BIND"), std::string::npos) << chunk.output;
  EXPECT_NE(chunk.output.find("chunk_size"), std::string::npos) << chunk.output;

  ScratchDirectory dir;
  write_tiny_fit_config(dir.file("run.yaml"), quoted(dir.file("out")));
  auto const fit = run_cli_stdout_unbound("fit --quiet " + quoted(dir.file("run.yaml")));
  EXPECT_EQ(fit.exit_code, 0) << fit.output;
  EXPECT_EQ(fit.output, "") << "t3k fit --quiet printed to stdout:\n" << fit.output;
}

void missing_configuration_is_reported_without_a_line_number() {
  ScratchDirectory dir;
  std::string const missing = dir.file("nosuch.yaml");
  auto const r = t3k_test::run_cli("fit " + quoted(missing));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("t3k fit: error: " + missing + ": cannot open the configuration file"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find(":0:0:"), std::string::npos) << r.output;
}

/// The summary's `kokkos: threads` and `concurrency` after `t3k fit --quiet <flags>` on a configuration that asks
/// for two threads (more than one only where the tool runs on OpenMP).
void summary_records_threads(std::string const& flags, int threads) {
  ScratchDirectory dir;
  write_tiny_fit_config(dir.file("run.yaml"), quoted(dir.file("out")));
  auto const r = t3k_test::run_cli("fit --quiet " + flags + quoted(dir.file("run.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string const summary = read_file(dir.file("out/summary.yaml"));
  if (threads > 1 && summary.find("execution_space: OpenMP\n") == std::string::npos) {
    GTEST_SKIP() << "the tool's default execution space has no OpenMP pool to start";
  }
  std::string const count = std::to_string(threads);
  EXPECT_NE(summary.find("kokkos:\n    threads: " + count + "\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("concurrency: " + count + "\n"), std::string::npos) << summary;
}

}  // namespace

TEST(CliDocs, CommandsPrintNoKokkosAdviceOnStdout) { commands_print_no_kokkos_advice_on_stdout(); }
TEST(CliDocs, MissingConfigurationIsReportedWithoutALineNumber) {
  missing_configuration_is_reported_without_a_line_number();
}
TEST(CliDocs, SummaryRecordsTheThreadCountOfTheCommandLine) { summary_records_threads("--kokkos-threads=1 ", 1); }
// The host pool starts on the main thread's core (t3k/core/kokkos_scope.hpp) and keeps every thread asked for.
TEST(CliDocs, PoolStartedOnOneCoreKeepsItsThreads) { summary_records_threads("", 2); }

#endif  // T3K_TESTS_HAVE_IO
