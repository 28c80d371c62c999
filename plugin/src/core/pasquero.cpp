#include <simpact/pasquero.h>

#include "core/inertia.h"
#include "core/lcp.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace simpact {

namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("simpact::PasqueroParameters: " + message);
}

}  // namespace

PasqueroResult resolve_pasquero(const ImpactProblem& problem, const PasqueroParameters& parameters) {
  require(parameters.max_iterations >= 0, "max_iterations must be >= 0 (0 = automatic)");
  require(std::isfinite(parameters.approach_tolerance) && parameters.approach_tolerance >= 0.0,
          "approach_tolerance must be finite and >= 0");
  internal::require_plastic_residual_tolerance(parameters.plastic_residual_tolerance, "PasqueroParameters");
  if (parameters.validate_input) validate(problem);

  const Eigen::Index m = problem.contacts();
  // W = J M⁻¹ Jᵀ (m × m) from the sparse J and M⁻¹: never an n × n matrix.
  const SparseRowMatrix j_minv = problem.normals * problem.inverse_mass;
  const Eigen::MatrixXd W = Eigen::MatrixXd(j_minv * SparseColMatrix(problem.normals.transpose()));
  Eigen::VectorXd u = problem.normals * problem.velocity;
  if (problem.offsets.size() == m) u += problem.offsets;

  PasqueroResult result;
  internal::InertiaBlocks inertia;
  inertia.analyze(problem.inverse_mass, false);
  result.energy_before = inertia.kinetic_energy(problem.velocity);
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(m);

  // "Approaching" (propagative.h): g-normalized speed below −tol · S.
  Eigen::VectorXd root_w(m);
  double scale = 0.0;
  for (Eigen::Index l = 0; l < m; ++l) {
    root_w[l] = std::sqrt(std::max(W(l, l), 0.0));
    if (root_w[l] > 0.0) scale = std::max(scale, std::abs(u[l]) / root_w[l]);
  }
  const auto approaching = [&](Eigen::Index l) {
    return root_w[l] > 0.0 && u[l] / root_w[l] < -parameters.approach_tolerance * scale;
  };
  const std::int64_t cap =
      parameters.max_iterations > 0 ? parameters.max_iterations : 1000 + 100 * static_cast<std::int64_t>(m);

  for (;;) {
    // Steps 3–5: the contacts the left velocity is incoming for.
    std::vector<int> involved;
    for (Eigen::Index l = 0; l < m; ++l)
      if (approaching(l)) involved.push_back(static_cast<int>(l));
    if (involved.empty()) break;  // Step FINAL
    if (result.iterations >= cap) {
      ImpactProblem plastic = problem;
      plastic.restitution = 0.0;
      PropagativeParameters fallback;
      fallback.validate_input = false;
      fallback.plastic_residual_tolerance = parameters.plastic_residual_tolerance;
      const ImpactResult p = resolve_plastic(plastic, fallback);
      result.status = p.status == Status::kSuccess ? Status::kReflectionCapReached : p.status;
      result.message = "iteration cap of " + std::to_string(cap) +
                       " reached with contacts still approaching; returned the plastic outcome";
      result.velocity = p.outcomes.empty() ? problem.velocity : p.outcomes[0].velocity;
      result.impulses = p.outcomes.empty() ? Eigen::VectorXd::Zero(m) : p.outcomes[0].impulses;
      result.energy_after = inertia.kinetic_energy(result.velocity);
      return result;
    }
    // Step 6 (one contact) or Steps 7–9 (several): Λ (Σ_b v⊥_b), eq. (12).
    const Eigen::Index k = static_cast<Eigen::Index>(involved.size());
    Eigen::VectorXd z(k);
    double numerator = 0.0;
    for (Eigen::Index a = 0; a < k; ++a) {
      const int l = involved[static_cast<size_t>(a)];
      z[a] = u[l] / W(l, l);
      numerator += u[l] * z[a];
    }
    double denominator = 0.0;
    for (Eigen::Index a = 0; a < k; ++a)
      for (Eigen::Index c = 0; c < k; ++c)
        denominator += z[a] * W(involved[static_cast<size_t>(a)], involved[static_cast<size_t>(c)]) * z[c];
    const double coefficient = -2.0 * numerator / denominator;  // Λ
    if (!std::isfinite(coefficient)) {
      result.status = Status::kNonFinite;
      result.message = "iteration " + std::to_string(result.iterations) +
                       " produced a non-finite coefficient; velocity left unchanged";
      result.velocity = problem.velocity;
      result.impulses = Eigen::VectorXd::Zero(m);
      result.energy_after = result.energy_before;
      return result;
    }
    for (Eigen::Index a = 0; a < k; ++a) {
      const int l = involved[static_cast<size_t>(a)];
      const double increment = coefficient * z[a];
      lambda[l] += increment;
      u += W.col(l) * increment;
    }
    result.involved.push_back(std::move(involved));
    result.coefficients.push_back(coefficient);
    ++result.iterations;
  }
  result.impulses = lambda;
  result.velocity = problem.velocity + j_minv.transpose() * lambda;  // v⁻ + M⁻¹Jᵀλ
  result.energy_after = inertia.kinetic_energy(result.velocity);
  return result;
}

}  // namespace simpact
