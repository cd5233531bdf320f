/// \file hdf5_writer.cpp
/// The HDF5 C API behind io::Writer: a temporary file renamed onto its path at commit (or, for a character device,
/// a file built in memory and written through). Every HDF5 failure becomes a FileError naming the file and the
/// object.

#include "t3k/io/hdf5_io.hpp"
#include "t3k/io/impl/hdf5_handle.hpp"

#include "t3k/io/file_safety.hpp"

#include <hdf5.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

namespace t3k {
namespace io {

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

  /// Creates `name` of rank 1-4 with elements of `file_type` (float64 or int64), and its intermediate groups.
  Handle create_dataset(std::string const& name, std::vector<std::size_t> const& shape, hid_t file_type) const {
    if (shape.empty() || shape.size() > 4) {
      fail("cannot write " + name + " of rank " + std::to_string(shape.size()) + " (ranks 1-4 only)");
    }
    std::vector<hsize_t> dims(shape.begin(), shape.end());
    Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
    Handle ds(H5Dcreate2(file.get(), name.c_str(), file_type, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
              H5Dclose);
    if (!ds.valid()) fail("cannot create dataset " + name);
    return ds;
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
  impl_->create_dataset(dataset, shape, H5T_IEEE_F64LE);
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
  Handle ds = impl_->create_dataset(dataset, shape, H5T_STD_I64LE);
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

namespace {

bool same_matrix(Matrix const& a, Matrix const& b) {
  return a.extent(0) == b.extent(0) && a.extent(1) == b.extent(1) &&
         std::equal(a.data(), a.data() + a.span(), b.data());
}

}  // namespace

std::vector<std::int64_t> repeated_probe_modes(ProbeSet const& probes) {
  std::size_t const d = probes.n_modes();
  std::vector<std::int64_t> labels(d);
  bool repeats = false;
  for (std::size_t i = 0; i < d; ++i) {
    labels[i] = std::int64_t(i);
    for (std::size_t j = 0; j < i; ++j) {
      if (labels[j] == std::int64_t(j) && same_matrix(probes.w[i], probes.w[j]) &&
          same_matrix(probes.p[i], probes.p[j])) {
        labels[i] = std::int64_t(j);
        repeats = true;
        break;
      }
    }
  }
  return repeats ? labels : std::vector<std::int64_t>{};
}

void Writer::write_probes(ProbeSet const& probes) {
  std::size_t const d = probes.n_modes();
  std::string const where = "t3k::io::Writer::write_probes";
  auto const& repeat = probes.repeat;
  if (!repeat.empty() && repeat.size() != d) {
    throw InvalidArgument(where + ": repeat has " + std::to_string(repeat.size()) +
                          " labels for d = " + std::to_string(d) + " modes");
  }
  for (std::size_t i = 0; i < d; ++i) {
    std::size_t first = i;
    if (!repeat.empty()) {
      if (repeat[i] < 0) {
        throw InvalidArgument(where + ": repeat[" + std::to_string(i) + "] is " + std::to_string(repeat[i]) +
                              ", labels must be >= 0");
      }
      first = std::size_t(std::find(repeat.begin(), repeat.end(), repeat[i]) - repeat.begin());
    }
    if (first != i) {
      // Stored once: the modes of one label must hold what the first one holds, bit for bit.
      if (!same_matrix(probes.w[i], probes.w[first]) || !same_matrix(probes.p[i], probes.p[first])) {
        throw InvalidArgument(where + ": repeat gives modes " + std::to_string(first) + " and " + std::to_string(i) +
                              " one label, but their probe vectors or directions differ");
      }
      continue;
    }
    write_view(join_path("/probes/w", i), probes.w[i]);
    write_view(join_path("/probes/p", i), probes.p[i]);
  }
  if (probes.order) impl_->write_int64("/probes", "order", std::int64_t(*probes.order));
  impl_->write_bool("/probes", "symmetric", probes.symmetric);
  if (!repeat.empty()) write_integer_list_attribute("/probes", "repeat", repeat);
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
