/// \file fitting_data.cpp
/// Reading and writing the input of a `t3k fit` data problem (fitting_data.hpp).

#include "t3k/io/fitting_data.hpp"

#include "t3k/core/error.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace t3k {
namespace io {

std::size_t FittingData::n_rows() const {
  if (kind == MeasurementKind::entries) return indices.extent(0);
  return probes.n_probes();
}

std::size_t FittingData::n_file_rows() const { return probes.file_rows != 0 ? probes.file_rows : n_rows(); }

namespace {

char const* const kind_groups[] = {"/entries", "/applies", "/probes"};

/// The root of a scalar kind's datasets.
std::string group_of(MeasurementKind kind) { return kind == MeasurementKind::entries ? "/entries" : "/applies"; }

/// /probes and /jets (the probe layout).
void read_probe_samples(Reader const& in, RowSelector const& select_rows, bool with_targets, FittingData& out) {
  out.probes = select_rows ? in.read_probes({}, select_rows) : in.read_probes({});
  auto const& probes = out.probes;
  for (auto const& w : probes.w) out.mode_shapes.push_back(w.extent(1));
  auto const& shapes = out.mode_shapes;
  std::size_t const w = probes.n_file_probes();
  ShardRange const rows{probes.first_row, probes.first_row + probes.n_probes()};
  if (!with_targets) {
    out.order = probes.order ? *probes.order : 0;
    return;
  }
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
}

/// K of a values dataset of shape (W) or (W, K+1); the message names both shapes otherwise.
std::size_t order_of_values(Reader const& in, std::string const& name, std::size_t w) {
  auto const shape = in.dataset_shape(name);
  bool const fits = !shape.empty() && shape.size() <= 2 && shape[0] == w &&
                    (shape.size() == 1 || (shape[1] >= 1 && shape[1] <= max_jet_order + 1));
  if (!fits) {
    throw FileError(impl::concat(in.path(), ": ", name, " has shape ", impl::shape_string(shape), ", expected [", w,
                                 "] (order 0) or [", w, " x K+1] with K <= ", max_jet_order,
                                 " (one value or jet per sample)"));
  }
  return shape.size() == 1 ? 0 : shape[1] - 1;
}

/// The values (rows, K+1) of a scalar kind as one (rows, K+1, 1) jet array, every entry finite.
Array3 read_values(Reader const& in, std::string const& name, ShardRange const& rows, std::size_t order) {
  std::vector<std::size_t> shape;
  auto const data = in.read_rows(name, rows, shape);
  Array3 values(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::io::values"), rows.size(), order + 1, 1);
  for (std::size_t s = 0; s < rows.size(); ++s) {
    for (std::size_t k = 0; k <= order; ++k) {
      double const v = data[s * (order + 1) + k];
      if (!std::isfinite(v)) {
        throw FileError(impl::concat(in.path(), ": ", name, "[", rows.begin + s,
                                     shape.size() > 1 ? ", " + std::to_string(k) : std::string(), "] is ",
                                     std::isnan(v) ? "NaN"
                                     : v > 0       ? "+Inf"
                                                   : "-Inf",
                                     "; every entry must be finite"));
      }
      values(s, k, 0) = v;
    }
  }
  return values;
}

/// The mode shapes of /entries (its attribute mode_shapes).
std::vector<std::size_t> entries_mode_shapes(Reader const& in) {
  auto const attribute = in.read_integer_list_attribute("/entries", "mode_shapes");
  if (!attribute) {
    throw FileError(in.path() +
                    ": attribute 'mode_shapes' of /entries is missing (the tensor's N_0 .. N_{d-1}; the "
                    "indices alone do not give them)");
  }
  if (attribute->empty()) throw FileError(in.path() + ": attribute 'mode_shapes' of /entries is empty");
  std::vector<std::size_t> shapes;
  for (std::size_t i = 0; i < attribute->size(); ++i) {
    std::int64_t const n = (*attribute)[i];
    if (n < 1 || n > std::numeric_limits<int>::max()) {
      throw FileError(impl::concat(in.path(), ": attribute 'mode_shapes' of /entries has entry ", i, " = ", n,
                                   ", expected 1 to ", std::numeric_limits<int>::max()));
    }
    shapes.push_back(std::size_t(n));
  }
  return shapes;
}

/// /entries or /applies: the vectors or indices, the directions (when present) and the values.
void read_scalar_samples(Reader const& in, MeasurementKind kind, RowSelector const& select_rows, bool with_targets,
                         FittingData& out) {
  std::string const group = group_of(kind);
  std::string const values = group + "/values";
  std::size_t w = 0;
  if (kind == MeasurementKind::entries) {
    out.mode_shapes = entries_mode_shapes(in);
    auto const shape = in.dataset_shape("/entries/indices");
    std::size_t const d = out.mode_shapes.size();
    if (shape.size() != 2 || shape[1] != d) {
      throw FileError(impl::concat(in.path(), ": /entries/indices has shape ", impl::shape_string(shape),
                                   ", expected [W x ", d, "] (d = ", d,
                                   " from the attribute mode_shapes of /entries)"));
    }
    w = shape[0];
  } else {
    std::size_t const d = in.group_size("/applies/w");
    if (d == 0) throw FileError(in.path() + ": /applies/w is empty");
    w = in.dataset_shape("/applies/w/0").at(0);
    for (std::size_t i = 0; i < d; ++i) {
      auto const shape = in.dataset_shape("/applies/w/" + std::to_string(i));
      if (shape.size() != 2 || shape[0] != w) {
        throw FileError(impl::concat(in.path(), ": /applies/w/", i, " has shape ", impl::shape_string(shape),
                                     ", expected [", w, " x N_", i, "] (W = ", w, " from /applies/w/0)"));
      }
      out.mode_shapes.push_back(shape[1]);
    }
  }
  std::size_t const d = out.mode_shapes.size();
  if (!in.exists(values) && with_targets)
    throw FileError(in.path() + ": " + values + " (the target values) is missing");
  out.order = in.exists(values) ? order_of_values(in, values, w) : 0;
  ShardRange const rows = select_rows ? select_rows(w) : ShardRange{0, w};
  out.probes.first_row = rows.begin;
  out.probes.file_rows = w;
  if (kind == MeasurementKind::entries) {
    std::vector<std::size_t> shape;
    auto const raw = in.read_integer_rows("/entries/indices", {w, d}, rows, shape);
    out.indices = IndexMatrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::io::indices"), rows.size(), d);
    for (std::size_t s = 0; s < rows.size(); ++s) {
      for (std::size_t i = 0; i < d; ++i) {
        std::int64_t const v = raw[s * d + i];
        if (v < 0 || v >= std::int64_t(out.mode_shapes[i])) {
          throw FileError(impl::concat(in.path(), ": /entries/indices[", rows.begin + s, ", ", i, "] = ", v,
                                       " is out of range for mode ", i, " of size ", out.mode_shapes[i],
                                       " (indices are 0-based)"));
        }
        out.indices(s, i) = int(v);
      }
    }
  } else {
    for (std::size_t i = 0; i < d; ++i) {
      out.probes.w.push_back(in.read_matrix_rows("/applies/w/" + std::to_string(i), {w, out.mode_shapes[i]}, rows));
    }
  }
  std::string const directions = group + "/p";
  if (in.exists(directions)) {
    std::size_t const n = in.group_size(directions);
    if (n != d) {
      throw FileError(impl::concat(in.path(), ": ", directions, " has ", n, " members, expected d = ", d));
    }
    for (std::size_t i = 0; i < d; ++i) {
      out.probes.p.push_back(in.read_matrix_rows(directions + "/" + std::to_string(i), {w, out.mode_shapes[i]}, rows));
    }
  } else if (with_targets && out.order >= 1) {
    throw FileError(impl::concat(in.path(), ": ", directions, " (the directions p_i, (W, N_i) per mode) is missing; ",
                                 values, " of shape ", impl::shape_string(in.dataset_shape(values)),
                                 " holds jets of order K = ", out.order, ", which need them"));
  }
  if (with_targets) out.targets.push_back(read_values(in, values, rows, out.order));
}

}  // namespace

MeasurementKind detect_measurement_kind(Reader const& in) {
  std::vector<std::string> present;
  for (auto const* group : kind_groups) {
    if (in.exists(group)) present.push_back(group);
  }
  if (present.size() == 1) {
    return present[0] == "/entries"   ? MeasurementKind::entries
           : present[0] == "/applies" ? MeasurementKind::applies
                                      : MeasurementKind::probes;
  }
  if (present.empty()) {
    throw FileError(in.path() +
                    ": holds none of /entries, /applies, /probes; a data file holds exactly one kind of "
                    "samples");
  }
  std::string names;
  for (std::size_t k = 0; k < present.size(); ++k) names += (k ? " and " : "") + present[k];
  throw FileError(in.path() + ": holds " + names + "; a data file holds exactly one of /entries, /applies, /probes");
}

FittingData read_fitting_data(Reader const& in, std::string const& weights, RowSelector const& select_rows,
                              bool with_targets) {
  FittingData out;
  out.kind = detect_measurement_kind(in);
  if (out.kind == MeasurementKind::probes) {
    read_probe_samples(in, select_rows, with_targets, out);
  } else {
    read_scalar_samples(in, out.kind, select_rows, with_targets, out);
  }
  std::size_t const w = out.n_file_rows();
  ShardRange const rows{out.probes.first_row, out.probes.first_row + out.n_rows()};
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

void write_fitting_data(Writer& out, FittingData const& data, std::string const& weights_dataset) {
  std::string const where = "t3k::io::write_fitting_data";
  if (data.probes.first_row != 0 || data.n_file_rows() != data.n_rows()) {
    throw InvalidArgument(impl::concat(where, ": writes all rows, but the data holds rows [", data.probes.first_row,
                                       ", ", data.probes.first_row + data.n_rows(), ") of ", data.n_file_rows()));
  }
  if (data.kind == MeasurementKind::probes) {
    ProbeSet probes = data.probes;
    probes.file_rows = 0;
    write_fitting_data(out, probes, data.targets, data.weights, weights_dataset);
    return;
  }
  std::size_t const d = data.mode_shapes.size(), w = data.n_rows(), k1 = data.order + 1;
  std::string const group = group_of(data.kind);
  if (d == 0) throw InvalidArgument(where + ": no mode shapes");
  if (data.targets.size() != 1) {
    throw InvalidArgument(impl::concat(where, ": ", data.targets.size(), " target arrays; ", to_string(data.kind),
                                       " have one (W, K+1, 1) array of values"));
  }
  impl::check_shape(where, "targets[0]", data.targets[0], {w, k1, 1});
  if (data.kind == MeasurementKind::entries) {
    impl::check_shape(where, "indices", data.indices, {w, d});
    std::vector<std::int64_t> indices(w * d);
    for (std::size_t s = 0; s < w; ++s) {
      for (std::size_t i = 0; i < d; ++i) {
        int const v = data.indices(s, i);
        if (v < 0 || std::size_t(v) >= data.mode_shapes[i]) {
          throw InvalidArgument(impl::concat(where, ": indices[", s, ", ", i, "] = ", v, " is out of range for mode ",
                                             i, " of size ", data.mode_shapes[i]));
        }
        indices[s * d + i] = v;
      }
    }
    std::vector<std::int64_t> const shapes(data.mode_shapes.begin(), data.mode_shapes.end());
    out.write_integer_list_attribute("/entries", "mode_shapes", shapes);
    out.write_integers("/entries/indices", {w, d}, indices.data());
  } else {
    if (data.probes.w.size() != d) {
      throw InvalidArgument(impl::concat(where, ": ", data.probes.w.size(), " vector arrays w for d = ", d, " modes"));
    }
    for (std::size_t i = 0; i < d; ++i) {
      impl::check_shape(where, "w[" + std::to_string(i) + "]", data.probes.w[i], {w, data.mode_shapes[i]});
      out.write_view("/applies/w/" + std::to_string(i), data.probes.w[i]);
    }
  }
  if (!data.probes.p.empty() && data.probes.p.size() != d) {
    throw InvalidArgument(impl::concat(where, ": ", data.probes.p.size(), " direction arrays p for d = ", d, " modes"));
  }
  if (data.probes.p.empty() && data.order >= 1) {
    throw InvalidArgument(impl::concat(where, ": order K = ", data.order, " needs the directions p"));
  }
  for (std::size_t i = 0; i < data.probes.p.size(); ++i) {
    impl::check_shape(where, "p[" + std::to_string(i) + "]", data.probes.p[i], {w, data.mode_shapes[i]});
    out.write_view(group + "/p/" + std::to_string(i), data.probes.p[i]);
  }
  out.write_view(group + "/values", Kokkos::subview(data.targets[0], Kokkos::ALL, Kokkos::ALL, 0));
  if (!data.weights.empty()) {
    if (data.weights.size() != w) {
      throw InvalidArgument(impl::concat(where, ": ", data.weights.size(), " weights for W = ", w, " samples"));
    }
    out.write_raw(weights_dataset, {w}, data.weights.data());
  }
  RootAttributes attributes;
  attributes.d = std::int64_t(d);
  attributes.w = std::int64_t(w);
  attributes.k = std::int64_t(data.order);
  out.write_root_attributes(attributes);
}

}  // namespace io
}  // namespace t3k
