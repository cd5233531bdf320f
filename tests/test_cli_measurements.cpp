// The t3k tool on data files of entries and applies (docs/file-format.md): `t3k fit` of such files and of
// synthetic problems of every kind converges; `t3k predict` writes what the library's entry_derivatives /
// apply_derivatives / probe_derivatives compute, bit for bit; `t3k score` prints the loss evaluate_loss computes;
// problem.order_weights is recorded and changes the fit; and every malformed file is refused with exit 2 and one
// line naming the dataset, writing nothing.
#ifdef T3K_TESTS_HAVE_IO

#include "cli_harness.hpp"
#include "fuzz/h5_mutate.hpp"

#include "t3k/io/fitting_data.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/apply_derivatives.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/optimizers/fitting_problem.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace io = t3k::io;
using t3k::MeasurementKind;
using t3k_test::quoted;
using t3k_test::run_cli;
using t3k_test::RunResult;
using t3k_test::ScratchDirectory;
using Space = Kokkos::DefaultExecutionSpace;
using Problem = t3k::FittingProblem<double, Space::memory_space>;

std::string read_text(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(std::string const& path, std::string const& text) { std::ofstream(path, std::ios::binary) << text; }

/// The number after "<key>: " in YAML text (the first occurrence after `after`).
double yaml_number(std::string const& text, std::string const& key, std::string const& after = "") {
  std::size_t const start = after.empty() ? 0 : text.find(after);
  if (start == std::string::npos) return NAN;
  auto const k = text.find(key + ": ", start);
  if (k == std::string::npos) return NAN;
  return std::strtod(text.c_str() + k + key.size() + 2, nullptr);
}

/// Exit 2, one error line that names `name`, and no output file at `out` (when given).
void expect_refused(RunResult const& r, std::string const& name, std::string const& out = "") {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(name), std::string::npos) << "the message does not name '" << name << "': " << r.output;
  EXPECT_NE(r.output.find("error:"), std::string::npos) << r.output;
  if (!out.empty()) {
    EXPECT_FALSE(std::filesystem::exists(out)) << out;
  }
}

/// A host copy of a planted problem as file data.
io::FittingData data_of(Problem const& p, std::vector<std::size_t> const& shapes) {
  io::FittingData f;
  f.kind = p.kind;
  f.mode_shapes = shapes;
  f.order = p.order;
  for (auto const& w : p.ww) f.probes.w.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, w));
  for (auto const& d : p.pp) f.probes.p.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d));
  if (p.kind == MeasurementKind::entries)
    f.indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.indices);
  for (auto const& t : p.targets) f.targets.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t));
  return f;
}

struct Case {
  std::vector<std::size_t> shapes{6, 5, 7, 4};
  std::vector<std::size_t> tucker{2, 3, 2, 2};
  std::vector<std::size_t> tt{1, 2, 3, 2, 1};
};

/// Writes a planted problem of `kind` (W samples, order K, truth of seed 3) to `path`, with weights when asked,
/// and returns it.
io::FittingData write_planted(std::string const& path, MeasurementKind kind, std::size_t w, std::size_t order,
                              bool weights = false, Case const& c = Case()) {
  Space space;
  auto const truth = t3k::random_t3<double>(space, c.shapes, c.tucker, c.tt, 3);
  auto const p = t3k::make_planted_problem(space, truth, kind, w, order, 0.0, 7);
  auto f = data_of(p, c.shapes);
  if (weights) {
    for (std::size_t s = 0; s < w; ++s) f.weights.push_back(0.5 + double(s % 4));
  }
  io::Writer out(path);
  io::write_fitting_data(out, f);
  out.commit();
  return f;
}

/// A random model of the case's shapes (seed 9), written as /t3.
io::HostT3 write_model(std::string const& path, Case const& c = Case()) {
  Space space;
  auto const x = t3k::random_t3<double>(space, c.shapes, c.tucker, c.tt, 9);
  auto host = t3k::copy_t3_to<Kokkos::HostSpace>(space, x);
  io::Writer out(path);
  out.write_t3(host);
  out.commit();
  return host;
}

std::string fit_config(std::string const& problem, std::string const& directory, std::size_t iterations = 30,
                       std::string const& extra_problem = "") {
  return "problem:\n" + problem + extra_problem +
         "model:\n  tucker_ranks: [2, 3, 2, 2]\n  tt_ranks: [1, 2, 3, 2, 1]\n  init: {random: {seed: 5}}\n"
         "optimizer:\n  name: newton_cg\n  max_iterations: " +
         std::to_string(iterations) + "\n  tol_relative_residual: 1.0e-10\noutput:\n  directory: " + directory + "\n";
}

/// `t3k score` of `model` on `data`: the printed YAML.
std::string score(std::string const& model, std::string const& data, std::string const& extra = "") {
  auto const r = run_cli("score --model " + quoted(model) + " --in " + quoted(data) + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

void fit_of_an_entries_file_converges() {
  ScratchDirectory dir;
  std::string const data = dir.file("entries.h5");
  (void)write_planted(data, MeasurementKind::entries, 500, 1);
  write_text(dir.file("run.yaml"), fit_config("  data:\n    file: " + data + "\n", dir.file("run")));
  auto const r = run_cli("fit " + quoted(dir.file("run.yaml")) + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto const summary = read_text(dir.file("run/summary.yaml"));
  EXPECT_NE(summary.find("kind: entries"), std::string::npos) << summary;
  EXPECT_LT(yaml_number(summary, "relative_residual", "\nfinal:"), 1e-6) << summary;
  // The model scores as the fit reported.
  auto const s = score(dir.file("run/model.h5"), data);
  EXPECT_LT(yaml_number(s, "relative_residual"), 1e-6) << s;
}

void fit_of_a_synthetic_applies_problem_converges() {
  ScratchDirectory dir;
  std::string const problem =
      "  synthetic:\n    kind: applies\n    mode_shapes: [6, 5, 7, 4]\n    tucker_ranks: [2, 3, 2, 2]\n"
      "    tt_ranks: [1, 2, 3, 2, 1]\n    order: 1\n    n_probes: 200\n    seed: 4\n";
  write_text(dir.file("run.yaml"), fit_config(problem, dir.file("run")));
  auto const r = run_cli("fit " + quoted(dir.file("run.yaml")) + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto const summary = read_text(dir.file("run/summary.yaml"));
  EXPECT_NE(summary.find("kind: applies"), std::string::npos) << summary;
  EXPECT_LT(yaml_number(summary, "relative_residual", "\nfinal:"), 1e-6) << summary;
}

/// Flat entries of a host View, for exact comparison.
template <class View>
std::vector<double> flat(View const& v) {
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  std::vector<double> out(h.data(), h.data() + h.size());
  return out;
}

std::vector<double> read_all(std::string const& path, std::string const& dataset) {
  std::vector<std::size_t> shape;
  return io::Reader(path).read_raw(dataset, shape);
}

void predict_equals_the_library_bitwise() {
  ScratchDirectory dir;
  Space space;
  auto const host = write_model(dir.file("model.h5"));
  auto const x = t3k::copy_t3_to<Space::memory_space>(space, host);
  for (auto kind : {MeasurementKind::entries, MeasurementKind::applies, MeasurementKind::probes}) {
    SCOPED_TRACE(to_string(kind));
    std::string const in = dir.file(std::string(to_string(kind)) + ".h5");
    std::string const out = dir.file(std::string(to_string(kind)) + "_predicted.h5");
    auto const f = write_planted(in, kind, 37, 2);
    auto const r =
        run_cli("predict --model " + quoted(dir.file("model.h5")) + " --in " + quoted(in) + " --out " + quoted(out));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto const pp = [&] {
      std::vector<Kokkos::View<double**, Kokkos::LayoutRight, Space::memory_space>> v;
      for (auto const& p : f.probes.p) v.push_back(Kokkos::create_mirror_view_and_copy(Space::memory_space{}, p));
      return v;
    }();
    auto const ww = [&] {
      std::vector<Kokkos::View<double**, Kokkos::LayoutRight, Space::memory_space>> v;
      for (auto const& w : f.probes.w) v.push_back(Kokkos::create_mirror_view_and_copy(Space::memory_space{}, w));
      return v;
    }();
    if (kind == MeasurementKind::probes) {
      auto const z = t3k::probe_derivatives(space, x, ww, pp, 2);
      for (std::size_t i = 0; i < z.size(); ++i) {
        EXPECT_EQ(read_all(out, "/jets/" + std::to_string(i)), flat(z[i])) << "mode " << i;
      }
    } else if (kind == MeasurementKind::entries) {
      auto const idx = Kokkos::create_mirror_view_and_copy(Space::memory_space{}, f.indices);
      EXPECT_EQ(read_all(out, "/entries/values"), flat(t3k::entry_derivatives(space, x, idx, pp, 2)));
      // --order 0: the entries alone.
      std::string const out0 = dir.file("entries_order0.h5");
      ASSERT_EQ(run_cli("predict --model " + quoted(dir.file("model.h5")) + " --in " + quoted(in) + " --out " +
                        quoted(out0) + " --order 0")
                    .exit_code,
                0);
      EXPECT_EQ(read_all(out0, "/entries/values"), flat(t3k::entries(space, x, idx)));
    } else {
      EXPECT_EQ(read_all(out, "/applies/values"), flat(t3k::apply_derivatives(space, x, ww, pp, 2)));
    }
  }
}

void score_equals_evaluate_loss() {
  ScratchDirectory dir;
  Space space;
  auto const host = write_model(dir.file("model.h5"));
  auto const x = t3k::copy_t3_to<Space::memory_space>(space, host);
  for (auto kind : {MeasurementKind::entries, MeasurementKind::applies}) {
    SCOPED_TRACE(to_string(kind));
    std::string const in = dir.file(std::string(to_string(kind)) + ".h5");
    auto const f = write_planted(in, kind, 53, 1, true);
    Problem p;
    p.kind = kind;
    p.order = 1;
    for (auto const& w : f.probes.w) p.ww.push_back(Kokkos::create_mirror_view_and_copy(Space::memory_space{}, w));
    for (auto const& d : f.probes.p) p.pp.push_back(Kokkos::create_mirror_view_and_copy(Space::memory_space{}, d));
    if (kind == MeasurementKind::entries)
      p.indices = Kokkos::create_mirror_view_and_copy(Space::memory_space{}, f.indices);
    p.targets.push_back(Kokkos::create_mirror_view_and_copy(Space::memory_space{}, f.targets[0]));
    Kokkos::View<double*, Space::memory_space> c("weights", f.weights.size());
    auto const ch = Kokkos::create_mirror_view(c);
    for (std::size_t s = 0; s < f.weights.size(); ++s) ch(s) = f.weights[s];
    Kokkos::deep_copy(c, ch);
    p.weights = c;
    double const loss = t3k::evaluate_loss(space, p, x).loss;
    double const zero = t3k::zero_model_loss(space, p);
    auto const s = score(dir.file("model.h5"), in, " --weights /weights");
    EXPECT_NE(s.find(std::string("kind: ") + to_string(kind)), std::string::npos) << s;
    EXPECT_EQ(yaml_number(s, "W"), 53.0) << s;
    EXPECT_EQ(yaml_number(s, "K"), 1.0) << s;
    // Printed with 17 significant digits: the same doubles.
    EXPECT_EQ(yaml_number(s, "loss"), loss) << s;
    EXPECT_EQ(yaml_number(s, "zero_loss"), zero) << s;
    EXPECT_DOUBLE_EQ(yaml_number(s, "relative_residual"), std::sqrt(loss / zero)) << s;
    // Without --weights the weights are not used.
    EXPECT_NE(yaml_number(score(dir.file("model.h5"), in), "loss"), loss);
  }
}

void order_weights_are_recorded_and_change_the_fit() {
  ScratchDirectory dir;
  std::string const problem =
      "  synthetic:\n    kind: entries\n    mode_shapes: [6, 5, 7, 4]\n    tucker_ranks: [2, 3, 2, 2]\n"
      "    tt_ranks: [1, 2, 3, 2, 1]\n    order: 1\n    n_probes: 300\n    noise: 0.1\n    seed: 4\n";
  write_text(dir.file("plain.yaml"), fit_config(problem, dir.file("plain"), 3));
  write_text(dir.file("weighted.yaml"), fit_config(problem, dir.file("weighted"), 3, "  order_weights: [1, 0.25]\n"));
  ASSERT_EQ(run_cli("fit " + quoted(dir.file("plain.yaml")) + " --quiet").exit_code, 0);
  auto const r = run_cli("fit " + quoted(dir.file("weighted.yaml")) + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto const plain = read_text(dir.file("plain/summary.yaml"));
  auto const weighted = read_text(dir.file("weighted/summary.yaml"));
  EXPECT_NE(plain.find("order_weights: [1, 1]"), std::string::npos) << plain;
  EXPECT_NE(weighted.find("order_weights: [1, 0.25]"), std::string::npos) << weighted;
  EXPECT_NE(read_all(dir.file("plain/model.h5"), "/t3/tt_cores/1"),
            read_all(dir.file("weighted/model.h5"), "/t3/tt_cores/1"));
  // K + 1 entries, finite, >= 0, one > 0.
  for (auto const& bad : {"[1]", "[0, 0]", "[1, -1]", "[1, .nan]", "3"}) {
    write_text(dir.file("bad.yaml"),
               fit_config(problem, dir.file("bad"), 3, std::string("  order_weights: ") + bad + "\n"));
    expect_refused(run_cli("fit " + quoted(dir.file("bad.yaml")) + " --quiet"), "problem.order_weights");
  }
}

void narrow_unsigned_and_duplicated_indices_are_accepted() {
  ScratchDirectory dir;
  std::string const in = dir.file("entries.h5");
  (void)write_planted(in, MeasurementKind::entries, 40, 0);
  write_model(dir.file("model.h5"));
  double const before = yaml_number(score(dir.file("model.h5"), in), "loss");
  for (hid_t type : {H5T_STD_U8LE, H5T_STD_I16BE, H5T_STD_I32LE, H5T_STD_U64LE}) {
    t3k_test::h5::retype(in, "/entries/indices", type);
    EXPECT_EQ(yaml_number(score(dir.file("model.h5"), in), "loss"), before);
  }
  // Row 1 repeats row 0's multi-index (with its own value): allowed.
  std::vector<double> idx;
  {
    std::vector<hsize_t> dims;
    t3k_test::h5::File f(in);
    idx = t3k_test::h5::read(f.id(), "/entries/indices", dims);
  }
  for (std::size_t i = 0; i < 4; ++i) t3k_test::h5::set_entry(in, "/entries/indices", 4 + i, idx[i]);
  EXPECT_EQ(run_cli("score --model " + quoted(dir.file("model.h5")) + " --in " + quoted(in)).exit_code, 0);
}

/// One malformed file: what to do to a fresh planted file, and what the message must name.
struct Hostile {
  char const* label;
  MeasurementKind kind;
  std::size_t order;
  void (*mutate)(std::string const& path);
  char const* names;
  bool predict_refuses;  ///< predict reads no values: only the shape of /<kind>/values
};

void bad_files_are_refused_naming_the_dataset() {
  using namespace t3k_test::h5;
  static Hostile const cases[] = {
      {"index past N_i", MeasurementKind::entries, 0,
       [](std::string const& p) { set_entry(p, "/entries/indices", 4 * 17 + 2, 7); },
       "/entries/indices[17, 2] = 7 is out of range for mode 2 of size 7", true},
      {"negative index", MeasurementKind::entries, 0,
       [](std::string const& p) { set_entry(p, "/entries/indices", 5, -1); },
       "/entries/indices[1, 1] = -1 is out of range for mode 1 of size 5", true},
      {"float indices", MeasurementKind::entries, 0,
       [](std::string const& p) { retype(p, "/entries/indices", H5T_IEEE_F64LE); }, "/entries/indices", true},
      {"indices of d - 1 columns", MeasurementKind::entries, 0,
       [](std::string const& p) {
         File f(p);
         std::vector<hsize_t> dims;
         auto const data = read(f.id(), "/entries/indices", dims);
         recreate(f.id(), "/entries/indices", H5T_STD_I64LE, {dims[0], dims[1] - 1},
                  std::vector<double>(data.begin(), data.begin() + dims[0] * (dims[1] - 1)));
       },
       "/entries/indices has shape [40 x 3], expected [W x 4]", true},
      {"no mode_shapes", MeasurementKind::entries, 0,
       [](std::string const& p) {
         File f(p);
         H5Adelete_by_name(f.id(), "/entries", "mode_shapes", H5P_DEFAULT);
       },
       "attribute 'mode_shapes' of /entries is missing", true},
      {"no values", MeasurementKind::entries, 0, [](std::string const& p) { remove(p, "/entries/values"); },
       "/entries/values", false},
      {"values of W + 1 rows", MeasurementKind::entries, 0,
       [](std::string const& p) {
         redeclare(p, "/entries/values", {41, 1});
       },
       "/entries/values has shape [41 x 1], expected [40]", true},
      {"NaN value", MeasurementKind::entries, 0, [](std::string const& p) { set_entry(p, "/entries/values", 3, NAN); },
       "/entries/values[3, 0] is NaN", false},
      {"no directions at K = 1", MeasurementKind::entries, 1,
       [](std::string const& p) {
         for (int i = 0; i < 4; ++i) remove(p, "/entries/p/" + std::to_string(i));
         remove(p, "/entries/p");
       },
       "/entries/p", true},
      {"entries and probes", MeasurementKind::entries, 0,
       [](std::string const& p) {
         recreate(File(p).id(), "/probes/w/0", H5T_IEEE_F64LE, {40, 6}, {});
       },
       "/entries and /probes", true},
      {"none of the groups", MeasurementKind::applies, 0,
       [](std::string const& p) {
         File f(p);
         H5Ldelete(f.id(), "/applies", H5P_DEFAULT);
       },
       "none of /entries, /applies, /probes", true},
      {"applies without directions at K = 2", MeasurementKind::applies, 2,
       [](std::string const& p) {
         File f(p);
         H5Ldelete(f.id(), "/applies/p", H5P_DEFAULT);
       },
       "/applies/p", true},
      {"applies vectors of W - 1 rows", MeasurementKind::applies, 0,
       [](std::string const& p) {
         redeclare(p, "/applies/w/2", {39, 7});
       },
       "/applies/w/2 has shape [39 x 7], expected [40 x N_2]", true},
      {"applies NaN vector", MeasurementKind::applies, 0,
       [](std::string const& p) { set_entry(p, "/applies/w/1", 6, INFINITY); }, "/applies/w/1[1, 1] is +Inf", true},
  };
  ScratchDirectory dir;
  write_model(dir.file("model.h5"));
  for (auto const& c : cases) {
    SCOPED_TRACE(c.label);
    std::string const in = dir.file("bad.h5"), out = dir.file("predicted.h5");
    std::filesystem::remove(in);
    (void)write_planted(in, c.kind, 40, c.order);
    c.mutate(in);
    expect_refused(run_cli("score --model " + quoted(dir.file("model.h5")) + " --in " + quoted(in)), c.names);
    write_text(dir.file("run.yaml"), fit_config("  data:\n    file: " + in + "\n", dir.file("run"), 2));
    expect_refused(run_cli("fit " + quoted(dir.file("run.yaml")) + " --quiet"), c.names);
    EXPECT_FALSE(std::filesystem::exists(dir.file("run/model.h5")));
    auto const r =
        run_cli("predict --model " + quoted(dir.file("model.h5")) + " --in " + quoted(in) + " --out " + quoted(out));
    if (c.predict_refuses) {
      expect_refused(r, c.names, out);
    } else {
      EXPECT_EQ(r.exit_code, 0) << r.output;
      std::filesystem::remove(out);
    }
  }
  // A model of other mode shapes.
  std::string const in = dir.file("entries.h5");
  (void)write_planted(in, MeasurementKind::entries, 40, 0);
  Case other;
  other.shapes = {6, 5, 7, 5};
  write_model(dir.file("other.h5"), other);
  expect_refused(run_cli("score --model " + quoted(dir.file("other.h5")) + " --in " + quoted(in)),
                 "mode shapes [6 x 5 x 7 x 4]");
  // --order 1 on a file of values without directions.
  expect_refused(run_cli("predict --model " + quoted(dir.file("model.h5")) + " --in " + quoted(in) + " --out " +
                         quoted(dir.file("p.h5")) + " --order 1"),
                 "/entries/p", dir.file("p.h5"));
  // A synthetic entries problem asks no more entries than the tensor has.
  write_text(
      dir.file("many.yaml"),
      fit_config("  synthetic:\n    kind: entries\n    mode_shapes: [2, 2, 2, 2]\n    tucker_ranks: [1, 1, 1, 1]\n"
                 "    tt_ranks: [1, 1, 1, 1, 1]\n    n_probes: 17\n",
                 dir.file("many"), 2));
  expect_refused(run_cli("fit " + quoted(dir.file("many.yaml")) + " --quiet"), "problem.synthetic.n_probes");
  write_text(dir.file("kind.yaml"),
             fit_config("  synthetic:\n    kind: entry\n    mode_shapes: [2, 2]\n    tucker_ranks: [1, 1]\n"
                        "    tt_ranks: [1, 1, 1]\n    n_probes: 3\n",
                        dir.file("kind"), 2));
  expect_refused(run_cli("fit " + quoted(dir.file("kind.yaml")) + " --quiet"), "problem.synthetic.kind");
}

}  // namespace

TEST(CliMeasurements, FitOfAnEntriesFileConverges) { fit_of_an_entries_file_converges(); }
TEST(CliMeasurements, FitOfASyntheticAppliesProblemConverges) { fit_of_a_synthetic_applies_problem_converges(); }
TEST(CliMeasurements, PredictEqualsTheLibraryBitwise) { predict_equals_the_library_bitwise(); }
TEST(CliMeasurements, ScoreEqualsEvaluateLoss) { score_equals_evaluate_loss(); }
TEST(CliMeasurements, OrderWeightsAreRecordedAndChangeTheFit) { order_weights_are_recorded_and_change_the_fit(); }
TEST(CliMeasurements, NarrowUnsignedAndDuplicatedIndicesAreAccepted) {
  narrow_unsigned_and_duplicated_indices_are_accepted();
}
TEST(CliMeasurements, BadFilesAreRefusedNamingTheDataset) { bad_files_are_refused_naming_the_dataset(); }

#endif  // T3K_TESTS_HAVE_IO
