/// \file flag_checks.cpp
/// Checks of command-line values (flag_checks.hpp).

#include "drivers/flag_checks.hpp"

#include "drivers/fit_config.hpp"

#include <algorithm>
#include <cstddef>

namespace t3k {
namespace cli {

CLI::Validator integer_in(long long minimum, long long maximum) {
  return CLI::Validator(
      [minimum, maximum](std::string& text) -> std::string {
        std::size_t pos = 0;
        long long value = 0;
        try {
          value = std::stoll(text, &pos);
        } catch (...) {
          pos = 0;
        }
        if (pos == 0 || pos != text.size() || value < minimum || value > maximum) {
          return "must be an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum) + ", got '" +
                 text + "'";
        }
        return std::string();
      },
      "INT in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]");
}

CLI::Validator integer_at_least(long long minimum) {
  return CLI::Validator(
      [minimum](std::string& text) -> std::string {
        std::size_t pos = 0;
        long long value = 0;
        try {
          value = std::stoll(text, &pos);
        } catch (...) {
          pos = 0;
        }
        if (pos == 0 || pos != text.size() || value < minimum) {
          return "must be an integer >= " + std::to_string(minimum) + ", got '" + text + "'";
        }
        return std::string();
      },
      "INT>=" + std::to_string(minimum));
}

CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return std::string();
        return "must be a whole number (digits only), got '" + text + "'";
      },
      "UINT");
}

std::optional<std::string> check_kokkos_args(std::vector<char*> const& kokkos_args) {
  struct Limit {
    char const* flag;
    long long minimum, maximum;
  };
  static Limit const integers[] = {{"--kokkos-threads", 1, fit::max_kokkos_threads},
                                   {"--kokkos-num-threads", 1, fit::max_kokkos_threads},
                                   {"--kokkos-numa", 1, 64},
                                   {"--kokkos-device", 0, 4096},
                                   {"--kokkos-device-id", 0, 4096},
                                   {"--kokkos-skip-device", 0, 4096}};
  // Flags without a value, and flags whose value is Kokkos' own business (a tool library, its arguments, a word).
  static char const* const switches[] = {"--kokkos-help", "--kokkos-disable-warnings", "--kokkos-tune-internals",
                                         "--kokkos-tools-help", "--kokkos-print-configuration"};
  static char const* const texts[] = {"--kokkos-tools-library", "--kokkos-tools-libs", "--kokkos-tools-args",
                                      "--kokkos-map-device-id-by"};
  // Digits only (no sign, blank or base prefix), as Kokkos 3 requires, within [minimum, maximum].
  auto integer_problem = [](std::string const& text, long long minimum, long long maximum) -> std::string {
    bool const digits = !text.empty() && text.size() <= 9 &&
                        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && std::stoll(text) >= minimum && std::stoll(text) <= maximum) return std::string();
    return "must be an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum) + ", got '" + text +
           "'";
  };
  for (std::size_t a = 1; a < kokkos_args.size(); ++a) {
    std::string const arg = kokkos_args[a];
    std::size_t const eq = arg.find('=');
    std::string const flag = arg.substr(0, eq);
    std::string const value = eq == std::string::npos ? std::string() : arg.substr(eq + 1);
    bool known = false;
    for (auto const& limit : integers) {
      if (flag != limit.flag) continue;
      known = true;
      if (eq == std::string::npos) return flag + ": needs a value, as in " + flag + "=N";
      std::string const problem = integer_problem(value, limit.minimum, limit.maximum);
      if (!problem.empty()) return flag + ": " + problem;
    }
    if (flag == "--kokkos-ndevices" || flag == "--kokkos-num-devices") {
      // N or N,SKIP: N devices per node, and the device to skip.
      known = true;
      if (eq == std::string::npos) return flag + ": needs a value, as in " + flag + "=N or " + flag + "=N,SKIP";
      std::size_t const comma = value.find(',');
      std::string problem = integer_problem(value.substr(0, comma), 1, 4096);
      if (problem.empty() && comma != std::string::npos) problem = integer_problem(value.substr(comma + 1), 0, 4096);
      if (!problem.empty()) return flag + ": " + problem;
    }
    for (char const* name : switches) {
      if (flag != name) continue;
      known = true;
      if (eq != std::string::npos) return flag + ": takes no value, got '" + value + "'";
    }
    for (char const* name : texts) {
      if (flag != name) continue;
      known = true;
      if (value.empty()) return flag + ": needs a value, as in " + flag + "=VALUE";
    }
    if (!known) return flag + ": not a Kokkos flag this program knows (see --kokkos-help)";
  }
  return std::nullopt;
}

}  // namespace cli
}  // namespace t3k
