// The input schema has one source, each subcommand's help text: the README
// shows it rendered by help_markdown() between the markers
//   <!-- generated from `simpact --help`: NAME -->  …  <!-- end of generated: NAME -->
// and this test fails when the README's copy differs (it prints the block
// to paste). The parser is tested on a sample first, so the comparison
// cannot pass by rendering nothing.
#include <simpact_cli/cli.h>
#include <simpact_cli/help_markdown.h>

#include <gtest/gtest.h>

#include <fstream>
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
  std::ifstream in(std::string(SIMPACT_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(HelpSchema, ReadmeShowsEachCommandsHelpAsGenerated) {
  const std::string readme = ReadReadme();
  ASSERT_FALSE(readme.empty()) << "cannot read README.md";
  int compared = 0;
  for (const simpact::cli::Subcommand& command : simpact::cli::subcommands()) {
    const std::string name(command.name);
    const std::string begin = "<!-- generated from `simpact --help`: " + name + " -->\n";
    const std::string end = "<!-- end of generated: " + name + " -->";
    const std::string expected = simpact::cli::help_markdown(command.help);
    const std::size_t from = readme.find(begin);
    const std::size_t to = from == std::string::npos ? from : readme.find(end, from);
    if (from == std::string::npos || to == std::string::npos) {
      ADD_FAILURE() << "README.md has no generated block for " << name << "; add\n"
                    << begin << "\n" << expected << "\n" << end;
      continue;
    }
    const std::string shown = readme.substr(from + begin.size(), to - from - begin.size());
    EXPECT_EQ(shown, "\n" + expected + "\n")
        << "README.md's " << name << " keys differ from `simpact --help`; replace the block with\n"
        << begin << "\n" << expected << "\n" << end;
    ++compared;
  }
  EXPECT_GE(compared, 1);
}

}  // namespace
