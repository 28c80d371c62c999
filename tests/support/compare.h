// Comparison helpers for simpact tests. Use through EXPECT_TRUE/ASSERT_TRUE so
// a failure names the first offending entry and both values:
//     EXPECT_TRUE(VectorsNear(result.velocity, expected, kAbs, kRel));
#pragma once

#include <simpact/impact_problem.h>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <sstream>
#include <string>

namespace simpact::testing {

/// Entry i passes when |actual_i − expected_i| ≤ abs_tol + rel_tol·|expected_i|.
/// Sizes must match; a NaN on either side always fails.
inline ::testing::AssertionResult VectorsNear(const Eigen::VectorXd& actual,
                                              const Eigen::VectorXd& expected, double abs_tol,
                                              double rel_tol) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << "size mismatch: actual has " << actual.size()
                                         << " entries, expected " << expected.size();
  for (Eigen::Index i = 0; i < actual.size(); ++i) {
    const double diff = std::abs(actual[i] - expected[i]);
    const double tol = abs_tol + rel_tol * std::abs(expected[i]);
    if (!(diff <= tol)) {  // also catches NaN
      std::ostringstream os;
      os.precision(17);
      os << "entry " << i << " of " << actual.size() << ": actual = " << actual[i]
         << ", expected = " << expected[i] << ", |difference| = " << diff << " > tolerance " << tol
         << " (abs " << abs_tol << ", rel " << rel_tol << ")";
      return ::testing::AssertionFailure() << os.str();
    }
  }
  return ::testing::AssertionSuccess();
}

/// Matrices compared entry by entry (column-major order in the message).
inline ::testing::AssertionResult MatricesNear(const Eigen::MatrixXd& actual,
                                               const Eigen::MatrixXd& expected, double abs_tol,
                                               double rel_tol) {
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols())
    return ::testing::AssertionFailure()
           << "shape mismatch: actual is " << actual.rows() << "x" << actual.cols() << ", expected "
           << expected.rows() << "x" << expected.cols();
  for (Eigen::Index j = 0; j < actual.cols(); ++j)
    for (Eigen::Index i = 0; i < actual.rows(); ++i) {
      const double diff = std::abs(actual(i, j) - expected(i, j));
      const double tol = abs_tol + rel_tol * std::abs(expected(i, j));
      if (!(diff <= tol)) {
        std::ostringstream os;
        os.precision(17);
        os << "entry (" << i << "," << j << "): actual = " << actual(i, j)
           << ", expected = " << expected(i, j) << ", |difference| = " << diff << " > tolerance "
           << tol;
        return ::testing::AssertionFailure() << os.str();
      }
    }
  return ::testing::AssertionSuccess();
}

/// True when every entry is finite (no NaN, no inf).
inline ::testing::AssertionResult AllFinite(const Eigen::VectorXd& x, const char* what) {
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      return ::testing::AssertionFailure() << what << " entry " << i << " is " << x[i];
  return ::testing::AssertionSuccess();
}

/// Full-precision dump of a problem, for failure messages that must let the
/// failure be reproduced by hand.
inline std::string Describe(const ImpactProblem& problem) {
  std::ostringstream os;
  os.precision(17);
  const Eigen::IOFormat fmt(Eigen::FullPrecision, 0, ", ", ",\n", "[", "]", "[", "]");
  os << "inverse_mass =\n"
     << Eigen::MatrixXd(problem.inverse_mass).format(fmt) << "\nnormals =\n"
     << Eigen::MatrixXd(problem.normals).format(fmt)
     << "\nvelocity = " << problem.velocity.transpose().format(fmt)
     << "\noffsets = " << problem.offsets.transpose().format(fmt)
     << "\nrestitution = " << problem.restitution << "\n";
  return os.str();
}

}  // namespace simpact::testing
