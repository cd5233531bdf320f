#pragma once
/// \file chunk_size.hpp
/// How many probes a chunked call processes at a time: none (all at once), a fixed count, or automatic (the
/// balance estimator of SPEC.md section 14, resolved from the call's shapes).

#include "core/error.hpp"

#include <cstddef>
#include <string>

namespace t3k {

/// Probes per block of the fixed-order reduction of summed J^T (SPEC.md section 9). Block partials are added in
/// block order; any chunk size gives the same bits because a block cut by a chunk boundary carries its partial.
constexpr std::size_t reduction_block_size = 32;

class ChunkSize {
 public:
  enum class Kind { none, fixed, automatic };

  /// All probes in one pass (the default).
  ChunkSize() = default;
  static ChunkSize none() { return ChunkSize(); }
  /// `rows` probes at a time. **Throws:** InvalidArgument for 0.
  static ChunkSize of(std::size_t rows) {
    if (rows == 0) throw InvalidArgument("t3k::ChunkSize: a chunk size must be >= 1 (got 0)");
    ChunkSize c;
    c.kind_ = Kind::fixed;
    c.rows_ = rows;
    return c;
  }
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

  Kind kind() const { return kind_; }
  std::size_t rows() const { return rows_; }
  std::string to_string() const {
    return kind_ == Kind::none ? "none" : kind_ == Kind::automatic ? "auto" : std::to_string(rows_);
  }

 private:
  Kind kind_ = Kind::none;
  std::size_t rows_ = 0;
};

namespace impl {
/// The rows per pass for a resolved (none or fixed) chunk size and `n_probes` probes; at least 1.
inline std::size_t rows_per_chunk(ChunkSize const& c, std::size_t n_probes) {
  std::size_t const all = n_probes > 0 ? n_probes : 1;
  if (c.kind() == ChunkSize::Kind::fixed) return c.rows() < all ? c.rows() : all;
  return all;
}
}  // namespace impl

}  // namespace t3k
