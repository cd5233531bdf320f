#pragma once
/// \file hdf5_io.hpp
/// Host-side HDF5 files (docs/file-format.md): T3s, frames, variations, probe sets, jet stacks and gradients, all
/// float64 row-major, read into and written from LayoutRight `Kokkos::HostSpace` Views of double.
///
/// Every reader checks shapes as it reads and names the dataset at fault
/// ("case.h5: /probes/w/2 has shape [6 x 5], expected [6 x 6]"); a missing object, an unreadable file or a dataset
/// of the wrong type throws `t3k::io::FileError` naming the file and the object. Inputs must be regular files of
/// finite float64 or float32 (little-endian) entries. Writing is atomic: a `Writer` writes an exclusively created
/// "<path>.tmp-<pid>-<random>" and `commit()` renames it onto `path`; a writer destroyed without `commit()` (an
/// exception on the way) removes its temporary file, so a failed run never leaves a half-written output and never
/// touches an existing file at `path`. A character device (/dev/null) is written through at commit; other
/// non-regular targets are refused (file_safety.hpp).
///
/// Kokkos must be initialized while readers allocate Views. HDF5 is an implementation detail of hdf5_reader.cpp,
/// hdf5_read_objects.cpp and hdf5_writer.cpp; this header does not include hdf5.h.

#include "t3k/core/communicator.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace t3k {
namespace io {

/// A file that cannot be opened, read or written, or an object in it that is missing or has the wrong shape or type.
/// The message names the file and the object ("in.h5: /probes/w/2 has shape [6 x 5], expected [6 x 6]").
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using HostSpace = Kokkos::HostSpace;                                      ///< where everything read or written lives
using Matrix = Kokkos::View<double**, Kokkos::LayoutRight, HostSpace>;    ///< a rank-2 array (probes, Tucker cores)
using Array3 = Kokkos::View<double***, Kokkos::LayoutRight, HostSpace>;   ///< a rank-3 array (jets, TT cores)
using Array4 = Kokkos::View<double****, Kokkos::LayoutRight, HostSpace>;  ///< a rank-4 array (stacks)
using HostT3 = TuckerTensorTrain<double, HostSpace>;                      ///< a T3 on the host
using HostFrame = OrthogonalFrame<double, HostSpace>;                     ///< an orthogonal frame on the host
using HostVariation = T3Variation<double, HostSpace>;                     ///< a variation stack on the host
/// One (W, K+1, N_i) array per mode: probe jets, tangent jets (J v) or residual jets.
using JetStack = std::vector<Array3>;

/// A probe set: w_i and p_i of shape (W, N_i) for every mode, the jet order K and the symmetric flag (every mode
/// holds the same arrays; the file still stores one array per mode). A shard of a sharded run holds rows
/// [first_row, first_row + n_probes()) of the file's file_rows rows.
struct ProbeSet {
  std::vector<Matrix> w;  ///< probe vectors w_i, one (W, N_i) per mode
  std::vector<Matrix> p;  ///< probe directions p_i, one (W, N_i) per mode
  /// The order attribute of /probes; empty when the file has none.
  std::optional<std::size_t> order;
  bool symmetric = false;  ///< the symmetric attribute of /probes
  /// The repeat attribute of /probes: one label per mode; modes with equal labels have the same w and p (a
  /// derivative tensor's input modes probed at one x), stored once under the group's first mode and held here as one
  /// View. Empty: every mode stored.
  std::vector<std::int64_t> repeat;
  std::size_t first_row = 0;  ///< index in the file of the first row held
  std::size_t file_rows = 0;  ///< W of the file; 0 when unknown (a probe set built in memory): n_probes()
  std::size_t n_modes() const { return w.size(); }  ///< d
  /// Rows held.
  std::size_t n_probes() const { return w.empty() ? 0 : w[0].extent(0); }
  /// Rows of the whole probe set (the file's W).
  std::size_t n_file_probes() const { return file_rows != 0 ? file_rows : n_probes(); }
};

/// Labels for ProbeSet::repeat that store every mode once: mode i gets the index of the first mode whose w and p
/// equal its own, bit for bit (itself when none does); empty when no two modes are equal.
std::vector<std::int64_t> repeated_probe_modes(ProbeSet const& probes);

/// Chooses the rows [begin, end) of a probe set to read once its row count W is known (a shard's rows:
/// Communicator::shard_range).
using RowSelector = std::function<ShardRange(std::size_t n_rows)>;

/// Root attributes d, W, K (int64 in the file); absent ones are empty.
struct RootAttributes {
  std::optional<std::int64_t> d;  ///< number of modes
  std::optional<std::int64_t> w;  ///< number of probes W
  std::optional<std::int64_t> k;  ///< jet order K
};

/// Extent placeholder in expected shapes: take it from the file (and fix it from then on).
inline constexpr std::size_t any_extent = std::size_t(-1);

/// The largest jet order K a file may declare (the order attribute of /probes).
inline constexpr std::size_t max_jet_order = 16;

/// A read-only HDF5 file. Every read_* checks each dataset's shape against what the file's other datasets (and the
/// caller's arguments) imply before reading it.
/// **Blocking:** yes (host I/O). **Throws:** FileError naming the file and the dataset or group when it is missing,
/// has the wrong shape or is not numeric.
class Reader {
 public:
  /// Opens `path`. **Throws:** FileError naming the file when it does not exist or is not a readable HDF5 file.
  explicit Reader(std::string path);
  ~Reader();
  Reader(Reader const&) = delete;
  Reader& operator=(Reader const&) = delete;

  std::string const& path() const { return path_; }  ///< the file as opened
  /// Whether the group or dataset at the absolute `object` path ("/probes/w/0") exists.
  bool exists(std::string const& object) const;
  /// Number of members of a group (the d of "/t3/tucker_cores"). **Throws:** FileError when it is missing.
  std::size_t group_size(std::string const& group) const;
  /// Extents of a dataset, without reading it. **Throws:** FileError when it is missing or not a dataset.
  std::vector<std::size_t> dataset_shape(std::string const& dataset) const;

  /// A float64 dataset of any rank as a flat row-major vector; `shape` receives its extents.
  /// **Throws:** FileError when missing or not a floating-point dataset.
  std::vector<double> read_raw(std::string const& dataset, std::vector<std::size_t>& shape) const;
  /// Whether `dataset` holds strings. **Throws:** FileError when it is missing or not a dataset.
  bool is_text(std::string const& dataset) const;
  /// A dataset of one string, fixed-length or variable-length (as h5py writes `str`).
  /// **Throws:** FileError when missing, not a string, or more than one.
  std::string read_text(std::string const& dataset) const;
  /// Rank-2/3/4 datasets checked against `expected` (entries may be any_extent).
  Matrix read_matrix(std::string const& dataset, std::vector<std::size_t> const& expected) const;
  /// \copydoc read_matrix
  Array3 read_array3(std::string const& dataset, std::vector<std::size_t> const& expected) const;
  /// \copydoc read_matrix
  Array4 read_array4(std::string const& dataset, std::vector<std::size_t> const& expected) const;

  /// /t3/tucker_cores/\<i\> (n_i, N_i) and /t3/tt_cores/\<i\> (r_i, n_i, r_{i+1}); d from /t3/tucker_cores.
  HostT3 read_t3() const;
  /// /frame/up_tucker|left_tt|right_tt|outer_tt/\<i\> (docs/math.md, the orthogonal frame), without centre
  /// factors.
  HostFrame read_frame() const;
  /// /variation/tucker/\<i\> (nO_i, N_i) and /variation/tt/\<i\> (rL_i, nU_i, rR_{i+1}) as a stack of length 1.
  HostVariation read_variation(HostFrame const& frame) const;
  /// /probes/w/\<i\>, /probes/p/\<i\> (W, N_i) and the attributes order and symmetric of /probes. `mode_shapes` (the
  /// N_i of the T3 or frame they go with) fixes d and the N_i; when empty both come from the file.
  ProbeSet read_probes(std::vector<std::size_t> const& mode_shapes = {}) const;
  /// Only the rows `select_rows(W)` of every /probes array, read as hyperslabs (a shard never reads the other
  /// shards' rows); every array's full shape is still checked. **Throws:** also FileError for rows beyond W.
  ProbeSet read_probes(std::vector<std::size_t> const& mode_shapes, RowSelector const& select_rows) const;
  /// `group`/\<i\> of shape (W, K+1, N_i) for i < mode_shapes.size(); W and K+1 may be any_extent (then taken from
  /// `group`/0). `mode_shapes` empty: d from the group and N_i from the file.
  JetStack read_jets(std::string const& group, std::vector<std::size_t> const& mode_shapes = {},
                     std::size_t n_probes = any_extent, std::size_t n_orders = any_extent) const;
  /// Only `rows` of every `group`/\<i\> (hyperslabs), after checking the full shape (W, K+1, N_i); W is required.
  /// **Throws:** also InvalidArgument for n_probes = any_extent.
  JetStack read_jets(std::string const& group, std::vector<std::size_t> const& mode_shapes, std::size_t n_probes,
                     std::size_t n_orders, ShardRange const& rows) const;
  /// Rows `rows` of axis 0 of a numeric dataset of rank >= 1 as a flat row-major vector; `shape` receives the
  /// dataset's full extents. **Throws:** FileError when missing, not numeric, or shorter than rows.end.
  std::vector<double> read_rows(std::string const& dataset, ShardRange const& rows,
                                std::vector<std::size_t>& shape) const;
  /// Only `rows` of a rank-2 float dataset checked against `expected` (entries may be any_extent), every entry
  /// finite. **Throws:** also FileError for rows beyond the dataset's.
  Matrix read_matrix_rows(std::string const& dataset, std::vector<std::size_t> const& expected,
                          ShardRange const& rows) const;
  /// Rows `rows` of axis 0 of an integer dataset of rank >= 1 (any width, signed or unsigned) as a flat row-major
  /// vector of int64; `shape` receives the dataset's full extents. `expected` (empty: any) is checked first.
  /// **Throws:** FileError when missing, not of an integer type, shorter than rows.end, or holding an unsigned
  /// value beyond the int64 range (naming its index).
  std::vector<std::int64_t> read_integer_rows(std::string const& dataset, std::vector<std::size_t> const& expected,
                                              ShardRange const& rows, std::vector<std::size_t>& shape) const;
  /// An integer attribute holding one value or a 1-D list of values (any integer type) as int64; empty when the
  /// object or the attribute is absent. **Throws:** FileError when it is not an integer list.
  std::optional<std::vector<std::int64_t>> read_integer_list_attribute(std::string const& object,
                                                                       std::string const& name) const;
  /// /grad (stack 1, stored without a stack axis) or, with `per_probe`, /grad_per_probe (stack W, stored with it).
  HostVariation read_gradient(HostFrame const& frame, bool per_probe) const;
  /// The root attributes d, W, K (each empty when absent).
  RootAttributes read_root_attributes() const;

 private:
  /// `group`/tucker/\<i\> and `group`/tt/\<i\> shaped by `frame`: stored without a stack axis (a stack of length 1),
  /// or with `per_probe` with a leading axis of W rows that every dataset shares.
  HostVariation read_variation_group(std::string const& group, HostFrame const& frame, bool per_probe) const;

  struct Impl;
  std::string path_;
  std::unique_ptr<Impl> impl_;
};

/// An HDF5 file written atomically: everything goes to "<path>.tmp-<pid>-<random>", and `commit()` renames it onto
/// `path` (a character device is written through instead).
/// Datasets are float64 (text: fixed-length strings), attributes int64 (d, W, K, order) or an h5py-style enum bool
/// (symmetric).
/// **Blocking:** yes (host I/O). **Throws:** FileError naming the file and the object when HDF5 fails;
/// InvalidArgument for a variation stack that does not fit its group.
class Writer {
 public:
  /// Creates the temporary file. **Throws:** FileError naming it when it cannot be created.
  explicit Writer(std::string path);
  /// Removes the temporary file unless `commit()` succeeded.
  ~Writer();
  Writer(Writer const&) = delete;
  Writer& operator=(Writer const&) = delete;

  std::string const& path() const { return path_; }                      ///< the file `commit()` renames onto
  std::string const& temporary_path() const { return temporary_path_; }  ///< the file written until `commit()`

  /// A float64 dataset of rank 1-4 from a flat row-major buffer; intermediate groups are created.
  void write_raw(std::string const& dataset, std::vector<std::size_t> const& shape, double const* data);
  /// A float64 dataset of a host View's extents and entries (rank 1-4, any layout); intermediate groups are created.
  template <class View>
  void write_view(std::string const& dataset, View const& view);
  /// A scalar dataset of one fixed-length UTF-8 string; intermediate groups are created.
  void write_text(std::string const& dataset, std::string const& text);
  /// A float64 dataset of rank 1-4 whose rows (axis 0) are written later, in blocks, by write_rows (a sharded
  /// output streamed through one rank).
  void create_dataset(std::string const& dataset, std::vector<std::size_t> const& shape);
  /// Rows [first_row, first_row + n_rows) of a dataset made by create_dataset, from a row-major buffer.
  void write_rows(std::string const& dataset, std::size_t first_row, std::size_t n_rows, double const* data);

  /// An int64 dataset of rank 1-4 from a flat row-major buffer; intermediate groups are created.
  void write_integers(std::string const& dataset, std::vector<std::size_t> const& shape, std::int64_t const* data);
  /// A 1-D int64 attribute `name` of the group `object` (created with its parents if needed).
  void write_integer_list_attribute(std::string const& object, std::string const& name,
                                    std::vector<std::int64_t> const& values);
  /// /t3/tucker_cores/\<i\> and /t3/tt_cores/\<i\> (the model.h5 layout, docs/file-format.md).
  void write_t3(HostT3 const& x);
  /// /frame/up_tucker|left_tt|right_tt|outer_tt/\<i\>.
  void write_frame(HostFrame const& frame);
  /// /variation: the stack must have length 1 (stored without the stack axis).
  void write_variation(HostVariation const& v);
  /// /probes/w/\<i\>, /probes/p/\<i\> and the attributes order and symmetric of /probes; with `repeat`, the attribute
  /// repeat and only the first mode of each label's modes. **Throws:** InvalidArgument for a repeat list of the wrong
  /// length, a negative label, or modes of one label whose arrays differ.
  void write_probes(ProbeSet const& probes);
  /// `group`/\<i\> = jets[i].
  void write_jets(std::string const& group, JetStack const& jets);
  /// /grad (stack length 1, stored without the stack axis) or, with `per_probe`, /grad_per_probe (stack axis W).
  void write_gradient(HostVariation const& v, bool per_probe);
  /// The root attributes d, W, K that are set.
  void write_root_attributes(RootAttributes const& attributes);

  /// Closes the file and renames it onto `path`. **Throws:** FileError when flushing or renaming fails (the
  /// temporary file is removed and `path` is left as it was).
  void commit();

 private:
  void write_variation_group(std::string const& group, HostVariation const& v, bool keep_stack_axis);
  struct Impl;
  std::string path_, temporary_path_;
  std::unique_ptr<Impl> impl_;
  bool committed_ = false;
  bool write_through_ = false;
};

template <class View>
void Writer::write_view(std::string const& dataset, View const& view) {
  static_assert(Kokkos::is_view<View>::value, "t3k::io::Writer::write_view: needs a Kokkos View");
  static_assert(std::is_same<typename View::non_const_value_type, double>::value,
                "t3k::io::Writer::write_view: files hold float64; copy other scalars to double first");
  static_assert(Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, typename View::memory_space>::accessible,
                "t3k::io::Writer::write_view: the View must be host-accessible");
  std::vector<std::size_t> shape(View::rank);
  for (std::size_t k = 0; k < shape.size(); ++k) shape[k] = view.extent(k);
  if (std::is_same<typename View::array_layout, Kokkos::LayoutRight>::value && view.span_is_contiguous()) {
    write_raw(dataset, shape, view.data());
    return;
  }
  // A subview or another layout: pack into a contiguous row-major buffer first.
  Kokkos::LayoutRight layout;
  for (std::size_t k = 0; k < shape.size(); ++k) layout.dimension[k] = shape[k];
  Kokkos::View<typename View::non_const_data_type, Kokkos::LayoutRight, HostSpace> packed(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::io::packed"), layout);
  Kokkos::deep_copy(packed, view);
  write_raw(dataset, shape, packed.data());
}

}  // namespace io
}  // namespace t3k
