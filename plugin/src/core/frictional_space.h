// Contact-space operators of one frictional impact (frictional_problem.h
// glossary): the direction rows J_D built from the tangents, Y = M⁻¹ J̄ᵀ,
// W̄ = J̄ M⁻¹ J̄ᵀ, T̄ = J_t M⁻¹ J̄ᵀ and the pre-impact contact velocities.
// Two storage modes. DENSE (the default): J̄, Y, W̄ and T̄ as dense matrices —
// the fast choice for the handful of contacts Lemke's dense LCPs serve (the
// Anitescu–Potra reference, the sequential law, Routh with Lemke). OPERATOR:
// J̄ and J_t kept sparse with M⁻¹, every product applied as J̄ (M⁻¹ (J̄ᵀ λ)) in
// O(nnz) and only diag W̄ stored — for Routh with box pivoting on large
// clusters, where W̄ would hold (5m)² entries (84 MB and ~10⁹ flops at 650
// contacts). Use the apply_* methods and w_diag(), valid in both modes; the
// dense members are empty in operator mode (dense_w() builds W̄ on demand).
//
// Layout of λ̄ (size m (1 + d)): [λ_n,0 … λ_n,m−1, λ_D,0,0 … λ_D,0,d−1, …].
#pragma once

#include <simpact/frictional_problem.h>

#include <Eigen/Core>

#include <string>
#include <vector>

namespace simpact::internal {

struct FrictionalSpace {
  int n = 0, m = 0, d = 0;
  int tangent_dim = 0;  // 1 planar, 2 in 3-D
  Eigen::MatrixXd jbar;        // J̄ (m(1+d) × n)
  Eigen::MatrixXd y;           // M⁻¹ J̄ᵀ (n × m(1+d))
  Eigen::MatrixXd wbar;        // W̄ (m(1+d) square)
  Eigen::MatrixXd tbar;        // J_t M⁻¹ J̄ᵀ (rows of J_t × m(1+d))
  Eigen::VectorXd u0;          // ū⁻ = J̄ v⁻ + b̄ (m(1+d))
  Eigen::VectorXd ut0;         // u_t⁻ = J_t v⁻ + b_t
  Eigen::VectorXd mu;          // μ (m)
  std::vector<double> cos_k, sin_k;  // direction k in the (t1, t2) frame
  Eigen::VectorXd scale;       // √W̄_jj (floored, see build): g-normalization
  double approach_scale = 0;   // S = max_i |u⁻_n,i| / scale_i
  // Data scales of the final check and the LCP residuals (outcome_check.h):
  Eigen::VectorXd magnitude;   // a_j = |b̄_j| + Σ_k |J̄_jk v⁻_k| per row of J̄
  double speed_scale = 0;      // max_j |ū⁻_j| / scale_j over ALL rows of J̄
  std::vector<char> inert;     // m: contact i counts as infinitely massive

  int rows() const { return m * (1 + d); }
  int normal_row(int i) const { return i; }
  int direction_row(int i, int k) const { return m + i * d + k; }

  bool dense = true;            // storage mode (header)
  SparseRowMatrix jbar_rows;    // J̄ (operator mode)
  SparseRowMatrix jt_rows;      // J_t (operator mode)
  SparseColMatrix inverse_mass; // M⁻¹ (operator mode)
  Eigen::VectorXd wdiag;        // diag W̄ (both modes)

  void build(const FrictionalProblem& problem, bool dense_storage = true);

  /// out = W̄ λ, Y λ (n), T̄ λ, J̄ v (both modes).
  void apply_w(const Eigen::VectorXd& lambda, Eigen::VectorXd& out) const;
  Eigen::VectorXd apply_w(const Eigen::VectorXd& lambda) const;
  Eigen::VectorXd apply_y(const Eigen::VectorXd& lambda) const;
  Eigen::VectorXd apply_t(const Eigen::VectorXd& lambda) const;
  Eigen::VectorXd apply_jbar(const Eigen::VectorXd& v) const;
  double w_diag(int j) const { return wdiag[j]; }
  /// W̄ as a dense matrix: wbar in dense mode, formed from the sparse rows
  /// otherwise (for a Lemke fallback on a cluster small enough for it).
  Eigen::MatrixXd dense_w() const;
  /// Y as a dense matrix (Algorithm 2's ψ needs its largest singular value).
  Eigen::MatrixXd dense_y() const;

  /// Λ_t of contact i from its direction impulses (tangent_dim entries).
  void tangential_impulse(const Eigen::VectorXd& lambda, int i, double* out) const;

  /// Fills the contact-frame fields, velocity and ΔE of an outcome from the
  /// total impulse Λ̄ applied to v⁻.
  void fill_outcome(const FrictionalProblem& problem, const Eigen::VectorXd& lambda,
                    FrictionalOutcome& outcome) const;

  /// ΔE = Λ̄ᵀ (ū⁻ + ½ W̄ Λ̄).
  double energy_change(const Eigen::VectorXd& lambda) const;

  /// True if some contact has u_n,i / scale_i < −tolerance · S.
  bool colliding(const Eigen::VectorXd& u, double tolerance) const;
};

/// The matrix of the Anitescu–Potra LCP (Halm & Posa, eq. (31)–(33); Mathew
/// Halm and Michael Posa, "Set-Valued Rigid-Body Dynamics for Simultaneous,
/// Inelastic, Frictional Impacts", arXiv:2103.15714) restricted to
/// `contacts` (all when empty), variables [λ_n; λ_D; γ] of those contacts in
/// λ̄'s order: [[W̄, [0; E]], [[μ, −Eᵀ], 0]], size (2 + d)·|contacts|. The
/// Routh increment LCP (eq. (75)) is this matrix bordered by the β rows.
/// `rows` receives the λ̄ index of each of the first (1 + d)·|contacts|
/// variables.
Eigen::MatrixXd anitescu_potra_matrix(const FrictionalSpace& space, const std::vector<int>& contacts,
                                      std::vector<int>* rows = nullptr);
/// The same from a given dense W̄ (space.dense_w(), formed once by the caller).
Eigen::MatrixXd anitescu_potra_matrix(const FrictionalSpace& space, const Eigen::MatrixXd& wbar,
                                      const std::vector<int>& contacts, std::vector<int>* rows = nullptr);

/// One solution of the Anitescu–Potra LCP (Halm & Posa, eq. (31)–(33))
/// restricted to `contacts` (all when empty), from contact velocities u, by
/// Lemke. The impulse (size m(1+d), zero off `contacts`) goes to `lambda`.
/// Returns false (and the solver's message) if Lemke fails.
bool anitescu_potra_lemke(const FrictionalSpace& space, const Eigen::VectorXd& u,
                          const std::vector<int>& contacts, Eigen::VectorXd& lambda,
                          std::string* message = nullptr);

}  // namespace simpact::internal
