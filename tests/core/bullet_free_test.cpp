// The core depends on Eigen only: no Bullet header may be included from the
// public headers (plugin/include/simpact/) or the core sources
// (plugin/src/core/). The scanner is tested on samples first, so the check
// cannot pass by recognizing nothing.
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

}  // namespace
