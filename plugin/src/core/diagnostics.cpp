#include <simpact/diagnostics.h>
#include <simpact/propagative.h>

#include "core/contact_space.h"

#include <cmath>
#include <sstream>

namespace simpact {

Eigen::MatrixXd normalized_inner_products(const ImpactProblem& problem) {
  validate(problem);
  internal::ContactSpace space;
  space.build(problem.normals, problem.inverse_mass);
  Eigen::MatrixXd c = space.dense_w();
  const Eigen::Index m = c.rows();
  Eigen::VectorXd scale(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    if (!(c(i, i) > 0.0))
      throw InvalidProblem("contact " + std::to_string(i) +
                           " has zero effective inverse mass (W_ii = 0): its normal cannot be "
                           "normalized in the kinetic metric");
    scale[i] = 1.0 / std::sqrt(c(i, i));
  }
  c = scale.asDiagonal() * c * scale.asDiagonal();
  c.diagonal().setOnes();  // exact by definition; avoids 1 ± ε
  return c;
}

double pair_gamma(double c) {
  if (!std::isfinite(c)) throw InvalidProblem("pair_gamma: inner product is not finite");
  const double clamped = std::min(1.0, std::max(-1.0, c));
  return std::asin(std::sqrt(0.5 * (1.0 + clamped)));
}

std::int64_t pair_reflection_bound(double c) {
  const double gamma = pair_gamma(c);
  const double pi = std::acos(-1.0);
  if (!(gamma > pi / static_cast<double>(kMaxReflectionCeiling))) return kMaxReflectionCeiling;
  return static_cast<std::int64_t>(std::ceil(pi / gamma));
}

UniquenessReport analyze_uniqueness(const ImpactProblem& problem, double tolerance) {
  UniquenessReport report;
  report.inner_products = normalized_inner_products(problem);
  const Eigen::Index m = report.inner_products.rows();
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j < m; ++j)
      if (i != j)
        report.max_abs_off_diagonal =
            std::max(report.max_abs_off_diagonal, std::abs(report.inner_products(i, j)));
  report.pairwise_orthogonal = m >= 2 && report.max_abs_off_diagonal <= tolerance;
  report.three_stage = m == 2 && std::abs(report.inner_products(0, 1) + 0.5) <= tolerance;
  report.unique = m <= 1 || report.pairwise_orthogonal || report.three_stage;
  std::ostringstream os;
  if (m <= 1)
    os << "a single contact: the outcome is one reflection, unique";
  else if (report.pairwise_orthogonal)
    os << "normals are pairwise orthogonal in the kinetic metric (Seghete & Murphey 2014, "
          "Theorem 2): every order gives the same outcome";
  else if (report.three_stage)
    os << "two contacts with <u,v>_g = -1/2 (Seghete & Murphey 2014, Theorem 3): both "
          "three-stage sequences agree";
  else
    os << "no sufficient uniqueness condition holds (largest |<u_i,u_j>_g| = "
       << report.max_abs_off_diagonal << "); the outcome may depend on the order";
  report.explanation = os.str();
  return report;
}

}  // namespace simpact
