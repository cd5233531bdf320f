/// \file hdf5_read_objects.cpp
/// io::Reader's T3s, frames, variations, gradients, probes and jets (docs/file-format.md): each dataset's shape is
/// checked against the datasets it must agree with before it is read, and a disagreement names both.

#include "t3k/io/hdf5_io.hpp"
#include "t3k/io/impl/hdf5_reader_impl.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace t3k {
namespace io {

namespace {

/// Axis `axis` of a dataset of rank `rank` holding `extent`, as a message names it: "5 rows", "middle extent 4".
std::string extent_text(std::size_t rank, std::size_t axis, std::size_t extent) {
  static char const* const axes3[] = {"first", "middle", "last"};
  static char const* const axes4[] = {"first", "second", "third", "last"};
  std::string const n = std::to_string(extent);
  if (rank == 2) return n + (axis == 0 ? " rows" : " columns");
  if (rank == 3) return std::string(axes3[axis]) + " extent " + n;
  if (rank == 4) return std::string(axes4[axis]) + " extent " + n;
  return "extent " + n + " on axis " + std::to_string(axis);
}

}  // namespace

void Reader::Impl::require_agree(Shaped const& a, std::size_t axis_a, Shaped const& b, std::size_t axis_b) const {
  if (a.shape[axis_a] == b.shape[axis_b]) return;
  fail(a.name + " has " + extent_text(a.shape.size(), axis_a, a.shape[axis_a]) + " but " + b.name + " has " +
       extent_text(b.shape.size(), axis_b, b.shape[axis_b]));
}

std::vector<std::size_t> Reader::Impl::probe_matrix_shape(std::string const& name, std::size_t w, std::size_t n,
                                                          std::size_t mode, std::string const& w0) const {
  auto const shape = checked_shape(name, {any_extent, any_extent});
  std::vector<std::size_t> const expected{w, n};
  if (shape_matches(shape, expected)) return shape;
  fail(impl::concat(name, " has shape ", impl::shape_string(shape), ", expected ", expected_string(expected, shape),
                    " (W rows", name == w0 ? "" : " as in " + w0, ", N_", mode, " columns)"));
}

HostT3 Reader::read_t3() const {
  std::size_t const d = impl_->group_size("/t3/tucker_cores");
  if (d == 0) impl_->fail("/t3/tucker_cores is empty; a T3 needs at least one mode");
  impl_->require_members("/t3/tt_cores", d, " (the number of /t3/tucker_cores)");
  // U_i (n_i, N_i) and G_i (r_i, n_i, r_{i+1}) must agree on n_i and on each r_i they share. Each dataset is checked
  // against those read before it and then read (its size checked against free memory first).
  std::vector<Shaped> u(d), g(d);
  std::vector<Matrix> us;
  std::vector<Array3> gs;
  for (std::size_t i = 0; i < d; ++i) {
    u[i].name = join_path("/t3/tucker_cores", i);
    us.push_back(read_matrix(u[i].name, {any_extent, any_extent}));
    u[i].shape = {us.back().extent(0), us.back().extent(1)};
    g[i].name = join_path("/t3/tt_cores", i);
    g[i].shape = impl_->checked_shape(g[i].name, {any_extent, any_extent, any_extent});
    impl_->require_agree(u[i], 0, g[i], 1);
    if (i > 0) impl_->require_agree(g[i], 0, g[i - 1], 2);
    gs.push_back(read_array3(g[i].name, g[i].shape));
  }
  try {
    return HostT3(std::move(us), std::move(gs));
  } catch (std::runtime_error const& e) {
    impl_->fail(std::string("/t3: ") + e.what());
  }
}

HostFrame Reader::read_frame() const {
  std::size_t const d = impl_->group_size("/frame/up_tucker");
  if (d == 0) impl_->fail("/frame/up_tucker is empty; a frame needs at least one mode");
  for (char const* g : {"/frame/left_tt", "/frame/right_tt", "/frame/outer_tt"}) {
    impl_->require_members(g, d, " (the number of /frame/up_tucker)");
  }
  // up (nU_i, N_i), left (rL_i, nU_i, rL_{i+1}), right (rR_i, nU_i, rR_{i+1}) and outer (rL_i, nO_i, rR_{i+1})
  // share nU_i and the ranks, with rL_0 = rR_0 = rL_d = rR_d = 1. Each dataset is checked against those read before
  // it and then read.
  std::vector<Shaped> up(d), left(d), right(d), outer(d);
  std::vector<Matrix> ups;
  std::vector<Array3> lefts, rights, outers;
  for (std::size_t i = 0; i < d; ++i) {
    std::size_t const first = i == 0 ? 1 : any_extent, last = i + 1 == d ? 1 : any_extent;
    up[i].name = join_path("/frame/up_tucker", i);
    ups.push_back(read_matrix(up[i].name, {any_extent, any_extent}));
    up[i].shape = {ups.back().extent(0), ups.back().extent(1)};
    left[i].name = join_path("/frame/left_tt", i);
    left[i].shape = impl_->checked_shape(left[i].name, {first, any_extent, last});
    impl_->require_agree(up[i], 0, left[i], 1);
    if (i > 0) impl_->require_agree(left[i], 0, left[i - 1], 2);
    lefts.push_back(read_array3(left[i].name, left[i].shape));
    right[i].name = join_path("/frame/right_tt", i);
    right[i].shape = impl_->checked_shape(right[i].name, {first, any_extent, last});
    impl_->require_agree(up[i], 0, right[i], 1);
    if (i > 0) impl_->require_agree(right[i], 0, right[i - 1], 2);
    rights.push_back(read_array3(right[i].name, right[i].shape));
    outer[i].name = join_path("/frame/outer_tt", i);
    outer[i].shape = impl_->checked_shape(outer[i].name, {first, any_extent, last});
    impl_->require_agree(outer[i], 0, left[i], 0);
    impl_->require_agree(outer[i], 2, right[i], 2);
    outers.push_back(read_array3(outer[i].name, outer[i].shape));
  }
  try {
    return HostFrame(std::move(ups), std::move(lefts), std::move(rights), std::move(outers));
  } catch (std::runtime_error const& e) {
    impl_->fail(std::string("/frame: ") + e.what());
  }
}

HostVariation Reader::read_variation(HostFrame const& frame) const {
  return read_variation_group("/variation", frame, false);
}

HostVariation Reader::read_gradient(HostFrame const& frame, bool per_probe) const {
  return read_variation_group(per_probe ? "/grad_per_probe" : "/grad", frame, per_probe);
}

HostVariation Reader::read_variation_group(std::string const& group, HostFrame const& frame, bool per_probe) const {
  std::size_t const d = frame.n_modes();
  impl_->require_members(group + "/tucker", d, " (the modes of the frame)");
  impl_->require_members(group + "/tt", d, " (the modes of the frame)");
  auto const big_n = frame.mode_shapes();
  auto const nu = frame.up_ranks();
  auto const no = frame.outer_ranks();
  auto const rl = frame.left_ranks();
  auto const rr = frame.right_ranks();
  HostVariation v;
  Shaped first;  // per probe: <group>/tucker/0, whose W rows every other dataset must have
  for (std::size_t i = 0; i < d; ++i) {
    std::string const tucker = join_path(group + "/tucker", i);
    std::string const tt = join_path(group + "/tt", i);
    if (per_probe) {
      Shaped const t{tucker, impl_->checked_shape(tucker, {any_extent, no[i], big_n[i]})};
      if (i == 0) first = t;
      impl_->require_agree(t, 0, first, 0);
      v.tucker.push_back(read_array3(tucker, t.shape));
      Shaped const g{tt, impl_->checked_shape(tt, {any_extent, rl[i], nu[i], rr[i + 1]})};
      impl_->require_agree(g, 0, first, 0);
      v.tt.push_back(read_array4(tt, g.shape));
    } else {
      v.tucker.push_back(impl_->read_with_unit_axis<Array3>(tucker, {no[i], big_n[i]}));
      v.tt.push_back(impl_->read_with_unit_axis<Array4>(tt, {rl[i], nu[i], rr[i + 1]}));
    }
  }
  return v;
}

ProbeSet Reader::read_probes(std::vector<std::size_t> const& mode_shapes) const {
  return read_probes(mode_shapes, [](std::size_t n_rows) { return ShardRange{0, n_rows}; });
}

ProbeSet Reader::read_probes(std::vector<std::size_t> const& mode_shapes, RowSelector const& select_rows) const {
  // With the attribute repeat, modes of one label share the vectors stored under the label's first mode.
  auto const repeat = impl_->integer_list_attribute("/probes", "repeat");
  std::string const repeat_text = "attribute 'repeat' of /probes";
  std::size_t const d = repeat                ? repeat->size()
                        : mode_shapes.empty() ? impl_->group_size("/probes/w")
                                              : mode_shapes.size();
  if (d == 0) impl_->fail(repeat ? repeat_text + " is empty" : std::string("/probes/w is empty"));
  if (repeat && !mode_shapes.empty() && d != mode_shapes.size()) {
    impl_->fail(repeat_text + " has " + std::to_string(d) +
                " labels, expected d = " + std::to_string(mode_shapes.size()) + " (the modes of the input)");
  }
  std::vector<std::size_t> source(d);  // the mode whose datasets mode i reads
  std::size_t stored = 0;              // the modes with datasets of their own
  for (std::size_t i = 0; i < d; ++i) {
    source[i] = i;
    if (repeat) {
      if ((*repeat)[i] < 0) {
        impl_->fail(repeat_text + " has the label " + std::to_string((*repeat)[i]) + " at mode " + std::to_string(i) +
                    ", expected labels >= 0");
      }
      source[i] = std::size_t(std::find(repeat->begin(), repeat->end(), (*repeat)[i]) - repeat->begin());
    }
    if (source[i] == i) {
      ++stored;
      continue;
    }
    for (char const* group : {"/probes/w", "/probes/p"}) {
      if (exists(join_path(group, i))) {
        impl_->fail(join_path(group, i) + " is present, but " + repeat_text + " gives mode " + std::to_string(i) +
                    " the vectors of mode " + std::to_string(source[i]) + ": store them once, under mode " +
                    std::to_string(source[i]));
      }
    }
    if (!mode_shapes.empty() && mode_shapes[i] != mode_shapes[source[i]]) {
      impl_->fail(repeat_text + " gives modes " + std::to_string(source[i]) + " and " + std::to_string(i) +
                  " the same vectors, but the input has N_" + std::to_string(source[i]) + " = " +
                  std::to_string(mode_shapes[source[i]]) + " and N_" + std::to_string(i) + " = " +
                  std::to_string(mode_shapes[i]));
    }
  }
  for (char const* group : {"/probes/w", "/probes/p"}) {
    if (!repeat) {
      impl_->require_members(group, d,
                             mode_shapes.empty() ? " (the number of /probes/w)" : " (the modes of the input)");
      continue;
    }
    std::size_t const members = impl_->group_size(group);
    if (members != stored) {
      impl_->fail(std::string(group) + " has " + std::to_string(members) + " members, expected " +
                  std::to_string(stored) + ", one per label of " + repeat_text);
    }
  }
  ProbeSet probes;
  if (repeat) probes.repeat = *repeat;
  // W is the row count of /probes/w/0; the rows to read are chosen once it is known.
  std::string const w0 = join_path("/probes/w", 0);
  std::size_t const w =
      impl_->probe_matrix_shape(w0, any_extent, mode_shapes.empty() ? any_extent : mode_shapes[0], 0, w0)[0];
  ShardRange const rows = select_rows(w);
  probes.first_row = rows.begin;
  probes.file_rows = w;
  for (std::size_t i = 0; i < d; ++i) {
    if (source[i] != i) {  // one View for the modes of a label
      probes.w.push_back(probes.w[source[i]]);
      probes.p.push_back(probes.p[source[i]]);
      continue;
    }
    std::size_t const n = mode_shapes.empty() ? any_extent : mode_shapes[i];
    Shaped const wi{join_path("/probes/w", i), impl_->probe_matrix_shape(join_path("/probes/w", i), w, n, i, w0)};
    probes.w.push_back(impl_->read_view<Matrix>(wi.name, wi.shape, &rows));
    Shaped const pi{join_path("/probes/p", i),
                    impl_->checked_shape(join_path("/probes/p", i), {any_extent, any_extent})};
    if (pi.shape != wi.shape) {
      impl_->fail(pi.name + " has shape " + impl::shape_string(pi.shape) + ", expected " +
                  impl::shape_string(wi.shape) + ", the shape of " + wi.name + " (W rows, N_" + std::to_string(i) +
                  " columns)");
    }
    probes.p.push_back(impl_->read_view<Matrix>(pi.name, pi.shape, &rows));
  }
  auto const order = impl_->integer_attribute("/probes", "order");
  if (order) {
    if (*order < 0 || *order > std::int64_t(max_jet_order)) {
      impl_->fail("attribute 'order' of /probes is " + std::to_string(*order) + ", expected 0 to " +
                  std::to_string(max_jet_order));
    }
    probes.order = std::size_t(*order);
  }
  auto const symmetric = impl_->integer_attribute("/probes", "symmetric");
  if (symmetric && *symmetric != 0 && *symmetric != 1) {
    impl_->fail("attribute 'symmetric' of /probes is " + std::to_string(*symmetric) + ", expected 0 or 1");
  }
  probes.symmetric = symmetric && *symmetric != 0;
  return probes;
}

JetStack Reader::read_jets(std::string const& group, std::vector<std::size_t> const& mode_shapes, std::size_t n_probes,
                           std::size_t n_orders) const {
  return impl_->read_jet_stack(group, mode_shapes, n_probes, n_orders, nullptr);
}

JetStack Reader::read_jets(std::string const& group, std::vector<std::size_t> const& mode_shapes, std::size_t n_probes,
                           std::size_t n_orders, ShardRange const& rows) const {
  if (n_probes == any_extent) {
    throw InvalidArgument("t3k::io::Reader::read_jets: reading rows needs the number of probes W of " + group);
  }
  return impl_->read_jet_stack(group, mode_shapes, n_probes, n_orders, &rows);
}

}  // namespace io
}  // namespace t3k
