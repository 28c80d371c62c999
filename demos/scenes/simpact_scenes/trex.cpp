#include "simpact_scenes/trex.h"

#include <Eigen/LU>

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace simpact::scenes {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kBodyDensity = 1000.0;  // water, 1 g/cm³ [kg/m³]
constexpr double kLimbDensity = 2000.0;  // carbon fibre, 2 g/cm³
constexpr double kLimbSection = 1.25e-4; // 1.25 cm² [m²]
constexpr double kGravity = 9.81;
constexpr double kDropHeight = 0.17;     // Seghete & Murphey 2014, §VII-B [m]

enum Coordinate { kX, kY, kTheta, kPhiL, kGammaL, kPhiR, kGammaR, kPhiT, kDofs };

// An absolute angle θ + … as coefficients on q (plus a constant).
struct Angle {
  Eigen::Matrix<double, kDofs, 1> c = Eigen::Matrix<double, kDofs, 1>::Zero();
  double offset = 0.0;
  double at(const Eigen::VectorXd& q) const { return c.dot(q) + offset; }
};

Angle angle(std::initializer_list<int> coordinates, double offset = 0.0) {
  Angle a;
  for (int k : coordinates) a.c[k] = 1.0;
  a.offset = offset;
  return a;
}

// A point (x, y) + Σ_k length_k e(α_k(q)), with its Jacobian ∂p/∂q.
struct Point {
  std::vector<std::pair<double, Angle>> arms;

  Eigen::Vector2d at(const Eigen::VectorXd& q) const {
    Eigen::Vector2d p(q[kX], q[kY]);
    for (const auto& [length, a] : arms) {
      const double alpha = a.at(q);
      p += length * Eigen::Vector2d(std::cos(alpha), std::sin(alpha));
    }
    return p;
  }

  Eigen::Matrix<double, 2, kDofs> jacobian(const Eigen::VectorXd& q) const {
    Eigen::Matrix<double, 2, kDofs> j = Eigen::Matrix<double, 2, kDofs>::Zero();
    j(0, kX) = 1.0;
    j(1, kY) = 1.0;
    for (const auto& [length, a] : arms) {
      const double alpha = a.at(q);
      const Eigen::Vector2d perpendicular(-std::sin(alpha), std::cos(alpha));
      j += length * perpendicular * a.c.transpose();
    }
    return j;
  }
};

struct Body {
  double mass = 0.0, inertia = 0.0;
  Point centre;
  Angle orientation;
};

struct Model {
  std::vector<Body> bodies;
  Point left_foot, right_foot, tail_tip;
};

void check(const Eigen::VectorXd& q) {
  if (q.size() != kDofs || !q.allFinite())
    throw std::invalid_argument("trex: q must have 8 finite entries [x, y, θ, φL, γL, φR, γR, φT]");
}

Model build(const TrexDesign& d) {
  const double tail = trex_tail_length(d);
  if (!(d.thigh > 0.0 && d.shank > 0.0 && std::isfinite(d.thigh) && std::isfinite(d.shank)))
    throw std::invalid_argument("trex: leg lengths must be finite and > 0");
  const double per_length = kLimbDensity * kLimbSection;
  auto sphere = [](double r) {
    const double m = kBodyDensity * 4.0 / 3.0 * kPi * r * r * r;
    return std::pair<double, double>(m, 0.4 * m * r * r);
  };
  auto rod = [&](double l) {
    const double m = per_length * l;
    return std::pair<double, double>(m, m * l * l / 12.0);
  };
  const Angle back = angle({kTheta, kPhiT}, kPi);  // body axis, pointing backwards
  Model model;
  const auto [m1, i1] = sphere(d.r1);
  model.bodies.push_back({m1, i1, Point{}, angle({kTheta})});
  const auto [m2, i2] = sphere(d.r2);
  model.bodies.push_back({m2, i2, Point{{{d.r1 + d.r2, back}}}, back});
  const auto [mt, it] = rod(tail);
  model.bodies.push_back({mt, it, Point{{{d.r1 + 2.0 * d.r2 + 0.5 * tail, back}}}, back});
  model.tail_tip = Point{{{d.r1 + 2.0 * d.r2 + tail, back}}};
  for (const auto& [phi, gamma] : {std::pair<int, int>{kPhiL, kGammaL}, {kPhiR, kGammaR}}) {
    const Angle thigh = angle({kTheta, phi});
    const Angle shank = angle({kTheta, phi, gamma});
    const auto [mu, iu] = rod(d.thigh);
    const auto [ml, il] = rod(d.shank);
    model.bodies.push_back({mu, iu, Point{{{0.5 * d.thigh, thigh}}}, thigh});
    model.bodies.push_back({ml, il, Point{{{d.thigh, thigh}, {0.5 * d.shank, shank}}}, shank});
    (phi == kPhiR ? model.right_foot : model.left_foot) = Point{{{d.thigh, thigh}, {d.shank, shank}}};
  }
  return model;
}

}  // namespace

double trex_tail_length(const TrexDesign& d) {
  if (!(std::isfinite(d.r1) && std::isfinite(d.r2) && d.r1 > d.r2 && d.r2 > 0.0))
    throw std::invalid_argument("trex: radii must satisfy r1 > r2 > 0 (got r1 = " +
                                std::to_string(d.r1) + ", r2 = " + std::to_string(d.r2) + ")");
  const double r1 = d.r1, r2 = d.r2;
  return (r1 * r1 * r1 + r1 * r1 * r2 +
          std::sqrt(2.0) * std::sqrt(r1 * r1 * r1 * r1 * r2 * r2 + r1 * r1 * r1 * r2 * r2 * r2)) /
             (r1 * r1 - r2 * r2) -
         (r1 + r2);
}

Eigen::MatrixXd trex_mass_matrix(const Eigen::VectorXd& q, const TrexDesign& design) {
  check(q);
  const Model model = build(design);
  Eigen::MatrixXd mass = Eigen::MatrixXd::Zero(kDofs, kDofs);
  for (const Body& b : model.bodies) {
    const Eigen::Matrix<double, 2, kDofs> j = b.centre.jacobian(q);
    mass += b.mass * j.transpose() * j + b.inertia * b.orientation.c * b.orientation.c.transpose();
  }
  return mass;
}

Eigen::Vector2d trex_left_foot(const Eigen::VectorXd& q, const TrexDesign& design) {
  check(q);
  return build(design).left_foot.at(q);
}

Eigen::Vector2d trex_right_foot(const Eigen::VectorXd& q, const TrexDesign& design) {
  check(q);
  return build(design).right_foot.at(q);
}

Eigen::Vector2d trex_tail_tip(const Eigen::VectorXd& q, const TrexDesign& design) {
  check(q);
  return build(design).tail_tip.at(q);
}

DesignPoint trex_double_strike(const Eigen::VectorXd& q, const TrexDesign& design,
                               const Eigen::VectorXd& velocity) {
  check(q);
  if (velocity.size() != kDofs) throw std::invalid_argument("trex: velocity must have 8 entries");
  const Model model = build(design);
  Eigen::MatrixXd rows(2, kDofs);
  rows.row(0) = model.right_foot.jacobian(q).row(1);
  rows.row(1) = model.tail_tip.jacobian(q).row(1);
  DesignPoint point;
  point.problem = ImpactProblem::from_dense(trex_mass_matrix(q, design).inverse(), rows, velocity);
  point.constraints = Eigen::Vector2d(model.right_foot.at(q).y(), model.tail_tip.at(q).y());
  return point;
}

Eigen::VectorXd trex_initial_stance(const TrexDesign& design) {
  Eigen::VectorXd q = Eigen::VectorXd::Zero(kDofs);
  q[kTheta] = 0.3;               // nose up
  q[kPhiR] = -1.3 - q[kTheta];   // right thigh down and forward (absolute −1.3 rad)
  q[kGammaR] = -0.5;             // right shank back under the hip
  q[kPhiL] = -2.3 - q[kTheta];   // left thigh down and back
  q[kGammaL] = 0.7;              // left foot 1.5 cm off the ground
  const Model model = build(design);
  q[kY] = -model.right_foot.at(q).y();  // right foot on the ground
  // Tail tip at height y − reach sin(θ + φT): on the ground when
  // sin(θ + φT) = y / reach.
  const double reach = design.r1 + 2.0 * design.r2 + trex_tail_length(design);
  q[kPhiT] = std::asin(q[kY] / reach) - q[kTheta];
  return q;
}

Eigen::VectorXd trex_drop_velocity() {
  Eigen::VectorXd v = Eigen::VectorXd::Zero(kDofs);
  v[kY] = -std::sqrt(2.0 * kGravity * kDropHeight);
  return v;
}

}  // namespace simpact::scenes
