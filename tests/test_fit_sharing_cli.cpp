// `t3k fit` with model.sharing: the shared model is fitted, reported (summary.yaml) and stored (model.h5) with its
// sharing, a model file carries its sharing into the next fit, and every bad sharing is one line naming the key.
#include <gtest/gtest.h>

// Only where the CLI and its HDF5 layer are built.
#ifdef T3K_TESTS_HAVE_IO

#include "cli_harness.hpp"

#include "t3k/io/hdf5_io.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace t3k_test;

void write_file(std::string const& path, std::string const& text) { std::ofstream(path, std::ios::binary) << text; }

std::string read_file(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A planted problem with modes of sizes 6, 6, 6, 4 (K = 1) and `model` as the model section's body.
std::string config(std::string const& directory, std::string const& model, std::string const& ranks = "[3, 3, 3, 2]") {
  return "problem:\n"
         "  synthetic:\n"
         "    mode_shapes: [6, 6, 6, 4]\n"
         "    tucker_ranks: " +
         ranks +
         "\n"
         "    tt_ranks: [1, 3, 3, 2, 1]\n"
         "    order: 1\n"
         "    n_probes: 150\n"
         "    seed: 3\n"
         "model:\n" +
         model +
         "optimizer:\n"
         "  name: newton_cg\n"
         "  max_iterations: 4\n"
         "output:\n"
         "  directory: " +
         directory +
         "\n"
         "kokkos:\n"
         "  threads: 2\n";
}

// The Tucker cores of a model.h5, flat.
std::vector<std::vector<double>> tucker_cores(std::string const& path) {
  auto const x = t3k::io::Reader(path).read_t3();
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    auto const& u = x.tucker_core(i);
    out.emplace_back(u.data(), u.data() + u.span());
  }
  return out;
}

TEST(FitSharingCli, ASharedFitIsReportedStoredAndCarriedOn) {
  ScratchDirectory dir;
  write_file(dir.file("shared.yaml"), config(dir.file("run"),
                                             "  sharing: [0, 0, 0, 1]\n  tucker_ranks: [3, 3, 3, 2]\n"
                                             "  tt_ranks: [1, 3, 3, 2, 1]\n  init: {random: {seed: 4}}\n"));
  auto const r = run_cli("fit " + quoted(dir.file("shared.yaml")) + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto const summary = read_file(dir.file("run/summary.yaml"));
  EXPECT_NE(summary.find("sharing: [0, 0, 0, 1]"), std::string::npos) << summary;
  // One factor of 6 x 3 for modes 0-2 where the untied model has three: 2 x (6 x 3 - 3 x 3) fewer dimensions.
  write_file(dir.file("untied.yaml"), config(dir.file("untied"),
                                             "  tucker_ranks: [3, 3, 3, 2]\n"
                                             "  tt_ranks: [1, 3, 3, 2, 1]\n"
                                             "  init: {random: {seed: 4}}\n"));
  auto const u = run_cli("fit " + quoted(dir.file("untied.yaml")) + " --quiet");
  ASSERT_EQ(u.exit_code, 0) << u.output;
  auto dimension = [](std::string const& text) {
    auto const at = text.find("manifold_dimension: ");
    return at == std::string::npos ? -1L : std::stol(text.substr(at + 20));
  };
  EXPECT_EQ(dimension(read_file(dir.file("untied/summary.yaml"))) - dimension(summary), 2 * (6 * 3 - 3 * 3));

  auto const cores = tucker_cores(dir.file("run/model.h5"));
  EXPECT_EQ(cores[0], cores[1]);
  EXPECT_EQ(cores[0], cores[2]);
  auto const stored = t3k::io::Reader(dir.file("run/model.h5")).read_integer_list_attribute("/t3", "sharing");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(*stored, (std::vector<std::int64_t>{0, 0, 0, 1}));
  EXPECT_FALSE(t3k::io::Reader(dir.file("untied/model.h5")).read_integer_list_attribute("/t3", "sharing").has_value());

  // The model file as a start, without model.sharing: the fit goes on shared.
  write_file(dir.file("again.yaml"), config(dir.file("again"), "  init: {file: " + dir.file("run/model.h5") + "}\n"));
  auto const a = run_cli("fit " + quoted(dir.file("again.yaml")) + " --quiet");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_NE(read_file(dir.file("again/summary.yaml")).find("sharing: [0, 0, 0, 1]"), std::string::npos);
  auto const again = tucker_cores(dir.file("again/model.h5"));
  EXPECT_EQ(again[0], again[2]);
}

TEST(FitSharingCli, ARankContinuationGrowsTheSharedFactorAsOneEdge) {
  ScratchDirectory dir;
  std::string const model =
      "  sharing: [0, 0, 0, 1]\n  tucker_ranks: {start: 1, max: [3, 3, 3, 2]}\n  tt_ranks: {start: 1, max: 3}\n"
      "  init: {random: {seed: 4}}\n"
      "  continuation: {rule: edge_conditioning, stage_iterations: 15}\n";
  auto text = config(dir.file("run"), model);
  text.replace(text.find("max_iterations: 4"), 17, "max_iterations: 100");
  write_file(dir.file("grow.yaml"), text);
  auto const r = run_cli("fit " + quoted(dir.file("grow.yaml")) + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto const summary = read_file(dir.file("run/summary.yaml"));
  EXPECT_NE(summary.find("sharing: [0, 0, 0, 1]"), std::string::npos) << summary;
  // The group is one edge of the growth rule, named with its modes; its modes keep one rank.
  EXPECT_NE(summary.find("Tucker modes 0,1,2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("rank_steps: ["), std::string::npos) << summary;
  // The planted tensor of a synthetic problem has untied factors: the shared model grows to its maximum ranks.
  EXPECT_NE(summary.find("  tucker_ranks: [3, 3, 3, 2]\n  tt_ranks: [1, 3, 3, 2, 1]\n  sharing: [0, 0, 0, 1]"),
            std::string::npos)
      << summary;
  auto const cores = tucker_cores(dir.file("run/model.h5"));
  EXPECT_EQ(cores[0], cores[1]);
  EXPECT_EQ(cores[0], cores[2]);
}

TEST(FitSharingCli, BadSharingsAreOneLineNamingTheKey) {
  ScratchDirectory dir;
  struct Case {
    std::string model, ranks, expected;
  };
  std::string const fixed = "  tucker_ranks: [3, 3, 3, 2]\n  tt_ranks: [1, 3, 3, 2, 1]\n  init: {random: {seed: 4}}\n";
  std::vector<Case> const cases{
      {"  sharing: [0, 0, 1]\n" + fixed, "[3, 3, 3, 2]", "has 3 labels but the model has d = 4 modes"},
      {"  sharing: [0, 0, 0, 0]\n" + fixed, "[3, 3, 3, 2]", "modes 0 and 3 share a factor but have sizes 6 and 4"},
      {"  sharing: [0, 1, 0, 1]\n" + fixed, "[3, 3, 3, 2]", "modes 1 and 3 share a factor but have sizes 6 and 4"},
      {"  sharing: [0, 0, 0, 1]\n  init: {truth_perturbation: 0.1}\n", "[3, 2, 3, 2]",
       "modes 0 and 1 share a factor but have Tucker ranks 3 and 2 (problem.synthetic.tucker_ranks)"},
      {"  sharing: 7\n" + fixed, "[3, 3, 3, 2]", "must be a list of labels"},
      {"  sharing: [0, -1, 0, 1]\n" + fixed, "[3, 3, 3, 2]", "model.sharing[1]"},
      {"  sharing: [0, 0, 0, 1]\n  tucker_ranks: {start: 1, max: [3, 3, 2, 2]}\n  tt_ranks: {start: 1, max: 3}\n"
       "  init: {random: {seed: 4}}\n",
       "[3, 3, 3, 2]", "modes 0 and 2 share a factor but have Tucker ranks 3 and 2 (model.tucker_ranks.max)"},
      {"  sharing: [0, 0, 0, 1]\n  tucker_ranks: {start: [1, 2, 1, 1], max: 3}\n  tt_ranks: {start: 1, max: 3}\n"
       "  init: {random: {seed: 4}}\n",
       "[3, 3, 3, 2]", "modes 0 and 1 share a factor but have Tucker ranks 1 and 2 (model.tucker_ranks.start)"},
  };
  for (auto const& c : cases) {
    SCOPED_TRACE(c.model);
    write_file(dir.file("bad.yaml"), config(dir.file("bad"), c.model, c.ranks));
    auto const r = run_cli("fit " + quoted(dir.file("bad.yaml")) + " --quiet");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("model.sharing"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("bad"))) << "no output directory for a refused configuration";
  }
}

}  // namespace

#endif
