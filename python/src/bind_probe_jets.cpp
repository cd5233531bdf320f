/// \file bind_probe_jets.cpp
/// Python bindings of the probe jets of a T3 (probes, probe_derivatives) and of the chunk-size model.

#include "bindings.hpp"
#include "objects.hpp"
#include "sample_arrays.hpp"

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace t3k_python {
namespace {

nb::list probe_derivatives(PyTuckerTensorTrain const& x, nb::handle ww, nb::handle pp, nb::handle order,
                           nb::handle chunk_size) {
  std::string const where = "t3k.probe_derivatives";
  std::size_t const k = size_arg(order, where, "order");
  auto const chunk = chunk_size_arg(chunk_size, where);
  auto const w_arrays = as_array_list(ww, x.dtype, 2, where, "ww", "(W x N_i)");
  auto const p_arrays = as_array_list(pp, x.dtype, 2, where, "pp", "(W x N_i)");
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    auto const shapes = t3.mode_shapes();
    std::size_t const w = w_arrays.empty() ? 0 : w_arrays[0].shape(0);
    Bytes bytes = 0;
    for (std::size_t n : shapes) bytes = sum_bytes(bytes, array_bytes({w, k + 1, n}, x.dtype));
    require_memory(bytes, where, "the jets of W = " + std::to_string(w) + " probes (ww) at order " + std::to_string(k));
    t3k::ProbeJets<Scalar, Memory> z;
    nb::list const out = new_arrays_per_mode(x.n_modes(), x.dtype, z, [&](std::size_t i) {
      return std::vector<std::size_t>{w, k + 1, shapes[i]};
    });
    auto const wv = probe_views<Scalar>(w_arrays);
    auto const pv = probe_views<Scalar>(p_arrays);
    run_kernels([&] { t3k::probe_derivatives_into(ExecutionSpace(), t3, wv, pv, k, z, chunk); });
    return out;
  });
}

nb::list probes(PyTuckerTensorTrain const& x, nb::handle ww) {
  std::string const where = "t3k.probes";
  auto const w_arrays = as_array_list(ww, x.dtype, 2, where, "ww", "(W x N_i)");
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    auto const shapes = t3.mode_shapes();
    std::size_t const w = w_arrays.empty() ? 0 : w_arrays[0].shape(0);
    Bytes bytes = 0;
    for (std::size_t n : shapes) bytes = sum_bytes(bytes, array_bytes({w, n}, x.dtype));
    require_memory(bytes, where, "the probes of W = " + std::to_string(w) + " probe vectors (ww)");
    t3k::Probes<Scalar, Memory> z;
    nb::list const out = new_arrays_per_mode(x.n_modes(), x.dtype, z, [&](std::size_t i) {
      return std::vector<std::size_t>{w, shapes[i]};
    });
    auto const wv = probe_views<Scalar>(w_arrays);
    run_kernels([&] { t3k::probes_into(ExecutionSpace(), t3, wv, z); });
    return out;
  });
}

t3k::ScalarType scalar_type(Dtype dt) {
  return dt == Dtype::float32 ? t3k::ScalarType::float32 : t3k::ScalarType::float64;
}

/// Runs a query of the memory model. Its byte counts are checked, and laying out the workspace keeps a few vectors
/// per residual stack on the host: a count past size_t, or an n_tangent whose bookkeeping alone would not fit,
/// is refused naming the arguments instead of the C++ types' own messages.
template <class F>
std::size_t model_query(std::string const& where, std::vector<std::size_t> const& shape,
                        std::vector<std::size_t> const& tucker_ranks, std::vector<std::size_t> const& tt_ranks,
                        std::size_t order, std::size_t n_probes, std::size_t n_tangent, F&& f) {
  std::size_t const d = shape.size();
  if (tucker_ranks.size() != d || tt_ranks.size() != d + 1) {
    fail(where + ": shape has " + std::to_string(d) + " entries, tucker_ranks has " +
         std::to_string(tucker_ranks.size()) + " entries and tt_ranks has " + std::to_string(tt_ranks.size()) +
         " entries; expected d, d and d + 1 (one per mode, one per bond)");
  }
  std::string const sizes = "order = " + std::to_string(order) + ", n_probes = " + std::to_string(n_probes) +
                            ", n_tangent = " + std::to_string(n_tangent);
  constexpr std::uint64_t bookkeeping_per_stack = 4 * 64;  // four vectors of per-mode Views per stack entry
  require_memory(times(times(Bytes(bookkeeping_per_stack), d + 1), n_tangent), where,
                 "the memory model's layout for n_tangent = " + std::to_string(n_tangent));
  try {
    return f();
  } catch (std::length_error const&) {
  } catch (std::bad_alloc const&) {
  } catch (t3k::InvalidArgument const& e) {
    if (std::string(e.what()).find("overflows") == std::string::npos) throw;
  }
  fail(where + ": the byte counts for these shapes and " + sizes + " exceed 2^64");
}

std::size_t estimate_chunk_size(nb::handle shape, nb::handle tucker_ranks, nb::handle tt_ranks, nb::handle order,
                                nb::handle n_probes, nb::handle n_tangent, nb::handle n_shards, nb::handle dtype,
                                nb::handle block_rows, nb::handle kind_name) {
  std::string const where = "t3k.estimate_chunk_size";
  auto const kind = kind_arg(kind_name, where);
  auto const big_n = size_list_arg(shape, where, "shape");
  auto const n = size_list_arg(tucker_ranks, where, "tucker_ranks");
  auto const r = size_list_arg(tt_ranks, where, "tt_ranks");
  std::size_t const k = size_arg(order, where, "order"), w = size_arg(n_probes, where, "n_probes");
  std::size_t const nt = size_arg(n_tangent, where, "n_tangent"), shards = size_arg(n_shards, where, "n_shards", 1);
  auto const scalar = scalar_type(dtype_arg(dtype, where));
  std::size_t const block = size_arg(block_rows, where, "block_rows", 1);
  return model_query(where, big_n, n, r, k, w, nt,
                     [&] { return t3k::estimate_chunk_size(kind, big_n, n, r, k, w, nt, shards, scalar, block); });
}

std::size_t max_chunk_size_within(nb::handle shape, nb::handle tucker_ranks, nb::handle tt_ranks, nb::handle order,
                                  nb::handle n_probes, nb::handle target_bytes, nb::handle n_tangent,
                                  nb::handle n_shards, nb::handle dtype, nb::handle block_rows, nb::handle kind_name) {
  std::string const where = "t3k.max_chunk_size_within";
  auto const kind = kind_arg(kind_name, where);
  auto const big_n = size_list_arg(shape, where, "shape");
  auto const n = size_list_arg(tucker_ranks, where, "tucker_ranks");
  auto const r = size_list_arg(tt_ranks, where, "tt_ranks");
  std::size_t const k = size_arg(order, where, "order"), w = size_arg(n_probes, where, "n_probes");
  std::size_t const target = size_arg(target_bytes, where, "target_bytes");
  std::size_t const nt = size_arg(n_tangent, where, "n_tangent"), shards = size_arg(n_shards, where, "n_shards", 1);
  auto const scalar = scalar_type(dtype_arg(dtype, where));
  std::size_t const block = size_arg(block_rows, where, "block_rows", 1);
  return model_query(where, big_n, n, r, k, w, nt, [&] {
    return t3k::max_chunk_size_within(kind, big_n, n, r, k, w, target, nt, shards, scalar, block);
  });
}

/// The address a call would read `obj` from (for tests of the no-copy path).
std::uintptr_t array_address(nb::handle obj, nb::handle dtype, std::size_t ndim) {
  return reinterpret_cast<std::uintptr_t>(
      as_array(obj, dtype_arg(dtype, "t3k._array_address"), ndim, "t3k._array_address", "obj", "").data());
}

}  // namespace

void bind_probe_jets(nb::module_& m) {
  m.def("probes", &probes, "x"_a, "ww"_a,
        nb::sig("def probes(x: TuckerTensorTrain, ww: typing.Sequence[numpy.typing.ArrayLike]) -> "
                "list[numpy.ndarray]"),
        "Order-0 probes z_i = X contracted with ww[m] in every mode m != i: one (W, N_i) array per mode.\n\n"
        "ww: one (W, N_i) array per mode. Raises ValueError naming the array and both shapes.");
  m.def("probe_derivatives", &probe_derivatives, "x"_a, "ww"_a, "pp"_a, "order"_a, "chunk_size"_a.none() = "auto",
        nb::sig("def probe_derivatives(x: TuckerTensorTrain, ww: typing.Sequence[numpy.typing.ArrayLike], "
                "pp: typing.Sequence[numpy.typing.ArrayLike], order: int, "
                "chunk_size: int | str | None = 'auto') -> list[numpy.ndarray]"),
        "Probe jets of X: one (W, order + 1, N_i) array per mode holding the Taylor coefficients z_i^(k) of\n"
        "z_i(t) = X contracted with ww[m] + t pp[m] in every mode m != i (coefficients, not derivatives: no k!).\n"
        "Orders k >= d are zero.\n\n"
        "ww, pp: one (W, N_i) array per mode. chunk_size: probes per pass ('auto', None for all at once, or an\n"
        "integer); the result does not depend on it. Raises ValueError naming the array and both shapes.");
  m.def("estimate_chunk_size", &estimate_chunk_size, "shape"_a, "tucker_ranks"_a, "tt_ranks"_a, "order"_a, "n_probes"_a,
        "n_tangent"_a = 1, "n_shards"_a = 1, "dtype"_a = "float64", "block_rows"_a = t3k::reduction_block_size,
        "kind"_a = "probes",
        nb::sig("def estimate_chunk_size(shape: typing.Sequence[int], tucker_ranks: typing.Sequence[int], "
                "tt_ranks: typing.Sequence[int], order: int, n_probes: int, n_tangent: int = 1, n_shards: int = 1, "
                "dtype: numpy.typing.DTypeLike = 'float64', block_rows: int = 64, kind: str = 'probes') -> int"),
        "The balance chunk size of J^T for these T3 shapes: the largest chunk whose workspace stays within the\n"
        "bytes of the sample data itself; a multiple of block_rows, or all samples. kind: the measurements J^T\n"
        "runs on, 'probes', 'entries' or 'applies' (n_probes: their number W). Nothing runs.");
  m.def("max_chunk_size_within", &max_chunk_size_within, "shape"_a, "tucker_ranks"_a, "tt_ranks"_a, "order"_a,
        "n_probes"_a, "target_bytes"_a, "n_tangent"_a = 1, "n_shards"_a = 1, "dtype"_a = "float64",
        "block_rows"_a = t3k::reduction_block_size, "kind"_a = "probes",
        nb::sig("def max_chunk_size_within(shape: typing.Sequence[int], tucker_ranks: typing.Sequence[int], "
                "tt_ranks: typing.Sequence[int], order: int, n_probes: int, target_bytes: int, n_tangent: int = 1, "
                "n_shards: int = 1, dtype: numpy.typing.DTypeLike = 'float64', block_rows: int = 64, "
                "kind: str = 'probes') -> int"),
        "The largest J^T chunk whose peak memory (inputs, workspace, gradients) stays within target_bytes, for\n"
        "measurements of kind ('probes', 'entries' or 'applies').\n"
        "Raises ValueError stating the bytes needed when even one block does not fit.");
  m.def("_array_address", &array_address, "obj"_a, "dtype"_a, "ndim"_a,
        "Testing aid: the address a call reads obj from (the array's own when no copy is made).");
}

}  // namespace t3k_python
