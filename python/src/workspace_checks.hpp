#pragma once
/// \file workspace_checks.hpp
/// The memory checks of the calls whose workspace the library's J^T memory model sizes (J^T of every measurement
/// kind), made before anything is allocated, as arrays.hpp's require_memory.

#include "arrays.hpp"

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/impl/frame_shapes.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/core/measurement_kind.hpp"
#include "t3k/core/orthogonal_frame.hpp"

#include <string>

namespace t3k_python {

/// Bytes of `n` variations of a frame of shapes `sh`.
inline Bytes variation_bytes(t3k::impl::FrameShapes const& sh, std::size_t n, Dtype dt) {
  Bytes one = 0;
  for (std::size_t i = 0; i < sh.d(); ++i) {
    one = sum_bytes(
        one, sum_bytes(array_bytes({sh.no[i], sh.big_n[i]}, dt), array_bytes({sh.rl[i], sh.nu[i], sh.rr[i + 1]}, dt)));
  }
  return times(one, n);
}

/// Refuses a J^T of measurements of `kind` whose allocations (its memory model at the chunk it will run, whose
/// per-sample rows hold the result when it is not summed) and the result's copy into the module's arrays exceed the
/// memory available. `samples` names the argument that sized W (ww, indices).
template <class Scalar>
void check_transpose_memory(std::string const& where, t3k::MeasurementKind kind,
                            t3k::OrthogonalFrame<Scalar, Memory> const& f, std::size_t w, std::size_t order_plus_one,
                            std::size_t nt, t3k::TransposeOptions const& options, Dtype dt,
                            std::string const& samples = "ww") {
  if (order_plus_one == 0) return;  // the library names this
  auto const sh = t3k::impl::frame_shapes(f);
  Bytes bytes;
  try {
    constexpr std::size_t block = t3k::reduction_block_size_for<ExecutionSpace>();
    auto const chunk =
        t3k::impl::resolve_chunk_size<ExecutionSpace, Scalar>(kind, options.chunk_size, sh, order_plus_one - 1, w, nt);
    auto const model = t3k::impl::transpose_memory_model_elements<Scalar>(kind, sh, order_plus_one - 1, nt,
                                                                          options.sum_over_probes, block);
    bytes = model.allocated_bytes(w, t3k::impl::rows_per_chunk(chunk, w, block));
  } catch (t3k::InvalidArgument const&) {
    bytes = std::nullopt;  // a count past size_t
  }
  std::size_t const n_out =
      options.sum_over_probes ? nt : (w > 0 && nt > ~std::size_t(0) / w ? ~std::size_t(0) : nt * w);
  std::string const what = options.sum_over_probes
                               ? "J^T of " + std::to_string(nt) + " residual stacks (residuals)"
                               : "J^T with sum_over_probes=False (n_t * W = " + std::to_string(nt) + " * " +
                                     std::to_string(w) + " variations, residuals and " + samples + ")";
  require_memory(sum_bytes(bytes, variation_bytes(sh, n_out, dt)), where, what);
}

}  // namespace t3k_python
