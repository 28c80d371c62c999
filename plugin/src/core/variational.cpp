#include <simpact/variational.h>

#include "core/inertia.h"
#include "core/lcp.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace simpact {

const char* to_string(VariationalReading reading) {
  switch (reading) {
    case VariationalReading::kProjection: return "projection";
    case VariationalReading::kNearestOutcome: return "nearest_outcome";
  }
  return "unknown";
}

namespace internal {

Eigen::VectorXd min_norm_point_weights(const Eigen::MatrixXd& Q, double tolerance) {
  const Eigen::Index p = Q.rows();
  if (p == 0 || Q.cols() != p) throw std::invalid_argument("min_norm_point_weights: Q must be square and non-empty");
  if (!Q.allFinite()) throw std::invalid_argument("min_norm_point_weights: Q is not finite");
  const double scale = std::max(Q.diagonal().cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  Eigen::VectorXd w = Eigen::VectorXd::Zero(p);
  Eigen::Index first = 0;
  Q.diagonal().minCoeff(&first);  // the point of least norm (lower index on ties)
  w[first] = 1.0;
  std::vector<Eigen::Index> corral{first};
  // Wolfe's algorithm terminates in finitely many major cycles (each strictly
  // lowers ‖x‖ and no corral repeats); the cap only guards against rounding.
  const int max_major = static_cast<int>(10 * p + 10);
  for (int major = 0; major < max_major; ++major) {
    // Major cycle: the point P_j most opposed to x = Σ w_k P_k.
    const Eigen::VectorXd g = Q * w;  // ⟨P_j, x⟩
    const double xx = w.dot(g);
    Eigen::Index j = 0;
    const double gmin = g.minCoeff(&j);
    if (xx - gmin <= tolerance * scale) break;  // x is the nearest point (Wolfe's test)
    if (std::find(corral.begin(), corral.end(), j) != corral.end()) break;  // rounding stall
    corral.push_back(j);
    // Minor cycles: the affine minimizer of the corral, moved back into the
    // simplex while it has non-positive weights.
    for (int minor = 0; minor <= static_cast<int>(p) + 1; ++minor) {
      const Eigen::Index s = static_cast<Eigen::Index>(corral.size());
      Eigen::MatrixXd K = Eigen::MatrixXd::Zero(s + 1, s + 1);
      for (Eigen::Index a = 0; a < s; ++a) {
        for (Eigen::Index b = 0; b < s; ++b) K(a, b) = Q(corral[a], corral[b]) / scale;
        K(a, s) = 1.0;
        K(s, a) = 1.0;
      }
      Eigen::VectorXd rhs = Eigen::VectorXd::Zero(s + 1);
      rhs[s] = 1.0;
      const Eigen::VectorXd a = K.completeOrthogonalDecomposition().solve(rhs).head(s);
      if (a.minCoeff() > tolerance) {
        w.setZero();
        for (Eigen::Index k = 0; k < s; ++k) w[corral[k]] = a[k];
        break;
      }
      // Step from w toward a until the first weight reaches zero.
      double theta = 1.0;
      for (Eigen::Index k = 0; k < s; ++k) {
        const double wk = w[corral[k]];
        if (a[k] <= tolerance && wk - a[k] > 0.0) theta = std::min(theta, wk / (wk - a[k]));
      }
      Eigen::VectorXd next = w;
      for (Eigen::Index k = 0; k < s; ++k) next[corral[k]] = (1.0 - theta) * w[corral[k]] + theta * a[k];
      std::vector<Eigen::Index> kept;
      for (const Eigen::Index k : corral) {
        if (next[k] > tolerance) {
          kept.push_back(k);
        } else {
          next[k] = 0.0;
        }
      }
      if (kept.empty()) {  // rounding: keep the largest
        Eigen::Index best = corral.front();
        for (const Eigen::Index k : corral)
          if (w[k] > w[best]) best = k;
        kept.push_back(best);
        next.setZero();
        next[best] = 1.0;
      }
      corral = kept;
      w = next / next.sum();
    }
  }
  // On the simplex exactly: non-negative, summing to one.
  w = w.cwiseMax(0.0);
  return w / w.sum();
}

}  // namespace internal

namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("simpact::VariationalParameters: " + message);
}

}  // namespace

VariationalResult resolve_variational(const ImpactProblem& problem, const VariationalParameters& parameters) {
  require(parameters.reading == VariationalReading::kProjection ||
              parameters.reading == VariationalReading::kNearestOutcome,
          "reading is not a VariationalReading");
  require(parameters.max_reflections >= 0, "max_reflections must be >= 0 (0 = automatic)");
  require(parameters.enumeration_budget >= 1, "enumeration_budget must be >= 1");
  require(std::isfinite(parameters.dedup_tolerance) && parameters.dedup_tolerance >= 0.0 &&
              parameters.dedup_tolerance < 1.0,
          "dedup_tolerance must be in [0, 1)");
  require(parameters.max_vertices >= 1, "max_vertices must be >= 1");
  internal::require_plastic_residual_tolerance(parameters.plastic_residual_tolerance, "VariationalParameters");
  if (parameters.validate_input) validate(problem);

  // Steps 1–3: every distinct elastic sequence outcome (propagative.h, kAll).
  ImpactProblem elastic = problem;
  elastic.restitution = 1.0;
  PropagativeParameters enumeration;
  enumeration.policy = OrderPolicy::kAll;
  enumeration.max_reflections = parameters.max_reflections;
  enumeration.enumeration_budget = parameters.enumeration_budget;
  enumeration.dedup_tolerance = parameters.dedup_tolerance;
  enumeration.validate_input = false;
  enumeration.compute_energy = true;
  enumeration.plastic_residual_tolerance = parameters.plastic_residual_tolerance;
  const ImpactResult all = resolve(elastic, enumeration);

  VariationalResult result;
  result.status = all.status;
  result.message = all.message;
  result.sequences_explored = all.sequences_explored;
  result.energy_before = all.energy_before;
  const Eigen::Index n = problem.dofs(), m = problem.contacts();
  if (all.outcomes.empty()) {  // the enumeration failed: velocity unchanged
    result.velocity = problem.velocity;
    result.impulses = Eigen::VectorXd::Zero(m);
    result.energy_after = result.energy_before;
    return result;
  }
  const Eigen::Index p = static_cast<Eigen::Index>(all.outcomes.size());
  if (p > parameters.max_vertices || p * std::max(n, m) > kVariationalMaxVertexEntries) {
    result.status = Status::kBudgetExhausted;
    result.message = std::to_string(p) + " distinct sequence outcomes exceed max_vertices = " +
                     std::to_string(parameters.max_vertices) + " or " +
                     std::to_string(kVariationalMaxVertexEntries) + " vertex entries; velocity left unchanged";
    result.velocity = problem.velocity;
    result.impulses = Eigen::VectorXd::Zero(m);
    result.energy_after = result.energy_before;
    return result;
  }
  result.vertices.resize(n, p);
  result.vertex_impulses.resize(m, p);
  for (Eigen::Index k = 0; k < p; ++k) {
    result.vertices.col(k) = all.outcomes[static_cast<size_t>(k)].velocity;
    result.vertex_impulses.col(k) = all.outcomes[static_cast<size_t>(k)].impulses;
  }

  // Steps 4–5: the projection of v⁻ onto the hull, in the kinetic metric,
  // as a QP on the simplex with Gram matrix Q = Λᵀ W Λ (header).
  // W = J M⁻¹ Jᵀ (m × m) from the sparse J and M⁻¹: never an n × n matrix.
  const SparseRowMatrix j_minv = problem.normals * problem.inverse_mass;
  const Eigen::MatrixXd delassus = Eigen::MatrixXd(j_minv * SparseColMatrix(problem.normals.transpose()));
  const Eigen::MatrixXd Q = result.vertex_impulses.transpose() * delassus * result.vertex_impulses;
  if (parameters.reading == VariationalReading::kProjection) {
    result.weights = internal::min_norm_point_weights(0.5 * (Q + Q.transpose()), kVariationalWeightTolerance);
  } else {
    Eigen::Index nearest = 0;
    Q.diagonal().minCoeff(&nearest);  // ‖v_k − v⁻‖²_M = Q_kk; ties to the lower index
    result.weights = Eigen::VectorXd::Unit(p, nearest);
  }
  result.on_vertex = result.weights.maxCoeff() >= 1.0 - kVariationalWeightTolerance;
  if (result.on_vertex) {
    Eigen::Index k = 0;
    result.weights.maxCoeff(&k);
    result.weights = Eigen::VectorXd::Unit(p, k);  // exactly the vertex
  }
  result.impulses = result.vertex_impulses * result.weights;
  result.velocity = result.vertices * result.weights;
  internal::InertiaBlocks inertia;
  inertia.analyze(problem.inverse_mass, false);
  result.energy_after = inertia.kinetic_energy(result.velocity);
  result.energy_loss = result.energy_before - result.energy_after;
  return result;
}

}  // namespace simpact
