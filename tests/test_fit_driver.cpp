// `t3k fit CONFIG.yaml`: end-to-end runs of the built CLI for every optimizer and both problem sources,
// killed-and-resumed runs equal to uninterrupted ones, every class of validation error with its key path and
// line:column, a runtime failure that leaves the last good checkpoint intact, and a seeded fuzz test of the
// configuration loader (in process).
//
// The kill is simulated with the hidden test flag `--stop-after N`: the run exits (code 3) right after the
// checkpoint of iteration N is written, exactly where a kill after that write would leave the run directory.
#ifdef T3K_TESTS_HAVE_IO

#include "cli_harness.hpp"
#include "drivers/fit_config.hpp"
#include "drivers/optimizer_keys.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/manifold_dimension.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/optimizers/adam.hpp"
#include "t3k/optimizers/gradient_descent.hpp"
#include "t3k/optimizers/mc_sgd.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace io = t3k::io;
namespace fs = std::filesystem;

using t3k_test::quoted;
using t3k_test::run_cli;
using t3k_test::RunResult;
using t3k_test::testdata;

/// A scratch directory named after this test program.
struct ScratchDirectory : t3k_test::ScratchDirectory {
  ScratchDirectory() : t3k_test::ScratchDirectory("t3k_test_fit") {}
};

void write_file(std::string const& path, std::string const& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_file(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// The number after "<key>: " inside the block "<section>:" of summary.yaml (top-level sections, 2-space keys).
double summary_value(std::string const& summary, std::string const& section, std::string const& key) {
  auto const s = summary.find("\n" + section + ":\n");
  if (s == std::string::npos) return NAN;
  auto const k = summary.find("\n  " + key + ": ", s + 1);
  if (k == std::string::npos) return NAN;
  return std::strtod(summary.c_str() + k + key.size() + 5, nullptr);
}

/// A small synthetic problem (d = 4, K = 1) with `optimizer` as the optimizer section's body.
std::string synthetic_config(std::string const& directory, std::string const& optimizer,
                             std::string const& init = "random: {seed: 5}", std::string const& extra = "") {
  return "problem:\n"
         "  synthetic:\n"
         "    mode_shapes: [5, 4, 6, 5]\n"
         "    tucker_ranks: [2, 3, 2, 2]\n"
         "    tt_ranks: [1, 2, 3, 2, 1]\n"
         "    order: 1\n"
         "    n_probes: 120\n"
         "    noise: 0\n"
         "    seed: 11\n"
         "model:\n"
         "  init: {" +
         init +
         "}\n"
         "optimizer:\n" +
         optimizer +
         "output:\n"
         "  directory: " +
         directory +
         "\n"
         "  checkpoint_every: 2\n"
         "kokkos:\n"
         "  threads: 2\n" +
         extra;
}

/// Reads the T3 of a model.h5 or checkpoint.h5 as flat core arrays.
std::vector<std::vector<double>> t3_arrays(std::string const& path) {
  io::Reader r(path);
  auto const x = r.read_t3();
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    auto const u = x.tucker_core(i);
    auto const g = x.tt_core(i);
    out.emplace_back(u.data(), u.data() + u.size());
    out.emplace_back(g.data(), g.data() + g.size());
  }
  return out;
}

/// The cells of a CSV row, empty ones (figures not computed) included.
std::vector<std::string> csv_cells(std::string const& line) {
  std::vector<std::string> cells(1);
  for (char c : line) {
    if (c == ',')
      cells.emplace_back();
    else
      cells.back() += c;
  }
  return cells;
}

/// history.csv without the elapsed_seconds column (wall time differs between runs).
std::vector<std::string> history_without_time(std::string const& path) {
  std::istringstream in(read_file(path));
  std::vector<std::string> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells = csv_cells(line);
    if (cells.size() != 10) {
      ADD_FAILURE() << path << ": row '" << line << "' has " << cells.size() << " columns";
      continue;
    }
    cells.erase(cells.begin() + 5);
    std::string joined;
    for (auto const& c : cells) joined += c + ",";
    rows.push_back(joined);
  }
  return rows;
}

std::size_t count_lines(std::string const& text) { return std::size_t(std::count(text.begin(), text.end(), '\n')); }

// ------------------------------------------------------------------------------------------- end to end

/// Runs a config end to end and checks every output of the run directory; returns the summary text.
std::string run_and_check_outputs(ScratchDirectory const& dir, std::string const& config_text,
                                  std::vector<std::size_t> const& mode_shapes) {
  write_file(dir.file("run.yaml"), config_text);
  std::string const json = dir.file("log.jsonl");
  auto const r = run_cli("fit " + quoted(dir.file("run.yaml")) + " --log-json " + quoted(json));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("outputs in " + dir.file("out")), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("iteration 1 loss"), std::string::npos) << "plain progress log expected (not a TTY)";
  std::string const summary = read_file(dir.file("out/summary.yaml"));
  for (char const* key : {"t3k_version:", "kokkos_version:", "backend:", "config:", "manifold_dimension:", "initial:",
                          "final:", "converged:", "reason:", "timings_seconds:", "chunk_size:"}) {
    EXPECT_NE(summary.find(key), std::string::npos) << key << " missing in summary.yaml:\n" << summary;
  }
  double const initial = summary_value(summary, "initial", "loss");
  double const final_loss = summary_value(summary, "final", "loss");
  double const iterations = summary_value(summary, "final", "iterations");
  EXPECT_TRUE(std::isfinite(initial) && std::isfinite(final_loss)) << summary;
  EXPECT_LT(final_loss, initial) << summary;
  EXPECT_TRUE(std::isfinite(summary_value(summary, "final", "relative_residual")));
  EXPECT_TRUE(std::isfinite(summary_value(summary, "final", "gradient_norm")));
  // The model in the docs/file-format.md layout.
  io::Reader model(dir.file("out/model.h5"));
  EXPECT_EQ(model.read_t3().mode_shapes(), mode_shapes);
  // One history row and one JSON record per iteration (0..n).
  std::string const history = read_file(dir.file("out/history.csv"));
  EXPECT_EQ(history.rfind("iteration,loss,relative_residual,gradient_norm,step,elapsed_seconds,chunk_size", 0), 0u);
  EXPECT_EQ(double(count_lines(history)), iterations + 2) << history;
  std::string const records = read_file(json);
  EXPECT_EQ(double(count_lines(records)), iterations + 1) << records;
  EXPECT_EQ(records.rfind("{\"iteration\": 0, \"loss\": ", 0), 0u) << records;
  // A plot a person can open: an SVG with log-scale axes and labels.
  std::string const svg = read_file(dir.file("out/convergence.svg"));
  for (char const* part :
       {"<svg", "</svg>", "<polyline", "iteration", "loss (log scale)", "gradient norm (log scale)", ">1e"}) {
    EXPECT_NE(svg.find(part), std::string::npos) << part;
  }
  EXPECT_TRUE(fs::exists(dir.file("out/checkpoint.h5")));
  return summary;
}

void synthetic_newton_cg_reaches_a_tiny_residual() {
  ScratchDirectory dir;
  std::string const summary = run_and_check_outputs(
      dir, synthetic_config("out", "  name: newton_cg\n  max_iterations: 40\n  tol_relative_residual: 1.0e-10\n"),
      {5, 4, 6, 5});
  EXPECT_LT(summary_value(summary, "final", "relative_residual"), 1e-8) << summary;
  EXPECT_NE(summary.find("converged: true"), std::string::npos) << summary;
}

// With the tolerances off, newton_cg runs until its line search can no longer verify a decrease: summary.yaml
// reports that as convergence with the reason the library and the Python module give (docs/math.md).
void synthetic_fit_to_rounding_level_converges() {
  ScratchDirectory dir;
  std::string const summary = run_and_check_outputs(
      dir, synthetic_config("out", "  name: newton_cg\n  max_iterations: 200\n  tol_gradient: 0\n"), {5, 4, 6, 5});
  EXPECT_LT(summary_value(summary, "final", "relative_residual"), 1e-10) << summary;
  EXPECT_NE(summary.find("converged: true"), std::string::npos) << summary;
  EXPECT_NE(summary.find(std::string("reason: ") + t3k::line_search_rounding_reason), std::string::npos) << summary;
}

void synthetic_gradient_descent_runs() {
  ScratchDirectory dir;
  run_and_check_outputs(dir, synthetic_config("out", "  name: gradient_descent\n  max_iterations: 8\n"), {5, 4, 6, 5});
}

std::vector<std::vector<double>> history_numbers(std::string const& path);

/// mc_sgd and adam compute no gradient at x0: history.csv leaves the cell of iteration 0 empty and --log-json writes
/// null, while the rows after it hold the norm of the first minibatch gradient.
void expect_no_gradient_norm_at_iteration_0(ScratchDirectory const& dir) {
  auto const rows = history_numbers(dir.file("out/history.csv"));
  ASSERT_GE(rows.size(), 2u);
  EXPECT_TRUE(std::isnan(rows[0][3])) << read_file(dir.file("out/history.csv"));
  EXPECT_GT(rows[1][3], 0) << read_file(dir.file("out/history.csv"));
  std::string const records = read_file(dir.file("log.jsonl"));
  std::string const first = records.substr(0, records.find('\n'));
  EXPECT_NE(first.find("\"gradient_norm\": null"), std::string::npos) << first;
}

void synthetic_mc_sgd_runs() {
  ScratchDirectory dir;
  run_and_check_outputs(dir,
                        synthetic_config("out",
                                         "  name: mc_sgd\n  max_iterations: 8\n  batch_size: 40\n"
                                         "  schedule: cosine\n  eval_every: 2\n  seed: 3\n"),
                        {5, 4, 6, 5});
  expect_no_gradient_norm_at_iteration_0(dir);
}

void synthetic_adam_runs() {
  ScratchDirectory dir;
  run_and_check_outputs(dir,
                        synthetic_config("out",
                                         "  name: adam\n  max_iterations: 8\n  alpha_rel: 0.05\n"
                                         "  batch_size: 60\n  seed: 4\n"),
                        {5, 4, 6, 5});
  expect_no_gradient_norm_at_iteration_0(dir);
}

/// The probes per pass that `chunk_size: requested` runs with n_probes probes: the rule of docs/config.md written out
/// here, on the reduction block the library uses on the tool's space.
std::size_t chunk_rows_as_run(std::size_t requested, std::size_t n_probes) {
  std::size_t const block = t3k::reduction_block_size_for<Kokkos::DefaultExecutionSpace>();
  if (requested >= n_probes) return n_probes;
  std::size_t const rows = requested < block ? block : requested - requested % block;
  return rows < n_probes ? rows : n_probes;
}

/// A requested chunk size that is not a whole number of reduction blocks: summary.yaml and history.csv record the size
/// J^T runs (docs/config.md: rounded down to whole blocks, at least one, all probes when it covers them), not the
/// request.
void requested_chunk_size_is_recorded_as_it_runs() {
  std::size_t const n_probes = 150, requested = 50;
  std::size_t const expected = chunk_rows_as_run(requested, n_probes);
  ScratchDirectory dir;
  std::string config = synthetic_config("out", "  name: gradient_descent\n  max_iterations: 2\n", "random: {seed: 5}",
                                        "chunk_size: " + std::to_string(requested) + "\n");
  auto const at = config.find("n_probes: 120");
  ASSERT_NE(at, std::string::npos);
  config.replace(at, 13, "n_probes: " + std::to_string(n_probes));
  write_file(dir.file("run.yaml"), config);
  auto const r = run_cli("fit " + quoted(dir.file("run.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string const summary = read_file(dir.file("out/summary.yaml"));
  EXPECT_EQ(summary_value(summary, "chunk_size", "requested"), double(requested)) << summary;
  EXPECT_EQ(summary_value(summary, "chunk_size", "used"), double(expected)) << summary;
  auto const rows = history_numbers(dir.file("out/history.csv"));
  ASSERT_EQ(rows.size(), 3u) << read_file(dir.file("out/history.csv"));
  for (auto const& row : rows) EXPECT_EQ(row[6], double(expected)) << read_file(dir.file("out/history.csv"));
}

/// An HDF5 probe set of a planted T3 in the docs/file-format.md layout, with per-probe weights.
void write_planted_data_file(std::string const& path, std::size_t n_probes, bool with_weights) {
  Kokkos::DefaultHostExecutionSpace space;
  auto const truth = t3k::random_t3<double>(space, {5, 6, 4}, {2, 3, 2}, {1, 2, 2, 1}, 21);
  auto const p = t3k::make_planted_problem(space, truth, n_probes, 2, 0.0, 22);
  io::ProbeSet probes;
  io::JetStack jets;
  for (std::size_t i = 0; i < p.n_modes(); ++i) {
    probes.w.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.ww[i]));
    probes.p.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.pp[i]));
    jets.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.targets[i]));
  }
  probes.order = 2;
  io::Writer w(path);
  w.write_probes(probes);
  w.write_jets("/jets", jets);
  if (with_weights) {
    std::vector<double> weights(n_probes);
    for (std::size_t s = 0; s < n_probes; ++s) weights[s] = 0.5 + double(s % 3);
    w.write_raw("/weights", {n_probes}, weights.data());
  }
  w.commit();
}

/// history.csv as numbers: one row of (iteration, loss, relative_residual, gradient_norm, step, ...) per iteration;
/// an empty cell (not computed) is NaN.
std::vector<std::vector<double>> history_numbers(std::string const& path) {
  std::istringstream in(read_file(path));
  std::vector<std::vector<double>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<double> row;
    for (auto const& cell : csv_cells(line)) row.push_back(cell.empty() ? NAN : std::strtod(cell.c_str(), nullptr));
    rows.push_back(row);
  }
  return rows;
}

// `t3k fit` on a data problem from a model file takes the library optimizer's iterates: the planted problem of
// write_planted_data_file and the start written to x0.h5 are rebuilt in process, the optimizer run with the options
// the config names, and every history row's loss, gradient norm and step and the final model compared. Both run the
// same code on the same data in the same space; the history is printed to 17 digits, so 1e-12 relative only leaves
// room for reductions ordered differently. A step the driver scaled differently (or a config value it dropped)
// changes the first step already.
void data_problem_runs_match_the_library_optimizers() {
  using Space = Kokkos::DefaultExecutionSpace;
  using Mem = Space::memory_space;
  Space space;
  auto const truth = t3k::random_t3<double>(space, {5, 6, 4}, {2, 3, 2}, {1, 2, 2, 1}, 21);
  auto const problem = t3k::make_planted_problem(space, truth, 150, 2, 0.0, 22);
  auto const x0 = t3k::random_t3<double>(space, {5, 6, 4}, {2, 3, 2}, {1, 2, 2, 1}, 31);
  auto check = [&](std::string const& name, std::string const& optimizer_yaml, auto const& fit_fn) {
    ScratchDirectory dir;
    write_planted_data_file(dir.file("probes.h5"), 150, false);
    {
      io::Writer w(dir.file("x0.h5"));
      w.write_t3(t3k::copy_t3_to<Kokkos::HostSpace>(space, x0));
      w.commit();
    }
    write_file(dir.file("run.yaml"),
               "problem:\n  data: {file: probes.h5, order: 2}\nmodel:\n  init: {file: x0.h5}\n"
               "optimizer:\n" +
                   optimizer_yaml + "output: {directory: out}\n");
    auto const r = run_cli("fit " + quoted(dir.file("run.yaml")) + " --quiet");
    ASSERT_EQ(r.exit_code, 0) << name << "\n" << r.output;
    t3k::FitResult<double, Mem> const expected = fit_fn();
    auto const rows = history_numbers(dir.file("out/history.csv"));
    ASSERT_EQ(rows.size(), expected.history.size()) << name;
    ASSERT_GE(rows.size(), 3u) << name;
    double const tol = 1e-12;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      auto const& e = expected.history[k];
      ASSERT_GE(rows[k].size(), 5u) << name;
      EXPECT_EQ(rows[k][0], double(e.iteration)) << name << " row " << k;
      EXPECT_NEAR(rows[k][1], e.loss, tol * e.loss) << name << " loss, iteration " << k;
      if (std::isnan(e.gradient_norm)) {
        EXPECT_TRUE(std::isnan(rows[k][3]))
            << name << ": a gradient norm not computed is an empty cell, iteration " << k;
      } else {
        EXPECT_NEAR(rows[k][3], e.gradient_norm, tol * e.gradient_norm) << name << " gradient norm, iteration " << k;
      }
      EXPECT_NEAR(rows[k][4], e.step, tol * std::max(e.step, expected.history[1].step)) << name << " step " << k;
    }
    auto const got = t3_arrays(dir.file("out/model.h5"));
    auto const want = t3k::copy_t3_to<Kokkos::HostSpace>(space, expected.x);
    ASSERT_EQ(got.size(), 2 * want.n_modes()) << name;
    for (std::size_t i = 0; i < want.n_modes(); ++i) {
      auto const u = want.tucker_core(i);
      auto const g = want.tt_core(i);
      for (std::size_t e = 0; e < u.size(); ++e) EXPECT_NEAR(got[2 * i][e], u.data()[e], 1e-10) << name;
      for (std::size_t e = 0; e < g.size(); ++e) EXPECT_NEAR(got[2 * i + 1][e], g.data()[e], 1e-10) << name;
    }
  };
  check("gradient_descent", "  name: gradient_descent\n  max_iterations: 6\n  armijo_c1: 0.3\n", [&] {
    t3k::GradientDescentOptions o;
    o.common.max_iterations = 6;
    o.armijo_c1 = 0.3;
    return t3k::gradient_descent(space, problem, x0, o);
  });
  check("adam", "  name: adam\n  max_iterations: 6\n  alpha_rel: 0.05\n  beta1: 0.6\n", [&] {
    t3k::AdamOptions o;
    o.common.max_iterations = 6;
    o.alpha_rel = 0.05;
    o.beta1 = 0.6;
    return t3k::adam(space, problem, x0, o);
  });
  check("mc_sgd", "  name: mc_sgd\n  max_iterations: 6\n  batch_size: 40\n  eval_every: 2\n  seed: 3\n", [&] {
    t3k::McSgdOptions o;
    o.common.max_iterations = 6;
    o.common.seed = 3;
    o.batch_size = 40;
    o.eval_every = 2;
    return t3k::mc_sgd(space, problem, x0, o);
  });
}

void data_problem_newton_cg_fits_a_weighted_probe_set() {
  ScratchDirectory dir;
  write_planted_data_file(dir.file("probes.h5"), 150, true);
  std::string const config =
      "problem:\n"
      "  data: {file: probes.h5, weights: /weights, order: 2}\n"
      "model:\n"
      "  tucker_ranks: [2, 3, 2]\n"
      "  tt_ranks: [1, 2, 2, 1]\n"
      "  init: {random: {seed: 9}}\n"
      "optimizer:\n"
      "  name: newton_cg\n"
      "  max_iterations: 40\n"
      "  tol_relative_residual: 1.0e-10\n"
      "chunk_size: 50\n"
      "output: {directory: out, checkpoint_every: 3}\n";
  std::string const summary = run_and_check_outputs(dir, config, {5, 6, 4});
  EXPECT_LT(summary_value(summary, "final", "relative_residual"), 1e-8) << summary;
  EXPECT_NE(summary.find("source: data"), std::string::npos);
  EXPECT_EQ(summary_value(summary, "chunk_size", "used"), double(chunk_rows_as_run(50, 150))) << summary;
}

void data_problem_reference_file_runs_each_first_order_method() {
  // tests/data/case1_ragged.h5: d = 4, W = 6, K = 2, ragged shapes; a model started from the file's own /t3.
  for (std::string const name : {"gradient_descent", "adam"}) {
    ScratchDirectory dir;
    std::string const config = "problem:\n  data: {file: " + testdata("case1_ragged.h5") +
                               "}\n"
                               "model:\n  init: {file: " +
                               testdata("case1_ragged.h5") +
                               "}\n"
                               "optimizer: {name: " +
                               name +
                               ", max_iterations: 3}\n"
                               "output: {directory: out, checkpoint_every: 1}\n";
    write_file(dir.file("run.yaml"), config);
    auto const r = run_cli("fit " + quoted(dir.file("run.yaml")) + " --quiet");
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.output;
    EXPECT_EQ(r.output, "") << "--quiet prints nothing";
    std::string const summary = read_file(dir.file("out/summary.yaml"));
    // The file's /t3 produced the file's /jets: the start is already exact.
    EXPECT_LT(summary_value(summary, "initial", "relative_residual"), 1e-12) << summary;
    EXPECT_TRUE(fs::exists(dir.file("out/model.h5")));
  }
}

// ------------------------------------------------------------------------------------------------ resume

/// Rewrites a checkpoint the way earlier versions wrote it: text datasets as one float64 character code per byte.
void store_checkpoint_text_as_character_codes(std::string const& path) {
  io::Reader in(path);
  std::string const scratch = path + ".codes.h5";
  {
    io::Writer out(scratch);
    out.write_t3(in.read_t3());
    for (std::string const name : {"optimizer", "fingerprint", "scalar_names"}) {
      std::string const object = "/checkpoint/" + name;
      if (!in.exists(object)) continue;
      ASSERT_TRUE(in.is_text(object)) << object;
      std::string const text = in.read_text(object);
      std::vector<double> codes;
      for (unsigned char c : text) codes.push_back(double(c));
      if (!codes.empty()) out.write_raw(object, {codes.size()}, codes.data());
    }
    std::vector<std::string> numeric{"iteration", "scalar_values", "sampler_state", "second_moments", "history"};
    for (std::size_t i = 0; in.exists("/checkpoint/moment/tt/" + std::to_string(i)); ++i) {
      numeric.push_back("moment/tucker/" + std::to_string(i));
      numeric.push_back("moment/tt/" + std::to_string(i));
    }
    for (auto const& name : numeric) {
      std::string const object = "/checkpoint/" + name;
      if (!in.exists(object)) continue;
      std::vector<std::size_t> shape;
      auto const data = in.read_raw(object, shape);
      out.write_raw(object, shape, data.data());
    }
    out.write_root_attributes(in.read_root_attributes());
    out.commit();
  }
  fs::rename(scratch, path);
}

/// Run A: uninterrupted. Run B: the same config stopped right after the checkpoint of iteration `stop` (simulated
/// kill), then resumed (from a checkpoint in the earlier text format with `legacy_text`). model.h5 must be bitwise
/// equal and the histories equal but for wall time.
void resumed_run_equals_uninterrupted(std::string const& optimizer, std::size_t stop, bool legacy_text = false) {
  ScratchDirectory dir;
  fs::create_directories(dir.file("a"));
  fs::create_directories(dir.file("b"));
  std::string const config = synthetic_config("out", optimizer);
  write_file(dir.file("a/run.yaml"), config);
  write_file(dir.file("b/run.yaml"), config);
  auto const a = run_cli("fit " + quoted(dir.file("a/run.yaml")) + " --quiet");
  ASSERT_EQ(a.exit_code, 0) << a.output;

  auto const killed =
      run_cli("fit " + quoted(dir.file("b/run.yaml")) + " --quiet --stop-after " + std::to_string(stop));
  ASSERT_EQ(killed.exit_code, 3) << killed.output;
  EXPECT_NE(killed.output.find("checkpoint of iteration " + std::to_string(stop)), std::string::npos) << killed.output;
  ASSERT_TRUE(fs::exists(dir.file("b/out/checkpoint.h5")));
  EXPECT_FALSE(fs::exists(dir.file("b/out/model.h5"))) << "a killed run has no final outputs";
  if (legacy_text) store_checkpoint_text_as_character_codes(dir.file("b/out/checkpoint.h5"));

  auto const resumed = run_cli("fit " + quoted(dir.file("b/run.yaml")) + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming from"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find("iteration " + std::to_string(stop + 1) + " loss"), std::string::npos);
  EXPECT_EQ(resumed.output.find("iteration " + std::to_string(stop) + " loss"), std::string::npos)
      << "iterations before the checkpoint are not redone";

  auto const xa = t3_arrays(dir.file("a/out/model.h5"));
  auto const xb = t3_arrays(dir.file("b/out/model.h5"));
  ASSERT_EQ(xa.size(), xb.size());
  for (std::size_t k = 0; k < xa.size(); ++k) {
    ASSERT_EQ(xa[k].size(), xb[k].size());
    EXPECT_TRUE(std::equal(xa[k].begin(), xa[k].end(), xb[k].begin())) << optimizer << ": core array " << k;
  }
  EXPECT_EQ(history_without_time(dir.file("a/out/history.csv")), history_without_time(dir.file("b/out/history.csv")))
      << optimizer;
}

void resume_newton_cg() {
  resumed_run_equals_uninterrupted("  name: newton_cg\n  max_iterations: 6\n  tol_gradient: 0\n", 2);
}
void resume_gradient_descent() {
  resumed_run_equals_uninterrupted("  name: gradient_descent\n  max_iterations: 8\n  tol_gradient: 0\n", 4);
}
void resume_mc_sgd() {
  resumed_run_equals_uninterrupted(
      "  name: mc_sgd\n  max_iterations: 9\n  batch_size: 50\n  schedule: cosine\n  eval_every: 2\n"
      "  tol_gradient: 0\n  seed: 7\n  keep_loss_stack: true\n",
      4);
}
void resume_adam() {
  resumed_run_equals_uninterrupted(
      "  name: adam\n  max_iterations: 8\n  batch_size: 50\n  eval_every: 3\n  tol_gradient: 0\n  seed: 8\n"
      "  keep_loss_stack: true\n",
      6);
}

void resume_adam_from_a_checkpoint_with_text_as_character_codes() {
  resumed_run_equals_uninterrupted(
      "  name: adam\n  max_iterations: 8\n  batch_size: 50\n  eval_every: 3\n  tol_gradient: 0\n  seed: 8\n", 6, true);
}

/// A run that stopped at max_iterations 6 (checkpoints every 4) is continued with --resume and max_iterations 10:
/// it goes on from iteration 6, not from the periodic checkpoint of iteration 4, so --log-json holds iterations
/// 0..10 once each, history.csv's elapsed time never drops, and the model is the uninterrupted 10-iteration one.
void resume_after_max_iterations_continues_from_the_stop() {
  ScratchDirectory dir;
  fs::create_directories(dir.file("a"));
  fs::create_directories(dir.file("b"));
  auto config = [](std::size_t max_iterations) {
    std::string c =
        synthetic_config("out", "  name: gradient_descent\n  max_iterations: " + std::to_string(max_iterations) +
                                    "\n  tol_gradient: 0\n");
    c.replace(c.find("checkpoint_every: 2"), 19, "checkpoint_every: 4");
    return c;
  };
  write_file(dir.file("a/run.yaml"), config(10));
  ASSERT_EQ(run_cli("fit " + quoted(dir.file("a/run.yaml")) + " --quiet").exit_code, 0);
  std::string const json = dir.file("b/log.jsonl");
  write_file(dir.file("b/run.yaml"), config(6));
  auto const first = run_cli("fit " + quoted(dir.file("b/run.yaml")) + " --quiet --log-json " + quoted(json));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  write_file(dir.file("b/run.yaml"), config(10));
  auto const resumed = run_cli("fit " + quoted(dir.file("b/run.yaml")) + " --resume --log-json " + quoted(json));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("(iteration 6)"), std::string::npos) << resumed.output;

  std::istringstream records(read_file(json));
  std::vector<std::size_t> iterations;
  std::string line;
  while (std::getline(records, line)) iterations.push_back(std::strtoul(line.c_str() + 14, nullptr, 10));
  std::vector<std::size_t> once(11);
  for (std::size_t k = 0; k < once.size(); ++k) once[k] = k;
  EXPECT_EQ(iterations, once) << read_file(json);

  auto const rows = history_numbers(dir.file("b/out/history.csv"));
  ASSERT_EQ(rows.size(), 11u);
  for (std::size_t k = 1; k < rows.size(); ++k) EXPECT_GE(rows[k][5], rows[k - 1][5]) << "elapsed, iteration " << k;
  EXPECT_EQ(history_without_time(dir.file("a/out/history.csv")), history_without_time(dir.file("b/out/history.csv")));
  EXPECT_EQ(t3_arrays(dir.file("a/out/model.h5")), t3_arrays(dir.file("b/out/model.h5")));
}

void resume_rejects_a_missing_or_foreign_checkpoint() {
  ScratchDirectory dir;
  write_file(dir.file("run.yaml"), synthetic_config("out", "  name: newton_cg\n  max_iterations: 4\n"));
  auto const missing = run_cli("fit " + quoted(dir.file("run.yaml")) + " --resume");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no checkpoint"), std::string::npos) << missing.output;
  ASSERT_EQ(run_cli("fit " + quoted(dir.file("run.yaml")) + " --quiet").exit_code, 0);
  // Another problem seed: the checkpoint belongs to a different run.
  std::string other = synthetic_config("out", "  name: newton_cg\n  max_iterations: 4\n");
  other.replace(other.find("seed: 11"), 8, "seed: 12");
  write_file(dir.file("other.yaml"), other);
  auto const foreign = run_cli("fit " + quoted(dir.file("other.yaml")) + " --resume");
  EXPECT_EQ(foreign.exit_code, 2) << foreign.output;
  EXPECT_NE(foreign.output.find("different configuration"), std::string::npos) << foreign.output;
  // The message names each changed key with both values, on one line; max_iterations may change.
  other.replace(other.find("max_iterations: 4"), 17, "max_iterations: 9\n  batch_size: 7");
  other.replace(other.find("name: newton_cg"), 15, "name: mc_sgd");
  write_file(dir.file("other.yaml"), other);
  auto const changed = run_cli("fit " + quoted(dir.file("other.yaml")) + " --resume");
  EXPECT_EQ(changed.exit_code, 2) << changed.output;
  for (char const* part : {"optimizer.name (newton_cg in the checkpoint, mc_sgd now)",
                           "optimizer.batch_size (not given in the checkpoint, 7 now)",
                           "problem.synthetic.seed (11 in the checkpoint, 12 now)"}) {
    EXPECT_NE(changed.output.find(part), std::string::npos) << part << "\n" << changed.output;
  }
  EXPECT_EQ(changed.output.find("optimizer.max_iterations"), std::string::npos) << changed.output;
  EXPECT_EQ(count_lines(changed.output), 1u) << changed.output;
}

// ------------------------------------------------------------------------------------------ runtime failure

/// A constant SGD step far beyond the stable one diverges to a non-finite loss after some good checkpoints: the
/// run exits 1 with a message, the last good checkpoint stays readable with finite figures, and the earlier
/// run's outputs are untouched.
void divergence_keeps_the_last_good_checkpoint() {
  ScratchDirectory dir;
  std::string const config = synthetic_config("out",
                                              "  name: mc_sgd\n  max_iterations: 400\n  batch_size: 16\n  step: 3000\n"
                                              "  eval_every: 1\n  tol_gradient: 0\n");
  // An earlier successful run's model in the same directory.
  fs::create_directories(dir.file("out"));
  write_file(dir.file("out/model.h5"), "earlier model");
  write_file(dir.file("out/summary.yaml"), "earlier summary\n");
  write_file(dir.file("run.yaml"), config);
  auto const r = run_cli("fit " + quoted(dir.file("run.yaml")) + " --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("non-finite"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("last good checkpoint"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(dir.file("out/model.h5")), "earlier model");
  EXPECT_EQ(read_file(dir.file("out/summary.yaml")), "earlier summary\n");
  io::Reader checkpoint(dir.file("out/checkpoint.h5"));
  std::vector<std::size_t> shape;
  auto const history = checkpoint.read_raw("/checkpoint/history", shape);
  ASSERT_EQ(shape.size(), 2u);
  ASSERT_GT(shape[0], 1u);
  EXPECT_TRUE(std::isfinite(history[(shape[0] - 1) * shape[1] + 1])) << "last checkpointed loss";
  auto const point = t3_arrays(dir.file("out/checkpoint.h5"));
  for (auto const& core : point) {
    for (double v : core) EXPECT_TRUE(std::isfinite(v));
  }
  // No temporary files are left behind.
  for (auto const& e : fs::directory_iterator(dir.file("out"))) {
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

// ------------------------------------------------------------------------------------------- validation

/// Runs the CLI on `text` and expects exit 2 with "run.yaml:<line>:<column>: <key path>: <message part>".
void expect_cli_error(std::string const& text, int line, int column, std::string const& key_path,
                      std::string const& message_part, std::string const& extra_file = "") {
  ScratchDirectory dir;
  if (!extra_file.empty()) write_planted_data_file(dir.file(extra_file), 20, false);
  write_file(dir.file("run.yaml"), text);
  auto const r = run_cli("fit " + quoted(dir.file("run.yaml")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  std::string const where =
      dir.file("run.yaml") + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + key_path + ": ";
  EXPECT_NE(r.output.find(where), std::string::npos) << "expected '" << where << "' in:\n" << r.output;
  EXPECT_NE(r.output.find(message_part), std::string::npos) << "expected '" << message_part << "' in:\n" << r.output;
  EXPECT_FALSE(fs::exists(dir.file("out/model.h5"))) << "no work before validation";
  EXPECT_EQ(count_lines(r.output), 1u) << "one clear message:\n" << r.output;
}

std::string const valid_head =
    "problem:\n"                      // 1
    "  synthetic:\n"                  // 2
    "    mode_shapes: [5, 4, 6]\n"    // 3
    "    tucker_ranks: [2, 2, 2]\n"   // 4
    "    tt_ranks: [1, 2, 2, 1]\n"    // 5
    "    n_probes: 50\n"              // 6
    "model:\n"                        // 7
    "  init: {random: {seed: 1}}\n";  // 8

void cli_reports_each_validation_error_class() {
  std::string const output = "output:\n  directory: out\n";
  // Unknown key, with a suggestion.
  expect_cli_error(valid_head + "optimizer:\n  name: newton_cg\n  cg_rtl: 0.5\n" + output, 11, 3, "optimizer.cg_rtl",
                   "unknown key for optimizer newton_cg (did you mean 'cg_rtol'?)");
  // A key of another optimizer.
  expect_cli_error(valid_head + "optimizer:\n  name: adam\n  cg_rtol: 0.5\n" + output, 11, 3, "optimizer.cg_rtol",
                   "unknown key for optimizer adam");
  // Missing key: at the enclosing map.
  expect_cli_error(
      "problem:\n  synthetic:\n    mode_shapes: [5, 4, 6]\n    tucker_ranks: [2, 2, 2]\n"
      "    tt_ranks: [1, 2, 2, 1]\nmodel:\n  init: {random: {}}\noptimizer: {name: adam}\n" +
          output,
      2, 3, "problem.synthetic.n_probes", "missing key");
  expect_cli_error(valid_head + "optimizer: {name: adam}\n", 1, 1, "output", "missing key");
  // Wrong types.
  expect_cli_error(valid_head + "optimizer:\n  name: newton_cg\n  max_iterations: ten\n" + output, 11, 19,
                   "optimizer.max_iterations", "must be an integer >= 0, got 'ten'");
  expect_cli_error("problem:\n  synthetic:\n    mode_shapes: 5\n", 3, 18, "problem.synthetic.mode_shapes",
                   "must be a list of positive integers, got '5'");
  expect_cli_error(valid_head + "optimizer:\n  name: newton_cg\n  levenberg_marquardt: [1]\n" + output, 11, 24,
                   "optimizer.levenberg_marquardt", "must be true or false, got a list");
  // Out of range.
  expect_cli_error(valid_head + "optimizer:\n  name: newton_cg\n  cg_rtol: -1\n" + output, 11, 12, "optimizer.cg_rtol",
                   "is out of range: must be in (0, 1], got -1");
  expect_cli_error(valid_head + "optimizer:\n  name: adam\n  beta2: 1\n" + output, 11, 10, "optimizer.beta2",
                   "is out of range");
  expect_cli_error(valid_head + "optimizer: {name: lbfgs}\n" + output, 9, 19, "optimizer.name",
                   "must be one of newton_cg, gradient_descent, mc_sgd, adam, got 'lbfgs'");
  expect_cli_error(valid_head + "optimizer: {name: adam}\nchunk_size: 0\n" + output, 10, 13, "chunk_size",
                   "must be auto, none or a positive integer");
  // Shapes that disagree inside the config.
  expect_cli_error(
      "problem:\n  synthetic:\n    mode_shapes: [5, 4, 6]\n    tucker_ranks: [2, 2]\n"
      "    tt_ranks: [1, 2, 2, 1]\n    n_probes: 5\n",
      4, 19, "problem.synthetic.tucker_ranks", "has 2 entries, expected d = 3");
  // Data whose shapes disagree with the config (found after reading the file, before any work).
  std::string const data =
      "problem:\n  data: {file: probes.h5}\nmodel:\n  tucker_ranks: [2, 2, 2, 2]\n"
      "  tt_ranks: [1, 2, 2, 2, 1]\n  init: {random: {}}\noptimizer: {name: adam}\n" +
      output;
  expect_cli_error(data, 4, 3, "model.tucker_ranks", "has 4 entries but the data has d = 3 modes", "probes.h5");
  std::string const order =
      "problem:\n  data: {file: probes.h5, order: 1}\nmodel:\n  tucker_ranks: [2, 2, 2]\n"
      "  tt_ranks: [1, 2, 2, 1]\n  init: {random: {}}\noptimizer: {name: adam}\n" +
      output;
  expect_cli_error(order, 2, 27, "problem.data.order", "holds jets of order K = 2", "probes.h5");
  std::string const weights =
      "problem:\n  data: {file: probes.h5, weights: /nothing}\nmodel:\n"
      "  tucker_ranks: [2, 2, 2]\n  tt_ranks: [1, 2, 2, 1]\n  init: {random: {}}\n"
      "optimizer: {name: adam}\n" +
      output;
  expect_cli_error(weights, 2, 27, "problem.data.weights", "/nothing", "probes.h5");
  std::string const missing_file =
      "problem:\n  data: {file: nowhere.h5}\nmodel:\n  tucker_ranks: [2]\n"
      "  tt_ranks: [1, 1]\n  init: {random: {}}\noptimizer: {name: adam}\n" +
      output;
  expect_cli_error(missing_file, 2, 10, "problem.data.file", "nowhere.h5");
  std::string const init_file =
      "problem:\n  data: {file: probes.h5}\nmodel:\n  init: {file: " + testdata("case1_ragged.h5") +
      "}\noptimizer: {name: adam}\n" + output;
  expect_cli_error(init_file, 4, 10, "model.init.file", "mode shapes [4 x 5 x 6 x 3] but the problem has [5 x 6 x 4]",
                   "probes.h5");
}

void cli_reports_yaml_syntax_errors_with_line_and_column() {
  ScratchDirectory dir;
  write_file(dir.file("run.yaml"), "problem:\n  synthetic: [1, 2\nmodel: {}\n");
  auto const r = run_cli("fit " + quoted(dir.file("run.yaml")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(dir.file("run.yaml") + ":"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("invalid YAML"), std::string::npos) << r.output;
  auto const none = run_cli("fit " + quoted(dir.file("absent.yaml")));
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("cannot open the configuration file"), std::string::npos) << none.output;
}

/// In process: the location and key path of errors that the CLI tests above do not cover.
void loader_locates_errors_in_process() {
  struct Case {
    std::string text, key_path;
    int line, column;
  };
  std::string const out = "output: {directory: out}\n";
  Case const cases[] = {
      {valid_head + "optimizer: {name: adam, epsilon: 0}\n" + out, "optimizer.epsilon", 9, 34},
      {valid_head + "optimizer: {name: mc_sgd, schedule: linear}\n" + out, "optimizer.schedule", 9, 37},
      {valid_head + "optimizer: {name: adam}\n" + out + "kokkos: {threads: 0}\n", "kokkos.threads", 11, 19},
      {valid_head + "optimizer: {name: adam}\n" + out + "extra: 1\n", "extra", 11, 1},
      {valid_head + "optimizer: {name: adam, seed: -3}\n" + out, "optimizer.seed", 9, 31},
      {valid_head + "optimizer: {name: adam, max_iterations: 1.5}\n" + out, "optimizer.max_iterations", 9, 41},
      {valid_head + "optimizer: {name: adam}\n" + "output: {directory: out, checkpoint_every: x}\n",
       "output.checkpoint_every", 10, 44},
      {"problem: {synthetic: {mode_shapes: [3], tucker_ranks: [2], tt_ranks: [1, 1], n_probes: 5}, data: {file: "
       "a.h5}}\n",
       "problem", 1, 10},
      {valid_head + "optimizer: {name: adam, name: adam}\n" + out, "optimizer.name", 9, 25},
  };
  for (auto const& c : cases) {
    try {
      t3k::fit::parse_config(c.text, "cfg.yaml");
      ADD_FAILURE() << "no error for:\n" << c.text;
    } catch (t3k::fit::ConfigError const& e) {
      EXPECT_EQ(e.key_path(), c.key_path) << e.what();
      EXPECT_EQ(e.location().line, c.line) << e.what();
      EXPECT_EQ(e.location().column, c.column) << e.what();
      std::string const prefix = "cfg.yaml:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": ";
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    }
  }
  // And a valid one loads with defaults filled in and paths resolved against the file's directory.
  auto const ok = t3k::fit::parse_config(valid_head + "optimizer: {name: adam}\n" + out, "/some/dir/cfg.yaml");
  EXPECT_EQ(ok.optimizer.common().max_iterations, 100u);
  EXPECT_EQ(ok.chunk_size.kind(), t3k::ChunkSize::Kind::automatic);
  EXPECT_EQ(ok.output.resolved_directory, "/some/dir/out");
  EXPECT_EQ(ok.synthetic.order, 2u);
}

/// The optimizer key tables of docs/config.md: "key" -> default cell, for "Common keys:" ("") and each
/// "`name` (...):" paragraph of the optimizer section.
std::map<std::string, std::map<std::string, std::string>> documented_optimizer_keys() {
  std::ifstream in(std::string(T3K_TESTDATA_DIR) + "/../../docs/config.md");
  EXPECT_TRUE(in.good()) << "docs/config.md cannot be read";
  std::map<std::string, std::map<std::string, std::string>> out;
  bool in_section = false;
  std::string table, line;
  while (std::getline(in, line)) {
    if (line.rfind("### ", 0) == 0) in_section = line == "### `optimizer`";
    if (!in_section) continue;
    if (line == "Common keys:") table = "";
    if (line.rfind("`", 0) == 0 && line.back() == ':') table = line.substr(1, line.find('`', 1) - 1);
    if (line.rfind("| `", 0) != 0) continue;
    // "\|" is a literal bar inside a cell (the choices of a key).
    for (std::size_t bar = line.find("\\|"); bar != std::string::npos; bar = line.find("\\|"))
      line.replace(bar, 2, "/");
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell);
    if (cells.size() < 3) continue;
    std::string const key = cells[0].substr(cells[0].find('`') + 1, cells[0].rfind('`') - cells[0].find('`') - 1);
    out[table][key] = cells[2].substr(1, cells[2].size() - 2);
  }
  return out;
}

/// Whether a default cell of docs/config.md ("1e-3", "0 (off)", "false", "constant") states `value`.
bool documents(std::string const& cell, t3k::fit::KeyValue const& value) {
  std::string const first = cell.substr(0, cell.find(' '));
  if (auto const* real = std::get_if<double>(&value)) return std::strtod(first.c_str(), nullptr) == *real;
  if (auto const* integer = std::get_if<std::uint64_t>(&value)) return first == std::to_string(*integer);
  if (auto const* flag = std::get_if<bool>(&value)) return first == (*flag ? "true" : "false");
  return first == std::get<std::string>(value);
}

/// Every key of the optimizer tables appears in docs/config.md with its default, and every documented key is in
/// the tables.
void optimizer_keys_match_the_documentation() {
  auto const documented = documented_optimizer_keys();
  std::vector<std::string> tables{""};
  for (auto const& name : t3k::fit::optimizer_names()) tables.push_back(name);
  EXPECT_EQ(documented.size(), tables.size());
  for (auto const& table : tables) {
    std::string const where = table.empty() ? std::string("Common keys") : table;
    auto const it = documented.find(table);
    if (it == documented.end()) {
      ADD_FAILURE() << "docs/config.md has no key table for " << where;
      continue;
    }
    auto const defaults = t3k::fit::key_defaults(table);
    for (auto const& [key, value] : defaults) {
      auto const doc = it->second.find(key);
      if (doc == it->second.end()) {
        ADD_FAILURE() << where << ": key " << key << " is not documented";
      } else {
        EXPECT_TRUE(documents(doc->second, value))
            << where << ": key " << key << " is documented with default '" << doc->second << "'";
      }
    }
    for (auto const& [key, cell] : it->second) {
      bool const known = std::any_of(defaults.begin(), defaults.end(), [&](auto const& d) { return d.first == key; });
      EXPECT_TRUE(known) << where << ": docs/config.md documents " << key << " (default " << cell
                         << "), which the optimizer does not take";
    }
  }
}

/// Every shipped example is a valid configuration.
void shipped_examples_load() {
  std::string const examples = std::string(T3K_TESTDATA_DIR) + "/../../examples";
  for (char const* name : {"quickstart", "newton_cg", "gradient_descent", "mc_sgd", "adam", "data_file",
                           "rank_continuation", "entries_completion"}) {
    std::string const path = examples + "/" + name + ".yaml";
    try {
      auto const c = t3k::fit::load_config(path);
      EXPECT_EQ(c.optimizer.name(), name == std::string("quickstart") || name == std::string("data_file") ||
                                            name == std::string("rank_continuation") ||
                                            name == std::string("entries_completion")
                                        ? std::string("newton_cg")
                                        : std::string(name));
      if (name == std::string("entries_completion")) {
        EXPECT_EQ(c.synthetic.kind, t3k::MeasurementKind::entries);
      }
      if (name == std::string("data_file")) {
        EXPECT_TRUE(fs::exists(c.data.resolved_file)) << c.data.resolved_file;
      }
    } catch (t3k::fit::ConfigError const& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// A continuation run with held-out validation from ranks 1: it reports the chosen ranks, the rank steps and the
// validation residual in every output; stopped right after the checkpoint of the last iteration of a stage and
// resumed, it grows the ranks as the uninterrupted run did (model.h5 bitwise, history equal but for wall time).
void continuation_run_reports_ranks_and_resumes_across_a_rank_step() {
  ScratchDirectory dir;
  std::string const config =
      "problem:\n"
      "  synthetic: {mode_shapes: [5, 4, 6], tucker_ranks: [2, 2, 2], tt_ranks: [1, 2, 2, 1], order: 1,\n"
      "              n_probes: 80, seed: 4}\n"
      "model:\n"
      "  tucker_ranks: {start: 1, max: 3}\n"
      "  tt_ranks: {start: 1, max: [1, 3, 3, 1]}\n"
      "  continuation: {stage_iterations: 3}\n"
      "  init: {random: {seed: 1}}\n"
      "validation: {count: 16, seed: 2}\n"
      "optimizer: {name: newton_cg, max_iterations: 40, tol_relative_residual: 1.0e-9}\n"
      "output: {directory: out, checkpoint_every: 1}\n"
      "kokkos: {threads: 1}\n";
  fs::create_directories(dir.file("a"));
  fs::create_directories(dir.file("b"));
  write_file(dir.file("a/run.yaml"), config);
  write_file(dir.file("b/run.yaml"), config);
  auto const a = run_cli("fit " + quoted(dir.file("a/run.yaml")) + " --plain-log");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_NE(a.output.find("t3k fit: ranks: Tucker [2 x 2 x 2], TT [1 x 2 x 2 x 1], validation relative residual"),
            std::string::npos)
      << a.output;
  std::string const summary = read_file(dir.file("a/out/summary.yaml"));
  for (char const* part : {"rank_steps: [3,", "validation:", "n_probes: 16", "validation_relative_residual:"}) {
    EXPECT_NE(summary.find(part), std::string::npos) << part << " in\n" << summary;
  }
  std::string const svg = read_file(dir.file("a/out/convergence.svg"));
  for (char const* part : {"class=\"rank-step\"", "class=\"reference\"", "tol_relative_residual", ">validation<",
                           "relative residual (log scale)", "run.yaml -&gt; out (newton_cg)"}) {
    EXPECT_NE(svg.find(part), std::string::npos) << part;
  }
  // Every rank step is labelled with the ranks it moved to, as summary.yaml's note on it names them.
  auto count = [](std::string const& text, std::string const& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  std::size_t const steps = count(svg, "class=\"rank-step-label\"");
  EXPECT_EQ(steps * 3, count(svg, "class=\"rank-step\"")) << "one label a step, a mark in each of 3 panels";
  EXPECT_EQ(steps, count(summary, "rank step at iteration") + count(summary, "unused ranks dropped at iteration"));
  for (auto at = summary.find("rank step at iteration"); at != std::string::npos;
       at = summary.find("rank step at iteration", at + 1)) {
    // "... Tucker ranks [1 x 1 x 1] -> [2 x 2 x 2], TT ranks [..] -> [..]": the lists after the arrows.
    auto list_after = [&](std::size_t from) {
      std::size_t const open = summary.find("-> [", from) + 4;
      std::string list = summary.substr(open, summary.find(']', open) - open);
      for (std::size_t x = list.find(" x "); x != std::string::npos; x = list.find(" x ")) list.replace(x, 3, "-");
      return list;
    };
    std::size_t const tt = summary.find("TT ranks", at);
    std::string const label = ">Tucker " + list_after(at) + ", TT " + list_after(tt) + "</text>";
    EXPECT_NE(svg.find(label), std::string::npos) << label << " in\n" << svg;
  }
  // Outside the data: the legend under the first frame, the rank-step labels above it.
  auto number_after = [&](std::string const& key, std::size_t from) {
    return std::stod(svg.substr(svg.find(key, from) + key.size()));
  };
  std::size_t const frame = svg.find("fill=\"none\" stroke=\"black\"");
  ASSERT_NE(frame, std::string::npos);
  std::size_t const frame_tag = svg.rfind("<rect", frame);
  double const frame_top = number_after(" y=\"", frame_tag),
               frame_bottom = frame_top + number_after("height=\"", frame_tag);
  std::size_t const legend = svg.find("class=\"legend\"");
  ASSERT_NE(legend, std::string::npos);
  EXPECT_GT(number_after("y1=\"", legend), frame_bottom);
  for (auto at = svg.find("class=\"rank-step-label\""); at != std::string::npos;
       at = svg.find("class=\"rank-step-label\"", at + 1)) {
    EXPECT_LT(number_after(" y=\"", at), frame_top);
  }
  auto const rows = history_without_time(dir.file("a/out/history.csv"));
  ASSERT_GT(rows.size(), 5u);
  // Row 1 (iteration 0): minibatch_loss nan (newton_cg), a finite validation residual, stage 0.
  EXPECT_EQ(rows[1].substr(rows[1].size() - 3), ",0,") << rows[1];
  EXPECT_EQ(rows[1].find(",nan,0,"), std::string::npos) << rows[1];

  auto const killed = run_cli("fit " + quoted(dir.file("b/run.yaml")) + " --quiet --stop-after 3");
  ASSERT_EQ(killed.exit_code, 3) << killed.output;
  auto const resumed = run_cli("fit " + quoted(dir.file("b/run.yaml")) + " --resume --quiet");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(t3_arrays(dir.file("a/out/model.h5")), t3_arrays(dir.file("b/out/model.h5")));
  EXPECT_EQ(history_without_time(dir.file("a/out/history.csv")), history_without_time(dir.file("b/out/history.csv")));
}

// An edge-conditioning continuation: summary.yaml names the rule with its controls and notes which edges grew with
// their condition numbers; a resume under the default rule is refused (the rule is part of the fingerprint).
void edge_conditioning_run_reports_its_steps_and_refuses_another_rule() {
  ScratchDirectory dir;
  std::string const config =
      "problem:\n"
      "  synthetic: {mode_shapes: [5, 4, 6], tucker_ranks: [2, 2, 2], tt_ranks: [1, 2, 2, 1], order: 1,\n"
      "              n_probes: 80, seed: 4}\n"
      "model:\n"
      "  tucker_ranks: {start: 1, max: 3}\n"
      "  tt_ranks: {start: 1, max: [1, 3, 3, 1]}\n"
      "  continuation: {stage_iterations: 3, rule: edge_conditioning, max_edges_per_stage: 2}\n"
      "  init: {random: {seed: 1}}\n"
      "optimizer: {name: newton_cg, max_iterations: 40, tol_relative_residual: 1.0e-9}\n"
      "output: {directory: out, checkpoint_every: 1}\n"
      "kokkos: {threads: 1}\n";
  write_file(dir.file("run.yaml"), config);
  auto const run = run_cli("fit " + quoted(dir.file("run.yaml")) + " --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::string const summary = read_file(dir.file("out/summary.yaml"));
  for (char const* part : {"rule: edge_conditioning", "condition_ratio: 10", "max_edges_per_stage: 2",
                           "min_samples_per_dimension: 2", "edge conditioning at iteration 3: grew ", "worst kappa"}) {
    EXPECT_NE(summary.find(part), std::string::npos) << part << " in\n" << summary;
  }
  std::string other = config;
  other.replace(other.find(", rule: edge_conditioning, max_edges_per_stage: 2"), 49, "");
  write_file(dir.file("run.yaml"), other);
  auto const resumed = run_cli("fit " + quoted(dir.file("run.yaml")) + " --resume");
  EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
  EXPECT_NE(resumed.output.find("different configuration"), std::string::npos) << resumed.output;
}

// A data problem with its validation probes in a separate file (the same planted model at other probes), fitted
// by rank continuation from ranks 1 without a random start's ranks: the held-out residual falls with the training
// one; a validation file of other mode shapes is refused at validation.file.
void data_problem_validates_on_a_separate_file() {
  ScratchDirectory dir;
  write_planted_data_file(dir.file("probes.h5"), 150, false);
  write_planted_data_file(dir.file("held.h5"), 40, false);
  std::string const config =
      "problem:\n"
      "  data: {file: probes.h5}\n"
      "model:\n"
      "  tucker_ranks: {max: 3}\n"
      "  tt_ranks: {max: 3}\n"
      "  init: {random: {seed: 9}}\n"
      "validation: {file: held.h5}\n"
      "optimizer: {name: newton_cg, max_iterations: 60, tol_relative_residual: 1.0e-9}\n"
      "output: {directory: out}\n";
  write_file(dir.file("run.yaml"), config);
  auto const r = run_cli("fit " + quoted(dir.file("run.yaml")) + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string const summary = read_file(dir.file("out/summary.yaml"));
  EXPECT_NE(summary.find("n_probes: 40"), std::string::npos) << summary;
  EXPECT_LT(summary_value(summary, "final", "validation_relative_residual"), 1e-3) << summary;
  io::Writer w(dir.file("other.h5"));
  std::vector<double> const zeros(40 * 7, 0.0);
  for (std::string const group : {"/probes/w/", "/probes/p/"}) {
    w.write_raw(group + "0", {40, 7}, zeros.data());
  }
  w.write_raw("/jets/0", {40, 3, 7}, std::vector<double>(40 * 3 * 7, 0.0).data());
  w.commit();
  write_file(dir.file("bad.yaml"), std::string(config).replace(config.find("held.h5"), 7, "other.h5"));
  auto const bad = run_cli("fit " + quoted(dir.file("bad.yaml")) + " --quiet");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("validation.file"), std::string::npos) << bad.output;
  EXPECT_EQ(count_lines(bad.output), 1u) << bad.output;
}

// model.tucker_ranks above what N and the TT ranks allow: Tucker rank 1 of 9 exceeds N_1 = 7 and r_1 r_2 = 6. The
// note, summary.yaml and model.h5 all give 6, with and without iterations.
void infeasible_model_ranks_are_clipped_once_and_reported_as_written() {
  for (int iterations : {0, 2}) {
    ScratchDirectory dir;
    write_file(dir.file("run.yaml"),
               "problem:\n"
               "  synthetic: {mode_shapes: [5, 7, 6], tucker_ranks: [2, 3, 2], tt_ranks: [1, 2, 3, 1], order: 1,\n"
               "              n_probes: 60, seed: 4}\n"
               "model: {tucker_ranks: [2, 9, 3], tt_ranks: [1, 2, 3, 1], init: {random: {seed: 1}}}\n"
               "optimizer: {name: gradient_descent, max_iterations: " +
                   std::to_string(iterations) +
                   "}\n"
                   "output: {directory: out}\n"
                   "kokkos: {threads: 1}\n");
    auto const r = run_cli("fit " + quoted(dir.file("run.yaml")) + " --plain-log");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("note: Tucker rank 1 clipped from 9 to 6\n"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("clipped from 9 to 7"), std::string::npos) << r.output;
    std::string const summary = read_file(dir.file("out/summary.yaml"));
    EXPECT_NE(summary.find("Tucker rank 1 clipped from 9 to 6"), std::string::npos) << summary;
    // The dimension of the model that ran, ranks (2, 6, 3) and (1, 2, 3, 1): 2*3 + 6*1 + 3*3 + (4 + 36 + 9) - (4 + 9).
    EXPECT_EQ(summary_value(summary, "model", "manifold_dimension"), 57.0) << summary;
    EXPECT_EQ(t3k::manifold_dimension({5, 7, 6}, {2, 6, 3}, {1, 2, 3, 1}), 57u);
    auto const model = io::Reader(dir.file("out/model.h5")).read_t3();
    EXPECT_EQ(model.tucker_ranks(), (std::vector<std::size_t>{2, 6, 3})) << "iterations " << iterations;
    EXPECT_EQ(model.tt_ranks(), (std::vector<std::size_t>{1, 2, 3, 1})) << "iterations " << iterations;
  }
}

void cli_reports_continuation_and_validation_errors() {
  std::string const tail = "optimizer: {name: newton_cg}\noutput:\n  directory: out\n";
  expect_cli_error(valid_head + "validation: {fraction: 0.2, cont: 3}\n" + tail, 9, 29, "validation.cont",
                   "unknown key");
  expect_cli_error(valid_head + "validation: {fraction: 0.2, count: 3}\n" + tail, 9, 13, "validation",
                   "give exactly one of fraction, count or file");
  expect_cli_error(valid_head + "validation: {fraction: 1.5}\n" + tail, 9, 24, "validation.fraction",
                   "is out of range");
  expect_cli_error(valid_head + "validation: {count: 50}\n" + tail, 9, 14, "validation.count",
                   "must be below problem.synthetic.n_probes = 50");
  std::string const head = valid_head.substr(0, valid_head.find("model:\n"));
  expect_cli_error(head + "model:\n  tucker_ranks: {start: 1, max: 2}\n  tt_ranks: [1, 2, 2, 1]\n" +
                       "  init: {random: {seed: 1}}\n" + tail,
                   7, 1, "model.tt_ranks", "give both tucker_ranks and tt_ranks as lists");
  expect_cli_error(head + "model:\n  tucker_ranks: {start: 1, max: 7}\n  tt_ranks: {max: 3}\n" +
                       "  init: {random: {seed: 1}}\n" + tail,
                   8, 28, "model.tucker_ranks.max", "above N_0 = 5");
  expect_cli_error(head + "model:\n  continuation: {stage_iterations: 3}\n  init: {random: {seed: 1}}\n" + tail, 8, 3,
                   "model.continuation", "needs model.tucker_ranks and model.tt_ranks given as {start, max}");
  expect_cli_error(head + "model:\n  tucker_ranks: {start: 1, max: 2}\n  tt_ranks: {max: 3}\n" +
                       "  continuation: {stage_iters: 3}\n  init: {random: {seed: 1}}\n" + tail,
                   10, 18, "model.continuation.stage_iters", "unknown key");
  std::string const ranges = head + "model:\n  tucker_ranks: {start: 1, max: 2}\n  tt_ranks: {max: 3}\n";
  std::string const init = "  init: {random: {seed: 1}}\n" + tail;
  expect_cli_error(ranges + "  continuation: {rule: widest}\n" + init, 10, 24, "model.continuation.rule",
                   "must be one of saturation, edge_conditioning");
  expect_cli_error(ranges + "  continuation: {rule: edge_conditioning, condition_ratio: 0.5}\n" + init, 10, 60,
                   "model.continuation.condition_ratio", "is out of range: must be >= 1");
  expect_cli_error(ranges + "  continuation: {rule: edge_conditioning, max_edges_per_stage: 1.5}\n" + init, 10, 64,
                   "model.continuation.max_edges_per_stage", "integer");
  expect_cli_error(ranges + "  continuation: {rule: edge_conditioning, condition_guard: [1]}\n" + init, 10, 60,
                   "model.continuation.condition_guard", "must be a number");
  expect_cli_error(ranges + "  continuation: {rule: edge_conditioning, min_samples_per_dimension: -1}\n" + init, 10, 70,
                   "model.continuation.min_samples_per_dimension", "is out of range: must be >= 0");
  expect_cli_error(ranges + "  continuation: {condition_ratio: 3}\n" + init, 10, 18,
                   "model.continuation.condition_ratio", "is a control of rule: edge_conditioning");
  expect_cli_error(head + "model:\n  tucker_ranks: {start: 1, max: 2}\n  tt_ranks: {max: [2, 3, 3, 1]}\n" +
                       "  init: {random: {seed: 1}}\n" + tail,
                   9, 14, "model.tt_ranks.max", "boundary TT ranks");
}

// ------------------------------------------------------------------------------------------------- fuzz

std::string const fuzz_bases[] = {
    "problem:\n  synthetic:\n    mode_shapes: [5, 4, 6]\n    tucker_ranks: [2, 2, 2]\n    tt_ranks: [1, 2, 2, 1]\n"
    "    order: 2\n    n_probes: 50\n    noise: 0.01\n    seed: 3\nmodel:\n  init:\n    truth_perturbation: 0.1\n"
    "    seed: 2\noptimizer:\n  name: newton_cg\n  max_iterations: 10\n  cg_rtol: 0.1\n"
    "  levenberg_marquardt: true\nchunk_size: auto\noutput:\n  directory: out\n  checkpoint_every: 2\n"
    "kokkos:\n  threads: 2\n",
    "problem:\n  data:\n    file: probes.h5\n    weights: /weights\nmodel:\n  tucker_ranks: [2, 2]\n"
    "  tt_ranks: [1, 2, 1]\n  init:\n    random:\n      seed: 4\noptimizer:\n  name: mc_sgd\n  batch_size: 16\n"
    "  schedule: cosine\n  step: 0.5\nchunk_size: 32\noutput:\n  directory: run\n",
    "problem: {synthetic: {mode_shapes: [3, 3], tucker_ranks: [2, 2], tt_ranks: [1, 2, 1], n_probes: 9}}\n"
    "model: {init: {file: start.h5}}\noptimizer: {name: adam, beta1: 0.8, alpha_rel: 0.01, batch_size: 4}\n"
    "output: {directory: o}\n",
};

std::string mutate(std::string text, std::mt19937_64& gen) {
  auto pick = [&gen](std::size_t n) { return n == 0 ? std::size_t(0) : std::size_t(gen() % n); };
  static char const* const values[] = {"[1, 2]", "{a: 1}", "'abc'", "-3",         "1e400",
                                       "~",      "true",   "0",     "",           "[",
                                       "}",      "&a",     "*b",    "!!binary x", "99999999999999999999999",
                                       ".nan"};
  std::size_t const n_mutations = 1 + pick(3);
  for (std::size_t m = 0; m < n_mutations; ++m) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    if (lines.empty()) lines.push_back("");
    std::size_t const l = pick(lines.size());
    switch (pick(6)) {
      case 0:
        lines.erase(lines.begin() + std::ptrdiff_t(l));
        break;   // key deletion
      case 1: {  // type swap of a value
        auto const colon = lines[l].find(": ");
        if (colon != std::string::npos) lines[l] = lines[l].substr(0, colon + 2) + values[pick(std::size(values))];
        break;
      }
      case 2: {  // garbage bytes
        std::string garbage;
        for (std::size_t k = 0, n = 1 + pick(6); k < n; ++k) garbage += char(gen() & 0xff);
        lines[l].insert(pick(lines[l].size() + 1), garbage);
        break;
      }
      case 3:
        lines.insert(lines.begin() + std::ptrdiff_t(l), lines[pick(lines.size())]);
        break;  // duplicate
      case 4:
        lines[l] = (pick(2) ? "  " : "") + lines[l].substr(std::min<std::size_t>(lines[l].size(), 2));
        break;
      default: {  // rename a key
        auto const colon = lines[l].find(':');
        if (colon != std::string::npos && colon > 0) lines[l].insert(colon, "x");
        break;
      }
    }
    text.clear();
    for (auto const& s : lines) text += s + "\n";
  }
  return text;
}

void fuzzed_configs_load_or_raise_config_errors() {
  std::mt19937_64 gen(20240607);
  std::size_t loaded = 0, rejected = 0;
  for (int k = 0; k < 600; ++k) {
    std::string const text = mutate(fuzz_bases[std::size_t(k) % std::size(fuzz_bases)], gen);
    try {
      t3k::fit::parse_config(text, "fuzz.yaml");
      ++loaded;
    } catch (t3k::fit::ConfigError const& e) {
      ++rejected;
      std::string const what = e.what();
      EXPECT_EQ(what.rfind("fuzz.yaml:", 0), 0u) << what;
      EXPECT_GT(what.size(), std::string("fuzz.yaml:1:1: ").size()) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
    } catch (std::exception const& e) {
      ADD_FAILURE() << "mutation " << k << " threw a " << typeid(e).name() << ": " << e.what() << "\n" << text;
    } catch (...) {
      ADD_FAILURE() << "mutation " << k << " threw a non-standard exception\n" << text;
    }
  }
  EXPECT_EQ(loaded + rejected, 600u);
  EXPECT_GT(loaded, 0u) << "some mutations keep a valid configuration";
  EXPECT_GT(rejected, 200u);
}

}  // namespace

TEST(FitDriver, SyntheticNewtonCgReachesTinyResidualAndWritesEveryOutput) {
  synthetic_newton_cg_reaches_a_tiny_residual();
}
TEST(FitDriver, SyntheticFitToRoundingLevelConverges) { synthetic_fit_to_rounding_level_converges(); }
TEST(FitDriver, SyntheticGradientDescentRunsEndToEnd) { synthetic_gradient_descent_runs(); }
TEST(FitDriver, SyntheticMcSgdRunsEndToEnd) { synthetic_mc_sgd_runs(); }
TEST(FitDriver, SyntheticAdamRunsEndToEnd) { synthetic_adam_runs(); }
TEST(FitDriver, RequestedChunkSizeIsRecordedAsItRuns) { requested_chunk_size_is_recorded_as_it_runs(); }
TEST(FitDriver, DataProblemNewtonCgFitsWeightedProbeSet) { data_problem_newton_cg_fits_a_weighted_probe_set(); }
TEST(FitDriver, DataProblemRunsMatchTheLibraryOptimizers) { data_problem_runs_match_the_library_optimizers(); }
TEST(FitDriver, DataProblemFromReferenceFileRunsFirstOrderMethods) {
  data_problem_reference_file_runs_each_first_order_method();
}
TEST(FitDriver, ResumedNewtonCgEqualsUninterruptedBitwise) { resume_newton_cg(); }
TEST(FitDriver, ContinuationRunReportsRanksAndResumesAcrossARankStep) {
  continuation_run_reports_ranks_and_resumes_across_a_rank_step();
}
TEST(FitDriver, EdgeConditioningRunReportsItsStepsAndRefusesAnotherRule) {
  edge_conditioning_run_reports_its_steps_and_refuses_another_rule();
}
TEST(FitDriver, CliReportsContinuationAndValidationErrors) { cli_reports_continuation_and_validation_errors(); }
TEST(FitDriver, InfeasibleModelRanksAreClippedOnceAndReportedAsWritten) {
  infeasible_model_ranks_are_clipped_once_and_reported_as_written();
}
TEST(FitDriver, DataProblemValidatesOnASeparateFile) { data_problem_validates_on_a_separate_file(); }
TEST(FitDriver, ResumedGradientDescentEqualsUninterruptedBitwise) { resume_gradient_descent(); }
TEST(FitDriver, ResumedMcSgdEqualsUninterruptedBitwise) { resume_mc_sgd(); }
TEST(FitDriver, ResumedAdamEqualsUninterruptedBitwise) { resume_adam(); }
TEST(FitDriver, ResumeReadsCheckpointsWithTextAsCharacterCodes) {
  resume_adam_from_a_checkpoint_with_text_as_character_codes();
}
TEST(FitDriver, ResumeAfterMaxIterationsContinuesFromTheStop) { resume_after_max_iterations_continues_from_the_stop(); }
TEST(FitDriver, ResumeRejectsMissingOrForeignCheckpoint) { resume_rejects_a_missing_or_foreign_checkpoint(); }
TEST(FitDriver, DivergenceExitsNonzeroAndKeepsLastGoodCheckpoint) { divergence_keeps_the_last_good_checkpoint(); }
TEST(FitDriver, CliReportsEachValidationErrorClassWithLineColumnAndExit2) { cli_reports_each_validation_error_class(); }
TEST(FitDriver, CliReportsYamlSyntaxErrorsWithLineAndColumn) { cli_reports_yaml_syntax_errors_with_line_and_column(); }
TEST(FitDriver, LoaderLocatesErrorsInProcess) { loader_locates_errors_in_process(); }
TEST(FitDriver, ShippedExamplesLoad) { shipped_examples_load(); }
TEST(FitDriver, OptimizerKeysMatchTheDocumentation) { optimizer_keys_match_the_documentation(); }
TEST(FitDriver, FuzzedConfigsLoadOrRaiseConfigErrors) { fuzzed_configs_load_or_raise_config_errors(); }

#endif  // T3K_TESTS_HAVE_IO
