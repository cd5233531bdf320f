/// \file bind_files.cpp
/// Python bindings of the HDF5 files of the command-line tool (load, save), in builds with T3K_PYTHON_HDF5.

#include "bindings.hpp"
#include "objects.hpp"

#ifdef T3K_PYTHON_HDF5
#include "t3k/io/file_safety.hpp"
#include "t3k/io/fitting_data.hpp"
#include "t3k/io/hdf5_io.hpp"
#endif

#include <cstring>
#include <string>
#include <vector>

namespace t3k_python {
namespace {

#ifdef T3K_PYTHON_HDF5
std::string path_arg(nb::handle path) {
  nb::object text = nb::module_::import_("os").attr("fsdecode")(path);
  return nb::cast<std::string>(text);
}

/// Raises FileExistsError naming `where` when `file` exists and overwrite is False.
void refuse_existing(std::string const& file, bool overwrite, std::string const& where) {
  if (!overwrite && nb::cast<bool>(nb::module_::import_("os").attr("path").attr("lexists")(file))) {
    PyErr_SetString(PyExc_FileExistsError,
                    (where + ": " + file + " exists; pass overwrite=True to replace it").c_str());
    throw nb::python_error();
  }
}

void save(nb::handle path, PyTuckerTensorTrain const& x, bool overwrite) {
  std::string const file = path_arg(path);
  refuse_existing(file, overwrite, "t3k.save");
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

void save_problem(nb::handle path, PyFittingProblem const& problem, bool overwrite, std::string const& weights) {
  std::string const where = "t3k.save_problem";
  std::string const file = path_arg(path);
  refuse_existing(file, overwrite, where);
  // Files hold float64 (docs/file-format.md): a float32 problem is widened on the way.
  PyFittingProblem const wide =
      problem.dtype == Dtype::float64
          ? problem
          : make_problem(numpy_views(problem.ww, nb::find(&problem)), numpy_views(problem.pp, nb::find(&problem)),
                         numpy_views(problem.targets, nb::find(&problem)),
                         problem.weights.empty() ? nb::none() : numpy_view(problem.weights[0], nb::find(&problem)),
                         numpy_dtype(Dtype::float64), nullptr);
  t3k::io::ProbeSet probes;
  t3k::io::JetStack targets;
  for (std::size_t i = 0; i < wide.ww.size(); ++i) {
    probes.w.push_back(matrix_view<double>(wide.ww[i]));
    probes.p.push_back(matrix_view<double>(wide.pp[i]));
    targets.push_back(tensor3_view<double>(wide.targets[i]));
  }
  std::vector<double> w;
  if (!wide.weights.empty()) {
    auto const* data = static_cast<double const*>(wide.weights[0].data());
    w.assign(data, data + wide.weights[0].shape(0));
  }
  nb::gil_scoped_release release;
  t3k::io::output_target(file, "path");
  t3k::io::Writer writer(file);
  t3k::io::write_fitting_data(writer, probes, targets, w, weights);
  writer.commit();
}

PyFittingProblem load_problem(nb::handle path, nb::handle weights, nb::handle dtype) {
  std::string const file = path_arg(path);
  Dtype const dt = dtype_arg(dtype, "t3k.load_problem");
  std::string const weights_dataset = weights.is_none() ? std::string() : nb::cast<std::string>(weights);
  t3k::io::FittingData data;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::recursive_mutex> lock(kernel_mutex());  // the reader allocates Views
    t3k::io::require_regular_input(file, "path");
    data = t3k::io::read_fitting_data(t3k::io::Reader(file), weights_dataset);
  }
  // Fresh float64 arrays, which the problem holds (float64) or converts (float32).
  nb::list ww, pp, targets;
  for (std::size_t i = 0; i < data.targets.size(); ++i) {
    ww.append(numpy_copy(data.probes.w[i], Dtype::float64));
    pp.append(numpy_copy(data.probes.p[i], Dtype::float64));
    targets.append(numpy_copy(data.targets[i], Dtype::float64));
  }
  nb::object w = nb::none();
  if (!data.weights.empty()) {
    Output o = new_array({data.weights.size()}, Dtype::float64);
    std::memcpy(o.data, data.weights.data(), data.weights.size() * sizeof(double));
    w = o.array;
  }
  return make_problem(ww, pp, targets, w, numpy_dtype(dt), nullptr);
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
  m.def("save_problem", &save_problem, "path"_a, "problem"_a, "overwrite"_a = false, "weights"_a = "/weights",
        nb::sig("def save_problem(path: str | os.PathLike, problem: FittingProblem, overwrite: bool = False, "
                "weights: str = '/weights') -> None"),
        "Writes the problem as the input of a `t3k fit` data problem (docs/file-format.md, float64): /probes with\n"
        "the order attribute K, the target jets /jets, the weights (when the problem has them) as the dataset\n"
        "`weights` (problem.data.weights of the configuration), and the root attributes d, W and K. The validation\n"
        "set is not written (save it as a file of its own: validation.file). Atomic, as save; raises\n"
        "FileExistsError when path exists and overwrite is False.");
  m.def("load_problem", &load_problem, "path"_a, "weights"_a.none() = nb::none(), "dtype"_a = "float64",
        nb::sig("def load_problem(path: str | os.PathLike, weights: str | None = None, "
                "dtype: numpy.typing.DTypeLike = 'float64') -> FittingProblem"),
        "Reads the input of a `t3k fit` data problem: /probes, /jets and, when `weights` names one, that dataset\n"
        "of per-probe weights (each finite and >= 0), checked as `t3k fit` checks problem.data. Raises OSError\n"
        "naming the file and the dataset when one is missing, unreadable or of the wrong shape.");
  m.attr("has_hdf5") = true;
#else
  m.attr("has_hdf5") = false;
#endif
}

}  // namespace t3k_python
