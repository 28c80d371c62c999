// The input schema has one source, each subcommand's help text: docs/cli.md
// shows it rendered by help_markdown() between the markers
//   <!-- generated from `simpact --help`: NAME -->  …  <!-- end of generated: NAME -->
// and this test fails when docs/cli.md's copy differs; it prints the block,
// and tests/cli/update_readme_help.py pastes it into docs/cli.md. The parser is tested on a sample first, so the comparison
// cannot pass by rendering nothing.
#include <simpact_cli/cli.h>
#include <simpact_cli/help_markdown.h>
#ifdef SIMPACT_CLI_HAS_SCENE
#include <simpact_cli/scene.h>
#endif

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#ifndef SIMPACT_SOURCE_DIR
#error "SIMPACT_SOURCE_DIR must name the source tree (set by tests/cli/CMakeLists.txt)"
#endif

namespace {

using simpact::cli::HelpBlock;
using simpact::cli::parse_help;

TEST(HelpSchema, ParsesKeysMembersContinuationsAndProse) {
  const char* help =
      "demo input: one JSON object with the keys\n"
      "  velocity             v, n numbers\n"
      "  inverse_mass | mass | masses\n"
      "                       exactly one of them\n"
      "  simpact              an object with\n"
      "    routh              an object with\n"
      "      step             h >= 0 (default 0)\n"
      "    seed               integer\n"
      "  restitution_combiner product | minimum\n"
      "  Every other number lies within +-1e6.\n"
      "  a body:\n"
      "Output: nothing.\n"
      "    velocity, angular_velocity   3 numbers      (default 0)\n";
  const std::vector<HelpBlock> blocks = parse_help(help);
  ASSERT_EQ(blocks.size(), 5u);
  EXPECT_EQ(blocks[0].prose, "demo input: one JSON object with the keys");
  ASSERT_EQ(blocks[1].keys.size(), 7u);
  EXPECT_EQ(blocks[1].keys[1].path, "inverse_mass | mass | masses");
  EXPECT_EQ(blocks[1].keys[1].meaning, "exactly one of them");
  EXPECT_EQ(blocks[1].keys[3].path, "simpact.routh");
  EXPECT_EQ(blocks[1].keys[4].path, "simpact.routh.step");
  EXPECT_EQ(blocks[1].keys[4].meaning, "h >= 0 (default 0)");
  EXPECT_EQ(blocks[1].keys[5].path, "simpact.seed");
  EXPECT_EQ(blocks[1].keys[5].meaning, "integer");
  EXPECT_EQ(blocks[1].keys[6].path, "restitution_combiner") << "a 20-letter key, one space before its text";
  EXPECT_EQ(blocks[1].keys[6].meaning, "product | minimum");
  EXPECT_EQ(blocks[2].prose, "Every other number lies within +-1e6. a body:");
  EXPECT_TRUE(blocks[3].keys.empty()) << "a prose line at the margin starts a paragraph";
  EXPECT_EQ(blocks[3].prose, "Output: nothing.");
  ASSERT_EQ(blocks[4].keys.size(), 1u);
  EXPECT_EQ(blocks[4].keys[0].path, "velocity, angular_velocity");
  EXPECT_EQ(blocks[4].keys[0].meaning, "3 numbers (default 0)") << "alignment spaces collapse";
  const std::string markdown = simpact::cli::help_markdown(help);
  EXPECT_NE(markdown.find("| `inverse_mass \\| mass \\| masses` | exactly one of them |"), std::string::npos)
      << markdown;
}

std::string ReadReadme() {
  std::ifstream in(std::string(SIMPACT_SOURCE_DIR) + "/docs/cli.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(HelpSchema, ReadmeShowsEachCommandsHelpAsGenerated) {
  const std::string readme = ReadReadme();
  ASSERT_FALSE(readme.empty()) << "cannot read docs/cli.md";
  int compared = 0;
  for (const simpact::cli::Subcommand& command : simpact::cli::subcommands()) {
    const std::string name(command.name);
    const std::string begin = "<!-- generated from `simpact --help`: " + name + " -->\n";
    const std::string end = "<!-- end of generated: " + name + " -->";
    const std::string expected = simpact::cli::help_markdown(command.help);
    const std::size_t from = readme.find(begin);
    const std::size_t to = from == std::string::npos ? from : readme.find(end, from);
    if (from == std::string::npos || to == std::string::npos) {
      ADD_FAILURE() << "docs/cli.md has no generated block for " << name << "; add\n"
                    << begin << "\n" << expected << "\n" << end;
      continue;
    }
    const std::string shown = readme.substr(from + begin.size(), to - from - begin.size());
    EXPECT_EQ(shown, "\n" + expected + "\n")
        << "docs/cli.md's " << name << " keys differ from `simpact --help`; replace the block with\n"
        << begin << "\n" << expected << "\n" << end;
    ++compared;
  }
  EXPECT_GE(compared, 1);
}

#ifdef SIMPACT_CLI_HAS_SCENE
// The scene parser's key lists and the help agree: every accepted key is
// documented as a key line, and every documented key (each alternative of
// "a, b" and "a | b" lines, the last component of a path) is accepted by
// some object. "joint" entries document their keys inline in the "joints"
// line, so they are checked as words of it.
TEST(HelpSchema, SceneHelpDocumentsExactlyTheAcceptedKeys) {
  std::set<std::string> documented;
  std::string joints_line;
  for (const HelpBlock& block : parse_help(simpact::cli::kSceneHelp)) {
    for (const simpact::cli::HelpKey& key : block.keys) {
      const std::string leaf = key.path.substr(key.path.rfind('.') + 1);
      std::string name;
      for (const char c : leaf + ",") {
        if (c == ',' || c == '|' || c == ' ') {
          if (!name.empty()) documented.insert(name);
          name.clear();
        } else {
          name += c;
        }
      }
      if (key.path == "joints" && joints_line.empty()) joints_line = key.meaning;
    }
  }
  std::set<std::string> accepted;
  for (const auto& [object, keys] : simpact::cli::scene_accepted_keys()) {
    for (const std::string& key : keys) {
      accepted.insert(key);
      if (object == "joint") {
        EXPECT_NE(joints_line.find('"' + key + '"'), std::string::npos) << "joint key " << key;
      } else {
        EXPECT_EQ(documented.count(key), 1u) << object << " key " << key << " is accepted but not documented";
      }
    }
  }
  for (const std::string& key : documented)
    EXPECT_EQ(accepted.count(key), 1u) << "documented key " << key << " is accepted by no object";
  EXPECT_GE(accepted.size(), 40u);
}
#endif

}  // namespace
