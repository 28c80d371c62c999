// Helpers shared by the tests of `simpact resolve`: in-process runs on
// strings, the bundled data files, and runs of the real executable.
#pragma once

#include "capture.h"

#include <simpact_cli/cli.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/wait.h>
#define SIMPACT_HAVE_POPEN 1
#endif

namespace simpact::cli::testing {

inline CommandRun resolve_text(const std::string& input) { return capture(input, run_resolve); }

inline CommandRun run_arguments(std::vector<const char*> arguments,
                                const std::string& input = "") {
  arguments.insert(arguments.begin(), "simpact");
  return capture(input, [&arguments](std::istream& in, std::ostream& out, std::ostream& err) {
    return run(static_cast<int>(arguments.size()), arguments.data(), in, out, err);
  });
}

inline std::string data_path(const std::string& name) {
  return std::string(SIMPACT_SOURCE_DIR) + "/demos/data/" + name;
}

inline Json load_data(const std::string& name) {
  std::ifstream file(data_path(name));
  EXPECT_TRUE(file) << "cannot open " << data_path(name);
  return Json::parse(file);
}

/// The output of a run that must succeed. A failed run throws after
/// recording the failure, which ends the test: indexing an absent output
/// further would be undefined behaviour, not a test failure.
inline Json resolve_ok(const Json& input) {
  const CommandRun result = resolve_text(input.dump());
  EXPECT_EQ(result.exit_code, kExitSuccess) << result.err;
  EXPECT_EQ(result.err, "");
  if (result.exit_code != kExitSuccess) throw std::runtime_error("resolve failed: " + result.err);
  return Json::parse(result.out);
}

inline std::vector<double> numbers(const Json& array) { return array.get<std::vector<double>>(); }

/// A malformed input and the substring its one error line must contain.
struct MalformedCase {
  std::string name;
  std::string input;
  std::string expected;  ///< substring of the error line: the offending key.
};

inline void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }

inline std::string case_name(const ::testing::TestParamInfo<MalformedCase>& param_info) {
  return param_info.param.name;
}

/// Exit 2, nothing on stdout, exactly one "error: ..." line containing
/// `expected`.
inline void expect_one_error_line(const CommandRun& result, const std::string& expected) {
  EXPECT_EQ(result.exit_code, kExitInputError);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err.rfind("error: ", 0), 0u) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_FALSE(result.err.empty() || result.err.back() != '\n') << result.err;
  EXPECT_NE(result.err.find(expected), std::string::npos) << result.err;
}

#ifdef SIMPACT_HAVE_POPEN
/// Runs a shell command line; returns its exit code and standard output.
inline CommandRun run_shell(const std::string& command) {
  CommandRun result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t count = 0;
  while ((count = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.out.append(buffer.data(), count);
  }
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline std::string binary() { return std::string("'") + SIMPACT_CLI_EXECUTABLE + "'"; }
#endif

}  // namespace simpact::cli::testing
