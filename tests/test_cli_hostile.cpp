// Hostile input to the t3k tool: paths that are FIFOs, devices, directories, links or the input itself; flag and
// configuration values at and past their limits; HDF5 datasets with NaN, foreign element types or huge declared
// shapes; a fit killed mid-run and resumed. Each must end with exit 0 or with exit 2 and one line naming the flag,
// key, file or dataset, and must leave what the user has untouched.
#ifdef T3K_TESTS_HAVE_IO

#include "cli_harness.hpp"
#include "fuzz/h5_mutate.hpp"

#include "t3k/io/hdf5_io.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using t3k_test::quoted;
using t3k_test::run_cli;
using t3k_test::RunResult;
using t3k_test::ScratchDirectory;
using t3k_test::testdata;

std::string read_text(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(std::string const& path, std::string const& text) { std::ofstream(path, std::ios::binary) << text; }

/// Exit 2 and a message that mentions `name`.
void expect_refused(RunResult const& r, std::string const& name) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(name), std::string::npos) << "the message does not name '" << name << "': " << r.output;
  EXPECT_NE(r.output.find("error:"), std::string::npos) << r.output;
}

/// A tiny synthetic fit that finishes in a fraction of a second.
std::string synthetic_config(std::string const& extra_problem = "", std::string const& tail = "") {
  return "problem:\n  synthetic:\n    mode_shapes: [4, 5, 3]\n    tucker_ranks: [2, 2, 2]\n    tt_ranks: " +
         (extra_problem.empty() ? std::string("[1, 2, 2, 1]") : extra_problem) +
         "\n    n_probes: 60\n    seed: 3\nmodel:\n  init:\n    random: {seed: 1}\noptimizer:\n  name: newton_cg\n"
         "  max_iterations: 3\noutput:\n  directory: run\n" +
         tail;
}

std::string data_config(std::string const& file, std::string const& init = "random: {seed: 1}") {
  return "problem:\n  data:\n    file: " + file +
         "\nmodel:\n  tucker_ranks: [3, 4, 2, 3]\n  tt_ranks: [1, 2, 3, 2, 1]\n  init:\n    " + init +
         "\noptimizer:\n  name: newton_cg\n  max_iterations: 2\noutput:\n  directory: run\n";
}

// ------------------------------------------------------------------------------------------- paths and devices

void fifo_dev_zero_and_directory_as_config_are_refused() {
  ScratchDirectory dir("t3k_hostile");
  std::string const fifo = dir.file("config.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(run_cli("fit " + quoted(fifo)), "not a regular file");
  expect_refused(run_cli("fit /dev/zero"), "/dev/zero");
  expect_refused(run_cli("fit " + quoted(dir.file(""))), "directory");
}

void fifo_as_input_file_is_refused() {
  ScratchDirectory dir("t3k_hostile");
  std::string const fifo = dir.file("in.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(run_cli("jets --in " + quoted(fifo) + " --out " + quoted(dir.file("o.h5"))), "in.fifo");
  write_text(dir.file("data.yaml"), data_config(fifo));
  expect_refused(run_cli("fit --quiet " + quoted(dir.file("data.yaml"))), "problem.data.file");
  write_text(dir.file("init.yaml"), data_config(testdata("case1_ragged.h5"), "file: " + fifo));
  expect_refused(run_cli("fit --quiet " + quoted(dir.file("init.yaml"))), "model.init.file");
  EXPECT_FALSE(fs::exists(dir.file("o.h5")));
}

void output_to_dev_null_writes_through_and_keeps_the_device() {
  ScratchDirectory dir("t3k_hostile");
  auto const r = run_cli("jets --in " + quoted(testdata("case1_ragged.h5")) + " --out /dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  struct stat info;
  ASSERT_EQ(::stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode)) << "/dev/null was replaced";
}

void fifo_or_directory_as_output_is_refused_and_left_alone() {
  ScratchDirectory dir("t3k_hostile");
  std::string const fifo = dir.file("out.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(run_cli("jets --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(fifo)), "--out");
  struct stat info;
  ASSERT_EQ(::stat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
  fs::create_directories(dir.file("sub"));
  expect_refused(run_cli("frame --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(dir.file("sub"))),
                 "--out");
  EXPECT_TRUE(fs::is_directory(dir.file("sub")));
  EXPECT_EQ(dir.n_entries(), 2u);  // no temporary left behind
}

void output_equal_to_input_is_refused_under_any_spelling() {
  ScratchDirectory dir("t3k_hostile");
  std::string const in = dir.file("in.h5");
  fs::copy_file(testdata("case1_ragged.h5"), in);
  fs::create_hard_link(in, dir.file("link.h5"));
  std::string const before = read_text(in);
  for (std::string const& out : {in, dir.file("./in.h5"), dir.file("link.h5")}) {
    for (char const* command : {"jets", "frame", "jtr"}) {
      expect_refused(run_cli(std::string(command) + " --in " + quoted(in) + " --out " + quoted(out)), "--out");
    }
  }
  EXPECT_EQ(read_text(in), before) << "the input was changed";
}

void stale_temporaries_are_removed_and_links_never_followed() {
  ScratchDirectory dir("t3k_hostile");
  std::string const out = dir.file("out.h5");
  std::string const victim = dir.file("victim.txt");
  write_text(victim, "keep me");
  // pid 999999999 exceeds any pid_max: its process is gone.
  write_text(out + ".tmp-999999999", "stale");
  write_text(out + ".tmp-999999998-ABCDEFabcdef", "stale");
  write_text(out + ".tmp-notapid", "someone else's");
  fs::create_symlink(victim, out + ".tmp-999999997");
  auto const r = run_cli("jets --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(out + ".tmp-999999999"));
  EXPECT_FALSE(fs::exists(out + ".tmp-999999998-ABCDEFabcdef"));
  EXPECT_TRUE(fs::exists(out + ".tmp-notapid"));
  EXPECT_TRUE(fs::is_symlink(out + ".tmp-999999997"));  // only regular files are removed
  EXPECT_EQ(read_text(victim), "keep me");
  t3k::io::Reader check(out);
  EXPECT_TRUE(check.exists("/jets/0"));
}

void log_json_through_a_symbolic_link_is_refused() {
  ScratchDirectory dir("t3k_hostile");
  write_text(dir.file("run.yaml"), synthetic_config());
  write_text(dir.file("victim.txt"), "keep me");
  fs::create_symlink(dir.file("victim.txt"), dir.file("log.json"));
  expect_refused(run_cli("fit --quiet " + quoted(dir.file("run.yaml")) + " --log-json " + quoted(dir.file("log.json"))),
                 "--log-json");
  EXPECT_EQ(read_text(dir.file("victim.txt")), "keep me");
  auto const r =
      run_cli("fit --quiet " + quoted(dir.file("run.yaml")) + " --log-json " + quoted(dir.file("plain.json")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(read_text(dir.file("plain.json")).find("\"iteration\": 0"), std::string::npos);
}

/// --log-json onto an input (the configuration under any name, the data file, the init file, the checkpoint) or
/// onto one of the run's outputs is refused before anything is written, as --out onto --in is.
void log_json_onto_an_input_or_output_is_refused() {
  ScratchDirectory dir("t3k_hostile");
  std::string const config = dir.file("run.yaml");
  write_text(config, synthetic_config("", "  checkpoint_every: 1\n"));
  fs::create_hard_link(config, dir.file("same.yaml"));
  std::string const before = read_text(config);
  for (std::string const& log : {config, dir.file("./run.yaml"), dir.file("same.yaml")}) {
    expect_refused(run_cli("fit --quiet " + quoted(config) + " --log-json " + quoted(log)), "--log-json");
    EXPECT_EQ(read_text(config), before) << "the configuration was overwritten";
  }
  EXPECT_FALSE(fs::exists(dir.file("run"))) << "a refused run left its directory";
  // The checkpoint and the model of an earlier run in the same directory.
  ASSERT_EQ(run_cli("fit --quiet " + quoted(config)).exit_code, 0);
  std::string const checkpoint = read_text(dir.file("run/checkpoint.h5"));
  for (char const* name : {"run/checkpoint.h5", "run/model.h5", "run/history.csv"}) {
    expect_refused(run_cli("fit --quiet --resume " + quoted(config) + " --log-json " + quoted(dir.file(name))),
                   "--log-json");
  }
  EXPECT_EQ(read_text(dir.file("run/checkpoint.h5")), checkpoint);
  // The data file and the init file of a data problem.
  std::string const data = dir.file("in.h5");
  fs::copy_file(testdata("case1_ragged.h5"), data);
  std::string const data_before = read_text(data);
  write_text(dir.file("data.yaml"), data_config(data, "file: " + data));
  expect_refused(run_cli("fit --quiet " + quoted(dir.file("data.yaml")) + " --log-json " + quoted(data)),
                 "problem.data.file");
  EXPECT_EQ(read_text(data), data_before) << "the data file was overwritten";
}

/// A run refused after its configuration loaded (its data file) leaves no run directory; a new run (not --resume)
/// in the directory of an earlier one moves that run's checkpoint aside, so that no stale checkpoint of other
/// ranks sits next to the new outputs.
void refused_runs_leave_no_directory_and_new_runs_no_stale_checkpoint() {
  ScratchDirectory dir("t3k_hostile");
  std::string const data = dir.file("in.h5");
  fs::copy_file(testdata("case1_ragged.h5"), data);
  t3k_test::h5::set_entry(data, "/probes/w/0", 0, std::numeric_limits<double>::quiet_NaN());
  write_text(dir.file("data.yaml"), data_config(data));
  expect_refused(run_cli("fit --quiet " + quoted(dir.file("data.yaml"))), "/probes/w/0");
  EXPECT_FALSE(fs::exists(dir.file("run"))) << "the refused run left its directory";

  write_text(dir.file("a.yaml"), synthetic_config("", "  checkpoint_every: 1\n"));
  ASSERT_EQ(run_cli("fit --quiet " + quoted(dir.file("a.yaml"))).exit_code, 0);
  ASSERT_TRUE(fs::exists(dir.file("run/checkpoint.h5")));
  // Other ranks, no checkpoints, same directory.
  write_text(dir.file("b.yaml"), synthetic_config("[1, 1, 1, 1]"));
  auto const r = run_cli("fit " + quoted(dir.file("b.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("run/checkpoint.h5"))) << "a stale checkpoint was left next to the new outputs";
  EXPECT_TRUE(fs::exists(dir.file("run/checkpoint.h5.previous")));
  EXPECT_NE(r.output.find("checkpoint.h5.previous"), std::string::npos) << r.output;
  expect_refused(run_cli("fit --quiet --resume " + quoted(dir.file("b.yaml"))), "no checkpoint");
}

// ------------------------------------------------------------------------------------------- limits of values

void kokkos_flags_out_of_range_or_malformed_are_refused() {
  ScratchDirectory dir("t3k_hostile");
  write_text(dir.file("run.yaml"), synthetic_config());
  for (char const* value : {"abc", "-3", "0", "100000", "600", ""}) {
    expect_refused(run_cli("fit --quiet " + quoted(dir.file("run.yaml")) + " --kokkos-threads=" + value),
                   "--kokkos-threads");
    expect_refused(run_cli("jets --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(dir.file("o.h5")) +
                           " --kokkos-threads=" + value),
                   "--kokkos-threads");
  }
  // Every --kokkos-* flag is checked before Kokkos sees it, for fit as for the other commands: Kokkos 3 throws
  // from Kokkos::initialize on a value that is not plain digits.
  for (char const* arg : {"--kokkos-threads=+4", "--kokkos-threads= 4", "--kokkos-ndevices=-5", "--kokkos-ndevices=abc",
                          "--kokkos-ndevices=2,x", "--kokkos-num-devices=", "--kokkos-numa=+1",
                          "--kokkos-device-id=0x1", "--kokkos-thread=4", "--kokkos-help=yes"}) {
    std::string const flag = std::string(arg).substr(0, std::string(arg).find('='));
    expect_refused(run_cli("fit --quiet " + quoted(dir.file("run.yaml")) + " " + quoted(arg)), flag);
    expect_refused(run_cli("frame --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(dir.file("o.h5")) +
                           " " + quoted(arg)),
                   flag);
  }
  EXPECT_EQ(run_cli("fit --quiet " + quoted(dir.file("run.yaml")) + " --kokkos-ndevices=1,0").exit_code, 0);
  write_text(dir.file("threads.yaml"), synthetic_config("", "kokkos:\n  threads: 600\n"));
  expect_refused(run_cli("fit --quiet " + quoted(dir.file("threads.yaml"))), "kokkos.threads");
}

/// Unsigned flags take digits only: CLI11 would read "-1" as 2^64 - 1.
void negative_or_empty_unsigned_flags_are_refused() {
  ScratchDirectory dir("t3k_hostile");
  for (char const* value : {"-1", "''", "+3", "1e3"}) {
    expect_refused(run_cli(std::string("demo --probes 10 --seed ") + value), "--seed");
  }
  write_text(dir.file("run.yaml"), synthetic_config());
  expect_refused(run_cli("fit --quiet --stop-after -1 " + quoted(dir.file("run.yaml"))), "--stop-after");
  EXPECT_FALSE(fs::exists(dir.file("run")));
  EXPECT_EQ(run_cli("demo --probes 10 --seed 18446744073709551615").exit_code, 0);
}

void ranks_and_probe_counts_past_memory_are_refused_naming_the_key() {
  ScratchDirectory dir("t3k_hostile");
  write_text(dir.file("a.yaml"), synthetic_config("[1, 2147483648, 2, 1]"));
  auto r = run_cli("fit --quiet " + quoted(dir.file("a.yaml")));
  expect_refused(r, "problem.synthetic.tt_ranks");
  EXPECT_NE(r.output.find("available"), std::string::npos) << r.output;
  std::string model = synthetic_config();
  model.replace(model.find("model:\n"), 7, "model:\n  tucker_ranks: [2, 2, 2]\n  tt_ranks: [1, 1073741824, 2, 1]\n");
  write_text(dir.file("b.yaml"), model);
  expect_refused(run_cli("fit --quiet " + quoted(dir.file("b.yaml"))), "model.tt_ranks");
  std::string probes = synthetic_config();
  probes.replace(probes.find("n_probes: 60"), 12, "n_probes: 1099511627776");
  write_text(dir.file("c.yaml"), probes);
  expect_refused(run_cli("fit --quiet " + quoted(dir.file("c.yaml"))), "problem.synthetic.n_probes");
  EXPECT_FALSE(fs::exists(dir.file("run/model.h5")));
}

void estimate_chunk_refuses_sizes_past_64_bits_and_reads_byte_units() {
  std::string const shapes = "estimate-chunk --mode-shapes 10,10 --tucker-ranks 4,4 --tt-ranks 1,4,1 --order 2 ";
  auto big = run_cli(
      "estimate-chunk --mode-shapes 100000000000,100000000000 --tucker-ranks 4,4 --tt-ranks 1,4,1 --order 2 "
      "--n-probes 100000000000");
  expect_refused(big, "--n-probes");
  EXPECT_EQ(big.output.find("chunk_none"), std::string::npos) << "half an answer was printed: " << big.output;
  // Extents near 2^64: one alone is refused naming its flag; products past 2^64 bytes by the model, never an abort.
  auto const huge_shape = run_cli(
      "estimate-chunk --mode-shapes 16,2,8,18446744073709551615 --tucker-ranks 8,2,2,8 --tt-ranks 1,1,3,64,1 "
      "--order 8 --n-probes 64");
  expect_refused(huge_shape, "--mode-shapes: 18446744073709551615");
  expect_refused(run_cli("estimate-chunk --mode-shapes 16,2,8,8 --tucker-ranks 8,2,2,8 "
                         "--tt-ranks 1,1,18446744073709551615,64,1 --order 8 --n-probes 64"),
                 "--tt-ranks");
  expect_refused(
      run_cli("estimate-chunk --mode-shapes 4294967296,4294967296,4294967296 --tucker-ranks "
              "4294967296,4294967296,4294967296 --tt-ranks 1,4294967296,4294967296,1 --order 2 --n-probes 64"),
      "--mode-shapes");
  for (char const* bad : {"1e30", "nan", "-5", "0", "inf", "4XB", "0x10"}) {
    expect_refused(run_cli(shapes + "--n-probes 1000 --max-bytes " + std::string(bad)), "--max-bytes");
  }
  auto const plain = run_cli(shapes + "--n-probes 100000 --max-bytes 400000000");
  auto const units = run_cli(shapes + "--n-probes 100000 --max-bytes 400MB");
  auto const binary = run_cli(shapes + "--n-probes 100000 --max-bytes 0.5GiB");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  ASSERT_EQ(units.exit_code, 0) << units.output;
  ASSERT_EQ(binary.exit_code, 0) << binary.output;
  EXPECT_EQ(plain.output, units.output);
  EXPECT_NE(plain.output.find("max_chunk_size_within:"), std::string::npos) << plain.output;
}

/// One line of output: the refusal and nothing else.
void expect_one_line(RunResult const& r) {
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

/// Numbers and booleans written as YAML strings are refused for every kind of key (integer, number, boolean, list
/// entry, chunk size), naming the key; words may be quoted.
void quoted_numbers_and_booleans_are_refused_for_every_key() {
  ScratchDirectory dir("t3k_hostile");
  std::string const base = synthetic_config("", "chunk_size: 64\nkokkos:\n  threads: 1\n");
  struct Edit {
    std::string from, to, key;
  };
  for (Edit const& e : std::vector<Edit>{
           {"n_probes: 60", "n_probes: '60'", "problem.synthetic.n_probes"},
           {"n_probes: 60", "n_probes: 60\n    order: \"2\"", "problem.synthetic.order"},
           {"seed: 3", "seed: !!str 3", "problem.synthetic.seed"},
           {"seed: 3", "seed: 3\n    noise: '0.1'", "problem.synthetic.noise"},
           {"tt_ranks: [1, 2, 2, 1]", "tt_ranks: [1, '2', 2, 1]", "problem.synthetic.tt_ranks[1]"},
           {"max_iterations: 3", "max_iterations: '3'", "optimizer.max_iterations"},
           {"max_iterations: 3", "max_iterations: 3\n  tol_relative_residual: '1e-8'",
            "optimizer.tol_relative_residual"},
           {"name: newton_cg\n  max_iterations: 3", "name: adam\n  max_iterations: 3\n  keep_loss_stack: 'true'",
            "optimizer.keep_loss_stack"},
           {"chunk_size: 64", "chunk_size: '64'", "chunk_size"},
           {"threads: 1", "threads: '1'", "kokkos.threads"},
       }) {
    std::string text = base;
    text.replace(text.find(e.from), e.from.size(), e.to);
    write_text(dir.file("run.yaml"), text);
    auto const r = run_cli("fit --quiet " + quoted(dir.file("run.yaml")));
    expect_refused(r, e.key + ": must be");
    EXPECT_NE(r.output.find("the string"), std::string::npos) << r.output;
    expect_one_line(r);
  }
  std::string words = base;
  words.replace(words.find("chunk_size: 64"), 14, "chunk_size: 'auto'");
  words.replace(words.find("name: newton_cg"), 15, "name: \"newton_cg\"");
  write_text(dir.file("words.yaml"), words);
  auto const r = run_cli("fit --quiet " + quoted(dir.file("words.yaml")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

/// A NUL byte inside a YAML string would cut a path or dataset name short where the C libraries read it (the file
/// data.h5\0evil would open data.h5): refused naming the key.
void nul_bytes_in_text_values_are_refused() {
  ScratchDirectory dir("t3k_hostile");
  std::string const data = testdata("case1_ragged.h5");
  struct Edit {
    std::string from, to, key;
  };
  for (Edit const& e : std::vector<Edit>{
           {"file: " + data, "file: \"" + data + "\\0evil\"", "problem.data.file"},
           {"file: " + data, "file: " + data + "\n    weights: \"/weights\\0x\"", "problem.data.weights"},
           {"directory: run", "directory: \"run\\0x\"", "output.directory"},
       }) {
    std::string text = data_config(data);
    text.replace(text.find(e.from), e.from.size(), e.to);
    write_text(dir.file("run.yaml"), text);
    auto const r = run_cli("fit --quiet " + quoted(dir.file("run.yaml")));
    expect_refused(r, e.key + ": must not contain a NUL byte");
    expect_one_line(r);
    EXPECT_FALSE(fs::exists(dir.file("run")));
  }
}

/// Mode shapes and ranks of a million: the memory check refuses them before anything is allocated, in about the
/// time a refusal of a malformed value takes (the bound only catches a run that started to allocate or compute).
void shapes_and_ranks_of_a_million_are_refused_before_allocating() {
  ScratchDirectory dir("t3k_hostile");
  std::string synthetic = synthetic_config();
  std::string const shapes = "mode_shapes: [4, 5, 3]\n    tucker_ranks: [2, 2, 2]";
  synthetic.replace(synthetic.find(shapes), shapes.size(),
                    "mode_shapes: [1000000, 1000000, 1000000]\n    tucker_ranks: [1000000, 1000000, 1000000]");
  std::string model = data_config(testdata("case1_ragged.h5"));
  std::string const ranks = "tucker_ranks: [3, 4, 2, 3]\n  tt_ranks: [1, 2, 3, 2, 1]";
  model.replace(model.find(ranks), ranks.size(),
                "tucker_ranks: [1000000, 1000000, 1000000, 1000000]\n  tt_ranks: [1, 1000000, 1000000, 1000000, 1]");
  for (auto const& [text, key] :
       std::vector<std::pair<std::string, std::string>>{{synthetic, "problem.synthetic"}, {model, "model."}}) {
    write_text(dir.file("run.yaml"), text);
    auto const t0 = std::chrono::steady_clock::now();
    auto const r = run_cli("fit --quiet " + quoted(dir.file("run.yaml")));
    double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    expect_refused(r, key);
    expect_one_line(r);
    EXPECT_LT(seconds, 30) << r.output;
    EXPECT_FALSE(fs::exists(dir.file("run")));
  }
}

/// estimate-chunk's lists given as separate words (as well as comma-separated): an extent past 2^64 is refused
/// naming the flag, never an abort.
void estimate_chunk_lists_as_words_past_64_bits_are_refused() {
  auto const r = run_cli(
      "estimate-chunk --mode-shapes 16 2 8 18446744073709551615 --tucker-ranks 8 2 2 8 --tt-ranks 1 1 3 64 1 "
      "--order 8 --n-probes 64");
  expect_refused(r, "--mode-shapes");
  expect_one_line(r);
}

// ------------------------------------------------------------------------------------------------ HDF5 content

std::string jets_of(ScratchDirectory const& dir, std::string const& in) {
  return "jets --in " + quoted(in) + " --out " + quoted(dir.file("out.h5"));
}

void non_finite_entries_are_refused_naming_the_dataset() {
  ScratchDirectory dir("t3k_hostile");
  struct Case {
    char const* dataset;
    double value;
    char const* command;
  };
  double const nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (Case const& c :
       {Case{"/probes/w/0", nan, "jets"}, Case{"/probes/p/2", inf, "jets"}, Case{"/t3/tt_cores/1", -inf, "jets"},
        Case{"/residual/1", nan, "jtr"}, Case{"/jets/3", nan, "fit"}}) {
    std::string const in = dir.file("in.h5");
    fs::remove(in);
    fs::copy_file(testdata("case1_ragged.h5"), in);
    t3k_test::h5::set_entry(in, c.dataset, 5, c.value);
    RunResult r;
    if (std::string(c.command) == "fit") {
      write_text(dir.file("data.yaml"), data_config(in));
      r = run_cli("fit --quiet " + quoted(dir.file("data.yaml")));
      EXPECT_NE(r.output.find("problem.data.file"), std::string::npos) << r.output;
    } else {
      r = run_cli(std::string(c.command) + " --in " + quoted(in) + " --out " + quoted(dir.file("out.h5")));
    }
    expect_refused(r, c.dataset);
    EXPECT_FALSE(fs::exists(dir.file("out.h5")));
  }
}

/// Finite inputs near 1e300 whose results overflow: each command refuses with exit 1 naming the first dataset of
/// its result that is not finite, in one line, and writes nothing.
void results_that_overflow_are_refused_and_nothing_is_written() {
  ScratchDirectory dir("t3k_hostile");
  struct Case {
    char const* command;
    std::vector<std::string> scaled;
    char const* named;
  };
  for (Case const& c : {Case{"jets", {"/t3/tucker_cores/0", "/probes/w/1", "/probes/w/2"}, "/jets/0"},
                        Case{"frame", {"/t3/tt_cores/0", "/t3/tt_cores/1", "/t3/tt_cores/2"}, "/frame/"},
                        Case{"jv", {"/variation/tucker/0", "/probes/w/1", "/probes/w/2"}, "/tangent_jets/0"},
                        Case{"jtr", {"/residual/0", "/probes/w/1", "/probes/w/2"}, "/grad/tucker/0"}}) {
    std::string const in = dir.file("in.h5");
    fs::remove(in);
    fs::copy_file(testdata("case1_ragged.h5"), in);
    for (auto const& name : c.scaled) t3k_test::h5::set_entry(in, name, 0, 1e300);
    auto const r = run_cli(std::string(c.command) + " --in " + quoted(in) + " --out " + quoted(dir.file("out.h5")));
    EXPECT_EQ(r.exit_code, 1) << c.command << ": " << r.output;
    EXPECT_NE(r.output.find(c.named), std::string::npos) << c.command << ": " << r.output;
    EXPECT_NE(r.output.find("nothing was written"), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
    EXPECT_FALSE(fs::exists(dir.file("out.h5"))) << c.command;
    EXPECT_EQ(dir.n_entries(), 1u) << c.command << ": a temporary was left behind";
  }
}

// Integers are numbers (converted exactly to float64); other float widths and byte orders are refused.
void element_types_other_than_floats_and_integers_are_refused() {
  ScratchDirectory dir("t3k_hostile");
  std::string const in = dir.file("in.h5");
  struct Case {
    hid_t type;
    bool accepted;
  };
  for (Case const& c : {Case{H5T_IEEE_F32LE, true}, Case{H5T_STD_I32LE, true}, Case{H5T_STD_I64LE, true},
                        Case{H5T_IEEE_F64BE, false}, Case{H5T_NATIVE_LDOUBLE, false}, Case{H5T_STD_U8LE, true}}) {
    fs::remove(in);
    fs::copy_file(testdata("case1_ragged.h5"), in);
    t3k_test::h5::retype(in, "/probes/w/1", c.type);
    auto const r = run_cli(jets_of(dir, in));
    if (c.accepted) {
      EXPECT_EQ(r.exit_code, 0) << r.output;
    } else {
      expect_refused(r, "/probes/w/1");
      EXPECT_NE(r.output.find("element type"), std::string::npos) << r.output;
    }
    fs::remove(dir.file("out.h5"));
  }
}

void bad_attributes_and_huge_declared_shapes_are_refused() {
  ScratchDirectory dir("t3k_hostile");
  std::string const in = dir.file("in.h5");
  auto fresh = [&] {
    fs::remove(in);
    fs::copy_file(testdata("case1_ragged.h5"), in);
  };
  fresh();
  t3k_test::h5::set_attribute(in, "/probes", "order", 1000);
  expect_refused(run_cli(jets_of(dir, in)), "order");
  fresh();
  t3k_test::h5::set_attribute(in, "/probes", "symmetric", 7);
  expect_refused(run_cli(jets_of(dir, in)), "symmetric");
  fresh();
  // 2^40 x 4 doubles declared, never written: refused by size before any allocation.
  t3k_test::h5::redeclare(in, "/probes/w/0", {hsize_t(1) << 40, 4});
  auto const r = run_cli(jets_of(dir, in));
  expect_refused(r, "/probes/w/0");
  EXPECT_NE(r.output.find("available"), std::string::npos) << r.output;
}

/// Datasets whose data lies in another file: external storage, an external link (to a dataset or a group), a
/// virtual dataset, and a soft link through an external one. Each is refused naming the object, without opening
/// the other file: that file is a FIFO here, so following it would hang (each run is under a time limit).
void data_in_other_files_is_refused_without_reading_them() {
  ScratchDirectory dir("t3k_hostile");
  std::string const in = dir.file("in.h5");
  std::string const fifo = dir.file("source.fifo");
  std::string const other = dir.file("other.h5");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::copy_file(testdata("case1_ragged.h5"), other);
  auto fresh = [&] {
    fs::remove(in);
    fs::copy_file(testdata("case1_ragged.h5"), in);
  };
  auto jets = [&] {
    return t3k_test::run_shell("OMP_PROC_BIND=false timeout -k 5 60 " + quoted(T3K_CLI_PATH) + " " + jets_of(dir, in));
  };
  namespace h5 = t3k_test::h5;
  struct Case {
    std::function<void()> edit;
    char const* named;
  };
  for (Case const& c : {
           Case{[&] { h5::store_externally(in, "/probes/w/1", fifo); }, "/probes/w/1 keeps its data in external"},
           Case{[&] { h5::store_externally(in, "/probes/w/1", dir.file("raw.bin")); }, "/probes/w/1 keeps"},
           Case{[&] { h5::link_externally(in, "/probes/w/1", fifo, "/probes/w/1"); }, "/probes/w/1 is an external"},
           Case{[&] { h5::link_externally(in, "/probes/p", other, "/probes/p"); }, "/probes/p is an external link"},
           Case{[&] { h5::make_virtual(in, "/probes/w/1", fifo, "/probes/w/1"); }, "/probes/w/1 is a virtual"},
           Case{[&] {
                  h5::link_externally(in, "/elsewhere", fifo, "/probes/w/1");
                  h5::link_softly(in, "/probes/w/1", "/elsewhere");
                },
                "/elsewhere is an external link"},
       }) {
    fresh();
    std::ofstream(dir.file("raw.bin"), std::ios::binary) << std::string(1 << 16, '\0');
    c.edit();
    auto const r = jets();
    expect_refused(r, c.named);
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
    EXPECT_FALSE(fs::exists(dir.file("out.h5")));
  }
  // A soft link inside the file is read as its target.
  fresh();
  h5::link_softly(in, "/probes/w/1", "/probes/p/1");
  auto const r = jets();
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

/// A checkpoint is an input like any other: an iteration that is not a whole number, or a history, scalar or
/// moment holding Inf or a value no finite run reaches (1e300), is refused naming the dataset.
void checkpoints_with_impossible_values_are_refused() {
  ScratchDirectory dir("t3k_hostile");
  std::string const config = dir.file("run.yaml");
  write_text(config,
             "problem:\n  synthetic: {mode_shapes: [4, 5, 3], tucker_ranks: [2, 2, 2], tt_ranks: [1, 2, 2, 1], "
             "n_probes: 60, seed: 3}\nmodel:\n  init:\n    random: {seed: 1}\noptimizer:\n  name: adam\n"
             "  max_iterations: 6\noutput:\n  directory: run\n  checkpoint_every: 1\n");
  auto const first = run_cli("fit --quiet --stop-after 2 " + quoted(config));
  ASSERT_EQ(first.exit_code, 3) << first.output;
  std::string const checkpoint = dir.file("run/checkpoint.h5");
  fs::copy_file(checkpoint, dir.file("good.h5"));
  double const inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    char const* dataset;
    std::size_t index;
    double value;
  };
  for (Case const& c : {Case{"/checkpoint/iteration", 0, nan}, Case{"/checkpoint/iteration", 0, inf},
                        Case{"/checkpoint/iteration", 0, 0.5}, Case{"/checkpoint/iteration", 0, 18446744073709551616.0},
                        Case{"/checkpoint/iteration", 0, -1}, Case{"/checkpoint/history", 1, inf},
                        Case{"/checkpoint/history", 11, 1e300}, Case{"/checkpoint/history", 10, 0.5},
                        Case{"/checkpoint/second_moments", 0, inf}, Case{"/checkpoint/second_moments", 1, -1},
                        Case{"/checkpoint/scalar_values", 0, 1e300}, Case{"/checkpoint/moment/tucker/0", 3, 1e300},
                        Case{"/checkpoint/moment/tt/1", 0, inf}}) {
    fs::remove(checkpoint);
    fs::copy_file(dir.file("good.h5"), checkpoint);
    t3k_test::h5::set_entry(checkpoint, c.dataset, c.index, c.value);
    auto const r = run_cli("fit --quiet --resume " + quoted(config));
    expect_refused(r, c.dataset);
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
  }
  // The untouched checkpoint resumes.
  fs::remove(checkpoint);
  fs::copy_file(dir.file("good.h5"), checkpoint);
  auto const resumed = run_cli("fit --quiet --resume " + quoted(config));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
}

/// Target jets written [W x N_i x K+1] instead of [W x K+1 x N_i]: K comes from the order attribute of /probes
/// (2 here), so the message shows the shape the file should hold, not one built from the transposed axis.
void transposed_jets_are_refused_with_the_expected_shape() {
  ScratchDirectory dir("t3k_hostile");
  std::string const in = dir.file("in.h5");
  fs::copy_file(testdata("case1_ragged.h5"), in);
  {
    t3k_test::h5::File f(in);
    for (std::string const name : {"/jets/0", "/jets/1", "/jets/2", "/jets/3"}) {
      std::vector<hsize_t> dims;
      auto const data = t3k_test::h5::read(f.id(), name, dims);
      ASSERT_EQ(dims.size(), 3u);
      std::vector<double> swapped(data.size());
      for (hsize_t s = 0; s < dims[0]; ++s)
        for (hsize_t k = 0; k < dims[1]; ++k)
          for (hsize_t j = 0; j < dims[2]; ++j) {
            swapped[(s * dims[2] + j) * dims[1] + k] = data[(s * dims[1] + k) * dims[2] + j];
          }
      t3k_test::h5::recreate(f.id(), name, H5T_IEEE_F64LE, {dims[0], dims[2], dims[1]}, swapped);
    }
  }
  write_text(dir.file("data.yaml"), data_config(in));
  auto const r = run_cli("fit --quiet " + quoted(dir.file("data.yaml")));
  expect_refused(r, "/jets/0 has shape [6 x 4 x 3], expected [6 x 3 x 4]");
  EXPECT_NE(r.output.find("problem.data.file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("K = 2 from the order attribute of /probes"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
}

void transposed_probes_are_refused_with_the_expected_shape() {
  ScratchDirectory dir("t3k_hostile");
  std::string const in = dir.file("in.h5");
  fs::copy_file(testdata("case1_ragged.h5"), in);
  std::vector<hsize_t> dims;
  {
    t3k_test::h5::File f(in);
    auto const data = t3k_test::h5::read(f.id(), "/probes/w/1", dims);
    ASSERT_EQ(dims.size(), 2u);
    ASSERT_NE(dims[0], dims[1]) << "the case must tell W and N_1 apart";
    std::vector<double> swapped(data.size());
    for (hsize_t s = 0; s < dims[0]; ++s)
      for (hsize_t j = 0; j < dims[1]; ++j) swapped[j * dims[0] + s] = data[s * dims[1] + j];
    t3k_test::h5::recreate(f.id(), "/probes/w/1", H5T_IEEE_F64LE, {dims[1], dims[0]}, swapped);
  }
  // The data file alone gives no mode shapes: W comes from /probes/w/0 and N_1 from the other extent.
  write_text(dir.file("data.yaml"), data_config(in));
  auto const r = run_cli("fit --quiet " + quoted(dir.file("data.yaml")));
  expect_refused(r, "/probes/w/1 has shape [" + std::to_string(dims[1]) + " x " + std::to_string(dims[0]) +
                        "], expected [" + std::to_string(dims[0]) + " x " + std::to_string(dims[1]) + "]");
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
}

void tucker_core_of_another_rank_names_both_cores() {
  ScratchDirectory dir("t3k_hostile");
  std::string const in = dir.file("in.h5");
  fs::copy_file(testdata("case1_ragged.h5"), in);
  std::vector<hsize_t> u_dims, g_dims;
  {
    t3k_test::h5::File f(in);
    auto const u = t3k_test::h5::read(f.id(), "/t3/tucker_cores/2", u_dims);
    (void)t3k_test::h5::read(f.id(), "/t3/tt_cores/2", g_dims);
    ASSERT_EQ(u_dims.size(), 2u);
    ASSERT_EQ(g_dims.size(), 3u);
    std::vector<double> grown(u);
    grown.resize(u.size() + u_dims[1], 0.5);  // one more row: n_2 + 1
    t3k_test::h5::recreate(f.id(), "/t3/tucker_cores/2", H5T_IEEE_F64LE, {u_dims[0] + 1, u_dims[1]}, grown);
  }
  auto const r = run_cli("jets --in " + quoted(in) + " --out " + quoted(dir.file("out.h5")));
  expect_refused(r, "/t3/tucker_cores/2 has " + std::to_string(u_dims[0] + 1) +
                        " rows but /t3/tt_cores/2 has middle "
                        "extent " +
                        std::to_string(g_dims[1]));
  EXPECT_FALSE(fs::exists(dir.file("out.h5")));
}

// --------------------------------------------------------------------------------------------- kill and resume

/// Runs the fit in the background and kills it with SIGKILL once its first checkpoint exists. Returns whether the
/// kill ended it (rather than the run finishing first).
bool start_and_kill(std::string const& config, std::string const& checkpoint) {
  pid_t const pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ::setenv("OMP_PROC_BIND", "false", 1);
    ::execl(T3K_CLI_PATH, T3K_CLI_PATH, "fit", "--quiet", config.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  // Poll for the checkpoint (or the end of the run): no time limit is asserted; ctest bounds the test.
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (fs::exists(checkpoint)) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

void expect_models_bitwise_equal(std::string const& a, std::string const& b) {
  t3k::io::Reader ra(a), rb(b);
  auto const xa = ra.read_t3();
  auto const xb = rb.read_t3();
  ASSERT_EQ(xa.n_modes(), xb.n_modes());
  for (std::size_t i = 0; i < xa.n_modes(); ++i) {
    auto const ua = xa.tucker_core(i), ub = xb.tucker_core(i);
    auto const ga = xa.tt_core(i), gb = xb.tt_core(i);
    ASSERT_EQ(ua.size(), ub.size());
    ASSERT_EQ(ga.size(), gb.size());
    EXPECT_EQ(std::memcmp(ua.data(), ub.data(), ua.size() * sizeof(double)), 0) << "Tucker core " << i;
    EXPECT_EQ(std::memcmp(ga.data(), gb.data(), ga.size() * sizeof(double)), 0) << "TT core " << i;
  }
}

/// The same fit in a/run.yaml and b/run.yaml, with checkpoint_every `every`, long enough that a kill or a signal
/// lands mid-run (gradient descent never meets its tolerance early here); runs a/ to its end. Returns a/'s result.
RunResult two_runs_and_the_whole_one(ScratchDirectory const& dir, std::size_t every) {
  std::string const config =
      "problem:\n  synthetic: {mode_shapes: [6, 5, 4], tucker_ranks: [3, 3, 3], tt_ranks: [1, 3, 3, 1], "
      "n_probes: 200, seed: 11}\nmodel:\n  init:\n    random: {seed: 5}\noptimizer:\n  name: gradient_descent\n"
      "  max_iterations: 300\noutput:\n  directory: run\n  checkpoint_every: " +
      std::to_string(every) + "\nkokkos:\n  threads: 1\n";
  fs::create_directories(dir.file("a"));
  fs::create_directories(dir.file("b"));
  write_text(dir.file("a/run.yaml"), config);
  write_text(dir.file("b/run.yaml"), config);
  return run_cli("fit --quiet " + quoted(dir.file("a/run.yaml")));
}

void fit_killed_mid_run_resumes_to_the_uninterrupted_model() {
  ScratchDirectory dir("t3k_hostile");
  auto const whole = two_runs_and_the_whole_one(dir, 1);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;

  ASSERT_TRUE(start_and_kill(dir.file("b/run.yaml"), dir.file("b/run/checkpoint.h5")))
      << "the run ended before the kill";
  ASSERT_FALSE(fs::exists(dir.file("b/run/model.h5")));
  ASSERT_TRUE(fs::exists(dir.file("b/run/checkpoint.h5")));
  auto const resumed = run_cli("fit --quiet --resume " + quoted(dir.file("b/run.yaml")));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  expect_models_bitwise_equal(dir.file("a/run/model.h5"), dir.file("b/run/model.h5"));
  // The killed run's temporaries (its process is gone) were removed by the resumed run.
  for (auto const& e : fs::directory_iterator(dir.file("b/run"))) {
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

/// Runs the fit in the background, logging to `log`, and sends it `signal_number` once `records` iterations are
/// logged. Returns its wait status.
int start_and_interrupt(std::string const& config, std::string const& log, int signal_number, std::size_t records) {
  pid_t const pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::setenv("OMP_PROC_BIND", "false", 1);
    ::execl(T3K_CLI_PATH, T3K_CLI_PATH, "fit", "--quiet", "--log-json", log.c_str(), config.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    std::string const logged = fs::exists(log) ? read_text(log) : std::string();
    if (std::size_t(std::count(logged.begin(), logged.end(), '\n')) >= records) {
      ::kill(pid, signal_number);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return status;
}

// SIGTERM (as SIGINT) ends a fit after its current iteration: exit 128 + 15, the outputs of the point reached
// written and its stop checkpointed, so that --resume ends at the uninterrupted run's model bit for bit.
void fit_interrupted_by_a_signal_writes_its_outputs_and_resumes_exactly() {
  ScratchDirectory dir("t3k_hostile");
  auto const whole = two_runs_and_the_whole_one(dir, 1000);  // no periodic checkpoint before the signal
  ASSERT_EQ(whole.exit_code, 0) << whole.output;

  int const status = start_and_interrupt(dir.file("b/run.yaml"), dir.file("b/log.json"), SIGTERM, 4);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by a signal: the handler was not installed";
  ASSERT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << "exit 0: the run ended before the signal";
  std::string const summary = read_text(dir.file("b/run/summary.yaml"));
  EXPECT_NE(summary.find("interrupted by SIGTERM at iteration"), std::string::npos) << summary;
  ASSERT_TRUE(fs::exists(dir.file("b/run/model.h5")));
  ASSERT_TRUE(fs::exists(dir.file("b/run/checkpoint.h5"))) << "the stop was not checkpointed";
  auto const resumed = run_cli("fit --quiet --resume " + quoted(dir.file("b/run.yaml")));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  expect_models_bitwise_equal(dir.file("a/run/model.h5"), dir.file("b/run/model.h5"));
}

}  // namespace

TEST(CliHostile, FifoDevZeroAndDirectoryAsConfigAreRefused) { fifo_dev_zero_and_directory_as_config_are_refused(); }
TEST(CliHostile, FifoAsInputFileIsRefused) { fifo_as_input_file_is_refused(); }
TEST(CliHostile, OutputToDevNullWritesThroughAndKeepsTheDevice) {
  output_to_dev_null_writes_through_and_keeps_the_device();
}
TEST(CliHostile, FifoOrDirectoryAsOutputIsRefusedAndLeftAlone) {
  fifo_or_directory_as_output_is_refused_and_left_alone();
}
TEST(CliHostile, OutputEqualToInputIsRefusedUnderAnySpelling) { output_equal_to_input_is_refused_under_any_spelling(); }
TEST(CliHostile, StaleTemporariesAreRemovedAndLinksNeverFollowed) {
  stale_temporaries_are_removed_and_links_never_followed();
}
TEST(CliHostile, LogJsonThroughASymbolicLinkIsRefused) { log_json_through_a_symbolic_link_is_refused(); }
TEST(CliHostile, LogJsonOntoAnInputOrOutputIsRefused) { log_json_onto_an_input_or_output_is_refused(); }
TEST(CliHostile, RefusedRunsLeaveNoDirectoryAndNewRunsNoStaleCheckpoint) {
  refused_runs_leave_no_directory_and_new_runs_no_stale_checkpoint();
}
TEST(CliHostile, KokkosFlagsOutOfRangeOrMalformedAreRefused) { kokkos_flags_out_of_range_or_malformed_are_refused(); }
TEST(CliHostile, NegativeOrEmptyUnsignedFlagsAreRefused) { negative_or_empty_unsigned_flags_are_refused(); }
TEST(CliHostile, RanksAndProbeCountsPastMemoryAreRefusedNamingTheKey) {
  ranks_and_probe_counts_past_memory_are_refused_naming_the_key();
}
TEST(CliHostile, EstimateChunkRefusesSizesPast64BitsAndReadsByteUnits) {
  estimate_chunk_refuses_sizes_past_64_bits_and_reads_byte_units();
}
TEST(CliHostile, QuotedNumbersAndBooleansAreRefusedForEveryKey) {
  quoted_numbers_and_booleans_are_refused_for_every_key();
}
TEST(CliHostile, NulBytesInTextValuesAreRefused) { nul_bytes_in_text_values_are_refused(); }
TEST(CliHostile, ShapesAndRanksOfAMillionAreRefusedBeforeAllocating) {
  shapes_and_ranks_of_a_million_are_refused_before_allocating();
}
TEST(CliHostile, EstimateChunkListsAsWordsPast64BitsAreRefused) {
  estimate_chunk_lists_as_words_past_64_bits_are_refused();
}
TEST(CliHostile, NonFiniteEntriesAreRefusedNamingTheDataset) { non_finite_entries_are_refused_naming_the_dataset(); }
TEST(CliHostile, ResultsThatOverflowAreRefusedAndNothingIsWritten) {
  results_that_overflow_are_refused_and_nothing_is_written();
}
TEST(CliHostile, ElementTypesOtherThanFloatsAndIntegersAreRefused) {
  element_types_other_than_floats_and_integers_are_refused();
}
TEST(CliHostile, BadAttributesAndHugeDeclaredShapesAreRefused) {
  bad_attributes_and_huge_declared_shapes_are_refused();
}
TEST(CliHostile, DataInOtherFilesIsRefusedWithoutReadingThem) { data_in_other_files_is_refused_without_reading_them(); }
TEST(CliHostile, CheckpointsWithImpossibleValuesAreRefused) { checkpoints_with_impossible_values_are_refused(); }
TEST(CliHostile, TransposedJetsAreRefusedWithTheExpectedShape) {
  transposed_jets_are_refused_with_the_expected_shape();
}
TEST(CliHostile, TransposedProbesAreRefusedWithTheExpectedShape) {
  transposed_probes_are_refused_with_the_expected_shape();
}
TEST(CliHostile, TuckerCoreOfAnotherRankNamesBothCores) { tucker_core_of_another_rank_names_both_cores(); }
TEST(CliHostile, FitKilledMidRunResumesToTheUninterruptedModel) {
  fit_killed_mid_run_resumes_to_the_uninterrupted_model();
}

TEST(CliHostile, FitInterruptedByASignalWritesItsOutputsAndResumesExactly) {
  fit_interrupted_by_a_signal_writes_its_outputs_and_resumes_exactly();
}

#endif  // T3K_TESTS_HAVE_IO
