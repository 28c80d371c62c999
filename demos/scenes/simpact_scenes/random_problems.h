// simpact scenes — seeded random impact problems for property tests and
// benchmarks.
//
// Portable: draws come from std::mt19937_64 (its output sequence is fixed by
// the standard) mapped to doubles by our own code, never by the
// implementation-defined std::*_distribution, so a seed gives the same
// problem with every compiler and standard library.
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

#include <cstdint>
#include <random>

namespace simpact::scenes {

class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi);
  /// Uniform integer in [lo, hi] (inclusive); lo <= hi.
  int integer(int lo, int hi);
  /// Standard normal (Box–Muller).
  double normal();
  /// True with probability p.
  bool chance(double p);

  Eigen::VectorXd normal_vector(int size);
  Eigen::MatrixXd normal_matrix(int rows, int cols);

 private:
  std::mt19937_64 engine_;
};

/// Structure of a random inverse inertia.
enum class InertiaKind {
  kFullRank,       ///< dense SPD, eigenvalues log-uniform in [0.1, 10].
  kBlockDiagonal,  ///< bodies of 1–3 DOFs, each a dense SPD block.
  kRankDeficient,  ///< dense PSD with 1..n−1 exactly-zero eigenvalues
                   ///< (infinitely massive directions not aligned with axes).
  kLockedDofs,     ///< SPD with 1..n−1 zero rows/columns (locked DOFs).
};
inline constexpr int kInertiaKinds = 4;

/// Uniformly one of the kinds.
InertiaKind random_inertia_kind(Random& rng);

/// A Haar-ish random orthogonal n×n matrix (QR of a Gaussian matrix).
Eigen::MatrixXd random_orthogonal(int n, Random& rng);

/// Random symmetric positive semi-definite M⁻¹ (exactly symmetric). For
/// n == 1 the singular kinds fall back to full rank (a 1×1 zero M⁻¹ has no
/// motion at all).
Eigen::MatrixXd random_inverse_mass(int n, InertiaKind kind, Random& rng);

/// Random m×n contact normals: Gaussian entries, about a quarter of them
/// zeroed (contacts touch few DOFs); a row never ends up all zero.
Eigen::MatrixXd random_normals(int m, int n, Random& rng);

/// A random problem with b = 0, R = 1 and v = M⁻¹ p for a random momentum
/// covector p, so v lies in the range of M⁻¹ and ½ pᵀ M⁻¹ p is its energy.
/// p is biased towards −Jᵀ (so that most contacts approach) but contacts may
/// also separate or touch.
struct RandomProblem {
  ImpactProblem problem;
  Eigen::MatrixXd inverse_mass;  ///< dense copy of M⁻¹.
  Eigen::MatrixXd normals;       ///< dense copy of J.
  Eigen::VectorXd momentum;      ///< p, with velocity = M⁻¹ p.
  InertiaKind kind = InertiaKind::kFullRank;
};
RandomProblem random_problem(int contacts, int dofs, InertiaKind kind, Random& rng);

}  // namespace simpact::scenes
