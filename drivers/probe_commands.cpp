/// \file probe_commands.cpp
/// `t3k jets`, `t3k frame`, `t3k jv` and `t3k jtr` (probe_commands.hpp).

#include "drivers/probe_commands.hpp"

#include "drivers/collective.hpp"
#include "drivers/device_copies.hpp"
#include "drivers/exit_codes.hpp"
#include "drivers/finite_results.hpp"
#include "drivers/flag_checks.hpp"
#include "t3k/io/file_safety.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/error.hpp"

#include <CLI/CLI.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace t3k {
namespace cli {

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;
using DeviceMatrix = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;
using DeviceArray3 = Kokkos::View<double***, Kokkos::LayoutRight, Mem>;

/// This rank's rows of a probe set (all rows with one rank).
io::RowSelector shard_rows(Communicator const& comm) {
  return [comm](std::size_t n_rows) { return comm.shard_range(n_rows); };
}

/// Refuses an --out that cannot be written safely: a directory, FIFO, socket or block device, or the input file
/// itself (the same device and inode, whatever the spelling). A character device such as /dev/null is written
/// through.
void check_in_out(ProbeCommandOptions const& opt) {
  try {
    (void)io::output_target(opt.out, "--out");
  } catch (io::FileError const& e) {
    throw UsageError(e.what());
  }
  if (io::same_file(opt.in, opt.out)) {
    throw UsageError("--out: '" + opt.out + "' is the input file --in '" + opt.in +
                     "'; writing it would destroy the input, name another file");
  }
}

template <class Dst, class Src>
t3k::OrthogonalFrame<double, Dst> copy_frame(t3k::OrthogonalFrame<double, Src> const& f) {
  using Frame = t3k::OrthogonalFrame<double, Dst>;
  std::vector<typename Frame::matrix_type> up;
  std::vector<typename Frame::core_type> left, right, outer;
  for (std::size_t i = 0; i < f.n_modes(); ++i) {
    up.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, f.up_tucker(i)));
    left.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, f.left_tt(i)));
    right.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, f.right_tt(i)));
    outer.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, f.outer_tt(i)));
  }
  return Frame(std::move(up), std::move(left), std::move(right), std::move(outer));
}

template <class Dst, class Src>
t3k::T3Variation<double, Dst> copy_variation(t3k::T3Variation<double, Src> const& v) {
  t3k::T3Variation<double, Dst> out;
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    out.tucker.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, v.tucker[i]));
    out.tt.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, v.tt[i]));
  }
  return out;
}

/// The jet order: --order when given, else the order attribute of /probes.
std::size_t resolve_order(ProbeCommandOptions const& opt, io::ProbeSet const& probes, std::string const& file) {
  if (opt.order >= 0) return std::size_t(opt.order);
  if (!probes.order) throw UsageError(file + ": attribute 'order' of /probes is missing; pass --order K");
  return *probes.order;
}

io::RootAttributes root_attributes(std::size_t d, std::size_t w, std::size_t k) {
  io::RootAttributes a;
  a.d = std::int64_t(d);
  a.w = std::int64_t(w);
  a.k = std::int64_t(k);
  return a;
}

void add_in_out(CLI::App* sub, ProbeCommandOptions& opt) {
  sub->add_option("--in", opt.in, "input HDF5 file")->required();
  sub->add_option("--out", opt.out, "output HDF5 file (written atomically)")->required();
}

}  // namespace

ProbeCommands add_probe_commands(CLI::App& app, ProbeCommandOptions& opt) {
  ProbeCommands c;
  c.jets = app.add_subcommand("jets", "read /t3 and /probes, write the probe jets /jets");
  add_in_out(c.jets, opt);
  c.jets->add_option("--order", opt.order, "jet order K (default: the order attribute of /probes)")
      ->check(integer_in(0, static_cast<long long>(io::max_jet_order)));

  c.frame = app.add_subcommand("frame", "read /t3, write its orthogonal frame /frame");
  add_in_out(c.frame, opt);
  c.jv = app.add_subcommand("jv", "read /frame, /variation and /probes, write J v as /tangent_jets");
  add_in_out(c.jv, opt);
  c.jv->add_option("--order", opt.order, "jet order K (default: the order attribute of /probes)")
      ->check(integer_in(0, static_cast<long long>(io::max_jet_order)));
  c.jtr = app.add_subcommand("jtr", "read /frame, /probes and /residual, write J^T r as /grad or /grad_per_probe");
  add_in_out(c.jtr, opt);
  c.jtr->add_option("--chunk-size", opt.chunk_size, "probes per pass: auto, none or a positive integer")
      ->capture_default_str();
  c.jtr->add_flag("--per-probe", opt.per_probe, "one gradient per probe (/grad_per_probe) instead of the sum");
  return c;
}

// jets, jv and jtr read this rank's rows inside `collectively` (a bad file fails every rank alike), compute on them,
// and write through a ShardedWriter. With one rank every step is the single-process step.

int run_jets(ProbeCommandOptions const& opt, Communicator const& comm) {
  io::HostT3 x_host;
  io::ProbeSet probes;
  std::size_t order = 0;
  collectively(comm, command_exit_code, [&] {
    check_in_out(opt);
    io::Reader in(opt.in);
    x_host = in.read_t3();
    probes = in.read_probes(x_host.mode_shapes(), shard_rows(comm));
    order = resolve_order(opt, probes, in.path());
  });
  Space space;
  io::JetStack jets;
  collectively(comm, command_exit_code, [&] {
    auto const x = t3k::copy_t3_to<Mem>(space, x_host);
    auto const ww = to_device(probes.w);
    auto const pp = to_device(probes.p);
    auto const z = t3k::probe_derivatives(space, x, ww, pp, order);
    for (auto const& zi : z) jets.push_back(to_host(zi));
    require_finite_results("/jets", jets);
  });
  ShardedWriter out(comm, command_exit_code, opt.out);
  for (std::size_t i = 0; i < jets.size(); ++i) out.write_view_rows("/jets/" + std::to_string(i), jets[i]);
  out.on_root([&](io::Writer& w) {
    w.write_root_attributes(root_attributes(x_host.n_modes(), probes.n_file_probes(), order));
  });
  out.commit();
  return exit_success;
}

int run_frame(ProbeCommandOptions const& opt) {
  check_in_out(opt);
  io::Reader in(opt.in);
  auto const x_host = in.read_t3();
  Space space;
  auto const x = t3k::copy_t3_to<Mem>(space, x_host);
  auto const frame = copy_frame<Kokkos::HostSpace>(t3k::orthogonal_frame(space, x));
  for (std::size_t i = 0; i < frame.n_modes(); ++i) {
    require_finite_result("/frame/up_tucker/" + std::to_string(i), frame.up_tucker(i));
    require_finite_result("/frame/left_tt/" + std::to_string(i), frame.left_tt(i));
    require_finite_result("/frame/right_tt/" + std::to_string(i), frame.right_tt(i));
    require_finite_result("/frame/outer_tt/" + std::to_string(i), frame.outer_tt(i));
  }
  io::Writer out(opt.out);
  out.write_frame(frame);
  io::RootAttributes a;
  a.d = std::int64_t(frame.n_modes());
  out.write_root_attributes(a);
  out.commit();
  return exit_success;
}

int run_jv(ProbeCommandOptions const& opt, Communicator const& comm) {
  io::HostFrame frame_host;
  io::HostVariation v_host;
  io::ProbeSet probes;
  std::size_t order = 0;
  collectively(comm, command_exit_code, [&] {
    check_in_out(opt);
    io::Reader in(opt.in);
    frame_host = in.read_frame();
    v_host = in.read_variation(frame_host);
    probes = in.read_probes(frame_host.mode_shapes(), shard_rows(comm));
    order = resolve_order(opt, probes, in.path());
  });
  Space space;
  io::JetStack jets;
  collectively(comm, command_exit_code, [&] {
    auto const frame = copy_frame<Mem>(frame_host);
    auto const v = copy_variation<Mem>(v_host);
    auto const ww = to_device(probes.w);
    auto const pp = to_device(probes.p);
    auto const z = t3k::tangent_probe_derivatives(space, frame, v, ww, pp, order);
    for (auto const& zi : z) {
      auto const all = to_host(zi);  // (1, W, K+1, N_i)
      io::Array3 first(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::cli::tangent_jets"), all.extent(1),
                       all.extent(2), all.extent(3));
      Kokkos::deep_copy(first, Kokkos::subview(all, 0, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
      jets.push_back(first);
    }
    require_finite_results("/tangent_jets", jets);
  });
  ShardedWriter out(comm, command_exit_code, opt.out);
  for (std::size_t i = 0; i < jets.size(); ++i) out.write_view_rows("/tangent_jets/" + std::to_string(i), jets[i]);
  out.on_root([&](io::Writer& w) {
    w.write_root_attributes(root_attributes(frame_host.n_modes(), probes.n_file_probes(), order));
  });
  out.commit();
  return exit_success;
}

int run_jtr(ProbeCommandOptions const& opt, Communicator const& comm) {
  t3k::ChunkSize chunk;
  io::HostFrame frame_host;
  io::ProbeSet probes;
  io::JetStack residual_host;
  collectively(comm, command_exit_code, [&] {
    try {
      chunk = t3k::ChunkSize::parse(opt.chunk_size);
      check_in_out(opt);
    } catch (t3k::InvalidArgument const& e) {
      throw UsageError(std::string("--chunk-size: ") + e.what());
    }
    io::Reader in(opt.in);
    frame_host = in.read_frame();
    probes = in.read_probes(frame_host.mode_shapes(), shard_rows(comm));
    std::size_t const n_orders = probes.order ? *probes.order + 1 : io::any_extent;
    residual_host = in.read_jets("/residual", frame_host.mode_shapes(), probes.n_file_probes(), n_orders,
                                 t3k::ShardRange{probes.first_row, probes.first_row + probes.n_probes()});
  });
  std::size_t const order = residual_host[0].extent(1) - 1;
  Space space;
  t3k::OrthogonalFrame<double, Mem> frame;
  std::vector<DeviceMatrix> ww, pp;
  std::vector<DeviceArray3> residual;
  collectively(comm, command_exit_code, [&] {
    frame = copy_frame<Mem>(frame_host);
    ww = to_device(probes.w);
    pp = to_device(probes.p);
    residual = to_device(residual_host);
  });
  t3k::TransposeOptions options;
  options.sum_over_probes = !opt.per_probe;
  options.chunk_size = chunk;
  // Collective: this rank's chunked sum (chunk auto: the estimate for this rank's rows, n_shards = P), then one
  // reduction; per probe, this rank's rows. Its shape checks are collective, so it fails on every rank or none.
  auto const grad_device = t3k::probe_derivatives_transpose(space, comm, frame, ww, pp, residual, options);
  io::HostVariation grad;
  collectively(comm, command_exit_code, [&] {
    grad = copy_variation<Kokkos::HostSpace>(grad_device);
    std::string const group = opt.per_probe ? "/grad_per_probe" : "/grad";
    for (std::size_t i = 0; i < grad.n_modes(); ++i) {
      require_finite_result(group + "/tucker/" + std::to_string(i), grad.tucker[i]);
      require_finite_result(group + "/tt/" + std::to_string(i), grad.tt[i]);
    }
  });
  ShardedWriter out(comm, command_exit_code, opt.out);
  if (opt.per_probe) {
    for (std::size_t i = 0; i < grad.n_modes(); ++i) {
      out.write_view_rows("/grad_per_probe/tucker/" + std::to_string(i), grad.tucker[i]);
      out.write_view_rows("/grad_per_probe/tt/" + std::to_string(i), grad.tt[i]);
    }
  } else {
    out.on_root([&](io::Writer& w) { w.write_gradient(grad, false); });
  }
  out.on_root([&](io::Writer& w) {
    w.write_root_attributes(root_attributes(frame_host.n_modes(), probes.n_file_probes(), order));
  });
  out.commit();
  return exit_success;
}

}  // namespace cli
}  // namespace t3k
