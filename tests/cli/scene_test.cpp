// Tests of `simpact scene`: Bullet worlds from JSON, run in-process through
// the CLI library.
#include "capture.h"

#include <simpact_cli/cli.h>
#include <simpact_cli/scene.h>

#include <LinearMath/btScalar.h>
#include <gtest/gtest.h>

#include <fstream>
#include <cstdint>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace simpact::cli {
namespace {

// simpact resolves the touching cradle exactly; what Bullet adds on top is
// rounding of a few dozen btScalar operations per step: far below 1e-9 in
// double, below 2e-6 in float (ulp 1.2e-7 at 1).
constexpr double kExact = sizeof(btScalar) == sizeof(double) ? 1e-9 : 2e-6;
// Stock SI runs 10 iterations; on the touching cradle they converge to
// ~1e-6 of the LCP solution (the demo measures E+/E- = 0.999997).
constexpr double kStockIterations = 1e-4;

using SceneRun = testing::CommandRun;

SceneRun run_scene_text(const std::string& input) { return testing::capture(input, run_scene); }

Json load_scene(const std::string& name) {
  const std::string path = std::string(SIMPACT_SOURCE_DIR) + "/demos/data/" + name;
  std::ifstream file(path);
  EXPECT_TRUE(file) << "cannot open " << path;
  return Json::parse(file);
}

Json scene_ok(const Json& input) {
  const SceneRun result = run_scene_text(input.dump());
  EXPECT_EQ(result.exit_code, kExitSuccess) << result.err;
  EXPECT_EQ(result.err, "");
  return Json::parse(result.out);
}

std::vector<double> x_velocities(const Json& output) {
  std::vector<double> v;
  for (const Json& body : output["bodies"]) v.push_back(body["velocity"][0].get<double>());
  return v;
}

void expect_last_ball_leaves(const Json& output) {
  const std::vector<double> v = x_velocities(output);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NEAR(v[0], 0.0, kExact);
  EXPECT_NEAR(v[1], 0.0, kExact);
  EXPECT_NEAR(v[2], 1.0, kExact);
  EXPECT_NEAR(output["energy_final"].get<double>(), output["energy_initial"].get<double>(),
              kExact);
  EXPECT_EQ(output["impacts"], 1);
}

TEST(CliScene, CradleFileSendsTheLastBallAtTheStrikersSpeed) {
  const Json output = scene_ok(load_scene("newtons_cradle.scene.json"));
  expect_last_ball_leaves(output);
  EXPECT_NEAR(output["energy_initial"].get<double>(), 0.5, kExact);
  for (const Json& body : output["bodies"]) {
    EXPECT_EQ(body.size(), 3u);  // position, velocity, angular_velocity
    EXPECT_EQ(body["position"].size(), 3u);
  }
}

TEST(CliScene, CradleOnStringsSendsTheLastBallAtTheStrikersSpeed) {
  expect_last_ball_leaves(scene_ok(load_scene("newtons_cradle_strings.scene.json")));
}

TEST(CliScene, StockSolverGivesTheImplicitOutcome) {
  // Bullet's stock answer for the touching cradle (README): (−1/3, 2/3, 2/3).
  Json input = load_scene("newtons_cradle.scene.json");
  input["solver"] = "stock_si";
  const Json output = scene_ok(input);
  const std::vector<double> v = x_velocities(output);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NEAR(v[0], -1.0 / 3.0, kStockIterations);
  EXPECT_NEAR(v[1], 2.0 / 3.0, kStockIterations);
  EXPECT_NEAR(v[2], 2.0 / 3.0, kStockIterations);
  EXPECT_EQ(output["impacts"], 0);
}

TEST(CliScene, EverySolverRuns) {
  for (const char* solver :
       {"stock_si", "stock_nncg", "stock_mlcp_dantzig", "stock_mlcp_lemke", "simpact"}) {
    SCOPED_TRACE(solver);
    Json input = load_scene("newtons_cradle.scene.json");
    input["solver"] = solver;
    const Json output = scene_ok(input);
    EXPECT_EQ(output["bodies"].size(), 3u);
  }
}

TEST(CliScene, SimpactOverEveryStockBaseSendsTheLastBall) {
  for (const char* base : {"stock_si", "stock_nncg", "stock_mlcp_dantzig", "stock_mlcp_lemke"}) {
    SCOPED_TRACE(base);
    Json input = load_scene("newtons_cradle.scene.json");
    input["simpact"] = {{"base", base}, {"policy", "index"}, {"touch_tolerance", 1e-3}};
    expect_last_ball_leaves(scene_ok(input));
  }
}

TEST(CliScene, KinematicPaddleMovesAtItsVelocity) {
  // A kinematic body is infinitely massive: an elastic strike sends a ball
  // at rest off at twice the paddle's speed, and the paddle keeps its own.
  const Json input = Json::parse(R"({
    "gravity": [0, 0, 0], "dt": 0.01, "steps": 10,
    "bodies": [
      {"shape": "box", "half_extents": [0.05, 0.5, 0.5], "kinematic": true,
       "position": [-0.1, 0, 0], "velocity": [1, 0, 0], "restitution": 1},
      {"shape": "sphere", "radius": 0.05, "restitution": 1, "never_sleep": true,
       "linear_factor": [1, 0, 0], "angular_factor": [0, 0, 0]}
    ]
  })");
  const Json output = scene_ok(input);
  EXPECT_NEAR(output["bodies"][0]["velocity"][0].get<double>(), 1.0, kExact);
  EXPECT_NEAR(output["bodies"][0]["position"][0].get<double>(), -0.1 + 10 * 0.01, kExact);
  EXPECT_NEAR(output["bodies"][1]["velocity"][0].get<double>(), 2.0, kExact);
  EXPECT_EQ(output["impacts"], 1);
}

TEST(CliScene, OutputIsDeterministic) {
  const std::string input = load_scene("newtons_cradle_strings.scene.json").dump();
  EXPECT_EQ(run_scene_text(input).out, run_scene_text(input).out);
}

TEST(CliScene, ReadsStandardInputThroughTheCommandLine) {
  std::istringstream in(load_scene("newtons_cradle.scene.json").dump());
  std::ostringstream out;
  std::ostringstream err;
  const char* argv[] = {"simpact", "scene", "-"};
  EXPECT_EQ(run(3, argv, in, out, err), kExitSuccess) << err.str();
  expect_last_ball_leaves(Json::parse(out.str()));
}

TEST(CliScene, HelpDescribesTheCommand) {
  std::istringstream in;
  std::ostringstream out;
  std::ostringstream err;
  const char* argv[] = {"simpact", "--help"};
  EXPECT_EQ(run(2, argv, in, out, err), kExitSuccess);
  EXPECT_NE(out.str().find("  scene "), std::string::npos);
  EXPECT_NE(out.str().find("scene input:"), std::string::npos);
}

// A sphere striking the ground obliquely, touching it at the start, no
// gravity: one step resolves the impact. With restitution 0 and law routh
// the Routh sample is exact for a sphere (its normal through the centre
// decouples normal and tangential impulses, tests/bullet/routh_scenario_test):
// friction μ = 1 stops the slip, so the ball leaves rolling, v_x = ω_z·(−r)
// with r = 0.1.
Json oblique_sphere(const char* law, double restitution) {
  Json input = Json::parse(R"({
    "gravity": [0, 0, 0], "dt": 0.004166666666666667, "steps": 1,
    "restitution_combiner": "minimum",
    "bodies": [
      {"shape": "plane", "normal": [0, 1, 0], "offset": 0, "restitution": 1, "friction": 1},
      {"shape": "sphere", "radius": 0.1, "mass": 2, "position": [0, 0.1, 0],
       "velocity": [1, -2, 0], "friction": 1, "never_sleep": true}
    ]
  })");
  input["bodies"][1]["restitution"] = restitution;
  input["simpact"] = {{"law", law}};
  return input;
}

TEST(CliScene, RouthLawMakesAnObliqueBallRoll) {
  const Json output = scene_ok(oblique_sphere("routh", 0.0));
  const Json& ball = output["bodies"][1];
  // Sticking: the slip 1 m/s is stopped by (2/7) m |s|: v_x = 1 − 2/7.
  EXPECT_NEAR(ball["velocity"][0].get<double>(), 5.0 / 7.0, kExact);
  EXPECT_NEAR(ball["velocity"][1].get<double>(), 0.0, kExact);
  EXPECT_NEAR(ball["angular_velocity"][2].get<double>(), -5.0 / 7.0 / 0.1, kExact / 0.1);
  EXPECT_EQ(output["impacts"], 1);
  EXPECT_EQ(output["routh_impacts"], 1);
  // The default (propagative) law is frictionless and leaves this plastic
  // impact to Bullet's own solver: not a Routh impact.
  Json propagative = oblique_sphere("propagative", 0.0);
  EXPECT_EQ(scene_ok(propagative)["routh_impacts"], 0);
}

TEST(CliScene, AutoLawBlendsForBouncingFrictionalContacts) {
  // R = 0.5: auto gives half the Routh friction (spin −5/7 · ½ / 0.1) and
  // Newton's rebound; the frictionless propagative law leaves the spin at 0.
  const Json automatic = scene_ok(oblique_sphere("auto", 0.5));
  EXPECT_NEAR(automatic["bodies"][1]["angular_velocity"][2].get<double>(), -0.5 * 5.0 / 7.0 / 0.1,
              kExact / 0.1);
  EXPECT_NEAR(automatic["bodies"][1]["velocity"][1].get<double>(), 1.0, kExact);
  EXPECT_EQ(automatic["routh_impacts"], 1);
  const Json propagative = scene_ok(oblique_sphere("propagative", 0.5));
  EXPECT_NEAR(propagative["bodies"][1]["angular_velocity"][2].get<double>(), 0.0, kExact);
  EXPECT_NEAR(propagative["bodies"][1]["velocity"][1].get<double>(), 1.0, kExact);
  EXPECT_EQ(propagative["routh_impacts"], 0);
}

// The rocking block of tests/bullet/routh_scenario_test (1 × 2 × 0.5 box
// dropped 1 cm flat onto a static slab, μ = 1): its outcome is sampled, so
// the seed decides it; the same seed gives the same output.
std::string box_drop_output(std::uint64_t seed, const Json& routh = Json()) {
  Json input = Json::parse(R"({
    "dt": 0.004166666666666667, "steps": 20,
    "bodies": [
      {"shape": "box", "half_extents": [10, 0.5, 10], "mass": 0, "position": [0, -0.5, 0],
       "friction": 1},
      {"shape": "box", "half_extents": [0.5, 1, 0.25], "position": [0, 1.01, 0], "friction": 1}
    ],
    "simpact": {"law": "routh"}
  })");
  input["simpact"]["seed"] = seed;
  if (!routh.is_null()) input["simpact"]["routh"] = routh;
  const SceneRun result = run_scene_text(input.dump());
  EXPECT_EQ(result.exit_code, kExitSuccess) << result.err;
  return result.out;
}

TEST(CliScene, RouthOutcomeIsReproducibleFromTheSeed) {
  EXPECT_EQ(box_drop_output(3), box_drop_output(3));
  std::set<std::string> outputs;
  for (std::uint64_t seed = 0; seed < 16; ++seed) outputs.insert(box_drop_output(seed));
  EXPECT_GE(outputs.size(), 2u) << "every seed gave the same outcome";
  // The landing, and the corners landing again as the box rocks.
  const Json output = Json::parse(box_drop_output(3));
  EXPECT_GE(output["routh_impacts"].get<int>(), 1);
  // Routh settings are read: with max_contacts 3 the four-corner landing is
  // left to the base solver.
  EXPECT_EQ(Json::parse(box_drop_output(3, {{"max_contacts", 3}}))["routh_impacts"], 0);
  EXPECT_GE(Json::parse(box_drop_output(3, {{"cone_directions", 8}, {"sampler", "low_discrepancy"},
                                            {"max_steps", 50}, {"step", 0.3}}))["routh_impacts"]
                .get<int>(),
            1);
}

struct Malformed {
  const char* what;
  std::function<void(Json&)> edit;
  const char* message;  ///< must appear in the error line
};

TEST(CliScene, MalformedScenesExit2NamingTheKey) {
  const std::vector<Malformed> cases = {
      {"missing dt", [](Json& s) { s.erase("dt"); }, R"(missing required key "dt")"},
      {"zero dt", [](Json& s) { s["dt"] = 0; }, R"("dt" must be > 0)"},
      {"negative steps", [](Json& s) { s["steps"] = -1; }, R"("steps" must be an integer >= 0)"},
      {"misspelt key", [](Json& s) { s["gravty"] = {0, 0, 0}; }, R"(unknown key "gravty")"},
      {"short gravity", [](Json& s) { s["gravity"] = {0, 0}; },
       R"("gravity" has 2 entries, expected 3)"},
      {"unknown solver", [](Json& s) { s["solver"] = "pgs"; }, R"("solver" must be one of)"},
      {"simpact keys for a stock solver",
       [](Json& s) {
         s["solver"] = "stock_si";
         s["simpact"] = {{"policy", "index"}};
       },
       R"("simpact" configures solver "simpact" only)"},
      {"policy all", [](Json& s) { s["simpact"] = {{"policy", "all"}}; },
       R"("policy" must be one of)"},
      {"simpact base", [](Json& s) { s["simpact"] = {{"base", "simpact"}}; },
       R"("base" must be one of)"},
      {"unknown simpact key", [](Json& s) { s["simpact"] = {{"threshold", 1}}; },
       R"(unknown key "threshold")"},
      {"unknown law", [](Json& s) { s["simpact"] = {{"law", "routhh"}}; },
       R"("law" must be one of)"},
      {"routh settings for the propagative law",
       [](Json& s) { s["simpact"] = {{"routh", {{"max_steps", 5}}}}; },
       R"("routh" configures law "routh" or "auto" only)"},
      {"routh not an object", [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", 3}}; },
       R"("routh")"},
      {"unknown routh key",
       [](Json& s) { s["simpact"] = {{"law", "auto"}, {"routh", {{"directions", 4}}}}; },
       R"(unknown key "directions")"},
      {"two cone directions",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"cone_directions", 2}}}}; },
       R"("cone_directions" must be an integer >= 3)"},
      {"too many cone directions",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"cone_directions", 65}}}}; },
       R"("cone_directions" must be an integer in [3, 64])"},
      {"zero max_steps",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"max_steps", 0}}}}; },
       R"("max_steps" must be an integer >= 1)"},
      {"negative routh step",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"step", -1}}}}; },
       R"("step" must be >= 0)"},
      {"unknown sampler",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"sampler", "sobol"}}}}; },
       R"("sampler" must be one of)"},
      {"zero max_contacts",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"max_contacts", 0}}}}; },
       R"("max_contacts" must be an integer >= 1)"},
      {"no bodies", [](Json& s) { s["bodies"] = Json::array(); },
       R"("bodies" must have at least one body)"},
      {"unknown shape", [](Json& s) { s["bodies"][0]["shape"] = "cylinder"; },
       R"("bodies" entry 0: "shape" must be one of)"},
      {"negative radius", [](Json& s) { s["bodies"][1]["radius"] = -1; },
       R"("bodies" entry 1: "radius" must be > 0)"},
      {"key of another shape", [](Json& s) { s["bodies"][0]["half_extents"] = {1, 1, 1}; },
       R"("bodies" entry 0: unknown key "half_extents")"},
      {"short velocity", [](Json& s) { s["bodies"][2]["velocity"] = {1, 0}; },
       R"("bodies" entry 2: "velocity" has 2 entries, expected 3)"},
      {"negative mass", [](Json& s) { s["bodies"][1]["mass"] = -1; },
       R"("bodies" entry 1: "mass" must be >= 0)"},
      {"kinematic with mass", [](Json& s) { s["bodies"][1]["kinematic"] = true; },
       R"("bodies" entry 1: "mass" must be 0 for a kinematic body)"},
      {"kinematic not a boolean", [](Json& s) { s["bodies"][1]["kinematic"] = 1; },
       R"("bodies" entry 1: "kinematic" must be true or false)"},
      {"restitution above 1", [](Json& s) { s["bodies"][0]["restitution"] = 2; },
       R"("bodies" entry 0: "restitution" must be in [0, 1])"},
      {"zero orientation", [](Json& s) { s["bodies"][0]["orientation"] = {0, 0, 0, 0}; },
       R"("bodies" entry 0: "orientation" must not be zero)"},
      {"plane with mass",
       [](Json& s) {
         s["bodies"].push_back(
             {{"shape", "plane"}, {"normal", {0, 1, 0}}, {"offset", 0}, {"mass", 1}});
       },
       R"("bodies" entry 3: "mass" must be 0 for a plane)"},
      {"plane without offset",
       [](Json& s) { s["bodies"].push_back({{"shape", "plane"}, {"normal", {0, 1, 0}}}); },
       R"("bodies" entry 3: missing required key "offset")"},
      {"joint to a missing body",
       [](Json& s) {
         s["joints"] = {{{"type", "point2point"}, {"body", 7}, {"pivot_world", {0, 1, 0}}}};
       },
       R"("joints" entry 0: "body" must index "bodies")"},
      {"unknown joint type",
       [](Json& s) {
         s["joints"] = {{{"type", "hinge"}, {"body", 0}, {"pivot_world", {0, 1, 0}}}};
       },
       R"("joints" entry 0: "type" must be one of: point2point)"},
  };
  for (const Malformed& c : cases) {
    SCOPED_TRACE(c.what);
    Json input = load_scene("newtons_cradle.scene.json");
    c.edit(input);
    const SceneRun result = run_scene_text(input.dump());
    EXPECT_EQ(result.exit_code, kExitInputError);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err.rfind("error: ", 0), 0u) << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << "one line: " << result.err;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << result.err;
  }
}

TEST(CliScene, SyntaxErrorsExit2) {
  const SceneRun result = run_scene_text("{\"dt\": ");
  EXPECT_EQ(result.exit_code, kExitInputError);
  EXPECT_EQ(result.err.rfind("error: invalid JSON", 0), 0u) << result.err;
}

}  // namespace
}  // namespace simpact::cli
