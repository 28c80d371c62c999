// simpact — the input of every impact law: a frozen configuration at the
// instant of impact, described in generalized coordinates.
//
// Paper (README.md, "Papers"): Seghete & Murphey 2014 = Vlad Seghete and
// Todd D. Murphey, "A propagative model of simultaneous impact: existence,
// uniqueness, and design consequences", IEEE Transactions on Automation
// Science and Engineering 11(1), 2014; arXiv:1709.02296.
//
// Symbol glossary (used by every public header of the core)
//   n        number of generalized velocity coordinates (degrees of freedom)
//   m        number of contacts taking part in the impact
//   v        generalized velocity before the impact, v⁻ (n)            [DOF units]
//   M⁻¹      inverse inertia (n×n), symmetric positive SEMI-definite.   [1/mass]
//            A zero row/column (or any null direction) is an infinitely
//            massive DOF: locked, static or kinematic.
//   J        contact normal covectors (m×n); row i is Dφ_i, the gradient
//            of contact i's gap function (Seghete & Murphey 2014, §II,
//            eq. (2)).
//   b        offsets (m): the relative normal velocity of contact i is
//            u_i = (J v)_i + b_i. Use it for constraints that move
//            (a kinematic paddle: b_i = −n·v_paddle).
//   u        relative normal velocities J v + b (m).
//            SIGN CONVENTION: u_i > 0 separating, u_i < 0 approaching.
//   W        Delassus matrix J M⁻¹ Jᵀ (m×m): the inverse inertia seen by
//            the contacts. W_ij = ⟨Dφ_i, Dφ_j⟩_g, the kinetic-metric
//            inner product of eq. (5a).
//   λ        normal impulses (m), λ ≥ 0; v⁺ = v⁻ + M⁻¹ Jᵀ λ, so
//            M (v⁺ − v⁻) = Jᵀ λ (momentum balance, eq. (10a)).
//   R        coefficient of restitution in [0, 1] (eq. (16)).
//   E        kinetic energy ½ vᵀ M v. With a singular M⁻¹ we use the
//            Moore–Penrose pseudo-inverse M = (M⁻¹)⁺: infinitely massive
//            DOFs carry no kinetic energy. Elastic impacts conserve E in
//            the frame in which the offsets b and the velocities along
//            infinitely massive DOFs vanish.
//
// Units are whatever the caller uses consistently (SI in the Bullet adapter:
// m/s, kg, N·s). Nothing in the core assumes a unit system.
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <stdexcept>
#include <string>

namespace simpact {

/// Sparse matrix types of the core. J is stored by rows (one contact per row),
/// M⁻¹ by columns (it is symmetric, so this is also by rows).
using SparseRowMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;
using SparseColMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor>;

/// Thrown by validate() and by the laws when a problem is malformed. The
/// message names the offending field and entry, e.g.
/// "inverse_mass is not symmetric: entry (0,2) = 1 but (2,0) = 0.5".
class InvalidProblem : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// One simultaneous impact. Construct with from_dense() for small hand-written
/// problems, or fill the sparse fields directly (the Bullet adapter does).
struct ImpactProblem {
  SparseColMatrix inverse_mass;  ///< M⁻¹ (n×n), symmetric PSD.
  SparseRowMatrix normals;       ///< J (m×n), row i = Dφ_i; J v > 0 separates.
  Eigen::VectorXd velocity;      ///< v⁻ (n).
  Eigen::VectorXd offsets;       ///< b (m) or empty for zero.
  double restitution = 1.0;      ///< R in [0, 1]; 1 elastic, 0 plastic.
  Eigen::VectorXd time_of_impact;  ///< optional hints (m), any time unit;
                                   ///< used by OrderPolicy::kTimeOfImpact.

  int dofs() const { return static_cast<int>(velocity.size()); }
  int contacts() const { return static_cast<int>(normals.rows()); }

  /// Builds a problem from dense matrices; exact zeros are not stored.
  static ImpactProblem from_dense(const Eigen::MatrixXd& inverse_mass,
                                  const Eigen::MatrixXd& normals,
                                  const Eigen::VectorXd& velocity);
};

/// Checks sizes, finiteness, restitution range, zero normal rows, symmetry and
/// positive semi-definiteness of M⁻¹ (see tolerances below). Throws
/// InvalidProblem naming the first problem found.
void validate(const ImpactProblem& problem);

/// Relative asymmetry allowed in M⁻¹: |M⁻¹_ij − M⁻¹_ji| ≤ this × max|M⁻¹|.
/// An inverse computed numerically from a well-conditioned mass matrix is
/// symmetric to ~n·1e-16 relative; 1e-10 accepts that for n up to ~10⁵ while
/// rejecting any asymmetry that is a modelling mistake.
inline constexpr double kSymmetryTolerance = 1e-10;

/// Most negative eigenvalue of M⁻¹ accepted, relative to its largest
/// eigenvalue magnitude (per decoupled block). Rounding in a numerically
/// inverted PSD matrix produces eigenvalues of ~−n·ε·λ_max; 1e-10 keeps a
/// wide margin above that while any real indefiniteness is far larger.
inline constexpr double kDefinitenessTolerance = 1e-10;

/// Eigenvalues of M⁻¹ below this × λ_max (per block) are treated as zero:
/// those directions are infinitely massive and carry no kinetic energy.
/// 1e-12 is four orders above double rounding (~1e-16 × block size) and far
/// below any physical mass ratio (a 1e12:1 mass ratio is not a simulation).
inline constexpr double kRankTolerance = 1e-12;

}  // namespace simpact
