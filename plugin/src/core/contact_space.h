// Contact-space operators of one impact, in flat compressed-column arrays:
//   Y = M⁻¹ Jᵀ (n×m, column i = velocity change per unit impulse on contact i)
//   W = J M⁻¹ Jᵀ (m×m Delassus matrix, column i = contact-velocity change per
//       unit impulse on contact i).
// Built with sparse accumulation, so the cost follows the non-zeros: a chain
// of N balls gives a tridiagonal W in O(N). A reflection then touches only
// column i of W.
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

#include <cstddef>
#include <vector>

namespace simpact::internal {

struct SparseColumns {
  std::vector<int> start;  // size cols+1
  std::vector<int> index;
  std::vector<double> value;

  void clear(int cols) {
    start.assign(1, 0);
    start.reserve(cols + 1);
    index.clear();
    value.clear();
  }
  /// Room for `nonzeros` entries: filling then touches each page once,
  /// where growth by doubling copied every entry about once more.
  void reserve(std::size_t nonzeros) {
    index.reserve(nonzeros);
    value.reserve(nonzeros);
  }
  int begin(int col) const { return start[col]; }
  int end(int col) const { return start[col + 1]; }
};

class ContactSpace {
 public:
  void build(const SparseRowMatrix& normals, const SparseColMatrix& inverse_mass);

  int contacts() const { return m_; }
  int dofs() const { return n_; }
  const SparseColumns& y() const { return y_; }
  const SparseColumns& w() const { return w_; }
  double diagonal(int i) const { return diag_[i]; }
  /// Σ_kl |J_ik| |M⁻¹_kl| |J_il|: the magnitude of the terms that sum to
  /// W_ii. W_ii far below it is cancellation: no impulse moves contact i.
  /// Unlike a comparison with other contacts, this is invariant to scaling
  /// rows of J.
  double diagonal_magnitude(int i) const { return diag_abs_[i]; }

  /// u = J v + b (b may be empty).
  void contact_velocity(const SparseRowMatrix& normals, const Eigen::VectorXd& v,
                        const Eigen::VectorXd& offsets, Eigen::VectorXd& u) const;
  /// v⁺ = v + Y λ.
  void apply_impulses(const Eigen::VectorXd& v, const Eigen::VectorXd& impulses,
                      Eigen::VectorXd& out) const;
  /// √(λᵀ W λ): the g-norm of the momentum change Jᵀ λ.
  double impulse_norm(const Eigen::VectorXd& impulses) const;
  /// Dense W, for the LCP and diagnostics.
  Eigen::MatrixXd dense_w() const;

 private:
  int n_ = 0, m_ = 0;
  SparseColumns y_, w_, jt_;  // jt_: J by columns (DOF → contacts)
  std::vector<double> diag_, diag_abs_;
  std::vector<double> acc_, acc_abs_;
  std::vector<int> mark_;
};

}  // namespace simpact::internal
