// Command line shared by the benchmarks: [--quick] [--csv FILE].
#pragma once

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace simpact::demos {

struct BenchmarkOptions {
  bool quick = false;  ///< a short smoke run (ctest)
  std::string csv;     ///< where to write the table; empty: nowhere
};

/// Parses argv; prints the usage and returns nothing on anything else.
inline std::optional<BenchmarkOptions> parse_benchmark_options(int argc, char** argv,
                                                               std::string default_csv) {
  BenchmarkOptions options;
  options.csv = std::move(default_csv);
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      options.quick = true;
    } else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) {
      options.csv = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--csv FILE]\n", argv[0]);
      return std::nullopt;
    }
  }
  return options;
}

}  // namespace simpact::demos
