/// \file hdf5_reader.cpp
/// The HDF5 C API behind io::Reader's access to one file: links that must stay inside it, datasets checked for
/// shape, element type, finiteness and memory before they are read, text and attributes. Every HDF5 failure becomes a
/// FileError naming the file and the object; HDF5's own error-stack printing is off, so a caller reports one line.
/// The T3s, frames, probes and jets read from these checked pieces: hdf5_read_objects.cpp.

#include "t3k/io/hdf5_io.hpp"
#include "t3k/io/impl/hdf5_reader_impl.hpp"

#include "t3k/io/file_safety.hpp"

#include <hdf5.h>

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
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

}  // namespace

// ---------------------------------------------------------------------------------------------------- Reader::Impl

std::string Reader::Impl::first_missing(std::string const& object, int depth) const {
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

void Reader::Impl::require_internal_link(std::string const& name, int depth) const {
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

void Reader::Impl::require(std::string const& object) const {
  std::string const missing = first_missing(object);
  if (missing.empty()) return;
  if (missing == object) fail(object + " is missing");
  fail(missing + " is missing (needed for " + object + ")");
}

Handle Reader::Impl::open_dataset(std::string const& name) const {
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

std::vector<std::size_t> Reader::Impl::dataset_shape(hid_t ds, std::string const& name) const {
  Handle space(H5Dget_space(ds), H5Sclose);
  if (!space.valid()) fail("cannot read the shape of " + name);
  int const rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail("cannot read the shape of " + name);
  std::vector<hsize_t> dims(std::size_t(rank) + 1, 0);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return std::vector<std::size_t>(dims.begin(), dims.begin() + rank);
}

std::vector<std::size_t> Reader::Impl::checked_shape(std::string const& name,
                                                     std::vector<std::size_t> const& expected) const {
  Handle ds = open_dataset(name);
  auto const shape = dataset_shape(ds.get(), name);
  if (!expected.empty() && !shape_matches(shape, expected)) {
    fail(name + " has shape " + impl::shape_string(shape) + ", expected " + expected_string(expected, shape));
  }
  return shape;
}

std::vector<double> Reader::Impl::read(std::string const& name, std::vector<std::size_t> const* expected,
                                       std::vector<std::size_t>& shape, ShardRange const* rows, bool finite) const {
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

std::vector<double> Reader::Impl::integers_as_doubles(std::string const& name, ShardRange const& rows) const {
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

std::vector<std::int64_t> Reader::Impl::read_integers(std::string const& name, std::vector<std::size_t> const& expected,
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

void Reader::Impl::require_finite(std::string const& name, std::vector<std::size_t> const& shape,
                                  std::vector<double> const& data, std::size_t first_row) const {
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

std::string Reader::Impl::type_text(hid_t type) {
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

JetStack Reader::Impl::read_jet_stack(std::string const& group, std::vector<std::size_t> const& mode_shapes,
                                      std::size_t n_probes, std::size_t n_orders, ShardRange const* rows) const {
  std::size_t const d = mode_shapes.empty() ? group_size(group) : mode_shapes.size();
  if (d == 0) fail(group + " is empty");
  require_members(group, d, mode_shapes.empty() ? "" : " (the modes of the input)");
  // What the caller leaves open is taken from <group>/0; a later member that disagrees is told so, naming both.
  std::string const from_first = n_probes == any_extent && n_orders == any_extent ? "W and K+1"
                                 : n_probes == any_extent                         ? "W"
                                 : n_orders == any_extent                         ? "K+1"
                                                                                  : "";
  JetStack jets;
  for (std::size_t i = 0; i < d; ++i) {
    std::string const name = join_path(group, i);
    std::vector<std::size_t> const expected{n_probes, n_orders, mode_shapes.empty() ? any_extent : mode_shapes[i]};
    if (i > 0 && !from_first.empty()) {
      auto const found = checked_shape(name, {any_extent, any_extent, expected[2]});
      if (!shape_matches(found, expected)) {
        fail(name + " has shape " + impl::shape_string(found) + ", expected " + expected_string(expected, found) +
             " (" + from_first + " as in " + join_path(group, 0) + ")");
      }
    }
    std::vector<std::size_t> shape;
    auto const data = read(name, &expected, shape, rows, true);
    n_probes = shape[0];
    n_orders = shape[1];
    if (rows != nullptr) shape[0] = rows->size();
    jets.push_back(view_from<Array3>(name, shape, data));
  }
  return jets;
}

std::size_t Reader::Impl::group_size(std::string const& group) const {
  require(group);
  Handle g(H5Gopen2(file.get(), group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail(group + " is not a group");
  H5G_info_t info;
  if (H5Gget_info(g.get(), &info) < 0) fail("cannot list " + group);
  return std::size_t(info.nlinks);
}

void Reader::Impl::require_members(std::string const& group, std::size_t d, std::string const& reason) const {
  std::size_t const n = group_size(group);
  if (n != d) fail(group + " has " + std::to_string(n) + " members, expected d = " + std::to_string(d) + reason);
}

std::optional<Handle> Reader::Impl::open_attribute(std::string const& object, std::string const& name,
                                                   std::string& what) const {
  if (!first_missing(object).empty()) return std::nullopt;
  htri_t const has = H5Aexists_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT);
  if (has <= 0) return std::nullopt;
  what = "attribute '" + name + "' of " + object;
  Handle attr(H5Aopen_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) fail("cannot open " + what);
  return attr;
}

std::optional<std::vector<std::int64_t>> Reader::Impl::integer_list_attribute(std::string const& object,
                                                                              std::string const& name) const {
  std::string what;
  auto opened = open_attribute(object, name, what);
  if (!opened) return std::nullopt;
  Handle const& attr = *opened;
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

std::optional<std::int64_t> Reader::Impl::integer_attribute(std::string const& object, std::string const& name) const {
  std::string what;
  auto opened = open_attribute(object, name, what);
  if (!opened) return std::nullopt;
  Handle const& attr = *opened;
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

// ---------------------------------------------------------------------------------------------------------- Reader

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

}  // namespace io
}  // namespace t3k
