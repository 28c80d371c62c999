#include "core/validation.h"

#include <cmath>
#include <sstream>

namespace simpact {

ImpactProblem ImpactProblem::from_dense(const Eigen::MatrixXd& inverse_mass,
                                        const Eigen::MatrixXd& normals,
                                        const Eigen::VectorXd& velocity) {
  ImpactProblem p;
  p.inverse_mass = inverse_mass.sparseView();
  p.normals = normals.sparseView();
  p.velocity = velocity;
  return p;
}

void validate(const ImpactProblem& problem) {
  internal::InertiaBlocks inertia;
  internal::validate_problem(problem, inertia);
}

namespace internal {

namespace {

template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  internal::fail_invalid(parts...);
}

void require_finite_vector(const Eigen::VectorXd& x, const char* name) {
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) fail(name, " entry ", i, " is not finite (", x[i], ")");
}

template <typename Sparse>
void require_finite_sparse(const Sparse& a, const char* name) {
  for (int outer = 0; outer < a.outerSize(); ++outer)
    for (typename Sparse::InnerIterator it(a, outer); it; ++it)
      if (!std::isfinite(it.value()))
        fail(name, " entry (", it.row(), ",", it.col(), ") is not finite (", it.value(), ")");
}

void require_size(Eigen::Index actual, Eigen::Index expected, const char* what) {
  if (actual != expected) fail(what, " has size ", actual, ", expected ", expected);
}

}  // namespace

void validate_problem(const ImpactProblem& problem, InertiaBlocks& inertia) {
  const Eigen::Index n = problem.velocity.size();
  const Eigen::Index m = problem.normals.rows();
  if (n == 0) fail("velocity is empty: the problem needs at least one degree of freedom");
  if (problem.inverse_mass.rows() != n || problem.inverse_mass.cols() != n)
    fail("inverse_mass is ", problem.inverse_mass.rows(), "x", problem.inverse_mass.cols(),
         ", expected ", n, "x", n, " (velocity has ", n, " entries)");
  if (m > 0 && problem.normals.cols() != n)
    fail("normals have ", problem.normals.cols(), " columns, expected ", n,
         " (one per velocity entry)");
  if (problem.offsets.size() != 0) require_size(problem.offsets.size(), m, "offsets");
  if (problem.time_of_impact.size() != 0)
    require_size(problem.time_of_impact.size(), m, "time_of_impact");

  require_finite_vector(problem.velocity, "velocity");
  require_finite_vector(problem.offsets, "offsets");
  require_finite_vector(problem.time_of_impact, "time_of_impact");
  require_finite_sparse(problem.inverse_mass, "inverse_mass");
  require_finite_sparse(problem.normals, "normals");
  if (!(problem.restitution >= 0.0 && problem.restitution <= 1.0))
    fail("restitution ", problem.restitution, " is outside [0, 1]");

  for (Eigen::Index i = 0; i < m; ++i)
    if (problem.normals.row(i).cwiseAbs().sum() == 0.0)
      fail("normals row ", i, " is zero: a contact needs a non-zero normal covector");

  double max_abs = 0.0;
  for (int c = 0; c < problem.inverse_mass.outerSize(); ++c)
    for (SparseColMatrix::InnerIterator it(problem.inverse_mass, c); it; ++it)
      max_abs = std::max(max_abs, std::abs(it.value()));
  // Entry (r, c) against its mirror; a stored entry without a stored mirror
  // is compared with zero, so structural asymmetry is caught too.
  for (int c = 0; c < problem.inverse_mass.outerSize(); ++c)
    for (SparseColMatrix::InnerIterator it(problem.inverse_mass, c); it; ++it) {
      const double mirror = problem.inverse_mass.coeff(c, it.row());
      if (std::abs(it.value() - mirror) > kSymmetryTolerance * max_abs)
        fail("inverse_mass is not symmetric: entry (", it.row(), ",", c, ") = ", it.value(),
             " but (", c, ",", it.row(), ") = ", mirror);
    }
  inertia.analyze(problem.inverse_mass, /*check_definiteness=*/true);
}

}  // namespace internal
}  // namespace simpact
