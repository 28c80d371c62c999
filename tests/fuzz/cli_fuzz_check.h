// The command line's promise, checked on every fuzz input: exit status 0 or
// 2; status 2 is exactly one "error: ..." line and no output; status 0 is one
// JSON document with no null, NaN or infinite number. A broken promise
// aborts, which libFuzzer reports as a crash with the input saved.
#pragma once

#include <simpact_cli/cli.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace simpact::cli::fuzz {

[[noreturn]] inline void broken(const char* promise, const std::string& detail) {
  std::fprintf(stderr, "broken promise: %s\n%s\n", promise, detail.substr(0, 2000).c_str());
  std::abort();
}

inline void check_command(CommandFunction command, const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream err;
  const int status = command(in, out, err);
  const std::string output = out.str();
  const std::string error = err.str();
  if (status == kExitInputError) {
    if (!output.empty()) broken("exit 2 prints nothing on stdout", output);
    if (error.rfind("error: ", 0) != 0 || error.find('\n') != error.size() - 1) {
      broken("exit 2 prints one \"error: ...\" line", error);
    }
    return;
  }
  if (status != kExitSuccess) broken("exit status 0 or 2", std::to_string(status) + ": " + error);
  if (!error.empty()) broken("exit 0 prints nothing on stderr", error);
  // nlohmann prints NaN and infinities as null; no output field is null.
  if (output.find("null") != std::string::npos) broken("no null in the output", output);
  const Json parsed = Json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) broken("exit 0 prints one JSON document", output);
}

}  // namespace simpact::cli::fuzz
