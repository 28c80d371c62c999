// Real cube tosses against simulation (demos/validate_cube_toss; issue #14).
//
// Data: ContactNets' pre-processed tosses (Pfrommer, Halm, Posa, "ContactNets:
// Learning Discontinuous Contact Dynamics with Smooth, Implicit
// Representations", CoRL 2020, arXiv:2009.11193), BSD-3 (see
// demos/data/cube_toss/README.md and LICENSE-contact-nets). One CSV per toss,
// 148 Hz, board frame z up, SI units.
//
// This library reads a toss, finds its board height and first ground impact,
// replays it in Bullet from just before the impact with a given solver and
// (μ, e), and measures the errors against the recording. Demo code: not part
// of the installed library.
#pragma once

#include <simpact/bullet/impact_solver.h>
#include <simpact_worlds/bullet_world.h>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include <array>
#include <memory>
#include <optional>
#include <functional>
#include <string>
#include <vector>

class btRigidBody;

namespace simpact::cube_toss {

/// What ContactNets' README and code say about the cube.
inline constexpr double kHalfWidth = 0.0524;       ///< L [m]
inline constexpr double kMass = 0.37;              ///< [kg]
inline constexpr double kInertia = 0.00081;        ///< isotropic [kg·m²]
inline constexpr double kFrameRate = 148.0;        ///< [Hz]
inline constexpr double kContactNetsFriction = 0.18;     ///< μ they simulate with (set by hand)
inline constexpr double kContactNetsRestitution = 0.125; ///< e they simulate with (set by hand)

/// The board height is the median, over the last kRestFrames frames, of the
/// cube's lowest corner: the cube rests on the board at the end of every
/// toss (resting cubes sit 0.8–3.2 mm below z = 0, so a global z = 0 would
/// be off by up to 3 mm, ~6 % of L). 10 frames (68 ms) average the
/// motion-capture noise (~0.5 mm) and stay within the rest.
inline constexpr int kRestFrames = 10;
/// A corner within this height of the board touches it [m]. Between two
/// frames a corner falling at ~1 m/s moves ~7 mm; the last frame before
/// contact is 3–8 mm up and the first after within ±4 mm (noise, the
/// filtered poses' lag, the board estimate): 2 mm separates the two in
/// every toss of the training half.
inline constexpr double kContactGap = 0.002;
/// Frames between the start of a replay and the impact frame (the first
/// frame with a corner on the board): as in issue #14, two — the velocities
/// are backward differences with a 3-frame median filter, so any later
/// frame's velocity may already carry the impact.
inline constexpr int kLeadFrames = 2;
/// The recorded velocity shows the post-impact value this many frames after
/// the impact frame (the backward difference and the median filter delay a
/// jump by up to two frames).
inline constexpr int kPostImpactFrames = 2;

/// One recorded frame.
struct Frame {
  double t = 0.0;
  Eigen::Vector3d position;          ///< cube centre [m]
  Eigen::Quaterniond orientation;    ///< body → board
  Eigen::Vector3d velocity;          ///< [m/s]
  Eigen::Vector3d angular_velocity;  ///< WORLD frame [rad/s] (the file's body rates rotated)
};

struct Toss {
  std::string name;  ///< file stem, "toss_000"
  std::vector<Frame> frames;
  double board = 0.0;  ///< board height [m]
  int impact = -1;     ///< first frame with a corner within kContactGap; -1 if none
};

/// Height of the cube's lowest corner [m].
double lowest_corner(const Frame& frame);

/// Reads one toss file (columns of demos/data/cube_toss/README.md) and finds
/// its board and impact. Throws std::runtime_error naming the file and line
/// of any malformed row.
Toss read_toss(const std::string& path);

/// Fills board and impact of a toss from its frames (read_toss calls it).
void locate_impact(Toss& toss);

/// Every `toss_*.csv` of a folder, sorted by name. Throws if there is none.
std::vector<std::string> toss_files(const std::string& folder);

/// One way of simulating: a stock solver, or simpact with a law.
struct Solver {
  std::string name;  ///< "stock_si", "propagative", "routh", …
  worlds::SolverKind kind = worlds::SolverKind::kStockSi;
  bullet::ImpactLaw law = bullet::ImpactLaw::kPropagative;
  bool set_valued = false;  ///< one sample per impact from a seed (Routh laws)
};
/// stock_si, propagative, routh, routh_restitution, auto.
std::vector<Solver> solvers();

struct Parameters {
  double friction = kContactNetsFriction;
  double restitution = kContactNetsRestitution;
};

/// How a replay starts and steps.
struct ReplayOptions {
  /// Bullet steps per recorded frame (1: one step of 1/148 s, as issue #14
  /// measured; more: the same frames, finer steps).
  int substeps = 1;
  /// Initial velocity and angular velocity from central differences of the
  /// recorded poses at start ± 1 (both before the impact frame) instead of
  /// the file's, which are backward differences through a 3-frame median
  /// filter and so lag by about half a frame (g·dt/2 = 0.033 m/s in v_z).
  bool central_differences = false;
  /// The board as a static box instead of a plane. Bullet's box–plane
  /// algorithm adds one contact point per step (the deepest corner; no
  /// perturbation in the default configuration), so an edge or face landing
  /// is seen one corner at a time; box–box contact reports the whole
  /// face-to-face manifold (up to 4 points) in one step, which is what a
  /// simultaneous-impact law needs to see.
  bool box_board = false;
};

/// The board as a static box (ReplayOptions::box_board): 4 m square, 0.1 m
/// thick, its top face at the board height.
inline constexpr double kBoardHalfSide = 2.0;
inline constexpr double kBoardHalfThickness = 0.05;

/// The replay's world: `solver` (seeded with `seed`), gravity 9.81 down
/// z, and a static plane (or, with `box`, a static box) at `board` with
/// friction 1 and restitution 1, so that Bullet's product combiners give
/// each contact the cube's own μ and e.
std::unique_ptr<worlds::BulletWorld> board_world(const Solver& solver, double board, std::uint64_t seed = 0,
                                                 bool box = false);

/// The cube as a body (L, m, I above; μ and e; never asleep), at rest at the
/// origin: callers set its pose and velocities.
worlds::BodyOptions cube_body(const Parameters& parameters);

/// A body's state as a frame at time t (world-frame ω).
Frame frame_of(const btRigidBody& body, double t);

/// The simulated states at frames impact − kLeadFrames … impact + horizon.
struct Replay {
  std::vector<Frame> frames;  ///< frames[k] is at recorded frame start + k
  int start = 0;
};

/// Replays `toss` from frame impact − kLeadFrames for kLeadFrames + horizon
/// frames, one Bullet step per frame (1/148 s): a static plane at the board
/// (friction 1, restitution 1, so that Bullet's product combiner gives the
/// cube's own), the cube (L, m, I above) with μ and e, gravity 9.81 down.
/// Requires toss.impact ≥ kLeadFrames and impact + horizon < frames.
/// `observe`, when set, is called with the world after the cube is added
/// (frame 0) and after each frame's steps (frame k), e.g. to record a page.
Replay replay(const Toss& toss, const Solver& solver, const Parameters& parameters, int horizon,
              std::uint64_t seed = 0, const ReplayOptions& options = {},
              const std::function<void(worlds::BulletWorld& world, int frame)>& observe = {});

/// Errors of one simulated frame against the recorded one.
struct Errors {
  double position = 0.0;          ///< |Δx| / L
  double velocity = 0.0;          ///< |Δv| [m/s]
  double angular_velocity = 0.0;  ///< |Δω| [rad/s]
  double orientation = 0.0;       ///< rotation angle between them [deg]
  double vertical_velocity = 0.0; ///< Δv_z [m/s], signed (simulated − recorded)
};
Errors compare(const Frame& simulated, const Frame& recorded);

/// Whether a toss can be replayed to `horizon` frames after its impact.
bool usable(const Toss& toss, int horizon);

}  // namespace simpact::cube_toss
