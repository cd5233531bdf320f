#pragma once
/// \file hdf5_reader_impl.hpp
/// Private to the HDF5 layer's reader (hdf5_reader.cpp defines it, hdf5_read_objects.cpp uses it): the checked
/// access to one open file's links, datasets and attributes behind Reader.

#include "t3k/io/impl/hdf5_handle.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace t3k {
namespace io {

/// A dataset's name and shape, for checks of two datasets that must agree.
struct Shaped {
  std::string name;
  std::vector<std::size_t> shape;
};

struct Reader::Impl {
  Handle file;
  std::string const* path = nullptr;  ///< the Reader's path, for messages

  /// Throws FileError "<path>: <message>".
  [[noreturn]] void fail(std::string const& message) const { throw FileError(*path + ": " + message); }

  /// The first prefix of `object` ("/probes", "/probes/w", "/probes/w/0") that does not exist; empty if it exists.
  /// An input file must not make T3K read other files: a prefix that is an external or user-defined link, or a
  /// soft link whose target passes through one, is refused before anything follows it.
  std::string first_missing(std::string const& object, int depth = 0) const;

  /// Refuses a link `name` that leads outside the file (external, user-defined, or soft through one of those).
  void require_internal_link(std::string const& name, int depth) const;

  /// Refuses a missing `object`, naming the first missing prefix.
  void require(std::string const& object) const;

  /// Opens the dataset `name`, refusing one whose data lies in other files.
  Handle open_dataset(std::string const& name) const;

  /// The extents of the open dataset `ds`.
  std::vector<std::size_t> dataset_shape(hid_t ds, std::string const& name) const;

  /// The shape of `name` after checking it against `expected` (empty `expected`: any shape), without reading it.
  std::vector<std::size_t> checked_shape(std::string const& name, std::vector<std::size_t> const& expected) const;

  /// Reads `name` after checking it against `expected` (empty `expected`: any shape). With `rows`, only those rows
  /// of axis 0 are read (a hyperslab: a shard never reads the rows of the others) and `shape` is the file's shape.
  /// With `finite`, a NaN or infinite entry is refused naming its index (probes, jets and cores must be finite).
  std::vector<double> read(std::string const& name, std::vector<std::size_t> const* expected,
                           std::vector<std::size_t>& shape, ShardRange const* rows = nullptr,
                           bool finite = false) const;

  /// Rows `rows` of the integer dataset `name` as doubles: every integer up to 2^53 in magnitude is one exactly, a
  /// larger one is refused naming its index rather than rounded.
  std::vector<double> integers_as_doubles(std::string const& name, ShardRange const& rows) const;

  /// The integers of `name` (all rows or `rows`), checked against `expected` (empty: any shape); any integer
  /// type converts exactly to int64 except unsigned values beyond its range, which are refused.
  std::vector<std::int64_t> read_integers(std::string const& name, std::vector<std::size_t> const& expected,
                                          std::vector<std::size_t>& shape, ShardRange const& rows) const;

  /// Refuses the first non-finite entry of `data` (rows of `name` from `first_row` on), naming its index.
  void require_finite(std::string const& name, std::vector<std::size_t> const& shape, std::vector<double> const& data,
                      std::size_t first_row) const;

  /// An element type as a message names it ("big-endian float64", "int32", "string").
  static std::string type_text(hid_t type);

  /// A View of `name` (checked against `expected`), or of its `rows` only.
  template <class ViewType>
  ViewType read_view(std::string const& name, std::vector<std::size_t> const& expected,
                     ShardRange const* rows = nullptr) const {
    std::vector<std::size_t> shape;
    auto data = read(name, &expected, shape, rows, true);
    if (rows != nullptr) shape[0] = rows->size();
    return view_from<ViewType>(name, shape, data);
  }

  /// `group`/<i> of shape (W, K+1, N_i) for the modes of `mode_shapes` (empty: d from the group, N_i from the
  /// file), all rows or only `rows`. W and K+1 may be any_extent: then the first member's are required of the rest
  /// (K+1 comes from the file's shape, so a shard of no rows learns it too).
  JetStack read_jet_stack(std::string const& group, std::vector<std::size_t> const& mode_shapes, std::size_t n_probes,
                          std::size_t n_orders, ShardRange const* rows) const;

  /// Reads `name` (shape `stored`) into a View whose shape has a leading stack axis of 1.
  template <class ViewType>
  ViewType read_with_unit_axis(std::string const& name, std::vector<std::size_t> const& stored) const {
    std::vector<std::size_t> shape;
    auto data = read(name, &stored, shape, nullptr, true);
    shape.insert(shape.begin(), 1);
    return view_from<ViewType>(name, shape, data);
  }

  /// The number of members of `group`.
  std::size_t group_size(std::string const& group) const;

  /// Refuses a `group` that does not have `d` members; `reason` says where d comes from.
  void require_members(std::string const& group, std::size_t d, std::string const& reason) const;

  /// The attribute `name` of `object`, open; nullopt when the object or the attribute is absent. `what` receives
  /// "attribute 'name' of object" for messages.
  std::optional<Handle> open_attribute(std::string const& object, std::string const& name, std::string& what) const;

  /// A 1-D (or scalar) integer attribute as int64 values; empty when absent.
  std::optional<std::vector<std::int64_t>> integer_list_attribute(std::string const& object,
                                                                  std::string const& name) const;

  /// Refuses `a` and `b` unless axis `axis_a` of `a` equals axis `axis_b` of `b`, naming both datasets and both
  /// axes, since neither is known to be the wrong one: "/t3/tucker_cores/2 has 5 rows but /t3/tt_cores/2 has middle
  /// extent 4" (hdf5_read_objects.cpp).
  void require_agree(Shaped const& a, std::size_t axis_a, Shaped const& b, std::size_t axis_b) const;

  /// The shape of the probe matrix `name` of mode `mode`, which must be [W x N_i]: W from /probes/w/0 (`w0`;
  /// any_extent while reading it) and N_i from the caller (any_extent when unknown). A refusal names where W comes
  /// from (hdf5_read_objects.cpp).
  std::vector<std::size_t> probe_matrix_shape(std::string const& name, std::size_t w, std::size_t n, std::size_t mode,
                                              std::string const& w0) const;

  /// Integer-like attribute (int64, any integer, or an HDF5 enum such as h5py's bool) as int64.
  std::optional<std::int64_t> integer_attribute(std::string const& object, std::string const& name) const;
};

}  // namespace io
}  // namespace t3k
