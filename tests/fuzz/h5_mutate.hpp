#pragma once
// Edits of HDF5 files in place, for the tests that feed the t3k tool hostile inputs: a NaN in a dataset, another
// element type or byte order, another (possibly huge, never written) shape, a missing object, a bad attribute, or a
// dataset whose data lies in another file (external storage, an external link, a virtual dataset).

#include <hdf5.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace t3k_test {
namespace h5 {

class File {
 public:
  /// Opens `path` for editing, or only for reading (the shipped data files, which other tests read at the same
  /// time: HDF5 refuses a file for writing while another process has it open).
  explicit File(std::string const& path, bool writable = true) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    id_ = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id_ < 0) throw std::runtime_error("cannot open " + path);
  }
  ~File() {
    if (id_ >= 0) H5Fclose(id_);
  }
  File(File const&) = delete;
  File& operator=(File const&) = delete;
  hid_t id() const { return id_; }

 private:
  hid_t id_ = -1;
};

#if H5_VERSION_GE(1, 12, 0)
using ObjectInfo = H5O_info2_t;
#else
using ObjectInfo = H5O_info_t;
#endif

inline herr_t collect_dataset(hid_t, char const* name, ObjectInfo const* info, void* data) {
  if (info->type == H5O_TYPE_DATASET) static_cast<std::vector<std::string>*>(data)->push_back("/" + std::string(name));
  return 0;
}

/// Every dataset of the file, by absolute path.
inline std::vector<std::string> datasets(std::string const& path) {
  File f(path, false);
  std::vector<std::string> out;
#if H5_VERSION_GE(1, 12, 0)
  H5Ovisit3(f.id(), H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &out, H5O_INFO_BASIC);
#elif H5_VERSION_GE(1, 10, 3)
  H5Ovisit2(f.id(), H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &out, H5O_INFO_BASIC);
#else
  H5Ovisit(f.id(), H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &out);
#endif
  return out;
}

inline std::vector<hsize_t> shape_of(hid_t ds) {
  hid_t const space = H5Dget_space(ds);
  int const rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(rank > 0 ? std::size_t(rank) : 0);
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  H5Sclose(space);
  return dims;
}

/// The dataset's values as doubles, and its shape.
inline std::vector<double> read(hid_t file, std::string const& name, std::vector<hsize_t>& dims) {
  hid_t const ds = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (ds < 0) throw std::runtime_error("no dataset " + name);
  dims = shape_of(ds);
  std::size_t total = 1;
  for (auto e : dims) total *= e;
  std::vector<double> data(total);
  if (total > 0) H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data());
  H5Dclose(ds);
  return data;
}

/// Replaces `name` by a dataset of `file_type` and shape `dims`; writes `data` (converted) unless it is empty.
inline void recreate(hid_t file, std::string const& name, hid_t file_type, std::vector<hsize_t> const& dims,
                     std::vector<double> const& data) {
  H5Ldelete(file, name.c_str(), H5P_DEFAULT);
  hid_t const space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t const lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t const ds = H5Dcreate2(file, name.c_str(), file_type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  if (ds >= 0 && !data.empty()) H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data());
  if (ds >= 0) H5Dclose(ds);
  H5Pclose(lcpl);
  H5Sclose(space);
}

/// Sets entry `index` (flat, row-major) of a dataset, keeping its type.
inline void set_entry(std::string const& path, std::string const& name, std::size_t index, double value) {
  File f(path);
  std::vector<hsize_t> dims;
  auto data = read(f.id(), name, dims);
  if (data.empty()) return;
  data[index % data.size()] = value;
  hid_t const ds = H5Dopen2(f.id(), name.c_str(), H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data());
  H5Dclose(ds);
}

/// Rewrites a dataset with the same values in another element type (H5T_STD_I32LE, H5T_IEEE_F64BE, ...).
inline void retype(std::string const& path, std::string const& name, hid_t file_type) {
  File f(path);
  std::vector<hsize_t> dims;
  auto const data = read(f.id(), name, dims);
  recreate(f.id(), name, file_type, dims, data);
}

/// Replaces a dataset by a float64 one of shape `dims` that is declared but never written (no storage).
inline void redeclare(std::string const& path, std::string const& name, std::vector<hsize_t> const& dims) {
  File f(path);
  recreate(f.id(), name, H5T_IEEE_F64LE, dims, {});
}

inline void remove(std::string const& path, std::string const& name) {
  File f(path);
  H5Ldelete(f.id(), name.c_str(), H5P_DEFAULT);
}

/// Sets an int64 attribute of an object (replacing one of any type).
inline void set_attribute(std::string const& path, std::string const& object, std::string const& name,
                          std::int64_t value) {
  File f(path);
  hid_t const obj = H5Oopen(f.id(), object.c_str(), H5P_DEFAULT);
  if (obj < 0) return;
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  hid_t const space = H5Screate(H5S_SCALAR);
  hid_t const attr = H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attr >= 0) {
    H5Awrite(attr, H5T_NATIVE_INT64, &value);
    H5Aclose(attr);
  }
  H5Sclose(space);
  H5Oclose(obj);
}

/// Replaces a dataset by one of the same shape whose raw data is stored in `other` (external storage, never
/// written here: `other` may be a FIFO).
inline void store_externally(std::string const& path, std::string const& name, std::string const& other) {
  File f(path);
  std::vector<hsize_t> dims;
  read(f.id(), name, dims);
  hsize_t total = 1;
  for (auto e : dims) total *= e;
  H5Ldelete(f.id(), name.c_str(), H5P_DEFAULT);
  hid_t const space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t const dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_external(dcpl, other.c_str(), 0, total * sizeof(double));
  hid_t const ds = H5Dcreate2(f.id(), name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (ds >= 0) H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/// Replaces a dataset by an external link to `object` in the file `other`.
inline void link_externally(std::string const& path, std::string const& name, std::string const& other,
                            std::string const& object) {
  File f(path);
  H5Ldelete(f.id(), name.c_str(), H5P_DEFAULT);
  H5Lcreate_external(other.c_str(), object.c_str(), f.id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
}

/// Replaces a dataset by a virtual dataset of the same shape whose source is `object` in the file `other`.
inline void make_virtual(std::string const& path, std::string const& name, std::string const& other,
                         std::string const& object) {
  File f(path);
  std::vector<hsize_t> dims;
  read(f.id(), name, dims);
  H5Ldelete(f.id(), name.c_str(), H5P_DEFAULT);
  hid_t const space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t const dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_virtual(dcpl, space, other.c_str(), object.c_str(), space);
  hid_t const ds = H5Dcreate2(f.id(), name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (ds >= 0) H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/// Replaces `name` by a soft link to `target` (a path in the same file).
inline void link_softly(std::string const& path, std::string const& name, std::string const& target) {
  File f(path);
  H5Ldelete(f.id(), name.c_str(), H5P_DEFAULT);
  H5Lcreate_soft(target.c_str(), f.id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
}

}  // namespace h5
}  // namespace t3k_test
