#include "drivers/wait_policy.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace t3k {
namespace cli {

namespace {
char const* const policy_variables[] = {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"};
}  // namespace

void apply_default_wait_policy(char** argv) {
  for (char const* name : policy_variables) {
    if (std::getenv(name) != nullptr) return;  // the user's choice, or this image was executed with ours
  }
  if (::setenv(default_wait_variable, default_wait_value, 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // No /proc, or the binary is gone: run on with the runtime's default rather than fail.
  ::unsetenv(default_wait_variable);
}

std::optional<std::string> startup_environment(char const* name) {
  std::ifstream in("/proc/self/environ", std::ios::binary);
  if (!in) {
    char const* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  }
  std::string const all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string const prefix = std::string(name) + "=";
  for (std::size_t begin = 0; begin < all.size();) {
    std::size_t end = all.find('\0', begin);
    if (end == std::string::npos) end = all.size();
    if (all.compare(begin, prefix.size(), prefix) == 0) {
      return all.substr(begin + prefix.size(), end - begin - prefix.size());
    }
    begin = end + 1;
  }
  return std::nullopt;
}

std::string wait_policy_description() {
  auto const policy = startup_environment("OMP_WAIT_POLICY");
  auto const spin = startup_environment("GOMP_SPINCOUNT");
  if (!policy && !spin) return "the OpenMP runtime's default (neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set)";
  std::string text;
  if (policy) text = "OMP_WAIT_POLICY=" + *policy;
  if (spin) text += (text.empty() ? "" : " ") + std::string("GOMP_SPINCOUNT=") + *spin;
  bool const ours = !spin && *policy == default_wait_value;
  return text + (ours ? " (t3k's default)" : " (from the environment)");
}

}  // namespace cli
}  // namespace t3k
