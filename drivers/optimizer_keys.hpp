#pragma once
/// \file optimizer_keys.hpp
/// The optimizer keys of a `t3k fit` configuration (docs/config.md), one table per optimizer: each key bound to the
/// member of the optimizer's option struct it sets and to the range it must lie in. The same tables validate a
/// configuration, fill the option structs, echo the given keys into summary.yaml and the checkpoint fingerprint,
/// and are checked against docs/config.md by a test, so each key is written down once.

#include "t3k/optimizers/optimizer_options.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace t3k {
namespace fit {

/// The options of the optimizer a configuration names; the driver dispatches on the type (std::visit).
using OptimizerChoice = std::variant<NewtonCgOptions, GradientDescentOptions, McSgdOptions, AdamOptions>;

enum class KeyKind { real, integer, boolean, choice };

/// A key's value as the configuration file gives it (integers exact).
using KeyValue = std::variant<double, std::uint64_t, bool, std::string>;

/// One key of the option struct `Options` and the member it sets.
template <class Options>
struct OptionKey {
  char const* key = "";
  KeyKind kind = KeyKind::real;
  double min = 0, max = 0;  ///< real: the interval, each end open or closed
  bool min_open = false, max_open = false;
  std::uint64_t integer_min = 0, integer_max = 0;  ///< integer: [integer_min, integer_max]
  std::vector<std::string> choices;                ///< choice: the words allowed
  std::function<void(Options&, KeyValue const&)> set;
  std::function<KeyValue(Options const&)> get;
};

/// The keys every optimizer takes (OptimizerOptions: max_iterations, seed and the tolerances), in the order they
/// are checked and listed in messages.
std::vector<OptionKey<OptimizerOptions>> const& common_keys();

/// The keys of a rank continuation's controls (model.continuation: stage_iterations, stage_tol_decrease,
/// rank_rtol, rank_step, and the growth rule with its controls); its maximum ranks are given with the model's ranks.
std::vector<OptionKey<RankContinuation>> const& continuation_keys();

/// One optimizer's name and its own keys (the common ones not included).
template <class Options>
struct OptimizerTable {
  char const* name;
  std::vector<OptionKey<Options>> keys;
};

template <class Options>
OptimizerTable<Options> const& optimizer_table();
template <>
OptimizerTable<NewtonCgOptions> const& optimizer_table<NewtonCgOptions>();
template <>
OptimizerTable<GradientDescentOptions> const& optimizer_table<GradientDescentOptions>();
template <>
OptimizerTable<McSgdOptions> const& optimizer_table<McSgdOptions>();
template <>
OptimizerTable<AdamOptions> const& optimizer_table<AdamOptions>();

/// Every key `Options` takes: the common keys (setting Options::common), then the optimizer's own.
template <class Options>
std::vector<OptionKey<Options>> const& all_keys() {
  static std::vector<OptionKey<Options>> const keys = [] {
    std::vector<OptionKey<Options>> out;
    for (auto const& c : common_keys()) {
      OptionKey<Options> k;
      k.key = c.key;
      k.kind = c.kind;
      k.min = c.min;
      k.max = c.max;
      k.min_open = c.min_open;
      k.max_open = c.max_open;
      k.integer_min = c.integer_min;
      k.integer_max = c.integer_max;
      k.choices = c.choices;
      k.set = [set = c.set](Options& o, KeyValue const& v) { set(o.common, v); };
      k.get = [get = c.get](Options const& o) { return get(o.common); };
      out.push_back(std::move(k));
    }
    for (auto const& k : optimizer_table<Options>().keys) out.push_back(k);
    return out;
  }();
  return keys;
}

/// The name of the optimizer whose options `choice` holds.
std::string optimizer_name(OptimizerChoice const& choice);

/// Default options of the optimizer `name`; empty for an unknown name.
std::optional<OptimizerChoice> default_options(std::string const& name);

/// The optimizer names, in the order of docs/config.md.
std::vector<std::string> optimizer_names();

/// Each key of optimizer `name` (the common keys for "") with its default, for checking the documentation.
std::vector<std::pair<std::string, KeyValue>> key_defaults(std::string const& name);

}  // namespace fit
}  // namespace t3k
