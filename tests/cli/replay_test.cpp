// Tests of the replay recording (simpact_cli/replay.h): what a page draws is
// what `simpact scene` computes, frame by frame, for both runs.
#include <simpact_cli/cli.h>
#include <simpact_cli/replay.h>
#include <simpact_cli/scene.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

namespace simpact::cli {
namespace {

// Poses are stored with 7 significant digits (replay.h, "Drawing
// precision"): relative error at most 5e-7 of the value, plus the absolute
// slack of a value that is zero in one run and ~1e-17 in the other.
constexpr double kDrawn = 5e-7;
constexpr double kDrawnFloor = 1e-12;

// Three touching elastic balls on a line, struck at 1 m/s, with a ground
// plane beside them and a box dropped next to them: shapes of every kind a
// rigid scene has.
Json cradle_scene(std::int64_t steps, const char* solver) {
  Json scene = Json::parse(R"({
    "gravity": [0, 0, 0], "dt": 0.004166666666666667,
    "bodies": [
      {"shape": "sphere", "radius": 0.05, "position": [0, 0, 0], "velocity": [1, 0, 0], "restitution": 1,
       "friction": 0, "linear_factor": [1, 0, 0], "angular_factor": [0, 0, 0], "never_sleep": true},
      {"shape": "sphere", "radius": 0.05, "position": [0.1, 0, 0], "restitution": 1, "friction": 0,
       "linear_factor": [1, 0, 0], "angular_factor": [0, 0, 0], "never_sleep": true},
      {"shape": "sphere", "radius": 0.05, "position": [0.2, 0, 0], "restitution": 1, "friction": 0,
       "linear_factor": [1, 0, 0], "angular_factor": [0, 0, 0], "never_sleep": true},
      {"shape": "plane", "normal": [0, 1, 0], "offset": -1},
      {"shape": "box", "half_extents": [0.1, 0.05, 0.1], "position": [2, 0, 0], "velocity": [0, -1, 0]}
    ]})");
  scene["steps"] = steps;
  scene["solver"] = solver;
  return scene;
}

TEST(Replay, StrideKeepsAtMostTheFrameLimit) {
  EXPECT_EQ(replay_stride(0), 1);
  EXPECT_EQ(replay_stride(kMaxReplayFrames), 1);
  EXPECT_EQ(replay_stride(kMaxReplayFrames + 1), 2);
  for (std::int64_t steps : {1, 1999, 2001, 4000, 4001, 123457, 1000000}) {
    const std::int64_t stride = replay_stride(steps);
    EXPECT_LE(double(steps) / double(stride), double(kMaxReplayFrames)) << steps;
    // The smallest such stride: one less would keep too many frames.
    if (stride > 1) EXPECT_GT(double(steps) / double(stride - 1), double(kMaxReplayFrames)) << steps;
  }
}

// Both runs' frames are the states scene_json gives for the stock and the
// simpact solver, and simpact's reports are the impacts it counts.
TEST(Replay, FramesAreTheSceneRuns) {
  const std::int64_t steps = 12;
  const Json replay = scene_replay(cradle_scene(steps, "simpact"));
  ASSERT_EQ(replay["runs"].size(), 2u);
  const char* solvers[] = {"stock_si", "simpact"};
  for (int r = 0; r < 2; ++r) {
    Json scene = cradle_scene(steps, solvers[r]);
    scene["record"] = 1;
    const Json out = scene_json(scene);
    const Json& run = replay["runs"][r];
    const Json& frames = run["frames"];
    ASSERT_EQ(frames["step"].size(), std::size_t(steps + 1));
    const std::size_t objects = run["objects"].size();
    ASSERT_EQ(objects, 5u);
    EXPECT_EQ(run["objects"][0]["shape"]["type"], "sphere");
    EXPECT_EQ(run["objects"][3]["shape"]["type"], "plane");
    EXPECT_TRUE(run["objects"][3]["static"].get<bool>());
    EXPECT_EQ(run["objects"][4]["shape"]["type"], "box");
    for (std::int64_t f = 0; f <= steps; ++f) {
      const Json& bodies = out["trajectory"][std::size_t(f)]["bodies"];
      for (std::size_t i = 0; i < objects; ++i) {
        for (int k = 0; k < 3; ++k) {
          const double want = bodies[i]["position"][std::size_t(k)].get<double>();
          const double got = frames["poses"][(std::size_t(f) * objects + i) * 7 + std::size_t(k)].get<double>();
          EXPECT_NEAR(got, want, kDrawn * std::abs(want) + kDrawnFloor) << "run " << r << " frame " << f;
        }
      }
    }
    const std::int64_t impacts = out["impacts"].get<std::int64_t>();
    EXPECT_EQ(run["impacts"].size(), std::size_t(impacts)) << "run " << r;
  }
  // The touching cradle: one impact, the three balls in one cluster, elastic.
  const Json& impacts = replay["runs"][1]["impacts"];
  ASSERT_EQ(impacts.size(), 1u);
  EXPECT_EQ(impacts[0]["law"], "propagative");
  EXPECT_EQ(impacts[0]["bodies"].size(), 3u);
  EXPECT_NEAR(impacts[0]["energy_after"].get<double>(), impacts[0]["energy_before"].get<double>(),
              kDrawn * impacts[0]["energy_before"].get<double>());
  // The last ball leaves at 1 m/s under simpact: its x grows by v t.
  const Json& last = replay["runs"][1]["frames"]["poses"];
  const double x_end = last[(std::size_t(steps) * 5 + 2) * 7].get<double>();
  EXPECT_GT(x_end, 0.2 + 0.9 * double(steps - 1) * 0.004166666666666667);
}

// A stock scene is replayed against simpact over that same stock solver.
TEST(Replay, AStockSceneGetsSimpactOverItsSolver) {
  const Json replay = scene_replay(cradle_scene(4, "stock_nncg"));
  EXPECT_EQ(replay["runs"][0]["name"], "stock Bullet (stock_nncg)");
  EXPECT_NE(replay["runs"][1]["name"].get<std::string>().find("over stock_nncg"), std::string::npos);
  EXPECT_EQ(replay["runs"][1]["impacts"].size(), 1u);
}

TEST(Replay, LongRunsAreStrided) {
  const std::int64_t steps = 2 * kMaxReplayFrames + 3;
  const Json replay = scene_replay(cradle_scene(steps, "simpact"));
  const Json& step = replay["runs"][0]["frames"]["step"];
  EXPECT_LE(step.size(), std::size_t(kMaxReplayFrames + 2));  // replay_stride
  EXPECT_EQ(step[1].get<std::int64_t>(), replay_stride(steps));
  EXPECT_EQ(step.back().get<std::int64_t>(), steps);  // the last state is always shown
}

// Bad scenes are refused by name, as by `simpact scene`.
TEST(Replay, BadScenesAreRefusedByName) {
  Json scene = cradle_scene(4, "simpact");
  scene["bodies"][0]["radius"] = -1;
  try {
    scene_replay(scene);
    FAIL() << "a negative radius was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("radius"), std::string::npos) << e.what();
  }
}

// The page embeds its data where the template marks it, escapes "</", and
// holds three.js; or, built without it, says how to get it.
TEST(Replay, PageIsSelfContained) {
  Json runs = scene_replay(cradle_scene(4, "simpact"))["runs"];
  runs[0]["name"] = "</script><b>";
  std::ostringstream page;
  if (!replay_available()) {
    EXPECT_THROW(write_replay_html(page, runs, Json{{"title", "t"}}), InputError);
    GTEST_SKIP() << "built without three.js (SIMPACT_WITH_REPLAY off)";
  }
  write_replay_html(page, runs, Json{{"title", "t"}, {"up", {0, 1, 0}}});
  const std::string html = page.str();
  EXPECT_EQ(html.find("/*SIMPACT_DATA*/"), std::string::npos);
  EXPECT_EQ(html.find("/*SIMPACT_THREE_JS*/"), std::string::npos);
  EXPECT_NE(html.find("<\\/script><b>"), std::string::npos);
  EXPECT_EQ(html.find("</script><b>"), std::string::npos);
  EXPECT_NE(html.find("Three.js Authors"), std::string::npos);
  // Nothing to fetch: no element loads a file, and the page's own code (after
  // three.js, whose loaders it never calls) asks for nothing.
  for (const char* load : {"src=\"", "href=\"", "<link"}) EXPECT_EQ(html.find(load), std::string::npos) << load;
  const std::string own = html.substr(html.find("id=\"simpact-data\""));
  for (const char* fetch : {"import(", "fetch(", "XMLHttpRequest", "http://", "https://"}) {
    EXPECT_EQ(own.find(fetch), std::string::npos) << fetch;
  }
}

}  // namespace
}  // namespace simpact::cli
