#pragma once
/// \file fit_config_internal.hpp
/// What the sources of the configuration (fit_config*.cpp) share: bounded rendering of user text, the checks across
/// sections, and the YAML emitter that both summary.yaml and the checkpoint fingerprint write through. Not included
/// by anything else.

#include "drivers/fit_config.hpp"

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace t3k {
namespace fit {
namespace detail {

/// The parts with `separator` between them.
std::string join(std::vector<std::string> const& parts, char const* separator);

/// Printable, bounded rendering of user text (the fuzz test feeds garbage bytes): at most 40 characters, the rest
/// "...", bytes that do not print as \xNN.
std::string printable(std::string const& text);

/// A value for messages: "a list", "a map", "nothing (null)" or the scalar quoted (printable).
std::string describe(YAML::Node const& node);

/// " (did you mean 'KEY'?)" for the allowed key nearest to `name` (edit distance below 3), else empty.
std::string did_you_mean(std::string const& name, std::vector<std::string> const& allowed);

/// `p` as written in the configuration file `config_file`: absolute, relative paths anchored at the file's folder.
std::string resolve_path(std::string const& config_file, std::string const& p);

/// Parses YAML text into `config` (whose `file` names it). **Throws:** ConfigError, or yaml-cpp's exceptions for
/// malformed nodes (parse_config turns those into ConfigError).
void parse_into(Config& config, std::string const& text);

/// Checks across sections that need no data (rank forms, list lengths, counts against n_probes).
/// **Throws:** ConfigError at the key.
void check_across_sections(Config const& config);

/// The configuration as YAML text at `precision` significant digits: the resolved configuration (summary.yaml) or,
/// with `fingerprint`, what a resumed run must agree with (no output, Kokkos, max_iterations or tolerances).
std::string emit_yaml(Config const& config, bool fingerprint, int precision);

}  // namespace detail
}  // namespace fit
}  // namespace t3k
