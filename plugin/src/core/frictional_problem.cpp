#include <simpact/frictional_problem.h>

#include "core/validation.h"

#include <cmath>
#include <sstream>

namespace simpact {

namespace {

template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  internal::fail_invalid(parts...);
}

}  // namespace

FrictionalProblem FrictionalProblem::from_dense(const Eigen::MatrixXd& inverse_mass,
                                                const Eigen::MatrixXd& normals,
                                                const Eigen::MatrixXd& tangents,
                                                const Eigen::VectorXd& velocity,
                                                const Eigen::VectorXd& friction) {
  FrictionalProblem p;
  p.inverse_mass = inverse_mass.sparseView();
  p.normals = normals.sparseView();
  p.tangents = tangents.sparseView();
  p.velocity = velocity;
  p.friction = friction;
  return p;
}

ImpactProblem normal_part(const FrictionalProblem& problem) {
  ImpactProblem p;
  p.inverse_mass = problem.inverse_mass;
  p.normals = problem.normals;
  p.velocity = problem.velocity;
  p.offsets = problem.normal_offsets;
  p.restitution = 0.0;
  return p;
}

void validate(const FrictionalProblem& problem) {
  // The frictionless part carries the M⁻¹ symmetry/definiteness, sizes and
  // finiteness checks; its messages name the same fields.
  ImpactProblem normal = normal_part(problem);
  internal::InertiaBlocks inertia;
  internal::validate_problem(normal, inertia);

  const Eigen::Index n = problem.velocity.size();
  const Eigen::Index m = problem.normals.rows();
  const Eigen::Index rows = problem.tangents.rows();
  if (m == 0) {
    if (rows != 0) fail("tangents have ", rows, " rows but there are no contacts");
    if (problem.restitution.size() != 0)
      fail("restitution has ", problem.restitution.size(), " entries but there are no contacts");
    return;
  }
  if (rows != m && rows != 2 * m)
    fail("tangents have ", rows, " rows, expected ", m, " (planar: one per contact) or ", 2 * m,
         " (3-D: two per contact, contact by contact)");
  if (problem.tangents.cols() != n)
    fail("tangents have ", problem.tangents.cols(), " columns, expected ", n,
         " (one per velocity entry)");
  for (int outer = 0; outer < problem.tangents.outerSize(); ++outer)
    for (SparseRowMatrix::InnerIterator it(problem.tangents, outer); it; ++it)
      if (!std::isfinite(it.value()))
        fail("tangents entry (", it.row(), ",", it.col(), ") is not finite (", it.value(), ")");
  for (Eigen::Index r = 0; r < rows; ++r)
    if (problem.tangents.row(r).cwiseAbs().sum() == 0.0)
      fail("tangents row ", r, " (contact ", rows == m ? r : r / 2,
           ") is zero: a friction direction needs a non-zero covector");

  if (rows == 2 * m) {
    // The cone is built in the (t1, t2) frame: parallel tangents would
    // collapse it to a line. (Unit length in the contact frame cannot be
    // checked in generalized coordinates; see the header.)
    const Eigen::MatrixXd t = Eigen::MatrixXd(problem.tangents);
    for (Eigen::Index i = 0; i < m; ++i) {
      const Eigen::VectorXd a = t.row(2 * i), b = t.row(2 * i + 1);
      if (std::abs(a.dot(b)) >= (1.0 - 1e-9) * a.norm() * b.norm())
        fail("tangents rows ", 2 * i, " and ", 2 * i + 1, " (contact ", i,
             ") are parallel: a 3-D contact needs two independent tangent directions");
    }
  }
  if (problem.friction.size() != m)
    fail("friction has ", problem.friction.size(), " entries, expected ", m,
         " (one per contact)");
  for (Eigen::Index i = 0; i < m; ++i)
    if (!(std::isfinite(problem.friction[i]) && problem.friction[i] >= 0.0))
      fail("friction entry ", i, " is ", problem.friction[i], ": mu must be finite and >= 0");

  if (problem.restitution.size() != 0) {
    if (problem.restitution.size() != m)
      fail("restitution has ", problem.restitution.size(), " entries, expected ", m,
           " (one per contact) or none (inelastic)");
    for (Eigen::Index i = 0; i < m; ++i)
      if (!(problem.restitution[i] >= 0.0 && problem.restitution[i] <= 1.0))
        fail("restitution entry ", i, " is ", problem.restitution[i], ": e must be in [0, 1]");
  }

  if (problem.tangent_offsets.size() != 0) {
    if (problem.tangent_offsets.size() != rows)
      fail("tangent_offsets has size ", problem.tangent_offsets.size(), ", expected ", rows,
           " (one per tangent row)");
    for (Eigen::Index r = 0; r < rows; ++r)
      if (!std::isfinite(problem.tangent_offsets[r]))
        fail("tangent_offsets entry ", r, " is not finite (", problem.tangent_offsets[r], ")");
  }

  const int d = problem.cone_directions;
  if (rows == m) {
    if (d != 0 && d != 2)
      fail("cone_directions is ", d, ": planar problems (one tangent per contact) use the 2 "
           "directions +t and -t");
  } else if (d != 0 && (d < 3 || d > kMaxConeDirections)) {
    fail("cone_directions is ", d, ": 3-D problems need between 3 and ", kMaxConeDirections);
  }
}

}  // namespace simpact
