// simpact CLI — the command-line front end: `simpact <command> FILE.json`.
//
// Everything takes its streams as arguments so that tests can run a whole
// command in-process; main() only passes std::cin/cout/cerr.
#pragma once

#include <simpact_cli/json_input.h>

#include <iosfwd>
#include <string_view>
#include <vector>

namespace simpact::cli {

/// Exit codes. 64, 70 and 74 are the sysexits.h values.
inline constexpr int kExitSuccess = 0;     ///< the law ran; "status" tells how.
inline constexpr int kExitInputError = 2;  ///< unreadable or invalid input.
inline constexpr int kExitUsage = 64;      ///< bad command line.
inline constexpr int kExitInternal = 70;   ///< a bug: an unexpected exception.
inline constexpr int kExitOutput = 74;     ///< the output could not be written.

/// A subcommand reads one JSON document from `in`, writes its output
/// document to `out` and diagnostics to `err`, and returns the exit code.
using CommandFunction = int (*)(std::istream& in, std::ostream& out, std::ostream& err);

struct Subcommand {
  std::string_view name;
  std::string_view summary;  ///< one line for the command list.
  std::string_view help;     ///< its input format, printed after the list.
  CommandFunction run;
};

/// The subcommand table, in the order the usage text lists it.
const std::vector<Subcommand>& subcommands();

void print_usage(std::ostream& out);

/// The whole program. argv[1] is the subcommand and argv[2] its input file,
/// "-" for `in`. `--help`/`-h` prints the usage on `out` (exit 0); command-line
/// errors print it on `err` (exit 64); an unreadable file is one
/// "error: ..." line on `err` (exit 2).
int run(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err);

/// A JSON subcommand minus its I/O: output document from input document.
/// Throws InputError or InvalidProblem for bad input.
using JsonCommand = Json (*)(const Json& input);

/// Frame shared by the JSON subcommands: parse `in`, run `command`, print the
/// output (indent 2) on `out`. Any error becomes one "error: ..." line on
/// `err`, and nothing is written to `out`.
int run_json_command(JsonCommand command, std::istream& in, std::ostream& out, std::ostream& err);

/// `simpact resolve`: run_json_command(resolve_json, ...).
int run_resolve(std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace simpact::cli
