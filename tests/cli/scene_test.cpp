// Tests of `simpact scene`: Bullet worlds from JSON, run in-process through
// the CLI library.
#include "capture.h"

#include <simpact_cli/cli.h>
#include <simpact_cli/scene.h>
#include <simpact_worlds/multibody_world.h>

#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <LinearMath/btScalar.h>
#include <gtest/gtest.h>

#include <cmath>
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
    EXPECT_EQ(body.size(), 4u);  // position, orientation, velocity, angular_velocity
    EXPECT_EQ(body["orientation"].size(), 4u);
    EXPECT_EQ(body["position"].size(), 3u);
  }
}

// A box spinning at ω about z with no contact and no gravity: Bullet's
// exponential-map integration keeps a constant spin exact, so after n steps
// of dt the orientation is the rotation by θ = ω n dt about z:
// (0, 0, sin θ/2, cos θ/2).
TEST(CliScene, OutputsEachBodysOrientation) {
  const double omega = 2.0, dt = 0.01;
  const int n = 37;
  Json input = {{"dt", dt}, {"steps", n}, {"gravity", {0, 0, 0}}, {"solver", "stock_si"},
                {"bodies", {{{"shape", "box"}, {"half_extents", {0.1, 0.2, 0.3}}, {"angular_velocity", {0, 0, omega}},
                             {"never_sleep", true}}}}};
  const Json output = scene_ok(input);
  const double half = 0.5 * omega * n * dt;
  const Json& q = output["bodies"][0]["orientation"];
  EXPECT_NEAR(q[0].get<double>(), 0.0, kExact);
  EXPECT_NEAR(q[1].get<double>(), 0.0, kExact);
  EXPECT_NEAR(q[2].get<double>(), std::sin(half), 1e3 * kExact);
  EXPECT_NEAR(q[3].get<double>(), std::cos(half), 1e3 * kExact);
}

// "record": the state at step 0 and every record-th step; a step's entry
// is the state the run would end with at that step (the last equals the
// output's bodies), and the first is the input's state.
TEST(CliScene, RecordGivesTheTrajectory) {
  Json input = load_scene("newtons_cradle.scene.json");
  input["steps"] = 24;
  input["record"] = 8;
  const Json output = scene_ok(input);
  const Json& trajectory = output["trajectory"];
  ASSERT_EQ(trajectory.size(), 4u);  // steps 0, 8, 16, 24
  const double dt = input["dt"].get<double>();
  for (std::size_t k = 0; k < trajectory.size(); ++k) {
    EXPECT_EQ(trajectory[k]["step"], 8 * k);
    EXPECT_DOUBLE_EQ(trajectory[k]["time"].get<double>(), double(8 * k) * dt);
    EXPECT_EQ(trajectory[k]["bodies"].size(), 3u);
  }
  for (std::size_t b = 0; b < 3; ++b) {
    // The input's position, as btScalar holds it (single precision rounds
    // 0.1 to 0.10000000149).
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_NEAR(trajectory[0]["bodies"][b]["position"][i].get<double>(),
                  input["bodies"][b]["position"][i].get<double>(), kExact);
    EXPECT_EQ(trajectory[3]["bodies"][b], output["bodies"][b]);
  }
  // The same scene run for 8 steps ends where the trajectory's step 8 is.
  input["steps"] = 8;
  input.erase("record");
  const Json eight = scene_ok(input);
  EXPECT_EQ(eight["bodies"], trajectory[1]["bodies"]);
  EXPECT_FALSE(eight.contains("trajectory"));

  // A scene with multibodies records them too (their joints, without
  // their energies).
  Json multibody = load_scene("multibody_cradle.json");
  const std::int64_t steps = multibody["steps"].get<std::int64_t>();
  multibody["record"] = steps;
  const Json run = scene_ok(multibody);
  ASSERT_EQ(run["trajectory"].size(), 2u);
  const Json& last = run["trajectory"][1]["multibodies"];
  ASSERT_EQ(last.size(), run["multibodies"].size());
  for (std::size_t k = 0; k < last.size(); ++k) {
    EXPECT_EQ(last[k]["joint_positions"], run["multibodies"][k]["joint_positions"]);
    EXPECT_FALSE(last[k].contains("energy_final"));
  }
}

// "inertia": the body's own principal moments. A sphere spinning at ω = (1,
// 1, 1) with moments (1, 2, 3) has ½ Σ I_i ω_i² = 3 J; Bullet's solid
// sphere (0.4 m r² = 0.004) would have 0.006 J.
TEST(CliScene, InertiaIsTheBodysOwn) {
  Json input = {{"dt", 0.01}, {"steps", 1}, {"gravity", {0, 0, 0}}, {"solver", "stock_si"},
                {"bodies", {{{"shape", "sphere"}, {"radius", 0.1}, {"angular_velocity", {1, 1, 1}}}}}};
  EXPECT_NEAR(scene_ok(input)["energy_initial"].get<double>(), 0.5 * 3 * 0.004, kExact);
  input["bodies"][0]["inertia"] = {1, 2, 3};
  EXPECT_NEAR(scene_ok(input)["energy_initial"].get<double>(), 3.0, kExact);
}

// "substeps": one step of dt made of k Bullet steps of dt/k is k steps of
// dt/k, bit for bit.
TEST(CliScene, SubstepsSplitEachStep) {
  Json input = load_scene("newtons_cradle.scene.json");
  const double dt = input["dt"].get<double>();
  input["steps"] = 3;
  input["substeps"] = 4;
  const Json split = scene_ok(input);
  input["steps"] = 12;
  input["substeps"] = 1;
  input["dt"] = dt / 4;
  const Json fine = scene_ok(input);
  EXPECT_EQ(split["bodies"], fine["bodies"]);
  EXPECT_EQ(split["impacts"], fine["impacts"]);
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
  EXPECT_NE(out.str().find("  multibodies "), std::string::npos);
  EXPECT_NE(out.str().find("joint_velocity"), std::string::npos);
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

TEST(CliScene, AutoLawUsesStrongesRestitutionForBouncingFrictionalContacts) {
  // R = 0.5: auto is Routh with Stronge's restitution: the ball's slip stops
  // in compression, so it leaves rolling as under Routh (spin −5/7 / 0.1),
  // with Newton's rebound (a sphere's contact is collinear). The
  // propagative law with its impact friction (ImpactSettings::
  // propagative_friction) gets there too: its normal impulse (1 + R) · 2 ·
  // 2 = 6 N·s bounds the friction impulse at 6, and stopping the 1 m/s slip
  // takes only (2/7) m · 1 = 4/7, so the ball sticks and rolls.
  const Json automatic = scene_ok(oblique_sphere("auto", 0.5));
  EXPECT_NEAR(automatic["bodies"][1]["angular_velocity"][2].get<double>(), -5.0 / 7.0 / 0.1, kExact / 0.1);
  EXPECT_EQ(scene_ok(oblique_sphere("routh_restitution", 0.5))["bodies"][1], automatic["bodies"][1]);
  EXPECT_NEAR(automatic["bodies"][1]["velocity"][1].get<double>(), 1.0, kExact);
  EXPECT_EQ(automatic["routh_impacts"], 1);
  const Json propagative = scene_ok(oblique_sphere("propagative", 0.5));
  EXPECT_NEAR(propagative["bodies"][1]["angular_velocity"][2].get<double>(), -5.0 / 7.0 / 0.1, kExact / 0.1);
  EXPECT_NEAR(propagative["bodies"][1]["velocity"][0].get<double>(), 5.0 / 7.0, kExact);
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
  // Box pivoting resolves the same four-corner landing (routh.h, "LCP solvers").
  EXPECT_GE(Json::parse(box_drop_output(3, {{"increment_solver", "box_pivoting"}}))["routh_impacts"].get<int>(), 1);
  // The automatic step's rule is read (its effect: routh_cluster_test.cpp).
  EXPECT_GE(Json::parse(box_drop_output(3, {{"automatic_step", "simultaneous"}}))["routh_impacts"].get<int>(), 1);
}

// simpact.sustained_threshold is read: a column of eight 1 × 0.5 × 1 m boxes
// dropped 1 cm onto a slab, law routh, 1 s at 240 Hz. Once landed it rests
// (the impacts are the landing and its settling); with the distinction off
// (0) Bullet's unconverged loaded corners strike every other step
// (tests/bullet/routh_scenario_test.cpp, SustainedContact).
int resting_column_impacts(const Json& sustained_threshold) {
  Json input = Json::parse(R"({
    "dt": 0.004166666666666667, "steps": 240,
    "bodies": [{"shape": "box", "half_extents": [10, 0.5, 10], "mass": 0, "position": [0, -0.5, 0], "friction": 1}],
    "simpact": {"law": "routh", "routh": {"max_contacts": 32}}
  })");
  for (int i = 0; i < 8; ++i)
    input["bodies"].push_back({{"shape", "box"},
                               {"half_extents", {0.5, 0.25, 0.5}},
                               {"position", {0.0, 0.26 + 0.5 * i, 0.0}},
                               {"friction", 1}});
  if (!sustained_threshold.is_null()) input["simpact"]["sustained_threshold"] = sustained_threshold;
  return scene_ok(input)["routh_impacts"].get<int>();
}

TEST(CliScene, SustainedThresholdIsRead) {
  const int automatic = resting_column_impacts(Json()), off = resting_column_impacts(0.0);
  EXPECT_GE(automatic, 1);
  EXPECT_LE(automatic, 10);
  EXPECT_GT(off, 50) << "automatic " << automatic;
}

struct Malformed {
  const char* what;
  std::function<void(Json&)> edit;
  const char* message;  ///< must appear in the error line
};

/// Each case edits the bundled `scene` and must exit 2 with one error line
/// containing its message, and print nothing on standard output.
void expect_malformed(const char* scene, const std::vector<Malformed>& cases) {
  for (const Malformed& c : cases) {
    SCOPED_TRACE(c.what);
    Json input = load_scene(scene);
    c.edit(input);
    const SceneRun result = run_scene_text(input.dump());
    EXPECT_EQ(result.exit_code, kExitInputError);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err.rfind("error: ", 0), 0u) << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << "one line: " << result.err;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << result.err;
  }
}

TEST(CliScene, MalformedScenesExit2NamingTheKey) {
  const std::vector<Malformed> cases = {
      {"missing dt", [](Json& s) { s.erase("dt"); }, R"(missing required key "dt")"},
      {"zero dt", [](Json& s) { s["dt"] = 0; }, R"("dt" must be > 0)"},
      {"negative steps", [](Json& s) { s["steps"] = -1; }, R"("steps" must be an integer >= 0)"},
      {"zero substeps", [](Json& s) { s["substeps"] = 0; }, R"("substeps" must be an integer >= 1)"},
      {"too many substeps", [](Json& s) { s["substeps"] = 1001; }, R"("substeps" must be at most 1000)"},
      {"more Bullet steps than the work limit",
       [](Json& s) {
         s["steps"] = 10000;
         s["substeps"] = 1000;
       },
       R"("steps" x "substeps" = 10000 x 1000 is more than 1000000)"},
      {"zero record", [](Json& s) { s["record"] = 0; }, R"("record" must be an integer >= 1)"},
      {"inertia of a static body",
       [](Json& s) {
         s["bodies"][1]["mass"] = 0;
         s["bodies"][1]["inertia"] = {1, 1, 1};
       },
       R"("bodies" entry 1: "inertia" is for a dynamic body (mass > 0))"},
      {"velocity of a static body",
       [](Json& s) {
         s["bodies"][1]["mass"] = 0;
         s["bodies"][1]["velocity"] = {0, 1, 0};
       },
       R"("bodies" entry 1: "velocity" is for a dynamic or kinematic body (a static one does not move))"},
      {"a zero moment of inertia", [](Json& s) { s["bodies"][0]["inertia"] = {1, 0, 1}; },
       R"("bodies" entry 0: "inertia" must be three principal moments > 0)"},
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
       R"("routh" configures laws "routh", "routh_restitution" or "auto" only)"},
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
      {"unknown increment solver",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"increment_solver", "pgs"}}}}; },
       R"("increment_solver" must be one of: automatic, lemke, box_pivoting)"},
      {"unknown automatic step",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"automatic_step", "cluster"}}}}; },
       R"("automatic_step" must be one of: automatic, single_contact, simultaneous)"},
      {"negative sustained threshold",
       [](Json& s) { s["simpact"] = {{"sustained_threshold", -0.1}}; },
       R"("sustained_threshold" must be >= 0)"},
      {"zero max_contacts",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"max_contacts", 0}}}}; },
       R"("max_contacts" must be an integer >= 1)"},
      {"variational budget for another law",
       [](Json& s) { s["simpact"] = {{"law", "pasquero"}, {"variational_budget", 100}}; },
       R"("variational_budget" configures law "variational" only (law is "pasquero"))"},
      {"zero variational budget",
       [](Json& s) { s["simpact"] = {{"law", "variational"}, {"variational_budget", 0}}; },
       R"("variational_budget" must be an integer >= 1)"},
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
  expect_malformed("newtons_cradle.scene.json", cases);
}

// ── Scenes with "multibodies" (MultiBodyWorld) ─────────────────────────────

// Through one impact step on Featherstone pendulums, as
// tests/bullet/multibody_test.cpp: double: the law is exact to a few
// reflections' rounding (~1e-15 relative) and Bullet's Jacobian and ABA add
// ~1e-15, so 1e-12 leaves three orders of margin; float: Bullet's btScalar
// state is ~1e-7 relative, amplified by a cluster's dozen operations, and
// 1e-4 is three orders above that. The JSON round trip is exact (nlohmann
// prints doubles with 17 digits).
constexpr double kJointExact = sizeof(btScalar) == sizeof(double) ? 1e-12 : 1e-4;
// demos/data/multibody_cradle.json: pendulums of L = 1 m, r = 5 cm, 1 kg.
constexpr double kLength = 1.0;
constexpr double kRadius = 0.05;
constexpr double kStep = 0.004166666666666667;
constexpr double kGravity = 9.81;
// The file's pivots are 2r − 1e-7 m apart: sphere–sphere contacts exist only
// at distance ≤ 0, so "touching" bobs overlap by a few float ulps.
constexpr double kOverlap = 1e-7;
// A pendulum's moment of inertia about its pivot [kg m²] (bob mass 1): the
// point mass at L plus the solid sphere's (2/5) m r².
constexpr double kPivotInertia = kLength * kLength + 0.4 * kRadius * kRadius;

std::vector<double> joint_rates(const Json& output) {
  std::vector<double> rates;
  for (const Json& mb : output["multibodies"]) {
    for (const Json& rate : mb["joint_velocities"]) rates.push_back(rate.get<double>());
  }
  return rates;
}

double number(const Json& value) { return value.get<double>(); }

TEST(CliScene, MultibodyCradleFileSendsTheLastPendulumAtTheStrikersRate) {
  const Json output = scene_ok(load_scene("multibody_cradle.json"));
  ASSERT_EQ(output["multibodies"].size(), 3u);
  EXPECT_EQ(output["bodies"].size(), 0u);
  const std::vector<double> rates = joint_rates(output);
  ASSERT_EQ(rates.size(), 3u);
  EXPECT_NEAR(rates[0], 0.0, kJointExact);
  EXPECT_NEAR(rates[1], 0.0, kJointExact);
  EXPECT_NEAR(rates[2], 1.0, kJointExact);
  EXPECT_EQ(output["impacts"], 1);
  EXPECT_EQ(output["routh_impacts"], 0);
  // Before: the striker's ½ I ω² (solid-sphere inertia read), bobs at y = 0.
  EXPECT_NEAR(number(output["energy_initial"]), 0.5 * kPivotInertia, kJointExact);
  EXPECT_NEAR(number(output["multibodies"][0]["energy_initial"]), 0.5 * kPivotInertia,
              kJointExact);
  // After: the kinetic energy is kept exactly and has moved to the last
  // pendulum; the step's rotation q = h q̇ raised that bob by L (1 − cos q).
  // The file's kOverlap between the two bobs left at rest is closed by the
  // impact and separated at position level with no velocity change
  // (multibody_impact_solver.h): equal pendulums share it, each turning by
  // kOverlap / (2 L) away from the other.
  const double separation = kOverlap / (2.0 * kLength);
  const double expected_q[3] = {-separation, separation, kStep};
  double total = 0.0;
  for (std::size_t k = 0; k < 3; ++k) {
    SCOPED_TRACE("pendulum " + std::to_string(k));
    const Json& mb = output["multibodies"][k];
    ASSERT_EQ(mb["joint_positions"].size(), 1u);
    ASSERT_EQ(mb["links"].size(), 1u);
    const double q = number(mb["joint_positions"][0]);
    EXPECT_NEAR(q, expected_q[k], kJointExact);
    const double rise = kLength * (1.0 - std::cos(q));
    const double kinetic = k == 2 ? 0.5 * kPivotInertia : 0.0;
    EXPECT_NEAR(number(mb["energy_final"]), kinetic + kGravity * rise, kJointExact);
    total += number(mb["energy_final"]);
    // The bob's centre, about the pivot (x_k, L, 0), and its velocity q̇ ẑ × r.
    const Json& link = mb["links"][0];
    EXPECT_NEAR(number(link["position"][0]),
                static_cast<double>(k) * (2 * kRadius - kOverlap) + kLength * std::sin(q),
                kJointExact);
    EXPECT_NEAR(number(link["position"][1]), rise, kJointExact);
    EXPECT_NEAR(number(link["velocity"][0]), rates[k] * std::cos(q), kJointExact);
    EXPECT_NEAR(number(link["velocity"][1]), rates[k] * std::sin(q), kJointExact);
  }
  EXPECT_NEAR(number(output["energy_final"]), total, kJointExact);
  // Deterministic, like every scene.
  const std::string input = load_scene("multibody_cradle.json").dump();
  EXPECT_EQ(run_scene_text(input).out, run_scene_text(input).out);
}

TEST(CliScene, StockMultibodySolverSpreadsTheCradlesMomentum) {
  // What the test above guards against: Bullet's btMultiBodyConstraintSolver
  // resolves the touching cradle in one LCP (multibody_test.cpp).
  Json input = load_scene("multibody_cradle.json");
  input["solver"] = "stock_si";
  const Json output = scene_ok(input);
  const std::vector<double> rates = joint_rates(output);
  ASSERT_EQ(rates.size(), 3u);
  EXPECT_GT(std::abs(rates[0]) + std::abs(rates[1]) + std::abs(rates[2] - 1.0), 0.1);
  EXPECT_EQ(output["impacts"], 0);
}

TEST(CliScene, RouthLawOnTheMultibodyCradleIsInelastic) {
  Json input = load_scene("multibody_cradle.json");
  input["simpact"] = {{"law", "routh"}, {"seed", 4},
                      {"routh", {{"cone_directions", 8}, {"sampler", "low_discrepancy"}}}};
  const Json output = scene_ok(input);
  EXPECT_EQ(output["impacts"], 1);
  EXPECT_EQ(output["routh_impacts"], 1);
  const std::vector<double> rates = joint_rates(output);
  ASSERT_EQ(rates.size(), 3u);
  // Equal pendulums struck along x at the bobs' height: Σ I q̇ is kept.
  EXPECT_NEAR(rates[0] + rates[1] + rates[2], 1.0, kJointExact);
  // Inelastic and frictionless in effect (the contacts do not slip): the
  // sample ends with no contact approaching, all three together at a third
  // of the striker's rate (the plastic outcome; seeds 0–7 all give it to
  // rounding), so two thirds of the kinetic energy are lost.
  for (const double rate : rates) EXPECT_NEAR(rate, 1.0 / 3.0, kJointExact);
  EXPECT_LT(number(output["energy_final"]), 0.9 * number(output["energy_initial"]));
}

TEST(CliScene, PlasticMultibodyImpactsNeedResolvePlasticImpacts) {
  Json input = load_scene("multibody_cradle.json");
  for (Json& mb : input["multibodies"]) mb["links"][0]["restitution"] = 0;
  // Left to Bullet's multibody solver, as the rigid adapter does.
  EXPECT_EQ(scene_ok(input)["impacts"], 0);
  // Resolved by the propagative law with R = 0: the Moreau projection, all
  // three together at a third of the striker's rate.
  input["simpact"] = {{"resolve_plastic_impacts", true}};
  const Json output = scene_ok(input);
  EXPECT_EQ(output["impacts"], 1);
  for (const double rate : joint_rates(output)) EXPECT_NEAR(rate, 1.0 / 3.0, kJointExact);
}

TEST(CliScene, PendulumStrikesARigidSphere) {
  // No gravity; the bob swings in at 1 m/s and strikes a 1 kg sphere at rest
  // elastically. Along x the bob weighs m_eff = I / L² = kPivotInertia, so
  // q̇⁺ = (m_eff − m)/(m_eff + m), v⁺ = 2 m_eff/(m_eff + m). The plane is
  // far below and never touched.
  const Json input = Json::parse(R"({
    "gravity": [0, 0, 0], "dt": 0.004166666666666667, "steps": 1,
    "bodies": [
      {"shape": "plane", "normal": [0, 1, 0], "offset": -1, "restitution": 1},
      {"shape": "sphere", "radius": 0.05, "position": [0.0999999, 0, 0], "restitution": 1,
       "friction": 0, "never_sleep": true}
    ],
    "multibodies": [
      {"links": [{"pivot": [0, 1, 0], "center": [0, 0, 0], "radius": 0.05,
                  "restitution": 1, "friction": 0, "joint_velocity": 1}]}
    ]
  })");
  const Json output = scene_ok(input);
  ASSERT_EQ(output["bodies"].size(), 2u);
  const double m_eff = kPivotInertia;
  EXPECT_NEAR(number(output["multibodies"][0]["joint_velocities"][0]), (m_eff - 1) / (m_eff + 1),
              kJointExact);
  EXPECT_NEAR(number(output["bodies"][1]["velocity"][0]), 2 * m_eff / (m_eff + 1), kJointExact);
  EXPECT_NEAR(number(output["bodies"][1]["velocity"][1]), 0.0, kJointExact);
  EXPECT_NEAR(number(output["energy_final"]), number(output["energy_initial"]), kJointExact);
  EXPECT_NEAR(number(output["energy_initial"]), 0.5 * kPivotInertia, kJointExact);
  EXPECT_EQ(output["impacts"], 1);
}

TEST(CliScene, BoxLinkBouncesOffThePlaneWithItsFace) {
  // A prismatic link sliding down y at 1 m/s, no gravity, e = 1: its box
  // (half height 0.05 m) meets the plane y = 0 when its centre is 0.05 m
  // up, after 0.2 s (48 steps), and leaves at exactly +1 m/s (one dof).
  // After 72 steps the centre is at 0.05 + 24/240 = 0.15 m, within the
  // step in which Bullet finds the touch (a step's travel, 1/240 m, either
  // way: kTouchStep). Taken for its 0.15 m bounding sphere instead, the
  // link would touch after 0.1 s (24 steps) and end at 0.35 m.
  const Json input = Json::parse(R"({
    "gravity": [0, 0, 0], "dt": 0.004166666666666667, "steps": 72,
    "bodies": [{"shape": "plane", "normal": [0, 1, 0], "offset": 0, "restitution": 1, "friction": 0}],
    "multibodies": [
      {"base": {"type": "fixed", "position": [0, 1, 0]},
       "links": [{"joint": "prismatic", "axis": [0, 1, 0], "center": [0, 0.25, 0],
                  "box": [0.1, 0.05, 0.1], "mass": 2, "restitution": 1, "friction": 0,
                  "joint_velocity": -1}]}
    ]
  })");
  const Json output = scene_ok(input);
  constexpr double kTouchStep = 2.0 / 240.0;
  EXPECT_NEAR(number(output["multibodies"][0]["joint_velocities"][0]), 1.0, kJointExact);
  EXPECT_NEAR(number(output["multibodies"][0]["links"][0]["position"][1]), 0.15, kTouchStep);
  EXPECT_GE(number(output["impacts"]), 1);
  // The box's solid inertia is the default; with one prismatic dof only
  // the translation moves: ½ m v².
  EXPECT_NEAR(number(output["energy_final"]), 0.5 * 2.0 * 1.0, kJointExact);
}

TEST(CliScene, ChainLinksHangFromTheirParents) {
  // Two links about z: link 0 hinged at the origin with its bob at x = 0.5,
  // link 1 hinged at that bob with its own at x = 1. Only joint 0 turns
  // (1 rad/s), so both bobs turn about the origin: link 1 moves at 1 m/s
  // along y, not at rest as it would hanging from the base.
  const Json input = Json::parse(R"({
    "gravity": [0, 0, 0], "dt": 0.01, "steps": 0,
    "multibodies": [
      {"base": {"type": "fixed", "position": [0, 0, 0]},
       "links": [{"parent": -1, "pivot": [0, 0, 0], "center": [0.5, 0, 0], "radius": 0.05,
                  "mass": 1, "joint_velocity": 1},
                 {"parent": 0, "pivot": [0.5, 0, 0], "center": [1, 0, 0], "radius": 0.05,
                  "mass": 2}]}
    ]
  })");
  const Json output = scene_ok(input);
  const Json& links = output["multibodies"][0]["links"];
  ASSERT_EQ(links.size(), 2u);
  EXPECT_NEAR(number(links[0]["velocity"][1]), 0.5, kJointExact);
  EXPECT_NEAR(number(links[1]["velocity"][1]), 1.0, kJointExact);
  EXPECT_NEAR(number(links[1]["position"][0]), 1.0, kJointExact);
  // ½ Σ (m v² + I ω²), both spheres spinning at 1 rad/s.
  const double spin = 0.4 * kRadius * kRadius;
  EXPECT_NEAR(number(output["energy_initial"]),
              0.5 * (1 * 0.25 + 1 * spin + 2 * 1.0 + 2 * spin), kJointExact);
}

TEST(CliScene, MalformedMultibodyScenesExit2NamingTheProblem) {
  const std::vector<Malformed> cases = {
      {"empty multibodies", [](Json& s) { s["multibodies"] = Json::array(); },
       R"("multibodies" must have at least one multibody)"},
      {"multibodies not an array", [](Json& s) { s["multibodies"] = 3; },
       R"("multibodies" must be an array)"},
      {"unknown multibody key", [](Json& s) { s["multibodies"][1]["joints"] = Json::array(); },
       R"("multibodies" entry 1: unknown key "joints")"},
      {"missing links", [](Json& s) { s["multibodies"][0].erase("links"); },
       R"("multibodies" entry 0: missing required key "links")"},
      {"no links", [](Json& s) { s["multibodies"][0]["links"] = Json::array(); },
       R"("multibodies" entry 0: "links" must have at least one link)"},
      {"unknown base type", [](Json& s) { s["multibodies"][0]["base"]["type"] = "floating"; },
       R"("multibodies" entry 0: "type" must be one of: fixed, free)"},
      {"fixed base mass", [](Json& s) { s["multibodies"][0]["base"]["mass"] = 1; },
       R"("multibodies" entry 0: "mass" is for a "free" base only (this base is fixed))"},
      {"fixed base colliders",
       [](Json& s) { s["multibodies"][0]["base"]["colliders"] = Json::array(); },
       R"("multibodies" entry 0: "colliders" is for a "free" base only)"},
      {"unknown base key", [](Json& s) { s["multibodies"][0]["base"]["rotation"] = {0, 0, 0, 1}; },
       R"("multibodies" entry 0: unknown key "rotation")"},
      {"spherical joint", [](Json& s) { s["multibodies"][0]["links"][0]["joint"] = "spherical"; },
       R"("multibodies" entry 0: "links" entry 0: "joint" "spherical" is not supported)"},
      {"unknown joint", [](Json& s) { s["multibodies"][0]["links"][0]["joint"] = "hinge"; },
       R"("links" entry 0: "joint" must be one of: revolute, prismatic)"},
      {"fixed-base link colliders",
       [](Json& s) {
         s["multibodies"][0]["links"][0]["colliders"] = {{{"center", {0, 0, 0}}, {"radius", 1}}};
       },
       R"("links" entry 0: "colliders" of a fixed-base link is not supported)"},
      {"box and radius",
       [](Json& s) { s["multibodies"][0]["links"][0]["box"] = {0.1, 0.1, 0.1}; },
       R"("links" entry 0: "box" and "radius" are two colliders for one link: give one)"},
      {"flat box",
       [](Json& s) {
         s["multibodies"][0]["links"][0].erase("radius");
         s["multibodies"][0]["links"][0]["box"] = {0.1, 0, 0.1};
       },
       R"("links" entry 0: "box" half extents must be > 0)"},
      {"box of two numbers",
       [](Json& s) {
         s["multibodies"][0]["links"][0].erase("radius");
         s["multibodies"][0]["links"][0]["box"] = {0.1, 0.1};
       },
       R"("links" entry 0: "box")"},
      {"zero link inertia", [](Json& s) { s["multibodies"][0]["links"][0]["inertia"] = {1, 0, 1}; },
       R"("links" entry 0: "inertia" must be > 0)"},
      {"prismatic zero axis",
       [](Json& s) {
         s["multibodies"][0]["links"][0]["joint"] = "prismatic";
         s["multibodies"][0]["links"][0]["axis"] = {0, 0, 0};
       },
       R"("links" entry 0: "axis" must not be zero)"},
      {"misspelt link key", [](Json& s) { s["multibodies"][0]["links"][0]["centre"] = {0, 0, 0}; },
       R"("links" entry 0: unknown key "centre")"},
      {"link 0 with a link parent", [](Json& s) { s["multibodies"][0]["links"][0]["parent"] = 0; },
       R"("links" entry 0: "parent" must be the base or an earlier link, -1: link 0 hangs)"},
      {"parent -2", [](Json& s) { s["multibodies"][0]["links"][0]["parent"] = -2; },
       R"("parent" must be the base or an earlier link)"},
      {"later parent",
       [](Json& s) {
         Json second = s["multibodies"][0]["links"][0];
         second["parent"] = 1;
         s["multibodies"][0]["links"].push_back(second);
       },
       R"("links" entry 1: "parent" must be the base or an earlier link, -1 (the base) to 0 (got 1))"},
      {"zero axis", [](Json& s) { s["multibodies"][0]["links"][0]["axis"] = {0, 0, 0}; },
       R"("links" entry 0: "axis" must not be zero)"},
      {"short pivot", [](Json& s) { s["multibodies"][0]["links"][0]["pivot"] = {0, 1}; },
       R"("links" entry 0: "pivot" has 2 entries, expected 3)"},
      {"missing center", [](Json& s) { s["multibodies"][0]["links"][0].erase("center"); },
       R"("links" entry 0: missing required key "center")"},
      {"zero mass", [](Json& s) { s["multibodies"][0]["links"][0]["mass"] = 0; },
       R"("links" entry 0: "mass" must be > 0)"},
      {"missing radius", [](Json& s) { s["multibodies"][0]["links"][0].erase("radius"); },
       R"("links" entry 0: missing required key "radius")"},
      {"restitution above 1", [](Json& s) { s["multibodies"][0]["links"][0]["restitution"] = 1.5; },
       R"("links" entry 0: "restitution" must be in [0, 1])"},
      {"negative friction", [](Json& s) { s["multibodies"][0]["links"][0]["friction"] = -1; },
       R"("links" entry 0: "friction" must be >= 0)"},
      {"joint velocity not a number",
       [](Json& s) { s["multibodies"][0]["links"][0]["joint_velocity"] = "fast"; },
       R"("links" entry 0: "joint_velocity" is not a number)"},
      {"unknown law", [](Json& s) { s["simpact"] = {{"law", "blend"}}; },
       R"("law" must be one of: propagative, routh, routh_restitution, auto)"},
      {"simpact base", [](Json& s) { s["simpact"] = {{"base", "stock_si"}}; },
       R"("base" is not supported in a scene with "multibodies")"},
      {"zero routh max_contacts",
       [](Json& s) { s["simpact"] = {{"law", "auto"}, {"routh", {{"max_contacts", 0}}}}; },
       R"("max_contacts" must be an integer >= 1)"},
      {"unknown routh key",
       [](Json& s) { s["simpact"] = {{"law", "routh"}, {"routh", {{"directions", 4}}}}; },
       R"(unknown key "directions")"},
      {"resolve_plastic_impacts not a boolean",
       [](Json& s) { s["simpact"] = {{"resolve_plastic_impacts", 1}}; },
       R"("resolve_plastic_impacts" must be true or false)"},
      {"unknown simpact key", [](Json& s) { s["simpact"] = {{"threshold", 1}}; },
       R"(unknown key "threshold")"},
      {"other stock solver", [](Json& s) { s["solver"] = "stock_nncg"; },
       R"("solver" must be one of: stock_si, simpact in a scene with "multibodies" (got "stock_nncg"))"},
      {"simpact keys for the stock solver",
       [](Json& s) {
         s["solver"] = "stock_si";
         s["simpact"] = {{"law", "routh"}};
       },
       R"("simpact" configures solver "simpact" only)"},
      {"rigid joints", [](Json& s) { s["joints"] = Json::array(); },
       R"("joints" is not supported in a scene with "multibodies")"},
      {"minimum restitution combiner", [](Json& s) { s["restitution_combiner"] = "minimum"; },
       R"("restitution_combiner" "minimum" is not supported in a scene with "multibodies")"},
      {"box body",
       [](Json& s) { s["bodies"] = {{{"shape", "box"}, {"half_extents", {1, 1, 1}}}}; },
       R"("bodies" entry 0: "shape" "box" is not supported in a scene with "multibodies")"},
      {"kinematic sphere",
       [](Json& s) {
         s["bodies"] = {{{"shape", "sphere"}, {"radius", 1}, {"mass", 0}, {"kinematic", true}}};
       },
       R"("bodies" entry 0: "kinematic" is not supported in a scene with "multibodies")"},
      {"locked sphere",
       [](Json& s) {
         s["bodies"] = {{{"shape", "sphere"}, {"radius", 1}, {"linear_factor", {1, 0, 0}}}};
       },
       R"("bodies" entry 0: "linear_factor" is not supported in a scene with "multibodies")"},
      {"moved plane",
       [](Json& s) {
         s["bodies"] = {{{"shape", "plane"}, {"normal", {0, 1, 0}}, {"offset", -1},
                         {"position", {0, 1, 0}}}};
       },
       R"("bodies" entry 0: "position" of a plane is not supported)"},
      {"misspelt body key",
       [](Json& s) { s["bodies"] = {{{"shape", "sphere"}, {"radius", 1}, {"mas", 1}}}; },
       R"("bodies" entry 0: unknown key "mas")"},
  };
  expect_malformed("multibody_cradle.json", cases);
  // A multibody-only key in a rigid scene is named as such.
  Json rigid = load_scene("newtons_cradle.scene.json");
  rigid["simpact"] = {{"resolve_plastic_impacts", true}};
  const SceneRun result = run_scene_text(rigid.dump());
  EXPECT_EQ(result.exit_code, kExitInputError);
  EXPECT_NE(result.err.find(R"("resolve_plastic_impacts" is for a scene with "multibodies" only)"),
            std::string::npos)
      << result.err;
}

// The shared laws are the multibody adapter's too: on the frictionless
// elastic pendulum cradle, law auto is the propagative law (bit for bit),
// and a Routh cap of one contact leaves the cluster (two contacts) to
// Bullet's solver, so nothing is resolved.
TEST(CliScene, MultibodyScenesTakeLawAutoAndTheRouthCap) {
  Json scene = load_scene("multibody_cradle.json");
  scene["simpact"] = {{"law", "propagative"}};
  const Json propagative = scene_ok(scene);
  scene["simpact"] = {{"law", "auto"}};
  const Json automatic = scene_ok(scene);
  EXPECT_EQ(automatic.dump(), propagative.dump());
  EXPECT_GT(automatic["impacts"].get<int>(), 0);
  scene["simpact"] = {{"law", "routh"}};
  EXPECT_GT(scene_ok(scene)["routh_impacts"].get<int>(), 0);
  scene["simpact"] = {{"law", "routh"}, {"routh", {{"max_contacts", 1}}}};
  const Json capped = scene_ok(scene);
  EXPECT_EQ(capped["routh_impacts"], 0);
}

// ── Free bases, prismatic joints, colliders ─────────────────────────────────

// One step of a propagative elastic impact between a translating prismatic
// link or free base and a sphere: no rotation enters, so the outcome is the
// 1-D two-mass collision; the same margin as kJointExact.
constexpr double kSlideExact = kJointExact;

// A 2 kg block (a sphere collider of r = 5 cm on a prismatic link along x,
// fixed base) slides at 1 m/s into a 1 kg free sphere at rest, touching it,
// e = 1, no friction, no gravity: v_block = (m1 − m2)/(m1 + m2) = 1/3,
// v_sphere = 2 m1/(m1 + m2) = 4/3, kinetic energy 1 J kept.
Json slider_scene() {
  return Json::parse(R"({
    "gravity": [0, 0, 0], "dt": 0.004166666666666667, "steps": 1,
    "bodies": [
      {"shape": "sphere", "radius": 0.05, "mass": 1, "position": [0.0999999, 0, 0],
       "restitution": 1, "friction": 0, "never_sleep": true}
    ],
    "multibodies": [
      {"links": [{"joint": "prismatic", "axis": [1, 0, 0], "center": [0, 0, 0], "mass": 2,
                  "radius": 0.05, "restitution": 1, "friction": 0, "joint_velocity": 1}]}
    ]
  })");
}

TEST(CliScene, PrismaticSliderStrikesASphereAsTwoMassesOnALine) {
  const Json output = scene_ok(slider_scene());
  EXPECT_EQ(output["impacts"], 1);
  const Json& slider = output["multibodies"][0];
  EXPECT_FALSE(slider.contains("base"));  // fixed
  EXPECT_NEAR(number(slider["joint_velocities"][0]), 1.0 / 3.0, kSlideExact);
  EXPECT_NEAR(number(slider["links"][0]["velocity"][0]), 1.0 / 3.0, kSlideExact);
  EXPECT_NEAR(number(slider["links"][0]["velocity"][1]), 0.0, kSlideExact);
  // The step moved the block by h q̇ along x, and q is that slide [m].
  const double h = 0.004166666666666667;
  EXPECT_NEAR(number(slider["joint_positions"][0]), h / 3.0, kSlideExact);
  EXPECT_NEAR(number(slider["links"][0]["position"][0]), h / 3.0, kSlideExact);
  const Json& sphere = output["bodies"][0];
  EXPECT_NEAR(number(sphere["velocity"][0]), 4.0 / 3.0, kSlideExact);
  EXPECT_NEAR(number(sphere["velocity"][1]), 0.0, kSlideExact);
  EXPECT_NEAR(number(output["energy_initial"]), 1.0, kSlideExact);
  EXPECT_NEAR(number(output["energy_final"]), 1.0, kSlideExact);
  // The slide axis matters: along y the block passes beside the sphere, no
  // impact. Only Bullet's penetration recovery of the 1e-7 m overlap nudges
  // the sphere: ERP 0.2 · 1e-7 m / h = 4.8e-6 m/s (measured 4.8e-6);
  // 1e-5 m/s bounds it, five orders below the struck 4/3 m/s.
  constexpr double kOverlapRecovery = 1e-5;
  Json sideways = slider_scene();
  sideways["multibodies"][0]["links"][0]["axis"] = {0, 1, 0};
  const Json apart = scene_ok(sideways);
  EXPECT_EQ(apart["impacts"], 0);
  EXPECT_LT(std::abs(number(apart["bodies"][0]["velocity"][0])), kOverlapRecovery);
  EXPECT_NEAR(number(apart["multibodies"][0]["joint_velocities"][0]), 1.0, kOverlapRecovery);
  EXPECT_NEAR(number(apart["multibodies"][0]["links"][0]["velocity"][1]), 1.0, kOverlapRecovery);
}

// A free-base ball (no links) dropped obliquely onto an elastic plane, as
// tests/bullet/multibody_test.cpp's FreeBaseBallBouncesElastically: 2 kg,
// r = 0.1, touching the plane at (0.3, −1, 0) m/s, e = 1, no friction, no
// gravity: the normal component reverses exactly, (0.3, 1, 0), no spin.
Json free_ball_scene() {
  return Json::parse(R"({
    "gravity": [0, 0, 0], "dt": 0.004166666666666667, "steps": 1,
    "bodies": [{"shape": "plane", "normal": [0, 1, 0], "offset": 0, "restitution": 1,
                "friction": 0}],
    "multibodies": [
      {"base": {"type": "free", "position": [0, 0.1, 0], "mass": 2, "radius": 0.1,
                "restitution": 1, "friction": 0, "velocity": [0.3, -1, 0]},
       "links": []}
    ]
  })");
}

TEST(CliScene, FreeBaseBallBouncesElastically) {
  const Json output = scene_ok(free_ball_scene());
  EXPECT_EQ(output["impacts"], 1);
  const Json& mb = output["multibodies"][0];
  EXPECT_EQ(mb["joint_velocities"].size(), 0u);
  ASSERT_TRUE(mb.contains("base"));
  const Json& base = mb["base"];
  EXPECT_NEAR(number(base["velocity"][0]), 0.3, kSlideExact);
  EXPECT_NEAR(number(base["velocity"][1]), 1.0, kSlideExact);
  EXPECT_NEAR(number(base["velocity"][2]), 0.0, kSlideExact);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(number(base["angular_velocity"][k]), 0.0, kSlideExact);
  // ½ m |v|² = ½ · 2 · 1.09 before and after (the plane is at offset 0, so
  // the potential is 0 without gravity).
  EXPECT_NEAR(number(output["energy_initial"]), 1.09, kSlideExact);
  EXPECT_NEAR(number(output["energy_final"]), 1.09, kSlideExact);
  // Moved by one step of the outgoing velocity, orientation unchanged.
  const double h = 0.004166666666666667;
  EXPECT_NEAR(number(base["position"][0]), 0.3 * h, kSlideExact);
  EXPECT_NEAR(number(base["position"][1]), 0.1 + h, kSlideExact);
  EXPECT_NEAR(number(base["orientation"][3]), 1.0, kSlideExact);
  // Its potential counts under gravity: m g y = 2 · 9.81 · 0.1 at the start.
  Json falling = free_ball_scene();
  falling["gravity"] = {0, -9.81, 0};
  falling["steps"] = 0;
  EXPECT_NEAR(number(scene_ok(falling)["energy_initial"]), 1.09 + 2 * 9.81 * 0.1, kSlideExact);
}

// A free base and a prismatic link with no force between them along the
// slide (no gravity, nothing in reach): the base at 1 m/s along x, the link
// sliding at q̇ = 1 m/s relative to it, so at 2 m/s. Rotating the base by a
// quarter turn about z must leave the links' world-frame axis and centre
// (the frame convention of add_free_base_tree) alone: after 10 steps of
// 10 ms, q = 0.1 m, the base has moved 0.1 m and the link 0.2 m.
TEST(CliScene, FreeBasePrismaticLinkSlidesAlongItsWorldAxis) {
  // Ten explicit steps of constant velocities: exact up to rounding of the
  // positions' sums (~1e-16 each).
  constexpr double kKinematicsExact = kJointExact;
  for (const bool turned : {false, true}) {
    SCOPED_TRACE(turned ? "base turned a quarter about z" : "base unturned");
    Json input = Json::parse(R"({
      "gravity": [0, 0, 0], "dt": 0.01, "steps": 10,
      "multibodies": [
        {"base": {"type": "free", "position": [0, 0, 0], "mass": 3, "inertia": [1, 2, 3],
                  "velocity": [1, 0, 0]},
         "links": [{"joint": "prismatic", "axis": [1, 0, 0], "center": [0, 1, 0], "mass": 1,
                    "inertia": [0.1, 0.1, 0.1], "joint_velocity": 1}]}
      ]
    })");
    if (turned) {
      input["multibodies"][0]["base"]["orientation"] = {0, 0, std::sqrt(0.5), std::sqrt(0.5)};
    }
    const Json output = scene_ok(input);
    const Json& mb = output["multibodies"][0];
    EXPECT_NEAR(number(mb["joint_positions"][0]), 0.1, kKinematicsExact);
    EXPECT_NEAR(number(mb["joint_velocities"][0]), 1.0, kKinematicsExact);
    EXPECT_NEAR(number(mb["base"]["position"][0]), 0.1, kKinematicsExact);
    EXPECT_NEAR(number(mb["base"]["velocity"][0]), 1.0, kKinematicsExact);
    const Json& link = mb["links"][0];
    EXPECT_NEAR(number(link["position"][0]), 0.2, kKinematicsExact);
    EXPECT_NEAR(number(link["position"][1]), 1.0, kKinematicsExact);
    EXPECT_NEAR(number(link["velocity"][0]), 2.0, kKinematicsExact);
    EXPECT_NEAR(number(link["velocity"][1]), 0.0, kKinematicsExact);
    EXPECT_NEAR(number(mb["base"]["orientation"][3]), turned ? std::sqrt(0.5) : 1.0,
                kKinematicsExact);
    // ½ (3 · 1² + 1 · 2²), constant.
    EXPECT_NEAR(number(output["energy_initial"]), 3.5, kKinematicsExact);
    EXPECT_NEAR(number(output["energy_final"]), 3.5, kKinematicsExact);
  }
}

// Colliders are given in the world frame whatever the base's orientation:
// a base a quarter turn about z with its sphere 0.9 m straight below the
// centre of mass, on an elastic plane at 1 m/s, bounces straight back
// without spin (the contact normal passes through the centre of mass). Read
// in the base's frame instead, the sphere would sit 0.9 m to the side, in
// the air: no impact.
TEST(CliScene, TurnedFreeBaseKeepsItsCollidersWhereGiven) {
  const Json input = Json::parse(R"({
    "gravity": [0, 0, 0], "dt": 0.004166666666666667, "steps": 1,
    "bodies": [{"shape": "plane", "normal": [0, 1, 0], "offset": 0, "restitution": 1,
                "friction": 0}],
    "multibodies": [
      {"base": {"type": "free", "position": [0, 1, 0],
                "orientation": [0, 0, 0.7071067811865476, 0.7071067811865476],
                "mass": 1, "inertia": [1, 2, 3], "velocity": [0, -1, 0],
                "colliders": [{"center": [0, 0.1, 0], "radius": 0.1, "restitution": 1,
                               "friction": 0}]},
       "links": []}
    ]
  })");
  const Json output = scene_ok(input);
  EXPECT_EQ(output["impacts"], 1);
  const Json& base = output["multibodies"][0]["base"];
  EXPECT_NEAR(number(base["velocity"][0]), 0.0, kSlideExact);
  EXPECT_NEAR(number(base["velocity"][1]), 1.0, kSlideExact);
  EXPECT_NEAR(number(base["angular_velocity"][2]), 0.0, kSlideExact);
  EXPECT_NEAR(number(base["orientation"][2]), std::sqrt(0.5), kSlideExact);
}

// demos/data/compass_gait_multibody.json is add_compass_gait() (defaults)
// written out: its numbers are the fixture's own doubles printed with 17
// significant digits, which read back exactly, and the plane comes before
// the multibody as add_compass_gait adds it. So the same seed must give the
// same Bullet run bit for bit: every output compared with ==.
struct GaitState {
  std::vector<double> values;  ///< base position, velocity, ω; q, q̇
  std::int64_t impacts = 0, routh_impacts = 0;
};

GaitState gait_from_fixture(std::uint64_t seed) {
  worlds::MultiBodyWorldOptions options;
  options.gravity = Eigen::Vector3d::Zero();
  options.config.law = bullet::ImpactLaw::kRouth;
  options.config.seed = seed;
  options.config.routh.step = 0.25;
  options.config.routh.max_steps = 5;
  worlds::MultiBodyWorld world(options);
  const worlds::CompassGait gait = worlds::add_compass_gait(world);
  world.step(1e-4);
  const btMultiBody& mb = *gait.multibody;
  GaitState state;
  for (const btVector3& v : {mb.getBasePos(), mb.getBaseVel(), mb.getBaseOmega()}) {
    for (int k = 0; k < 3; ++k) state.values.push_back(double(v[k]));
  }
  state.values.push_back(double(mb.getJointPos(0)));
  state.values.push_back(worlds::MultiBodyWorld::joint_velocity(mb, 0));
  state.impacts = world.impact_solver()->stats().impacts;
  state.routh_impacts = world.impact_solver()->stats().routh_impacts;
  return state;
}

GaitState gait_from_json(std::uint64_t seed) {
  Json input = load_scene("compass_gait_multibody.json");
  input["simpact"]["seed"] = seed;
  const Json output = scene_ok(input);
  const Json& mb = output["multibodies"][0];
  GaitState state;
  for (const char* key : {"position", "velocity", "angular_velocity"}) {
    for (int k = 0; k < 3; ++k) state.values.push_back(number(mb["base"][key][k]));
  }
  state.values.push_back(number(mb["joint_positions"][0]));
  state.values.push_back(number(mb["joint_velocities"][0]));
  state.impacts = output["impacts"].get<std::int64_t>();
  state.routh_impacts = output["routh_impacts"].get<std::int64_t>();
  return state;
}

TEST(CliScene, CompassGaitFileEqualsAddCompassGaitBitForBit) {
  const Json file = load_scene("compass_gait_multibody.json");
  const std::uint64_t file_seed = file["simpact"]["seed"].get<std::uint64_t>();
  // The seeds must also change the outcome. Most Routh samples leave both
  // feet on the ground, and Bullet's sustained-contact friction (μ = 5) then
  // brings them to one end-of-step state (30 of seeds 0–30 do); seed 26 is
  // one whose sample lifts a foot, in both precisions (found by scanning).
  constexpr std::uint64_t kLiftingSeed = 26;
  // Its leading-leg rate differs from the common one by ~0.67 rad/s; 0.1
  // separates real outcomes from rounding (ulps of ~1 rad/s).
  constexpr double kDistinctRate = 0.1;
  double rate_min = 1e300, rate_max = -1e300;
  for (const std::uint64_t seed : {file_seed, std::uint64_t{0}, std::uint64_t{1}, kLiftingSeed}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const GaitState expected = gait_from_fixture(seed);
    const GaitState got = gait_from_json(seed);
    EXPECT_EQ(got.impacts, 1);
    EXPECT_EQ(got.routh_impacts, 1);
    EXPECT_EQ(got.impacts, expected.impacts);
    EXPECT_EQ(got.routh_impacts, expected.routh_impacts);
    ASSERT_EQ(got.values.size(), expected.values.size());
    for (std::size_t k = 0; k < got.values.size(); ++k) {
      EXPECT_EQ(got.values[k], expected.values[k]) << "value " << k;
    }
    rate_min = std::min(rate_min, got.values.back());
    rate_max = std::max(rate_max, got.values.back());
  }
  EXPECT_GT(rate_max - rate_min, kDistinctRate) << "the seed must reach the Routh sample";
}

TEST(CliScene, MalformedFreeBaseScenesExit2NamingTheProblem) {
  const std::vector<Malformed> cases = {
      {"unknown free base key", [](Json& s) { s["multibodies"][0]["base"]["spin"] = 1; },
       R"("multibodies" entry 0: unknown key "spin")"},
      {"zero base mass", [](Json& s) { s["multibodies"][0]["base"]["mass"] = 0; },
       R"("multibodies" entry 0: "mass" must be > 0)"},
      {"zero orientation",
       [](Json& s) { s["multibodies"][0]["base"]["orientation"] = {0, 0, 0, 0}; },
       R"("multibodies" entry 0: "orientation" must not be zero)"},
      {"short orientation",
       [](Json& s) { s["multibodies"][0]["base"]["orientation"] = {0, 0, 1}; },
       R"("orientation" has 3 entries, expected 4)"},
      {"negative base inertia",
       [](Json& s) { s["multibodies"][0]["base"]["inertia"] = {1, -1, 1}; },
       R"("multibodies" entry 0: "inertia" must be > 0)"},
      {"base without radius or inertia",
       [](Json& s) { s["multibodies"][0]["base"].erase("inertia"); },
       R"("inertia" is required for a free base without "radius")"},
      {"base restitution without radius",
       [](Json& s) { s["multibodies"][0]["base"]["restitution"] = 1; },
       R"("restitution" of a free base needs "radius")"},
      {"unknown collider key",
       [](Json& s) { s["multibodies"][0]["base"]["colliders"][0]["offset"] = {0, 0, 0}; },
       R"("multibodies" entry 0: "colliders" entry 0: unknown key "offset")"},
      {"collider without radius",
       [](Json& s) { s["multibodies"][0]["base"]["colliders"][0].erase("radius"); },
       R"("colliders" entry 0: missing required key "radius")"},
      {"collider restitution above 1",
       [](Json& s) { s["multibodies"][0]["links"][0]["colliders"][0]["restitution"] = 2; },
       R"("links" entry 0: "colliders" entry 0: "restitution" must be in [0, 1])"},
      {"colliders not a list",
       [](Json& s) { s["multibodies"][0]["links"][0]["colliders"] = 1; },
       R"("links" entry 0: "colliders" must be an array)"},
      {"link without radius or inertia",
       [](Json& s) { s["multibodies"][0]["links"][0].erase("inertia"); },
       R"("links" entry 0: "inertia" is required for a link without "radius" or "box")"},
      {"link friction without radius",
       [](Json& s) { s["multibodies"][0]["links"][0]["friction"] = 1; },
       R"("links" entry 0: "friction" of a link needs "radius" or "box")"},
      {"mixed surfaces on one body",
       [](Json& s) {
         Json second = s["multibodies"][0]["base"]["colliders"][0];
         second["friction"] = 0.3;
         s["multibodies"][0]["base"]["colliders"].push_back(second);
       },
       R"("multibodies" entry 0: MultiBodyWorld: the spheres of one body must share restitution and friction)"},
      {"free base alone without colliders",
       [](Json& s) {
         s["multibodies"][0]["base"].erase("colliders");
         s["multibodies"][0]["links"] = Json::array();
       },
       R"("multibodies" entry 0: a free base without links needs "radius" or "colliders")"},
      {"prismatic joint velocity not a number",
       [](Json& s) {
         s["multibodies"][0]["links"][0]["joint"] = "prismatic";
         s["multibodies"][0]["links"][0]["joint_velocity"] = "fast";
       },
       R"("links" entry 0: "joint_velocity" is not a number)"},
  };
  expect_malformed("compass_gait_multibody.json", cases);
}

TEST(CliScene, SyntaxErrorsExit2) {
  const SceneRun result = run_scene_text("{\"dt\": ");
  EXPECT_EQ(result.exit_code, kExitInputError);
  EXPECT_EQ(result.err.rfind("error: invalid JSON", 0), 0u) << result.err;
}

}  // namespace
}  // namespace simpact::cli
