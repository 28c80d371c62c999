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

}  // namespace simpact::internal
