#pragma once
/// \file objects.hpp
/// The Python objects (T3, orthogonal frame, variation, fitting problem): their arrays, the library Views over them,
/// and their construction from library results.

#include "arrays.hpp"

#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"
#include "t3k/core/tucker_tensor_train.hpp"
#include "t3k/optimizers/fitting_problem.hpp"

#include <memory>
#include <string>
#include <vector>

namespace t3k_python {

/// A Tucker tensor train on the module's arrays (NumPy; device arrays in a device build): U_i (n_i, N_i), G_i (r_i,
/// n_i, r_{i+1}).
struct PyTuckerTensorTrain {
  Dtype dtype = Dtype::float64;
  std::vector<Array> tucker, tt;

  template <class Scalar>
  t3k::TuckerTensorTrain<Scalar, Memory> view() const {
    std::vector<Matrix<Scalar>> us;
    std::vector<Tensor3<Scalar>> gs;
    for (auto const& a : tucker) us.push_back(matrix_view<Scalar>(a));
    for (auto const& a : tt) gs.push_back(tensor3_view<Scalar>(a));
    return t3k::TuckerTensorTrain<Scalar, Memory>(std::move(us), std::move(gs));  // validates the shapes
  }
  std::size_t n_modes() const { return tt.size(); }
};

/// A T3 of the given cores (held without a copy where they are C-contiguous arrays of the dtype). **Throws:**
/// ValueError naming the core and both shapes when the cores do not fit together.
inline PyTuckerTensorTrain make_t3(nb::handle tucker_cores, nb::handle tt_cores, nb::handle dtype) {
  std::string const where = "t3k.TuckerTensorTrain";
  PyTuckerTensorTrain x;
  x.dtype = inferred_dtype(dtype, tucker_cores, where);
  x.tucker = as_array_list(tucker_cores, x.dtype, 2, where, "tucker_cores", "(n_i x N_i)");
  x.tt = as_array_list(tt_cores, x.dtype, 3, where, "tt_cores", "(r_i x n_i x r_{i+1})");
  check_together("tucker_cores and tt_cores",
                 [&] { dispatch(x.dtype, [&](auto zero) { (void)x.view<decltype(zero)>(); }); });
  return x;
}

/// An orthogonal frame on the module's arrays (centre factors optional).
struct PyOrthogonalFrame {
  Dtype dtype = Dtype::float64;
  std::vector<Array> up, left, right, outer, centre;

  template <class Scalar>
  t3k::OrthogonalFrame<Scalar, Memory> view() const {
    std::vector<Matrix<Scalar>> u, s;
    std::vector<Tensor3<Scalar>> l, r, o;
    for (auto const& a : up) u.push_back(matrix_view<Scalar>(a));
    for (auto const& a : centre) s.push_back(matrix_view<Scalar>(a));
    for (auto const& a : left) l.push_back(tensor3_view<Scalar>(a));
    for (auto const& a : right) r.push_back(tensor3_view<Scalar>(a));
    for (auto const& a : outer) o.push_back(tensor3_view<Scalar>(a));
    return t3k::OrthogonalFrame<Scalar, Memory>(std::move(u), std::move(l), std::move(r), std::move(o), std::move(s));
  }
  std::size_t n_modes() const { return up.size(); }
};

/// A stack of variations on the module's arrays: V_i (n, nO_i, N_i), H_i (n, rL_i, nU_i, rR_{i+1}).
struct PyT3Variation {
  Dtype dtype = Dtype::float64;
  std::vector<Array> tucker, tt;

  template <class Scalar>
  t3k::T3Variation<Scalar, Memory> view() const {
    t3k::T3Variation<Scalar, Memory> v;
    for (auto const& a : tucker) v.tucker.push_back(tensor3_view<Scalar>(a));
    for (auto const& a : tt) v.tt.push_back(tensor4_view<Scalar>(a));
    return v;
  }
};

template <class Scalar>
PyTuckerTensorTrain t3_from_library(t3k::TuckerTensorTrain<Scalar, Memory> const& x, Dtype dt) {
  PyTuckerTensorTrain out;
  out.dtype = dt;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    out.tucker.push_back(nb::cast<Array>(array_copy(x.tucker_core(i), dt), false));
    out.tt.push_back(nb::cast<Array>(array_copy(x.tt_core(i), dt), false));
  }
  return out;
}

template <class Scalar>
PyT3Variation variation_from_library(t3k::T3Variation<Scalar, Memory> const& v, Dtype dt) {
  PyT3Variation out;
  out.dtype = dt;
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    out.tucker.push_back(nb::cast<Array>(array_copy(v.tucker[i], dt), false));
    out.tt.push_back(nb::cast<Array>(array_copy(v.tt[i], dt), false));
  }
  return out;
}

inline nb::tuple size_tuple(std::vector<std::size_t> const& values) {
  nb::list l;
  for (auto v : values) l.append(v);
  return nb::tuple(l);
}

/// A fitting problem on the module's arrays, of one measurement kind (docs/math.md, measurements): probes ww[i],
/// pp[i] (W, N_i) and targets[i] (W, K+1, N_i); applies ww[i] (W, N_i), pp[i] for K >= 1 and one targets array;
/// entries indices (W, d) int32, pp[i] for K >= 1 and one targets array. A scalar kind's targets array is (W),
/// (W, K+1) or (W, K+1, 1) (its extents padded with ones). Optional weights (W), order_weights (K+1), and a
/// validation set (a problem of the same kind, mode sizes and order).
struct PyFittingProblem {
  Dtype dtype = Dtype::float64;
  t3k::MeasurementKind kind = t3k::MeasurementKind::probes;
  std::vector<std::size_t> shape;  ///< N_0..N_{d-1}
  std::vector<Array> ww, pp, targets;
  std::vector<Array> indices, weights, order_weights;  ///< each empty or one array
  std::shared_ptr<PyFittingProblem const> validation;

  /// The extents of targets[i] as the library's (W, K+1, width) jets.
  std::vector<std::size_t> jet_shape(std::size_t i) const {
    Array const& a = targets[i];
    return {a.shape(0), a.ndim() > 1 ? a.shape(1) : 1, a.ndim() > 2 ? a.shape(2) : 1};
  }

  template <class Scalar>
  t3k::FittingProblem<Scalar, Memory> view() const {
    t3k::FittingProblem<Scalar, Memory> p;
    p.kind = kind;
    for (auto const& a : ww) p.ww.push_back(matrix_view<Scalar>(a));
    for (auto const& a : pp) p.pp.push_back(matrix_view<Scalar>(a));
    if (!indices.empty()) {
      p.indices = t3k::EntryIndices<Memory>(const_cast<int*>(static_cast<int const*>(indices[0].data())),
                                            indices[0].shape(0), indices[0].shape(1));
    }
    for (std::size_t i = 0; i < targets.size(); ++i) {
      auto const e = jet_shape(i);
      p.targets.emplace_back(mutable_data<Scalar>(targets[i]), e[0], e[1], e[2]);
    }
    if (!weights.empty()) {
      p.weights = Kokkos::View<Scalar*, Memory>(mutable_data<Scalar>(weights[0]), weights[0].shape(0));
    }
    if (!order_weights.empty()) {
      p.order_weights =
          Kokkos::View<Scalar*, Memory>(mutable_data<Scalar>(order_weights[0]), order_weights[0].shape(0));
    }
    p.order = order();
    if (validation)
      p.validation = std::make_shared<t3k::FittingProblem<Scalar, Memory> const>(validation->view<Scalar>());
    return p;
  }
  std::size_t order() const { return targets.empty() ? 0 : jet_shape(0)[1] - 1; }
  std::size_t n_probes() const { return targets.empty() ? 0 : targets[0].shape(0); }
  std::vector<std::size_t> mode_sizes() const { return shape; }
};

/// A library problem (and its validation set) copied into the module's arrays; `shape` are its mode sizes. Holds
/// the GIL.
template <class Scalar>
PyFittingProblem problem_from_library(t3k::FittingProblem<Scalar, Memory> const& p, Dtype dt,
                                      std::vector<std::size_t> const& shape) {
  PyFittingProblem out;
  out.dtype = dt;
  out.kind = p.kind;
  out.shape = shape;
  auto keep = [&](auto const& view) { return nb::cast<Array>(array_copy(view, dt), false); };
  for (auto const& v : p.ww) out.ww.push_back(keep(v));
  for (auto const& v : p.pp) out.pp.push_back(keep(v));
  for (auto const& v : p.targets) out.targets.push_back(keep(v));
  if (p.indices.data() != nullptr) out.indices.push_back(nb::cast<Array>(array_copy(p.indices, Dtype::int32), false));
  if (p.weights.data() != nullptr) out.weights.push_back(keep(p.weights));
  if (p.order_weights.data() != nullptr) out.order_weights.push_back(keep(p.order_weights));
  if (p.validation) {
    out.validation = std::make_shared<PyFittingProblem const>(problem_from_library(*p.validation, dt, shape));
  }
  return out;
}

/// A problem of probes from its arrays (held without a copy where they are C-contiguous arrays of the dtype), with
/// optional weights, order_weights (absent: a null or None handle) and validation set (bind_fitting_problem.cpp).
/// **Throws:** ValueError naming the array and both shapes when they do not fit together, or a non-finite entry.
PyFittingProblem make_problem(nb::handle ww, nb::handle pp, nb::handle targets, nb::handle weights, nb::handle dtype,
                              PyFittingProblem const* validation, nb::handle order_weights = nb::handle());

}  // namespace t3k_python
