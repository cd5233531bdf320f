/// \file fit_config_parse.cpp
/// Parsing and validation of `t3k fit` configurations (docs/config.md). Table-driven: the keys each section and
/// each optimizer accepts, with their kinds and ranges, are listed once (here and in optimizer_keys.cpp) and drive
/// both the checks and the messages.

#include "drivers/fit_config.hpp"
#include "drivers/fit_config_internal.hpp"

#include "t3k/core/chunk_size.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>

namespace t3k {
namespace fit {

namespace {

using detail::join;
using detail::printable;

constexpr double inf = std::numeric_limits<double>::infinity();

// ------------------------------------------------------------------------------------------------------ parser

class Parser {
 public:
  Parser(Config& config, std::string file) : config_(config), file_(std::move(file)) {}

  void parse(std::string const& source);

 private:
  Config& config_;
  std::string file_;

  // ---------------------------------------------------------------- locations and errors
  static Location location_of(YAML::Node const& node) {
    if (!node.IsDefined()) return {};
    YAML::Mark const m = node.Mark();
    if (m.is_null()) return {};
    return {m.line + 1, m.column + 1};
  }
  /// The value's own position, or its key's when the value has none (an empty value).
  Location where(std::string const& path, YAML::Node const& value) const {
    Location l = location_of(value);
    if (l.line > 0) return l;
    auto it = config_.locations.find(path);
    return it != config_.locations.end() ? it->second : Location{1, 1};
  }
  [[noreturn]] void fail(std::string const& path, YAML::Node const& value, std::string const& message) const {
    throw ConfigError(file_, path, where(path, value), message);
  }
  [[noreturn]] void fail_at(std::string const& path, Location l, std::string const& message) const {
    throw ConfigError(file_, path, l, message);
  }

  static std::string describe(YAML::Node const& node) { return detail::describe(node); }

  static std::string child(std::string const& path, std::string const& key) {
    return path.empty() ? key : path + "." + key;
  }

  // ---------------------------------------------------------------- maps
  /// The members of the map at `path`, checked against `allowed`; records each key's location.
  std::map<std::string, YAML::Node> members(YAML::Node const& node, std::string const& path,
                                            std::vector<std::string> const& allowed, std::string const& context = "") {
    if (!node.IsMap()) {
      fail(path, node, "must be a map with keys " + join(allowed, ", ") + ", got " + describe(node));
    }
    std::map<std::string, YAML::Node> out;
    for (auto it = node.begin(); it != node.end(); ++it) {
      YAML::Node const key = it->first;
      Location const key_location = location_of(key).line > 0 ? location_of(key) : where(path, node);
      if (!key.IsScalar()) fail_at(path, key_location, "a key must be a plain name, got " + describe(key));
      std::string const name = key.Scalar();
      std::string const key_path = child(path, name);
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        fail_at(
            child(path, printable(name)), key_location,
            "unknown key" + context + detail::did_you_mean(name, allowed) + "; allowed keys: " + join(allowed, ", "));
      }
      if (out.count(name)) fail_at(key_path, key_location, "duplicate key");
      config_.locations[key_path] = key_location;
      out[name] = it->second;
    }
    return out;
  }

  Location location_or_parent(std::string const& path, YAML::Node const& parent) const {
    auto it = config_.locations.find(path);
    if (it != config_.locations.end()) return it->second;
    Location l = location_of(parent);
    return l.line > 0 ? l : Location{1, 1};
  }

  /// The required member `key` of a map at `path`.
  YAML::Node const& require(std::map<std::string, YAML::Node> const& m, std::string const& path, std::string const& key,
                            YAML::Node const& parent, std::string const& what) const {
    auto it = m.find(key);
    if (it == m.end()) {
      fail_at(child(path, key), location_or_parent(path, parent), "missing key (" + what + ")");
    }
    return it->second;
  }

  // ---------------------------------------------------------------- scalars
  std::string text(std::string const& path, YAML::Node const& node, std::string const& expected) const {
    if (!node.IsScalar()) fail(path, node, "must be " + expected + ", got " + describe(node));
    // A NUL would cut a path or dataset name short where the C libraries read it.
    if (node.Scalar().find('\0') != std::string::npos)
      fail(path, node, "must not contain a NUL byte, got " + describe(node));
    return node.Scalar();
  }

  /// Whether the scalar was written as a string ('5', "true", !!str 5): YAML makes it text, not a number or boolean.
  static bool quoted(YAML::Node const& node) {
    return node.IsScalar() && (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str");
  }

  /// The scalar of a number or boolean key, refused when quoted (the same for every such key).
  std::string plain_text(std::string const& path, YAML::Node const& node, std::string const& expected) const {
    std::string const s = text(path, node, expected);
    if (quoted(node))
      fail(path, node, "must be " + expected + ", got the string " + describe(node) + " (remove the quotes)");
    return s;
  }

  /// An integer in [min, max]; YAML integers only (no fractions, no exponents).
  std::uint64_t integer(std::string const& path, YAML::Node const& node, std::uint64_t min,
                        std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const {
    std::string const expected = "an integer >= " + std::to_string(min);
    std::string const s = plain_text(path, node, expected);
    std::size_t pos = 0;
    bool negative = false;
    if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) negative = s[pos++] == '-';
    if (pos == s.size()) fail(path, node, "must be " + expected + ", got " + describe(node));
    std::uint64_t value = 0;
    for (; pos < s.size(); ++pos) {
      if (!std::isdigit(static_cast<unsigned char>(s[pos]))) {
        fail(path, node, "must be " + expected + ", got " + describe(node));
      }
      std::uint64_t const digit = std::uint64_t(s[pos] - '0');
      if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
        fail(path, node, "is out of range: " + printable(s) + " does not fit in 64 bits");
      }
      value = value * 10 + digit;
    }
    if (negative && value != 0) {
      fail(path, node, "is out of range: must be >= " + std::to_string(min) + ", got " + printable(s));
    }
    if (value < min || value > max) {
      fail(path, node,
           "is out of range: must be " +
               (max == std::numeric_limits<std::uint64_t>::max()
                    ? ">= " + std::to_string(min)
                    : "between " + std::to_string(min) + " and " + std::to_string(max)) +
               ", got " + printable(s));
    }
    return value;
  }

  static std::string number_text(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }

  double real(std::string const& path, YAML::Node const& node, double min, bool min_open, double max,
              bool max_open) const {
    std::string const s = plain_text(path, node, "a number");
    char* end = nullptr;
    errno = 0;
    double const value = std::strtod(s.c_str(), &end);
    bool const numeric = !s.empty() && end == s.c_str() + s.size() &&
                         (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+' || s[0] == '.');
    if (!numeric || s.find_first_of("xXpP") != std::string::npos) {
      fail(path, node, "must be a number, got " + describe(node));
    }
    if (!std::isfinite(value) || errno == ERANGE)
      fail(path, node, "is out of range: must be finite, got " + printable(s));
    bool const below = min_open ? !(value > min) : !(value >= min);
    bool const above = max_open ? !(value < max) : !(value <= max);
    if (below || above) {
      std::string range;
      if (max == inf) {
        range = (min_open ? "> " : ">= ") + number_text(min);
      } else {
        range = std::string("in ") + (min_open ? "(" : "[") + number_text(min) + ", " + number_text(max) +
                (max_open ? ")" : "]");
      }
      fail(path, node, "is out of range: must be " + range + ", got " + printable(s));
    }
    return value;
  }

  bool boolean(std::string const& path, YAML::Node const& node) const {
    std::string s = plain_text(path, node, "true or false");
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
    fail(path, node, "must be true or false, got " + describe(node));
  }

  /// A list of 1 to 64 integers in [min, 2^31]; `wanted` says what it is when the node is no list.
  template <class Integer = std::size_t>
  std::vector<Integer> integer_list(std::string const& path, YAML::Node const& node, std::uint64_t min = 1,
                                    std::string const& wanted = "a list of positive integers") const {
    if (!node.IsSequence()) fail(path, node, "must be " + wanted + ", got " + describe(node));
    if (node.size() == 0) fail(path, node, "is out of range: the list must not be empty");
    if (node.size() > 64) fail(path, node, "is out of range: at most 64 entries");
    std::vector<Integer> out;
    for (std::size_t k = 0; k < node.size(); ++k) {
      out.push_back(Integer(integer(path + "[" + std::to_string(k) + "]", node[k], min, std::uint64_t(1) << 31)));
    }
    return out;
  }

  std::string path_value(std::string const& path, YAML::Node const& node) const {
    std::string const s = text(path, node, "a path");
    if (s.empty()) fail(path, node, "is out of range: the path must not be empty");
    return s;
  }

  std::string resolve(std::string const& p) const { return detail::resolve_path(file_, p); }

  // ---------------------------------------------------------------- sections
  void parse_problem(YAML::Node const& node);
  void parse_order_weights(YAML::Node const& node);
  void parse_model(YAML::Node const& node);
  RankBound rank_bound(std::string const& path, YAML::Node const& node) const;
  RankRange rank_range(std::string const& path, YAML::Node const& node);
  void parse_continuation(YAML::Node const& node);
  void parse_validation(YAML::Node const& node);
  void parse_optimizer(YAML::Node const& node);
  template <class Options>
  void parse_optimizer_keys(YAML::Node const& node, std::string const& name, Options& options);
  template <class Options>
  void set_key(std::string const& path, YAML::Node const& node, OptionKey<Options> const& key, Options& options);
  void parse_output(YAML::Node const& node);
  void parse_kokkos(YAML::Node const& node);
};

void Parser::parse(std::string const& source) {
  YAML::Node root;
  try {
    root = YAML::Load(source);
  } catch (YAML::Exception const& e) {
    Location l{1, 1};
    if (!e.mark.is_null()) l = {e.mark.line + 1, e.mark.column + 1};
    throw ConfigError(file_, "", l, "invalid YAML: " + printable(e.msg));
  }
  std::vector<std::string> const sections{"problem",    "model",  "validation", "optimizer",
                                          "chunk_size", "output", "kokkos"};
  if (root.IsNull() || !root.IsDefined()) {
    throw ConfigError(file_, "", {1, 1},
                      "the configuration is empty; expected a map with sections problem, model, "
                      "optimizer and output");
  }
  if (!root.IsMap()) {
    fail("", root, "the configuration must be a map with sections " + join(sections, ", ") + ", got " + describe(root));
  }
  auto const top = members(root, "", sections);
  std::string const required = "a required section";
  parse_problem(require(top, "", "problem", root, required));
  parse_model(require(top, "", "model", root, required));
  if (top.count("validation")) parse_validation(top.at("validation"));
  parse_optimizer(require(top, "", "optimizer", root, required));
  parse_output(require(top, "", "output", root, required));
  if (top.count("chunk_size")) {
    YAML::Node const& c = top.at("chunk_size");
    std::string const s = text("chunk_size", c, "auto, none or a positive integer");
    try {
      config_.chunk_size = ChunkSize::parse(s);
    } catch (std::exception const&) {
      fail("chunk_size", c, "must be auto, none or a positive integer, got " + describe(c));
    }
    if (quoted(c) && config_.chunk_size.kind() == ChunkSize::Kind::fixed) {
      fail("chunk_size", c,
           "must be auto, none or a positive integer, got the string " + describe(c) + " (remove the quotes)");
    }
  }
  if (top.count("kokkos")) parse_kokkos(top.at("kokkos"));
  detail::check_across_sections(config_);
}

void Parser::parse_problem(YAML::Node const& node) {
  auto const m = members(node, "problem", {"synthetic", "data", "order_weights"});
  if (m.count("synthetic") + m.count("data") != 1) {
    fail("problem", node,
         m.count("synthetic") + m.count("data") == 0 ? "missing key: give exactly one of synthetic or data"
                                                     : "give exactly one of synthetic or data, not both");
  }
  if (m.count("synthetic")) {
    config_.source = ProblemSource::synthetic;
    std::string const p = "problem.synthetic";
    YAML::Node const& s = m.at("synthetic");
    auto const k =
        members(s, p, {"kind", "mode_shapes", "tucker_ranks", "tt_ranks", "order", "n_probes", "noise", "seed"});
    auto& syn = config_.synthetic;
    if (k.count("kind")) {
      std::string const kind = text(p + ".kind", k.at("kind"), "entries, applies or probes");
      try {
        syn.kind = parse_measurement_kind(kind);
      } catch (InvalidArgument const&) {
        fail(p + ".kind", k.at("kind"), "must be one of entries, applies, probes, got " + describe(k.at("kind")));
      }
    }
    syn.mode_shapes = integer_list(p + ".mode_shapes", require(k, p, "mode_shapes", s, "the N_i of the planted T3"));
    syn.tucker_ranks = integer_list(p + ".tucker_ranks", require(k, p, "tucker_ranks", s, "its Tucker ranks"));
    syn.tt_ranks = integer_list(p + ".tt_ranks", require(k, p, "tt_ranks", s, "its TT ranks, d + 1 entries"));
    syn.n_probes = std::size_t(
        integer(p + ".n_probes", require(k, p, "n_probes", s, "the number of probes W"), 1, std::uint64_t(1) << 40));
    if (k.count("order")) syn.order = std::size_t(integer(p + ".order", k.at("order"), 0, 16));
    if (k.count("noise")) syn.noise = real(p + ".noise", k.at("noise"), 0, false, inf, false);
    if (k.count("seed")) syn.seed = integer(p + ".seed", k.at("seed"), 0);
    std::size_t const d = syn.mode_shapes.size();
    if (syn.tucker_ranks.size() != d) {
      fail(p + ".tucker_ranks", k.at("tucker_ranks"),
           "has " + std::to_string(syn.tucker_ranks.size()) + " entries, expected d = " + std::to_string(d) +
               " (the length of mode_shapes)");
    }
    if (syn.tt_ranks.size() != d + 1) {
      fail(p + ".tt_ranks", k.at("tt_ranks"),
           "has " + std::to_string(syn.tt_ranks.size()) + " entries, expected d + 1 = " + std::to_string(d + 1));
    }
    if (syn.kind == MeasurementKind::entries) {
      // Entries are drawn without repeats: the tensor must have as many.
      double size = 1;
      for (auto n : syn.mode_shapes) size *= double(n);
      if (double(syn.n_probes) > size) {
        fail(p + ".n_probes", k.at("n_probes"),
             "is out of range: " + std::to_string(syn.n_probes) + " distinct entries asked of a tensor of shape " +
                 impl::shape_string(syn.mode_shapes) + " with " + number_text(size) + " entries");
      }
    }
  } else {
    config_.source = ProblemSource::data;
    std::string const p = "problem.data";
    YAML::Node const& s = m.at("data");
    auto const k = members(s, p, {"file", "order", "weights"});
    config_.data.file = path_value(p + ".file", require(k, p, "file", s, "the HDF5 probe set"));
    config_.data.resolved_file = resolve(config_.data.file);
    if (k.count("order")) config_.data.order = std::size_t(integer(p + ".order", k.at("order"), 0, 16));
    if (k.count("weights")) {
      config_.data.weights = text(p + ".weights", k.at("weights"), "an HDF5 dataset path such as /weights");
      if (config_.data.weights.empty() || config_.data.weights[0] != '/') {
        fail(p + ".weights", k.at("weights"),
             "must be an absolute HDF5 dataset path such as /weights, got " + describe(k.at("weights")));
      }
    }
  }
  if (m.count("order_weights")) parse_order_weights(m.at("order_weights"));
}

void Parser::parse_order_weights(YAML::Node const& node) {
  std::string const p = "problem.order_weights";
  if (!node.IsSequence() || node.size() == 0) {
    fail(p, node, "must be a list of K + 1 numbers >= 0 (omega_0 .. omega_K), got " + describe(node));
  }
  bool any_positive = false;
  for (std::size_t k = 0; k < node.size(); ++k) {
    double const w = real(p + "[" + std::to_string(k) + "]", node[k], 0, false, inf, false);
    any_positive = any_positive || w > 0;
    config_.order_weights.push_back(w);
  }
  if (!any_positive) fail(p, node, "is out of range: at least one order weight must be > 0");
  std::optional<std::size_t> const order = config_.source == ProblemSource::synthetic
                                               ? std::optional<std::size_t>(config_.synthetic.order)
                                               : config_.data.order;
  if (order && node.size() != *order + 1) {
    fail(p, node,
         "has " + std::to_string(node.size()) + " entries, expected K + 1 = " + std::to_string(*order + 1) + " (" +
             (config_.source == ProblemSource::synthetic ? "problem.synthetic.order" : "problem.data.order") + " = " +
             std::to_string(*order) + ")");
  }
}

void Parser::parse_model(YAML::Node const& node) {
  std::string const p = "model";
  auto const k = members(node, p, {"tucker_ranks", "tt_ranks", "sharing", "continuation", "init"});
  auto& model = config_.model;
  if (k.count("sharing")) {
    std::string const labels = "a list of labels (integers >= 0), one per mode; modes with equal labels share a factor";
    model.sharing = integer_list<long long>(p + ".sharing", k.at("sharing"), 0, labels);
  }
  // A list: fixed ranks; a map {start, max}: rank continuation.
  auto ranks = [&](std::string const& key, std::optional<RankRange>& range,
                   std::optional<std::vector<std::size_t>>& list) {
    auto const it = k.find(key);
    if (it != k.end() && it->second.IsMap()) range = rank_range(p + "." + key, it->second);
    if (it != k.end() && !it->second.IsMap()) list = integer_list(p + "." + key, it->second);
  };
  ranks("tucker_ranks", model.tucker_range, model.tucker_ranks);
  ranks("tt_ranks", model.tt_range, model.tt_ranks);
  if (k.count("continuation")) {
    if (!model.tucker_range || !model.tt_range) {
      fail_at(p + ".continuation", config_.locations.at(p + ".continuation"),
              "needs model.tucker_ranks and model.tt_ranks given as {start, max} (rank continuation)");
    }
    parse_continuation(k.at("continuation"));
  }
  YAML::Node const& init = require(k, p, "init", node, "random: {seed: S}, file: PATH or truth_perturbation: EPS");
  std::string const ip = "model.init";
  auto const i = members(init, ip, {"random", "file", "truth_perturbation", "seed"});
  std::size_t const kinds = i.count("random") + i.count("file") + i.count("truth_perturbation");
  if (kinds != 1) {
    fail(ip, init,
         kinds == 0 ? "missing key: give exactly one of random, file or truth_perturbation"
                    : "give exactly one of random, file or truth_perturbation");
  }
  if (i.count("random")) {
    model.init = InitKind::random;
    YAML::Node const& r = i.at("random");
    if (!r.IsNull()) {
      auto const rk = members(r, ip + ".random", {"seed"});
      if (rk.count("seed")) model.seed = integer(ip + ".random.seed", rk.at("seed"), 0);
    }
    if (i.count("seed")) {
      fail_at(ip + ".seed", config_.locations.at(ip + ".seed"),
              "unknown key for a random start; give the seed as random: {seed: S}");
    }
  } else if (i.count("file")) {
    model.init = InitKind::file;
    model.file = path_value(ip + ".file", i.at("file"));
    model.resolved_file = resolve(model.file);
    if (i.count("seed")) {
      fail_at(ip + ".seed", config_.locations.at(ip + ".seed"), "unknown key for a start from a file");
    }
  } else {
    model.init = InitKind::truth_perturbation;
    model.perturbation = real(ip + ".truth_perturbation", i.at("truth_perturbation"), 0, false, inf, false);
    if (i.count("seed")) model.seed = integer(ip + ".seed", i.at("seed"), 0);
    if (config_.source != ProblemSource::synthetic) {
      fail_at(ip + ".truth_perturbation", config_.locations.at(ip + ".truth_perturbation"),
              "only a synthetic problem has a planted truth to perturb");
    }
  }
}

RankBound Parser::rank_bound(std::string const& path, YAML::Node const& node) const {
  RankBound b;
  if (node.IsSequence()) {
    b.list = integer_list(path, node);
  } else {
    if (!node.IsScalar()) fail(path, node, "must be a positive integer or a list of them, got " + describe(node));
    b.all = std::size_t(integer(path, node, 1, std::uint64_t(1) << 31));
  }
  return b;
}

RankRange Parser::rank_range(std::string const& path, YAML::Node const& node) {
  auto const k = members(node, path, {"start", "max"}, " of a rank range");
  RankRange r;
  r.start = k.count("start") ? rank_bound(path + ".start", k.at("start")) : RankBound{1, {}};
  r.max = rank_bound(path + ".max", require(k, path, "max", node, "the largest ranks the continuation may reach"));
  return r;
}

void Parser::parse_continuation(YAML::Node const& node) {
  std::string const p = "model.continuation";
  auto const& keys = continuation_keys();
  std::vector<std::string> allowed;
  for (auto const& key : keys) allowed.push_back(key.key);
  auto const k = members(node, p, allowed);
  for (auto const& key : keys) {
    auto it = k.find(key.key);
    if (it != k.end()) set_key(p + "." + key.key, it->second, key, config_.model.continuation);
  }
  // The edge-conditioning controls would be ignored by the saturation rule: a file that gives them means that rule.
  if (config_.model.continuation.rule != GrowthRule::edge_conditioning) {
    for (char const* key : {"condition_ratio", "max_edges_per_stage", "condition_guard", "min_samples_per_dimension"}) {
      if (k.count(key)) {
        fail_at(p + "." + key, config_.locations.at(p + "." + key), "is a control of rule: edge_conditioning");
      }
    }
  }
}

void Parser::parse_validation(YAML::Node const& node) {
  std::string const p = "validation";
  auto const k = members(node, p, {"fraction", "count", "file", "seed", "patience"});
  auto& v = config_.validation;
  std::size_t const kinds = k.count("fraction") + k.count("count") + k.count("file");
  if (kinds != 1) {
    fail(p, node,
         kinds == 0 ? "missing key: give exactly one of fraction, count or file"
                    : "give exactly one of fraction, count or file");
  }
  if (k.count("fraction")) {
    v.source = ValidationSource::fraction;
    v.fraction = real(p + ".fraction", k.at("fraction"), 0, true, 1, true);
  } else if (k.count("count")) {
    v.source = ValidationSource::count;
    v.count = std::size_t(integer(p + ".count", k.at("count"), 1, std::uint64_t(1) << 40));
  } else {
    v.source = ValidationSource::file;
    v.file = path_value(p + ".file", k.at("file"));
    v.resolved_file = resolve(v.file);
    if (k.count("seed")) fail_at(p + ".seed", config_.locations.at(p + ".seed"), "unknown key for a validation file");
  }
  if (k.count("seed")) v.seed = integer(p + ".seed", k.at("seed"), 0);
  if (k.count("patience")) v.patience = std::size_t(integer(p + ".patience", k.at("patience"), 0, 1u << 30));
}

void Parser::parse_optimizer(YAML::Node const& node) {
  std::string const p = "optimizer";
  if (!node.IsMap()) fail(p, node, "must be a map with at least the key name, got " + describe(node));
  // The name first: it decides which keys are allowed.
  YAML::Node name_node;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == "name") name_node = it->second;
  }
  std::vector<std::string> names = optimizer_names();
  if (!name_node.IsDefined()) {
    Location const l = location_of(node).line > 0 ? location_of(node) : location_or_parent(p, node);
    fail_at(p + ".name", l, "missing key (one of " + join(names, ", ") + ")");
  }
  std::string const name = text(p + ".name", name_node, "one of " + join(names, ", "));
  auto choice = default_options(name);
  if (!choice) fail(p + ".name", name_node, "must be one of " + join(names, ", ") + ", got " + describe(name_node));
  auto& o = config_.optimizer;
  o.options = std::move(*choice);
  std::visit([&](auto& options) { parse_optimizer_keys(node, name, options); }, o.options);
}

template <class Options>
void Parser::parse_optimizer_keys(YAML::Node const& node, std::string const& name, Options& options) {
  std::string const p = "optimizer";
  auto const& keys = all_keys<Options>();
  std::vector<std::string> allowed{"name"};
  for (auto const& key : keys) allowed.push_back(key.key);
  auto const k = members(node, p, allowed, " for optimizer " + name);
  for (auto const& key : keys) {
    auto it = k.find(key.key);
    if (it == k.end()) continue;
    set_key(p + "." + key.key, it->second, key, options);
    config_.optimizer.given.insert(key.key);
  }
}

/// Sets `key` of `options` from the value at `path`, checked against the key's kind and range.
template <class Options>
void Parser::set_key(std::string const& path, YAML::Node const& node, OptionKey<Options> const& key, Options& options) {
  switch (key.kind) {
    case KeyKind::real:
      key.set(options, real(path, node, key.min, key.min_open, key.max, key.max_open));
      break;
    case KeyKind::integer:
      key.set(options, integer(path, node, key.integer_min, key.integer_max));
      break;
    case KeyKind::boolean:
      key.set(options, boolean(path, node));
      break;
    case KeyKind::choice: {
      std::string const v = text(path, node, "one of " + join(key.choices, ", "));
      if (std::find(key.choices.begin(), key.choices.end(), v) == key.choices.end()) {
        fail(path, node, "must be one of " + join(key.choices, ", ") + ", got " + describe(node));
      }
      key.set(options, v);
      break;
    }
  }
}

void Parser::parse_output(YAML::Node const& node) {
  std::string const p = "output";
  auto const k = members(node, p, {"directory", "checkpoint_every"});
  config_.output.directory = path_value(p + ".directory", require(k, p, "directory", node, "the run directory"));
  config_.output.resolved_directory = resolve(config_.output.directory);
  if (k.count("checkpoint_every")) {
    config_.output.checkpoint_every =
        std::size_t(integer(p + ".checkpoint_every", k.at("checkpoint_every"), 0, std::uint64_t(1) << 40));
  }
}

void Parser::parse_kokkos(YAML::Node const& node) {
  std::string const p = "kokkos";
  auto const k = members(node, p, {"threads", "device"});
  if (k.count("threads")) config_.kokkos.threads = int(integer(p + ".threads", k.at("threads"), 1, max_kokkos_threads));
  if (k.count("device")) config_.kokkos.device = int(integer(p + ".device", k.at("device"), 0, 1024));
}

}  // namespace

namespace detail {

void parse_into(Config& config, std::string const& text) { Parser(config, config.file).parse(text); }

}  // namespace detail

}  // namespace fit
}  // namespace t3k
