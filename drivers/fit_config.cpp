/// \file fit_config.cpp
/// What the parser (fit_config_parse.cpp), the emitter (fit_config_emit.cpp) and the fingerprint
/// (fit_config_fingerprint.cpp) share: errors with their locations, rank ranges, the checks across sections, and
/// reading the file.

#include "drivers/fit_config.hpp"
#include "drivers/fit_config_internal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace t3k {
namespace fit {

namespace {

std::string format_error(std::string const& file, std::string const& key_path, Location where,
                         std::string const& message) {
  std::ostringstream out;
  out << file;
  if (where.line > 0) out << ':' << where.line << ':' << where.column;  // 0: the file as a whole
  out << ": ";
  if (!key_path.empty()) out << key_path << ": ";
  out << message;
  return out.str();
}

}  // namespace

ConfigError::ConfigError(std::string const& file, std::string key_path, Location where, std::string const& message)
    : std::runtime_error(format_error(file, key_path, where, message)),
      key_path_(std::move(key_path)),
      location_(where) {}

namespace detail {

std::string join(std::vector<std::string> const& parts, char const* separator) {
  std::string out;
  for (std::size_t k = 0; k < parts.size(); ++k) out += (k ? separator : "") + parts[k];
  return out;
}

/// Printable, bounded rendering of user text (the fuzz test feeds garbage bytes).
std::string printable(std::string const& text) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= 40) {
      out += "...";
      break;
    }
    if (std::isprint(c)) {
      out += char(c);
    } else {
      static char const hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

/// Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(std::string const& a, std::string const& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t const up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string describe(YAML::Node const& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar:
      return "'" + printable(node.Scalar()) + "'";
    default:
      return "nothing";
  }
}

std::string did_you_mean(std::string const& name, std::vector<std::string> const& allowed) {
  std::string hint;
  std::size_t best = 3;
  for (auto const& a : allowed) {
    std::size_t const dist = edit_distance(name, a);
    if (dist < best) {
      best = dist;
      hint = " (did you mean '" + a + "'?)";
    }
  }
  return hint;
}

std::string resolve_path(std::string const& config_file, std::string const& p) {
  namespace fs = std::filesystem;
  fs::path const given(p);
  if (given.is_absolute()) return given.lexically_normal().string();
  fs::path const base = fs::absolute(fs::path(config_file)).parent_path();
  return (base / given).lexically_normal().string();
}

/// Checks across sections that need no data.
void check_across_sections(Config const& config_) {
  auto const& model = config_.model;
  auto at = [&config_](std::string const& path) {
    auto it = config_.locations.find(path);
    return it != config_.locations.end() ? it->second : Location{1, 1};
  };
  auto fail_at = [&config_](std::string const& path, Location l, std::string const& message) {
    throw ConfigError(config_.file, path, l, message);
  };
  if (model.tucker_range.has_value() != model.tt_range.has_value() ||
      (model.tucker_range && (model.tucker_ranks || model.tt_ranks))) {
    fail_at(model.tucker_range ? "model.tt_ranks" : "model.tucker_ranks", at("model"),
            "give both tucker_ranks and tt_ranks as lists (fixed ranks) or both as {start, max} (rank continuation)");
  }
  if (model.tucker_range && model.init != InitKind::random) {
    fail_at("model.init", at("model.init"),
            "rank continuation starts from a random T3 at the start ranks: use "
            "init: {random: {seed: S}}");
  }
  if (model.sharing && config_.source == ProblemSource::synthetic && !model.tucker_range) {
    bool const own_ranks =
        model.tucker_ranks.has_value() && model.tucker_ranks->size() == config_.synthetic.mode_shapes.size();
    (void)model_sharing(config_, config_.synthetic.mode_shapes,
                        own_ranks ? *model.tucker_ranks : config_.synthetic.tucker_ranks,
                        own_ranks ? "model.tucker_ranks" : "problem.synthetic.tucker_ranks");
  }
  if (model.tucker_range && config_.source == ProblemSource::synthetic) {
    // ConfigError now, before any data is read.
    auto const ranks = resolve_ranks(config_, config_.synthetic.mode_shapes);
    (void)continuation_sharing(config_, config_.synthetic.mode_shapes, ranks);
  }
  if (config_.validation.source == ValidationSource::count && config_.source == ProblemSource::synthetic &&
      config_.validation.count >= config_.synthetic.n_probes) {
    fail_at("validation.count", at("validation.count"),
            "is out of range: must be below problem.synthetic.n_probes = " +
                std::to_string(config_.synthetic.n_probes) + " (some probes must remain to fit)");
  }
  if (model.tucker_ranks.has_value() != model.tt_ranks.has_value()) {
    std::string const missing = model.tucker_ranks ? "model.tt_ranks" : "model.tucker_ranks";
    fail_at(missing, at("model"), "missing key: give both tucker_ranks and tt_ranks, or neither");
  }
  if (config_.source == ProblemSource::synthetic) {
    std::size_t const d = config_.synthetic.mode_shapes.size();
    if (model.tucker_ranks && model.tucker_ranks->size() != d) {
      fail_at("model.tucker_ranks", at("model.tucker_ranks"),
              "has " + std::to_string(model.tucker_ranks->size()) + " entries, expected d = " + std::to_string(d) +
                  " (problem.synthetic.mode_shapes)");
    }
    if (model.tt_ranks && model.tt_ranks->size() != d + 1) {
      fail_at("model.tt_ranks", at("model.tt_ranks"),
              "has " + std::to_string(model.tt_ranks->size()) + " entries, expected d + 1 = " + std::to_string(d + 1));
    }
    if (model.init == InitKind::truth_perturbation && model.tucker_ranks &&
        (*model.tucker_ranks != config_.synthetic.tucker_ranks || *model.tt_ranks != config_.synthetic.tt_ranks)) {
      fail_at("model.tucker_ranks", at("model.tucker_ranks"),
              "a truth_perturbation start has the planted T3's ranks; leave the model ranks out or make them equal "
              "to problem.synthetic's");
    }
  } else if (model.init == InitKind::random && !model.tucker_ranks && !model.tucker_range) {
    fail_at("model.tucker_ranks", at("model"),
            "missing key: a random start on a data problem needs tucker_ranks and tt_ranks");
  }
  if (model.tucker_ranks && model.tt_ranks && model.tt_ranks->size() != model.tucker_ranks->size() + 1) {
    fail_at("model.tt_ranks", at("model.tt_ranks"),
            "has " + std::to_string(model.tt_ranks->size()) + " entries, expected d + 1 = " +
                std::to_string(model.tucker_ranks->size() + 1) + " (model.tucker_ranks has d entries)");
  }
  auto const* mc_sgd = std::get_if<McSgdOptions>(&config_.optimizer.options);
  if (mc_sgd && config_.source == ProblemSource::synthetic && config_.optimizer.given.count("batch_size") &&
      mc_sgd->batch_size > config_.synthetic.n_probes) {
    fail_at("optimizer.batch_size", at("optimizer.batch_size"),
            "is out of range: larger than the number of probes problem.synthetic.n_probes = " +
                std::to_string(config_.synthetic.n_probes));
  }
}

}  // namespace detail

ModeSharing model_sharing(Config const& config, std::vector<std::size_t> const& mode_shapes,
                          std::vector<std::size_t> const& tucker_ranks, std::string const& ranks_from) {
  if (!config.model.sharing) return ModeSharing::unshared(mode_shapes);
  auto const& labels = *config.model.sharing;
  if (labels.size() != mode_shapes.size()) {
    throw config.error_at("model.sharing", "has " + std::to_string(labels.size()) + " labels but the model has d = " +
                                               std::to_string(mode_shapes.size()) + " modes (mode shapes " +
                                               impl::shape_string(mode_shapes) + "); give one label per mode");
  }
  // The library's messages name the modes and sizes; the key and the file come from here.
  auto const strip = [](std::string message) {
    auto const colon = message.find(": ");
    return colon == std::string::npos ? message : message.substr(colon + 2);
  };
  try {
    ModeSharing sharing(labels, mode_shapes);
    if (tucker_ranks.size() == mode_shapes.size()) sharing.check_tucker_ranks(tucker_ranks, "");
    return sharing;
  } catch (std::exception const& e) {
    std::string message = strip(e.what());
    if (message.find("Tucker ranks") != std::string::npos) message += " (" + ranks_from + ")";
    throw config.error_at("model.sharing", message);
  }
}

ModeSharing continuation_sharing(Config const& config, std::vector<std::size_t> const& mode_shapes,
                                 ResolvedRanks const& ranks) {
  (void)model_sharing(config, mode_shapes, ranks.max_tucker, "model.tucker_ranks.max");
  return model_sharing(config, mode_shapes, ranks.tucker, "model.tucker_ranks.start");
}

std::vector<std::size_t> RankBound::expand(std::size_t d, bool tt) const {
  if (!list.empty()) return list;
  if (!tt) return std::vector<std::size_t>(d, all);
  std::vector<std::size_t> out(d + 1, all);
  out.front() = out.back() = 1;
  return out;
}

ResolvedRanks resolve_ranks(Config const& config, std::vector<std::size_t> const& mode_shapes) {
  std::size_t const d = mode_shapes.size();
  auto const& m = config.model;
  ResolvedRanks out;
  auto expand = [&](RankBound const& b, bool tt, std::string const& key) {
    auto v = b.expand(d, tt);
    std::size_t const expected = tt ? d + 1 : d;
    if (v.size() != expected) {
      throw config.error_at(key, "has " + std::to_string(v.size()) + " entries but the problem has d = " +
                                     std::to_string(d) + " modes, so " + std::to_string(expected) + " are needed");
    }
    if (tt && (v.front() != 1 || v.back() != 1)) {
      throw config.error_at(key, "the boundary TT ranks (first and last entries) must be 1");
    }
    return v;
  };
  out.tucker = expand(m.tucker_range->start, false, "model.tucker_ranks.start");
  out.max_tucker = expand(m.tucker_range->max, false, "model.tucker_ranks.max");
  out.tt = expand(m.tt_range->start, true, "model.tt_ranks.start");
  out.max_tt = expand(m.tt_range->max, true, "model.tt_ranks.max");
  for (std::size_t i = 0; i < d; ++i) {
    if (out.max_tucker[i] > mode_shapes[i]) {
      throw config.error_at("model.tucker_ranks.max", "entry " + std::to_string(i) + " is " +
                                                          std::to_string(out.max_tucker[i]) + ", above N_" +
                                                          std::to_string(i) + " = " + std::to_string(mode_shapes[i]));
    }
    if (out.tucker[i] > out.max_tucker[i]) {
      throw config.error_at("model.tucker_ranks.start", "entry " + std::to_string(i) + " is above its max");
    }
  }
  for (std::size_t e = 0; e <= d; ++e) {
    if (out.tt[e] > out.max_tt[e]) {
      throw config.error_at("model.tt_ranks.start", "entry " + std::to_string(e) + " is above its max");
    }
  }
  return out;
}

ConfigError Config::error_at(std::string const& key_path, std::string const& message) const {
  std::string path = key_path;
  while (true) {
    auto it = locations.find(path);
    if (it != locations.end()) return ConfigError(file, key_path, it->second, message);
    auto const dot = path.rfind('.');
    if (dot == std::string::npos) break;
    path.resize(dot);
  }
  return ConfigError(file, key_path, {1, 1}, message);
}

Config parse_config(std::string const& text, std::string const& file) {
  Config config;
  config.file = file;
  try {
    detail::parse_into(config, text);
  } catch (ConfigError const&) {
    throw;
  } catch (YAML::Exception const& e) {
    // yaml-cpp errors while walking the tree (a malformed node): report them like parse errors.
    Location l{1, 1};
    if (!e.mark.is_null()) l = {e.mark.line + 1, e.mark.column + 1};
    throw ConfigError(file, "", l, "invalid YAML: " + detail::printable(e.msg));
  } catch (std::exception const& e) {
    throw ConfigError(file, "", {1, 1}, std::string("cannot read the configuration: ") + e.what());
  }
  return config;
}

Config load_config(std::string const& path) {
  // O_NONBLOCK: a FIFO opens at once instead of waiting for a writer, and is refused below with devices and
  // directories (which would block, read without end or read as empty).
  int const fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    throw ConfigError(path, "", {0, 0}, std::string("cannot open the configuration file: ") + std::strerror(errno));
  }
  struct stat info;
  std::string problem;
  if (::fstat(fd, &info) != 0) {
    problem = std::string("cannot read the configuration file: ") + std::strerror(errno);
  } else if (S_ISDIR(info.st_mode)) {
    problem = "the configuration file is a directory";
  } else if (!S_ISREG(info.st_mode)) {
    problem = "the configuration file is not a regular file (a FIFO, socket or device)";
  } else if (info.st_size > max_config_bytes) {
    problem = "the configuration file has " + std::to_string(info.st_size) + " bytes, more than the " +
              std::to_string(max_config_bytes) + " a configuration may have";
  }
  std::string text;
  if (problem.empty()) {
    char buffer[65536];
    for (;;) {
      ssize_t const n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = std::string("cannot read the configuration file: ") + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      text.append(buffer, std::size_t(n));
      if (text.size() > std::size_t(max_config_bytes)) {
        problem = "the configuration file has more than " + std::to_string(max_config_bytes) + " bytes";
        break;
      }
    }
  }
  ::close(fd);
  if (!problem.empty()) throw ConfigError(path, "", {0, 0}, problem);
  return parse_config(text, path);
}

}  // namespace fit
}  // namespace t3k
