/// \file fit_config_fingerprint.cpp
/// What a checkpoint must agree with to be resumed (Config::fingerprint), and the refusal's list of what changed.

#include "drivers/fit_config.hpp"
#include "drivers/fit_config_internal.hpp"

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace t3k {
namespace fit {

// 17 digits: a fingerprint compares doubles exactly.
std::string Config::fingerprint() const { return detail::emit_yaml(*this, true, 17); }

namespace {

using detail::join;
using detail::printable;

/// Every scalar or list of a fingerprint under its dotted key path, as flow-style YAML text.
void flatten(YAML::Node const& node, std::string const& path, std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (auto const& entry : node) {
      std::string const key = entry.first.as<std::string>();
      flatten(entry.second, path.empty() ? key : path + "." + key, out);
    }
    return;
  }
  YAML::Emitter text;
  text.SetSeqFormat(YAML::Flow);
  text.SetMapFormat(YAML::Flow);
  text << node;
  out[path] = text.c_str();
}

}  // namespace

std::string fingerprint_changes(std::string const& checkpoint, std::string const& now) {
  std::map<std::string, std::string> before, after;
  try {
    flatten(YAML::Load(checkpoint), "", before);
    flatten(YAML::Load(now), "", after);
  } catch (YAML::Exception const&) {
    return "the checkpoint's configuration is unreadable";
  }
  auto const shown = [](std::map<std::string, std::string> const& m, std::string const& key) {
    auto const it = m.find(key);
    return it == m.end() ? std::string("not given") : printable(it->second);
  };
  std::set<std::string> keys;
  for (auto const& e : before) keys.insert(e.first);
  for (auto const& e : after) keys.insert(e.first);
  std::vector<std::string> changes;
  for (auto const& key : keys) {
    std::string const a = shown(before, key), b = shown(after, key);
    if (a != b) changes.push_back(key + " (" + a + " in the checkpoint, " + b + " now)");
  }
  return changes.empty() ? std::string("the configurations differ") : join(changes, ", ");
}

}  // namespace fit
}  // namespace t3k
