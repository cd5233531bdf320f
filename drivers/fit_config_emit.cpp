/// \file fit_config_emit.cpp
/// The resolved configuration as YAML (docs/config.md): what summary.yaml records under `config`, and the text the
/// checkpoint fingerprint is made of (fit_config_fingerprint.cpp).

#include "drivers/fit_config.hpp"
#include "drivers/fit_config_internal.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace t3k {
namespace fit {

namespace {

template <class Integer>
void emit_list(YAML::Emitter& out, std::vector<Integer> const& v) {
  out << YAML::Flow << YAML::BeginSeq;
  for (auto e : v) out << e;
  out << YAML::EndSeq;
}

/// The optimizer keys the file gives, other than max_iterations and seed: numbers, then booleans, then words, each
/// group sorted by key (the order fingerprints of existing checkpoints were written in). Numbers as doubles.
template <class Options>
void emit_given_keys(YAML::Emitter& out, Options const& options, std::set<std::string> const& given, bool fingerprint) {
  std::vector<OptionKey<Options> const*> keys;
  for (auto const& key : all_keys<Options>()) {
    std::string const name = key.key;
    if (!given.count(name) || name == "max_iterations" || name == "seed") continue;
    if (fingerprint && name.rfind("tol_", 0) == 0) continue;
    keys.push_back(&key);
  }
  auto group = [](KeyKind kind) { return kind == KeyKind::boolean ? 1 : kind == KeyKind::choice ? 2 : 0; };
  std::sort(keys.begin(), keys.end(), [&](auto const* a, auto const* b) {
    return std::make_pair(group(a->kind), std::string(a->key)) < std::make_pair(group(b->kind), std::string(b->key));
  });
  for (auto const* key : keys) {
    out << YAML::Key << key->key << YAML::Value;
    KeyValue const v = key->get(options);
    if (auto const* real = std::get_if<double>(&v)) out << *real;
    if (auto const* integer = std::get_if<std::uint64_t>(&v)) out << double(*integer);
    if (auto const* flag = std::get_if<bool>(&v)) out << *flag;
    if (auto const* word = std::get_if<std::string>(&v)) out << *word;
  }
}

void emit_config(YAML::Emitter& out, Config const& c, bool fingerprint) {
  out << YAML::BeginMap;
  out << YAML::Key << "problem" << YAML::Value << YAML::BeginMap;
  if (c.source == ProblemSource::synthetic) {
    auto const& s = c.synthetic;
    out << YAML::Key << "synthetic" << YAML::Value << YAML::BeginMap;
    // Probes, the default, stay unnamed: a fingerprint written before other kinds existed is unchanged.
    if (s.kind != MeasurementKind::probes) out << YAML::Key << "kind" << YAML::Value << to_string(s.kind);
    out << YAML::Key << "mode_shapes" << YAML::Value;
    emit_list(out, s.mode_shapes);
    out << YAML::Key << "tucker_ranks" << YAML::Value;
    emit_list(out, s.tucker_ranks);
    out << YAML::Key << "tt_ranks" << YAML::Value;
    emit_list(out, s.tt_ranks);
    out << YAML::Key << "order" << YAML::Value << s.order;
    out << YAML::Key << "n_probes" << YAML::Value << s.n_probes;
    out << YAML::Key << "noise" << YAML::Value << s.noise;
    out << YAML::Key << "seed" << YAML::Value << s.seed;
    out << YAML::EndMap;
  } else {
    out << YAML::Key << "data" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "file" << YAML::Value << c.data.resolved_file;
    if (c.data.order) out << YAML::Key << "order" << YAML::Value << *c.data.order;
    if (!c.data.weights.empty()) out << YAML::Key << "weights" << YAML::Value << c.data.weights;
    out << YAML::EndMap;
  }
  if (!c.order_weights.empty()) {
    out << YAML::Key << "order_weights" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (double w : c.order_weights) out << w;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  if (c.model.sharing) {
    out << YAML::Key << "sharing" << YAML::Value;
    emit_list(out, *c.model.sharing);
  }
  if (c.model.tucker_ranks) {
    out << YAML::Key << "tucker_ranks" << YAML::Value;
    emit_list(out, *c.model.tucker_ranks);
    out << YAML::Key << "tt_ranks" << YAML::Value;
    emit_list(out, *c.model.tt_ranks);
  }
  auto emit_bound = [&out](RankBound const& b) {
    if (b.all > 0) {
      out << b.all;
    } else {
      emit_list(out, b.list);
    }
  };
  if (c.model.tucker_range) {
    for (auto const* range : {&*c.model.tucker_range, &*c.model.tt_range}) {
      out << YAML::Key << (range == &*c.model.tucker_range ? "tucker_ranks" : "tt_ranks") << YAML::Value << YAML::Flow
          << YAML::BeginMap << YAML::Key << "start" << YAML::Value;
      emit_bound(range->start);
      out << YAML::Key << "max" << YAML::Value;
      emit_bound(range->max);
      out << YAML::EndMap;
    }
    auto const& k = c.model.continuation;
    out << YAML::Key << "continuation" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "stage_iterations" << YAML::Value << k.stage_iterations;
    out << YAML::Key << "stage_tol_decrease" << YAML::Value << k.stage_tol_decrease;
    out << YAML::Key << "rank_rtol" << YAML::Value << k.rank_rtol;
    out << YAML::Key << "rank_step" << YAML::Value << k.rank_step;
    // The saturation rule, the default, stays unnamed with its unused controls: a fingerprint written before
    // other rules existed is unchanged.
    if (k.rule != GrowthRule::saturation) {
      out << YAML::Key << "rule" << YAML::Value << "edge_conditioning";
      out << YAML::Key << "condition_ratio" << YAML::Value << k.condition_ratio;
      out << YAML::Key << "max_edges_per_stage" << YAML::Value << k.max_edges_per_stage;
      out << YAML::Key << "condition_guard" << YAML::Value << k.condition_guard;
      out << YAML::Key << "min_samples_per_dimension" << YAML::Value << k.min_samples_per_dimension;
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "init" << YAML::Value << YAML::BeginMap;
  switch (c.model.init) {
    case InitKind::random:
      out << YAML::Key << "random" << YAML::Value << YAML::BeginMap << YAML::Key << "seed" << YAML::Value
          << c.model.seed << YAML::EndMap;
      break;
    case InitKind::file:
      out << YAML::Key << "file" << YAML::Value << c.model.resolved_file;
      break;
    case InitKind::truth_perturbation:
      out << YAML::Key << "truth_perturbation" << YAML::Value << c.model.perturbation;
      out << YAML::Key << "seed" << YAML::Value << c.model.seed;
      break;
  }
  out << YAML::EndMap << YAML::EndMap;
  auto const& v = c.validation;
  if (v.source != ValidationSource::none) {
    out << YAML::Key << "validation" << YAML::Value << YAML::BeginMap;
    if (v.source == ValidationSource::fraction) out << YAML::Key << "fraction" << YAML::Value << v.fraction;
    if (v.source == ValidationSource::count) out << YAML::Key << "count" << YAML::Value << v.count;
    if (v.source == ValidationSource::file) {
      out << YAML::Key << "file" << YAML::Value << v.resolved_file;
    } else {
      out << YAML::Key << "seed" << YAML::Value << v.seed;
    }
    out << YAML::Key << "patience" << YAML::Value << v.patience;
    out << YAML::EndMap;
  }
  out << YAML::Key << "optimizer" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << c.optimizer.name();
  if (!fingerprint) out << YAML::Key << "max_iterations" << YAML::Value << c.optimizer.common().max_iterations;
  out << YAML::Key << "seed" << YAML::Value << c.optimizer.common().seed;
  std::visit([&](auto const& options) { emit_given_keys(out, options, c.optimizer.given, fingerprint); },
             c.optimizer.options);
  out << YAML::EndMap;
  out << YAML::Key << "chunk_size" << YAML::Value << c.chunk_size.to_string();
  if (!fingerprint) {
    out << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "directory" << YAML::Value << c.output.resolved_directory;
    out << YAML::Key << "checkpoint_every" << YAML::Value << c.output.checkpoint_every;
    out << YAML::EndMap;
    out << YAML::Key << "kokkos" << YAML::Value << YAML::BeginMap;
    if (c.kokkos.threads) out << YAML::Key << "threads" << YAML::Value << *c.kokkos.threads;
    if (c.kokkos.device) out << YAML::Key << "device" << YAML::Value << *c.kokkos.device;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

}  // namespace

namespace detail {

std::string emit_yaml(Config const& config, bool fingerprint, int precision) {
  YAML::Emitter out;
  out.SetDoublePrecision(precision);
  emit_config(out, config, fingerprint);
  return out.c_str();
}

}  // namespace detail

std::string Config::to_yaml() const { return detail::emit_yaml(*this, false, 15); }

}  // namespace fit
}  // namespace t3k
