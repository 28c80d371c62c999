// Block analysis of the inverse inertia M⁻¹. Rigid bodies and mechanisms
// without coupling give a block-diagonal M⁻¹; decomposing it into decoupled
// blocks makes the definiteness check and the pseudo-inverse needed for the
// kinetic energy cost O(Σ block³) instead of O(n³).
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

#include <vector>

namespace simpact::internal {

class InertiaBlocks {
 public:
  /// Splits M⁻¹ into connected blocks of its sparsity pattern and stores the
  /// pseudo-inverse (the mass matrix on the block's range) of each. With
  /// check_definiteness, throws InvalidProblem if a block has an eigenvalue
  /// below −kDefinitenessTolerance · λ_max.
  void analyze(const SparseColMatrix& inverse_mass, bool check_definiteness);

  /// ½ vᵀ (M⁻¹)⁺ v.
  double kinetic_energy(const Eigen::VectorXd& v) const;

  int blocks() const { return static_cast<int>(block_start_.size()) - 1; }

 private:
  std::vector<int> block_start_;   // into dofs_, blocks()+1 entries
  std::vector<int> dofs_;          // DOF indices grouped by block
  std::vector<int> mass_start_;    // into mass_, blocks()+1 entries
  std::vector<double> mass_;       // column-major size² pseudo-inverse per block
  std::vector<int> parent_, block_of_, root_block_, fill_;  // scratch
  Eigen::MatrixXd block_;                                   // scratch
};

/// A square root of M⁻¹: R (n × r, r = rank M⁻¹) with R Rᵀ = M⁻¹, block by
/// block over the connected blocks of M⁻¹'s sparsity pattern (the columns of
/// a block are its eigenvectors scaled by √eigenvalue; eigenvalues at or below
/// kRankTolerance × the block's largest are dropped: infinitely massive
/// directions). A contact row J becomes J R, and J M⁻¹ Jᵀ = (J R)(J R)ᵀ, so a
/// Delassus matrix is a Gram matrix of sparse rows and never has to be formed
/// (box_qp.h). Columns ordered by block (blocks by smallest DOF), then by
/// ascending eigenvalue: deterministic.
SparseColMatrix metric_root(const SparseColMatrix& inverse_mass);

/// DOFs of the largest connected block of M⁻¹'s sparsity pattern: what
/// metric_root's eigen-decomposition costs grows as its cube.
int largest_block(const SparseColMatrix& inverse_mass);

/// The largest block of M⁻¹ (in DOFs) for which a box-pivoting caller forms
/// the rows J R through metric_root; above it, it hands BoxQp the Delassus
/// matrix W = J M⁻¹ Jᵀ itself (BoxQp::set_gram). 96 DOFs are 16 bodies, the
/// joint groups the Bullet adapter still gives a dense M⁻¹_G
/// (kDenseJointGroupBodies): their eigen-decomposition takes ~1 ms. A
/// hinged chain of 100 links lying on the ground, every link touched, is one
/// 600-DOF block: its eigen-decomposition (~0.19 s) was most of a 0.25 s impact
/// step, 300 links 6 s (docs/scaling.md, "Joint groups on the ground").
inline constexpr int kMetricRootBlockLimit = 96;

}  // namespace simpact::internal
