// simpact CLI — replays: what `simpact scene FILE.json --html OUT.html` (and
// the demos' --html options) record of a Bullet world, and the page that
// draws it.
//
// A ReplayRecorder describes every collision object of a world once (its
// shape, from Bullet's own btCollisionShape, so rigid bodies, planes and
// multibody link colliders alike) and then, at each recorded step, every
// object's world transform, the joints as line segments, and the world's
// kinetic energy; impact reports are added as the adapters deliver them.
// write_replay_html puts two or more such runs (stock Bullet and simpact on
// the same scene) into one self-contained HTML page: three.js (npm package
// `three`, bundled at build time) draws them side by side, with a timeline,
// an energy plot and the impact reports. The page loads nothing when opened.
//
// Drawing precision: poses and energies are written with 7 significant
// digits (float precision); the page is for looking, the JSON output of
// `simpact scene` is for numbers.
#pragma once

#include <simpact_cli/json_input.h>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

class btDiscreteDynamicsWorld;

namespace simpact::bullet {
struct ImpactReport;
}

namespace simpact::cli {

/// Most frames one run keeps in a page: longer runs record every
/// ceil(steps / kMaxReplayFrames)-th step (replay_stride), so a page of
/// 1000 bodies stays below ~100 MB and plays smoothly.
inline constexpr std::int64_t kMaxReplayFrames = 2000;

/// The recording stride for a run of `steps` steps: the smallest s with
/// steps / s ≤ kMaxReplayFrames. A run records steps 0, s, 2s, … and its
/// last step, so at most kMaxReplayFrames + 2 frames.
std::int64_t replay_stride(std::int64_t steps);

/// One run of a world, as the page draws it.
class ReplayRecorder {
 public:
  /// Describes the world's collision objects as they are now (call it after
  /// the scene is built); objects added later are not drawn.
  ReplayRecorder(const btDiscreteDynamicsWorld& world, std::string name);

  /// Appends a frame: every object's pose, every joint's segment, and
  /// `kinetic_energy` [J] at `time` [s] of `step`. Non-finite values are
  /// written as 0 and counted in the run's "non_finite" field.
  void record(std::int64_t step, double time, double kinetic_energy);

  /// Adds an impact report of `step` (ImpactReport::body_ids are Bullet's
  /// world array indices, the page's object indices).
  void add_impact(std::int64_t step, double time, const bullet::ImpactReport& report);

  /// {"name", "objects": [...], "frames": {"step", "time", "kinetic_energy",
  ///  "poses" (7 per object: x y z qx qy qz qw), "segments" (6 per joint)},
  ///  "impacts": [...], "non_finite"}
  Json to_json() const;

 private:
  const btDiscreteDynamicsWorld& world_;
  std::string name_;
  Json objects_;
  std::vector<std::int64_t> steps_;
  std::vector<double> times_;
  std::vector<double> energies_;
  std::vector<float> poses_;
  std::vector<float> segments_;
  Json impacts_;
  std::int64_t non_finite_ = 0;
  std::size_t joints_ = 0;

  std::size_t joint_segments(std::vector<float>* out) const;
  float finite(double value);
};

/// True when this build bundles three.js (configure found the `three` npm
/// package that .ci/install-deps installs); otherwise write_replay_html
/// throws InputError saying so.
bool replay_available();

/// Writes the page: `runs` is a list of ReplayRecorder::to_json() objects
/// (the first two are drawn side by side; the page labels them by name),
/// `meta` holds "title", "up" (3 numbers: the drawing's up axis, usually
/// −gravity) and optionally "ghost" (a trajectory drawn in every view as a
/// translucent copy of object "ghost.object": {"object", "poses"} with 7
/// numbers per frame of the first run).
void write_replay_html(std::ostream& out, const Json& runs, const Json& meta);

/// `simpact scene FILE --html OUT`: runs `scene` under the stock solver
/// (the scene's simpact.base, stock_si by default; or the scene's own stock
/// solver) and under simpact (solver simpact, with the scene's "simpact"
/// settings), with the same steps, and returns {"runs": [stock, simpact],
/// "meta": {...}}. Throws InputError as scene_json does.
Json scene_replay(const Json& scene);

}  // namespace simpact::cli
