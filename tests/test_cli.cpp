// The command-line tool t3k (docs/file-format.md), run as a child process: the reference cases reproduced to 1e-12
// relative, exit code 2 with a message naming the dataset, file or flag for bad input, and atomic outputs.
#ifdef T3K_TESTS_HAVE_IO

#include "cli_harness.hpp"
#include "hdf5_attributes.hpp"
#include "orthogonality.hpp"
#include "reference.hpp"
#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/impl/host/host_blas.hpp"
#include "t3k/io/hdf5_io.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace {

namespace io = t3k::io;
namespace fs = std::filesystem;

std::string const reference_cases[] = {"case1_ragged.h5", "case3_symmetric.h5"};

using t3k_test::core_orthogonality_residual;
using t3k_test::quoted;
using t3k_test::row_orthogonality_residual;
using t3k_test::run_cli;
using t3k_test::RunResult;
using t3k_test::testdata;

/// A scratch directory named after this test program.
struct ScratchDirectory : t3k_test::ScratchDirectory {
  ScratchDirectory() : t3k_test::ScratchDirectory("t3k_test_cli") {}
};

/// Runs the CLI and expects success.
void run_ok(std::string const& arguments) {
  auto const r = run_cli(arguments);
  ASSERT_EQ(r.exit_code, 0) << "t3k " << arguments << "\n" << r.output;
}

/// max |a - b| / max |b| over all arrays.
template <class View>
double relative_error(std::vector<View> const& a, std::vector<View> const& b) {
  double diff = 0, scale = 0;
  EXPECT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    EXPECT_EQ(t3k::impl::view_shape(a[i]), t3k::impl::view_shape(b[i])) << "array " << i;
    if (a[i].size() != b[i].size()) return INFINITY;
    for (std::size_t e = 0; e < a[i].size(); ++e) {
      diff = std::max(diff, std::abs(a[i].data()[e] - b[i].data()[e]));
      scale = std::max(scale, std::abs(b[i].data()[e]));
    }
  }
  return scale > 0 ? diff / scale : diff;
}

template <class View>
bool bitwise_equal(std::vector<View> const& a, std::vector<View> const& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() || !std::equal(a[i].data(), a[i].data() + a[i].size(), b[i].data())) {
      return false;
    }
  }
  return true;
}

std::string file_bytes(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// The reference results agree with the reference implementation to ~1e-15; 1e-12 leaves room for summation order.
constexpr double tolerance = 1e-12;

// ------------------------------------------------------------------------------------------------------- commands

void version_mentions_kokkos() {
  auto const r = run_cli("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Kokkos"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("t3k"), std::string::npos) << r.output;
}

/// `t3k --version` names the host BLAS and the OpenBLAS core the child's environment chose, and warns (with the
/// OPENBLAS_CORETYPE to set) exactly where OpenBLAS chose its fallback kernels on a CPU that runs faster ones.
void version_names_the_blas_core() {
  auto const own =
      t3k_test::run_shell("env -u OPENBLAS_CORETYPE OMP_PROC_BIND=false " + quoted(T3K_CLI_PATH) + " --version");
  ASSERT_EQ(own.exit_code, 0) << own.output;
  ASSERT_NE(own.output.find("\nhost BLAS: "), std::string::npos) << own.output;
  // OPENBLAS_CORETYPE chooses among the x86-64 kernels of a DYNAMIC_ARCH OpenBLAS.
  if (own.output.find("DYNAMIC_ARCH") == std::string::npos || !t3k::host_cpu_vector_features().avx2_fma)
    GTEST_SKIP() << "the tool's BLAS is not an x86-64 DYNAMIC_ARCH OpenBLAS:\n" << own.output;
  std::string const marker = "; core ";
  std::size_t const at = own.output.find(marker);
  ASSERT_NE(at, std::string::npos) << own.output;
  std::size_t const first = at + marker.size();
  std::string const core = own.output.substr(first, own.output.find('\n', first) - first);
  std::string const advice = t3k::openblas_core_advice(core, t3k::host_cpu_vector_features());
  if (advice.empty()) {
    EXPECT_EQ(own.output.find("warning: OpenBLAS"), std::string::npos) << own.output;
  } else {
    EXPECT_NE(own.output.find("warning: OpenBLAS does not know this CPU"), std::string::npos) << own.output;
    EXPECT_NE(own.output.find("OPENBLAS_CORETYPE=" + advice), std::string::npos) << own.output;
  }

  auto const chosen =
      t3k_test::run_shell("OPENBLAS_CORETYPE=Prescott OMP_PROC_BIND=false " + quoted(T3K_CLI_PATH) + " --version");
  EXPECT_EQ(chosen.exit_code, 0) << chosen.output;
  EXPECT_NE(chosen.output.find("; core Prescott\n"), std::string::npos) << chosen.output;
  EXPECT_EQ(chosen.output.find("warning: OpenBLAS"), std::string::npos) << "the user chose the core\n" << chosen.output;
}

/// `t3k` with OMP_WAIT_POLICY and GOMP_SPINCOUNT unset, then `assignments` (NAME=VALUE ...) set.
RunResult run_cli_with_policy(std::string const& assignments, std::string const& arguments) {
  return t3k_test::run_shell("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_PROC_BIND=false " + assignments + " " +
                             quoted(T3K_CLI_PATH) + " " + arguments);
}

/// --version reads the policy from the environment the process image started with (/proc/self/environ), which
/// only executing the program again with the variable set can change: setenv in main would not show there.
void version_reports_the_default_wait_policy() {
  auto const r = run_cli_with_policy("", "--version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\nOpenMP waiting: OMP_WAIT_POLICY=passive (t3k's default)\n"), std::string::npos)
      << r.output;
}

void users_wait_policy_is_kept() {
  auto const active = run_cli_with_policy("OMP_WAIT_POLICY=active", "--version");
  ASSERT_EQ(active.exit_code, 0) << active.output;
  EXPECT_NE(active.output.find("\nOpenMP waiting: OMP_WAIT_POLICY=active (from the environment)\n"), std::string::npos)
      << active.output;
  auto const spin = run_cli_with_policy("GOMP_SPINCOUNT=300000", "--version");
  ASSERT_EQ(spin.exit_code, 0) << spin.output;
  EXPECT_NE(spin.output.find("\nOpenMP waiting: GOMP_SPINCOUNT=300000 (from the environment)\n"), std::string::npos)
      << spin.output;
}

/// The program executed again gets the arguments as given (spaces, an empty one) and its exit code is the tool's.
void reexecution_keeps_arguments_and_exit_codes() {
  auto const ok = run_cli_with_policy("",
                                      "estimate-chunk --mode-shapes 4,5 --tucker-ranks 2,2 --tt-ranks 1,2,1 "
                                      "--order 1 --n-probes 100");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("chunk_size: "), std::string::npos) << ok.output;
  auto const bad = run_cli_with_policy("", "frame --in 'no such file.h5' --out ''");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("no such file.h5"), std::string::npos) << bad.output;
}

void demo_passes_its_checks() {
  auto const r = run_cli("demo --probes 64");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("demo OK"), std::string::npos) << r.output;
}

void jets_reproduce_reference() {
  for (auto const& name : reference_cases) {
    ScratchDirectory dir;
    std::string const out = dir.file("jets.h5");
    run_ok("jets --in " + quoted(testdata(name)) + " --out " + quoted(out));
    io::Reader ref(testdata(name));
    io::Reader got(out);
    EXPECT_LE(relative_error(got.read_jets("/jets"), ref.read_jets("/jets")), tolerance) << name;
    auto const attributes = got.read_root_attributes();
    EXPECT_EQ(attributes.d, ref.read_root_attributes().d) << name;
    EXPECT_EQ(attributes.w, ref.read_root_attributes().w) << name;
    EXPECT_EQ(dir.n_entries(), 1u) << name << ": a temporary file was left behind";
  }
}

void jets_honour_the_order_flag() {
  ScratchDirectory dir;
  std::string const out = dir.file("jets.h5");
  run_ok("jets --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(out) + " --order 1");
  io::Reader ref(testdata("case1_ragged.h5"));
  auto const full = ref.read_jets("/jets");
  io::Reader got(out);
  auto const jets = got.read_jets("/jets");
  ASSERT_EQ(jets.size(), full.size());
  std::vector<io::Array3> truncated;
  for (auto const& z : full) {
    io::Array3 t("truncated", z.extent(0), 2, z.extent(2));
    Kokkos::deep_copy(t, Kokkos::subview(z, Kokkos::ALL, std::make_pair(0, 2), Kokkos::ALL));
    truncated.push_back(t);
  }
  EXPECT_LE(relative_error(jets, truncated), tolerance);
}

// ------------------------------------------------------------------------------------------------------- bad input

/// A copy of case 1 with only /t3 (and, with `bad_probes`, probes whose /probes/w/2 has 5 columns instead of 6).
void write_input_without_probes(std::string const& path, bool bad_probes) {
  io::Reader ref(testdata("case1_ragged.h5"));
  auto const x = ref.read_t3();
  io::Writer out(path);
  out.write_t3(x);
  if (bad_probes) {
    auto probes = ref.read_probes(x.mode_shapes());
    probes.w[2] = io::Matrix("w2", probes.n_probes(), 5);
    out.write_probes(probes);
  }
  out.commit();
}

void missing_probes_exit_2_naming_dataset() {
  ScratchDirectory dir;
  write_input_without_probes(dir.file("in.h5"), false);
  auto const r = run_cli("jets --in " + quoted(dir.file("in.h5")) + " --out " + quoted(dir.file("out.h5")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/probes"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("out.h5")));
  EXPECT_EQ(dir.n_entries(), 1u) << "a temporary file was left behind";
}

void wrong_shape_exit_2_naming_dataset() {
  ScratchDirectory dir;
  write_input_without_probes(dir.file("in.h5"), true);
  auto const r = run_cli("jets --in " + quoted(dir.file("in.h5")) + " --out " + quoted(dir.file("out.h5")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/probes/w/2 has shape [6 x 5], expected [6 x 6]"), std::string::npos) << r.output;
}

void nonexistent_input_exit_2_naming_file() {
  ScratchDirectory dir;
  std::string const missing = dir.file("no_such_input.h5");
  auto const r = run_cli("jets --in " + quoted(missing) + " --out " + quoted(dir.file("out.h5")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(missing), std::string::npos) << r.output;
}

void bad_flags_exit_2_naming_flag() {
  ScratchDirectory dir;
  std::string const io_flags = " --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(dir.file("o.h5"));
  auto const negative = run_cli("jets" + io_flags + " --order -1");
  EXPECT_EQ(negative.exit_code, 2) << negative.output;
  EXPECT_NE(negative.output.find("--order"), std::string::npos) << negative.output;
  auto const unknown = run_cli("jets" + io_flags + " --no-such-flag");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("--no-such-flag"), std::string::npos) << unknown.output;
  auto const no_out = run_cli("jets --in " + quoted(testdata("case1_ragged.h5")));
  EXPECT_EQ(no_out.exit_code, 2) << no_out.output;
  EXPECT_NE(no_out.output.find("--out"), std::string::npos) << no_out.output;
  auto const no_command = run_cli("");
  EXPECT_EQ(no_command.exit_code, 2) << no_command.output;
  EXPECT_EQ(dir.n_entries(), 0u);
}

void failed_run_leaves_existing_output_unchanged() {
  ScratchDirectory dir;
  std::string const out = dir.file("out.h5");
  run_ok("jets --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(out));
  std::string const before = file_bytes(out);
  write_input_without_probes(dir.file("in.h5"), true);
  auto const r = run_cli("jets --in " + quoted(dir.file("in.h5")) + " --out " + quoted(out));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(file_bytes(out), before);
  EXPECT_EQ(dir.n_entries(), 2u) << "a temporary file was left behind";
}

// ------------------------------------------------------------------------------------------------------- frame, J, J^T

/// The frame of the stored T3 is orthogonal (docs/math.md) and has the reference frame's shapes.
void frame_is_orthogonal_with_reference_shapes() {
  for (auto const& name : reference_cases) {
    ScratchDirectory dir;
    std::string const out = dir.file("frame.h5");
    run_ok("frame --in " + quoted(testdata(name)) + " --out " + quoted(out));
    io::Reader ref(testdata(name));
    io::Reader got(out);
    auto const expected = ref.read_frame();
    auto const frame = got.read_frame();
    EXPECT_EQ(frame.up_ranks(), expected.up_ranks()) << name;
    EXPECT_EQ(frame.outer_ranks(), expected.outer_ranks()) << name;
    EXPECT_EQ(frame.left_ranks(), expected.left_ranks()) << name;
    EXPECT_EQ(frame.right_ranks(), expected.right_ranks()) << name;
    std::size_t const d = frame.n_modes();
    double const orthogonality = 1e-13;  // a few hundred epsilon
    for (std::size_t i = 0; i < d; ++i) {
      EXPECT_LE(row_orthogonality_residual(frame.up_tucker(i)), orthogonality) << name << " U_" << i;
      if (i + 1 < d) {
        EXPECT_LE(core_orthogonality_residual(frame.left_tt(i), 2), orthogonality) << name << " L_" << i;
      }
      if (i >= 1) {
        EXPECT_LE(core_orthogonality_residual(frame.right_tt(i), 0), orthogonality) << name << " R_" << i;
      }
      EXPECT_LE(core_orthogonality_residual(frame.outer_tt(i), 1), orthogonality) << name << " O_" << i;
    }
  }
}

/// The dense tensor of a frame's Tucker factors with the left- or right-orthogonal TT cores (either chain holds X:
/// the last left core and the first right core carry its norm), by brute-force sums.
std::vector<double> dense_of_frame(io::HostFrame const& frame, bool left) {
  t3k_test::HostT3 x;
  x.shapes = frame.mode_shapes();
  x.n = frame.up_ranks();
  x.r = left ? frame.left_ranks() : frame.right_ranks();
  for (std::size_t i = 0; i < frame.n_modes(); ++i) {
    auto const& u = frame.up_tucker(i);
    auto const& g = left ? frame.left_tt(i) : frame.right_tt(i);
    x.u.emplace_back(u.data(), u.data() + u.size());
    x.g.emplace_back(g.data(), g.data() + g.size());
  }
  return t3k_test::dense_tensor(x);
}

/// The frame the tool writes holds the reference file's tensor /dense/x (computed there from the reference T3, not
/// by this library): U with the left cores and U with the right cores both reconstruct it. The orthogonalizing QR
/// sweeps round at a few epsilon of ||X|| per core; 1e-12 of max |X| leaves room for that and the contraction.
void frame_reconstructs_reference_dense_tensor() {
  for (auto const& name : reference_cases) {
    ScratchDirectory dir;
    std::string const out = dir.file("frame.h5");
    run_ok("frame --in " + quoted(testdata(name)) + " --out " + quoted(out));
    std::vector<std::size_t> shape;
    auto const expected = io::Reader(testdata(name)).read_raw("/dense/x", shape);
    auto const frame = io::Reader(out).read_frame();
    ASSERT_EQ(frame.mode_shapes(), shape) << name;
    double scale = 0;
    for (double e : expected) scale = std::max(scale, std::abs(e));
    ASSERT_GT(scale, 0) << name;
    for (bool const left : {true, false}) {
      auto const dense = dense_of_frame(frame, left);
      ASSERT_EQ(dense.size(), expected.size()) << name;
      double diff = 0;
      for (std::size_t e = 0; e < dense.size(); ++e) diff = std::max(diff, std::abs(dense[e] - expected[e]));
      EXPECT_LE(diff, tolerance * scale) << name << (left ? ": U with L_0..L_{d-1}" : ": U with R_0..R_{d-1}");
    }
  }
}

/// The root attributes of the tool's outputs, read with the HDF5 C API: int64 scalars d, W and K (K that of the
/// jets written, so that of --order where given) on jets, jv and jtr outputs; d alone on a frame. The expected
/// values come from the input's dataset shapes and the reference's jets, not from its attributes.
void outputs_encode_root_attributes() {
  for (auto const& name : reference_cases) {
    io::Reader ref(testdata(name));
    auto const d = std::int64_t(ref.group_size("/t3/tucker_cores"));
    auto const w = std::int64_t(ref.dataset_shape("/probes/w/0")[0]);
    auto const k = std::int64_t(ref.dataset_shape("/jets/0")[1]) - 1;
    ASSERT_GE(k, 1) << name;
    struct Command {
      std::string arguments;
      std::int64_t k;
    };
    for (auto const& c : {Command{"jets", k}, Command{"jets --order 1", 1}, Command{"jv", k}, Command{"jtr", k}}) {
      ScratchDirectory dir;
      std::string const out = dir.file("out.h5");
      run_ok(c.arguments + " --in " + quoted(testdata(name)) + " --out " + quoted(out));
      t3k_test::Hdf5File file(out);
      ASSERT_GE(file.id(), 0) << name << ", " << c.arguments;
      SCOPED_TRACE(name + ", t3k " + c.arguments);
      t3k_test::expect_int64_attribute(file, "/", "d", d);
      t3k_test::expect_int64_attribute(file, "/", "W", w);
      t3k_test::expect_int64_attribute(file, "/", "K", c.k);
    }
    ScratchDirectory dir;
    std::string const out = dir.file("frame.h5");
    run_ok("frame --in " + quoted(testdata(name)) + " --out " + quoted(out));
    t3k_test::Hdf5File file(out);
    ASSERT_GE(file.id(), 0) << name;
    SCOPED_TRACE(name + ", t3k frame");
    t3k_test::expect_int64_attribute(file, "/", "d", d);
    EXPECT_FALSE(t3k_test::has_attribute(file, "/", "W"));
    EXPECT_FALSE(t3k_test::has_attribute(file, "/", "K"));
  }
}

void jv_reproduces_reference() {
  for (auto const& name : reference_cases) {
    ScratchDirectory dir;
    std::string const out = dir.file("jv.h5");
    run_ok("jv --in " + quoted(testdata(name)) + " --out " + quoted(out));
    io::Reader ref(testdata(name));
    io::Reader got(out);
    EXPECT_LE(relative_error(got.read_jets("/tangent_jets"), ref.read_jets("/tangent_jets")), tolerance) << name;
  }
}

io::HostVariation run_jtr(ScratchDirectory const& dir, std::string const& name, std::string const& chunk,
                          bool per_probe) {
  std::string const out = dir.file("jtr_" + chunk + (per_probe ? "_pp" : "") + ".h5");
  auto const r = run_cli("jtr --in " + quoted(testdata(name)) + " --out " + quoted(out) + " --chunk-size " + chunk +
                         (per_probe ? " --per-probe" : ""));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  io::Reader ref(testdata(name));
  io::Reader got(out);
  return got.read_gradient(ref.read_frame(), per_probe);
}

void jtr_reproduces_reference(bool per_probe) {
  for (auto const& name : reference_cases) {
    ScratchDirectory dir;
    io::Reader ref(testdata(name));
    auto const expected = ref.read_gradient(ref.read_frame(), per_probe);
    for (std::string const chunk : {"none", "1", "2", "5", "auto"}) {
      auto const grad = run_jtr(dir, name, chunk, per_probe);
      EXPECT_LE(relative_error(grad.tucker, expected.tucker), tolerance) << name << " chunk " << chunk;
      EXPECT_LE(relative_error(grad.tt, expected.tt), tolerance) << name << " chunk " << chunk;
    }
  }
}

/// A jtr/jv input of `w` probes built from case 1 (its T3 and frame, random probes of order 2, random residual jets
/// with `residual_orders` orders and a variation); `omit` names a group to leave out ("/frame", "/residual",
/// "/variation", "/t3").
void write_input_of_w_probes(std::string const& path, std::size_t w, std::size_t residual_orders = 3,
                             std::string const& omit = "") {
  io::Reader ref(testdata("case1_ragged.h5"));
  auto const x = ref.read_t3();
  auto const frame = ref.read_frame();
  std::mt19937_64 gen(17);
  std::uniform_real_distribution<double> uniform(-1, 1);
  io::ProbeSet probes;
  probes.order = 2;
  io::JetStack residual;
  for (std::size_t n : x.mode_shapes()) {
    probes.w.emplace_back("w", w, n);
    probes.p.emplace_back("p", w, n);
    residual.emplace_back("r", w, residual_orders, n);
    for (auto* v : {&probes.w.back(), &probes.p.back()})
      for (std::size_t e = 0; e < v->span(); ++e) v->data()[e] = uniform(gen);
    for (std::size_t e = 0; e < residual.back().span(); ++e) residual.back().data()[e] = uniform(gen);
  }
  io::Writer out(path);
  if (omit != "/t3") out.write_t3(x);
  if (omit != "/frame") out.write_frame(frame);
  if (omit != "/variation") out.write_variation(ref.read_variation(frame));
  out.write_probes(probes);
  if (omit != "/residual") out.write_jets("/residual", residual);
  out.commit();
}

/// docs/math.md: the summed J^T is bitwise identical for every chunk size, over probes of several reduction blocks of
/// the tool's space (so that the chunk sizes below make several passes), and equals the per-probe results summed.
void jtr_sum_is_bitwise_independent_of_chunk_size() {
  ScratchDirectory dir;
  std::size_t const block = t3k::reduction_block_size_for<Kokkos::DefaultExecutionSpace>(), w = 3 * block + 5;
  std::string const in = dir.file("in.h5");
  write_input_of_w_probes(in, w);
  io::Reader ref(in);
  auto const frame = ref.read_frame();
  auto jtr = [&](std::string const& chunk, bool per_probe) {
    std::string const out = dir.file("jtr_" + chunk + (per_probe ? "_pp" : "") + ".h5");
    auto const r = run_cli("jtr --in " + quoted(in) + " --out " + quoted(out) + " --chunk-size " + chunk +
                           (per_probe ? " --per-probe" : ""));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return io::Reader(out).read_gradient(frame, per_probe);
  };
  auto const dense = jtr("none", false);
  for (std::string const& chunk :
       std::vector<std::string>{"1", std::to_string(block), std::to_string(2 * block + 1), "auto"}) {
    if (chunk != "auto") {
      EXPECT_LT(t3k::impl::rows_per_chunk(t3k::ChunkSize::parse(chunk), w, block), w) << "chunk " << chunk;
    }
    auto const grad = jtr(chunk, false);
    EXPECT_TRUE(bitwise_equal(grad.tucker, dense.tucker)) << "chunk " << chunk;
    EXPECT_TRUE(bitwise_equal(grad.tt, dense.tt)) << "chunk " << chunk;
  }
  // The per-probe gradients, chunked a block per pass, summed over the probes.
  auto const per = jtr(std::to_string(block), true);
  auto check = [&](auto const& summed, auto const& each, char const* name) {
    ASSERT_EQ(summed.size(), each.size());
    for (std::size_t i = 0; i < summed.size(); ++i) {
      std::size_t const entries = summed[i].size();
      ASSERT_EQ(each[i].size(), w * entries) << name << i;
      for (std::size_t e = 0; e < entries; ++e) {
        double acc = 0, abs_acc = 0;
        for (std::size_t s = 0; s < w; ++s) {
          acc += each[i].data()[s * entries + e];
          abs_acc += std::abs(each[i].data()[s * entries + e]);
        }
        // Two summation orders over W terms: a few epsilons of the terms' magnitudes.
        EXPECT_NEAR(acc, summed[i].data()[e], 1e-14 * abs_acc) << name << i << " entry " << e;
      }
    }
  };
  check(dense.tucker, per.tucker, "V~_");
  check(dense.tt, per.tt, "H~_");
}

// jv, jtr and frame name the missing group, or the residual whose order count disagrees with /probes' order
// attribute, and exit 2 without writing an output.
void missing_or_mismatched_groups_exit_2_naming_them() {
  ScratchDirectory dir;
  struct Case {
    std::string command, omit;
    std::size_t residual_orders;
    std::string expected;
  };
  for (auto const& c : {Case{"jv", "/frame", 3, "/frame"}, Case{"jv", "/variation", 3, "/variation"},
                        Case{"jtr", "/frame", 3, "/frame"}, Case{"jtr", "/residual", 3, "/residual"},
                        Case{"jtr", "", 2, "/residual/0 has shape [70 x 2 x 4], expected [70 x 3 x 4]"},
                        Case{"frame", "/t3", 3, "/t3"}}) {
    std::string const in = dir.file("in.h5"), out = dir.file("out.h5");
    write_input_of_w_probes(in, 70, c.residual_orders, c.omit);
    auto const r = run_cli(c.command + " --in " + quoted(in) + " --out " + quoted(out));
    EXPECT_EQ(r.exit_code, 2) << c.command << " without " << c.omit << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.command << ": " << r.output;
    EXPECT_FALSE(fs::exists(out)) << c.command;
    EXPECT_EQ(dir.n_entries(), 1u) << c.command << ": a temporary file was left behind";
    fs::remove(in);
  }
}

void bad_chunk_size_exit_2_naming_flag() {
  ScratchDirectory dir;
  for (std::string const bad : {"0", "-3", "abc"}) {
    auto const r = run_cli("jtr --in " + quoted(testdata("case1_ragged.h5")) + " --out " + quoted(dir.file("o.h5")) +
                           " --chunk-size " + bad);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--chunk-size"), std::string::npos) << r.output;
  }
  EXPECT_EQ(dir.n_entries(), 0u);
}

// t3k estimate-chunk prints the library's estimate and model for the given shapes; bad shapes and a byte cap that
// cannot hold one probe give exit 2 with the reason.
void estimate_chunk_prints_the_model() {
  std::vector<std::size_t> const big_n(8, 64), n(8, 16), r{1, 16, 32, 32, 32, 32, 32, 16, 1};
  std::string const shapes =
      "--mode-shapes 64,64,64,64,64,64,64,64 --tucker-ranks 16,16,16,16,16,16,16,16 "
      "--tt-ranks 1,16,32,32,32,32,32,16,1 --order 2 --n-probes 100000";
  auto const ok = run_cli("estimate-chunk " + shapes);
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  std::size_t const expected = t3k::automatic_chunk_size<Kokkos::DefaultExecutionSpace>(big_n, n, r, 2, 100000);
  EXPECT_NE(("\n" + ok.output).find("\nchunk_size: " + std::to_string(expected) + "\n"), std::string::npos)
      << ok.output;
  constexpr std::size_t block = t3k::reduction_block_size_for<Kokkos::DefaultExecutionSpace>();
  EXPECT_NE(ok.output.find("reduction_block: " + std::to_string(block) + "\n"), std::string::npos) << ok.output;
  std::size_t const balance = t3k::estimate_chunk_size(big_n, n, r, 2, 100000, 1, 1, t3k::ScalarType::float64, block);
  EXPECT_NE(ok.output.find("balance_chunk_size: " + std::to_string(balance) + "\n"), std::string::npos) << ok.output;
  auto const model = t3k::transpose_memory_model(big_n, n, r, 2, 1, true, t3k::ScalarType::float64, block);
  EXPECT_NE(ok.output.find("assembly: " + std::to_string(model.assembly_bytes_per_row)), std::string::npos)
      << ok.output;
  EXPECT_NE(ok.output.find("chunk_auto: " + std::to_string(model.peak_bytes(100000, expected))), std::string::npos)
      << ok.output;
  auto const sharded = run_cli("estimate-chunk " + shapes + " --n-shards 4 --scalar float");
  ASSERT_EQ(sharded.exit_code, 0) << sharded.output;
  EXPECT_NE(sharded.output.find("probe_rows_per_shard: 25000"), std::string::npos) << sharded.output;
  auto const bad = run_cli("estimate-chunk " + std::string("--mode-shapes 4,5 --tucker-ranks 2,2 --tt-ranks 1,2 "
                                                           "--order 1 --n-probes 10"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("tt_ranks has 2 entries, expected d + 1 = 3"), std::string::npos) << bad.output;
  auto const capped = run_cli("estimate-chunk " + shapes + " --max-bytes 1000");
  EXPECT_EQ(capped.exit_code, 2) << capped.output;
  EXPECT_NE(
      capped.output.find("even the smallest chunk (" + std::to_string(block) + " probes, one reduction block) needs"),
      std::string::npos)
      << capped.output;
}

}  // namespace

TEST(Cli, VersionMentionsKokkos) { version_mentions_kokkos(); }
TEST(Cli, VersionNamesTheBlasCore) { version_names_the_blas_core(); }
TEST(Cli, VersionReportsTheDefaultWaitPolicy) { version_reports_the_default_wait_policy(); }
TEST(Cli, UsersWaitPolicyIsKept) { users_wait_policy_is_kept(); }
TEST(Cli, ReexecutionKeepsArgumentsAndExitCodes) { reexecution_keeps_arguments_and_exit_codes(); }
TEST(Cli, DemoPassesItsChecks) { demo_passes_its_checks(); }
TEST(Cli, JetsReproduceReference) { jets_reproduce_reference(); }
TEST(Cli, JetsHonourTheOrderFlag) { jets_honour_the_order_flag(); }
TEST(Cli, MissingProbesExit2NamingDataset) { missing_probes_exit_2_naming_dataset(); }
TEST(Cli, WrongShapeExit2NamingDataset) { wrong_shape_exit_2_naming_dataset(); }
TEST(Cli, NonexistentInputExit2NamingFile) { nonexistent_input_exit_2_naming_file(); }
TEST(Cli, BadFlagsExit2NamingFlag) { bad_flags_exit_2_naming_flag(); }
TEST(Cli, FailedRunLeavesExistingOutputUnchanged) { failed_run_leaves_existing_output_unchanged(); }
TEST(Cli, FrameIsOrthogonalWithReferenceShapes) { frame_is_orthogonal_with_reference_shapes(); }
TEST(Cli, FrameReconstructsReferenceDenseTensor) { frame_reconstructs_reference_dense_tensor(); }
TEST(Cli, OutputsEncodeRootAttributes) { outputs_encode_root_attributes(); }
TEST(Cli, JvReproducesReference) { jv_reproduces_reference(); }
TEST(Cli, JtrReproducesReferenceGradient) { jtr_reproduces_reference(false); }
TEST(Cli, JtrReproducesReferencePerProbeGradient) { jtr_reproduces_reference(true); }
TEST(Cli, JtrSumIsBitwiseIndependentOfChunkSize) { jtr_sum_is_bitwise_independent_of_chunk_size(); }
TEST(Cli, MissingOrMismatchedGroupsExit2NamingThem) { missing_or_mismatched_groups_exit_2_naming_them(); }
TEST(Cli, BadChunkSizeExit2NamingFlag) { bad_chunk_size_exit_2_naming_flag(); }
TEST(Cli, EstimateChunkPrintsTheModel) { estimate_chunk_prints_the_model(); }

#endif  // T3K_TESTS_HAVE_IO
