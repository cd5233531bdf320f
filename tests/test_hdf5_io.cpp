// HDF5 files of docs/file-format.md (t3k/io/hdf5_io.hpp): bitwise round trips of every kind of object, error
// messages that name the file and the dataset, and atomic writes.
#ifdef T3K_TESTS_HAVE_IO

#include "hdf5_attributes.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/random_t3.hpp"
#include "t3k/core/error.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace io = t3k::io;
namespace fs = std::filesystem;

std::string testdata(std::string const& name) { return std::string(T3K_TESTDATA_DIR) + "/" + name; }

/// A fresh empty directory per test, removed at the end.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("t3k_test_hdf5_io_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(std::string const& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (auto const& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    return names;
  }

 private:
  fs::path path_;
};

std::string file_bytes(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <class View>
void expect_bitwise_equal(View const& a, View const& b, std::string const& what) {
  ASSERT_EQ(t3k::impl::view_shape(a), t3k::impl::view_shape(b)) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0) << what << " differs";
}

template <class View>
void expect_all_bitwise_equal(std::vector<View> const& a, std::vector<View> const& b, std::string const& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) expect_bitwise_equal(a[i], b[i], what + "/" + std::to_string(i));
}

/// Runs `action` and returns the FileError message it throws ("" and a test failure when it throws none).
template <class Action>
std::string file_error_of(Action&& action) {
  try {
    action();
  } catch (io::FileError const& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a t3k::io::FileError";
  return "";
}

// ------------------------------------------------------------------------------------------------------- round trips

void t3_round_trip_is_bitwise() {
  ScratchDirectory dir;
  auto const x = t3k::random_t3<double>(Kokkos::DefaultHostExecutionSpace{}, {4, 1, 3}, {2, 1, 5}, {2, 3, 1, 2}, 5);
  io::HostT3 const xh = t3k::copy_t3_to<Kokkos::HostSpace>(Kokkos::DefaultHostExecutionSpace{}, x);
  {
    io::Writer out(dir.file("t3.h5"));
    out.write_t3(xh);
    out.commit();
  }
  io::Reader in(dir.file("t3.h5"));
  auto const y = in.read_t3();
  expect_all_bitwise_equal(xh.tucker_cores(), y.tucker_cores(), "/t3/tucker_cores");
  expect_all_bitwise_equal(xh.tt_cores(), y.tt_cores(), "/t3/tt_cores");
}

void frame_variation_and_gradients_round_trip_is_bitwise() {
  ScratchDirectory dir;
  io::Reader ref(testdata("case1_ragged.h5"));
  auto const frame = ref.read_frame();
  auto const v = ref.read_variation(frame);
  auto const grad = ref.read_gradient(frame, false);
  auto const grad_pp = ref.read_gradient(frame, true);
  EXPECT_EQ(v.n_stack(), 1u);
  EXPECT_EQ(grad.n_stack(), 1u);
  EXPECT_EQ(grad_pp.n_stack(), 6u);
  {
    io::Writer out(dir.file("frame.h5"));
    out.write_frame(frame);
    out.write_variation(v);
    out.write_gradient(grad, false);
    out.write_gradient(grad_pp, true);
    out.commit();
  }
  io::Reader in(dir.file("frame.h5"));
  auto const f2 = in.read_frame();
  for (std::size_t i = 0; i < frame.n_modes(); ++i) {
    std::string const core = "/" + std::to_string(i);
    expect_bitwise_equal(frame.up_tucker(i), f2.up_tucker(i), "/frame/up_tucker" + core);
    expect_bitwise_equal(frame.left_tt(i), f2.left_tt(i), "/frame/left_tt" + core);
    expect_bitwise_equal(frame.right_tt(i), f2.right_tt(i), "/frame/right_tt" + core);
    expect_bitwise_equal(frame.outer_tt(i), f2.outer_tt(i), "/frame/outer_tt" + core);
  }
  auto const v2 = in.read_variation(f2);
  expect_all_bitwise_equal(v.tucker, v2.tucker, "/variation/tucker");
  expect_all_bitwise_equal(v.tt, v2.tt, "/variation/tt");
  auto const g2 = in.read_gradient(f2, false);
  expect_all_bitwise_equal(grad.tucker, g2.tucker, "/grad/tucker");
  expect_all_bitwise_equal(grad.tt, g2.tt, "/grad/tt");
  auto const gp2 = in.read_gradient(f2, true);
  expect_all_bitwise_equal(grad_pp.tucker, gp2.tucker, "/grad_per_probe/tucker");
  expect_all_bitwise_equal(grad_pp.tt, gp2.tt, "/grad_per_probe/tt");
}

/// The attributes the writer puts on /probes and the root, read with the HDF5 C API: order an int64 scalar (absent
/// when the probe set has none), symmetric an h5py-style bool enum, and d, W, K int64 scalars, for two values of each
/// so that a constant encoding fails.
void written_attributes_have_h5py_types_and_values() {
  io::Reader ref(testdata("case1_ragged.h5"));
  auto probes = ref.read_probes(ref.read_t3().mode_shapes());
  struct Case {
    std::optional<std::size_t> order;
    bool symmetric;
    std::int64_t d, w, k;
  };
  for (auto const& c : {Case{3, true, 4, 6, 3}, Case{0, false, 1, 2, 0}, Case{std::nullopt, true, 7, 9, 5}}) {
    ScratchDirectory dir;
    probes.order = c.order;
    probes.symmetric = c.symmetric;
    io::RootAttributes root;
    root.d = c.d;
    root.w = c.w;
    root.k = c.k;
    {
      io::Writer out(dir.file("attributes.h5"));
      out.write_probes(probes);
      out.write_root_attributes(root);
      out.commit();
    }
    t3k_test::Hdf5File file(dir.file("attributes.h5"));
    ASSERT_GE(file.id(), 0);
    SCOPED_TRACE("order " + (c.order ? std::to_string(*c.order) : std::string("none")) + ", symmetric " +
                 std::to_string(c.symmetric));
    if (c.order) {
      t3k_test::expect_int64_attribute(file, "/probes", "order", std::int64_t(*c.order));
    } else {
      EXPECT_FALSE(t3k_test::has_attribute(file, "/probes", "order"));
    }
    t3k_test::expect_bool_attribute(file, "/probes", "symmetric", c.symmetric);
    t3k_test::expect_int64_attribute(file, "/", "d", c.d);
    t3k_test::expect_int64_attribute(file, "/", "W", c.w);
    t3k_test::expect_int64_attribute(file, "/", "K", c.k);
  }
}

void probes_jets_and_attributes_round_trip_is_bitwise() {
  for (std::string const name : {"case1_ragged.h5", "case3_symmetric.h5"}) {
    ScratchDirectory dir;
    io::Reader ref(testdata(name));
    auto const x = ref.read_t3();
    auto const probes = ref.read_probes(x.mode_shapes());
    auto const attributes = ref.read_root_attributes();
    std::vector<io::JetStack> stacks;
    for (char const* group : {"/jets", "/tangent_jets", "/residual"}) {
      stacks.push_back(ref.read_jets(group, x.mode_shapes(), probes.n_probes()));
    }
    {
      io::Writer out(dir.file("probes.h5"));
      out.write_probes(probes);
      out.write_jets("/jets", stacks[0]);
      out.write_jets("/tangent_jets", stacks[1]);
      out.write_jets("/residual", stacks[2]);
      out.write_root_attributes(attributes);
      out.commit();
    }
    io::Reader in(dir.file("probes.h5"));
    auto const p2 = in.read_probes();
    expect_all_bitwise_equal(probes.w, p2.w, name + ": /probes/w");
    expect_all_bitwise_equal(probes.p, p2.p, name + ": /probes/p");
    EXPECT_EQ(probes.order, p2.order) << name;
    EXPECT_EQ(probes.symmetric, p2.symmetric) << name;
    expect_all_bitwise_equal(stacks[0], in.read_jets("/jets"), name + ": /jets");
    expect_all_bitwise_equal(stacks[1], in.read_jets("/tangent_jets"), name + ": /tangent_jets");
    expect_all_bitwise_equal(stacks[2], in.read_jets("/residual"), name + ": /residual");
    auto const a2 = in.read_root_attributes();
    EXPECT_EQ(attributes.d, a2.d) << name;
    EXPECT_EQ(attributes.w, a2.w) << name;
    EXPECT_EQ(attributes.k, a2.k) << name;
  }
}

/// Modes probed with the same vectors and directions are stored once (the attribute repeat) and read back as one
/// View; every way such a file can disagree with itself or with the input is named.
void repeated_probe_vectors_are_stored_once() {
  ScratchDirectory dir;
  io::Reader ref(testdata("case3_symmetric.h5"));
  auto probes = ref.read_probes();
  std::size_t const d = probes.n_modes();
  ASSERT_GE(d, 3u);
  std::vector<std::int64_t> const all_one(d, 0);
  EXPECT_EQ(io::repeated_probe_modes(probes), all_one);
  // Mode 1 with vectors of its own: labels 0, 1, 0, ..., 0.
  std::size_t const w = probes.n_probes(), n = probes.w[0].extent(1);
  io::Matrix own("own", w, n), own_p("own_p", w, n);
  for (std::size_t e = 0; e < own.span(); ++e) own.data()[e] = probes.w[0].data()[e] + 1, own_p.data()[e] = 0.5;
  probes.w[1] = own;
  probes.p[1] = own_p;
  auto expected = all_one;
  expected[1] = 1;
  probes.repeat = io::repeated_probe_modes(probes);
  ASSERT_EQ(probes.repeat, expected);
  {
    io::Writer out(dir.file("repeat.h5"));
    out.write_probes(probes);
    out.commit();
  }
  io::Reader in(dir.file("repeat.h5"));
  EXPECT_EQ(in.group_size("/probes/w"), 2u);
  EXPECT_EQ(in.group_size("/probes/p"), 2u);
  auto const back = in.read_probes();
  EXPECT_EQ(back.repeat, expected);
  expect_all_bitwise_equal(probes.w, back.w, "/probes/w");
  expect_all_bitwise_equal(probes.p, back.p, "/probes/p");
  EXPECT_EQ(back.w[2].data(), back.w[0].data()) << "one View for the modes of a label";
  // Rows of a shard, as an MPI rank reads them.
  auto const rows = in.read_probes({}, [](std::size_t n_rows) { return t3k::ShardRange{1, n_rows}; });
  EXPECT_EQ(rows.n_probes(), w - 1);
  EXPECT_EQ(rows.w[d - 1](0, 0), probes.w[0](1, 0));

  // The writer refuses labels that would lose data.
  auto wrong = probes;
  wrong.repeat = all_one;
  EXPECT_THROW(io::Writer(dir.file("wrong.h5")).write_probes(wrong), t3k::InvalidArgument);
  // A repeated mode stored again.
  {
    auto plain = probes;
    plain.repeat.clear();
    io::Writer out(dir.file("twice.h5"));
    out.write_probes(plain);
    out.write_integer_list_attribute("/probes", "repeat", expected);
    out.commit();
  }
  auto message = file_error_of([&] { io::Reader(dir.file("twice.h5")).read_probes(); });
  EXPECT_NE(
      message.find("/probes/w/2 is present, but attribute 'repeat' of /probes gives mode 2 the vectors of mode 0"),
      std::string::npos)
      << message;
  // Labels for another d, and modes of one label with different sizes in the input.
  std::vector<std::size_t> shapes(d, n);
  shapes.push_back(n);
  message = file_error_of([&] { in.read_probes(shapes); });
  EXPECT_NE(message.find(t3k::impl::concat("attribute 'repeat' of /probes has ", d, " labels, expected d = ", d + 1)),
            std::string::npos)
      << message;
  shapes.pop_back();
  shapes[2] = n + 1;
  message = file_error_of([&] { in.read_probes(shapes); });
  EXPECT_NE(message.find(t3k::impl::concat("gives modes 0 and 2 the same vectors, but the input has N_0 = ", n,
                                           " and N_2 = ", n + 1)),
            std::string::npos)
      << message;
}

/// The reference files store order as int64 and symmetric as h5py's enum bool.
void reference_attributes_are_read() {
  io::Reader ragged(testdata("case1_ragged.h5"));
  auto const p1 = ragged.read_probes();
  ASSERT_TRUE(p1.order.has_value());
  EXPECT_EQ(*p1.order, 2u);
  EXPECT_FALSE(p1.symmetric);
  EXPECT_EQ(p1.n_modes(), 4u);
  EXPECT_EQ(p1.n_probes(), 6u);
  auto const root = ragged.read_root_attributes();
  EXPECT_EQ(root.d, std::int64_t(4));
  EXPECT_EQ(root.w, std::int64_t(6));
  EXPECT_EQ(root.k, std::int64_t(2));

  io::Reader symmetric(testdata("case3_symmetric.h5"));
  auto const p3 = symmetric.read_probes();
  ASSERT_TRUE(p3.order.has_value());
  EXPECT_EQ(*p3.order, 3u);
  EXPECT_TRUE(p3.symmetric);
}

// ------------------------------------------------------------------------------------------------------- errors

/// A file with /t3 of case 1 and probes whose /probes/w/2 has 5 columns instead of 6.
void write_bad_probe_file(std::string const& path) {
  io::Reader ref(testdata("case1_ragged.h5"));
  auto const x = ref.read_t3();
  auto probes = ref.read_probes(x.mode_shapes());
  probes.w[2] = io::Matrix("w2", probes.n_probes(), 5);
  io::Writer out(path);
  out.write_t3(x);
  out.write_probes(probes);
  out.commit();
}

void missing_group_is_named() {
  ScratchDirectory dir;
  {
    io::Reader ref(testdata("case1_ragged.h5"));
    io::Writer out(dir.file("no_probes.h5"));
    out.write_t3(ref.read_t3());
    out.commit();
  }
  io::Reader in(dir.file("no_probes.h5"));
  auto const message = file_error_of([&] { in.read_probes({4, 5, 6, 3}); });
  EXPECT_NE(message.find("/probes"), std::string::npos) << message;
  EXPECT_NE(message.find("is missing"), std::string::npos) << message;
  EXPECT_NE(message.find("no_probes.h5"), std::string::npos) << message;
}

void missing_dataset_is_named() {
  ScratchDirectory dir;
  {
    io::Reader ref(testdata("case1_ragged.h5"));
    auto const x = ref.read_t3();
    io::Writer out(dir.file("three_modes.h5"));
    out.write_t3(x);
    auto const jets = ref.read_jets("/jets");
    out.write_jets("/jets", io::JetStack(jets.begin(), jets.begin() + 3));
    out.commit();
  }
  io::Reader in(dir.file("three_modes.h5"));
  auto const x = in.read_t3();
  auto const message = file_error_of([&] { in.read_jets("/jets", x.mode_shapes()); });
  EXPECT_NE(message.find("/jets has 3 members, expected d = 4"), std::string::npos) << message;
  auto const missing = file_error_of([&] { in.read_array3("/jets/3", {6, 3, 3}); });
  EXPECT_NE(missing.find("/jets/3 is missing"), std::string::npos) << missing;
}

void wrong_shape_is_named_with_both_shapes() {
  ScratchDirectory dir;
  write_bad_probe_file(dir.file("bad_shape.h5"));
  io::Reader in(dir.file("bad_shape.h5"));
  auto const x = in.read_t3();
  auto const message = file_error_of([&] { in.read_probes(x.mode_shapes()); });
  EXPECT_NE(message.find("/probes/w/2 has shape [6 x 5], expected [6 x 6]"), std::string::npos) << message;
}

/// Writes case 1's T3 to `path` with /t3/tucker_cores/`mode` or /t3/tt_cores/`mode` replaced by `core`.
template <class Core>
void write_t3_with_core(std::string const& path, std::string const& group, std::size_t mode, Core const& core) {
  io::Reader ref(testdata("case1_ragged.h5"));
  auto const x = ref.read_t3();
  io::Writer out(path);
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    std::string const u = "/t3/tucker_cores/" + std::to_string(i), g = "/t3/tt_cores/" + std::to_string(i);
    if (u == group + "/" + std::to_string(mode))
      out.write_view(u, core);
    else
      out.write_view(u, x.tucker_core(i));
    if (g == group + "/" + std::to_string(mode))
      out.write_view(g, core);
    else
      out.write_view(g, x.tt_core(i));
  }
  out.commit();
}

void wrong_tt_rank_names_both_cores() {
  ScratchDirectory dir;
  auto const x = io::Reader(testdata("case1_ragged.h5")).read_t3();
  std::size_t const r2 = x.tt_core(1).extent(2), n2 = x.tt_core(2).extent(1), r3 = x.tt_core(2).extent(2);
  // G_2 starts with r_2 + 1 while G_1 still ends with r_2: neither dataset alone is wrong.
  write_t3_with_core(dir.file("bad_rank.h5"), "/t3/tt_cores", 2, io::Array3("g", r2 + 1, n2, r3));
  auto const message = file_error_of([&] { io::Reader(dir.file("bad_rank.h5")).read_t3(); });
  EXPECT_NE(message.find(t3k::impl::concat("/t3/tt_cores/2 has first extent ", r2 + 1,
                                           " but /t3/tt_cores/1 has last "
                                           "extent ",
                                           r2)),
            std::string::npos)
      << message;
}

void wrong_tucker_rank_names_tucker_and_tt_core() {
  ScratchDirectory dir;
  auto const x = io::Reader(testdata("case1_ragged.h5")).read_t3();
  std::size_t const n2 = x.tucker_core(2).extent(0), big_n2 = x.tucker_core(2).extent(1);
  // U_2 gains a row; G_2 keeps its middle extent n_2. The message must name the changed dataset and the one it
  // disagrees with, each with its own extent (not the neighbour's shape with the changed one's extent).
  write_t3_with_core(dir.file("bad_tucker.h5"), "/t3/tucker_cores", 2, io::Matrix("u", n2 + 1, big_n2));
  auto const message = file_error_of([&] { io::Reader(dir.file("bad_tucker.h5")).read_t3(); });
  EXPECT_NE(message.find(t3k::impl::concat("/t3/tucker_cores/2 has ", n2 + 1,
                                           " rows but /t3/tt_cores/2 has middle "
                                           "extent ",
                                           n2)),
            std::string::npos)
      << message;
}

/// A transposed copy [N x W] of the host matrix `m` [W x N].
io::Matrix transposed(io::Matrix const& m) {
  io::Matrix t("t", m.extent(1), m.extent(0));
  for (std::size_t s = 0; s < m.extent(0); ++s)
    for (std::size_t j = 0; j < m.extent(1); ++j) t(j, s) = m(s, j);
  return t;
}

void transposed_probes_are_told_their_shape() {
  ScratchDirectory dir;
  io::Reader ref(testdata("case1_ragged.h5"));
  auto const x = ref.read_t3();
  auto probes = ref.read_probes(x.mode_shapes());
  std::size_t const w = probes.n_probes(), n1 = probes.w[1].extent(1);
  ASSERT_NE(w, n1) << "the case must tell W and N_1 apart";
  probes.w[1] = transposed(probes.w[1]);
  {
    io::Writer out(dir.file("transposed.h5"));
    out.write_probes(probes);
    out.commit();
  }
  io::Reader in(dir.file("transposed.h5"));
  std::string const expected =
      t3k::impl::concat("/probes/w/1 has shape [", n1, " x ", w, "], expected [", w, " x ", n1, "]");
  // With the mode shapes unknown (a data file read alone) W comes from /probes/w/0 and N_1 from the other extent.
  auto const alone = file_error_of([&] { in.read_probes({}); });
  EXPECT_NE(alone.find(expected), std::string::npos) << alone;
  EXPECT_NE(alone.find("/probes/w/0"), std::string::npos) << alone;
  auto const with_model = file_error_of([&] { in.read_probes(x.mode_shapes()); });
  EXPECT_NE(with_model.find(expected), std::string::npos) << with_model;
}

void probe_directions_of_another_shape_name_both_datasets() {
  ScratchDirectory dir;
  io::Reader ref(testdata("case1_ragged.h5"));
  auto probes = ref.read_probes({});
  std::size_t const w = probes.n_probes(), n2 = probes.w[2].extent(1);
  probes.p[2] = io::Matrix("p2", w, n2 + 1);
  {
    io::Writer out(dir.file("bad_directions.h5"));
    out.write_probes(probes);
    out.commit();
  }
  auto const message = file_error_of([&] { io::Reader(dir.file("bad_directions.h5")).read_probes({}); });
  EXPECT_NE(message.find(t3k::impl::concat("/probes/p/2 has shape [", w, " x ", n2 + 1, "], expected [", w, " x ", n2,
                                           "], the shape of /probes/w/2")),
            std::string::npos)
      << message;
}

void jets_disagreeing_with_the_first_member_name_it() {
  ScratchDirectory dir;
  io::Reader ref(testdata("case1_ragged.h5"));
  auto jets = ref.read_jets("/jets");
  std::size_t const w = jets[0].extent(0), k1 = jets[0].extent(1), n1 = jets[1].extent(2);
  // N_1 != W: with N_i = W a short member could as well be a transposed one, and the message reads it so.
  ASSERT_NE(n1, w);
  jets[1] = io::Array3("z1", w - 1, k1, n1);
  {
    io::Writer out(dir.file("short_jets.h5"));
    out.write_jets("/jets", jets);
    out.commit();
  }
  auto const message = file_error_of([&] { io::Reader(dir.file("short_jets.h5")).read_jets("/jets"); });
  EXPECT_NE(message.find(t3k::impl::concat("/jets/1 has shape [", w - 1, " x ", k1, " x ", n1, "], expected [", w,
                                           " x ", k1, " x ", n1, "] (W and K+1 as in /jets/0)")),
            std::string::npos)
      << message;
}

void nonexistent_file_is_named() {
  ScratchDirectory dir;
  std::string const path = dir.file("does_not_exist.h5");
  auto const message = file_error_of([&] { io::Reader in(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

void non_hdf5_file_is_named() {
  ScratchDirectory dir;
  std::string const path = dir.file("text.h5");
  std::ofstream(path) << "not an HDF5 file\n";
  auto const message = file_error_of([&] { io::Reader in(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not a readable HDF5 file"), std::string::npos) << message;
}

// ------------------------------------------------------------------------------------------------------- atomicity

void failed_write_leaves_existing_output_unchanged() {
  ScratchDirectory dir;
  std::string const target = dir.file("out.h5");
  {
    io::Reader ref(testdata("case1_ragged.h5"));
    io::Writer out(target);
    out.write_t3(ref.read_t3());
    out.commit();
  }
  std::string const before = file_bytes(target);
  ASSERT_FALSE(before.empty());
  // A run that fails halfway: the writer is destroyed without commit (an exception on the way).
  try {
    io::Reader ref(testdata("case1_ragged.h5"));
    auto const frame = ref.read_frame();
    io::Writer out(target);
    out.write_frame(frame);
    auto v = ref.read_gradient(frame, true);  // a stack of 6: /variation holds one, so this throws
    out.write_variation(v);
    out.commit();
    ADD_FAILURE() << "write_variation accepted a stack of 6";
  } catch (t3k::InvalidArgument const&) {
  }
  EXPECT_EQ(file_bytes(target), before);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.h5"}) << "the temporary file was left behind";
}

void failed_rename_leaves_nothing_behind() {
  ScratchDirectory dir;
  std::string const target = dir.file("a_directory");
  fs::create_directories(fs::path(target) / "occupied");  // rename of a file onto a non-empty directory fails
  auto const message = file_error_of([&] {
    io::Writer out(target);
    out.write_raw("/x", {2}, std::vector<double>{1.0, 2.0}.data());
    out.commit();
  });
  EXPECT_NE(message.find(target), std::string::npos) << message;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"a_directory"});
}

void committed_write_replaces_the_target() {
  ScratchDirectory dir;
  std::string const target = dir.file("out.h5");
  std::ofstream(target) << "old contents\n";
  {
    io::Writer out(target);
    EXPECT_NE(out.temporary_path(), target);
    EXPECT_TRUE(fs::exists(out.temporary_path()));
    out.write_raw("/x", {3}, std::vector<double>{1.0, 2.0, 3.0}.data());
    out.commit();
  }
  io::Reader in(target);
  std::vector<std::size_t> shape;
  EXPECT_EQ(in.read_raw("/x", shape), (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_EQ(shape, std::vector<std::size_t>{3});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.h5"});
}

}  // namespace

TEST(Hdf5Io, T3RoundTripIsBitwise) { t3_round_trip_is_bitwise(); }
TEST(Hdf5Io, FrameVariationAndGradientsRoundTripIsBitwise) { frame_variation_and_gradients_round_trip_is_bitwise(); }
TEST(Hdf5Io, ProbesJetsAndAttributesRoundTripIsBitwise) { probes_jets_and_attributes_round_trip_is_bitwise(); }
TEST(Hdf5Io, ReferenceAttributesAreRead) { reference_attributes_are_read(); }
TEST(Hdf5Io, RepeatedProbeVectorsAreStoredOnce) { repeated_probe_vectors_are_stored_once(); }
TEST(Hdf5Io, WrittenAttributesHaveH5pyTypesAndValues) { written_attributes_have_h5py_types_and_values(); }
TEST(Hdf5Io, MissingGroupIsNamed) { missing_group_is_named(); }
TEST(Hdf5Io, MissingDatasetIsNamed) { missing_dataset_is_named(); }
TEST(Hdf5Io, WrongShapeIsNamedWithBothShapes) { wrong_shape_is_named_with_both_shapes(); }
TEST(Hdf5Io, WrongTtRankNamesBothCores) { wrong_tt_rank_names_both_cores(); }
TEST(Hdf5Io, WrongTuckerRankNamesTuckerAndTtCore) { wrong_tucker_rank_names_tucker_and_tt_core(); }
TEST(Hdf5Io, TransposedProbesAreToldTheirShape) { transposed_probes_are_told_their_shape(); }
TEST(Hdf5Io, ProbeDirectionsOfAnotherShapeNameBothDatasets) { probe_directions_of_another_shape_name_both_datasets(); }
TEST(Hdf5Io, JetsDisagreeingWithTheFirstMemberNameIt) { jets_disagreeing_with_the_first_member_name_it(); }
TEST(Hdf5Io, NonexistentFileIsNamed) { nonexistent_file_is_named(); }
TEST(Hdf5Io, NonHdf5FileIsNamed) { non_hdf5_file_is_named(); }
TEST(Hdf5Io, FailedWriteLeavesExistingOutputUnchanged) { failed_write_leaves_existing_output_unchanged(); }
TEST(Hdf5Io, FailedRenameLeavesNothingBehind) { failed_rename_leaves_nothing_behind(); }
TEST(Hdf5Io, CommittedWriteReplacesTheTarget) { committed_write_replaces_the_target(); }

#endif  // T3K_TESTS_HAVE_IO
