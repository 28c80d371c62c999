#include "simpact_scenes/core_scenes.h"

#include "simpact_scenes/random_problems.h"

#include <Eigen/SparseCore>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace simpact::scenes {

namespace {

constexpr double kPi = 3.14159265358979323846;

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

void require_positive(double value, const char* name) {
  require(std::isfinite(value) && value > 0.0,
          std::string(name) + " must be positive and finite, got " + std::to_string(value));
}

/// Diagonal M⁻¹ from per-DOF masses.
SparseColMatrix diagonal_inverse_mass(const Eigen::VectorXd& masses) {
  SparseColMatrix inverse_mass(masses.size(), masses.size());
  inverse_mass.reserve(Eigen::VectorXi::Ones(static_cast<int>(masses.size())));
  for (Eigen::Index i = 0; i < masses.size(); ++i) inverse_mass.insert(i, i) = 1.0 / masses[i];
  inverse_mass.makeCompressed();
  return inverse_mass;
}

}  // namespace

ImpactProblem newtons_cradle(int balls, int incoming, double speed, const Eigen::VectorXd& masses) {
  require(balls >= 2, "newtons_cradle needs at least 2 balls, got " + std::to_string(balls));
  require(incoming >= 0 && incoming <= balls,
          "newtons_cradle: incoming must be in [0, balls], got " + std::to_string(incoming));
  require(std::isfinite(speed), "newtons_cradle: speed must be finite");
  require(masses.size() == 0 || masses.size() == balls,
          "newtons_cradle: masses must be empty or have one entry per ball");
  const Eigen::VectorXd m = masses.size() == 0 ? Eigen::VectorXd::Ones(balls) : masses;
  for (Eigen::Index i = 0; i < m.size(); ++i) require_positive(m[i], "newtons_cradle mass");

  ImpactProblem problem;
  problem.inverse_mass = diagonal_inverse_mass(m);

  // Contact i: gap x_{i+1} − x_i − (r_i + r_{i+1}), gradient −e_i + e_{i+1}.
  const int contacts = balls - 1;
  problem.normals.resize(contacts, balls);
  problem.normals.reserve(Eigen::VectorXi::Constant(contacts, 2));
  for (int i = 0; i < contacts; ++i) {
    problem.normals.insert(i, i) = -1.0;
    problem.normals.insert(i, i + 1) = 1.0;
  }
  problem.normals.makeCompressed();

  problem.velocity = Eigen::VectorXd::Zero(balls);
  problem.velocity.head(incoming).setConstant(speed);
  return problem;
}

ImpactProblem ball_chain(int balls, double speed) { return newtons_cradle(balls, 1, speed); }

ImpactProblem ball_pit(int per_side, int layers, double sink, double jitter, double position_noise,
                       std::uint64_t seed) {
  require(per_side >= 1 && layers >= 1, "ball_pit needs at least one ball per side and one layer");
  require(std::isfinite(sink) && std::isfinite(jitter) && jitter >= 0.0,
          "ball_pit: sink must be finite and jitter finite and non-negative");
  constexpr double kRadius = 0.1, kMass = 0.2;
  require(std::isfinite(position_noise) && position_noise >= 0.0 && position_noise < 0.1 * kRadius,
          "ball_pit: position_noise must be in [0, 0.01) m");
  Random random(seed);
  const int balls = per_side * per_side * layers;
  const auto index = [&](int i, int j, int l) { return (l * per_side + j) * per_side + i; };
  std::vector<Eigen::Vector3d> centre(static_cast<size_t>(balls));
  for (int l = 0; l < layers; ++l)
    for (int j = 0; j < per_side; ++j)
      for (int i = 0; i < per_side; ++i) {
        Eigen::Vector3d x((2 * i + 1) * kRadius, (2 * l + 1) * kRadius, (2 * j + 1) * kRadius);
        for (int c = 0; c < 3; ++c) x[c] += random.uniform(-position_noise, position_noise);
        centre[static_cast<size_t>(index(i, j, l))] = x;
      }
  std::vector<Eigen::Triplet<double>> entries;
  int row = 0;
  const auto pair = [&](int a, int b) {  // a's centre minus b's: J v > 0 separates
    const Eigen::Vector3d n = (centre[static_cast<size_t>(a)] - centre[static_cast<size_t>(b)]).normalized();
    for (int c = 0; c < 3; ++c) {
      entries.emplace_back(row, 3 * a + c, n[c]);
      entries.emplace_back(row, 3 * b + c, -n[c]);
    }
    ++row;
  };
  const auto wall = [&](int a, int axis, double sign) {
    entries.emplace_back(row++, 3 * a + axis, sign);
  };
  for (int l = 0; l < layers; ++l)
    for (int j = 0; j < per_side; ++j)
      for (int i = 0; i < per_side; ++i) {
        const int a = index(i, j, l);
        if (i + 1 < per_side) pair(index(i + 1, j, l), a);
        if (l + 1 < layers) pair(index(i, j, l + 1), a);
        if (j + 1 < per_side) pair(index(i, j + 1, l), a);
      }
  for (int l = 0; l < layers; ++l)
    for (int j = 0; j < per_side; ++j)
      for (int i = 0; i < per_side; ++i) {
        const int a = index(i, j, l);
        if (l == 0) wall(a, 1, 1.0);
        if (i == 0) wall(a, 0, 1.0);
        if (i + 1 == per_side) wall(a, 0, -1.0);
        if (j == 0) wall(a, 2, 1.0);
        if (j + 1 == per_side) wall(a, 2, -1.0);
      }
  ImpactProblem problem;
  problem.inverse_mass = diagonal_inverse_mass(Eigen::VectorXd::Constant(3 * balls, kMass));
  problem.normals.resize(row, 3 * balls);
  problem.normals.setFromTriplets(entries.begin(), entries.end());
  problem.velocity.resize(3 * balls);
  for (int a = 0; a < balls; ++a)
    for (int c = 0; c < 3; ++c) problem.velocity[3 * a + c] = jitter * random.normal() - (c == 1 ? sink : 0.0);
  return problem;
}

ImpactProblem two_balls_wall(const Eigen::Vector2d& masses, const Eigen::Vector2d& velocity) {
  require_positive(masses[0], "two_balls_wall mass 1");
  require_positive(masses[1], "two_balls_wall mass 2");
  Eigen::Matrix2d normals;
  normals << 1.0, 0.0,  // u: wall–ball 1, gap x1 − r
      -1.0, 1.0;        // v: ball 1–ball 2, gap x2 − x1 − 2r
  return ImpactProblem::from_dense(masses.cwiseInverse().asDiagonal().toDenseMatrix(), normals,
                                   velocity);
}

ImpactProblem billiard_break(double theta, double ra, double rb, double rc, double ma, double mb,
                             double mc, double speed) {
  require(std::isfinite(theta) && theta > 0.0 && theta <= kPi,
          "billiard_break: theta must be in (0, pi], got " + std::to_string(theta));
  require_positive(ra, "billiard_break ra");
  require_positive(rb, "billiard_break rb");
  require_positive(rc, "billiard_break rc");
  require_positive(ma, "billiard_break ma");
  require_positive(mb, "billiard_break mb");
  require_positive(mc, "billiard_break mc");
  require(std::isfinite(speed), "billiard_break: speed must be finite");

  // c at the origin; a and b on either side of the +x bisector.
  const double half = 0.5 * theta;
  const Eigen::Vector2d dir_a(std::cos(half), std::sin(half));   // unit c→a
  const Eigen::Vector2d dir_b(std::cos(half), -std::sin(half));  // unit c→b

  // ∇φ_a: ∂/∂q_a = (q_a − q_c)/|q_a − q_c| = dir_a, ∂/∂q_c = −dir_a.
  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(2, 6);
  normals.block<1, 2>(0, 0) = dir_a.transpose();
  normals.block<1, 2>(0, 4) = -dir_a.transpose();
  normals.block<1, 2>(1, 2) = dir_b.transpose();
  normals.block<1, 2>(1, 4) = -dir_b.transpose();

  Eigen::VectorXd masses(6);
  masses << ma, ma, mb, mb, mc, mc;
  Eigen::VectorXd velocity = Eigen::VectorXd::Zero(6);
  velocity[4] = speed;

  ImpactProblem problem;
  problem.inverse_mass = diagonal_inverse_mass(masses);
  problem.normals = normals.sparseView();
  problem.velocity = velocity;
  return problem;
}

namespace {

/// Equal unit-mass planar disks at `centres`, one contact per pair in
/// `pairs`: row = the unit gradient of |q_j − q_i| (−n on i, +n on j).
ImpactProblem touching_disks(const std::vector<Eigen::Vector2d>& centres,
                             const std::vector<std::pair<int, int>>& pairs, const Eigen::VectorXd& velocity) {
  const int dofs = 2 * static_cast<int>(centres.size());
  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(static_cast<int>(pairs.size()), dofs);
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const auto [i, j] = pairs[k];
    const Eigen::Vector2d n = (centres[j] - centres[i]).normalized();
    normals.block<1, 2>(static_cast<int>(k), 2 * i) = -n.transpose();
    normals.block<1, 2>(static_cast<int>(k), 2 * j) = n.transpose();
  }
  ImpactProblem problem;
  problem.inverse_mass = diagonal_inverse_mass(Eigen::VectorXd::Ones(dofs));
  problem.normals = normals.sparseView();
  problem.velocity = velocity;
  return problem;
}

}  // namespace

ImpactProblem split_shot(double mu, double radius, double speed) {
  require(std::isfinite(mu), "split_shot: mu must be finite");
  require_positive(radius, "split_shot radius");
  require(std::isfinite(speed), "split_shot: speed must be finite");
  const double h = std::sqrt(3.0) * radius;
  Eigen::VectorXd velocity = Eigen::VectorXd::Zero(6);
  velocity.head<2>() = speed * Eigen::Vector2d(mu, 1.0);
  return touching_disks({{0.0, 0.0}, {-radius, h}, {radius, h}}, {{0, 1}, {0, 2}, {1, 2}}, velocity);
}

ImpactProblem break_shot(double phi, double radius, double speed) {
  require(std::isfinite(phi) && std::abs(phi) < 0.5 * kPi,
          "break_shot: phi must be in (-pi/2, pi/2), got " + std::to_string(phi));
  require_positive(radius, "break_shot radius");
  require(std::isfinite(speed), "break_shot: speed must be finite");
  const double h = std::sqrt(3.0) * radius;
  const Eigen::Vector2d cue = -2.0 * radius * Eigen::Vector2d(std::sin(phi), std::cos(phi));
  Eigen::VectorXd velocity = Eigen::VectorXd::Zero(8);
  velocity[1] = speed;
  return touching_disks({cue, {0.0, 0.0}, {-radius, h}, {radius, h}}, {{0, 1}, {1, 2}, {1, 3}, {2, 3}},
                        velocity);
}

double billiard_min_angle(double ra, double rb, double rc) {
  require_positive(ra, "billiard_min_angle ra");
  require_positive(rb, "billiard_min_angle rb");
  require_positive(rc, "billiard_min_angle rc");
  const double da = ra + rc, db = rb + rc, dab = ra + rb;
  return std::acos((da * da + db * db - dab * dab) / (2.0 * da * db));
}

}  // namespace simpact::scenes
