// Tests of `simpact resolve` with the frictional laws (routh,
// anitescu_potra, sequential): answers derived by hand (the derivations are
// in the comments and in demos/data/README.md), determinism, every error
// path, and a few runs of the real executable.
#include "resolve_support.h"

#include <simpact_cli/cli.h>
#include <simpact_cli/resolve.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace simpact::cli {
namespace {

using namespace testing;

// ── Tolerances ──────────────────────────────────────────────────────────────
// Routh increments are Lemke solves of O(1) systems; an impact takes at most
// a few dozen of them, each adding a few ulps (~1e-16) to O(1) velocities.
// 1e-12 leaves four orders of margin and is far below any physical error
// (a wrong friction mode is off by 1e-2 or more).
constexpr double kLemke = 1e-12;
// anitescu_potra and sequential solve each mode with a regularized QP that
// frictional_reference.cpp documents as moving the solution by ~1e-12
// relative (we see up to 2e-11 in 3-D); 1e-9 on O(1) velocities keeps a
// 50× margin over that and still tells every friction mode apart.
constexpr double kModeSolve = 1e-9;
// Relative separation tolerance of the laws (RouthParameters and
// SequentialParameters::separation_tolerance = 1e-9 of the largest approach
// speed): a contact counts as not colliding down to −1e-9 · speed.
constexpr double kSeparation = 1e-9;

// ── Problems ────────────────────────────────────────────────────────────────
// The 1 × 2 block of demos/data/README.md (m = 1, I = 5/12, q = [x, y, θ]),
// corners A = (−0.5, −1) and B = (0.5, −1): normals [0, 1, ∓0.5], tangents
// [1, 0, 1], M⁻¹ = diag(1, 1, 2.4). Each corner's Delassus matrix is
//   W = [J_n; J_t] M⁻¹ [J_n; J_t]ᵀ = [[1.6, ∓1.2], [∓1.2, 3.4]].
constexpr double kInverseInertia = 2.4;
constexpr double kInertia = 5.0 / 12.0;

// Corner A alone, falling at 1: the single-contact Routh / Anitescu–Potra
// impact, in closed form.
Json corner_a(double friction) {
  Json input = Json::parse(R"({"inverse_mass": [[1, 0, 0], [0, 1, 0], [0, 0, 2.4]],
      "normals": [[0, 1, -0.5]], "tangents": [[1, 0, 1]], "velocity": [0, -1, 0]})");
  input["friction"] = {friction};
  return input;
}

struct SingleContactAnswer {
  double normal_impulse;
  double tangential_impulse;
  std::vector<double> velocity;
  double tangential_velocity;
  double energy_change;
};

// Stick (μ ≥ 1.2/3.4): Λ = −W⁻¹ u⁻ with u⁻ = (−1, 0): 1.6 Λn − 1.2 Λt = 1 and
// −1.2 Λn + 3.4 Λt = 0, so Λn = 3.4/4 = 0.85, Λt = 0.3.
// Slide (μ < 1.2/3.4): sticking would need |Λt| > μ Λn; sliding with u_t < 0
// throughout (Λt = +μ Λn) is the consistent direction: du_t/dΛn = −1.2 + 3.4 μ
// < 0, du_n/dΛn = 1.6 − 1.2 μ, so Λn = 1/(1.6 − 1.2 μ), u_t⁺ = (3.4 μ − 1.2) Λn.
// The sliding direction never reverses, so Routh's incremental impact, the
// simultaneous LCP and the one-contact sequential impact all agree.
// v⁺ = v⁻ + M⁻¹ (J_nᵀ Λn + J_tᵀ Λt) = (Λt, −1 + Λn, 2.4 (−0.5 Λn + Λt)).
SingleContactAnswer corner_a_answer(double friction) {
  const bool sticks = friction >= 1.2 / 3.4;
  const double normal = sticks ? 0.85 : 1.0 / (1.6 - 1.2 * friction);
  const double tangential = sticks ? 0.3 : friction * normal;
  const std::vector<double> v = {tangential, -1.0 + normal,
                                 kInverseInertia * (-0.5 * normal + tangential)};
  const double energy_after = 0.5 * (v[0] * v[0] + v[1] * v[1] + kInertia * v[2] * v[2]);
  return {normal, tangential, v, sticks ? 0.0 : (3.4 * friction - 1.2) * normal,
          energy_after - 0.5};
}

constexpr double kBlockSpeed = 0.4429;  // v₀ of Halm & Posa, Table 4

Json falling_block(const std::string& law) {
  Json input = load_data("falling_block_routh.json");
  input["law"] = law;
  if (law != "routh") {
    for (const char* key : {"step", "max_steps", "samples", "seed"}) input.erase(key);
  }
  return input;
}

// The rolling ball of demos/data/README.md (3-D, two tangent rows).
Json rolling_ball(const std::string& law, double friction) {
  Json input = load_data("rolling_ball_3d.json");
  input["law"] = law;
  input["friction"] = {friction};
  return input;
}

void expect_near(const Json& actual, const std::vector<double>& expected, double tolerance,
                 const std::string& what) {
  SCOPED_TRACE(what);
  const std::vector<double> values = numbers(actual);
  ASSERT_EQ(values.size(), expected.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_NEAR(values[i], expected[i], tolerance) << "entry " << i;
  }
}

// ── Single planar contact: every law gives the closed form ─────────────────

void expect_corner_a(const Json& outcome, double friction, double tolerance,
                     bool has_tangential_impulses) {
  const SingleContactAnswer answer = corner_a_answer(friction);
  expect_near(outcome["velocity"], answer.velocity, tolerance, "velocity");
  expect_near(outcome["normal_impulses"], {answer.normal_impulse}, tolerance, "normal_impulses");
  if (has_tangential_impulses) {
    expect_near(outcome["tangential_impulses"], {answer.tangential_impulse}, tolerance,
                "tangential_impulses");
  } else {
    EXPECT_FALSE(outcome.contains("tangential_impulses"));
  }
  expect_near(outcome["normal_velocities"], {0.0}, tolerance, "normal_velocities");
  expect_near(outcome["tangential_velocities"], {answer.tangential_velocity}, tolerance,
              "tangential_velocities");
  EXPECT_NEAR(outcome["energy_change"].get<double>(), answer.energy_change, tolerance);
  EXPECT_TRUE(outcome["terminated"].get<bool>());
  if (outcome.contains("finished_by_fallback")) {  // single outcomes; sets say "colliding"
    EXPECT_FALSE(outcome["finished_by_fallback"].get<bool>());
  }
}

class SingleContact : public ::testing::TestWithParam<double> {};

TEST_P(SingleContact, AnitescuPotraIsTheClosedForm) {
  const Json output = resolve_ok([] {
    Json input = corner_a(GetParam());
    input["law"] = "anitescu_potra";
    return input;
  }());
  EXPECT_EQ(output["status"], "success");
  ASSERT_EQ(output["outcomes"].size(), 1u);  // a single contact's LCP is unique here
  expect_corner_a(output["outcomes"][0], GetParam(), kModeSolve, true);
  EXPECT_EQ(output["outcomes"][0]["lcps"], 1);
}

TEST_P(SingleContact, SequentialIsTheClosedForm) {
  Json input = corner_a(GetParam());
  input["law"] = "sequential";
  const Json output = resolve_ok(input);
  EXPECT_EQ(output["status"], "success");
  ASSERT_EQ(output["outcomes"].size(), 1u);
  expect_corner_a(output["outcomes"][0], GetParam(), kModeSolve, true);
  EXPECT_EQ(output["outcomes"][0]["lcps"], 1);
}

TEST_P(SingleContact, RouthSampleIsTheClosedFormForEverySeed) {
  // h = 0.1 caps each increment's normal impulse at 0.1, so reaching
  // Λn ≥ 0.85 takes at least ⌈Λn / h⌉ increments: the test sees the
  // increments add up, not a single LCP.
  constexpr double kStep = 0.1;
  const SingleContactAnswer answer = corner_a_answer(GetParam());
  for (const int seed : {0, 1, 2, 3}) {
    SCOPED_TRACE(seed);
    Json input = corner_a(GetParam());
    input["law"] = "routh";
    input["step"] = kStep;
    input["seed"] = seed;
    const Json output = resolve_ok(input);
    EXPECT_EQ(output["status"], "success");
    EXPECT_EQ(output["step"].get<double>(), kStep);
    EXPECT_EQ(output["samples"], 1);
    EXPECT_EQ(output["terminated_samples"], 1);
    ASSERT_EQ(output["outcomes"].size(), 1u);
    const Json& outcome = output["outcomes"][0];
    expect_corner_a(outcome, GetParam(), kLemke, true);
    const int lcps = outcome["lcps"].get<int>();
    EXPECT_GE(lcps, static_cast<int>(std::ceil(answer.normal_impulse / kStep)));
    EXPECT_EQ(output["lcps_per_sample"].get<double>(), lcps);
    EXPECT_FALSE(outcome.contains("trajectory"));
    EXPECT_FALSE(outcome.contains("colliding"));
  }
}

TEST_P(SingleContact, RouthSetHasTheClosedFormInEverySample) {
  constexpr int kSamples = 8;
  Json input = corner_a(GetParam());
  input["law"] = "routh";
  input["step"] = 0.1;
  input["samples"] = kSamples;
  const Json output = resolve_ok(input);
  EXPECT_EQ(output["status"], "success");
  EXPECT_EQ(output["samples"], kSamples);
  EXPECT_EQ(output["terminated_samples"], kSamples);
  ASSERT_EQ(output["outcomes"].size(), static_cast<std::size_t>(kSamples));
  double lcps = 0.0;
  for (const Json& outcome : output["outcomes"]) {
    expect_corner_a(outcome, GetParam(), kLemke, false);
    EXPECT_FALSE(outcome["colliding"].get<bool>());
    lcps += outcome["lcps"].get<double>();
  }
  EXPECT_NEAR(output["lcps_per_sample"].get<double>(), lcps / kSamples, 1e-15 * lcps);
}

// μ = 1 sticks, μ = 0.2 slides (the threshold is 1.2/3.4 ≈ 0.353).
INSTANTIATE_TEST_SUITE_P(StickAndSlide, SingleContact, ::testing::Values(1.0, 0.2),
                         [](const ::testing::TestParamInfo<double>& friction) {
                           return friction.param >= 1.2 / 3.4 ? "Stick" : "Slide";
                         });

TEST(CliRouth, AutomaticStepIsTwiceTheLargestStoppingImpulse) {
  // routh.h: h = factor · max_i max(0, −u⁻_n,i) / W_nn,i. Corner A: 1 / 1.6.
  Json input = corner_a(1.0);
  input["law"] = "routh";
  EXPECT_NEAR(resolve_ok(input)["step"].get<double>(), 2.0 / 1.6, kLemke);
  input["automatic_step_factor"] = 3;
  EXPECT_NEAR(resolve_ok(input)["step"].get<double>(), 3.0 / 1.6, kLemke);
  // The rolling ball: W_nn = 1 (mass 1, the normal does not turn it).
  EXPECT_NEAR(resolve_ok(rolling_ball("routh", 0.5))["step"].get<double>(), 2.0, kLemke);
}

TEST(CliRouth, AutomaticStepRuleIsRead) {
  // routh.h, "Automatic step": the two stacked boxes landing (four
  // contacts, only the two ground corners approaching). The simultaneous
  // impact's ground impulses stop both boxes, more than a corner alone
  // stops; automatic is the single-contact rule at four contacts.
  Json input = load_data("box_stack_routh.json");
  input["automatic_step"] = "single_contact";
  const double single = resolve_ok(input)["step"].get<double>();
  input["automatic_step"] = "simultaneous";
  const double simultaneous = resolve_ok(input)["step"].get<double>();
  input["automatic_step"] = "automatic";
  EXPECT_EQ(resolve_ok(input)["step"].get<double>(), single);
  EXPECT_GT(simultaneous, 1.5 * single);
}

TEST(CliRouth, RestitutionIsStrongesOnTheRollingBall) {
  // Unit ball, I = 0.4, approach 1, slip 1, μ = 0.5: the slip stops in
  // compression (μ·1 > 2/7) and stays stopped; the contact is collinear, so
  // Stronge's e gives Newton's rebound: v = (5/7, 0, e), ω_y = 5/7.
  for (const double e : {0.0, 0.5, 0.9}) {
    Json input = rolling_ball("routh", 0.5);
    input["restitution"] = e;
    expect_near(resolve_ok(input)["outcomes"][0]["velocity"], {5.0 / 7, 0, e, 0, 5.0 / 7, 0}, kLemke,
                "e = " + std::to_string(e));
    input["restitution"] = {e};  // one per contact
    expect_near(resolve_ok(input)["outcomes"][0]["velocity"], {5.0 / 7, 0, e, 0, 5.0 / 7, 0}, kLemke,
                "[e], e = " + std::to_string(e));
  }
  Json bad = rolling_ball("routh", 0.5);
  bad["restitution"] = 1.5;
  expect_one_error_line(resolve_text(bad.dump()), "\"restitution\" must be in [0, 1]");
  bad["restitution"] = {0.5, 0.5};
  expect_one_error_line(resolve_text(bad.dump()), "\"restitution\" has 2 entries, expected 1");
  bad["restitution"] = {-0.5};
  expect_one_error_line(resolve_text(bad.dump()), "\"restitution\" entry 0 must be in [0, 1]");
  bad["law"] = "anitescu_potra";
  bad["restitution"] = 0.5;
  expect_one_error_line(resolve_text(bad.dump()), "restitution");
}

TEST(CliRouth, TrajectoryStartsAtTheApproachAndEndsAtTheOutcome) {
  Json input = corner_a(1.0);
  input["law"] = "routh";
  input["step"] = 0.1;
  input["trajectory"] = true;
  const Json outcome = resolve_ok(input)["outcomes"][0];
  ASSERT_TRUE(outcome.contains("trajectory"));
  const Json& trajectory = outcome["trajectory"];
  // v⁻ and one velocity after each increment.
  ASSERT_EQ(trajectory.size(), outcome["lcps"].get<std::size_t>() + 1);
  EXPECT_EQ(numbers(trajectory.front()), (std::vector<double>{0, -1, 0}));
  EXPECT_EQ(numbers(trajectory.back()), numbers(outcome["velocity"]));
  // Every increment pushes on the contact: ẏ − 0.5 θ̇ (its u_n) increases.
  double previous = -1.0;
  for (std::size_t k = 1; k < trajectory.size(); ++k) {
    const std::vector<double> v = numbers(trajectory[k]);
    const double normal_velocity = v[1] - 0.5 * v[2];
    EXPECT_GT(normal_velocity, previous) << "increment " << k;
    previous = normal_velocity;
  }
}

TEST(CliRouth, StepLimitWithoutFallbackReturnsTheCollidingVelocity) {
  // One increment of at most h = 0.1 cannot stop a contact that needs 0.85.
  Json input = corner_a(1.0);
  input["law"] = "routh";
  input["step"] = 0.1;
  input["max_steps"] = 1;
  input["finish_with_anitescu_potra"] = false;
  const Json output = resolve_ok(input);
  EXPECT_EQ(output["status"], "step_limit_reached");
  EXPECT_TRUE(output.contains("message"));
  EXPECT_EQ(output["terminated_samples"], 0);
  const Json& outcome = output["outcomes"][0];
  EXPECT_FALSE(outcome["terminated"].get<bool>());
  EXPECT_FALSE(outcome["finished_by_fallback"].get<bool>());
  EXPECT_EQ(outcome["lcps"], 1);
  EXPECT_LE(outcome["normal_impulses"][0].get<double>(), 0.1);
  // u_n = −1 + 1.6 Λn + (−1.2) Λt < 0 while Λn ≤ 0.1.
  EXPECT_LT(outcome["normal_velocities"][0].get<double>(), -0.5);
}

TEST(CliRouth, StepLimitWithFallbackFinishesWithAnitescuPotra) {
  // From a sticking partial impact, the one-contact LCP completes the same
  // linear impulse: the closed form, but flagged as not terminated.
  Json input = corner_a(1.0);
  input["law"] = "routh";
  input["step"] = 0.1;
  input["max_steps"] = 1;
  const Json output = resolve_ok(input);
  EXPECT_EQ(output["status"], "step_limit_reached");
  const Json& outcome = output["outcomes"][0];
  EXPECT_FALSE(outcome["terminated"].get<bool>());
  EXPECT_TRUE(outcome["finished_by_fallback"].get<bool>());
  const SingleContactAnswer answer = corner_a_answer(1.0);
  expect_near(outcome["velocity"], answer.velocity, kModeSolve, "velocity");
  expect_near(outcome["normal_velocities"], {0.0}, kModeSolve, "normal_velocities");
}

// ── The falling block (Halm & Posa, §5.4.1; demos/data/README.md) ─────────

TEST(CliFallingBlock, AnitescuPotraBringsTheBlockToRest) {
  // Halm & Posa, Fig. 1(b). Rest needs M(0 − v⁻) = J_nᵀ Λn + J_tᵀ Λt: y gives
  // ΛA + ΛB = v₀, θ gives 0.5 (ΛB − ΛA) + ΛtA + ΛtB = 0 and x gives
  // ΛtA + ΛtB = 0, so ΛA = ΛB = v₀/2. The split of Λt between the corners is
  // statically indeterminate; only its sum (0) is checked.
  for (const bool all : {true, false}) {
    SCOPED_TRACE(all);
    Json input = falling_block("anitescu_potra");
    input["all_solutions"] = all;
    const Json output = resolve_ok(input);
    EXPECT_EQ(output["status"], "success");
    ASSERT_EQ(output["outcomes"].size(), 1u);
    const Json& outcome = output["outcomes"][0];
    expect_near(outcome["velocity"], {0, 0, 0}, kModeSolve, "velocity");
    expect_near(outcome["normal_impulses"], {kBlockSpeed / 2, kBlockSpeed / 2}, kModeSolve,
                "normal_impulses");
    const std::vector<double> tangential = numbers(outcome["tangential_impulses"]);
    ASSERT_EQ(tangential.size(), 2u);
    EXPECT_NEAR(tangential[0] + tangential[1], 0.0, kModeSolve);
    EXPECT_NEAR(outcome["energy_change"].get<double>(), -0.5 * kBlockSpeed * kBlockSpeed,
                kModeSolve);
  }
}

std::vector<double> mirrored(const std::vector<double>& v) { return {-v[0], v[1], -v[2]}; }

TEST(CliFallingBlock, SequentialOrdersAreMirrorImages) {
  // Derivation in demos/data/README.md: A first ends at v₀ (0.21, 0.105,
  // −0.21), rocking about B; B first is the mirror image (x, θ negated).
  const std::vector<double> a_first = {0.21 * kBlockSpeed, 0.105 * kBlockSpeed,
                                       -0.21 * kBlockSpeed};
  Json input = falling_block("sequential");
  input["trajectory"] = true;
  input["order"] = {0, 1};
  const Json first = resolve_ok(input)["outcomes"][0];
  input["order"] = {1, 0};
  const Json second = resolve_ok(input)["outcomes"][0];
  expect_near(first["velocity"], a_first, kModeSolve, "order [0, 1]");
  expect_near(second["velocity"], mirrored(a_first), kModeSolve, "order [1, 0]");
  expect_near(second["velocity"], mirrored(numbers(first["velocity"])), kModeSolve, "mirror");
  expect_near(first["normal_impulses"], {0.85 * kBlockSpeed, 0.255 * kBlockSpeed}, kModeSolve,
              "impulses [0, 1]");
  expect_near(second["normal_impulses"], {0.255 * kBlockSpeed, 0.85 * kBlockSpeed}, kModeSolve,
              "impulses [1, 0]");
  expect_near(first["tangential_impulses"], {0.3 * kBlockSpeed, -0.09 * kBlockSpeed},
              kModeSolve, "tangential impulses [0, 1]");
  // The corner that lifts separates at 0.21 v₀; the pivot neither moves
  // nor slips.
  expect_near(first["normal_velocities"], {0.21 * kBlockSpeed, 0.0}, kModeSolve, "u_n");
  expect_near(first["tangential_velocities"], {0.0, 0.0}, kModeSolve, "u_t");
  EXPECT_EQ(first["lcps"], 2);
  // Trajectory: v⁻, after A (pivoting about A: v₀ (0.3, −0.15, −0.3)), v⁺.
  ASSERT_EQ(first["trajectory"].size(), 3u);
  expect_near(first["trajectory"][1],
              {0.3 * kBlockSpeed, -0.15 * kBlockSpeed, -0.3 * kBlockSpeed}, kModeSolve,
              "after A");
}

TEST(CliFallingBlock, SequentialStepLimitWhenTheOrderSkipsAContact) {
  // Order [0] never visits B, which is struck once A has stopped: the pass
  // limit ends it, with the velocity after A's impact (still colliding).
  Json input = falling_block("sequential");
  input["order"] = {0};
  input["max_rounds"] = 3;
  const Json output = resolve_ok(input);
  EXPECT_EQ(output["status"], "step_limit_reached");
  EXPECT_TRUE(output.contains("message"));
  const Json& outcome = output["outcomes"][0];
  EXPECT_FALSE(outcome["terminated"].get<bool>());
  expect_near(outcome["velocity"], {0.3 * kBlockSpeed, -0.15 * kBlockSpeed, -0.3 * kBlockSpeed},
              kModeSolve, "after A");
  EXPECT_NEAR(outcome["normal_velocities"][1].get<double>(), -0.3 * kBlockSpeed, kModeSolve);
}

TEST(CliFallingBlock, EveryRouthSampleRocksOnOneCornerOrRests) {
  // The bundled example (h = 0.3, N = 10, 16 samples). Checked per sample:
  //  • Algorithm 1 ended it and nothing collides;
  //  • one corner stays on the ground: an increment's capped contacts end at
  //    u_n ≤ 0 and its uncapped ones at u_n = 0 or with no impulse (routh.h
  //    eq. (73)–(74)), so the last increment leaves a contact at u_n = 0;
  //  • that corner sticks and |θ̇| is at most the sequential outcome's
  //    0.21 v₀ (Halm & Posa, Fig. 9: rest, the two sequential outcomes, and
  //    scaled-down rocking in between);
  //  • the printed contact velocities and energy are those of v⁺, and the
  //    impulses explain v⁺ (y and θ momentum; the x balance only fixes
  //    ΛtA + ΛtB = Δẋ, which the θ row then uses).
  const Json input = load_data("falling_block_routh.json");
  const Json output = resolve_ok(input);
  EXPECT_EQ(output["status"], "success") << output.value("message", "");
  EXPECT_EQ(output["step"].get<double>(), 0.3);
  const int samples = input["samples"].get<int>();
  EXPECT_EQ(output["samples"], samples);
  EXPECT_EQ(output["terminated_samples"], samples);
  ASSERT_EQ(output["outcomes"].size(), static_cast<std::size_t>(samples));
  const double speed_tolerance = kSeparation * kBlockSpeed;
  const double energy_before = 0.5 * kBlockSpeed * kBlockSpeed;
  double lcps = 0.0;
  for (std::size_t k = 0; k < output["outcomes"].size(); ++k) {
    SCOPED_TRACE("sample " + std::to_string(k));
    const Json& outcome = output["outcomes"][k];
    EXPECT_TRUE(outcome["terminated"].get<bool>());
    EXPECT_FALSE(outcome["colliding"].get<bool>());
    const std::vector<double> v = numbers(outcome["velocity"]);
    const std::vector<double> un = numbers(outcome["normal_velocities"]);
    const std::vector<double> ut = numbers(outcome["tangential_velocities"]);
    const std::vector<double> lambda = numbers(outcome["normal_impulses"]);
    ASSERT_EQ(v.size(), 3u);
    ASSERT_EQ(un.size(), 2u);
    ASSERT_EQ(ut.size(), 2u);
    ASSERT_EQ(lambda.size(), 2u);
    EXPECT_NEAR(un[0], v[1] - 0.5 * v[2], kLemke);
    EXPECT_NEAR(un[1], v[1] + 0.5 * v[2], kLemke);
    EXPECT_NEAR(ut[0], v[0] + v[2], kLemke);
    EXPECT_NEAR(ut[1], v[0] + v[2], kLemke);
    EXPECT_GE(std::min(un[0], un[1]), -speed_tolerance);
    EXPECT_NEAR(std::min(un[0], un[1]), 0.0, speed_tolerance);
    EXPECT_NEAR(ut[0], 0.0, speed_tolerance);
    EXPECT_LE(std::abs(v[2]), 0.21 * kBlockSpeed + speed_tolerance);
    EXPECT_NEAR(v[1] - (-kBlockSpeed), lambda[0] + lambda[1], kLemke);
    EXPECT_NEAR(kInertia * v[2], 0.5 * (lambda[1] - lambda[0]) + v[0], kLemke);
    const double energy_after = 0.5 * (v[0] * v[0] + v[1] * v[1] + kInertia * v[2] * v[2]);
    EXPECT_NEAR(outcome["energy_change"].get<double>(), energy_after - energy_before, kLemke);
    EXPECT_LE(outcome["energy_change"].get<double>(), 0.0);
    const int steps = outcome["lcps"].get<int>();
    EXPECT_GE(steps, 1);
    EXPECT_LE(steps, input["max_steps"].get<int>());
    lcps += steps;
  }
  EXPECT_NEAR(output["lcps_per_sample"].get<double>(), lcps / samples, 1e-15 * lcps);
}

// ── 3-D: the rolling ball (two tangent rows per contact) ──────────────────

TEST(CliRollingBall, EveryLawRollsAtFiveSevenths) {
  // demos/data/README.md: stick, v⁺ = (5/7, 0, 0, 0, 5/7, 0), Λ_t = (−2/7, 0),
  // ΔE = ½ (5/7)² (1 + 2/5) − 1 = −9/14.
  const std::vector<double> rolling = {5.0 / 7, 0, 0, 0, 5.0 / 7, 0};
  for (const char* law : {"anitescu_potra", "sequential", "routh"}) {
    SCOPED_TRACE(law);
    const double tolerance = std::string(law) == "routh" ? kLemke : kModeSolve;
    const Json output = resolve_ok(rolling_ball(law, 0.5));
    EXPECT_EQ(output["status"], "success");
    ASSERT_EQ(output["outcomes"].size(), 1u);
    const Json& outcome = output["outcomes"][0];
    expect_near(outcome["velocity"], rolling, tolerance, "velocity");
    expect_near(outcome["normal_impulses"], {1.0}, tolerance, "normal_impulses");
    expect_near(outcome["tangential_impulses"], {-2.0 / 7, 0.0}, tolerance, "Λ_t");
    expect_near(outcome["tangential_velocities"], {0.0, 0.0}, tolerance, "u_t");
    EXPECT_NEAR(outcome["energy_change"].get<double>(), -9.0 / 14, tolerance);
  }
}

TEST(CliRollingBall, BothIncrementSolversRollAtFiveSevenths) {
  // routh.h, "LCP solvers": the box form (d = 4) gives the same outcome.
  const std::vector<double> rolling = {5.0 / 7, 0, 0, 0, 5.0 / 7, 0};
  for (const char* solver : {"lemke", "box_pivoting", "automatic"}) {
    SCOPED_TRACE(solver);
    Json input = rolling_ball("routh", 0.5);
    input["increment_solver"] = solver;
    const Json output = resolve_ok(input);
    EXPECT_EQ(output["status"], "success");
    expect_near(output["outcomes"][0]["velocity"], rolling, kLemke, "velocity");
    expect_near(output["outcomes"][0]["tangential_impulses"], {-2.0 / 7, 0.0}, kLemke, "Λ_t");
  }
}

TEST(CliBoxStack, EitherIncrementSolverStopsTheFall) {
  // demos/data/README.md: two stacked boxes land; every sample of either
  // solver ends with no corner approaching and at most the kinetic energy
  // of the fall lost (½ · 2 · v₀² with both boxes at rest).
  const double lost = -kBlockSpeed * kBlockSpeed;
  for (const char* solver : {"box_pivoting", "lemke"}) {
    SCOPED_TRACE(solver);
    Json input = load_data("box_stack_routh.json");
    input["increment_solver"] = solver;
    const Json output = resolve_ok(input);
    EXPECT_EQ(output["status"], "success");
    ASSERT_EQ(output["outcomes"].size(), 8u);
    for (const Json& outcome : output["outcomes"]) {
      for (const double u : numbers(outcome["normal_velocities"])) EXPECT_GE(u, -kSeparation);
      EXPECT_LT(outcome["energy_change"].get<double>(), 0.0);
      EXPECT_GE(outcome["energy_change"].get<double>(), lost - kLemke);
    }
  }
}

TEST(CliRollingBall, LowFrictionSlidesWhateverTheConeDirections) {
  // μ = 0.1 < 2/7: the full μ Λn = 0.1 opposes the slip along x, which is a
  // cone direction for every d = 4k, so the polyhedral cone is exact:
  // v⁺ = (0.9, 0, 0, 0, 0.25, 0), u_t⁺ = (0.9 − 0.25, 0).
  for (const char* law : {"anitescu_potra", "sequential", "routh"}) {
    for (const int directions : {0, 4, 8}) {
      SCOPED_TRACE(std::string(law) + " d=" + std::to_string(directions));
      const double tolerance = std::string(law) == "routh" ? kLemke : kModeSolve;
      Json input = rolling_ball(law, 0.1);
      input["cone_directions"] = directions;
      const Json outcome = resolve_ok(input)["outcomes"][0];
      expect_near(outcome["velocity"], {0.9, 0, 0, 0, 0.25, 0}, tolerance, "velocity");
      expect_near(outcome["tangential_velocities"], {0.65, 0.0}, tolerance, "u_t");
      expect_near(outcome["tangential_impulses"], {-0.1, 0.0}, tolerance, "Λ_t");
    }
  }
}

// ── No contacts ─────────────────────────────────────────────────────────────

TEST(CliFrictional, NoContactsLeaveTheVelocityBitForBit) {
  for (const char* law : {"anitescu_potra", "sequential", "routh"}) {
    SCOPED_TRACE(law);
    Json input = Json::parse(R"({"masses": [2, 3], "normals": [], "tangents": [],
        "friction": [], "velocity": [0.1, 0.33333333333333331]})");
    input["law"] = law;
    const Json output = resolve_ok(input);
    EXPECT_EQ(output["status"], "success");
    ASSERT_EQ(output["outcomes"].size(), 1u);
    EXPECT_EQ(numbers(output["outcomes"][0]["velocity"]), (std::vector<double>{0.1, 1.0 / 3.0}));
    EXPECT_TRUE(output["outcomes"][0]["normal_impulses"].empty());
    EXPECT_EQ(output["outcomes"][0]["energy_change"].get<double>(), 0.0);
  }
}

// ── Determinism ─────────────────────────────────────────────────────────────

std::string resolve_output(const Json& input) {
  const CommandRun result = resolve_text(input.dump());
  EXPECT_EQ(result.exit_code, kExitSuccess) << result.err;
  return result.out;
}

TEST(CliRouthDeterminism, SameSeedSameOutputWhateverTheThreads) {
  Json input = load_data("falling_block_routh.json");
  const std::string reference = resolve_output(input);
  EXPECT_EQ(resolve_output(input), reference);
  for (const int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    input["threads"] = threads;
    EXPECT_EQ(resolve_output(input), reference);
  }
}

std::vector<std::vector<double>> sample_velocities(const Json& output) {
  std::vector<std::vector<double>> velocities;
  for (const Json& outcome : output["outcomes"]) velocities.push_back(numbers(outcome["velocity"]));
  return velocities;
}

TEST(CliRouthDeterminism, SeedAndSamplerChangeTheSamples) {
  // 16 samples of continuous random caps: two streams giving the same 16
  // outcomes would mean the key is ignored.
  Json input = load_data("falling_block_routh.json");
  const auto reference = sample_velocities(resolve_ok(input));
  input["seed"] = input["seed"].get<int>() + 1;
  EXPECT_NE(sample_velocities(resolve_ok(input)), reference);
  input = load_data("falling_block_routh.json");
  input["sampler"] = "low_discrepancy";
  EXPECT_NE(sample_velocities(resolve_ok(input)), reference);
  input["sampler"] = "uniform";
  EXPECT_EQ(sample_velocities(resolve_ok(input)), reference);
}

TEST(CliRouthDeterminism, OneSampleIsSampleZeroOfTheSet) {
  // routh.h: sample k of a seed is the same whatever else was drawn.
  Json input = load_data("falling_block_routh.json");
  const Json set = resolve_ok(input);
  input["samples"] = 1;
  const Json single = resolve_ok(input);
  ASSERT_EQ(single["outcomes"].size(), 1u);
  ASSERT_FALSE(set["outcomes"].empty());
  for (const char* key :
       {"velocity", "normal_impulses", "normal_velocities", "tangential_velocities"}) {
    SCOPED_TRACE(key);
    EXPECT_EQ(numbers(single["outcomes"][0][key]), numbers(set["outcomes"][0][key]));
  }
  EXPECT_EQ(single["outcomes"][0]["lcps"], set["outcomes"][0]["lcps"]);
}

// ── Keys and help ───────────────────────────────────────────────────────────

bool contains_key(const Law& law, const std::string& key) {
  return std::find(law.keys.begin(), law.keys.end(), key) != law.keys.end();
}

// A valid input for `law` with nothing optional: its key check is what a
// stray key meets first.
Json minimal_input(const Law& law) {
  const bool frictional = contains_key(law, "friction");
  Json input = frictional ? corner_a(1.0)
                          : Json::parse(R"({"masses": [1, 1], "normals": [[-1, 1]],
                                            "velocity": [1, 0]})");
  input["law"] = law.name;
  return input;
}

TEST(CliKeys, AKeyOfAnotherLawNamesTheLawsThatReadIt) {
  int checked = 0;
  for (const Law& law : laws()) {
    for (const Law& other : laws()) {
      for (const std::string& key : other.keys) {
        if (contains_key(law, key)) continue;
        SCOPED_TRACE(law.name + " with " + key);
        Json input = minimal_input(law);
        input[key] = 1;
        const CommandRun result = resolve_text(input.dump());
        expect_one_error_line(result, quote(key) + " applies only to law");
        EXPECT_NE(result.err.find("not " + quote(law.name)), std::string::npos) << result.err;
        EXPECT_NE(result.err.find(other.name), std::string::npos) << result.err;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 40);  // 5 laws with disjoint keys: dozens of pairs
}

TEST(CliKeys, MinimalInputsRunForEveryLaw) {
  // The inputs the previous test builds on are themselves accepted.
  for (const Law& law : laws()) {
    SCOPED_TRACE(law.name);
    EXPECT_EQ(resolve_ok(minimal_input(law))["status"], "success");
  }
}

TEST(CliKeys, HelpDocumentsEveryLawAndKey) {
  const CommandRun result = run_arguments({"--help"});
  ASSERT_EQ(result.exit_code, kExitSuccess);
  const auto documented = [&result](const std::string& word) {
    // As a whole word: "step" must not be found inside "max_steps".
    for (std::size_t at = result.out.find(word); at != std::string::npos;
         at = result.out.find(word, at + 1)) {
      const auto word_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
      };
      const bool starts = at == 0 || !word_char(result.out[at - 1]);
      const std::size_t end = at + word.size();
      const bool ends = end == result.out.size() || !word_char(result.out[end]);
      if (starts && ends) return true;
    }
    return false;
  };
  for (const std::string& key : problem_keys()) EXPECT_TRUE(documented(key)) << key;
  for (const Law& law : laws()) {
    EXPECT_TRUE(documented("law " + law.name)) << law.name;  // its section
    for (const std::string& key : law.keys) EXPECT_TRUE(documented(key)) << law.name << ": " << key;
  }
  EXPECT_TRUE(documented("lcps_per_sample"));
  EXPECT_TRUE(documented("terminated"));
}

// ── Malformed frictional inputs ─────────────────────────────────────────────

// The falling block (law routh, h = 0.3, N = 10, one sample) with one
// defect, given as an RFC 7386 merge patch (null removes a key).
MalformedCase block_with(std::string name, const char* patch, std::string expected) {
  Json input = Json::parse(R"({"law": "routh",
      "inverse_mass": [[1, 0, 0], [0, 1, 0], [0, 0, 2.4]],
      "normals": [[0, 1, -0.5], [0, 1, 0.5]], "tangents": [[1, 0, 1], [1, 0, 1]],
      "friction": [1, 1], "velocity": [0, -0.4429, 0], "step": 0.3, "max_steps": 10})");
  input.merge_patch(Json::parse(patch));
  return {std::move(name), input.dump(), std::move(expected)};
}

// The same block under another frictional law, without the routh keys.
MalformedCase block_law_with(std::string name, const std::string& law, const char* patch,
                             std::string expected) {
  Json patched = Json::parse(patch);
  patched["law"] = law;
  if (!patched.contains("step")) patched["step"] = nullptr;
  if (!patched.contains("max_steps")) patched["max_steps"] = nullptr;
  const std::string text = patched.dump();
  return block_with(std::move(name), text.c_str(), std::move(expected));
}

class FrictionalMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(FrictionalMalformed, ExitsTwoWithOneLineNamingTheKey) {
  expect_one_error_line(resolve_text(GetParam().input), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Problem, FrictionalMalformed,
    ::testing::Values(
        block_with("FrictionWrongSize", R"({"friction": [1, 1, 1]})",
                   R"("friction" has 3 entries, expected 2 (one per contact))"),
        block_with("FrictionMissing", R"({"friction": null})",
                   R"(missing required key "friction")"),
        block_with("FrictionNotAnArray", R"({"friction": 1})",
                   R"("friction" must be an array of numbers (got 1))"),
        block_with("FrictionNegative", R"({"friction": [1, -0.5]})", "friction entry 1"),
        block_with("TangentsMissing", R"({"tangents": null})",
                   R"(missing required key "tangents")"),
        block_with("TangentsWrongRowCount", R"({"tangents": [[1, 0, 1], [1, 0, 1], [1, 0, 1]]})",
                   R"("tangents" needs 2 or 4 rows for 2 contacts)"),
        block_with("TangentsOneRowForOneContact",
                   R"({"normals": [[0, 1, -0.5]], "friction": [1], "tangents": [[1, 0, 1],
                       [0, 0, 1], [1, 0, 0]]})",
                   R"("tangents" needs 1 or 2 rows for 1 contact ()"),
        block_with("TangentsWithoutContacts",
                   R"({"normals": [], "friction": [], "tangents": [[1, 0, 1]]})",
                   R"("tangents" has 1 row, expected none)"),
        block_with("TangentsRowTooShort", R"({"tangents": [[1, 0], [1, 0, 1]]})",
                   R"("tangents" row 0 has 2 entries, expected 3)"),
        block_with("TangentsNotAnArray", R"({"tangents": "x"})",
                   R"("tangents" must be an array of rows (got "x"))"),
        block_with("TangentRowZero", R"({"tangents": [[0, 0, 0], [1, 0, 1]]})", "tangents row 0"),
        block_with("TangentOffsetsWrongSize", R"({"tangent_offsets": [0]})",
                   R"("tangent_offsets" has 1 entries, expected 2 (one per row of "tangents"))"),
        block_with("OffsetsWrongSize", R"({"offsets": [0]})",
                   R"("offsets" has 1 entries, expected 2)"),
        block_with("ConeDirectionsInAPlanarProblem", R"({"cone_directions": 4})",
                   R"("cone_directions" must be 2 (or 0, automatic) in a planar problem)"),
        block_with("ConeDirectionsTwoIn3D",
                   R"({"tangents": [[1, 0, 1], [0, 0, 1], [1, 0, 1], [0, 0, 1]],
                       "cone_directions": 2})",
                   R"("cone_directions" must be in [3, 64])"),
        block_with("ConeDirectionsTooMany", R"({"cone_directions": 65})",
                   R"("cone_directions" must be an integer in [0, 64] (got 65))"),
        block_with("VelocityNaN", R"({"velocity": [0, "NaN", 0]})",
                   R"("velocity" entry 1 is not a number)"),
        block_with("UnknownKey", R"({"frictoin": [1, 1]})", R"(unknown key "frictoin")"),
        block_with("RestitutionOutOfRangeForRouth", R"({"restitution": 2})",
                   R"("restitution" must be in [0, 1] (got 2.0))"),
        block_with("ToiForRouth", R"({"toi": [0, 0]})",
                   R"("toi" applies only to law propagative, not "routh")")),
    case_name);

INSTANTIATE_TEST_SUITE_P(
    Routh, FrictionalMalformed,
    ::testing::Values(
        block_with("NegativeStep", R"({"step": -0.3})", R"("step" must be >= 0 (got -0.3))"),
        block_with("StepNotANumber", R"({"step": "0.3"})", R"("step" is not a number)"),
        block_with("ZeroMaxSteps", R"({"max_steps": 0})",
                   R"("max_steps" must be an integer in [1, 1000000] (got 0))"),
        block_with("HugeMaxSteps", R"({"max_steps": 1e12})",
                   R"("max_steps" must be an integer in [1, 1000000])"),
        block_with("ZeroSamples", R"({"samples": 0})",
                   R"("samples" must be an integer in [1, 1048576] (got 0))"),
        block_with("FractionalSamples", R"({"samples": 2.5})",
                   R"("samples" must be an integer in [1, 1048576] (got 2.5))"),
        block_with("TooManySamples", R"({"samples": 1048577})",
                   R"("samples" must be an integer in [1, 1048576] (got 1048577))"),
        block_with("NegativeSeed", R"({"seed": -1})",
                   R"("seed" must be a non-negative integer (got -1))"),
        block_with("UnknownSampler", R"({"sampler": "sobol"})",
                   R"("sampler" must be one of: uniform, low_discrepancy (got "sobol"))"),
        block_with("UnknownIncrementSolver", R"({"increment_solver": "pgs"})",
                   R"("increment_solver" must be one of: automatic, lemke, box_pivoting (got "pgs"))"),
        block_with("NegativeThreads", R"({"threads": -2})",
                   R"("threads" must be an integer in [0, 1024] (got -2))"),
        block_with("NegativeEpsilon", R"({"epsilon": -1e-3})",
                   R"("epsilon" must be >= 0 (got -0.001))"),
        block_with("FallbackNotABool", R"({"finish_with_anitescu_potra": 1})",
                   R"("finish_with_anitescu_potra" must be true or false (got 1))"),
        block_with("TrajectoryOfASet", R"({"samples": 4, "trajectory": true})",
                   R"("trajectory" needs a single sample)"),
        block_with("TrajectoryWithEpsilon", R"({"epsilon": 0.01, "trajectory": true})",
                   R"("trajectory" needs a single sample)"),
        block_with("StepFactorWithAStep", R"({"automatic_step_factor": 3})",
                   R"("automatic_step_factor" applies only to the automatic step)"),
        block_with("AutomaticStepWithAStep", R"({"automatic_step": "simultaneous"})",
                   R"("automatic_step" applies only to the automatic step)"),
        block_with("UnknownAutomaticStep", R"({"step": null, "automatic_step": "cluster"})",
                   R"("automatic_step" must be one of: automatic, single_contact, simultaneous (got "cluster"))"),
        block_with("ZeroStepFactor", R"({"step": null, "automatic_step_factor": 0})",
                   R"("automatic_step_factor" must be > 0 (got 0.0))"),
        block_with("OrderForRouth", R"({"order": [0, 1]})",
                   R"("order" applies only to law sequential, not "routh")"),
        block_with("PolicyForRouth", R"({"policy": "all"})",
                   R"("policy" applies only to law propagative, not "routh")")),
    case_name);

INSTANTIATE_TEST_SUITE_P(
    OtherLaws, FrictionalMalformed,
    ::testing::Values(
        block_law_with("StepForAnitescuPotra", "anitescu_potra", R"({"step": 0.3})",
                       R"("step" applies only to law routh, not "anitescu_potra")"),
        block_law_with("SeedForSequential", "sequential", R"({"seed": 1})",
                       R"("seed" applies only to laws propagative, routh, not "sequential")"),
        block_law_with("TrajectoryForAnitescuPotra", "anitescu_potra", R"({"trajectory": true})",
                       R"("trajectory" applies only to laws routh, sequential, not )"),
        block_law_with("AllSolutionsNotABool", "anitescu_potra", R"({"all_solutions": "yes"})",
                       R"("all_solutions" must be true or false (got "yes"))"),
        block_law_with("ZeroModeBudget", "anitescu_potra", R"({"max_mode_combinations": 0})",
                       R"("max_mode_combinations" must be an integer in [1, 16777216] (got 0))"),
        block_law_with("OrderOutOfRange", "sequential", R"({"order": [0, 2]})",
                       R"("order" entry 1 must be a contact index in [0, 1] (got 2))"),
        block_law_with("OrderNegative", "sequential", R"({"order": [-1]})",
                       R"("order" entry 0 must be a contact index in [0, 1] (got -1))"),
        block_law_with("OrderFractional", "sequential", R"({"order": [0.5]})",
                       R"("order" entry 0 must be a contact index in [0, 1] (got 0.5))"),
        block_law_with("OrderNotAnArray", "sequential", R"({"order": 0})",
                       R"("order" must be an array of contact indices (got 0))"),
        block_law_with("OrderWithoutContacts", "sequential",
                       R"({"normals": [], "friction": [], "tangents": [], "order": [0]})",
                       R"("order" entry 0 must be a contact index (there are no contacts))"),
        block_law_with("ZeroRounds", "sequential", R"({"max_rounds": 0})",
                       R"("max_rounds" must be an integer in [1, 1000000] (got 0))"),
        block_law_with("TangentsForPlastic", "plastic", R"({})",
                       R"("tangents" applies only to laws routh, anitescu_potra, sequential, )"
                       R"(not "plastic")")),
    case_name);

// ── The real executable ─────────────────────────────────────────────────────

#ifdef SIMPACT_HAVE_POPEN
TEST(CliFrictionalBinary, ResolvesTheBundledExamples) {
  const CommandRun block =
      run_shell(binary() + " resolve '" + data_path("falling_block_routh.json") + "'");
  ASSERT_EQ(block.exit_code, kExitSuccess) << block.out;
  const Json set = Json::parse(block.out);
  EXPECT_EQ(set["samples"], load_data("falling_block_routh.json")["samples"]);
  EXPECT_EQ(set["outcomes"].size(), set["samples"].get<std::size_t>());
  // Same bytes as the in-process run: the binary adds nothing.
  EXPECT_EQ(block.out, resolve_text(load_data("falling_block_routh.json").dump()).out);

  const CommandRun ball =
      run_shell(binary() + " resolve - < '" + data_path("rolling_ball_3d.json") + "'");
  ASSERT_EQ(ball.exit_code, kExitSuccess) << ball.out;
  expect_near(Json::parse(ball.out)["outcomes"][0]["velocity"], {5.0 / 7, 0, 0, 0, 5.0 / 7, 0},
              kModeSolve, "rolling ball");
}

TEST(CliFrictionalBinary, InvalidFrictionalInputExitsTwo) {
  const CommandRun result = run_shell(
      "echo '{\"law\": \"routh\", \"masses\": [1], \"normals\": [[1]], \"tangents\": [[1]], "
      "\"velocity\": [-1], \"friction\": [1, 2]}' | " +
      binary() + " resolve - 2>&1");
  EXPECT_EQ(result.exit_code, kExitInputError);
  EXPECT_EQ(result.out,
            "error: \"friction\" has 2 entries, expected 1 (one per contact)\n");
}
#endif

}  // namespace
}  // namespace simpact::cli
