// Independent dense reference computations for simpact tests: velocity-space
// reflection matrices (Seghete & Murphey 2010, §III-B; Seghete & Murphey 2014,
// eq. (7)), energies from momenta, and a two-contact alternating reflection
// loop. They share no code with the core (which works in contact space with
// sparse matrices), so agreement is evidence, not tautology.
//
// Papers (README.md, "Papers"):
//   Seghete & Murphey 2010: Vlad Seghete and Todd Murphey, "Variational
//     Solutions to Simultaneous Collisions Between Multiple Rigid Bodies",
//     IEEE ICRA 2010.
//   Seghete & Murphey 2014: Vlad Seghete and Todd D. Murphey, "A propagative
//     model of simultaneous impact: existence, uniqueness, and design
//     consequences", IEEE Transactions on Automation Science and Engineering
//     11(1), 2014; arXiv:1709.02296.
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

#include <cmath>
#include <vector>

namespace simpact::testing {

inline Eigen::MatrixXd Dense(const SparseColMatrix& a) { return Eigen::MatrixXd(a); }
inline Eigen::MatrixXd Dense(const SparseRowMatrix& a) { return Eigen::MatrixXd(a); }

/// G_w = I − 2 M⁻¹ wᵀ w / (w M⁻¹ wᵀ): the elastic reflection of a velocity in
/// contact w (Seghete & Murphey 2010, §III-B; Seghete & Murphey 2014, eq. (7),
/// written on velocities). Needs w M⁻¹ wᵀ > 0.
inline Eigen::MatrixXd Reflection(const Eigen::MatrixXd& inverse_mass,
                                  const Eigen::RowVectorXd& w) {
  const Eigen::VectorXd minv_w = inverse_mass * w.transpose();
  const double wmw = w.dot(minv_w);
  return Eigen::MatrixXd::Identity(inverse_mass.rows(), inverse_mass.cols()) -
         (2.0 / wmw) * minv_w * w;
}

/// Kinetic energy ½ pᵀ M⁻¹ p of a momentum covector p (v = M⁻¹ p); needs no
/// inverse of M⁻¹, so it is exact for singular M⁻¹ too.
inline double MomentumEnergy(const Eigen::MatrixXd& inverse_mass, const Eigen::VectorXd& p) {
  return 0.5 * p.dot(inverse_mass * p);
}

/// g-normalized cosine c = W_01 / √(W_00 W_11) of two contact rows.
inline double NormalizedInnerProduct(const Eigen::MatrixXd& inverse_mass,
                                     const Eigen::RowVectorXd& a, const Eigen::RowVectorXd& b) {
  return a.dot(inverse_mass * b.transpose()) /
         std::sqrt(a.dot(inverse_mass * a.transpose()) * b.dot(inverse_mass * b.transpose()));
}

struct ReferenceOutcome {
  Eigen::VectorXd velocity;
  std::vector<int> sequence;
};

/// Two contacts (rows of `normals`), b = 0: reflect `first`, then keep
/// reflecting whichever contact approaches (after a reflection only the other
/// one can), with dense G matrices. Contact i approaches when
/// J_i v / √W_ii < −tol·S, S = max_j |J_j v⁻| / √W_jj (the rule documented in
/// propagative.h). Stops after `cap` reflections.
inline ReferenceOutcome AlternatingReflections(const Eigen::MatrixXd& inverse_mass,
                                               const Eigen::MatrixXd& normals,
                                               const Eigen::VectorXd& velocity, int first,
                                               double tol, int cap) {
  const Eigen::MatrixXd g[2] = {Reflection(inverse_mass, normals.row(0)),
                                Reflection(inverse_mass, normals.row(1))};
  double root_w[2];
  double scale = 0.0;
  for (int i = 0; i < 2; ++i) {
    root_w[i] = std::sqrt(normals.row(i).dot(inverse_mass * normals.row(i).transpose()));
    scale = std::max(scale, std::abs(normals.row(i).dot(velocity)) / root_w[i]);
  }
  auto approaches = [&](const Eigen::VectorXd& v, int i) {
    return normals.row(i).dot(v) / root_w[i] < -tol * scale;
  };
  ReferenceOutcome out{velocity, {}};
  for (int next = first;
       static_cast<int>(out.sequence.size()) < cap && approaches(out.velocity, next);
       next = 1 - next) {
    out.velocity = g[next] * out.velocity;
    out.sequence.push_back(next);
  }
  return out;
}

}  // namespace simpact::testing
