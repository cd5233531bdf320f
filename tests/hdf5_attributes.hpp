#pragma once
// Attributes of an HDF5 file read with the HDF5 C API, independently of the library's reader: whether one exists,
// its stored type and its value, so that tests can assert how outputs encode them (h5py and other readers depend on
// the exact encoding, which a round trip through the library's own reader cannot show).

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace t3k_test {

/// An open HDF5 file, read only.
class Hdf5File {
 public:
  explicit Hdf5File(std::string const& path) : id_(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
  ~Hdf5File() {
    if (id_ >= 0) H5Fclose(id_);
  }
  Hdf5File(Hdf5File const&) = delete;
  Hdf5File& operator=(Hdf5File const&) = delete;
  hid_t id() const { return id_; }

 private:
  hid_t id_;
};

/// Whether `object` ("/", "/probes") of `file` has the attribute `name`.
inline bool has_attribute(Hdf5File const& file, std::string const& object, std::string const& name) {
  return H5Aexists_by_name(file.id(), object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

/// Expects `object`'s attribute `name` to be a scalar 64-bit little-endian signed integer (H5T_STD_I64LE, what
/// numpy's int64 gives) holding `expected`.
inline void expect_int64_attribute(Hdf5File const& file, std::string const& object, std::string const& name,
                                   std::int64_t expected) {
  std::string const what = "attribute '" + name + "' of " + object;
  ASSERT_TRUE(has_attribute(file, object, name)) << what << " is missing";
  hid_t const attr = H5Aopen_by_name(file.id(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  hid_t const space = H5Aget_space(attr);
  hid_t const type = H5Aget_type(attr);
  EXPECT_EQ(H5Sget_simple_extent_type(space), H5S_SCALAR) << what;
  EXPECT_GT(H5Tequal(type, H5T_STD_I64LE), 0) << what << " is not a little-endian int64";
  std::int64_t value = -1;
  EXPECT_GE(H5Aread(attr, H5T_NATIVE_INT64, &value), 0) << what;
  EXPECT_EQ(value, expected) << what;
  H5Tclose(type);
  H5Sclose(space);
  H5Aclose(attr);
}

/// Expects `object`'s attribute `name` to be a scalar bool the way h5py stores numpy's bool: an enum over a signed
/// 8-bit integer with exactly the members FALSE = 0 and TRUE = 1, holding `expected`.
inline void expect_bool_attribute(Hdf5File const& file, std::string const& object, std::string const& name,
                                  bool expected) {
  std::string const what = "attribute '" + name + "' of " + object;
  ASSERT_TRUE(has_attribute(file, object, name)) << what << " is missing";
  hid_t const attr = H5Aopen_by_name(file.id(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  hid_t const space = H5Aget_space(attr);
  hid_t const type = H5Aget_type(attr);
  EXPECT_EQ(H5Sget_simple_extent_type(space), H5S_SCALAR) << what;
  EXPECT_EQ(H5Tget_class(type), H5T_ENUM) << what << " is not an enum";
  if (H5Tget_class(type) == H5T_ENUM) {
    hid_t const base = H5Tget_super(type);
    EXPECT_EQ(H5Tget_size(base), 1u) << what;
    EXPECT_EQ(H5Tget_sign(base), H5T_SGN_2) << what << ": base type not signed";
    H5Tclose(base);
    ASSERT_EQ(H5Tget_nmembers(type), 2) << what;
    std::vector<std::pair<std::string, std::int8_t>> members;
    for (unsigned m = 0; m < 2; ++m) {
      char* member = H5Tget_member_name(type, m);
      std::int8_t v = -1;
      H5Tget_member_value(type, m, &v);
      members.emplace_back(member, v);
      H5free_memory(member);
    }
    std::vector<std::pair<std::string, std::int8_t>> const h5py{{"FALSE", 0}, {"TRUE", 1}};
    EXPECT_EQ(members, h5py) << what;
  }
  std::int8_t value = -1;
  EXPECT_GE(H5Aread(attr, H5T_NATIVE_INT8, &value), 0) << what;
  EXPECT_EQ(value, expected ? 1 : 0) << what;
  H5Tclose(type);
  H5Sclose(space);
  H5Aclose(attr);
}

}  // namespace t3k_test
