// Runs a CLI command in-process on a string and captures what it printed.
#pragma once

#include <sstream>
#include <string>

namespace simpact::cli::testing {

struct CommandRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// `command(in, out, err)` returns an exit code, like run_resolve/run_scene.
template <class Command>
CommandRun capture(const std::string& input, Command command) {
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream err;
  CommandRun result;
  result.exit_code = command(in, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace simpact::cli::testing
