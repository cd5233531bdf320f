// The command-line tool under `mpiexec -np P` (docs/math.md), for P = 1, 2 and 3 (3: uneven shards,
// and a shard of no rows for a probe set of 2). This program itself runs as one process: it launches the built
// t3k once alone and once under mpiexec and compares the outputs: J^T summed to 1e-12 relative, per-probe outputs
// (jets, J v, J^T per probe) to 1e-12, fitted T3s to 1e-10 as tensors; only rank 0 writes; a bad input on any rank
// ends every rank with the single-process exit code and one message. Every mpiexec runs under coreutils' timeout,
// so a hang fails its test (exit 124) instead of stalling ctest.
#ifdef T3K_TESTS_HAVE_IO

#include "../cli_harness.hpp"
#include "t3k/io/fitting_data.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
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

struct ScratchDirectory : t3k_test::ScratchDirectory {
  ScratchDirectory() : t3k_test::ScratchDirectory("t3k_test_mpi_cli") {}
};

/// The sharded results sum (J^T) or compute (everything per probe) what one process does, in another order at
/// most: 1e-12 relative leaves room for the order of the reduction over ranks (~1e-15 seen).
constexpr double tolerance = 1e-12;
/// A fit repeats that reduction in every iteration; the iterates drift apart by rounding only (newton_cg: ~1e-15
/// seen over the few iterations run here), far inside 1e-10.
constexpr double fit_tolerance = 1e-10;
/// Adam scales each core's step by that core's own gradient RMS, so where a core's gradient is small the reduction's
/// rounding (relative to the whole gradient) becomes a relative difference of that core's step: 3.8e-11 to 1.1e-10
/// seen (2-3 ranks, 6 minibatch steps of 40 probes; an AVX-512 Xeon, with and without Kokkos' -march). A sharding
/// error (a batch row lost or counted twice) changes a minibatch gradient by about one part in 40, far outside 1e-8.
constexpr double adam_fit_tolerance = 1e-8;

/// `t3k <arguments>` under mpiexec on `n_ranks` ranks, one OpenMP thread each.
RunResult run_mpi(int n_ranks, std::string const& arguments) {
  return t3k_test::run_shell("OMP_NUM_THREADS=1 OMP_PROC_BIND=false timeout -k 10 240 " + std::string(T3K_MPIEXEC) +
                             " " + T3K_MPIEXEC_NUMPROC_FLAG + " " + std::to_string(n_ranks) + " " + T3K_MPIEXEC_FLAGS +
                             " " + quoted(T3K_CLI_PATH) + " " + arguments +
                             // Kokkos warns about oversubscribed cores on every rank; the tests count lines.
                             " --kokkos-disable-warnings");
}

void run_ok(std::string const& arguments) {
  auto const r = run_cli(arguments);
  ASSERT_EQ(r.exit_code, 0) << "t3k " << arguments << "\n" << r.output;
}

void run_mpi_ok(int n_ranks, std::string const& arguments) {
  auto const r = run_mpi(n_ranks, arguments);
  ASSERT_EQ(r.exit_code, 0) << "mpiexec -np " << n_ranks << " t3k " << arguments << "\n" << r.output;
}

std::size_t count(std::string const& text, std::string const& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

/// max |a - b| / max |b| over flat arrays.
double relative_error(std::vector<std::vector<double>> const& a, std::vector<std::vector<double>> const& b) {
  if (a.size() != b.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return INFINITY;
    for (std::size_t e = 0; e < a[i].size(); ++e) {
      diff = std::max(diff, std::abs(a[i][e] - b[i][e]));
      scale = std::max(scale, std::abs(b[i][e]));
    }
  }
  return scale > 0 ? diff / scale : diff;
}

template <class View>
std::vector<double> flat(View const& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

/// Every dataset of `group`/<i> (jets) or of a gradient group, flat, in file order.
std::vector<std::vector<double>> jets_of(std::string const& path, std::string const& group) {
  std::vector<std::vector<double>> out;
  for (auto const& a : io::Reader(path).read_jets(group)) out.push_back(flat(a));
  return out;
}

std::vector<std::vector<double>> gradient_of(std::string const& path, std::string const& frame_file, bool per_probe) {
  auto const frame = io::Reader(frame_file).read_frame();
  auto const g = io::Reader(path).read_gradient(frame, per_probe);
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < g.n_modes(); ++i) {
    out.push_back(flat(g.tucker[i]));
    out.push_back(flat(g.tt[i]));
  }
  return out;
}

/// The dense tensor of the T3 in a model.h5: fits on different rank counts may differ in gauge (a rounding-level
/// difference can flip the sign a QR picks), never in the tensor.
std::vector<std::vector<double>> dense_t3(std::string const& path) {
  auto const x = io::Reader(path).read_t3();
  auto const dense = t3k::to_dense(Kokkos::DefaultHostExecutionSpace{}, x);
  return {flat(dense)};
}

// --------------------------------------------------------------------------------------------------- inputs

/// A probe set of `w` random probes and residuals for the T3, frame and variation of case 1 (d = 4, K = 2):
/// W = 7 leaves uneven shards on 2 and 3 ranks, W = 2 leaves rank 2 of 3 without rows.
std::string make_input(ScratchDirectory const& dir, std::size_t w, std::uint64_t seed) {
  std::string const path = dir.file("input_w" + std::to_string(w) + ".h5");
  io::Reader ref(testdata("case1_ragged.h5"));
  auto const x = ref.read_t3();
  auto const frame = ref.read_frame();
  auto const variation = ref.read_variation(frame);
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  io::ProbeSet probes;
  probes.order = 2;
  io::JetStack residual;
  for (auto n : x.mode_shapes()) {
    io::Matrix wi("w", w, n), pi("p", w, n);
    io::Array3 ri("r", w, 3, n);
    for (std::size_t e = 0; e < wi.size(); ++e) wi.data()[e] = normal(gen);
    for (std::size_t e = 0; e < pi.size(); ++e) pi.data()[e] = normal(gen);
    for (std::size_t e = 0; e < ri.size(); ++e) ri.data()[e] = normal(gen);
    probes.w.push_back(wi);
    probes.p.push_back(pi);
    residual.push_back(ri);
  }
  io::Writer out(path);
  out.write_t3(x);
  out.write_frame(frame);
  out.write_variation(variation);
  out.write_probes(probes);
  out.write_jets("/residual", residual);
  out.commit();
  return path;
}

/// The inputs every comparison runs on: the two reference cases (W = 6 and 4) and generated ones (W = 7 and 2).
std::vector<std::string> inputs(ScratchDirectory const& dir) {
  return {testdata("case1_ragged.h5"), testdata("case3_symmetric.h5"), make_input(dir, 7, 1), make_input(dir, 2, 2)};
}

// --------------------------------------------------------------------------------------------------- commands

void jtr_sum_equals_single_process(int n_ranks) {
  ScratchDirectory dir;
  // A fixed chunk of one reduction block of the tool's space; the last input spans two blocks and a part of one on
  // every shard, so that it chunks in several passes on every rank count.
  std::size_t const block = t3k::reduction_block_size_for<Kokkos::DefaultExecutionSpace>(), wide = 3 * (2 * block + 5);
  auto all = inputs(dir);
  all.push_back(make_input(dir, wide, 4));
  ASSERT_LT(t3k::impl::rows_per_chunk(block, wide / 3, block), wide / 3);
  for (auto const& in : all) {
    for (std::string const& chunk : {std::string("auto"), std::string("none"), std::to_string(block)}) {
      SCOPED_TRACE(in + " --chunk-size " + chunk);
      std::string const alone = dir.file("alone.h5"), sharded = dir.file("sharded.h5");
      run_ok("jtr --in " + quoted(in) + " --out " + quoted(alone) + " --chunk-size " + chunk);
      run_mpi_ok(n_ranks, "jtr --in " + quoted(in) + " --out " + quoted(sharded) + " --chunk-size " + chunk);
      EXPECT_LE(relative_error(gradient_of(sharded, in, false), gradient_of(alone, in, false)), tolerance);
      auto const attributes = io::Reader(sharded).read_root_attributes();
      EXPECT_EQ(attributes.w, io::Reader(alone).read_root_attributes().w);
      EXPECT_EQ(attributes.k, io::Reader(alone).read_root_attributes().k);
    }
  }
  // Only the two outputs and the generated inputs: no rank left a temporary file.
  EXPECT_EQ(dir.n_entries(), 5u);
}

void per_probe_outputs_equal_single_process(int n_ranks) {
  ScratchDirectory dir;
  for (auto const& in : inputs(dir)) {
    struct Case {
      std::string arguments, group;
    };
    for (Case const& c : {Case{"jets", "/jets"}, Case{"jv", "/tangent_jets"}, Case{"jtr --per-probe", ""}}) {
      SCOPED_TRACE(in + ": t3k " + c.arguments);
      std::string const alone = dir.file("alone.h5"), sharded = dir.file("sharded.h5");
      run_ok(c.arguments + " --in " + quoted(in) + " --out " + quoted(alone));
      run_mpi_ok(n_ranks, c.arguments + " --in " + quoted(in) + " --out " + quoted(sharded));
      if (c.group.empty()) {
        EXPECT_LE(relative_error(gradient_of(sharded, in, true), gradient_of(alone, in, true)), tolerance);
      } else {
        EXPECT_LE(relative_error(jets_of(sharded, c.group), jets_of(alone, c.group)), tolerance);
      }
      EXPECT_EQ(io::Reader(sharded).read_root_attributes().w, io::Reader(alone).read_root_attributes().w);
    }
  }
  EXPECT_EQ(dir.n_entries(), 4u);
}

// ------------------------------------------------------------------------------------------------------- fit

void write_file(std::string const& path, std::string const& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// The output and kokkos sections every fit configuration here shares.
std::string output_section(std::string const& directory) {
  return "output:\n  directory: " + directory + "\n  checkpoint_every: 2\nkokkos:\n  threads: 1\n";
}

/// A synthetic problem with noise (its level is a sum over ranks) and W = 121 (uneven shards on 2 and 3 ranks).
std::string synthetic_config(std::string const& directory, std::string const& optimizer) {
  return "problem:\n"
         "  synthetic:\n"
         "    mode_shapes: [5, 4, 6, 5]\n"
         "    tucker_ranks: [2, 3, 2, 2]\n"
         "    tt_ranks: [1, 2, 3, 2, 1]\n"
         "    order: 1\n"
         "    n_probes: 121\n"
         "    noise: 0.01\n"
         "    seed: 11\n"
         "model:\n"
         "  init: {random: {seed: 5}}\n"
         "optimizer:\n" +
         optimizer + output_section(directory);
}

std::string const newton_cg = "  name: newton_cg\n  max_iterations: 6\n";
std::string const adam = "  name: adam\n  max_iterations: 6\n  batch_size: 40\n  seed: 3\n";

/// loss, relative residual and gradient norm of every history.csv row.
std::vector<std::vector<double>> history_figures(std::string const& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    std::vector<double> cells;
    std::istringstream cs(line);
    std::string cell;
    while (std::getline(cs, cell, ',')) cells.push_back(std::strtod(cell.c_str(), nullptr));
    rows.push_back({cells.at(1), cells.at(2), cells.at(3)});
  }
  return rows;
}

/// Runs `config_text` alone and on `n_ranks` ranks and compares the fitted tensors, the histories and what was
/// written and printed.
void expect_fit_equals_single_process(int n_ranks, std::string const& config_alone, std::string const& config_mpi,
                                      ScratchDirectory const& dir, double fit_tol = fit_tolerance) {
  write_file(dir.file("alone.yaml"), config_alone);
  write_file(dir.file("mpi.yaml"), config_mpi);
  run_ok("fit " + quoted(dir.file("alone.yaml")) + " --plain-log");
  auto const r = run_mpi(
      n_ranks, "fit " + quoted(dir.file("mpi.yaml")) + " --plain-log --log-json " + quoted(dir.file("mpi.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LE(relative_error(dense_t3(dir.file("run_mpi/model.h5")), dense_t3(dir.file("run_alone/model.h5"))), fit_tol);
  auto const h_mpi = history_figures(dir.file("run_mpi/history.csv"));
  auto const h_alone = history_figures(dir.file("run_alone/history.csv"));
  EXPECT_EQ(h_mpi.size(), h_alone.size());
  EXPECT_LE(relative_error(h_mpi, h_alone), fit_tol);
  // Rank 0 alone writes and prints: the five outputs and nothing else, one report, one line per iteration.
  std::vector<std::string> files;
  for (auto const& e : fs::directory_iterator(dir.file("run_mpi"))) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files,
            (std::vector<std::string>{"checkpoint.h5", "convergence.svg", "history.csv", "model.h5", "summary.yaml"}));
  EXPECT_EQ(count(r.output, "t3k fit: outputs in"), 1u) << r.output;
  EXPECT_EQ(count(r.output, "\niteration "), h_mpi.size()) << r.output;
  std::ifstream json(dir.file("mpi.jsonl"));
  std::string const json_text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_EQ(count(json_text, "\"iteration\""), h_mpi.size());
  std::ifstream summary(dir.file("run_mpi/summary.yaml"));
  std::string const summary_text((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
  EXPECT_NE(summary_text.find("mpi_ranks: " + std::to_string(n_ranks)), std::string::npos) << summary_text;
}

void fit_synthetic_equals_single_process(int n_ranks) {
  for (auto const& optimizer : {newton_cg, adam}) {
    SCOPED_TRACE(optimizer);
    ScratchDirectory dir;
    expect_fit_equals_single_process(n_ranks, synthetic_config("run_alone", optimizer),
                                     synthetic_config("run_mpi", optimizer), dir,
                                     optimizer == adam ? adam_fit_tolerance : fit_tolerance);
  }
}

/// A data problem: 41 random probes of case 1's mode shapes, targets = jets of case 1's T3 (from `t3k jets`), and
/// per-probe weights; `bad_row` (< 41) gets a negative weight.
std::string make_data_file(ScratchDirectory const& dir, std::size_t bad_row = std::size_t(-1)) {
  std::string const probes_file = make_input(dir, 41, 3), jets_file = dir.file("jets41.h5");
  run_ok("jets --in " + quoted(probes_file) + " --out " + quoted(jets_file));
  std::string const path = dir.file(bad_row < 41 ? "bad_data.h5" : "data.h5");
  io::Writer out(path);
  out.write_probes(io::Reader(probes_file).read_probes());
  out.write_jets("/jets", io::Reader(jets_file).read_jets("/jets"));
  std::vector<double> weights(41);
  for (std::size_t s = 0; s < weights.size(); ++s) weights[s] = s == bad_row ? -1.0 : 0.5 + double(s % 3);
  out.write_raw("/weights", {weights.size()}, weights.data());
  out.commit();
  return path;
}

std::string data_config(std::string const& data_file, std::string const& directory) {
  return "problem:\n"
         "  data:\n"
         "    file: " +
         data_file +
         "\n"
         "    weights: /weights\n"
         "model:\n"
         "  tucker_ranks: [3, 4, 2, 3]\n"
         "  tt_ranks: [1, 2, 3, 2, 1]\n"
         "  init: {random: {seed: 1}}\n"
         "optimizer:\n" +
         newton_cg + output_section(directory);
}

void fit_data_file_equals_single_process(int n_ranks) {
  ScratchDirectory dir;
  std::string const data = make_data_file(dir);
  expect_fit_equals_single_process(n_ranks, data_config(data, "run_alone"), data_config(data, "run_mpi"), dir);
}

/// An entries data file (tensor completion): 121 entries with first-order jets of a planted T3 of case 1's shapes,
/// 1% noise and per-sample weights, written by the io writer.
std::string make_entries_file(ScratchDirectory const& dir) {
  Kokkos::DefaultExecutionSpace space;
  std::vector<std::size_t> const shapes{5, 4, 6, 5};
  auto const truth = t3k::random_t3<double>(space, shapes, {3, 4, 2, 3}, {1, 2, 3, 2, 1}, 3);
  auto const p = t3k::make_planted_problem(space, truth, t3k::MeasurementKind::entries, 121, 1, 0.01, 7);
  io::FittingData f;
  f.kind = p.kind;
  f.mode_shapes = shapes;
  f.order = p.order;
  for (auto const& d : p.pp) f.probes.p.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d));
  f.indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.indices);
  f.targets.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.targets[0]));
  for (std::size_t s = 0; s < 121; ++s) f.weights.push_back(0.5 + double(s % 3));
  std::string const path = dir.file("entries.h5");
  io::Writer out(path);
  io::write_fitting_data(out, f);
  out.commit();
  return path;
}

/// One rank's and several ranks' fits of an entries file agree, and so do predict and score of the fitted model.
void fit_entries_file_equals_single_process(int n_ranks) {
  ScratchDirectory dir;
  std::string const data = make_entries_file(dir);
  expect_fit_equals_single_process(n_ranks, data_config(data, "run_alone"), data_config(data, "run_mpi"), dir);
  std::string const model = quoted(dir.file("run_alone/model.h5"));
  run_ok("predict --model " + model + " --in " + quoted(data) + " --out " + quoted(dir.file("alone.h5")));
  run_mpi_ok(n_ranks, "predict --model " + model + " --in " + quoted(data) + " --out " + quoted(dir.file("mpi.h5")));
  std::vector<std::size_t> shape;
  auto const alone = io::Reader(dir.file("alone.h5")).read_raw("/entries/values", shape);
  auto const sharded = io::Reader(dir.file("mpi.h5")).read_raw("/entries/values", shape);
  EXPECT_EQ(shape, (std::vector<std::size_t>{121, 2}));
  EXPECT_LE(relative_error({sharded}, {alone}), tolerance);
  auto const score_alone = run_cli("score --model " + model + " --in " + quoted(data) + " --weights /weights");
  auto const score_mpi = run_mpi(n_ranks, "score --model " + model + " --in " + quoted(data) + " --weights /weights");
  ASSERT_EQ(score_mpi.exit_code, 0) << score_mpi.output;
  auto loss_of = [](std::string const& text) {
    auto const at = text.find("\nloss: ");
    return at == std::string::npos ? NAN : std::strtod(text.c_str() + at + 7, nullptr);
  };
  EXPECT_LE(std::abs(loss_of(score_mpi.output) - loss_of(score_alone.output)),
            tolerance * std::abs(loss_of(score_alone.output)))
      << score_alone.output << score_mpi.output;
  EXPECT_EQ(count(score_mpi.output, "relative_residual:"), 1u) << score_mpi.output;  // rank 0 alone prints
}

void fit_resumes_from_checkpoint(int n_ranks) {
  ScratchDirectory dir;
  write_file(dir.file("alone.yaml"), synthetic_config("run_alone", newton_cg));
  write_file(dir.file("mpi.yaml"), synthetic_config("run_mpi", newton_cg));
  run_ok("fit " + quoted(dir.file("alone.yaml")) + " --quiet");
  auto const stopped = run_mpi(n_ranks, "fit " + quoted(dir.file("mpi.yaml")) + " --quiet --stop-after 2");
  EXPECT_EQ(stopped.exit_code, 3) << stopped.output;
  EXPECT_EQ(count(stopped.output, "stopped after writing the checkpoint of iteration 2"), 1u) << stopped.output;
  EXPECT_FALSE(fs::exists(dir.file("run_mpi/model.h5")));
  run_mpi_ok(n_ranks, "fit " + quoted(dir.file("mpi.yaml")) + " --quiet --resume");
  EXPECT_LE(relative_error(dense_t3(dir.file("run_mpi/model.h5")), dense_t3(dir.file("run_alone/model.h5"))),
            fit_tolerance);
  EXPECT_EQ(history_figures(dir.file("run_mpi/history.csv")).size(),
            history_figures(dir.file("run_alone/history.csv")).size());
}

// ---------------------------------------------------------------------------------------------------- failures

/// Exit code 2, `message` printed once, no hang (timeout's 124) and no output file.
void expect_failure_once(RunResult const& r, std::string const& message, std::string const& output = "") {
  EXPECT_NE(r.exit_code, 124) << "mpiexec hung\n" << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(count(r.output, message), 1u) << r.output;
  if (!output.empty()) {
    EXPECT_FALSE(fs::exists(output));
  }
}

void bad_input_stops_every_rank_once(int n_ranks) {
  ScratchDirectory dir;
  std::string const out = dir.file("out.h5");
  // A missing file: every rank fails alike; the message reads as the single-process one.
  expect_failure_once(run_mpi(n_ranks, "jtr --in " + quoted(dir.file("missing.h5")) + " --out " + quoted(out)),
                      "t3k jtr: error: cannot open input file", out);
  // A dataset of the wrong shape.
  std::string const bad = dir.file("bad.h5");
  {
    io::Reader ref(testdata("case1_ragged.h5"));
    auto const x = ref.read_t3();
    auto probes = ref.read_probes(x.mode_shapes());
    probes.w[2] = io::Matrix("w2", probes.n_probes(), 5);
    io::Writer w(bad);
    w.write_t3(x);
    w.write_probes(probes);
    w.commit();
  }
  expect_failure_once(run_mpi(n_ranks, "jets --in " + quoted(bad) + " --out " + quoted(out)),
                      "/probes/w/2 has shape [6 x 5], expected [6 x 6]", out);
  // An output rank 0 cannot create, after every rank computed its rows.
  std::string const unwritable = dir.file("no_such_directory/out.h5");
  expect_failure_once(
      run_mpi(n_ranks, "jets --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(unwritable)),
      "cannot create output file", unwritable);
  EXPECT_EQ(count(run_mpi(n_ranks, "jets --in " + quoted(bad) + " --out " + quoted(out)).output, "error:"), 1u);
}

void bad_weight_on_the_last_rank_stops_every_rank(int n_ranks) {
  ScratchDirectory dir;
  // Row 40 belongs to the last rank only: that rank alone finds the negative weight.
  std::string const data = make_data_file(dir, 40);
  write_file(dir.file("run.yaml"), data_config(data, "run"));
  auto const r = run_mpi(n_ranks, "fit " + quoted(dir.file("run.yaml")) + " --quiet");
  std::string const rank = n_ranks > 1 ? "rank " + std::to_string(n_ranks - 1) + ": " : std::string();
  expect_failure_once(r, "t3k fit: error: " + rank);
  EXPECT_EQ(count(r.output, "/weights[40] is -1"), 1u) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("run/model.h5")));
}

class MpiCli : public ::testing::TestWithParam<int> {};

TEST_P(MpiCli, JtrSumEqualsSingleProcess) { jtr_sum_equals_single_process(GetParam()); }
TEST_P(MpiCli, PerProbeOutputsEqualSingleProcess) { per_probe_outputs_equal_single_process(GetParam()); }
TEST_P(MpiCli, FitSyntheticEqualsSingleProcess) { fit_synthetic_equals_single_process(GetParam()); }
TEST_P(MpiCli, FitDataFileEqualsSingleProcess) { fit_data_file_equals_single_process(GetParam()); }
TEST_P(MpiCli, FitEntriesFileEqualsSingleProcess) { fit_entries_file_equals_single_process(GetParam()); }
TEST_P(MpiCli, FitResumesFromCheckpoint) { fit_resumes_from_checkpoint(GetParam()); }
TEST_P(MpiCli, BadInputStopsEveryRankOnce) { bad_input_stops_every_rank_once(GetParam()); }
TEST_P(MpiCli, BadWeightOnTheLastRankStopsEveryRank) { bad_weight_on_the_last_rank_stops_every_rank(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Ranks, MpiCli, ::testing::Values(1, 2, 3),
                         [](::testing::TestParamInfo<int> const& info) { return "np" + std::to_string(info.param); });

}  // namespace

#endif  // T3K_TESTS_HAVE_IO
