// simpact CLI — the input schema's one source: each subcommand's help text
// (Subcommand::help, printed by `simpact --help`) is also rendered as the
// Markdown the README shows for that command, and a test
// (tests/cli/readme_help_test.cpp) fails when the README's copy differs.
//
// The help text's layout is the schema's syntax:
//   * a KEY LINE is indented by an even number ≥ 2 of spaces and names one
//     key, several separated by ", " or " | " (alternatives), in lower-case
//     identifiers; its description starts at column kDescriptionColumn
//     (or two spaces after a longer key), or on the next line;
//   * a line indented to kDescriptionColumn or more continues the last
//     key's description;
//   * a key indented deeper than the key before it is that key's member
//     (its path is "parent.key");
//   * every other line is prose (a heading, a note, an output description)
//     and ends the current table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace simpact::cli {

/// Column (0-based) where a key line's description starts in the help text.
inline constexpr std::size_t kDescriptionColumn = 23;

/// One key of a help text: its path ("simpact.routh.step"; several keys
/// "velocity, angular_velocity" keep their separators) and its description
/// with continuation lines joined by single spaces.
struct HelpKey {
  std::string path;
  std::string meaning;
};

/// One block of a help text: prose (`keys` empty, `prose` the lines joined
/// by spaces) or a run of consecutive key lines.
struct HelpBlock {
  std::string prose;
  std::vector<HelpKey> keys;
};

/// Parses a help text in the layout above.
std::vector<HelpBlock> parse_help(std::string_view help);

/// The Markdown of a help text: prose blocks as paragraphs, key runs as
/// tables | key | meaning | (keys in code spans; '|' escaped).
std::string help_markdown(std::string_view help);

}  // namespace simpact::cli
