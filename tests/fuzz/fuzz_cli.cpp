// A bounded fuzz run of the t3k tool: mutates the shipped example configurations and test data files (YAML lines
// and values; HDF5 entries, element types, shapes, objects and attributes) with a fixed seed, adds every dataset made
// to keep its data in a FIFO (external storage, external link, virtual dataset), runs the tool on each
// case under a time limit, and fails on a crash (signal), a hang (time limit), an exit code other than 0, 2 or 1 (the
// last only for results that overflowed, refused naming the dataset), or an exit 2 whose message names neither the
// file, a flag nor a key. A failing case is kept for replay.
//
//   t3k_fuzz_cli --cli PATH --examples DIR --data DIR [--cases N] [--seed S] [--timeout SECONDS] [--jobs J]
//                [--keep DIR]

#include "h5_mutate.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string cli, examples, data, keep;
  std::size_t cases = 1000;
  std::uint64_t seed = 20240611;
  int timeout = 60;
  std::size_t jobs = 8;  // cases run at once: each spends most of its time starting up, not computing
};

/// A prepared case: the command line and the files whose names an exit-2 message may give.
struct Case {
  std::string description, command;
  std::vector<std::string> files;
  bool must_refuse = false;  ///< a value the tool must refuse (exit 2), not run
};

struct Outcome {
  int exit_code = -1;  // 128 + signal when killed; 124 or 137 when the time limit ended it
  std::string output;
};

std::string shell_quoted(std::string const& s) { return "'" + s + "'"; }

Outcome run(std::string const& command, int timeout) {
  // -k: a process that ignores SIGTERM is killed 5 s later. OMP_NUM_THREADS=1: each case is small.
  std::string const line = "OMP_NUM_THREADS=1 OMP_PROC_BIND=false timeout -k 5 " + std::to_string(timeout) + " " +
                           command + " </dev/null 2>&1";
  Outcome o;
  FILE* pipe = ::popen(line.c_str(), "r");
  if (pipe == nullptr) return o;
  char buffer[4096];
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) o.output.append(buffer, got);
  int const status = ::pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

std::string read_text(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(std::string const& path, std::string const& text) { std::ofstream(path, std::ios::binary) << text; }

std::vector<std::string> lines_of(std::string const& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string join(std::vector<std::string> const& lines) {
  std::string out;
  for (auto const& l : lines) out += l + "\n";
  return out;
}

/// Values a user could write where a number, list or word is expected; huge ones must be refused by size.
std::vector<std::string> const hostile_values = {"0",
                                                 "-1",
                                                 "1",
                                                 "2",
                                                 "3",
                                                 "7",
                                                 "2147483648",
                                                 "4294967296",
                                                 "18446744073709551616",
                                                 "1e308",
                                                 "-1e308",
                                                 "1e-320",
                                                 ".nan",
                                                 ".inf",
                                                 "-.inf",
                                                 "0.5",
                                                 "abc",
                                                 "''",
                                                 "[]",
                                                 "{}",
                                                 "~",
                                                 "true",
                                                 "[1, 2]",
                                                 "[0, 0, 0]",
                                                 "[1, 2147483648, 1]",
                                                 "[2147483648]",
                                                 "/dev/zero",
                                                 "FIFO",
                                                 "/",
                                                 "{random: {seed: 1}}",
                                                 "{file: FIFO}",
                                                 "auto",
                                                 "none",
                                                 "-0"};

class Fuzzer {
 public:
  Fuzzer(Options o) : opt_(std::move(o)), gen_(opt_.seed) {
    work_ = fs::temp_directory_path() / ("t3k_fuzz_" + std::to_string(::getpid()));
    fs::remove_all(work_);
    fs::create_directories(work_);
    fifo_ = (work_ / "fifo").string();
    ::mkfifo(fifo_.c_str(), 0600);
    for (auto const& e : fs::directory_iterator(opt_.examples)) {
      if (e.path().extension() == ".yaml") configs_.push_back(small(read_text(e.path().string())));
    }
    for (char const* name : {"case1_ragged.h5", "case3_symmetric.h5"}) {
      data_files_.push_back((fs::path(opt_.data) / name).string());
    }
    // A configuration on the shipped data file too, with the shapes of case1_ragged.h5.
    configs_.push_back(
        "problem:\n  data:\n    file: DATA\n    order: 2\nmodel:\n  tucker_ranks: [3, 4, 2, 3]\n"
        "  tt_ranks: [1, 2, 3, 2, 1]\n  init:\n    random: {seed: 1}\noptimizer:\n  name: adam\n"
        "  max_iterations: 2\nchunk_size: 64\noutput:\n  directory: runs/data\n  checkpoint_every: 1\n");
  }
  ~Fuzzer() {
    std::error_code ignored;
    fs::remove_all(work_, ignored);
  }

  int run_all() {
    auto const t0 = std::chrono::steady_clock::now();
    // Every case is drawn first (one random stream: the same cases on every run), then run `jobs` at a time.
    std::vector<Case> cases(opt_.cases);
    for (std::size_t c = 0; c < opt_.cases; ++c) {
      case_dir_ = work_ / ("case" + std::to_string(c));
      fs::create_directories(case_dir_);
      cases[c] = (c % 3 == 2) ? hdf5_case() : yaml_case();
    }
    // Fixed cases after the drawn ones (the random stream, and so the drawn cases, stay as they were).
    for (auto& c : other_file_cases()) cases.push_back(std::move(c));
    for (auto& c : hostile_value_cases()) cases.push_back(std::move(c));
    std::vector<Outcome> outcomes(cases.size());
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> workers;
    for (std::size_t j = 0; j < std::max<std::size_t>(1, opt_.jobs); ++j) {
      workers.emplace_back([&] {
        for (std::size_t c = next++; c < cases.size(); c = next++) outcomes[c] = run(cases[c].command, opt_.timeout);
      });
    }
    for (auto& w : workers) w.join();
    std::size_t failures = 0, refused = 0, accepted = 0;
    for (std::size_t c = 0; c < cases.size(); ++c) {
      Outcome const& o = outcomes[c];
      std::string problem = judge(o, cases[c].files);
      if (problem.empty() && o.exit_code != 2 && cases[c].must_refuse) problem = "ran a value it must refuse";
      if (o.exit_code == 0) ++accepted;
      if (o.exit_code == 2) ++refused;
      if (problem.empty()) continue;
      ++failures;
      std::cerr << "FAIL case " << c << " (" << cases[c].description << "): " << problem
                << "\n  command: " << cases[c].command << "\n  output: " << o.output << "\n";
      if (!opt_.keep.empty()) {
        fs::path const kept = fs::path(opt_.keep) / ("case" + std::to_string(c));
        fs::create_directories(kept);
        for (auto const& e : fs::directory_iterator(work_ / ("case" + std::to_string(c)))) {
          if (e.is_regular_file())
            fs::copy_file(e.path(), kept / e.path().filename(), fs::copy_options::overwrite_existing);
        }
        std::cerr << "  kept in " << kept << "\n";
      }
    }
    double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("t3k_fuzz_cli: %zu cases (seed %llu): %zu exit 0, %zu exit 2, %zu failures, %.1f s\n", cases.size(),
                static_cast<unsigned long long>(opt_.seed), accepted, refused, failures, seconds);
    return failures == 0 ? 0 : 1;
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(gen_); }

  /// Keeps each case quick: few iterations and probes, one thread.
  static std::string small(std::string text) {
    text = std::regex_replace(text, std::regex(R"(max_iterations: *[0-9]+)"), "max_iterations: 2");
    text = std::regex_replace(text, std::regex(R"(n_probes: *[0-9]+)"), "n_probes: 50");
    text = std::regex_replace(text, std::regex(R"(threads: *[0-9]+)"), "threads: 1");
    text = std::regex_replace(text, std::regex(R"(file: *\S+\.h5)"), "file: DATA");
    return text;
  }

  std::string resolve(std::string text, std::string const& data) const {
    text = std::regex_replace(text, std::regex("DATA"), data);
    text = std::regex_replace(text, std::regex("FIFO"), fifo_);
    // A mutated max_iterations still ends quickly.
    return std::regex_replace(text, std::regex(R"((^|\s)max_iterations: *[0-9]{2,})"), "$1max_iterations: 2");
  }

  std::string mutate_yaml(std::string const& text, std::string& description) {
    auto lines = lines_of(text);
    std::size_t const n_mutations = 1 + pick(3);
    for (std::size_t m = 0; m < n_mutations && !lines.empty(); ++m) {
      std::size_t const i = pick(lines.size());
      switch (pick(7)) {
        case 0:
        case 1:
        case 2: {  // a value replaced
          std::size_t const colon = lines[i].find(':');
          std::string const value = hostile_values[pick(hostile_values.size())];
          if (colon != std::string::npos) lines[i] = lines[i].substr(0, colon + 1) + " " + value;
          description += " value " + std::to_string(i) + "=" + value;
          break;
        }
        case 3:  // a line removed
          lines.erase(lines.begin() + long(i));
          description += " drop " + std::to_string(i);
          break;
        case 4:  // a line repeated
          lines.insert(lines.begin() + long(i), lines[i]);
          description += " dup " + std::to_string(i);
          break;
        case 5: {  // a character replaced
          if (!lines[i].empty()) {
            static char const junk[] = ":-[]{}#&*!|>'\"%@`\t ,?0\x01\xff";
            lines[i][pick(lines[i].size())] = junk[pick(sizeof junk - 1)];
          }
          description += " char " + std::to_string(i);
          break;
        }
        default:  // the text cut short
          lines.resize(i);
          description += " cut " + std::to_string(i);
      }
    }
    return join(lines);
  }

  Case yaml_case() {
    std::size_t const which = pick(configs_.size());
    std::string description = "yaml " + std::to_string(which) + ":";
    std::string const data = data_files_[0];
    std::string const config = (case_dir_ / "run.yaml").string();
    write_text(config, resolve(mutate_yaml(configs_[which], description), data));
    std::string flags = " --quiet";
    if (pick(8) == 0) flags += " --log-json " + shell_quoted((case_dir_ / "log.json").string());
    return {description, shell_quoted(opt_.cli) + " fit " + shell_quoted(config) + flags, {config}};
  }

  Case hdf5_case() {
    std::string description;
    std::string const source = data_files_[pick(data_files_.size())];
    std::string const in = (case_dir_ / "in.h5").string();
    fs::copy_file(source, in, fs::copy_options::overwrite_existing);
    auto const names = t3k_test::h5::datasets(in);
    std::string const target = names[pick(names.size())];
    description = "hdf5 " + fs::path(source).filename().string() + " " + target + ":";
    switch (pick(8)) {
      case 0: {
        double const values[] = {std::numeric_limits<double>::quiet_NaN(),
                                 std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity(),
                                 1e308,
                                 -0.0,
                                 5e-324};
        std::size_t const v = pick(6);
        t3k_test::h5::set_entry(in, target, pick(64), values[v]);
        description += " entry value #" + std::to_string(v);
        break;
      }
      case 1: {
        hid_t const types[] = {H5T_STD_I32LE,  H5T_STD_I64LE,  H5T_STD_U8LE,       H5T_IEEE_F32LE,
                               H5T_IEEE_F64BE, H5T_IEEE_F32BE, H5T_NATIVE_LDOUBLE, H5T_STD_I16BE};
        std::size_t const t = pick(8);
        t3k_test::h5::retype(in, target, types[t]);
        description += " type #" + std::to_string(t);
        break;
      }
      case 2: {
        std::vector<hsize_t> dims;
        hsize_t const extents[] = {0, 1, 2, 3, 5, 64, hsize_t(1) << 31, hsize_t(1) << 40};
        std::size_t const rank = 1 + pick(4);
        for (std::size_t k = 0; k < rank; ++k) dims.push_back(extents[pick(8)]);
        t3k_test::h5::redeclare(in, target, dims);
        description += " shape of rank " + std::to_string(rank);
        break;
      }
      case 3:
        t3k_test::h5::remove(in, target);
        description += " removed";
        break;
      case 4: {
        std::int64_t const values[] = {-1, 0, 1, 2, 7, 17, 1000, std::int64_t(1) << 40};
        std::int64_t const v = values[pick(8)];
        char const* attribute = pick(2) == 0 ? "order" : "symmetric";
        t3k_test::h5::set_attribute(in, "/probes", attribute, v);
        description += std::string(" attribute ") + attribute + " = " + std::to_string(v);
        break;
      }
      case 5: {  // the file cut short
        auto const size = fs::file_size(in);
        fs::resize_file(in, size / (2 + pick(8)));
        description += " truncated";
        break;
      }
      default: {  // two edits
        t3k_test::h5::set_entry(in, target, pick(64), std::numeric_limits<double>::quiet_NaN());
        t3k_test::h5::remove(in, names[pick(names.size())]);
        description += " NaN and a removal";
      }
    }
    std::string const out = shell_quoted((case_dir_ / "out.h5").string());
    switch (pick(5)) {
      case 0:
        return {
            description + " jets", shell_quoted(opt_.cli) + " jets --in " + shell_quoted(in) + " --out " + out, {in}};
      case 1:
        return {
            description + " frame", shell_quoted(opt_.cli) + " frame --in " + shell_quoted(in) + " --out " + out, {in}};
      case 2:
        return {description + " jtr", shell_quoted(opt_.cli) + " jtr --in " + shell_quoted(in) + " --out " + out, {in}};
      case 3:
        return {description + " jv", shell_quoted(opt_.cli) + " jv --in " + shell_quoted(in) + " --out " + out, {in}};
      default: {
        std::string const config = (case_dir_ / "run.yaml").string();
        bool const symmetric = source.find("symmetric") != std::string::npos;
        write_text(config,
                   "problem:\n  data:\n    file: " + in + "\nmodel:\n" +
                       (symmetric ? std::string() : "  tucker_ranks: [3, 4, 2, 3]\n  tt_ranks: [1, 2, 3, 2, 1]\n") +
                       "  init:\n    " + (symmetric ? "file: " + in : std::string("random: {seed: 1}")) +
                       "\noptimizer:\n  name: newton_cg\n  max_iterations: 2\noutput:\n  directory: run\n");
        return {description + " fit", shell_quoted(opt_.cli) + " fit --quiet " + shell_quoted(config), {in, config}};
      }
    }
  }

  /// Every dataset of the data files made to keep its data in the FIFO (by external storage, an external link or a
  /// virtual dataset in turn) and fed to one of the commands: reading it would block until the time limit.
  std::vector<Case> other_file_cases() {
    std::vector<Case> out;
    char const* const commands[] = {"jets", "frame", "jtr", "jv"};
    std::size_t n = 0;
    for (std::string const& source : data_files_) {
      for (std::string const& name : t3k_test::h5::datasets(source)) {
        std::size_t const kind = n % 3;
        case_dir_ = work_ / ("case" + std::to_string(opt_.cases + n));  // kept under this name on failure
        fs::create_directories(case_dir_);
        std::string const in = (case_dir_ / "in.h5").string();
        fs::copy_file(source, in, fs::copy_options::overwrite_existing);
        char const* what = kind == 0 ? "external storage" : kind == 1 ? "external link" : "virtual";
        if (kind == 0) t3k_test::h5::store_externally(in, name, fifo_);
        if (kind == 1) t3k_test::h5::link_externally(in, name, fifo_, name);
        if (kind == 2) t3k_test::h5::make_virtual(in, name, fifo_, name);
        std::string const command = commands[n % 4];
        std::string const out_file = shell_quoted((case_dir_ / "out.h5").string());
        out.push_back({fs::path(source).filename().string() + " " + name + " " + what + " " + command,
                       shell_quoted(opt_.cli) + " " + command + " --in " + shell_quoted(in) + " --out " + out_file,
                       {in}});
        ++n;
      }
    }
    return out;
  }

  /// Values the tool must refuse with exit 2 and one line naming the key or flag: numbers and booleans written as
  /// YAML strings, text holding a NUL byte, shapes and ranks past any memory, and malformed flags.
  std::vector<Case> hostile_value_cases() {
    std::string const base =
        "problem:\n  synthetic:\n    mode_shapes: [4, 5, 3]\n    tucker_ranks: [2, 2, 2]\n    tt_ranks: [1, 2, 2, 1]\n"
        "    order: 2\n    n_probes: 60\n    seed: 3\nmodel:\n  init:\n    random: {seed: 1}\noptimizer:\n"
        "  name: adam\n  max_iterations: 2\n  keep_loss_stack: false\noutput:\n  directory: run\n";
    std::string const data = data_files_[0];
    std::string const data_base = "problem:\n  data:\n    file: " + data +
                                  "\nmodel:\n  tucker_ranks: [3, 4, 2, 3]\n  tt_ranks: [1, 2, 3, 2, 1]\n  init:\n"
                                  "    random: {seed: 1}\noptimizer:\n  name: adam\n  max_iterations: 2\noutput:\n"
                                  "  directory: run\n";
    struct Edit {
      std::string const* text;
      std::string from, to;
    };
    std::string const big = "1000000";
    std::vector<Edit> const edits = {
        {&base, "order: 2", "order: '5'"},
        {&base, "n_probes: 60", "n_probes: \"60\""},
        {&base, "seed: 3", "seed: !!str 3"},
        {&base, "max_iterations: 2", "max_iterations: '2'"},
        {&base, "keep_loss_stack: false", "keep_loss_stack: 'false'"},
        {&base, "tt_ranks: [1, 2, 2, 1]", "tt_ranks: [1, '2', 2, 1]"},
        {&base, "seed: 3\n", "seed: 3\n    noise: '0.1'\n"},
        {&base, "directory: run\n", "directory: run\nchunk_size: '64'\n"},
        {&base, "directory: run\n", "directory: run\nkokkos:\n  threads: '1'\n"},
        {&base, "mode_shapes: [4, 5, 3]\n    tucker_ranks: [2, 2, 2]",
         "mode_shapes: [" + big + ", " + big + ", " + big + "]\n    tucker_ranks: [" + big + ", " + big + ", " + big +
             "]"},
        {&data_base, "tucker_ranks: [3, 4, 2, 3]\n  tt_ranks: [1, 2, 3, 2, 1]",
         "tucker_ranks: [" + big + ", " + big + ", " + big + ", " + big + "]\n  tt_ranks: [1, " + big + ", " + big +
             ", " + big + ", 1]"},
        {&data_base, "file: " + data, "file: \"" + data + "\\0evil\""},
        {&data_base, "file: " + data, "file: " + data + "\n    weights: \"/weights\\0x\""},
    };
    std::vector<Case> out;
    std::size_t n = 0;
    auto next_dir = [&] {
      case_dir_ = work_ / ("hostile" + std::to_string(n++));
      fs::create_directories(case_dir_);
    };
    for (auto const& e : edits) {
      next_dir();
      std::string text = *e.text;
      text.replace(text.find(e.from), e.from.size(), e.to);
      std::string const config = (case_dir_ / "run.yaml").string();
      write_text(config, text);
      out.push_back(
          {"hostile value " + e.to, shell_quoted(opt_.cli) + " fit --quiet " + shell_quoted(config), {config}, true});
    }
    next_dir();
    std::string const config = (case_dir_ / "run.yaml").string();
    write_text(config, base);
    std::string const cli = shell_quoted(opt_.cli);
    for (std::string const& command :
         {cli + " demo --probes 10 --seed -1", cli + " demo --probes 10 --seed ''",
          cli + " fit --quiet --stop-after -1 " + shell_quoted(config),
          cli + " estimate-chunk --mode-shapes 16 2 8 18446744073709551615 --tucker-ranks 8 2 2 8 "
                "--tt-ranks 1 1 3 64 1 --order 8 --n-probes 64",
          cli + " fit --quiet " + shell_quoted(config) + " --kokkos-threads=+4",
          cli + " fit --quiet " + shell_quoted(config) + " --kokkos-ndevices=-5",
          cli + " fit --quiet " + shell_quoted(config) + " --kokkos-ndevices=abc"}) {
      out.push_back({"hostile flag " + command.substr(cli.size() + 1), command, {config}, true});
    }
    return out;
  }

  /// Empty when the outcome is acceptable.
  std::string judge(Outcome const& o, std::vector<std::string> const& files) const {
    if (o.exit_code == 124 || o.exit_code == 137) return "hang: no exit within " + std::to_string(opt_.timeout) + " s";
    if (o.exit_code > 128) return "crash: killed by signal " + std::to_string(o.exit_code - 128);
    if (o.exit_code != 0 && o.exit_code != 1 && o.exit_code != 2) return "exit code " + std::to_string(o.exit_code);
    if (o.exit_code == 0) return "";
    std::size_t error_lines = 0;
    std::string line;
    for (auto const& l : lines_of(o.output)) {
      if (l.find("error:") != std::string::npos) {
        ++error_lines;
        line = l;
      }
    }
    std::string const code = std::to_string(o.exit_code);
    if (error_lines != 1) return "exit " + code + " with " + std::to_string(error_lines) + " error lines";
    // Exit 1 is acceptable only as the refusal of results that overflowed (finite inputs near the largest double):
    // one line naming the dataset, nothing written.
    if (o.exit_code == 1) {
      bool const overflow =
          line.find("the result /") != std::string::npos && line.find("nothing was written") != std::string::npos;
      return overflow ? "" : "exit 1 other than a refused non-finite result: " + line;
    }
    bool named = line.find("--") != std::string::npos;
    for (auto const& f : files) named = named || line.find(f) != std::string::npos;
    if (!named) return "exit 2 without naming the file, flag or key";
    return "";
  }

  Options opt_;
  std::mt19937_64 gen_;
  fs::path work_, case_dir_;
  std::string fifo_;
  std::vector<std::string> configs_, data_files_;
};

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string const flag = argv[a], value = argv[a + 1];
    if (flag == "--cli")
      opt.cli = value;
    else if (flag == "--examples")
      opt.examples = value;
    else if (flag == "--data")
      opt.data = value;
    else if (flag == "--keep")
      opt.keep = value;
    else if (flag == "--cases")
      opt.cases = std::stoul(value);
    else if (flag == "--seed")
      opt.seed = std::stoull(value);
    else if (flag == "--timeout")
      opt.timeout = std::stoi(value);
    else if (flag == "--jobs")
      opt.jobs = std::stoul(value);
    else {
      std::cerr << "t3k_fuzz_cli: unknown flag " << flag << "\n";
      return 2;
    }
  }
  if (opt.cli.empty() || opt.examples.empty() || opt.data.empty()) {
    std::cerr << "usage: t3k_fuzz_cli --cli PATH --examples DIR --data DIR [--cases N] [--seed S] [--timeout S]\n";
    return 2;
  }
  Fuzzer fuzzer(opt);
  return fuzzer.run_all();
}
