// The command line's promise for any input (issue #10): malformed or extreme
// input gives exit status 2 and one "error: ..." line naming the problem; it
// never crashes, never runs unbounded, and never prints null or NaN. Each
// case below is an input found by fuzzing `simpact` at commit ba6ab6f that
// broke the promise then (a crash, a null velocity with exit 0, a dense
// 20,000 x 20,000 matrix, an endless run).
#include "resolve_support.h"

#include <simpact_cli/cli.h>
#include <simpact_cli/json_input.h>
#include <simpact_cli/resolve.h>
#ifdef SIMPACT_CLI_HAS_SCENE
#include <simpact_cli/scene.h>
#endif

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace simpact::cli {
namespace {

using namespace testing;

std::string nested_arrays(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']');
}

// Before: the parser built the 100,000-deep value and the error message
// dumped it recursively: SIGSEGV (stack exhaustion).
TEST(CliRobustness, DeepNestingIsOneErrorLine) {
  expect_one_error_line(resolve_text(nested_arrays(100'000)),
                        "deeper than " + std::to_string(kMaxNestingDepth) + " levels");
}

TEST(CliRobustness, NestingLimitIsExact) {
  // kMaxNestingDepth levels parse (and are then rejected as not an object);
  // one more is rejected while parsing.
  expect_one_error_line(resolve_text(nested_arrays(kMaxNestingDepth)),
                        "the input must be a JSON object");
  expect_one_error_line(resolve_text(nested_arrays(kMaxNestingDepth + 1)), "kMaxNestingDepth");
  const std::string deep_object = "{\"velocity\":" + nested_arrays(kMaxNestingDepth) + "}";
  expect_one_error_line(resolve_text(deep_object), "kMaxNestingDepth");
}

// Before: exit 0, status "success", velocity [null]: -1e308 overflowed.
TEST(CliRobustness, HugeOffsetIsRejectedByName) {
  expect_one_error_line(
      resolve_text(R"({"masses":[1],"normals":[[1]],"velocity":[0],"offsets":[-1e308]})"),
      R"("offsets" entry 0 is too large)");
}

// Before: 1e154 squared overflows the energy: exit 0, "energy_before": null.
TEST(CliRobustness, NumbersBeyondTheBoundAreRejected) {
  expect_one_error_line(resolve_text(R"({"masses":[1],"normals":[[1]],"velocity":[1e154]})"),
                        R"("velocity" entry 0 is too large)");
  expect_one_error_line(resolve_text(R"({"mass":[[1e51]],"normals":[[1]],"velocity":[-1]})"),
                        R"("mass" row 0 entry 0 is too large)");
  // 1e400 parses as infinity.
  expect_one_error_line(resolve_text(R"({"masses":[1],"normals":[[1e400]],"velocity":[-1]})"),
                        "invalid JSON: number overflow");
  expect_one_error_line(resolve_text(R"({"masses":[1e-51],"normals":[[1]],"velocity":[-1]})"),
                        R"("masses" entry 0 is too small)");
}

TEST(CliRobustness, NumbersAtTheBoundGiveFiniteResults) {
  // The largest accepted magnitudes must not overflow anywhere: the output
  // is finite (require_finite_output would make this exit 2 otherwise).
  const Json output = resolve_ok(Json::parse(
      R"({"masses":[1e50, 1e-50],"normals":[[1e50, -1e50]],"velocity":[1e50, -1e50],
          "offsets":[-1e50]})"));
  EXPECT_EQ(output["outcomes"].size(), 1u);
  EXPECT_TRUE(std::isfinite(output["energy_before"].get<double>()));
}

// Before: "masses" became a dense n x n matrix: 80 GB at n = 100,000, an
// allocation failure reported as exit 70. A diagonal costs n.
TEST(CliRobustness, ManyMassesStayDiagonal) {
  constexpr int kDofs = 100'000;
  Json input;
  input["masses"] = std::vector<double>(kDofs, 1.0);
  std::vector<double> normal(kDofs, 0.0);
  normal.front() = 1.0;
  normal.back() = -1.0;
  input["normals"] = Json::array({normal});
  std::vector<double> velocity(kDofs, 0.0);
  velocity.front() = -1.0;
  velocity.back() = 1.0;
  input["velocity"] = velocity;
  const ImpactProblem problem = read_problem(input);
  EXPECT_EQ(problem.inverse_mass.nonZeros(), kDofs);
  // The first and last bodies approach each other at 2 m/s; the elastic
  // impact swaps their velocities exactly.
  const Json output = resolve_ok(input);
  const std::vector<double> after = numbers(output["outcomes"][0]["velocity"]);
  ASSERT_EQ(after.size(), static_cast<std::size_t>(kDofs));
  EXPECT_EQ(after.front(), 1.0);
  EXPECT_EQ(after.back(), -1.0);
}

TEST(CliRobustness, DenseMassIsBounded) {
  // 1001 x 1001 zeros: the size check comes before the matrix is read.
  Json input;
  input["velocity"] = std::vector<double>(1001, 0.0);
  input["normals"] = Json::array();
  input["inverse_mass"] = Json::array();
  expect_one_error_line(resolve_text(input.dump()), "kMaxDenseDofs");
}

// Before: samples 2^20 with the default 100 steps ran for minutes.
TEST(CliRobustness, RouthWorkIsBounded) {
  Json input = load_data("falling_block_routh.json");
  input["samples"] = 1 << 20;
  expect_one_error_line(resolve_text(input.dump()), "kMaxRouthLcps");
}

TEST(CliRobustness, ReflectionLimitsAreBounded) {
  Json input = load_data("newtons_cradle_3.json");
  input["max_reflections"] = std::numeric_limits<std::int64_t>::max();
  expect_one_error_line(resolve_text(input.dump()), R"("max_reflections" must be an integer in)");
}

TEST(CliRobustness, OversizedInputIsRejected) {
  const std::string input = "[" + std::string(kMaxInputBytes, ' ') + "]";
  expect_one_error_line(resolve_text(input), "kMaxInputBytes");
}

TEST(CliRobustness, NonFiniteOutputIsNamed) {
  Json output = Json::parse(R"({"outcomes":[{"velocity":[1.0, 2.0]}]})");
  EXPECT_NO_THROW(require_finite_output(output));
  output["outcomes"][0]["velocity"][1] = std::numeric_limits<double>::quiet_NaN();
  try {
    require_finite_output(output);
    ADD_FAILURE() << "a NaN was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(R"("/outcomes/0/velocity/1")"), std::string::npos)
        << e.what();
  }
  output["outcomes"][0]["velocity"][1] = -std::numeric_limits<double>::infinity();
  EXPECT_THROW(require_finite_output(output), InputError);
}

#ifdef SIMPACT_CLI_HAS_SCENE
CommandRun scene_text(const std::string& input) { return capture(input, run_scene); }

// Before: ran forever.
TEST(CliRobustness, SceneStepsAreBounded) {
  Json scene = load_data("newtons_cradle.scene.json");
  scene["steps"] = std::numeric_limits<std::int64_t>::max();
  expect_one_error_line(scene_text(scene.dump()), "kMaxSceneWork");
  // The limit counts bodies: 3 bodies may run kMaxSceneWork / 3 steps.
  scene["steps"] = kMaxSceneWork / 3 + 1;
  expect_one_error_line(scene_text(scene.dump()), "kMaxSceneWork");
}

TEST(CliRobustness, SceneBodiesAreBounded) {
  Json scene = load_data("newtons_cradle.scene.json");
  Json& bodies = scene["bodies"];
  while (bodies.size() <= static_cast<std::size_t>(kMaxSceneBodies)) bodies.push_back(bodies[0]);
  scene["steps"] = 0;
  expect_one_error_line(scene_text(scene.dump()), "kMaxSceneBodies");
}

// Before: max_steps and max_reflections were unbounded, so one impact could
// run for hours.
TEST(CliRobustness, ScenePerImpactWorkIsBounded) {
  Json scene = load_data("newtons_cradle.scene.json");
  scene["simpact"] = {{"law", "routh"}, {"routh", {{"max_steps", 10'001}}}};
  expect_one_error_line(scene_text(scene.dump()), R"("max_steps" must be an integer in [1, 10000])");
  scene["simpact"] = {{"max_reflections", std::numeric_limits<std::int64_t>::max()}};
  expect_one_error_line(scene_text(scene.dump()), R"("max_reflections" must be an integer in)");
}

// Before: dt = 1e300 overflowed Bullet's state: exit 0 with null positions.
TEST(CliRobustness, SceneMagnitudesAreBounded) {
  Json scene = load_data("newtons_cradle.scene.json");
  scene["dt"] = 1e300;
  expect_one_error_line(scene_text(scene.dump()), R"("dt" is too large for a scene)");
  scene = load_data("newtons_cradle.scene.json");
  scene["bodies"][1]["velocity"] = Json::array({0.0, 2e6, 0.0});
  expect_one_error_line(scene_text(scene.dump()), R"("velocity" is too large for a scene)");
  // Integer keys keep their own ranges: a large seed is not a magnitude.
  scene = load_data("newtons_cradle.scene.json");
  scene["simpact"] = {{"seed", std::numeric_limits<std::uint64_t>::max()}};
  scene["steps"] = 1;
  const CommandRun run = scene_text(scene.dump());
  EXPECT_EQ(run.exit_code, kExitSuccess) << run.err;
}
#endif

}  // namespace
}  // namespace simpact::cli
