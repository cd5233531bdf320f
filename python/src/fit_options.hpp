#pragma once
/// \file fit_options.hpp
/// fit's keyword options checked against the key tables of `t3k fit` (drivers/optimizer_keys.hpp): each value's
/// kind and range as the configuration file's, the messages naming the option and the values it allows, and the
/// tables as help(t3k.fit) lists them.

#include "arrays.hpp"

// The optimizer key tables of `t3k fit` (compiled into the module): fit's options, their checks and help(t3k.fit)
// come from the same tables as the configuration file's.
#include "drivers/optimizer_keys.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <variant>
#include <vector>

namespace t3k_python {

using t3k::fit::KeyKind;
using t3k::fit::KeyValue;

/// The values a key allows, as help(t3k.fit) and the error messages state them.
template <class Options>
std::string range_text(t3k::fit::OptionKey<Options> const& k) {
  switch (k.kind) {
    case KeyKind::real:
      if (std::isinf(k.max)) return std::string(k.min_open ? "> " : ">= ") + number_text(k.min);
      return std::string("in ") + (k.min_open ? "(" : "[") + number_text(k.min) + ", " + number_text(k.max) +
             (k.max_open ? ")" : "]");
    case KeyKind::integer:
      if (k.integer_max == std::numeric_limits<std::uint64_t>::max()) return ">= " + std::to_string(k.integer_min);
      return "in [" + std::to_string(k.integer_min) + ", " + std::to_string(k.integer_max) + "]";
    case KeyKind::boolean:
      return "True or False";
    case KeyKind::choice: {
      std::string out = "one of ";
      for (std::size_t c = 0; c < k.choices.size(); ++c) out += (c ? ", '" : "'") + k.choices[c] + "'";
      return out;
    }
  }
  return "";
}

inline char const* kind_name(KeyKind kind) {
  switch (kind) {
    case KeyKind::real:
      return "float";
    case KeyKind::integer:
      return "int";
    case KeyKind::boolean:
      return "bool";
    case KeyKind::choice:
      return "str";
  }
  return "";
}

inline nb::object python_value(KeyValue const& v) {
  return std::visit([](auto const& value) { return nb::cast(value); }, v);
}

/// fit's keyword for a continuation key: continuation_rule for model.continuation.rule (among fit's keywords a bare
/// "rule" would not say what it rules), the key itself otherwise.
inline std::string continuation_keyword(char const* key) {
  return std::string(key) == "rule" ? "continuation_rule" : std::string(key);
}

/// A Python value for key `k`, checked against its kind and range as the configuration file's value is.
/// **Throws:** ValueError naming the option, the values it allows and the value given.
template <class Options>
KeyValue option_value(std::string const& where, t3k::fit::OptionKey<Options> const& k, nb::handle v) {
  auto refuse = [&] {
    fail(where + ": " + continuation_keyword(k.key) + " must be " + range_text(k) + ", got " + text_of(nb::repr(v)));
  };
  switch (k.kind) {
    case KeyKind::real: {
      if (nb::isinstance<nb::bool_>(v) || nb::isinstance<nb::str>(v)) refuse();
      nb::object f = nb::steal(PyNumber_Float(v.ptr()));
      if (!f.is_valid()) {
        PyErr_Clear();
        refuse();
      }
      double const x = PyFloat_AsDouble(f.ptr());
      bool const below = k.min_open ? !(x > k.min) : !(x >= k.min);
      bool const above = k.max_open ? !(x < k.max) : !(x <= k.max);
      if (below || above) refuse();
      return x;
    }
    case KeyKind::integer: {
      if (nb::isinstance<nb::bool_>(v) || !PyIndex_Check(v.ptr())) refuse();
      nb::object index = nb::steal(PyNumber_Index(v.ptr()));
      if (!index.is_valid()) {  // an array of several entries, say
        PyErr_Clear();
        refuse();
      }
      unsigned long long const x = PyLong_AsUnsignedLongLong(index.ptr());
      if (PyErr_Occurred()) {
        PyErr_Clear();
        refuse();
      }
      if (x < k.integer_min || x > k.integer_max) refuse();
      return std::uint64_t(x);
    }
    case KeyKind::boolean:
      if (!nb::isinstance<nb::bool_>(v)) refuse();
      return nb::cast<bool>(v);
    case KeyKind::choice: {
      if (!nb::isinstance<nb::str>(v)) refuse();
      std::string const word = nb::cast<std::string>(v);
      if (std::find(k.choices.begin(), k.choices.end(), word) == k.choices.end()) refuse();
      return word;
    }
  }
  refuse();
  return {};
}

/// fit's keywords beyond the optimizer's keys: early stopping on the validation set (validation.patience of the
/// configuration file) and a rank continuation (model.continuation, with the maximum ranks of model's {start, max}).
inline std::vector<std::string> fit_extra_keys() {
  std::vector<std::string> out{"validation_patience", "max_tucker_ranks", "max_tt_ranks"};
  for (auto const& k : t3k::fit::continuation_keys()) out.push_back(continuation_keyword(k.key));
  return out;
}

/// The options of one optimizer from fit's keyword arguments; defaults are the option struct's own.
template <class Options>
Options parse_options(std::string const& where, std::string const& optimizer, nb::dict given) {
  Options options{};
  auto const& keys = t3k::fit::all_keys<Options>();
  auto const extras = fit_extra_keys();
  for (auto item : given) {
    std::string const key = nb::cast<std::string>(nb::str(item.first));
    if (std::find(extras.begin(), extras.end(), key) != extras.end()) continue;
    auto it = std::find_if(keys.begin(), keys.end(), [&](auto const& k) { return key == k.key; });
    if (it == keys.end()) {
      std::string names;
      for (auto const& k : keys) names += (names.empty() ? "" : ", ") + std::string(k.key);
      for (auto const& k : extras) names += ", " + k;
      fail(where + ": " + optimizer + " has no option '" + key + "'; its options are " + names);
    }
    it->set(options, option_value(where, *it, item.second));
  }
  return options;
}

/// For help(t3k.fit) and docs: {optimizer: [(key, type, default, allowed values), ...]}, the common keys under "".
inline nb::dict optimizer_keys() {
  nb::dict out;
  auto describe_keys = [](auto const& keys, auto const& defaults, auto keyword) {
    nb::list list;
    for (auto const& k : keys) {
      list.append(nb::make_tuple(keyword(k.key), kind_name(k.kind), python_value(k.get(defaults)), range_text(k)));
    }
    return list;
  };
  auto const same = [](char const* key) { return std::string(key); };
  out[""] = describe_keys(t3k::fit::common_keys(), t3k::OptimizerOptions{}, same);
  out["continuation"] = describe_keys(t3k::fit::continuation_keys(), t3k::RankContinuation{}, continuation_keyword);
  for (auto const& name : t3k::fit::optimizer_names()) {
    auto const choice = t3k::fit::default_options(name);
    std::visit(
        [&](auto const& defaults) {
          using Options = std::decay_t<decltype(defaults)>;
          out[name.c_str()] = describe_keys(t3k::fit::optimizer_table<Options>().keys, defaults, same);
        },
        *choice);
  }
  return out;
}

}  // namespace t3k_python
