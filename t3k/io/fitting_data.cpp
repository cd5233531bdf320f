/// \file fitting_data.cpp
/// Reading and writing the input of a `t3k fit` data problem (fitting_data.hpp).

#include "t3k/io/fitting_data.hpp"

#include "t3k/core/error.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace t3k {
namespace io {

FittingData read_fitting_data(Reader const& in, std::string const& weights, RowSelector const& select_rows) {
  FittingData out;
  out.probes = select_rows ? in.read_probes({}, select_rows) : in.read_probes({});
  auto const& probes = out.probes;
  std::vector<std::size_t> shapes;
  for (auto const& w : probes.w) shapes.push_back(w.extent(1));
  std::size_t const w = probes.n_file_probes();
  ShardRange const rows{probes.first_row, probes.first_row + probes.n_probes()};
  if (!in.exists("/jets")) throw FileError(in.path() + ": /jets (the target jets) is missing");
  // The order attribute of /probes fixes K, so a stack stored [W x N_i x K+1] is refused with the shape it should
  // have; without it, K+1 is axis 1 of /jets/0.
  std::size_t const n_orders = probes.order ? *probes.order + 1 : any_extent;
  if (probes.order && in.exists("/jets/0")) {
    auto const found = in.dataset_shape("/jets/0");
    std::vector<std::size_t> const expected{w, n_orders, shapes[0]};
    if (found != expected) {
      throw FileError(in.path() + ": /jets/0 has shape " + impl::shape_string(found) + ", expected " +
                      impl::shape_string(expected) + " ([W x K+1 x N_0], K = " + std::to_string(*probes.order) +
                      " from the order attribute of /probes)");
    }
  }
  out.targets = in.read_jets("/jets", shapes, w, n_orders, rows);
  out.order = out.targets[0].extent(1) - 1;
  if (weights.empty()) return out;
  std::vector<std::size_t> shape;
  try {
    shape = in.dataset_shape(weights);
    if (shape == std::vector<std::size_t>{w}) out.weights = in.read_rows(weights, rows, shape);
  } catch (FileError const& e) {
    throw WeightsError(e.what());
  }
  if (shape != std::vector<std::size_t>{w}) {
    throw WeightsError(in.path() + ": " + weights + " has shape " + impl::shape_string(shape) + ", expected [" +
                       std::to_string(w) + "] (one weight per probe)");
  }
  for (std::size_t s = 0; s < out.weights.size(); ++s) {
    if (!(out.weights[s] >= 0) || !std::isfinite(out.weights[s])) {
      throw WeightsError(in.path() + ": " + weights + "[" + std::to_string(rows.begin + s) + "] is " +
                         std::to_string(out.weights[s]) + "; weights must be finite and >= 0");
    }
  }
  return out;
}

void write_fitting_data(Writer& out, ProbeSet const& probes, JetStack const& targets,
                        std::vector<double> const& weights, std::string const& weights_dataset) {
  std::string const where = "t3k::io::write_fitting_data";
  std::size_t const d = probes.n_modes(), w = probes.n_probes();
  if (targets.size() != d || d == 0) {
    throw InvalidArgument(where + ": " + std::to_string(targets.size()) + " target jet arrays for " +
                          std::to_string(d) + " probe modes");
  }
  std::size_t const k1 = targets[0].extent(1);
  for (std::size_t i = 0; i < d; ++i) {
    std::vector<std::size_t> const expected{w, k1, probes.w[i].extent(1)};
    impl::check_shape(where, "targets[" + std::to_string(i) + "]", targets[i], expected);
  }
  if (!weights.empty() && weights.size() != w) {
    throw InvalidArgument(where + ": " + std::to_string(weights.size()) + " weights for W = " + std::to_string(w) +
                          " probes");
  }
  ProbeSet with_order = probes;
  with_order.order = k1 - 1;
  out.write_probes(with_order);
  out.write_jets("/jets", targets);
  if (!weights.empty()) out.write_raw(weights_dataset, {w}, weights.data());
  RootAttributes attributes;
  attributes.d = std::int64_t(d);
  attributes.w = std::int64_t(w);
  attributes.k = std::int64_t(k1 - 1);
  out.write_root_attributes(attributes);
}

}  // namespace io
}  // namespace t3k
