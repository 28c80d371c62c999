#include "cube_toss.h"

#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace simpact::cube_toss {

double lowest_corner(const Frame& frame) {
  const Eigen::Matrix3d rotation = frame.orientation.toRotationMatrix();
  // The lowest corner's height: centre minus L times the sum of |R_zk|.
  return frame.position.z() - kHalfWidth * rotation.row(2).cwiseAbs().sum();
}

void locate_impact(Toss& toss) {
  const int n = static_cast<int>(toss.frames.size());
  if (n < kRestFrames) throw std::runtime_error(toss.name + ": fewer frames than the rest window");
  std::vector<double> rest;
  for (int k = n - kRestFrames; k < n; ++k) rest.push_back(lowest_corner(toss.frames[static_cast<size_t>(k)]));
  std::nth_element(rest.begin(), rest.begin() + kRestFrames / 2, rest.end());
  toss.board = rest[static_cast<size_t>(kRestFrames / 2)];
  toss.impact = -1;
  for (int k = 0; k < n; ++k) {
    if (lowest_corner(toss.frames[static_cast<size_t>(k)]) - toss.board <= kContactGap) {
      toss.impact = k;
      return;
    }
  }
}

Toss read_toss(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  Toss toss;
  toss.name = std::filesystem::path(path).stem().string();
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1) continue;  // header
    if (line.empty()) continue;
    std::stringstream row(line);
    std::array<double, 14> v{};
    std::string cell;
    size_t column = 0;
    while (std::getline(row, cell, ',')) {
      if (column >= v.size()) throw std::runtime_error(path + ":" + std::to_string(number) + ": more than 14 columns");
      try {
        size_t used = 0;
        v[column] = std::stod(cell, &used);
        if (used != cell.size() && cell.find_first_not_of(" \r", used) != std::string::npos) throw std::invalid_argument(cell);
      } catch (const std::exception&) {
        throw std::runtime_error(path + ":" + std::to_string(number) + ": column " + std::to_string(column + 1) +
                                 " is not a number (\"" + cell + "\")");
      }
      if (!std::isfinite(v[column]))
        throw std::runtime_error(path + ":" + std::to_string(number) + ": column " + std::to_string(column + 1) +
                                 " is not finite");
      ++column;
    }
    if (column != v.size())
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + std::to_string(column) +
                               " columns, expected 14");
    Frame f;
    f.t = v[0];
    f.position = Eigen::Vector3d(v[1], v[2], v[3]);
    f.orientation = Eigen::Quaterniond(v[4], v[5], v[6], v[7]);
    if (f.orientation.norm() < 0.5)
      throw std::runtime_error(path + ":" + std::to_string(number) + ": the quaternion is not a rotation");
    f.orientation.normalize();
    f.velocity = Eigen::Vector3d(v[8], v[9], v[10]);
    f.angular_velocity = f.orientation * Eigen::Vector3d(v[11], v[12], v[13]);
    toss.frames.push_back(f);
  }
  locate_impact(toss);
  return toss;
}

std::vector<std::string> toss_files(const std::string& folder) {
  std::vector<std::string> files;
  if (!std::filesystem::is_directory(folder)) throw std::runtime_error(folder + " is not a folder");
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("toss_", 0) == 0 && entry.path().extension() == ".csv") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("no toss_*.csv in " + folder);
  return files;
}

std::vector<Solver> solvers() {
  using bullet::ImpactLaw;
  using worlds::SolverKind;
  return {
      {"stock_si", SolverKind::kStockSi, ImpactLaw::kPropagative, false},
      {"propagative", SolverKind::kSimpact, ImpactLaw::kPropagative, false},
      {"routh", SolverKind::kSimpact, ImpactLaw::kRouth, true},
      {"routh_restitution", SolverKind::kSimpact, ImpactLaw::kRouthRestitution, true},
      {"auto", SolverKind::kSimpact, ImpactLaw::kAuto, true},
  };
}

bool usable(const Toss& toss, int horizon) {
  return toss.impact >= kLeadFrames && toss.impact + horizon < static_cast<int>(toss.frames.size());
}

std::unique_ptr<worlds::BulletWorld> board_world(const Solver& solver, double board, std::uint64_t seed,
                                                 bool box) {
  worlds::WorldOptions options;
  options.solver = solver.kind;
  options.simpact.law = solver.law;
  options.simpact.seed = seed;
  options.gravity = Eigen::Vector3d(0.0, 0.0, -worlds::kStandardGravity);
  auto world = std::make_unique<worlds::BulletWorld>(options);
  worlds::BodyOptions plane;
  plane.mass = 0.0;
  plane.friction = 1.0;
  plane.restitution = 1.0;
  if (box) {
    plane.position = Eigen::Vector3d(0.0, 0.0, board - kBoardHalfThickness);
    world->add_box(Eigen::Vector3d(kBoardHalfSide, kBoardHalfSide, kBoardHalfThickness), plane);
  } else {
    world->add_plane(Eigen::Vector3d::UnitZ(), board, plane);
  }
  return world;
}

Frame frame_of(const btRigidBody& body, double t) {
  Frame f;
  f.t = t;
  f.position = worlds::position(body);
  f.orientation = worlds::orientation(body);
  f.velocity = worlds::velocity(body);
  f.angular_velocity = worlds::angular_velocity(body);
  return f;
}

worlds::BodyOptions cube_body(const Parameters& parameters) {
  worlds::BodyOptions cube;
  cube.mass = kMass;
  cube.inertia = Eigen::Vector3d::Constant(kInertia);
  cube.friction = parameters.friction;
  cube.restitution = parameters.restitution;
  cube.never_sleep = true;
  return cube;
}

Replay replay(const Toss& toss, const Solver& solver, const Parameters& parameters, int horizon,
              std::uint64_t seed, const ReplayOptions& replay_options,
              const std::function<void(worlds::BulletWorld& world, int frame)>& observe) {
  if (replay_options.substeps < 1) throw std::invalid_argument("substeps must be >= 1");
  if (!usable(toss, horizon)) throw std::invalid_argument(toss.name + " cannot be replayed that far");
  const std::unique_ptr<worlds::BulletWorld> world = board_world(solver, toss.board, seed, replay_options.box_board);
  Replay out;
  out.start = toss.impact - kLeadFrames;
  const Frame& first = toss.frames[static_cast<size_t>(out.start)];
  worlds::BodyOptions cube = cube_body(parameters);
  cube.position = first.position;
  cube.orientation = first.orientation;
  cube.velocity = first.velocity;
  cube.angular_velocity = first.angular_velocity;
  if (replay_options.central_differences && out.start >= 1) {
    const Frame& before = toss.frames[static_cast<size_t>(out.start - 1)];
    const Frame& after = toss.frames[static_cast<size_t>(out.start + 1)];
    const double span = after.t - before.t;
    cube.velocity = (after.position - before.position) / span;
    // ω from the relative rotation q_after q_before⁻¹ (world frame).
    Eigen::Quaterniond relative = after.orientation * before.orientation.inverse();
    if (relative.w() < 0.0) relative.coeffs() *= -1.0;  // the short way round
    const Eigen::AngleAxisd turn(relative);
    cube.angular_velocity = turn.axis() * (turn.angle() / span);
  }
  btRigidBody* body = world->add_box(Eigen::Vector3d::Constant(kHalfWidth), cube);

  const double dt = 1.0 / kFrameRate;
  out.frames.push_back(frame_of(*body, first.t));
  if (observe) observe(*world, 0);
  for (int k = 0; k < kLeadFrames + horizon; ++k) {
    world->step(dt / replay_options.substeps, replay_options.substeps);
    out.frames.push_back(frame_of(*body, first.t + (k + 1) * dt));
    if (observe) observe(*world, k + 1);
  }
  return out;
}

Errors compare(const Frame& simulated, const Frame& recorded) {
  Errors e;
  e.position = (simulated.position - recorded.position).norm() / kHalfWidth;
  e.velocity = (simulated.velocity - recorded.velocity).norm();
  e.angular_velocity = (simulated.angular_velocity - recorded.angular_velocity).norm();
  e.orientation = simulated.orientation.angularDistance(recorded.orientation) * 180.0 / M_PI;
  e.vertical_velocity = simulated.velocity.z() - recorded.velocity.z();
  return e;
}

}  // namespace simpact::cube_toss
