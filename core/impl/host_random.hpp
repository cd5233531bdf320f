#pragma once
/// \file host_random.hpp
/// A self-contained seeded normal generator (splitmix64 + Box-Muller). Random T3s and tangents are drawn on the
/// host in a fixed order with it and then copied, so the same seed gives the same numbers on every backend,
/// compiler and standard library (std::normal_distribution is implementation-defined).

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace t3k {
namespace impl {

class HostNormalGenerator {
 public:
  explicit HostNormalGenerator(std::uint64_t seed) : state_(seed ^ 0x9E3779B97F4A7C15ull) {}

  /// Uniform in (0, 1), never 0 (53 random bits).
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

  /// Standard normal.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double const u1 = uniform();
    double const u2 = uniform();
    double const radius = std::sqrt(-2.0 * std::log(u1));
    double const angle = 6.283185307179586476925286766559 * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

  /// Skips the next `n` normals in O(1): the state is a counter (splitmix64) and Box-Muller consumes two uniforms
  /// per pair of normals, so whole pairs are skipped by advancing the counter. Afterwards the stream continues
  /// exactly as if `n` calls of normal() had been made (sharded generation of a global sequence).
  void discard_normals(std::uint64_t n) {
    if (n == 0) return;
    if (has_spare_) {
      has_spare_ = false;
      --n;
    }
    state_ += (n / 2) * 2 * 0x9E3779B97F4A7C15ull;  // wraps modulo 2^64 like next()
    if (n % 2 == 1) (void)normal();                 // draws a pair, keeps the second as the spare
  }

  /// The full generator state as three words, and its restoration: resumed runs continue the same stream.
  std::array<std::uint64_t, 3> save() const {
    std::uint64_t spare_bits = 0;
    std::memcpy(&spare_bits, &spare_, sizeof(spare_bits));
    return {state_, spare_bits, has_spare_ ? 1u : 0u};
  }
  void restore(std::array<std::uint64_t, 3> const& words) {
    state_ = words[0];
    std::memcpy(&spare_, &words[1], sizeof(spare_));
    has_spare_ = words[2] != 0;
  }

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace impl
}  // namespace t3k
