#pragma once
/// \file bindings.hpp
/// The module's parts, one per concept: each adds its classes and functions to the module.

#include "arrays.hpp"

namespace t3k_python {

void bind_tucker_tensor_train(nb::module_& m);  ///< TuckerTensorTrain, t3_svd, inner_product
void bind_tangent_space(nb::module_& m);        ///< OrthogonalFrame, T3Variation, J and J^T
void bind_probe_jets(nb::module_& m);           ///< probes, probe_derivatives, the chunk-size model
void bind_scalar_measurements(nb::module_& m);  ///< entries, applies, their jets, J and J^T
void bind_fitting_problem(nb::module_& m);      ///< FittingProblem of every kind, score
void bind_fit(nb::module_& m);                  ///< fit
void bind_files(nb::module_& m);                ///< load, save (HDF5 builds), has_hdf5

}  // namespace t3k_python
