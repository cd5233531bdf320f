#pragma once
/// \file chunk_size.hpp
/// How many probes a chunked call processes at a time: none (all at once), a fixed count, or automatic, and the
/// reduction blocks chunks are measured in. What `automatic` resolves to is decided in one place,
/// t3k/algorithms/estimate_chunk_size.hpp.

#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"

#include <cstddef>
#include <string>

namespace t3k {

/// Probes per block (docs/math.md) on host backends. Chunked calls work on blocks of this many probes aligned to
/// the absolute probe index: every core contraction is one matrix product per block and summed J^T adds block
/// products into the result in block order. A fixed chunk size is therefore rounded down to a multiple of the block
/// (at least one block), so that chunk boundaries fall on block boundaries and every chunk size gives the same bits.
/// The products have block * (K+1) rows: 64 keeps them tall enough for the BLAS's blocked kernels while one block
/// of workspace stays small (BM_SmallProduct times the 64- and 192-row shapes).
constexpr std::size_t reduction_block_size = 64;

/// Probes per block on device backends (CUDA, HIP): the unit of the summed J^T's block partials there (one batched
/// kernel sums each block of a chunk into a partial, a second adds them in block order: device/batched_product.hpp).
/// Large blocks keep the partials few; the forward sweeps' products do not depend on the block at all.
constexpr std::size_t device_reduction_block_size = 2048;

/// The reduction block of chunked calls on `ExecutionSpace`: reduction_block_size on host backends,
/// device_reduction_block_size on device backends. Chunk sizes on that space are multiples of it (or all rows).
template <class ExecutionSpace>
constexpr std::size_t reduction_block_size_for() {
  return impl::runs_on_host<ExecutionSpace>() ? reduction_block_size : device_reduction_block_size;
}

/// Block partials a summed J^T keeps for a chunk of `rows` probe rows on a space whose reduction block is
/// `block_rows`: device backends (block device_reduction_block_size) sum each block of a chunk into a partial of its
/// own in one batched kernel and then add the partials to the result in block order (the same two launches whatever
/// the number of blocks); host backends add each block's products to the result directly (none).
constexpr std::size_t summed_block_partials(std::size_t rows, std::size_t block_rows) {
  return block_rows == device_reduction_block_size ? (rows + block_rows - 1) / block_rows : 0;
}

/// How many probes a chunked operation (J^T, J, probe jets) handles per pass: all at once (none), a fixed
/// number, or automatic (the memory model's choice for the call's shapes and space, estimate_chunk_size.hpp).
class ChunkSize {
 public:
  /// Which of the three a ChunkSize is.
  enum class Kind { none, fixed, automatic };

  /// All probes in one pass (the default).
  ChunkSize() = default;
  /// All probes in one pass.
  static ChunkSize none() { return ChunkSize(); }
  /// `rows` probes at a time, rounded down to a multiple of the space's reduction block (reduction_block_size_for:
  /// 64 on host backends, 2048 on device backends; at least one block) when a call uses it. **Throws:** InvalidArgument
  /// for 0.
  static ChunkSize of(std::size_t rows) {
    if (rows == 0) throw InvalidArgument("t3k::ChunkSize: a chunk size must be >= 1 (got 0)");
    ChunkSize c;
    c.kind_ = Kind::fixed;
    c.rows_ = rows;
    return c;
  }
  /// The memory model's choice for each call (automatic_chunk_size).
  static ChunkSize automatic() {
    ChunkSize c;
    c.kind_ = Kind::automatic;
    return c;
  }
  /// Parses "none", "auto" or a positive integer. **Throws:** InvalidArgument naming the text.
  static ChunkSize parse(std::string const& text) {
    if (text == "none") return none();
    if (text == "auto") return automatic();
    std::size_t pos = 0;
    unsigned long long value = 0;
    try {
      value = std::stoull(text, &pos);
    } catch (...) {
      pos = 0;
    }
    if (pos == 0 || pos != text.size() || text[0] == '-' || value == 0) {
      throw InvalidArgument("chunk size '" + text + "' is not 'auto', 'none' or a positive integer");
    }
    return of(std::size_t(value));
  }

  Kind kind() const { return kind_; }         ///< none, fixed or automatic
  std::size_t rows() const { return rows_; }  ///< the fixed size (0 unless fixed)
  /// "none", "auto" or the number, as parse reads it.
  std::string to_string() const {
    return kind_ == Kind::none ? "none" : kind_ == Kind::automatic ? "auto" : std::to_string(rows_);
  }

 private:
  Kind kind_ = Kind::none;
  std::size_t rows_ = 0;
};

namespace impl {
/// a * b for byte counts of the memory model. **Throws:** InvalidArgument naming `where` when it exceeds size_t.
inline std::size_t checked_mul(std::size_t a, std::size_t b, char const* where) {
  std::size_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    throw InvalidArgument(concat(where, ": byte count ", a, " x ", b, " overflows"));
  return out;
}
/// a + b for byte counts of the memory model. **Throws:** InvalidArgument naming `where` when it exceeds size_t.
inline std::size_t checked_add(std::size_t a, std::size_t b, char const* where) {
  std::size_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    throw InvalidArgument(concat(where, ": byte count ", a, " + ", b, " overflows"));
  return out;
}

/// A chunk size rounded down to a multiple of the reduction block `block`, at least one block.
inline std::size_t block_aligned_rows(std::size_t rows, std::size_t block) {
  return rows < block ? block : rows - rows % block;
}

/// The rows per pass for `requested` rows per chunk and `n_probes` probes: all of them when the request covers
/// them, else the request rounded down to a multiple of the reduction block `block` (at least one block); at least 1.
inline std::size_t rows_per_chunk(std::size_t requested, std::size_t n_probes, std::size_t block) {
  std::size_t const all = n_probes > 0 ? n_probes : 1;
  if (requested >= all) return all;
  std::size_t const rows = block_aligned_rows(requested, block);
  return rows < all ? rows : all;
}

/// rows_per_chunk for a resolved (none or fixed) chunk size.
inline std::size_t rows_per_chunk(ChunkSize const& c, std::size_t n_probes, std::size_t block) {
  return c.kind() == ChunkSize::Kind::fixed ? rows_per_chunk(c.rows(), n_probes, block) : (n_probes > 0 ? n_probes : 1);
}
}  // namespace impl

}  // namespace t3k
