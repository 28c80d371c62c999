#include "simpact_scenes/frictional_scenes.h"

#include <Eigen/Cholesky>
#include <Eigen/Geometry>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace simpact::scenes {

namespace {

constexpr double kPi = 3.14159265358979323846;

double degrees(double deg) { return deg * kPi / 180.0; }

double cross(const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
  return a.x() * b.y() - a.y() * b.x();
}

/// Columns of q that move one rigid frame: x, y of its reference point and
/// its angle θ. A frame without a column (the ground) has none.
struct Frame {
  int x = -1;
  int y = -1;
  int theta = -1;
};

/// Planar contact rows for a material point of `frame`, at world offset r
/// from the frame's reference point: ∂(d·p)/∂q for the unit direction d.
void add_point_row(Eigen::MatrixXd& rows, int row, double sign, const Frame& frame,
                   const Eigen::Vector2d& r, const Eigen::Vector2d& d) {
  if (frame.x >= 0) rows(row, frame.x) += sign * d.x();
  if (frame.y >= 0) rows(row, frame.y) += sign * d.y();
  if (frame.theta >= 0) rows(row, frame.theta) += sign * cross(r, d);  // θ̇ ẑ×r · d
}

/// Contact `row` between material point r_a of frame a and r_b of frame b,
/// unit normal n from a to b: J_n = ∂(n·(p_b − p_a))/∂q (the gap gradient,
/// as the gap changes at first order only through n·(p_b − p_a)), and J_t the
/// same along t = (n_y, −n_x) (see the header for the convention).
void add_contact(Eigen::MatrixXd& normals, Eigen::MatrixXd& tangents, int row,
                 const Eigen::Vector2d& n, const Frame& a, const Eigen::Vector2d& r_a,
                 const Frame& b, const Eigen::Vector2d& r_b) {
  const Eigen::Vector2d t(n.y(), -n.x());
  add_point_row(normals, row, +1.0, b, r_b, n);
  add_point_row(normals, row, -1.0, a, r_a, n);
  add_point_row(tangents, row, +1.0, b, r_b, t);
  add_point_row(tangents, row, -1.0, a, r_a, t);
}

/// M⁻¹ of an SPD M, exactly symmetric (FrictionalProblem validation and the
/// Delassus matrices rely on symmetry; an LLT solve leaves ~1e-16 asymmetry).
Eigen::MatrixXd symmetric_inverse(const Eigen::MatrixXd& mass, const std::string& what) {
  const Eigen::LLT<Eigen::MatrixXd> llt(mass);
  if (llt.info() != Eigen::Success)
    throw std::logic_error(what + ": mass matrix is not positive definite");
  const Eigen::MatrixXd inverse = llt.solve(Eigen::MatrixXd::Identity(mass.rows(), mass.cols()));
  return 0.5 * (inverse + inverse.transpose());
}

FrictionalExample make_example(std::string name, std::string title, const Eigen::MatrixXd& mass,
                               const Eigen::MatrixXd& normals, const Eigen::MatrixXd& tangents,
                               const Eigen::VectorXd& velocity, const Eigen::VectorXd& friction) {
  FrictionalExample example;
  example.problem = FrictionalProblem::from_dense(symmetric_inverse(mass, name), normals, tangents,
                                                  velocity, friction);
  example.name = std::move(name);
  example.title = std::move(title);
  example.mass = mass;
  return example;
}

}  // namespace

FrictionalExample falling_block() {
  constexpr double kWidth = 1.0, kHeight = 2.0, kMass = 1.0;
  constexpr double kSpeed = 0.4429;  // √(2 · 9.81 · 0.01), Halm & Posa, Table 4
  const double inertia = kMass * (kWidth * kWidth + kHeight * kHeight) / 12.0;

  const Frame block{0, 1, 2};
  const Frame ground{};
  const Eigen::Vector2d up(0.0, 1.0);
  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(2, 3);
  Eigen::MatrixXd tangents = Eigen::MatrixXd::Zero(2, 3);
  // The ground's material point does not move: its offset is irrelevant.
  add_contact(normals, tangents, 0, up, ground, Eigen::Vector2d::Zero(), block,
              Eigen::Vector2d(kWidth / 2, -kHeight / 2));  // A, bottom-right
  add_contact(normals, tangents, 1, up, ground, Eigen::Vector2d::Zero(), block,
              Eigen::Vector2d(-kWidth / 2, -kHeight / 2));  // B, bottom-left

  FrictionalExample example =
      make_example("rocking_block", "Rocking block (Halm and Posa, Figs. 1, 9)",
                   Eigen::Vector3d(kMass, kMass, inertia).asDiagonal(), normals, tangents,
                   Eigen::Vector3d(0.0, -kSpeed, 0.0), Eigen::Vector2d::Constant(1.0));
  example.step = 0.3;
  example.max_steps = 10;
  example.paper_samples = 1 << 14;
  example.contact_names = {"A", "B"};
  example.sequential_orders = {{"A,B", {0, 1}}, {"B,A", {1, 0}}};
  example.paper = {2.67, 2.1e-3, 8.0e-4};
  return example;
}

FrictionalExample box_wall() {
  constexpr double kSide = 1.0, kMass = 1.0, kSpeed = 1.0;
  const double inertia = kMass * kSide * kSide / 6.0;
  // The square turned 10° clockwise (MATLAB: θ = π/2 − 10°, the same square).
  const double c = std::cos(degrees(10.0)), s = std::sin(degrees(10.0));
  const double a = 0.5 * kSide * (c - s), b = 0.5 * kSide * (c + s);

  const Frame box{0, 1, 2};
  const Frame fixed{};
  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(2, 3);
  Eigen::MatrixXd tangents = Eigen::MatrixXd::Zero(2, 3);
  add_contact(normals, tangents, 0, Eigen::Vector2d(0.0, 1.0), fixed, Eigen::Vector2d::Zero(), box,
              Eigen::Vector2d(a, -b));  // A: lowest corner on the floor
  add_contact(normals, tangents, 1, Eigen::Vector2d(-1.0, 0.0), fixed, Eigen::Vector2d::Zero(), box,
              Eigen::Vector2d(b, a));  // B: rightmost corner on the wall

  FrictionalExample example =
      make_example("box_wall", "Box sliding into a wall (Halm and Posa, Figs. 5, 11)",
                   Eigen::Vector3d(kMass, kMass, inertia).asDiagonal(), normals, tangents,
                   Eigen::Vector3d(kSpeed, 0.0, 0.0), Eigen::Vector2d::Constant(1.0));
  example.step = 2.0;
  example.max_steps = 5;
  example.paper_samples = 1 << 18;
  example.contact_names = {"A", "B"};
  example.sequential_orders = {{"A,B", {0, 1}}, {"B,A", {1, 0}}};
  example.paper = {1.97, 1.6e-3, 8.1e-4};
  return example;
}

FrictionalExample compass_gait() {
  constexpr double kLeg = 1.0, kMass = 1.0, kLegRate = 0.25;
  const double phi = degrees(78.0);
  const double theta_lead = -phi, theta_trail = phi;

  // Legs hinge at the pelvis: frame (x, y, θ_i) with the foot at
  // l (sin θ_i, −cos θ_i) from the pelvis.
  const Frame lead{0, 1, 2}, trail{0, 1, 3};
  const auto foot = [&](double theta) {
    return Eigen::Vector2d(kLeg * std::sin(theta), -kLeg * std::cos(theta));
  };

  // M = Σ m Pᵀ P over the midpoint masses, P = ∂(midpoint)/∂q.
  Eigen::MatrixXd mass = Eigen::MatrixXd::Zero(4, 4);
  for (const auto& [frame, theta] : {std::pair{lead, theta_lead}, std::pair{trail, theta_trail}}) {
    Eigen::MatrixXd p = Eigen::MatrixXd::Zero(2, 4);
    const Eigen::Vector2d mid = 0.5 * foot(theta);
    add_point_row(p, 0, 1.0, frame, mid, Eigen::Vector2d(1.0, 0.0));
    add_point_row(p, 1, 1.0, frame, mid, Eigen::Vector2d(0.0, 1.0));
    mass += kMass * p.transpose() * p;
  }

  const Frame ground{};
  const Eigen::Vector2d up(0.0, 1.0);
  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(2, 4);
  Eigen::MatrixXd tangents = Eigen::MatrixXd::Zero(2, 4);
  add_contact(normals, tangents, 0, up, ground, Eigen::Vector2d::Zero(), lead, foot(theta_lead));
  add_contact(normals, tangents, 1, up, ground, Eigen::Vector2d::Zero(), trail, foot(theta_trail));

  // Pelvis velocity that keeps the trailing foot still: pelvis = foot −
  // l (sin φ, −cos φ), so its velocity is −l (cos φ, sin φ) φ̇.
  Eigen::Vector4d velocity(-kLeg * std::cos(phi) * kLegRate, -kLeg * std::sin(phi) * kLegRate,
                           kLegRate, kLegRate);

  FrictionalExample example =
      make_example("compass_gait", "Compass gait, wide step (Halm and Posa, Figs. 4, 10)", mass,
                   normals, tangents, velocity, Eigen::Vector2d::Constant(5.0));
  example.step = 0.25;
  example.max_steps = 5;
  example.paper_samples = 1 << 20;
  example.contact_names = {"A", "B"};
  example.sequential_orders = {{"A,B", {0, 1}}, {"B,A", {1, 0}}};
  example.paper = {2.27, 1.9e-3, 8.5e-4};
  return example;
}

FrictionalExample disk_stack() {
  constexpr double kRadius = 1.0, kMass = 1.0, kSpeed = 1.0;
  const double inertia = 0.5 * kMass * kRadius * kRadius;
  const double root3 = std::sqrt(3.0);

  const Frame left{0, 1, 2}, right{3, 4, 5}, top{6, 7, 8};
  const Frame ground{};
  const Eigen::Vector2d to_top_from_left(0.5, 0.5 * root3);
  const Eigen::Vector2d to_top_from_right(-0.5, 0.5 * root3);
  const Eigen::Vector2d to_right(1.0, 0.0), up(0.0, 1.0);

  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(5, 9);
  Eigen::MatrixXd tangents = Eigen::MatrixXd::Zero(5, 9);
  // Disk–disk: the touching points are R n from a's centre and −R n from b's.
  const auto disks = [&](int row, const Eigen::Vector2d& n, const Frame& a, const Frame& b) {
    add_contact(normals, tangents, row, n, a, kRadius * n, b, -kRadius * n);
  };
  disks(0, to_top_from_left, left, top);
  disks(1, to_top_from_right, right, top);
  disks(2, to_right, left, right);
  add_contact(normals, tangents, 3, up, ground, Eigen::Vector2d::Zero(), left, -kRadius * up);
  add_contact(normals, tangents, 4, up, ground, Eigen::Vector2d::Zero(), right, -kRadius * up);

  Eigen::VectorXd masses(9);
  masses << kMass, kMass, inertia, kMass, kMass, inertia, kMass, kMass, inertia;
  Eigen::VectorXd velocity = Eigen::VectorXd::Zero(9);
  velocity[7] = -kSpeed;

  FrictionalExample example =
      make_example("disk_stack", "Three-disk stack (Halm and Posa, Fig. 14)", masses.asDiagonal(),
                   normals, tangents, velocity, Eigen::VectorXd::Constant(5, root3));
  example.step = 1.0;
  example.max_steps = 10;
  example.paper_samples = 1 << 20;
  example.contact_names = {"top-left", "top-right", "left-right", "left-ground", "right-ground"};
  // Each side's contacts first, then the middle one, then the other side;
  // the two orders are mirror images of each other.
  example.sequential_orders = {{"left first", {0, 3, 2, 1, 4}}, {"right first", {1, 4, 2, 0, 3}}};
  example.paper = {9.04, 1.1e-2, 1.3e-3};
  return example;
}

std::vector<FrictionalExample> all_frictional_examples() {
  return {falling_block(), box_wall(), compass_gait(), disk_stack()};
}

simpact::FrictionalProblem falling_box_stack(int boxes, double speed, double friction) {
  if (boxes < 1) throw std::invalid_argument("falling_box_stack needs >= 1 box");
  constexpr double kHalfX = 0.5, kHalfY = 0.25, kHalfZ = 0.5, kMass = 1.0;
  const int n = 6 * boxes, m = 4 * boxes;
  // Solid box about its centre: I_x = m (b² + c²) / 3 with half extents.
  const Eigen::Vector3d inertia(kMass * (kHalfY * kHalfY + kHalfZ * kHalfZ) / 3.0,
                                kMass * (kHalfX * kHalfX + kHalfZ * kHalfZ) / 3.0,
                                kMass * (kHalfX * kHalfX + kHalfY * kHalfY) / 3.0);
  Eigen::MatrixXd minv = Eigen::MatrixXd::Zero(n, n);
  Eigen::MatrixXd jn = Eigen::MatrixXd::Zero(m, n), jt = Eigen::MatrixXd::Zero(2 * m, n);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(n);
  for (int b = 0; b < boxes; ++b) {
    minv.block<3, 3>(6 * b, 6 * b) = Eigen::Matrix3d::Identity() / kMass;
    minv.block<3, 3>(6 * b + 3, 6 * b + 3) = inertia.cwiseInverse().asDiagonal();
    v[6 * b + 1] = -speed;
  }
  const Eigen::Vector3d directions[3] = {{0, 1, 0}, {-1, 0, 0}, {0, 0, 1}};
  int c = 0;
  for (int layer = 0; layer < boxes; ++layer)  // box `layer` on box layer−1 (or the ground)
    for (int sx : {-1, 1})
      for (int sz : {-1, 1}) {
        const Eigen::Vector3d on_upper(sx * kHalfX, -kHalfY, sz * kHalfZ);
        const Eigen::Vector3d on_lower(sx * kHalfX, kHalfY, sz * kHalfZ);
        for (int k = 0; k < 3; ++k) {
          Eigen::RowVectorXd row = Eigen::RowVectorXd::Zero(n);
          const Eigen::Vector3d& dir = directions[k];
          row.segment<3>(6 * layer) = dir.transpose();
          row.segment<3>(6 * layer + 3) = on_upper.cross(dir).transpose();
          if (layer > 0) {
            row.segment<3>(6 * (layer - 1)) -= dir.transpose();
            row.segment<3>(6 * (layer - 1) + 3) -= on_lower.cross(dir).transpose();
          }
          if (k == 0)
            jn.row(c) = row;
          else
            jt.row(2 * c + k - 1) = row;
        }
        ++c;
      }
  return simpact::FrictionalProblem::from_dense(minv, jn, jt, v,
                                                Eigen::VectorXd::Constant(m, friction));
}

double kinetic_energy(const FrictionalExample& example, const Eigen::VectorXd& velocity) {
  return 0.5 * velocity.dot(example.mass * velocity);
}

}  // namespace simpact::scenes
