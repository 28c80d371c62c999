// Tests of `simpact sweep` (sweep.h): every run equals `simpact scene` on its
// document, the cradle's outcome across restitution in closed form, the
// same results for any thread count, and bad sweeps named. Over MPI ranks:
// tests/mpi.
#include "capture.h"

#include <simpact_cli/campaign.h>
#include <simpact_cli/cli.h>
#include <simpact_cli/scene.h>
#include <simpact_cli/sweep.h>

#include <LinearMath/btScalar.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace simpact::cli {
namespace {

// The touching cradle under simpact: exact up to the rounding of a few
// dozen btScalar operations per step (scene_test.cpp's kExact).
constexpr double kExact = sizeof(btScalar) == sizeof(double) ? 1e-9 : 2e-6;

const std::filesystem::path kData = std::filesystem::path(SIMPACT_SOURCE_DIR) / "demos" / "data";

Json load(const std::string& name) {
  std::ifstream file(kData / name);
  EXPECT_TRUE(file) << name;
  return parse_json(file);
}

/// One context for the test program; not under mpirun: one process.
const CampaignContext& context() {
  // Shared by the test files of this program (at most one context exists);
  // reachable until exit, as main()'s would be.
  static const CampaignContext* const instance =
      CampaignContext::current() != nullptr ? CampaignContext::current() : new CampaignContext(nullptr, nullptr);
  return *instance;
}

SweepResult run(const SweepSpec& spec, int threads) {
  CampaignOptions options;
  options.threads = threads;
  return run_sweep(spec, context(), options);
}

std::string error_of(const Json& sweep) {
  try {
    parse_sweep(sweep, kData);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Sweep, CradleAcrossRestitutionMatchesTheClosedForm) {
  const SweepSpec spec = parse_sweep(load("sweep_cradle_restitution.json"), kData);
  ASSERT_EQ(spec.runs(), 11);
  const SweepResult result = run(spec, 2);
  ASSERT_EQ(result.values.size(), 11u);
  // Three touching unit balls, the first at 1 m/s, restitution R on both
  // contacts, the propagative law: R = 1 leaves (0, 0, 1) (Seghete &
  // Murphey's cradle), R = 0 moves all three at 1/3 (Moreau's plastic
  // projection), energy ½·Σv².
  const std::vector<double>& elastic = result.values.back();
  EXPECT_NEAR(elastic[0], 0.0, kExact);
  EXPECT_NEAR(elastic[1], 0.0, kExact);
  EXPECT_NEAR(elastic[2], 1.0, kExact);
  EXPECT_NEAR(elastic[3], 0.5, kExact);
  const std::vector<double>& plastic = result.values.front();
  for (int b = 0; b < 3; ++b) EXPECT_NEAR(plastic[static_cast<std::size_t>(b)], 1.0 / 3.0, 1e-5) << b;
  for (const std::vector<double>& v : result.values) {
    // Momentum is kept at every R: Σv = 1.
    EXPECT_NEAR(v[0] + v[1] + v[2], 1.0, 1e-5);
    EXPECT_NEAR(v[3], 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 1e-9);
  }
}

TEST(Sweep, EveryRunIsTheSceneCommandOnItsDocument) {
  Json sweep = load("sweep_box_landing_routh.json");
  sweep["samples"] = 6;
  sweep["seed"] = 40;
  sweep["grid"] = Json::array({Json{{"key", "/bodies/1/friction"}, {"values", {0.1, 0.6}}}});
  const SweepSpec spec = parse_sweep(sweep, kData);
  ASSERT_EQ(spec.runs(), 12);
  const SweepResult result = run(spec, 3);
  for (std::int64_t r = 0; r < spec.runs(); ++r) {
    Json doc = sweep["scene"];
    doc["bodies"][1]["friction"] = r < 6 ? 0.1 : 0.6;
    doc["simpact"]["seed"] = 40 + r % 6;
    const Json output = scene_json(doc);
    const std::vector<double>& v = result.values[static_cast<std::size_t>(r)];
    EXPECT_EQ(v[0], output["bodies"][1]["velocity"][0].get<double>()) << "run " << r;
    EXPECT_EQ(v[2], output["bodies"][1]["angular_velocity"][2].get<double>()) << "run " << r;
    EXPECT_EQ(v[3], output["energy_final"].get<double>()) << "run " << r;
  }
  // The Routh samples differ between seeds (it is an outcome set).
  bool differ = false;
  for (std::size_t r = 1; r < 6; ++r) differ = differ || result.values[r][0] != result.values[0][0];
  EXPECT_TRUE(differ);
}

TEST(Sweep, SameResultsAndDigestForAnyThreadCount) {
  Json sweep = load("sweep_box_landing_routh.json");
  sweep["samples"] = 24;
  const SweepSpec spec = parse_sweep(sweep, kData);
  const SweepResult one = run(spec, 1);
  for (int threads : {2, 5}) {
    const SweepResult many = run(spec, threads);
    EXPECT_EQ(many.values, one.values) << threads;
    EXPECT_EQ(many.digest, one.digest) << threads;
  }
  // The digest tells a different seed apart.
  sweep["seed"] = 1;
  EXPECT_NE(run(parse_sweep(sweep, kData), 2).digest, one.digest);
}

TEST(Sweep, TableCsvAndPlot) {
  const SweepSpec spec = parse_sweep(load("sweep_cradle_restitution.json"), kData);
  const SweepResult result = run(spec, 2);
  std::ostringstream table, csv, svg;
  write_sweep_table(table, spec, result);
  write_sweep_csv(csv, spec, result);
  write_sweep_svg(svg, spec, result);
  EXPECT_NE(table.str().find("11 runs = 11 grid point(s) x 1 sample(s)"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("digest of every run's outputs: " + result.digest), std::string::npos);
  std::istringstream rows(csv.str());
  std::string header, line;
  std::getline(rows, header);
  EXPECT_EQ(header, "run,grid_point,sample,seed,R,/bodies/0/velocity/0,/bodies/1/velocity/0,"
                    "/bodies/2/velocity/0,/energy_final");
  int count = 0;
  while (std::getline(rows, line)) ++count;
  EXPECT_EQ(count, 11);
  EXPECT_EQ(svg.str().rfind("<svg", 0), 0u);
  EXPECT_NE(svg.str().find("<polyline"), std::string::npos) << "one axis: each output against it";
}

TEST(Sweep, CommandLineRunsAndReportsErrors) {
  const std::string path = (kData / "sweep_cradle_restitution.json").string();
  const char* good[] = {"simpact", "sweep", path.c_str(), "--threads", "2"};
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(cli::run(5, good, in, out, err), kExitSuccess) << err.str();
  EXPECT_NE(out.str().find("digest of every run's outputs"), std::string::npos);
  const char* bad[] = {"simpact", "sweep", path.c_str(), "--threads", "zero"};
  std::ostringstream out2, err2;
  EXPECT_EQ(cli::run(5, bad, in, out2, err2), kExitUsage);
  EXPECT_NE(err2.str().find("--threads needs an integer"), std::string::npos) << err2.str();
  const auto stdin_run = testing::capture(R"({"scene": {"dt": 0.01, "steps": 1, "bodies": [{"shape": "sphere",
      "radius": 1}]}, "outputs": ["/bodies/0/velocity"]})",
                                          [](std::istream& i, std::ostream& o, std::ostream& e) {
                                            const char* args[] = {"simpact", "sweep", "-"};
                                            return cli::run(3, args, i, o, e);
                                          });
  EXPECT_EQ(stdin_run.exit_code, kExitInputError);
  EXPECT_NE(stdin_run.err.find("is an array in the scene's output"), std::string::npos) << stdin_run.err;
  EXPECT_TRUE(stdin_run.out.empty());
}

TEST(Sweep, BadSweepsAreNamed) {
  const Json cradle = load("sweep_cradle_restitution.json");
  Json both = cradle;
  both["scene"] = Json::object();
  EXPECT_NE(error_of(both).find("exactly one of \"scene\""), std::string::npos) << error_of(both);
  Json typo = cradle;
  typo["output"] = typo["outputs"];
  EXPECT_NE(error_of(typo).find("output"), std::string::npos) << error_of(typo);
  Json pointer = cradle;
  pointer["outputs"] = {"bodies/0/velocity/0"};
  EXPECT_NE(error_of(pointer).find("is not a JSON pointer"), std::string::npos) << error_of(pointer);
  Json missing = cradle;
  missing["outputs"] = {"/bodies/7/velocity/0"};
  EXPECT_NE(error_of(missing).find("names nothing in the scene's output"), std::string::npos)
      << error_of(missing);
  // A grid value the scene rejects: named with its grid point before any run.
  Json rejected = cradle;
  rejected["grid"][0] = Json{{"name", "R"}, {"key", "/bodies/1/restitution"}, {"values", {0.5, 1.5}}};
  const std::string message = error_of(rejected);
  EXPECT_NE(message.find("grid point 1 (R = 1.5)"), std::string::npos) << message;
  EXPECT_NE(message.find("restitution"), std::string::npos) << message;
  Json typo_in_scene = cradle;
  typo_in_scene["grid"][0] = Json{{"key", "/bodies/1/restitutoin"}, {"values", {0.5}}};
  EXPECT_NE(error_of(typo_in_scene).find("restitutoin"), std::string::npos) << error_of(typo_in_scene);
  Json huge = cradle;
  huge["samples"] = 100000;
  huge["grid"][0] = Json{{"key", "/bodies/1/restitution"}, {"from", 0}, {"to", 1}, {"count", 11}};
  EXPECT_NE(error_of(huge).find("more than 1000000"), std::string::npos) << error_of(huge);
  Json bins = cradle;
  bins["bins"] = 1;
  EXPECT_NE(error_of(bins).find("bins"), std::string::npos) << error_of(bins);
  Json range = cradle;
  range["grid"][0] = Json{{"key", "/bodies/1/restitution"}, {"values", {0.5}}, {"count", 3}};
  EXPECT_NE(error_of(range).find("give one of them"), std::string::npos) << error_of(range);
  Json file = cradle;
  file["scene_file"] = "no_such_scene.json";
  EXPECT_NE(error_of(file).find("cannot open"), std::string::npos) << error_of(file);
}

TEST(Sweep, AFailingRunStopsTheSweepNamingIt) {
  // Outputs in a recorded trajectory exist only after the steps, so the
  // check before the runs leaves them to the runs: one past the recorded
  // steps fails every run, and the first is named with its grid point and
  // sample, nothing on standard output.
  Json sweep;
  sweep["scene"] = load("newtons_cradle.scene.json");
  sweep["scene"]["record"] = 1;
  sweep["samples"] = 3;
  sweep["outputs"] = {"/trajectory/24/bodies/2/velocity/0", "/trajectory/99/bodies/2/velocity/0"};
  const SweepSpec spec = parse_sweep(sweep, kData);  // the check passes
  EXPECT_THROW(run(spec, 1), CampaignError);
  const auto failed = testing::capture(sweep.dump(), [](std::istream& i, std::ostream& o, std::ostream& e) {
    const char* args[] = {"simpact", "sweep", "-", "--threads", "1"};
    return cli::run(5, args, i, o, e);
  });
  EXPECT_EQ(failed.exit_code, kExitInputError);
  EXPECT_NE(failed.err.find("error: run 0 (grid point 0, sample 0): \"outputs\" \"/trajectory/99/bodies/2/velocity/0\" "
                            "names nothing"),
            std::string::npos)
      << failed.err;
  EXPECT_TRUE(failed.out.empty());
  // The recorded step 24 is the run's final state.
  sweep["outputs"] = {"/trajectory/24/bodies/2/velocity/0", "/bodies/2/velocity/0"};
  const SweepResult result = run(parse_sweep(sweep, kData), 2);
  EXPECT_EQ(result.values[0][0], result.values[0][1]);
}

}  // namespace
}  // namespace simpact::cli
