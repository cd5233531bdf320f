/// \file optimizer_keys.cpp
/// The key tables of the four optimizers. Ranges are those of docs/config.md; a test checks that every key here is
/// documented there with its default, and that nothing else is.

#include "drivers/optimizer_keys.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace t3k {
namespace fit {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::uint64_t no_limit = std::numeric_limits<std::uint64_t>::max();

// `field` is a generic lambda returning a reference to the member, so one accessor serves set and get.

template <class Options, class Field>
OptionKey<Options> real(char const* key, Field field, double min, bool min_open, double max, bool max_open) {
  OptionKey<Options> k;
  k.key = key;
  k.kind = KeyKind::real;
  k.min = min;
  k.min_open = min_open;
  k.max = max;
  k.max_open = max_open;
  k.set = [field](Options& o, KeyValue const& v) { field(o) = std::get<double>(v); };
  k.get = [field](Options const& o) { return KeyValue(double(field(o))); };
  return k;
}

template <class Options, class Field>
OptionKey<Options> integer(char const* key, Field field, std::uint64_t min, std::uint64_t max) {
  OptionKey<Options> k;
  k.key = key;
  k.kind = KeyKind::integer;
  k.integer_min = min;
  k.integer_max = max;
  k.set = [field](Options& o, KeyValue const& v) {
    using T = std::remove_reference_t<decltype(field(o))>;
    field(o) = T(std::get<std::uint64_t>(v));
  };
  k.get = [field](Options const& o) { return KeyValue(std::uint64_t(field(o))); };
  return k;
}

template <class Options, class Field>
OptionKey<Options> boolean(char const* key, Field field) {
  OptionKey<Options> k;
  k.key = key;
  k.kind = KeyKind::boolean;
  k.set = [field](Options& o, KeyValue const& v) { field(o) = std::get<bool>(v); };
  k.get = [field](Options const& o) { return KeyValue(bool(field(o))); };
  return k;
}

template <class Options, class Enum, class Field>
OptionKey<Options> choice(char const* key, Field field, std::vector<std::pair<std::string, Enum>> words) {
  OptionKey<Options> k;
  k.key = key;
  k.kind = KeyKind::choice;
  for (auto const& w : words) k.choices.push_back(w.first);
  k.set = [field, words](Options& o, KeyValue const& v) {
    for (auto const& w : words) {
      if (w.first == std::get<std::string>(v)) field(o) = w.second;
    }
  };
  k.get = [field, words](Options const& o) {
    for (auto const& w : words) {
      if (w.second == field(o)) return KeyValue(w.first);
    }
    return KeyValue(std::string());
  };
  return k;
}

template <class Options>
std::vector<std::pair<std::string, KeyValue>> own_defaults() {
  std::vector<std::pair<std::string, KeyValue>> out;
  Options const defaults{};
  for (auto const& k : optimizer_table<Options>().keys) out.emplace_back(k.key, k.get(defaults));
  return out;
}

}  // namespace

std::vector<OptionKey<OptimizerOptions>> const& common_keys() {
  using O = OptimizerOptions;
  static std::vector<OptionKey<O>> const keys{
      integer<O>(
          "max_iterations", [](auto& o) -> auto& { return o.max_iterations; }, 0, std::uint64_t(1) << 40),
      integer<O>(
          "seed", [](auto& o) -> auto& { return o.seed; }, 0, no_limit),
      real<O>(
          "tol_relative_residual", [](auto& o) -> auto& { return o.tol_relative_residual; }, 0, false, inf, false),
      real<O>(
          "tol_gradient", [](auto& o) -> auto& { return o.tol_gradient; }, 0, false, inf, false),
      real<O>(
          "tol_decrease", [](auto& o) -> auto& { return o.tol_decrease; }, 0, false, inf, false),
      real<O>(
          "tol_step", [](auto& o) -> auto& { return o.tol_step; }, 0, false, inf, false),
  };
  return keys;
}

std::vector<OptionKey<RankContinuation>> const& continuation_keys() {
  using O = RankContinuation;
  static std::vector<OptionKey<O>> const keys{
      integer<O>(
          "stage_iterations", [](auto& o) -> auto& { return o.stage_iterations; }, 1, 1u << 30),
      real<O>(
          "stage_tol_decrease", [](auto& o) -> auto& { return o.stage_tol_decrease; }, 0, false, 1, true),
      real<O>(
          "rank_rtol", [](auto& o) -> auto& { return o.rank_rtol; }, 0, false, 1, true),
      integer<O>(
          "rank_step", [](auto& o) -> auto& { return o.rank_step; }, 1, 1024),
      choice<O, GrowthRule>(
          "rule", [](auto& o) -> auto& { return o.rule; },
          {{"saturation", GrowthRule::saturation}, {"edge_conditioning", GrowthRule::edge_conditioning}}),
      real<O>(
          "condition_ratio", [](auto& o) -> auto& { return o.condition_ratio; }, 1, false, inf, false),
      integer<O>(
          "max_edges_per_stage", [](auto& o) -> auto& { return o.max_edges_per_stage; }, 0, 1u << 30),
      real<O>(
          "condition_guard", [](auto& o) -> auto& { return o.condition_guard; }, 0, false, inf, false),
      real<O>(
          "min_samples_per_dimension", [](auto& o) -> auto& { return o.min_samples_per_dimension; }, 0, false, inf,
          false),
  };
  return keys;
}

template <>
OptimizerTable<NewtonCgOptions> const& optimizer_table<NewtonCgOptions>() {
  using O = NewtonCgOptions;
  static OptimizerTable<O> const table{
      "newton_cg",
      {
          real<O>(
              "cg_rtol", [](auto& o) -> auto& { return o.cg_rtol; }, 0, true, 1, false),
          integer<O>(
              "cg_max_iterations", [](auto& o) -> auto& { return o.cg_max_iterations; }, 1, 1000000000),
          boolean<O>(
              "levenberg_marquardt", [](auto& o) -> auto& { return o.levenberg_marquardt; }),
          real<O>(
              "lambda_rel", [](auto& o) -> auto& { return o.lambda_rel; }, 0, true, inf, false),
          real<O>(
              "armijo_c1", [](auto& o) -> auto& { return o.armijo_c1; }, 0, true, 1, true),
          integer<O>(
              "max_backtracks", [](auto& o) -> auto& { return o.max_backtracks; }, 0, 1000),
      }};
  return table;
}

template <>
OptimizerTable<GradientDescentOptions> const& optimizer_table<GradientDescentOptions>() {
  using O = GradientDescentOptions;
  static OptimizerTable<O> const table{
      "gradient_descent",
      {
          real<O>(
              "armijo_c1", [](auto& o) -> auto& { return o.armijo_c1; }, 0, true, 1, true),
          integer<O>(
              "max_backtracks", [](auto& o) -> auto& { return o.max_backtracks; }, 0, 1000),
          real<O>(
              "initial_step", [](auto& o) -> auto& { return o.initial_step; }, 0, false, inf, false),
      }};
  return table;
}

template <>
OptimizerTable<McSgdOptions> const& optimizer_table<McSgdOptions>() {
  using O = McSgdOptions;
  static OptimizerTable<O> const table{
      "mc_sgd",
      {
          integer<O>(
              "batch_size", [](auto& o) -> auto& { return o.batch_size; }, 1, 1000000000000000),
          real<O>(
              "step", [](auto& o) -> auto& { return o.step; }, 0, false, inf, false),
          real<O>(
              "step_safety", [](auto& o) -> auto& { return o.step_safety; }, 0, true, inf, false),
          integer<O>(
              "power_iterations", [](auto& o) -> auto& { return o.power_iterations; }, 1, 1000000),
          integer<O>(
              "curvature_batches", [](auto& o) -> auto& { return o.curvature_batches; }, 1, 1000000),
          choice<O, StepSchedule>("schedule", [](auto& o) -> auto& { return o.schedule; },
                                  {{"constant", StepSchedule::constant},
                                   {"inverse_time", StepSchedule::inverse_time},
                                   {"cosine", StepSchedule::cosine}}),
          real<O>(
              "decay", [](auto& o) -> auto& { return o.decay; }, 0, true, inf, false),
          integer<O>(
              "eval_every", [](auto& o) -> auto& { return o.eval_every; }, 1, 1000000000000000),
          boolean<O>(
              "keep_loss_stack", [](auto& o) -> auto& { return o.keep_loss_stack; }),
      }};
  return table;
}

template <>
OptimizerTable<AdamOptions> const& optimizer_table<AdamOptions>() {
  using O = AdamOptions;
  static OptimizerTable<O> const table{
      "adam",
      {
          integer<O>(
              "batch_size", [](auto& o) -> auto& { return o.batch_size; }, 0, 1000000000000000),
          real<O>(
              "alpha_rel", [](auto& o) -> auto& { return o.alpha_rel; }, 0, true, inf, false),
          real<O>(
              "beta1", [](auto& o) -> auto& { return o.beta1; }, 0, false, 1, true),
          real<O>(
              "beta2", [](auto& o) -> auto& { return o.beta2; }, 0, false, 1, true),
          real<O>(
              "epsilon", [](auto& o) -> auto& { return o.epsilon; }, 0, true, inf, false),
          integer<O>(
              "eval_every", [](auto& o) -> auto& { return o.eval_every; }, 1, 1000000000000000),
          boolean<O>(
              "keep_loss_stack", [](auto& o) -> auto& { return o.keep_loss_stack; }),
      }};
  return table;
}

std::string optimizer_name(OptimizerChoice const& choice) {
  return std::visit([](auto const& o) { return std::string(optimizer_table<std::decay_t<decltype(o)>>().name); },
                    choice);
}

namespace {

template <std::size_t I = 0>
std::optional<OptimizerChoice> default_options_from(std::string const& name) {
  if constexpr (I == std::variant_size_v<OptimizerChoice>) {
    return std::nullopt;
  } else {
    using Options = std::variant_alternative_t<I, OptimizerChoice>;
    if (name == optimizer_table<Options>().name) return OptimizerChoice(std::in_place_index<I>);
    return default_options_from<I + 1>(name);
  }
}

template <std::size_t... I>
std::vector<std::string> names_of(std::index_sequence<I...>) {
  return {optimizer_table<std::variant_alternative_t<I, OptimizerChoice>>().name...};
}

}  // namespace

std::optional<OptimizerChoice> default_options(std::string const& name) { return default_options_from(name); }

std::vector<std::string> optimizer_names() {
  return names_of(std::make_index_sequence<std::variant_size_v<OptimizerChoice>>());
}

std::vector<std::pair<std::string, KeyValue>> key_defaults(std::string const& name) {
  if (name.empty()) {
    std::vector<std::pair<std::string, KeyValue>> out;
    OptimizerOptions const defaults{};
    for (auto const& k : common_keys()) out.emplace_back(k.key, k.get(defaults));
    return out;
  }
  auto const choice = default_options(name);
  if (!choice) return {};
  return std::visit([](auto const& o) { return own_defaults<std::decay_t<decltype(o)>>(); }, *choice);
}

}  // namespace fit
}  // namespace t3k
