/// \file bind_files.cpp
/// Python bindings of the HDF5 files of the command-line tool (load, save), in builds with T3K_PYTHON_HDF5.

#include "bindings.hpp"
#include "objects.hpp"

#ifdef T3K_PYTHON_HDF5
#include "t3k/io/file_safety.hpp"
#include "t3k/io/hdf5_io.hpp"
#endif

#include <string>

namespace t3k_python {
namespace {

#ifdef T3K_PYTHON_HDF5
std::string path_arg(nb::handle path) {
  nb::object text = nb::module_::import_("os").attr("fsdecode")(path);
  return nb::cast<std::string>(text);
}

void save(nb::handle path, PyTuckerTensorTrain const& x, bool overwrite) {
  std::string const file = path_arg(path);
  if (!overwrite && nb::cast<bool>(nb::module_::import_("os").attr("path").attr("lexists")(file))) {
    PyErr_SetString(PyExc_FileExistsError,
                    ("t3k.save: " + file + " exists; pass overwrite=True to replace it").c_str());
    throw nb::python_error();
  }
  // Files hold float64 (docs/file-format.md): a float32 T3 is widened on the way.
  PyTuckerTensorTrain wide = x;
  if (x.dtype != Dtype::float64) {
    wide.dtype = Dtype::float64;
    wide.tucker = as_array_list(numpy_views(x.tucker, nb::find(&x)), Dtype::float64, 2, "t3k.save", "x", "");
    wide.tt = as_array_list(numpy_views(x.tt, nb::find(&x)), Dtype::float64, 3, "t3k.save", "x", "");
  }
  auto const t3 = wide.view<double>();
  nb::gil_scoped_release release;
  t3k::io::output_target(file, "path");
  t3k::io::Writer writer(file);
  writer.write_t3(t3);
  t3k::io::RootAttributes attributes;
  attributes.d = std::int64_t(t3.n_modes());
  writer.write_root_attributes(attributes);
  writer.commit();
}

PyTuckerTensorTrain load(nb::handle path, nb::handle dtype) {
  std::string const file = path_arg(path);
  Dtype const dt = dtype_arg(dtype, "t3k.load");
  t3k::io::HostT3 t3;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::recursive_mutex> lock(kernel_mutex());  // the reader allocates Views
    t3k::io::require_regular_input(file, "path");
    t3 = t3k::io::Reader(file).read_t3();
  }
  PyTuckerTensorTrain x = t3_from_library(t3, Dtype::float64);
  if (dt == Dtype::float64) return x;
  return make_t3(numpy_views(x.tucker, nb::none()), numpy_views(x.tt, nb::none()), numpy_dtype(dt));
}
#endif

}  // namespace

void bind_files(nb::module_& m) {
#ifdef T3K_PYTHON_HDF5
  m.def("save", &save, "path"_a, "x"_a, "overwrite"_a = false,
        nb::sig("def save(path: str | os.PathLike, x: TuckerTensorTrain, overwrite: bool = False) -> None"),
        "Writes X as /t3 (docs/file-format.md, float64) with the root attribute d, the layout `t3k fit` writes\n"
        "model.h5 in and `t3k jets` and model.init.file read. Atomic: a temporary file renamed onto path.\n"
        "Raises FileExistsError when path exists and overwrite is False; OSError when it cannot be written.");
  m.def("load", &load, "path"_a, "dtype"_a = "float64",
        nb::sig("def load(path: str | os.PathLike, dtype: numpy.typing.DTypeLike = 'float64') -> TuckerTensorTrain"),
        "Reads /t3 of an HDF5 file (docs/file-format.md), e.g. the model.h5 of `t3k fit`. Raises OSError\n"
        "naming the file and the dataset when it is missing, unreadable or of the wrong shape.");
  m.attr("has_hdf5") = true;
#else
  m.attr("has_hdf5") = false;
#endif
}

}  // namespace t3k_python
