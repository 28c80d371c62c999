// Tests of the `simpact` command-line tool: the commands run in-process on
// string streams, plus a few runs of the real binary.
#include "resolve_support.h"

#include <simpact_cli/cli.h>
#include <simpact_cli/resolve.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace simpact::cli {
namespace {

// The cradle's outcome is exact in exact arithmetic and each reflection of
// unit velocities adds at most a few ulps of rounding.
constexpr double kExact = 1e-12;

using namespace testing;

void expect_cradle_outcome(const Json& outcome) {
  const std::vector<double> velocity = numbers(outcome["velocity"]);
  ASSERT_EQ(velocity.size(), 3u);
  EXPECT_NEAR(velocity[0], 0.0, kExact);
  EXPECT_NEAR(velocity[1], 0.0, kExact);
  EXPECT_NEAR(velocity[2], 1.0, kExact);
}

TEST(CliResolve, CradleFileMovesOnlyTheLastBall) {
  const Json output = resolve_ok(load_data("newtons_cradle_3.json"));
  EXPECT_EQ(output["status"], "success");
  EXPECT_FALSE(output.contains("message"));
  EXPECT_FALSE(output.contains("indeterminacy"));
  EXPECT_FALSE(output.contains("sequences_explored"));
  ASSERT_EQ(output["outcomes"].size(), 1u);
  expect_cradle_outcome(output["outcomes"][0]);
  // Only the first contact approaches; the second is struck once the first
  // has been reflected.
  EXPECT_EQ(output["outcomes"][0]["sequence"], Json::parse("[0, 1]"));
  EXPECT_NEAR(output["energy_before"].get<double>(), 0.5, kExact);
  EXPECT_NEAR(output["energy_after"].get<double>(), 0.5, kExact);
  EXPECT_EQ(output["reflections"], 2);
  EXPECT_GE(output["reflection_cap"].get<std::int64_t>(), 2);
}

TEST(CliResolve, CradleWithPolicyAllHasOneOutcome) {
  Json input = load_data("newtons_cradle_3.json");
  input["policy"] = "all";
  const Json output = resolve_ok(input);
  EXPECT_EQ(output["status"], "success");
  ASSERT_EQ(output["outcomes"].size(), 1u);  // Seghete & Murphey 2014, Theorem 3
  expect_cradle_outcome(output["outcomes"][0]);
  ASSERT_TRUE(output.contains("indeterminacy"));
  EXPECT_NEAR(output["indeterminacy"].get<double>(), 0.0, kExact);
  EXPECT_EQ(output["sequences_explored"], 1);  // no choice: one contact approaches
}

TEST(CliResolve, IndeterminateDemosHaveTwoOutcomes) {
  for (const char* name : {"billiard_break.json", "two_balls_wall.json"}) {
    SCOPED_TRACE(name);
    const Json output = resolve_ok(load_data(name));
    EXPECT_EQ(output["status"], "success");
    EXPECT_EQ(output["outcomes"].size(), 2u);
    EXPECT_GT(output["indeterminacy"].get<double>(), 0.0);
    EXPECT_NEAR(output["energy_after"].get<double>(), output["energy_before"].get<double>(),
                kExact);
  }
}

TEST(CliResolve, BilliardOutcomesAreMirrorImages) {
  // The break is symmetric about the x axis: swapping a and b and negating
  // every y maps one order's outcome onto the other's.
  const Json output = resolve_ok(load_data("billiard_break.json"));
  ASSERT_EQ(output["outcomes"].size(), 2u);
  const std::vector<double> first = numbers(output["outcomes"][0]["velocity"]);
  const std::vector<double> second = numbers(output["outcomes"][1]["velocity"]);
  ASSERT_EQ(first.size(), 6u);
  ASSERT_EQ(second.size(), 6u);
  const std::vector<double> mirrored = {first[2],  -first[3], first[0],
                                        -first[1], first[4],  -first[5]};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(second[i], mirrored[i], kExact) << i;
}

TEST(CliResolve, TwoBallsWallMatchesThePaper) {
  // Seghete & Murphey 2010, §III-B.3, prints the matrices of v4a and v4b to
  // four decimals: each entry is off by up to 5e-5, so with v0 = (-1, -2) a
  // velocity entry is off by up to 5e-5 * (1 + 2) = 1.5e-4. The tolerance is
  // twice that bound.
  constexpr double kPrinted = 3e-4;
  const std::vector<std::vector<double>> expected = {
      {0.9955 + 2 * 0.0907, -0.0998 + 2 * 0.9955},  // v4a v0, wall first
      {0.9955 - 2 * 0.0907, 0.0998 + 2 * 0.9955}};  // v4b v0, balls first
  const Json output = resolve_ok(load_data("two_balls_wall.json"));
  ASSERT_EQ(output["outcomes"].size(), 2u);
  for (const Json& outcome : output["outcomes"]) {
    const std::vector<double> velocity = numbers(outcome["velocity"]);
    const std::size_t which = outcome["sequence"][0] == 0 ? 0 : 1;
    SCOPED_TRACE(which);
    ASSERT_EQ(velocity.size(), 2u);
    EXPECT_NEAR(velocity[0], expected[which][0], kPrinted);
    EXPECT_NEAR(velocity[1], expected[which][1], kPrinted);
  }
}

TEST(CliResolve, NoContactsLeavesVelocityBitForBit) {
  // 0.1 and 1/3 have no short decimal form: they survive only if the output
  // prints every significant digit.
  const Json output = resolve_ok(Json::parse(R"({"masses": [2, 3], "normals": [],
      "velocity": [0.1, 0.33333333333333331]})"));
  EXPECT_EQ(output["status"], "success");
  ASSERT_EQ(output["outcomes"].size(), 1u);
  EXPECT_EQ(numbers(output["outcomes"][0]["velocity"]), (std::vector<double>{0.1, 1.0 / 3.0}));
  EXPECT_TRUE(output["outcomes"][0]["impulses"].empty());
}

TEST(CliResolve, MassMatrixMatchesItsInverse) {
  const Json with_mass = resolve_ok(Json::parse(R"({"mass": [[2, 1], [1, 2]],
      "normals": [[1, 0]], "velocity": [-1, 0]})"));
  const Json with_inverse = resolve_ok(Json::parse(R"({"inverse_mass": [[0.6666666666666666,
      -0.3333333333333333], [-0.3333333333333333, 0.6666666666666666]],
      "normals": [[1, 0]], "velocity": [-1, 0]})"));
  const std::vector<double> a = numbers(with_mass["outcomes"][0]["velocity"]);
  const std::vector<double> b = numbers(with_inverse["outcomes"][0]["velocity"]);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_NEAR(a[0], b[0], kExact);
  EXPECT_NEAR(a[1], b[1], kExact);
}

TEST(CliResolve, StatusOtherThanSuccessStillExitsZero) {
  Json input = load_data("newtons_cradle_3.json");
  input["max_reflections"] = 1;  // the cradle needs two
  const Json output = resolve_ok(input);
  EXPECT_EQ(output["status"], "reflection_cap_reached");
  EXPECT_TRUE(output.contains("message"));
  EXPECT_EQ(output["reflection_cap"], 1);
}

TEST(CliResolve, DefaultLawCanBeNamed) {
  Json input = load_data("newtons_cradle_3.json");
  input["law"] = "propagative";
  expect_cradle_outcome(resolve_ok(input)["outcomes"][0]);
}

TEST(CliResolve, PlasticCradleMovesTogether) {
  // The plastic impact projects v⁻ = (1, 0, 0) onto {v1 ≤ v2 ≤ v3} in the
  // kinetic metric: equal masses pool their momentum, v⁺ = (1/3, 1/3, 1/3),
  // E⁺ = 3 · ½ · (1/3)² = 1/6. Impulses: ball 1 loses 2/3 through contact 0,
  // ball 3 gains 1/3 through contact 1.
  Json input = load_data("newtons_cradle_3.json");
  input.erase("restitution");  // the plastic law reads neither
  input.erase("policy");
  input["law"] = "plastic";
  const Json output = resolve_ok(input);
  EXPECT_EQ(output["status"], "success");
  ASSERT_EQ(output["outcomes"].size(), 1u);
  const std::vector<double> velocity = numbers(output["outcomes"][0]["velocity"]);
  const std::vector<double> impulses = numbers(output["outcomes"][0]["impulses"]);
  ASSERT_EQ(velocity.size(), 3u);
  ASSERT_EQ(impulses.size(), 2u);
  for (const double v : velocity) EXPECT_NEAR(v, 1.0 / 3.0, kExact);
  EXPECT_NEAR(impulses[0], 2.0 / 3.0, kExact);
  EXPECT_NEAR(impulses[1], 1.0 / 3.0, kExact);
  EXPECT_NEAR(output["energy_before"].get<double>(), 0.5, kExact);
  EXPECT_NEAR(output["energy_after"].get<double>(), 1.0 / 6.0, kExact);
}

TEST(CliResolve, PlasticLawIsPropagativeWithRestitutionZero) {
  // The two spellings of the plastic law must print the same document.
  for (const char* name : {"newtons_cradle_3.json", "billiard_break.json", "two_balls_wall.json"}) {
    SCOPED_TRACE(name);
    Json plastic = load_data(name);
    for (const char* key : {"restitution", "policy", "toi", "seed"}) plastic.erase(key);
    plastic["law"] = "plastic";
    Json propagative = load_data(name);
    propagative["restitution"] = 0;
    propagative.erase("policy");  // "all" adds the enumeration keys
    const CommandRun a = resolve_text(plastic.dump());
    const CommandRun b = resolve_text(propagative.dump());
    ASSERT_EQ(a.exit_code, kExitSuccess) << a.err;
    EXPECT_EQ(a.out, b.out);
  }
}

// The cradle with one defect, given as an RFC 7386 merge patch (null removes
// a key), so that each case shows only what it breaks.
MalformedCase cradle_with(std::string name, const char* patch, std::string expected) {
  Json input = Json::parse(R"({"masses": [1, 1, 1], "normals": [[-1, 1, 0]],
                               "velocity": [1, 0, 0]})");
  input.merge_patch(Json::parse(patch));
  return {std::move(name), input.dump(), std::move(expected)};
}

class CliMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(CliMalformed, ExitsTwoWithOneLineNamingTheKey) {
  expect_one_error_line(resolve_text(GetParam().input), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Values, CliMalformed,
    ::testing::Values(
        cradle_with("NormalsRowTooShort", R"({"normals": [[-1, 1]]})",
                    R"("normals" row 0 has 2 entries, expected 3)"),
        cradle_with("RaggedNormals", R"({"normals": [[-1, 1, 0], [0, -1]]})",
                    R"("normals" row 1 has 2 entries, expected 3)"),
        cradle_with("NormalsRowNotAnArray", R"({"normals": [[-1, 1, 0], 7]})",
                    R"("normals" row 1 must be an array of numbers (got 7))"),
        cradle_with("MassesWrongSize", R"({"masses": [1, 1]})",
                    R"("masses" has 2 entries, expected 3)"),
        cradle_with("OffsetsWrongSize", R"({"offsets": [0, 0]})",
                    R"("offsets" has 2 entries, expected 1)"),
        cradle_with("InverseMassWrongRows", R"({"masses": null, "inverse_mass": [[1, 0, 0]]})",
                    R"("inverse_mass" has 1 rows, expected 3)"),
        cradle_with("AsymmetricInverseMass",
                    R"({"masses": null, "inverse_mass": [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]})",
                    "inverse_mass"),
        cradle_with("IndefiniteInverseMass",
                    R"({"masses": null, "inverse_mass": [[1, 0, 0], [0, -1, 0], [0, 0, 1]]})",
                    "inverse_mass"),
        cradle_with("NaNString", R"({"velocity": [1, "NaN", 0]})",
                    R"("velocity" entry 1 is not a number (got "NaN"))"),
        cradle_with("RestitutionAboveOne", R"({"restitution": 1.5})",
                    R"("restitution" must be in [0, 1] (got 1.5))"),
        cradle_with("RestitutionAsString", R"({"restitution": "1"})",
                    R"("restitution" is not a number)"),
        cradle_with("UnknownKey", R"({"restitutoin": 0.5})", R"(unknown key "restitutoin")"),
        cradle_with("UnknownPolicy", R"({"policy": "fastest"})",
                    R"("policy" must be one of: most_negative, least_negative)"),
        cradle_with("UnknownLaw", R"({"law": "magic"})",
                    R"("law" must be one of: propagative, plastic, variational, pasquero, routh, anitescu_potra, )"
                    R"(sequential (got "magic"))"),
        cradle_with("MassAndMasses", R"({"mass": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]})",
                    R"((found: "mass", "masses"))"),
        cradle_with("NoInertia", R"({"masses": null})",
                    R"(give exactly one of "inverse_mass", "mass" and "masses" (found: none))"),
        cradle_with("MassNotPositiveDefinite",
                    R"({"masses": null, "mass": [[1, 2, 0], [2, 1, 0], [0, 0, 1]]})",
                    R"("mass" is not positive definite)"),
        cradle_with("MassNotSymmetric",
                    R"({"masses": null, "mass": [[2, 1, 0], [0, 2, 0], [0, 0, 2]]})",
                    R"("mass" is not symmetric: entry (0,1) = 1.0 but (1,0) = 0.0)"),
        cradle_with("NonPositiveMass", R"({"masses": [1, 0, 1]})",
                    R"("masses" entry 1 must be positive)"),
        cradle_with("TimeOfImpactWithoutToi", R"({"policy": "time_of_impact"})", R"(needs "toi")"),
        cradle_with("ToiWrongSize", R"({"policy": "time_of_impact", "toi": [0, 1]})",
                    R"("toi" has 2 entries, expected 1)"),
        cradle_with("MissingVelocity", R"({"velocity": null})",
                    R"(missing required key "velocity")"),
        cradle_with("NegativeSeed", R"({"policy": "random", "seed": -1})",
                    R"("seed" must be a non-negative integer (got -1))"),
        cradle_with("ZeroBudget", R"({"policy": "all", "enumeration_budget": 0})",
                    R"("enumeration_budget" must be an integer in [1, 10000000] (got 0))"),
        cradle_with("FractionalReflectionCap", R"({"max_reflections": 2.5})",
                    R"("max_reflections" must be an integer in [0, 10000000] (got 2.5))"),
        cradle_with("RestitutionForPlastic", R"({"law": "plastic", "restitution": 0})",
                    R"("restitution" applies only to laws propagative, routh, not "plastic")"),
        cradle_with("PolicyForPlastic", R"({"law": "plastic", "policy": "all"})",
                    R"("policy" applies only to law propagative, not "plastic")"),
        cradle_with("LawNotAString", R"({"law": 1})", R"("law" must be a string (got 1))"),
        cradle_with("FrictionForTheDefaultLaw", R"({"friction": [1]})",
                    R"("friction" applies only to laws routh, anitescu_potra, sequential, )"
                    R"(not "propagative" (the default law))"),
        cradle_with("SeedForPlastic", R"({"law": "plastic", "seed": 1})",
                    R"("seed" applies only to laws propagative, routh, not "plastic")")),
    case_name);

// Defects a parsed document cannot carry.
INSTANTIATE_TEST_SUITE_P(
    Text, CliMalformed,
    ::testing::Values(MalformedCase{"DuplicateKey", R"({"restitution": 1, "restitution": 0})",
                                    R"(duplicate key "restitution")"},
                      MalformedCase{"NotAnObject", "[1, 2, 3]", "the input must be a JSON object"},
                      MalformedCase{"SyntaxError", "{\"masses\": [1, 1,\n 1]\n \"normals\": []}",
                                    "invalid JSON: parse error at line 3"},
                      MalformedCase{"EmptyInput", "", "invalid JSON"},
                      MalformedCase{"NaNLiteral", R"({"velocity": [NaN, 0, 0]})", "invalid JSON"},
                      MalformedCase{"NumberOverflow", R"({"velocity": [1e400, 0, 0]})", "1e400"}),
    case_name);

TEST(CliCommandLine, HelpPrintsUsageAndSucceeds) {
  const CommandRun result = run_arguments({"--help"});
  EXPECT_EQ(result.exit_code, kExitSuccess);
  EXPECT_NE(result.out.find("usage: simpact"), std::string::npos);
  EXPECT_NE(result.out.find("resolve"), std::string::npos);
  EXPECT_EQ(result.err, "");
}

TEST(CliCommandLine, UsageErrorsExit64WithUsageOnStderr) {
  const std::vector<std::vector<const char*>> cases = {{},
                                                       {"frobnicate", "x.json"},
                                                       {"resolve"},
                                                       {"resolve", "a.json", "b.json"},
                                                       {"resolve", "--verbose"}};
  for (const auto& arguments : cases) {
    SCOPED_TRACE(arguments.empty() ? "(none)" : arguments[0]);
    const CommandRun result = run_arguments(arguments);
    EXPECT_EQ(result.exit_code, kExitUsage);
    EXPECT_EQ(result.out, "");
    EXPECT_NE(result.err.find("usage: simpact"), std::string::npos) << result.err;
  }
}

TEST(CliCommandLine, UnreadableFileIsOneErrorLine) {
  for (const std::string& path : {std::string("/nonexistent/simpact.json"),
                                  std::string(SIMPACT_SOURCE_DIR) + "/demos/data"}) {
    SCOPED_TRACE(path);
    const CommandRun result = run_arguments({"resolve", path.c_str()});
    EXPECT_EQ(result.exit_code, kExitInputError);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err.rfind("error: ", 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

TEST(CliCommandLine, DashReadsTheInputStream) {
  std::ifstream file(data_path("newtons_cradle_3.json"));
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const CommandRun result = run_arguments({"resolve", "-"}, text);
  ASSERT_EQ(result.exit_code, kExitSuccess) << result.err;
  expect_cradle_outcome(Json::parse(result.out)["outcomes"][0]);
}

TEST(CliCommandLine, FileArgumentIsRead) {
  const std::string path = data_path("newtons_cradle_3.json");
  const CommandRun result = run_arguments({"resolve", path.c_str()});
  ASSERT_EQ(result.exit_code, kExitSuccess) << result.err;
  expect_cradle_outcome(Json::parse(result.out)["outcomes"][0]);
}

#ifdef SIMPACT_HAVE_POPEN
const std::string kBinary = binary();
const std::string kCradle = "'" + data_path("newtons_cradle_3.json") + "'";

TEST(CliBinary, ResolvesTheBundledCradle) {
  const CommandRun result = run_shell(kBinary + " resolve " + kCradle);
  ASSERT_EQ(result.exit_code, kExitSuccess) << result.out;
  expect_cradle_outcome(Json::parse(result.out)["outcomes"][0]);
}

TEST(CliBinary, ReadsStandardInput) {
  const CommandRun result = run_shell(kBinary + " resolve - < " + kCradle);
  ASSERT_EQ(result.exit_code, kExitSuccess) << result.out;
  expect_cradle_outcome(Json::parse(result.out)["outcomes"][0]);
}

TEST(CliBinary, ExitCodes) {
  EXPECT_EQ(run_shell(kBinary + " --help").exit_code, kExitSuccess);
  EXPECT_EQ(run_shell(kBinary + " 2>/dev/null").exit_code, kExitUsage);
  EXPECT_EQ(run_shell("echo '{}' | " + kBinary + " resolve - 2>/dev/null").exit_code,
            kExitInputError);
}
#endif

}  // namespace
}  // namespace simpact::cli

namespace simpact::cli::testing {
namespace {

// The variational law through the CLI: two balls of masses 1.1 and 1
// against a wall, both struck (Seghete & Murphey 2010, section III-B.3):
// two sequence outcomes, weights ½ and ½, not a vertex, energy lost; with
// reading nearest_outcome, a vertex and no loss.
TEST(CliResolve, VariationalLawProjectsOntoTheHull) {
  Json input = {{"inverse_mass", {{1.0 / 1.1, 0.0}, {0.0, 1.0}}},
                {"normals", {{1.0, 0.0}, {-1.0, 1.0}}},
                {"velocity", {-1.0, -2.0}},
                {"law", "variational"}};
  const Json projected = resolve_ok(input);
  EXPECT_EQ(projected["status"], "success");
  ASSERT_EQ(projected["vertices"].size(), 2u);
  EXPECT_NEAR(projected["weights"][0].get<double>(), 0.5, 1e-12);
  EXPECT_EQ(projected["on_vertex"], false);
  EXPECT_GT(projected["energy_loss"].get<double>(), 0.0);
  input["reading"] = "nearest_outcome";
  const Json nearest = resolve_ok(input);
  EXPECT_EQ(nearest["on_vertex"], true);
  EXPECT_NEAR(nearest["energy_loss"].get<double>(), 0.0, 1e-12);
  input["reading"] = "closest";
  const CommandRun bad = resolve_text(input.dump());
  EXPECT_EQ(bad.exit_code, kExitInputError);
  EXPECT_NE(bad.err.find(R"("reading" must be one of: projection, nearest_outcome)"), std::string::npos) << bad.err;
}

// Pasquero's law through the CLI: the 3-ball cradle leaves (0, 0, 1) after
// two single-contact iterations (Lambda = -2 each); a propagative key is
// named with its law.
TEST(CliResolve, PasqueroLawOnTheCradle) {
  Json input = {{"masses", {1.0, 1.0, 1.0}},
                {"normals", {{-1.0, 1.0, 0.0}, {0.0, -1.0, 1.0}}},
                {"velocity", {1.0, 0.0, 0.0}},
                {"law", "pasquero"}};
  const Json out = resolve_ok(input);
  EXPECT_EQ(out["status"], "success");
  const std::vector<double> v = numbers(out["velocity"]);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NEAR(v[0], 0.0, 1e-12);
  EXPECT_NEAR(v[1], 0.0, 1e-12);
  EXPECT_NEAR(v[2], 1.0, 1e-12);
  EXPECT_EQ(out["iterations"], 2);
  EXPECT_NEAR(out["coefficients"][0].get<double>(), -2.0, 1e-12);
  input["policy"] = "all";
  const CommandRun bad = resolve_text(input.dump());
  EXPECT_EQ(bad.exit_code, kExitInputError);
  EXPECT_NE(bad.err.find("applies only to law"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace simpact::cli::testing
