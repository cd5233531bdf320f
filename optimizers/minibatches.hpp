#pragma once
/// \file minibatches.hpp
/// Seeded minibatches over a probe set: without replacement within an epoch, a fresh permutation per epoch; the
/// final partial batch of an epoch is used as it is (callers scale it by W / |batch|).

#include "t3k/core/error.hpp"
#include "t3k/core/impl/host_random.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace t3k {

/// Draws minibatches of probe indices without replacement within an epoch (a fresh permutation per epoch, from
/// a seeded generator); its state can be saved and restored, so a resumed fit draws the same batches.
class MinibatchSampler {
 public:
  /// **Throws:** InvalidArgument for batch_size 0 or n_probes 0.
  MinibatchSampler(std::size_t n_probes, std::size_t batch_size, std::uint64_t seed)
      : n_(n_probes), batch_(batch_size < n_probes ? batch_size : n_probes), gen_(seed) {
    if (n_probes == 0) throw InvalidArgument("t3k::MinibatchSampler: the probe set is empty");
    if (batch_size == 0) throw InvalidArgument("t3k::MinibatchSampler: batch_size must be >= 1 (got 0)");
    order_.resize(n_);
    position_ = n_;  // start a new epoch on the first call
  }

  /// The next batch of probe indices (sorted, for contiguous-ish gathers; order does not change the sums' meaning).
  std::vector<std::size_t> next() {
    if (position_ >= n_) shuffle();
    std::size_t const end = position_ + batch_ < n_ ? position_ + batch_ : n_;
    std::vector<std::size_t> batch(order_.begin() + long(position_), order_.begin() + long(end));
    position_ = end;
    std::sort(batch.begin(), batch.end());
    return batch;
  }
  std::size_t batch_size() const { return batch_; }  ///< probes per batch (the last of an epoch may hold fewer)

  /// Everything needed to continue the same sequence of batches: generator, position, current permutation.
  std::vector<std::uint64_t> save() const {
    auto const g = gen_.save();
    std::vector<std::uint64_t> words{g[0], g[1], g[2], std::uint64_t(position_)};
    words.insert(words.end(), order_.begin(), order_.end());
    return words;
  }
  /// **Throws:** InvalidArgument when the state does not belong to a sampler of this size.
  void restore(std::vector<std::uint64_t> const& words) {
    if (words.size() != 4 + n_) {
      throw InvalidArgument(impl::concat("t3k::MinibatchSampler: saved state has ", words.size(), " words, expected ",
                                         4 + n_, " for ", n_, " probes"));
    }
    gen_.restore({words[0], words[1], words[2]});
    position_ = std::size_t(words[3]);
    for (std::size_t k = 0; k < n_; ++k) order_[k] = std::size_t(words[4 + k]);
  }

 private:
  void shuffle() {
    std::iota(order_.begin(), order_.end(), std::size_t(0));
    for (std::size_t k = n_; k > 1; --k) {  // Fisher-Yates with the portable generator
      std::size_t const j = std::size_t(gen_.next() % k);
      std::swap(order_[k - 1], order_[j]);
    }
    position_ = 0;
  }

  std::size_t n_, batch_;
  impl::HostNormalGenerator gen_;
  std::vector<std::size_t> order_;
  std::size_t position_ = 0;
};

}  // namespace t3k
