/// \file hdf5_io.cpp
/// The HDF5 C API behind hdf5_io.hpp. Every HDF5 failure becomes a t3k::io::FileError naming the file and the
/// object; HDF5's own error-stack printing is switched off so that a caller (the t3k tool) reports exactly one line.

#include "t3k/io/hdf5_io.hpp"

#include "t3k/io/file_safety.hpp"

#include <hdf5.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

namespace t3k {
namespace io {
namespace {

/// The first sizeof(Signed) bytes of an attribute read in its native integer type, as a signed or unsigned value.
template <class Signed, class Unsigned>
std::int64_t integer_of(unsigned char const* raw, bool is_signed) {
  Signed s;
  Unsigned u;
  std::memcpy(&s, raw, sizeof s);
  std::memcpy(&u, raw, sizeof u);
  return is_signed ? std::int64_t(s) : std::int64_t(u);
}

/// HDF5 prints its error stack to stderr by default; T3K turns every failure into an exception instead.
void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

/// Owns one HDF5 identifier and closes it with the matching H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, -1);
      close_ = other.close_;
    }
    return *this;
  }
  Handle(Handle const&) = delete;
  Handle& operator=(Handle const&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now; returns false when HDF5 reports a failure (a write that could not be flushed).
  bool reset() {
    bool ok = true;
    if (id_ >= 0 && close_ != nullptr) ok = close_(id_) >= 0;
    id_ = -1;
    return ok;
  }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

std::string join_path(std::string const& group, std::size_t index) { return group + "/" + std::to_string(index); }

/// "[6 x 5]" with placeholders shown as the actual extent (so the message reads as a concrete expected shape).
std::string expected_string(std::vector<std::size_t> const& expected, std::vector<std::size_t> const& actual) {
  std::vector<std::size_t> shown = expected;
  std::string out = "[";
  for (std::size_t k = 0; k < shown.size(); ++k) {
    if (k) out += " x ";
    if (shown[k] == any_extent) {
      out += k < actual.size() ? std::to_string(actual[k]) : std::string("*");
    } else {
      out += std::to_string(shown[k]);
    }
  }
  return out + "]";
}

bool shape_matches(std::vector<std::size_t> const& actual, std::vector<std::size_t> const& expected) {
  if (actual.size() != expected.size()) return false;
  for (std::size_t k = 0; k < actual.size(); ++k) {
    if (expected[k] != any_extent && expected[k] != actual[k]) return false;
  }
  return true;
}

template <class ViewType>
ViewType view_from(std::string const& label, std::vector<std::size_t> const& shape, std::vector<double> const& data) {
  Kokkos::LayoutRight layout;
  for (std::size_t k = 0; k < shape.size(); ++k) layout.dimension[k] = shape[k];
  ViewType v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), layout);
  if (!data.empty()) std::memcpy(v.data(), data.data(), data.size() * sizeof(double));
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------- Reader

struct Reader::Impl {
  Handle file;

  std::string const* path = nullptr;

  [[noreturn]] void fail(std::string const& message) const { throw FileError(*path + ": " + message); }

  /// The first prefix of `object` ("/probes", "/probes/w", "/probes/w/0") that does not exist; empty if it exists.
  /// An input file must not make T3K read other files: a prefix that is an external or user-defined link, or a
  /// soft link whose target passes through one, is refused before anything follows it.
  std::string first_missing(std::string const& object, int depth = 0) const {
    std::size_t pos = 0;
    while (pos != std::string::npos) {
      pos = object.find('/', pos + 1);
      std::string const prefix = object.substr(0, pos);
      if (prefix.empty() || prefix == "/") continue;
      // H5Lexists follows only the prefixes before this one, which the loop has already checked.
      if (H5Lexists(file.get(), prefix.c_str(), H5P_DEFAULT) <= 0) return prefix;
      require_internal_link(prefix, depth);
    }
    return "";
  }

  /// Refuses a link `name` that leads outside the file (external, user-defined, or soft through one of those).
  void require_internal_link(std::string const& name, int depth) const {
    H5L_info_t info;
    if (H5Lget_info(file.get(), name.c_str(), &info, H5P_DEFAULT) < 0) fail("cannot read the link " + name);
    if (info.type == H5L_TYPE_HARD) return;
    if (info.type == H5L_TYPE_EXTERNAL) {
      fail(name + " is an external link to another file; inputs must hold their data themselves");
    }
    if (info.type != H5L_TYPE_SOFT) fail(name + " is a user-defined link; inputs must hold their data themselves");
    // HDF5 itself gives up after 16 nested soft links (H5L_NUM_LINKS); so does this check.
    if (depth >= 16) fail(name + " is a soft link nested too deeply");
    std::vector<char> target(info.u.val_size + 1, '\0');
    if (H5Lget_val(file.get(), name.c_str(), target.data(), target.size(), H5P_DEFAULT) < 0) {
      fail("cannot read the soft link " + name);
    }
    std::string path(target.data());
    if (path.empty() || path[0] != '/') path = name.substr(0, name.rfind('/') + 1) + path;
    if (path.size() > 1 && path[0] == '/' && path[1] != '/') first_missing(path, depth + 1);
  }

  void require(std::string const& object) const {
    std::string const missing = first_missing(object);
    if (missing.empty()) return;
    if (missing == object) fail(object + " is missing");
    fail(missing + " is missing (needed for " + object + ")");
  }

  Handle open_dataset(std::string const& name) const {
    require(name);
    H5O_info_t info;
#if H5_VERSION_GE(1, 12, 0)
    herr_t const got = H5Oget_info_by_name3(file.get(), name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#elif H5_VERSION_GE(1, 10, 3)
    herr_t const got = H5Oget_info_by_name2(file.get(), name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#else
    herr_t const got = H5Oget_info_by_name(file.get(), name.c_str(), &info, H5P_DEFAULT);
#endif
    if (got < 0) fail("cannot read " + name);
    if (info.type != H5O_TYPE_DATASET) fail(name + " is not a dataset");
    Handle ds(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!ds.valid()) fail("cannot open dataset " + name);
    // Raw data stored in other files (external storage, a virtual dataset's sources) would be read from paths the
    // file names: a FIFO there blocks the read forever, and any other file is read as if it were the input's.
    Handle dcpl(H5Dget_create_plist(ds.get()), H5Pclose);
    if (!dcpl.valid()) fail("cannot read the storage of " + name);
    if (H5Pget_external_count(dcpl.get()) > 0) {
      fail(name + " keeps its data in external files; inputs must hold their data themselves");
    }
    if (H5Pget_layout(dcpl.get()) == H5D_VIRTUAL) {
      fail(name + " is a virtual dataset (its data lies in other files); inputs must hold their data themselves");
    }
    return ds;
  }

  std::vector<std::size_t> dataset_shape(hid_t ds, std::string const& name) const {
    Handle space(H5Dget_space(ds), H5Sclose);
    if (!space.valid()) fail("cannot read the shape of " + name);
    int const rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) fail("cannot read the shape of " + name);
    std::vector<hsize_t> dims(std::size_t(rank) + 1, 0);
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    return std::vector<std::size_t>(dims.begin(), dims.begin() + rank);
  }

  /// The shape of `name` after checking it against `expected` (empty `expected`: any shape), without reading it.
  std::vector<std::size_t> checked_shape(std::string const& name, std::vector<std::size_t> const& expected) const {
    Handle ds = open_dataset(name);
    auto const shape = dataset_shape(ds.get(), name);
    if (!expected.empty() && !shape_matches(shape, expected)) {
      fail(name + " has shape " + impl::shape_string(shape) + ", expected " + expected_string(expected, shape));
    }
    return shape;
  }

  /// Reads `name` after checking it against `expected` (empty `expected`: any shape). With `rows`, only those rows
  /// of axis 0 are read (a hyperslab: a shard never reads the rows of the others) and `shape` is the file's shape.
  /// With `finite`, a NaN or infinite entry is refused naming its index (probes, jets and cores must be finite).
  std::vector<double> read(std::string const& name, std::vector<std::size_t> const* expected,
                           std::vector<std::size_t>& shape, ShardRange const* rows = nullptr,
                           bool finite = false) const {
    Handle ds = open_dataset(name);
    shape = dataset_shape(ds.get(), name);
    if (expected != nullptr && !shape_matches(shape, *expected)) {
      fail(name + " has shape " + impl::shape_string(shape) + ", expected " + expected_string(*expected, shape));
    }
    Handle type(H5Dget_type(ds.get()), H5Tclose);
    if (type.valid() && H5Tget_class(type.get()) == H5T_INTEGER && !shape.empty()) {
      return integers_as_doubles(name, rows != nullptr ? *rows : ShardRange{0, shape[0]});
    }
    // float64 and float32 convert exactly to double; other widths and byte orders are refused rather than
    // converted behind the user's back.
    bool const supported =
        type.valid() && (H5Tequal(type.get(), H5T_IEEE_F64LE) > 0 || H5Tequal(type.get(), H5T_IEEE_F32LE) > 0);
    if (!supported) {
      fail(name + " has element type " + type_text(type.get()) + ", expected float64, float32 or integers");
    }
    if (rows != nullptr && (shape.empty() || rows->begin > rows->end || rows->end > shape[0])) {
      fail(impl::concat("cannot read rows [", rows->begin, ", ", rows->end, ") of ", name, " of shape ",
                        impl::shape_string(shape)));
    }
    std::optional<std::uint64_t> total = 1;
    for (std::size_t k = 0; k < shape.size() && total; ++k) {
      total = checked_product(*total, k == 0 && rows != nullptr ? rows->size() : shape[k]);
    }
    std::optional<std::uint64_t> const bytes = total ? checked_product(*total, sizeof(double)) : std::nullopt;
    if (auto const shortfall = memory_shortfall(bytes)) {
      fail(name + " of shape " + impl::shape_string(shape) + " " + *shortfall);
    }
    std::vector<double> data(*total);
    if (*total == 0) return data;
    if (rows == nullptr) {
      if (H5Dread(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0) {
        fail("cannot read dataset " + name);
      }
      if (finite) require_finite(name, shape, data, 0);
      return data;
    }
    std::vector<hsize_t> start(shape.size(), 0), count(shape.begin(), shape.end());
    start[0] = rows->begin;
    count[0] = rows->size();
    Handle file_space(H5Dget_space(ds.get()), H5Sclose);
    Handle memory_space(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose);
    if (!file_space.valid() || !memory_space.valid() ||
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
        H5Dread(ds.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT, data.data()) < 0) {
      fail(impl::concat("cannot read rows [", rows->begin, ", ", rows->end, ") of dataset ", name));
    }
    if (finite) require_finite(name, shape, data, rows->begin);
    return data;
  }

  /// Rows `rows` of the integer dataset `name` as doubles: every integer up to 2^53 in magnitude is one exactly, a
  /// larger one is refused naming its index rather than rounded.
  std::vector<double> integers_as_doubles(std::string const& name, ShardRange const& rows) const {
    std::vector<std::size_t> shape;
    auto const integers = read_integers(name, {}, shape, rows);
    std::int64_t const exact = std::int64_t(1) << 53;
    std::vector<double> data(integers.size());
    for (std::size_t e = 0; e < integers.size(); ++e) {
      if (integers[e] > exact || integers[e] < -exact) {
        std::string index;
        std::size_t rem = e;
        for (std::size_t k = shape.size(); k-- > 1;) {
          index = ", " + std::to_string(rem % shape[k]) + index;
          rem /= shape[k];
        }
        fail(impl::concat(name, "[", rows.begin + rem, index, "] = ", integers[e],
                          " is past 2^53, where float64 cannot hold every integer; store the dataset as float64"));
      }
      data[e] = double(integers[e]);
    }
    return data;
  }

  /// The integers of `name` (all rows or `rows`), checked against `expected` (empty: any shape); any integer
  /// type converts exactly to int64 except unsigned values beyond its range, which are refused.
  std::vector<std::int64_t> read_integers(std::string const& name, std::vector<std::size_t> const& expected,
                                          std::vector<std::size_t>& shape, ShardRange const& rows) const {
    Handle ds = open_dataset(name);
    shape = dataset_shape(ds.get(), name);
    if (!expected.empty() && !shape_matches(shape, expected)) {
      fail(name + " has shape " + impl::shape_string(shape) + ", expected " + expected_string(expected, shape));
    }
    Handle type(H5Dget_type(ds.get()), H5Tclose);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_INTEGER) {
      fail(name + " has element type " + type_text(type.get()) +
           ", expected an integer type (int8 to int64, signed or "
           "unsigned)");
    }
    bool const is_unsigned = H5Tget_sign(type.get()) == H5T_SGN_NONE;
    if (shape.empty() || rows.begin > rows.end || rows.end > shape[0]) {
      fail(impl::concat("cannot read rows [", rows.begin, ", ", rows.end, ") of ", name, " of shape ",
                        impl::shape_string(shape)));
    }
    std::optional<std::uint64_t> total = rows.size();
    for (std::size_t k = 1; k < shape.size() && total; ++k) total = checked_product(*total, shape[k]);
    std::optional<std::uint64_t> const bytes = total ? checked_product(*total, sizeof(std::int64_t)) : std::nullopt;
    if (auto const shortfall = memory_shortfall(bytes)) {
      fail(name + " of shape " + impl::shape_string(shape) + " " + *shortfall);
    }
    std::vector<std::int64_t> data(*total);
    if (*total == 0) return data;
    std::vector<hsize_t> start(shape.size(), 0), count(shape.begin(), shape.end());
    start[0] = rows.begin;
    count[0] = rows.size();
    Handle file_space(H5Dget_space(ds.get()), H5Sclose);
    Handle memory_space(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose);
    // Unsigned data is read as uint64 so that a value past the int64 range is seen, not clipped by HDF5.
    hid_t const memory_type = is_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
    if (!file_space.valid() || !memory_space.valid() ||
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
        H5Dread(ds.get(), memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data.data()) < 0) {
      fail(impl::concat("cannot read rows [", rows.begin, ", ", rows.end, ") of dataset ", name));
    }
    if (!is_unsigned) return data;
    std::size_t const row_length = *total / rows.size();
    for (std::size_t e = 0; e < data.size(); ++e) {
      std::uint64_t u;
      std::memcpy(&u, &data[e], sizeof u);
      if (u > std::uint64_t(INT64_MAX)) {
        fail(impl::concat(name, "[", rows.begin + e / row_length, shape.size() > 1 ? ", " : "",
                          shape.size() > 1 ? std::to_string(e % row_length) : std::string(), "] = ", u,
                          " does not fit in a 64-bit signed integer"));
      }
    }
    return data;
  }

  /// Refuses the first non-finite entry of `data` (rows of `name` from `first_row` on), naming its index.
  void require_finite(std::string const& name, std::vector<std::size_t> const& shape, std::vector<double> const& data,
                      std::size_t first_row) const {
    for (std::size_t e = 0; e < data.size(); ++e) {
      if (std::isfinite(data[e])) continue;
      std::vector<std::size_t> index(shape.size(), 0);
      std::size_t rem = e;
      for (std::size_t k = shape.size(); k-- > 1;) {
        index[k] = rem % shape[k];
        rem /= shape[k];
      }
      if (!index.empty()) index[0] = rem + first_row;
      std::string where;
      for (std::size_t k = 0; k < index.size(); ++k) where += (k ? ", " : "") + std::to_string(index[k]);
      fail(name + "[" + where + "] is " +
           (std::isnan(data[e]) ? "NaN"
            : data[e] > 0       ? "+Inf"
                                : "-Inf") +
           "; every entry must be finite");
    }
  }

  static std::string type_text(hid_t type) {
    if (type < 0) return "unknown";
    H5T_class_t const cls = H5Tget_class(type);
    std::size_t const bits = 8 * H5Tget_size(type);
    std::string const order = H5Tget_order(type) == H5T_ORDER_BE ? "big-endian " : "";
    switch (cls) {
      case H5T_FLOAT:
        return order + "float" + std::to_string(bits) + (bits == 64 || bits == 32 ? " (not IEEE)" : "");
      case H5T_INTEGER:
        return order + (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(bits);
      case H5T_STRING:
        return "string";
      case H5T_COMPOUND:
        return "compound";
      case H5T_ENUM:
        return "enum";
      default:
        return "non-numeric";
    }
  }

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
                          std::size_t n_orders, ShardRange const* rows) const {
    std::size_t const d = mode_shapes.empty() ? group_size(group) : mode_shapes.size();
    if (d == 0) fail(group + " is empty");
    require_members(group, d, mode_shapes.empty() ? "" : " (the modes of the input)");
    JetStack jets;
    for (std::size_t i = 0; i < d; ++i) {
      std::string const name = join_path(group, i);
      std::vector<std::size_t> const expected{n_probes, n_orders, mode_shapes.empty() ? any_extent : mode_shapes[i]};
      std::vector<std::size_t> shape;
      auto const data = read(name, &expected, shape, rows, true);
      n_probes = shape[0];
      n_orders = shape[1];
      if (rows != nullptr) shape[0] = rows->size();
      jets.push_back(view_from<Array3>(name, shape, data));
    }
    return jets;
  }

  /// Reads `name` (shape `stored`) into a View whose shape has a leading stack axis of 1.
  template <class ViewType>
  ViewType read_with_unit_axis(std::string const& name, std::vector<std::size_t> const& stored) const {
    std::vector<std::size_t> shape;
    auto data = read(name, &stored, shape, nullptr, true);
    shape.insert(shape.begin(), 1);
    return view_from<ViewType>(name, shape, data);
  }

  std::size_t group_size(std::string const& group) const {
    require(group);
    Handle g(H5Gopen2(file.get(), group.c_str(), H5P_DEFAULT), H5Gclose);
    if (!g.valid()) fail(group + " is not a group");
    H5G_info_t info;
    if (H5Gget_info(g.get(), &info) < 0) fail("cannot list " + group);
    return std::size_t(info.nlinks);
  }

  void require_members(std::string const& group, std::size_t d, std::string const& reason) const {
    std::size_t const n = group_size(group);
    if (n != d) fail(group + " has " + std::to_string(n) + " members, expected d = " + std::to_string(d) + reason);
  }

  /// A 1-D (or scalar) integer attribute as int64 values; empty when absent.
  std::optional<std::vector<std::int64_t>> integer_list_attribute(std::string const& object,
                                                                  std::string const& name) const {
    if (!first_missing(object).empty()) return std::nullopt;
    htri_t const has = H5Aexists_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT);
    if (has <= 0) return std::nullopt;
    std::string const what = "attribute '" + name + "' of " + object;
    Handle attr(H5Aopen_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!attr.valid()) fail("cannot open " + what);
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    int const rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
    hssize_t const n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
    if (rank < 0 || rank > 1 || n < 0 || n > 1024) fail(what + " is not a list of integers");
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_INTEGER) {
      fail(what + " has element type " + type_text(type.get()) + ", expected integers");
    }
    std::vector<std::int64_t> values(static_cast<std::size_t>(n));
    if (n > 0 && H5Aread(attr.get(), H5T_NATIVE_INT64, values.data()) < 0) fail("cannot read " + what);
    return values;
  }

  /// Integer-like attribute (int64, any integer, or an HDF5 enum such as h5py's bool) as int64.
  std::optional<std::int64_t> integer_attribute(std::string const& object, std::string const& name) const {
    if (!first_missing(object).empty()) return std::nullopt;
    htri_t const has = H5Aexists_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT);
    if (has <= 0) return std::nullopt;
    std::string const what = "attribute '" + name + "' of " + object;
    Handle attr(H5Aopen_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!attr.valid()) fail("cannot open " + what);
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1) fail(what + " is not a single value");
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    H5T_class_t const cls = type.valid() ? H5Tget_class(type.get()) : H5T_NO_CLASS;
    if (cls == H5T_INTEGER) {
      std::int64_t value = 0;
      if (H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0) fail("cannot read " + what);
      return value;
    }
    if (cls == H5T_ENUM) {
      // HDF5 converts enums only to enums: read in the native form of the file's enum, then widen its base integer.
      Handle native(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose);
      Handle base(native.valid() ? H5Tget_super(native.get()) : -1, H5Tclose);
      std::size_t const size = native.valid() ? H5Tget_size(native.get()) : 0;
      if (!base.valid() || size == 0 || size > 8) fail("cannot read " + what);
      unsigned char raw[8] = {0};
      if (H5Aread(attr.get(), native.get(), raw) < 0) fail("cannot read " + what);
      bool const is_signed = H5Tget_sign(base.get()) == H5T_SGN_2;
      std::int64_t value = 0;
      switch (size) {
        case 1:
          value = integer_of<std::int8_t, std::uint8_t>(raw, is_signed);
          break;
        case 2:
          value = integer_of<std::int16_t, std::uint16_t>(raw, is_signed);
          break;
        case 4:
          value = integer_of<std::int32_t, std::uint32_t>(raw, is_signed);
          break;
        default:
          std::memcpy(&value, raw, 8);
      }
      return value;
    }
    fail(what + " is not an integer or boolean");
  }
};

Reader::Reader(std::string path) : path_(std::move(path)), impl_(std::make_unique<Impl>()) {
  silence_hdf5();
  impl_->path = &path_;
  // A FIFO would block HDF5's open forever, and a device would be read without end: regular files only.
  struct stat info;
  if (::stat(path_.c_str(), &info) != 0) {
    throw FileError("cannot open input file '" + path_ + "': " + std::strerror(errno));
  }
  if (S_ISDIR(info.st_mode)) throw FileError("cannot open input file '" + path_ + "': it is a directory");
  if (!S_ISREG(info.st_mode)) {
    throw FileError("cannot open input file '" + path_ + "': it is not a regular file (a FIFO or a device)");
  }
  impl_->file = Handle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!impl_->file.valid()) {
    throw FileError("cannot open input file '" + path_ + "': not a readable HDF5 file");
  }
}

Reader::~Reader() = default;

bool Reader::exists(std::string const& object) const { return impl_->first_missing(object).empty(); }

std::size_t Reader::group_size(std::string const& group) const { return impl_->group_size(group); }

std::vector<std::size_t> Reader::dataset_shape(std::string const& dataset) const {
  return impl_->checked_shape(dataset, {});
}

std::vector<double> Reader::read_raw(std::string const& dataset, std::vector<std::size_t>& shape) const {
  return impl_->read(dataset, nullptr, shape);
}

bool Reader::is_text(std::string const& dataset) const {
  Handle ds = impl_->open_dataset(dataset);
  Handle type(H5Dget_type(ds.get()), H5Tclose);
  return type.valid() && H5Tget_class(type.get()) == H5T_STRING;
}

std::string Reader::read_text(std::string const& dataset) const {
  Handle ds = impl_->open_dataset(dataset);
  Handle type(H5Dget_type(ds.get()), H5Tclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) {
    impl_->fail(dataset + " has element type " + Impl::type_text(type.get()) + ", expected a string");
  }
  Handle space(H5Dget_space(ds.get()), H5Sclose);
  if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1) {
    impl_->fail(dataset + " is not a single string");
  }
  if (H5Tis_variable_str(type.get()) > 0) {
    // As h5py writes str: one variable-length string.
    Handle memory(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory.get(), H5T_VARIABLE);
    char* text = nullptr;
    if (H5Dread(ds.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) < 0) {
      impl_->fail("cannot read dataset " + dataset);
    }
    std::string out = text != nullptr ? text : "";
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(memory.get(), space.get(), H5P_DEFAULT, &text);
#else
    H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, &text);
#endif
    return out;
  }
  std::size_t const size = H5Tget_size(type.get());
  std::string out(size, '\0');
  Handle memory(H5Tcopy(type.get()), H5Tclose);
  if (size > 0 && H5Dread(ds.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &out[0]) < 0) {
    impl_->fail("cannot read dataset " + dataset);
  }
  // Fixed-length strings are padded with NULs (or spaces, by H5T_STR_SPACEPAD) to their size.
  std::size_t end = out.find('\0');
  if (end == std::string::npos) end = out.size();
  if (H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD) {
    while (end > 0 && out[end - 1] == ' ') --end;
  }
  out.resize(end);
  return out;
}

Matrix Reader::read_matrix(std::string const& dataset, std::vector<std::size_t> const& expected) const {
  return impl_->read_view<Matrix>(dataset, expected);
}
Array3 Reader::read_array3(std::string const& dataset, std::vector<std::size_t> const& expected) const {
  return impl_->read_view<Array3>(dataset, expected);
}
Array4 Reader::read_array4(std::string const& dataset, std::vector<std::size_t> const& expected) const {
  return impl_->read_view<Array4>(dataset, expected);
}

HostT3 Reader::read_t3() const {
  std::size_t const d = impl_->group_size("/t3/tucker_cores");
  if (d == 0) impl_->fail("/t3/tucker_cores is empty; a T3 needs at least one mode");
  impl_->require_members("/t3/tt_cores", d, " (the number of /t3/tucker_cores)");
  std::vector<Matrix> us;
  std::vector<Array3> gs;
  std::size_t r = any_extent;
  for (std::size_t i = 0; i < d; ++i) {
    us.push_back(read_matrix(join_path("/t3/tucker_cores", i), {any_extent, any_extent}));
    gs.push_back(read_array3(join_path("/t3/tt_cores", i), {r, us.back().extent(0), any_extent}));
    r = gs.back().extent(2);
  }
  try {
    return HostT3(std::move(us), std::move(gs));
  } catch (std::runtime_error const& e) {
    impl_->fail(std::string("/t3: ") + e.what());
  }
}

HostFrame Reader::read_frame() const {
  std::size_t const d = impl_->group_size("/frame/up_tucker");
  if (d == 0) impl_->fail("/frame/up_tucker is empty; a frame needs at least one mode");
  for (char const* g : {"/frame/left_tt", "/frame/right_tt", "/frame/outer_tt"}) {
    impl_->require_members(g, d, " (the number of /frame/up_tucker)");
  }
  std::vector<Matrix> up;
  std::vector<Array3> left, right, outer;
  std::size_t rl = 1, rr = 1;  // rL_0 = rR_0 = 1
  for (std::size_t i = 0; i < d; ++i) {
    std::size_t const last = i + 1 == d ? 1 : any_extent;  // rL_d = rR_d = 1
    up.push_back(read_matrix(join_path("/frame/up_tucker", i), {any_extent, any_extent}));
    std::size_t const nu = up.back().extent(0);
    left.push_back(read_array3(join_path("/frame/left_tt", i), {rl, nu, last}));
    right.push_back(read_array3(join_path("/frame/right_tt", i), {rr, nu, last}));
    outer.push_back(read_array3(join_path("/frame/outer_tt", i), {rl, any_extent, right.back().extent(2)}));
    rl = left.back().extent(2);
    rr = right.back().extent(2);
  }
  try {
    return HostFrame(std::move(up), std::move(left), std::move(right), std::move(outer));
  } catch (std::runtime_error const& e) {
    impl_->fail(std::string("/frame: ") + e.what());
  }
}

HostVariation Reader::read_variation(HostFrame const& frame) const {
  std::size_t const d = frame.n_modes();
  impl_->require_members("/variation/tucker", d, " (the modes of the frame)");
  impl_->require_members("/variation/tt", d, " (the modes of the frame)");
  auto const big_n = frame.mode_shapes();
  auto const nu = frame.up_ranks();
  auto const no = frame.outer_ranks();
  auto const rl = frame.left_ranks();
  auto const rr = frame.right_ranks();
  HostVariation v;
  for (std::size_t i = 0; i < d; ++i) {
    v.tucker.push_back(impl_->read_with_unit_axis<Array3>(join_path("/variation/tucker", i), {no[i], big_n[i]}));
    v.tt.push_back(impl_->read_with_unit_axis<Array4>(join_path("/variation/tt", i), {rl[i], nu[i], rr[i + 1]}));
  }
  return v;
}

HostVariation Reader::read_gradient(HostFrame const& frame, bool per_probe) const {
  std::string const group = per_probe ? "/grad_per_probe" : "/grad";
  std::size_t const d = frame.n_modes();
  impl_->require_members(group + "/tucker", d, " (the modes of the frame)");
  impl_->require_members(group + "/tt", d, " (the modes of the frame)");
  auto const big_n = frame.mode_shapes();
  auto const nu = frame.up_ranks();
  auto const no = frame.outer_ranks();
  auto const rl = frame.left_ranks();
  auto const rr = frame.right_ranks();
  HostVariation v;
  std::size_t w = any_extent;
  for (std::size_t i = 0; i < d; ++i) {
    std::string const tucker = join_path(group + "/tucker", i);
    std::string const tt = join_path(group + "/tt", i);
    if (per_probe) {
      v.tucker.push_back(read_array3(tucker, {w, no[i], big_n[i]}));
      w = v.tucker.back().extent(0);
      v.tt.push_back(read_array4(tt, {w, rl[i], nu[i], rr[i + 1]}));
    } else {
      v.tucker.push_back(impl_->read_with_unit_axis<Array3>(tucker, {no[i], big_n[i]}));
      v.tt.push_back(impl_->read_with_unit_axis<Array4>(tt, {rl[i], nu[i], rr[i + 1]}));
    }
  }
  return v;
}

ProbeSet Reader::read_probes(std::vector<std::size_t> const& mode_shapes) const {
  return read_probes(mode_shapes, [](std::size_t n_rows) { return ShardRange{0, n_rows}; });
}

ProbeSet Reader::read_probes(std::vector<std::size_t> const& mode_shapes, RowSelector const& select_rows) const {
  std::size_t const d = mode_shapes.empty() ? impl_->group_size("/probes/w") : mode_shapes.size();
  if (d == 0) impl_->fail("/probes/w is empty");
  std::string const reason = mode_shapes.empty() ? " (the number of /probes/w)" : " (the modes of the input)";
  impl_->require_members("/probes/w", d, reason);
  impl_->require_members("/probes/p", d, reason);
  ProbeSet probes;
  // W is the row count of /probes/w/0; the rows to read are chosen once it is known.
  std::size_t const w = impl_->checked_shape(join_path("/probes/w", 0),
                                             {any_extent, mode_shapes.empty() ? any_extent : mode_shapes[0]})[0];
  ShardRange const rows = select_rows(w);
  probes.first_row = rows.begin;
  probes.file_rows = w;
  for (std::size_t i = 0; i < d; ++i) {
    std::size_t const n = mode_shapes.empty() ? any_extent : mode_shapes[i];
    probes.w.push_back(impl_->read_view<Matrix>(join_path("/probes/w", i), {w, n}, &rows));
    probes.p.push_back(impl_->read_view<Matrix>(join_path("/probes/p", i), {w, probes.w.back().extent(1)}, &rows));
  }
  auto const order = impl_->integer_attribute("/probes", "order");
  if (order) {
    if (*order < 0 || *order > std::int64_t(max_jet_order)) {
      impl_->fail("attribute 'order' of /probes is " + std::to_string(*order) + ", expected 0 to " +
                  std::to_string(max_jet_order));
    }
    probes.order = std::size_t(*order);
  }
  auto const symmetric = impl_->integer_attribute("/probes", "symmetric");
  if (symmetric && *symmetric != 0 && *symmetric != 1) {
    impl_->fail("attribute 'symmetric' of /probes is " + std::to_string(*symmetric) + ", expected 0 or 1");
  }
  probes.symmetric = symmetric && *symmetric != 0;
  return probes;
}

JetStack Reader::read_jets(std::string const& group, std::vector<std::size_t> const& mode_shapes, std::size_t n_probes,
                           std::size_t n_orders) const {
  return impl_->read_jet_stack(group, mode_shapes, n_probes, n_orders, nullptr);
}

JetStack Reader::read_jets(std::string const& group, std::vector<std::size_t> const& mode_shapes, std::size_t n_probes,
                           std::size_t n_orders, ShardRange const& rows) const {
  if (n_probes == any_extent) {
    throw InvalidArgument("t3k::io::Reader::read_jets: reading rows needs the number of probes W of " + group);
  }
  return impl_->read_jet_stack(group, mode_shapes, n_probes, n_orders, &rows);
}

std::vector<double> Reader::read_rows(std::string const& dataset, ShardRange const& rows,
                                      std::vector<std::size_t>& shape) const {
  return impl_->read(dataset, nullptr, shape, &rows);
}

Matrix Reader::read_matrix_rows(std::string const& dataset, std::vector<std::size_t> const& expected,
                                ShardRange const& rows) const {
  return impl_->read_view<Matrix>(dataset, expected, &rows);
}

std::vector<std::int64_t> Reader::read_integer_rows(std::string const& dataset,
                                                    std::vector<std::size_t> const& expected, ShardRange const& rows,
                                                    std::vector<std::size_t>& shape) const {
  return impl_->read_integers(dataset, expected, shape, rows);
}

std::optional<std::vector<std::int64_t>> Reader::read_integer_list_attribute(std::string const& object,
                                                                             std::string const& name) const {
  return impl_->integer_list_attribute(object, name);
}

RootAttributes Reader::read_root_attributes() const {
  RootAttributes a;
  a.d = impl_->integer_attribute("/", "d");
  a.w = impl_->integer_attribute("/", "W");
  a.k = impl_->integer_attribute("/", "K");
  return a;
}

// ---------------------------------------------------------------------------------------------------------- Writer

struct Writer::Impl {
  Handle file;
  std::string const* path = nullptr;

  [[noreturn]] void fail(std::string const& message) const { throw FileError(*path + ": " + message); }

  /// Opens (creating with its parents if needed) the group at `group`.
  Handle group(std::string const& name) const {
    if (name == "/" || H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) > 0) {
      Handle g(H5Gopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Gclose);
      if (!g.valid()) fail("cannot open group " + name);
      return g;
    }
    Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    Handle g(H5Gcreate2(file.get(), name.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!g.valid()) fail("cannot create group " + name);
    return g;
  }

  void write_attribute(std::string const& object, std::string const& name, hid_t file_type, hid_t memory_type,
                       void const* value) const {
    Handle g = group(object);
    if (H5Aexists(g.get(), name.c_str()) > 0) H5Adelete(g.get(), name.c_str());
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle attr(H5Acreate2(g.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!attr.valid() || H5Awrite(attr.get(), memory_type, value) < 0) {
      fail("cannot write attribute '" + name + "' of " + object);
    }
  }

  void write_int64(std::string const& object, std::string const& name, std::int64_t value) const {
    write_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
  }

  /// A bool the way h5py and numpy store it: an enum {FALSE = 0, TRUE = 1} over int8.
  void write_bool(std::string const& object, std::string const& name, bool value) const {
    Handle type(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose);
    std::int8_t const no = 0, yes = 1;
    H5Tenum_insert(type.get(), "FALSE", &no);
    H5Tenum_insert(type.get(), "TRUE", &yes);
    std::int8_t const v = value ? 1 : 0;
    write_attribute(object, name, type.get(), type.get(), &v);
  }
};

Writer::Writer(std::string path) : path_(std::move(path)), impl_(std::make_unique<Impl>()) {
  silence_hdf5();
  impl_->path = &temporary_path_;
  if (output_target(path_, "output") == OutputTarget::write_through) {
    // A character device (/dev/null): the file is built in memory and written through at commit; nothing is
    // created or renamed next to the device.
    write_through_ = true;
    temporary_path_ = path_;
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), std::size_t(1) << 20, 0) < 0) {
      throw FileError("cannot prepare output '" + path_ + "'");
    }
    impl_->file = Handle(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
    if (!impl_->file.valid()) throw FileError("cannot create output '" + path_ + "' in memory");
    return;
  }
  remove_stale_temporaries(path_);
  // H5F_ACC_EXCL opens with O_CREAT | O_EXCL: an existing name, a symbolic link included, is never opened.
  for (int attempt = 0; attempt < 16 && !impl_->file.valid(); ++attempt) {
    temporary_path_ = temporary_name(path_);
    impl_->file = Handle(H5Fcreate(temporary_path_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    struct stat info;
    if (!impl_->file.valid() && ::lstat(temporary_path_.c_str(), &info) != 0) break;  // failed for another reason
  }
  if (!impl_->file.valid()) {
    throw FileError("cannot create output file '" + temporary_path_ + "' (for '" + path_ +
                    "'): " + std::strerror(errno));
  }
}

Writer::~Writer() {
  if (committed_) return;
  impl_->file.reset();
  if (!write_through_) std::remove(temporary_path_.c_str());
}

void Writer::write_raw(std::string const& dataset, std::vector<std::size_t> const& shape, double const* data) {
  create_dataset(dataset, shape);
  std::size_t total = 1;
  for (auto e : shape) total *= e;
  if (total > 0) write_rows(dataset, 0, shape[0], data);
}

void Writer::write_text(std::string const& dataset, std::string const& text) {
  if (committed_) throw FileError(path_ + ": already committed; cannot write " + dataset);
  // A fixed-length UTF-8 string of the text's size (at least 1: HDF5 has no empty fixed-length string type).
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!type.valid() || H5Tset_size(type.get(), std::max<std::size_t>(text.size(), 1)) < 0 ||
      H5Tset_strpad(type.get(), H5T_STR_NULLPAD) < 0 || H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0) {
    impl_->fail("cannot create the string type of " + dataset);
  }
  std::string padded = text;
  padded.resize(std::max<std::size_t>(text.size(), 1), '\0');
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle ds(
      H5Dcreate2(impl_->file.get(), dataset.c_str(), type.get(), space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!ds.valid() || H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, padded.data()) < 0) {
    impl_->fail("cannot write dataset " + dataset);
  }
}

void Writer::create_dataset(std::string const& dataset, std::vector<std::size_t> const& shape) {
  if (committed_) throw FileError(path_ + ": already committed; cannot write " + dataset);
  if (shape.empty() || shape.size() > 4) {
    impl_->fail("cannot write " + dataset + " of rank " + std::to_string(shape.size()) + " (ranks 1-4 only)");
  }
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle ds(
      H5Dcreate2(impl_->file.get(), dataset.c_str(), H5T_IEEE_F64LE, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!ds.valid()) impl_->fail("cannot create dataset " + dataset);
}

void Writer::write_rows(std::string const& dataset, std::size_t first_row, std::size_t n_rows, double const* data) {
  if (committed_) throw FileError(path_ + ": already committed; cannot write " + dataset);
  if (n_rows == 0) return;
  Handle ds(H5Dopen2(impl_->file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) impl_->fail("cannot open dataset " + dataset + " (create it first)");
  Handle file_space(H5Dget_space(ds.get()), H5Sclose);
  int const rank = file_space.valid() ? H5Sget_simple_extent_ndims(file_space.get()) : -1;
  if (rank < 1) impl_->fail("cannot read the shape of " + dataset);
  std::vector<hsize_t> dims(std::size_t(rank), 0);
  H5Sget_simple_extent_dims(file_space.get(), dims.data(), nullptr);
  if (first_row + n_rows > dims[0]) {
    impl_->fail(impl::concat("cannot write rows [", first_row, ", ", first_row + n_rows, ") of ", dataset, " of ",
                             dims[0], " rows"));
  }
  std::vector<hsize_t> start(dims.size(), 0), count(dims);
  start[0] = first_row;
  count[0] = n_rows;
  Handle memory_space(H5Screate_simple(rank, count.data(), nullptr), H5Sclose);
  if (!memory_space.valid() ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
      H5Dwrite(ds.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT, data) < 0) {
    impl_->fail(impl::concat("cannot write rows [", first_row, ", ", first_row + n_rows, ") of dataset ", dataset));
  }
}

void Writer::write_integers(std::string const& dataset, std::vector<std::size_t> const& shape,
                            std::int64_t const* data) {
  if (committed_) throw FileError(path_ + ": already committed; cannot write " + dataset);
  if (shape.empty() || shape.size() > 4) {
    impl_->fail("cannot write " + dataset + " of rank " + std::to_string(shape.size()) + " (ranks 1-4 only)");
  }
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle ds(
      H5Dcreate2(impl_->file.get(), dataset.c_str(), H5T_STD_I64LE, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!ds.valid()) impl_->fail("cannot create dataset " + dataset);
  std::size_t total = 1;
  for (auto e : shape) total *= e;
  if (total > 0 && H5Dwrite(ds.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    impl_->fail("cannot write dataset " + dataset);
  }
}

void Writer::write_integer_list_attribute(std::string const& object, std::string const& name,
                                          std::vector<std::int64_t> const& values) {
  Handle g = impl_->group(object);
  if (H5Aexists(g.get(), name.c_str()) > 0) H5Adelete(g.get(), name.c_str());
  hsize_t const n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle attr(H5Acreate2(g.get(), name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.valid() || (n > 0 && H5Awrite(attr.get(), H5T_NATIVE_INT64, values.data()) < 0)) {
    impl_->fail("cannot write attribute '" + name + "' of " + object);
  }
}

void Writer::write_t3(HostT3 const& x) {
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    write_view(join_path("/t3/tucker_cores", i), x.tucker_core(i));
    write_view(join_path("/t3/tt_cores", i), x.tt_core(i));
  }
}

void Writer::write_frame(HostFrame const& frame) {
  for (std::size_t i = 0; i < frame.n_modes(); ++i) {
    write_view(join_path("/frame/up_tucker", i), frame.up_tucker(i));
    write_view(join_path("/frame/left_tt", i), frame.left_tt(i));
    write_view(join_path("/frame/right_tt", i), frame.right_tt(i));
    write_view(join_path("/frame/outer_tt", i), frame.outer_tt(i));
  }
}

void Writer::write_variation_group(std::string const& group, HostVariation const& v, bool keep_stack_axis) {
  if (v.tucker.size() != v.tt.size()) {
    throw InvalidArgument(
        impl::concat("t3k::io::Writer: ", group, " has ", v.tucker.size(), " Tucker and ", v.tt.size(), " TT cores"));
  }
  if (!keep_stack_axis && v.n_stack() != 1) {
    throw InvalidArgument(
        impl::concat("t3k::io::Writer: ", group, " holds one variation, got a stack of ", v.n_stack()));
  }
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    std::string const tucker = join_path(group + "/tucker", i);
    std::string const tt = join_path(group + "/tt", i);
    if (keep_stack_axis) {
      write_view(tucker, v.tucker[i]);
      write_view(tt, v.tt[i]);
    } else {
      write_view(tucker, Kokkos::subview(v.tucker[i], 0, Kokkos::ALL, Kokkos::ALL));
      write_view(tt, Kokkos::subview(v.tt[i], 0, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
    }
  }
}

void Writer::write_variation(HostVariation const& v) { write_variation_group("/variation", v, false); }

void Writer::write_gradient(HostVariation const& v, bool per_probe) {
  write_variation_group(per_probe ? "/grad_per_probe" : "/grad", v, per_probe);
}

void Writer::write_probes(ProbeSet const& probes) {
  for (std::size_t i = 0; i < probes.n_modes(); ++i) {
    write_view(join_path("/probes/w", i), probes.w[i]);
    write_view(join_path("/probes/p", i), probes.p[i]);
  }
  if (probes.order) impl_->write_int64("/probes", "order", std::int64_t(*probes.order));
  impl_->write_bool("/probes", "symmetric", probes.symmetric);
}

void Writer::write_jets(std::string const& group, JetStack const& jets) {
  for (std::size_t i = 0; i < jets.size(); ++i) write_view(join_path(group, i), jets[i]);
}

void Writer::write_root_attributes(RootAttributes const& attributes) {
  if (attributes.d) impl_->write_int64("/", "d", *attributes.d);
  if (attributes.w) impl_->write_int64("/", "W", *attributes.w);
  if (attributes.k) impl_->write_int64("/", "K", *attributes.k);
}

void Writer::commit() {
  if (committed_) return;
  if (write_through_) {
    if (H5Fflush(impl_->file.get(), H5F_SCOPE_GLOBAL) < 0) impl_->fail("cannot flush the output file");
    ssize_t const size = H5Fget_file_image(impl_->file.get(), nullptr, 0);
    if (size < 0) impl_->fail("cannot flush the output file");
    std::vector<char> image(std::size_t(size) + 1);
    if (H5Fget_file_image(impl_->file.get(), image.data(), std::size_t(size)) < 0) {
      impl_->fail("cannot flush the output file");
    }
    impl_->file.reset();
    std::FILE* device = std::fopen(path_.c_str(), "wb");
    bool ok = device != nullptr && std::fwrite(image.data(), 1, std::size_t(size), device) == std::size_t(size);
    if (device != nullptr && std::fclose(device) != 0) ok = false;
    if (!ok) throw FileError("cannot write '" + path_ + "': " + std::strerror(errno));
    committed_ = true;
    return;
  }
  if (H5Fflush(impl_->file.get(), H5F_SCOPE_GLOBAL) < 0 || !impl_->file.reset()) {
    impl_->fail("cannot flush the output file");
  }
  if (std::rename(temporary_path_.c_str(), path_.c_str()) != 0) {
    int const error = errno;
    std::remove(temporary_path_.c_str());
    throw FileError("cannot rename '" + temporary_path_ + "' to '" + path_ + "': " + std::strerror(error));
  }
  committed_ = true;
}

}  // namespace io
}  // namespace t3k
