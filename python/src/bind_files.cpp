/// \file bind_files.cpp
/// Python bindings of the HDF5 files of the command-line tool (load, save), in builds with T3K_PYTHON_HDF5.

#include "bindings.hpp"
#include "objects.hpp"
#include "sharing_arg.hpp"

#ifdef T3K_PYTHON_HDF5
#include "t3k/io/file_safety.hpp"
#include "t3k/io/fitting_data.hpp"
#include "t3k/io/hdf5_io.hpp"
#endif

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace t3k_python {
namespace {

#ifdef T3K_PYTHON_HDF5
/// A path argument (str, bytes or os.PathLike) as text. **Throws:** TypeError naming it for other types;
/// ValueError naming `where` and `name` for a NUL byte, which the C library would silently cut the path at.
std::string path_text(nb::handle path, std::string const& where, std::string const& name) {
  if (!nb::isinstance<nb::str>(path) && !nb::isinstance<nb::bytes>(path) && !nb::hasattr(path, "__fspath__")) {
    throw nb::type_error((where + ": " + name + " must be a str, bytes or os.PathLike, got " + describe(path)).c_str());
  }
  std::string const text = nb::cast<std::string>(nb::module_::import_("os").attr("fsdecode")(path));
  if (text.find('\0') != std::string::npos) fail(where + ": " + name + " holds a NUL byte: " + text_of(nb::repr(path)));
  return text;
}

/// A text argument naming something inside a file (an HDF5 dataset). **Throws:** ValueError for a NUL byte.
std::string name_text(nb::handle value, std::string const& where, std::string const& name) {
  if (!nb::isinstance<nb::str>(value)) fail(where + ": " + name + " must be a str, got " + describe(value));
  std::string const text = nb::cast<std::string>(value);
  if (text.find('\0') != std::string::npos)
    fail(where + ": " + name + " holds a NUL byte: " + text_of(nb::repr(value)));
  return text;
}

/// Raises FileExistsError naming `where` when `file` exists and overwrite is False.
void refuse_existing(std::string const& file, bool overwrite, std::string const& where) {
  if (!overwrite && nb::cast<bool>(nb::module_::import_("os").attr("path").attr("lexists")(file))) {
    PyErr_SetString(PyExc_FileExistsError,
                    (where + ": " + file + " exists; pass overwrite=True to replace it").c_str());
    throw nb::python_error();
  }
}

/// Raises FileNotFoundError naming `where` and `file` when nothing is at `file`: a missing input is the commonest
/// mistake, and the reader's OSError would bury the name in HDF5's wording.
void require_existing(std::string const& file, std::string const& where) {
  if (!nb::cast<bool>(nb::module_::import_("os").attr("path").attr("lexists")(file))) {
    PyErr_SetString(PyExc_FileNotFoundError, (where + ": no such file: '" + file + "'").c_str());
    throw nb::python_error();
  }
}

// Files hold float64 on the host (docs/file-format.md): what is written is downloaded (device builds) and widened
// (float32) on the way, and what is read is handed to the objects as NumPy arrays, which convert and upload it.

/// A float64 host View of the entries of `a` (downloaded and widened as needed); `keep` holds the host copy.
template <class View>
View host_float64(Array const& a, nb::list& keep) {
  nb::object const copy = numpy().attr("ascontiguousarray")(host_copy(a), "dtype"_a = "float64");
  keep.append(copy);
  return view_over<View>(nb::cast<HostArray>(copy, false).data(), shape_of(a),
                         std::make_index_sequence<std::size_t(View::rank)>{});
}

/// A NumPy copy of a host View read from a file.
template <class View>
nb::object numpy_of(View const& v) {
  Output out = new_host_array(t3k::impl::view_shape(v), Dtype::float64);
  if (v.span() > 0) std::memcpy(out.data, v.data(), v.span() * sizeof(double));
  return out.array;
}
template <class View>
nb::list numpy_of(std::vector<View> const& views) {
  nb::list out;
  for (auto const& v : views) out.append(numpy_of(v));
  return out;
}

/// The labels of a sharing that ties modes, checked against the model to be saved: equal Tucker factors within every
/// group (what `t3k fit` writes and fits of the file start from). Empty for None or a sharing that ties nothing.
std::vector<std::int64_t> saved_sharing(nb::handle h, t3k::io::HostT3 const& t3) {
  t3k::ModeSharing const sharing = sharing_arg(h, t3.mode_shapes(), "t3k.save", "x");
  if (sharing.n_modes() == 0 || sharing.is_trivial()) return {};
  for (auto const& group : sharing.groups()) {
    auto const& first = t3.tucker_core(group.front());
    for (std::size_t i : group) {
      auto const& other = t3.tucker_core(i);
      bool const equal = other.extent(0) == first.extent(0) &&
                         std::memcmp(other.data(), first.data(), first.span() * sizeof(double)) == 0;
      if (!equal) {
        fail("t3k.save: sharing gives modes " + std::to_string(group.front()) + " and " + std::to_string(i) +
             " one factor, but x.tucker_cores[" + std::to_string(group.front()) + "] and x.tucker_cores[" +
             std::to_string(i) + "] differ; save a model whose factors are equal there (a shared fit's result)");
      }
    }
  }
  return {sharing.labels().begin(), sharing.labels().end()};
}

void save(nb::handle path, PyTuckerTensorTrain const& x, bool overwrite, nb::handle sharing) {
  std::string const file = path_text(path, "t3k.save", "path");
  refuse_existing(file, overwrite, "t3k.save");
  nb::list keep;
  std::vector<t3k::io::Matrix> us;
  std::vector<t3k::io::Array3> gs;
  for (auto const& a : x.tucker) us.push_back(host_float64<t3k::io::Matrix>(a, keep));
  for (auto const& a : x.tt) gs.push_back(host_float64<t3k::io::Array3>(a, keep));
  t3k::io::HostT3 const t3(std::move(us), std::move(gs));
  auto const labels = saved_sharing(sharing, t3);
  nb::gil_scoped_release release;
  t3k::io::output_target(file, "path");
  t3k::io::Writer writer(file);
  writer.write_t3(t3);
  if (!labels.empty()) writer.write_integer_list_attribute("/t3", "sharing", labels);
  t3k::io::RootAttributes attributes;
  attributes.d = std::int64_t(t3.n_modes());
  writer.write_root_attributes(attributes);
  writer.commit();
}

PyTuckerTensorTrain load(nb::handle path, nb::handle dtype) {
  std::string const file = path_text(path, "t3k.load", "path");
  Dtype const dt = dtype_arg(dtype, "t3k.load");
  require_existing(file, "t3k.load");
  t3k::io::HostT3 t3;
  without_gil_locked([&] {  // the reader allocates Views
    t3k::io::require_regular_input(file, "path");
    t3 = t3k::io::Reader(file).read_t3();
  });
  nb::list tucker, tt;
  for (std::size_t i = 0; i < t3.n_modes(); ++i) {
    tucker.append(numpy_of(t3.tucker_core(i)));
    tt.append(numpy_of(t3.tt_core(i)));
  }
  return make_t3(tucker, tt, numpy_dtype(dt));
}

nb::object load_sharing(nb::handle path) {
  std::string const file = path_text(path, "t3k.load_sharing", "path");
  require_existing(file, "t3k.load_sharing");
  std::optional<std::vector<std::int64_t>> labels;
  std::size_t d = 0;
  without_gil_locked([&] {
    t3k::io::require_regular_input(file, "path");
    t3k::io::Reader const reader(file);
    d = reader.group_size("/t3/tucker_cores");
    labels = reader.read_integer_list_attribute("/t3", "sharing");
  });
  if (!labels) return nb::none();
  if (labels->size() != d) {  // FileError: an OSError, as every unreadable file is
    throw t3k::io::FileError(file + ": /t3 has " + std::to_string(d) + " modes but its attribute sharing has " +
                             std::to_string(labels->size()) + " labels");
  }
  nb::list out;
  for (auto label : *labels) out.append(nb::int_(label));
  return std::move(out);
}

void save_problem(nb::handle path, PyFittingProblem const& problem, bool overwrite, nb::handle weights_name) {
  std::string const where = "t3k.save_problem";
  std::string const file = path_text(path, where, "path");
  std::string const weights = name_text(weights_name, where, "weights");
  // The file holds probes, targets and per-probe weights: anything else would be dropped without a word.
  if (problem.kind != t3k::MeasurementKind::probes || !problem.order_weights.empty()) {
    fail(where +
         ": problem must be a problem of probes without order_weights to be written as a `t3k fit` data "
         "problem, got one of " +
         std::string(t3k::to_string(problem.kind)) + (problem.order_weights.empty() ? "" : " with order_weights"));
  }
  refuse_existing(file, overwrite, where);
  nb::list keep;
  t3k::io::ProbeSet probes;
  t3k::io::JetStack targets;
  for (std::size_t i = 0; i < problem.ww.size(); ++i) {
    probes.w.push_back(host_float64<t3k::io::Matrix>(problem.ww[i], keep));
    probes.p.push_back(host_float64<t3k::io::Matrix>(problem.pp[i], keep));
    targets.push_back(host_float64<t3k::io::Array3>(problem.targets[i], keep));
  }
  // Modes probed with the same vectors and directions (a derivative tensor's input modes at one x) are stored once.
  probes.repeat = t3k::io::repeated_probe_modes(probes);
  std::vector<double> w;
  if (!problem.weights.empty()) {
    auto const h = host_float64<Kokkos::View<double*, Kokkos::HostSpace>>(problem.weights[0], keep);
    w.assign(h.data(), h.data() + h.extent(0));
  }
  nb::gil_scoped_release release;
  t3k::io::output_target(file, "path");
  t3k::io::Writer writer(file);
  t3k::io::write_fitting_data(writer, probes, targets, w, weights);
  writer.commit();
}

PyFittingProblem load_problem(nb::handle path, nb::handle weights, nb::handle dtype) {
  std::string const where = "t3k.load_problem";
  std::string const file = path_text(path, where, "path");
  Dtype const dt = dtype_arg(dtype, where);
  std::string const weights_dataset = weights.is_none() ? std::string() : name_text(weights, where, "weights");
  require_existing(file, where);
  t3k::io::FittingData data;
  without_gil_locked([&] {  // the reader allocates Views
    t3k::io::require_regular_input(file, "path");
    data = t3k::io::read_fitting_data(t3k::io::Reader(file), weights_dataset);
  });
  nb::object w = nb::none();
  if (!data.weights.empty()) {
    w = numpy_of(Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
        data.weights.data(), data.weights.size()));
  }
  return make_problem(numpy_of(data.probes.w), numpy_of(data.probes.p), numpy_of(data.targets), w, numpy_dtype(dt),
                      nullptr);
}
#endif

}  // namespace

void bind_files(nb::module_& m) {
#ifdef T3K_PYTHON_HDF5
  m.def("save", &save, "path"_a, "x"_a, "overwrite"_a = false, "sharing"_a.none() = nb::none(),
        nb::sig("def save(path: str | os.PathLike, x: TuckerTensorTrain, overwrite: bool = False, "
                "sharing: typing.Sequence[int] | None = None) -> None"),
        "Writes X as /t3 (docs/file-format.md, float64) with the root attribute d, the layout `t3k fit` writes\n"
        "model.h5 in and `t3k jets` and model.init.file read. Atomic: a temporary file renamed onto path.\n"
        "sharing: the labels of a model with shared Tucker factors, stored as the attribute sharing of /t3 (as\n"
        "`t3k fit` stores it; a fit started from the file goes on with it); x's factors must be equal within\n"
        "every group. Raises FileExistsError when path exists and overwrite is False; ValueError naming sharing\n"
        "or the differing factors; OSError when it cannot be written.");
  m.def("load_sharing", &load_sharing, "path"_a,
        nb::sig("def load_sharing(path: str | os.PathLike) -> list[int] | None"),
        "The sharing labels stored with /t3 of an HDF5 file (the attribute sharing that `t3k fit` and\n"
        "t3k.save(..., sharing=...) write), or None when the model has none. Raises FileNotFoundError naming the\n"
        "file when there is none; OSError naming the file when /t3 or the attribute is unreadable.");
  m.def("load", &load, "path"_a, "dtype"_a = "float64",
        nb::sig("def load(path: str | os.PathLike, dtype: numpy.typing.DTypeLike = 'float64') -> TuckerTensorTrain"),
        "Reads /t3 of an HDF5 file (docs/file-format.md), e.g. the model.h5 of `t3k fit`. Raises\n"
        "FileNotFoundError naming the file when there is none; OSError naming the file and the dataset when it is\n"
        "unreadable or of the wrong shape.");
  m.def("save_problem", &save_problem, "path"_a, "problem"_a, "overwrite"_a = false, "weights"_a = "/weights",
        nb::sig("def save_problem(path: str | os.PathLike, problem: FittingProblem, overwrite: bool = False, "
                "weights: str = '/weights') -> None"),
        "Writes the problem as the input of a `t3k fit` data problem (docs/file-format.md, float64): /probes with\n"
        "the order attribute K (modes whose probe vectors and directions are equal, such as a derivative tensor's\n"
        "input modes probed at one x, stored once with the attribute repeat), the target jets /jets, the weights\n"
        "(when the problem has them) as the dataset `weights` (problem.data.weights of the configuration), and the\n"
        "root attributes d, W and K. The validation set is not written (save it as a file of its own:\n"
        "validation.file). Atomic, as save; raises FileExistsError when path exists and overwrite is False.");
  m.def("load_problem", &load_problem, "path"_a, "weights"_a.none() = nb::none(), "dtype"_a = "float64",
        nb::sig("def load_problem(path: str | os.PathLike, weights: str | None = None, "
                "dtype: numpy.typing.DTypeLike = 'float64') -> FittingProblem"),
        "Reads the input of a `t3k fit` data problem: /probes, /jets and, when `weights` names one, that dataset\n"
        "of per-probe weights (each finite and >= 0), checked as `t3k fit` checks problem.data. Raises\n"
        "FileNotFoundError naming the file when there is none; OSError naming the file and the dataset when one\n"
        "is missing, unreadable or of the wrong shape.");
  m.attr("has_hdf5") = true;
#else
  m.attr("has_hdf5") = false;
#endif
}

}  // namespace t3k_python
