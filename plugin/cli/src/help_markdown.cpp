#include <simpact_cli/help_markdown.h>

#include <regex>
#include <sstream>
#include <utility>

namespace simpact::cli {
namespace {

std::size_t indent_of(const std::string& line) {
  const std::size_t first = line.find_first_not_of(' ');
  return first == std::string::npos ? line.size() : first;
}

// Markdown table cells: '|' escaped (also inside code spans, as GitHub
// requires in tables).
std::string escape_cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// Appends `text` to `to` with single spaces: the help aligns defaults in
// columns, which Markdown need not keep.
void append_words(std::string& to, const std::string& text) {
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!to.empty()) to += ' ';
    to += word;
  }
}

}  // namespace

std::vector<HelpBlock> parse_help(std::string_view help) {
  static const std::regex key_line(
      R"(^( {2,})([a-z_][a-z0-9_]*(?:(?:, | \| )[a-z_][a-z0-9_]*)*)(?:( +)(\S.*))?$)");
  std::vector<HelpBlock> blocks;
  std::vector<std::pair<std::size_t, std::string>> parents;  // (indent, path) of the keys above
  std::istringstream lines{std::string(help)};
  std::string line;
  bool in_keys = false;
  while (std::getline(lines, line)) {
    const std::size_t indent = indent_of(line);
    if (indent == line.size()) {  // blank: ends any block
      in_keys = false;
      continue;
    }
    if (in_keys && indent >= kDescriptionColumn) {
      append_words(blocks.back().keys.back().meaning, line);
      continue;
    }
    std::smatch m;
    bool is_key = false;
    if (indent % 2 == 0 && std::regex_match(line, m, key_line)) {
      const std::size_t key_end = indent + std::size_t(m[2].length());
      if (!m[4].matched) {
        is_key = true;
      } else {
        const std::size_t description = key_end + std::size_t(m[3].length());
        is_key = description == kDescriptionColumn ||
                 (key_end + 2 > kDescriptionColumn && m[3].length() >= 2);
      }
    }
    if (!is_key) {
      // A prose line at the margin starts a paragraph; an indented one
      // continues the one before (or starts one after a table).
      if (in_keys || blocks.empty() || !blocks.back().keys.empty() || indent == 0) blocks.emplace_back();
      in_keys = false;
      // A heading inside an object ("free bases only:") keeps its parents.
      while (!parents.empty() && parents.back().first >= indent) parents.pop_back();
      append_words(blocks.back().prose, line);
      continue;
    }
    if (!in_keys) {
      blocks.emplace_back();
      in_keys = true;
    }
    while (!parents.empty() && parents.back().first >= indent) parents.pop_back();
    const std::string key = m[2];
    const std::string path = parents.empty() ? key : parents.back().second + "." + key;
    parents.emplace_back(indent, path);
    std::string meaning;
    if (m[4].matched) append_words(meaning, m[4]);
    blocks.back().keys.push_back({path, meaning});
  }
  return blocks;
}

std::string help_markdown(std::string_view help) {
  std::string out;
  for (const HelpBlock& block : parse_help(help)) {
    if (!out.empty()) out += '\n';
    if (block.keys.empty()) {
      out += block.prose + '\n';
      continue;
    }
    out += "| key | meaning |\n| --- | --- |\n";
    for (const HelpKey& key : block.keys)
      out += "| `" + escape_cell(key.path) + "` | " + escape_cell(key.meaning) + " |\n";
  }
  return out;
}

}  // namespace simpact::cli
