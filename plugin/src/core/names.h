// The names of the core's enums (to_string / parse_* in the public
// headers) from one table per enum: {value, name} pairs.
#pragma once

#include <simpact/impact_problem.h>  // InvalidProblem

#include <cstddef>
#include <string>
#include <utility>

namespace simpact::internal {

template <class Enum, std::size_t N>
using NameTable = std::pair<Enum, const char*>[N];

/// The name of `value` in `names`; "unknown" for a value outside the table.
template <class Enum, std::size_t N>
const char* name_of(Enum value, const NameTable<Enum, N>& names) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "unknown";
}

/// The value named `name`; otherwise throws InvalidProblem
/// "unknown <what> "<name>" (expected a, b or c)", the names in table order.
template <class Enum, std::size_t N>
Enum parse_name(const std::string& name, const NameTable<Enum, N>& names, const char* what) {
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) {
    if (name == names[i].second) return names[i].first;
    expected += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i].second);
  }
  throw InvalidProblem("unknown " + std::string(what) + " \"" + name + "\" (expected " + expected + ")");
}

}  // namespace simpact::internal
