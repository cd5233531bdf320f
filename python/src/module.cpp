/// \file module.cpp
/// The Python module `t3k._t3k` (nanobind): the library's public API on NumPy arrays (device arrays through DLPack in a
/// CUDA or HIP build), for float64 and float32.
/// Initializes Kokkos on import and finalizes it at exit, translates the library's exceptions, and binds each
/// concept from its own file (bind_*.cpp; arrays.hpp says how arrays are held and kernels run).

#include "bindings.hpp"

#include "t3k/core/chunk_size.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/kokkos_scope.hpp"
#include "t3k/version.hpp"

#ifdef T3K_PYTHON_HDF5
#include "t3k/io/hdf5_io.hpp"
#endif

#include <mutex>
#include <string>
#include <vector>

namespace t3k_python {
namespace {

// Kokkos as the module started it (nullptr where Kokkos was initialized before the import, or after exit's finalize).
// Not a static object: atexit ends it, before the C++ runtime destroys statics.
t3k::KokkosScope* kokkos_scope = nullptr;

void finalize_kokkos() {
  std::lock_guard<std::recursive_mutex> lock(kernel_mutex());
  delete kokkos_scope;
  kokkos_scope = nullptr;
}

}  // namespace
}  // namespace t3k_python

using namespace t3k_python;

NB_MODULE(_t3k, m) {
  m.doc() =
      "T3K: Tucker tensor trains, their probe jets, the Jacobian J and its transpose, on NumPy arrays.\n\n"
      "Kokkos is initialized on import (its host backend, OpenMP where built with it; OMP_NUM_THREADS sets the\n"
      "threads) and finalized at interpreter exit. Calls release the GIL and run one at a time.";

  if (!Kokkos::is_initialized()) {
    // argv form: the same on Kokkos 3.4 and 4.x. Kokkos' OMP_PROC_BIND advice is meant for programs, not importers.
    std::vector<std::string> args{"t3k", "--kokkos-disable-warnings"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    int argc = int(argv.size());
    // As in the t3k tool: the host pool starts and stops on the importing thread's core, and its threads end while
    // idle after the start (nothing in the module uses Kokkos' thread numbers). NumPy's BLAS starts threads of its
    // own as NumPy loads: imported alongside, they start on that core too (beside two busy processes, the python-fit
    // of perf/busy_machine.py took 1.03-1.06x one thread's time with NumPy loaded at its first call, 1.00-1.03x
    // loaded so). Where NumPy cannot be imported, the first call that needs it says so.
    kokkos_scope = new t3k::KokkosScope(argc, argv.data(), t3k::IdleHostThreads::released, [] {
      try {
        nb::module_::import_("numpy");
      } catch (nb::python_error const&) {
      }
    });
  }
  nb::module_::import_("atexit").attr("register")(nb::cpp_function(&finalize_kokkos));
  // An object built from another's read-only views (TuckerTensorTrain(x.tucker_cores, x.tt_cores)) keeps the other
  // alive through those views; when both are alive at exit the interpreter may not free them before nanobind counts
  // its instances, which it then reports as leaks although every reference is released (memory stays flat).
  nb::set_leak_warnings(false);

  nb::register_exception_translator([](std::exception_ptr const& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (t3k::InvalidArgument const& e) {
      PyErr_SetString(PyExc_ValueError, python_message(e.what()).c_str());
    } catch (t3k::DimensionMismatch const& e) {
      PyErr_SetString(PyExc_ValueError, python_message(e.what()).c_str());
#ifdef T3K_PYTHON_HDF5
    } catch (t3k::io::FileError const& e) {
      PyErr_SetString(PyExc_OSError, e.what());
#endif
    }
  });

  m.attr("__version__") = T3K_VERSION_STRING;
  m.attr("reduction_block_size") = t3k::reduction_block_size;
  // Where the module computes and its arrays live: "cpu" (NumPy), "cuda" or "rocm" (DLPack device arrays).
  m.attr("device") = array_device_type == nb::device::cuda::value   ? "cuda"
                     : array_device_type == nb::device::rocm::value ? "rocm"
                                                                    : "cpu";

  bind_tucker_tensor_train(m);
  bind_tangent_space(m);
  bind_probe_jets(m);
  bind_scalar_measurements(m);
  bind_fitting_problem(m);
  bind_fit(m);
  bind_files(m);
  m.def(
      "num_threads", [] { return Kokkos::DefaultHostExecutionSpace().concurrency(); },
      "Threads of the host execution space Kokkos was initialized with.");
}
