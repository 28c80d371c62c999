// The layers' dependency rules, checked on the source tree:
// - the core depends on Eigen only: no Bullet header may be included from
//   the public headers (plugin/include/simpact/) or the core sources
//   (plugin/src/core/);
// - nothing under plugin/ (core, Bullet adapter, CLI and its worlds)
//   includes or links anything from demos/ or tests/.
// Each scanner is tested on samples first, so a check cannot pass by
// recognizing nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#ifndef SIMPACT_SOURCE_DIR
#error "SIMPACT_SOURCE_DIR must name the source tree (set by tests/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;

/// Included paths of `text` that belong to Bullet: its top-level directories
/// (LinearMath/, BulletDynamics/, BulletCollision/, BulletSoftBody/,
/// BulletInverseDynamics/, Bullet3*/), the umbrella headers
/// btBulletDynamicsCommon.h / btBulletCollisionCommon.h, and any header whose
/// file name is bt<Capital>….h (btVector3.h, btRigidBody.h, ...).
std::vector<std::string> BulletIncludes(const std::string& text) {
  static const std::regex include_line(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  static const std::regex bullet_dir(
      R"((^|/)(LinearMath|BulletDynamics|BulletCollision|BulletSoftBody|BulletInverseDynamics|Bullet3\w*|bullet)/)");
  static const std::regex bt_header(R"((^|/)bt[A-Z]\w*\.h(pp)?$)");
  std::vector<std::string> found;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (!std::regex_search(line, match, include_line)) continue;
    const std::string path = match[1];
    if (std::regex_search(path, bullet_dir) || std::regex_search(path, bt_header))
      found.push_back(path);
  }
  return found;
}

TEST(CoreHasNoBulletInclude, ScannerRecognizesBulletIncludes) {
  EXPECT_EQ(BulletIncludes("#include <btBulletDynamicsCommon.h>").size(), 1u);
  EXPECT_EQ(BulletIncludes("#include \"LinearMath/btVector3.h\"").size(), 1u);
  EXPECT_EQ(BulletIncludes("  #  include <BulletDynamics/Dynamics/btRigidBody.h>").size(), 1u);
  EXPECT_EQ(BulletIncludes("#include <bullet/btBulletCollisionCommon.h>").size(), 1u);
  EXPECT_EQ(BulletIncludes("#include <BulletCollision/CollisionShapes/btSphereShape.h>").size(),
            1u);
  EXPECT_EQ(BulletIncludes("#include \"btMatrix3x3.h\"").size(), 1u);
  EXPECT_EQ(BulletIncludes("#include <Bullet3Common/b3Vector3.h>").size(), 1u);
  EXPECT_EQ(
      BulletIncludes("#include <Eigen/Core>\n#include <simpact/propagative.h>\n"
                     "#include <bitset>\n#include \"core/lemke.h\"\n// btVector3.h in a comment\n")
          .size(),
      0u);
}

std::vector<fs::path> FilesIn(const fs::path& dir, bool headers_only) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext == ".h" || (!headers_only && (ext == ".cpp" || ext == ".hpp" || ext == ".cc")))
      files.push_back(entry.path());
  }
  return files;
}

TEST(CoreHasNoBulletInclude, PublicHeadersAndCoreSources) {
  const fs::path root(SIMPACT_SOURCE_DIR);
  const fs::path headers = root / "plugin" / "include" / "simpact";
  const fs::path core = root / "plugin" / "src" / "core";
  ASSERT_TRUE(fs::is_directory(headers)) << headers;
  ASSERT_TRUE(fs::is_directory(core)) << core;
  std::vector<fs::path> files = FilesIn(headers, /*headers_only=*/true);
  const std::size_t header_count = files.size();
  for (const auto& f : FilesIn(core, /*headers_only=*/false)) files.push_back(f);
  EXPECT_GE(header_count, 3u);                 // impact_problem.h, propagative.h, diagnostics.h
  EXPECT_GE(files.size() - header_count, 2u);  // the core has sources to check
  for (const auto& file : files) {
    std::ifstream in(file);
    ASSERT_TRUE(in) << "cannot read " << file;
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& include : BulletIncludes(text.str()))
      ADD_FAILURE() << file << " includes the Bullet header " << include;
  }
}

/// What a file of plugin/ takes from demos/ or tests/: includes of their
/// header trees (simpact_scenes/, support/) or of a path through demos/ or
/// tests/, and in CMake text a path into them or one of their targets
/// (simpact_scenes, simpact_bullet_scenes, simpact::scenes,
/// simpact::bullet_scenes, simpact_test_support).
std::vector<std::string> DemoDependencies(const std::string& text, bool cmake) {
  static const std::regex include_line(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  static const std::regex demo_header(R"((^|/)(simpact_scenes|support|demos|tests)/)");
  static const std::regex cmake_use(
      R"((\$\{[A-Z_]*SOURCE_DIR\}/\.\./|\.\./)(demos|tests)\b|\bsimpact(_bullet)?_scenes\b|\bsimpact::(bullet_)?scenes\b|\bsimpact_test_support\b)");
  std::vector<std::string> found;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (cmake) {
      const std::string code = line.substr(0, line.find('#'));  // comments may name them
      if (std::regex_search(code, match, cmake_use)) found.push_back(match[0]);
    } else if (std::regex_search(line, match, include_line) &&
               std::regex_search(std::string(match[1]), demo_header)) {
      found.push_back(match[1]);
    }
  }
  return found;
}

TEST(PluginNeverUsesDemos, ScannerRecognizesDemoDependencies) {
  EXPECT_EQ(DemoDependencies("#include <simpact_scenes/bullet_scenes.h>", false).size(), 1u);
  EXPECT_EQ(DemoDependencies("#include \"../../demos/scenes/x.h\"", false).size(), 1u);
  EXPECT_EQ(DemoDependencies("#include \"support/reference.h\"", false).size(), 1u);
  EXPECT_EQ(DemoDependencies("#include <simpact_worlds/bullet_world.h>\n#include <simpact/routh.h>\n"
                             "// simpact_scenes/bullet_scenes.h in a comment\n",
                             false)
                .size(),
            0u);
  EXPECT_EQ(DemoDependencies("target_link_libraries(x PUBLIC simpact_bullet_scenes)", true).size(), 1u);
  EXPECT_EQ(DemoDependencies("target_link_libraries(x PUBLIC simpact::scenes)", true).size(), 1u);
  EXPECT_EQ(DemoDependencies("add_subdirectory(../../demos/scenes x)", true).size(), 1u);
  EXPECT_EQ(DemoDependencies("target_link_libraries(x PUBLIC simpact::worlds) # not simpact_scenes", true)
                .size(),
            0u);
}

TEST(PluginNeverUsesDemos, NoFileUnderPluginIncludesOrLinksDemos) {
  const fs::path plugin = fs::path(SIMPACT_SOURCE_DIR) / "plugin";
  ASSERT_TRUE(fs::is_directory(plugin)) << plugin;
  int sources = 0, cmake_files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(plugin)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    const std::string ext = entry.path().extension().string();
    const bool cmake = name == "CMakeLists.txt" || ext == ".cmake";
    if (!cmake && ext != ".h" && ext != ".cpp" && ext != ".hpp" && ext != ".cc") continue;
    (cmake ? cmake_files : sources) += 1;
    std::ifstream in(entry.path());
    ASSERT_TRUE(in) << "cannot read " << entry.path();
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& use : DemoDependencies(text.str(), cmake))
      ADD_FAILURE() << entry.path() << " depends on demos/ or tests/: " << use;
  }
  EXPECT_GE(sources, 20);     // core, adapter, CLI and worlds sources were scanned
  EXPECT_GE(cmake_files, 3);  // plugin/, plugin/cli/, plugin/cli/worlds/
}

}  // namespace
