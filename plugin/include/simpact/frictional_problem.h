// simpact — the input of the frictional impact laws (Routh sampling, the
// Anitescu–Potra LCP, sequential single-contact impacts): a frozen
// configuration at the instant of impact, in generalized coordinates.
//
// Paper (README.md, "Papers"): Halm & Posa = Mathew Halm and Michael Posa,
// "Set-Valued Rigid-Body Dynamics for Simultaneous, Inelastic, Frictional
// Impacts", arXiv:2103.15714; §2.2 and §5.
//
// Symbol glossary (extends impact_problem.h; Halm & Posa's names in brackets)
//   n, m, v, M⁻¹    as in impact_problem.h.
//   J_n   normal rows (m×n) [J_n]; row i = gradient of contact i's gap.
//   J_t   tangent rows [J_t]: ONE row per contact in planar problems (the
//         tangent t_i), TWO rows per contact in 3-D (t1_i, t2_i), listed
//         contact by contact: rows 2i, 2i+1 belong to contact i. The two
//         tangents of a 3-D contact must be orthonormal in the contact frame
//         (the circular Coulomb cone is approximated in that frame).
//   b_n, b_t  optional offsets: u_n = J_n v + b_n, u_t = J_t v + b_t
//         (relative velocities when a contact partner moves kinematically).
//   μ     friction coefficient per contact (m), μ_i ≥ 0 [μ_i].
//   d     cone directions per contact [columns of D]. Planar: d = 2, the
//         directions ±t. 3-D: d ≥ 3 unit directions evenly spaced in the
//         tangent plane, d_k = cos(2πk/d) t1 + sin(2πk/d) t2, k = 0…d−1
//         (Halm & Posa, eq. (32)–(33); default d = 4: ±t1, ±t2).
//   J_D   the md direction rows [J_D]; row (i, k) = d_kᵀ J_t,i.
//   J̄     [J_n; J_D] (m(1+d) × n) [¯J, eq. (35)]; λ̄ = [λ_n; λ_D] ≥ 0.
//   W̄     J̄ M⁻¹ J̄ᵀ, the Delassus matrix of normals and directions.
//   Λ_t   tangential impulse of contact i in its (t1, t2) frame:
//         Λ_t,i = Σ_k λ_D,ik d_k (one entry planar, two in 3-D).
//   E     kinetic energy. The laws report the CHANGE
//         ΔE = λ̄ᵀ (ū + ½ W̄ λ̄),   ū = J̄ v + b̄,
//         which is exact (v⁺ = v + M⁻¹J̄ᵀλ̄) and needs no mass matrix; with
//         non-zero offsets it is the change in the frame that moves with
//         the kinematic partners.
//
// SIGN CONVENTION: u_n > 0 separating, u_n < 0 approaching (impacting).
// Contact i is colliding iff u_n,i < −tolerance (see the laws' parameters).
#pragma once

#include <simpact/impact_problem.h>

#include <simpact/propagative.h>  // Status

#include <Eigen/Core>

#include <string>
#include <vector>

namespace simpact {

struct FrictionalProblem {
  SparseColMatrix inverse_mass;    ///< M⁻¹ (n×n), symmetric PSD.
  SparseRowMatrix normals;         ///< J_n (m×n); J_n v > 0 separates.
  SparseRowMatrix tangents;        ///< J_t: m rows (planar) or 2m rows (3-D).
  Eigen::VectorXd velocity;        ///< v⁻ (n).
  Eigen::VectorXd friction;        ///< μ (m), each ≥ 0 and finite.
  Eigen::VectorXd normal_offsets;  ///< b_n (m) or empty for zero.
  Eigen::VectorXd tangent_offsets; ///< b_t (rows of J_t) or empty for zero.
  /// d, the polyhedral cone's directions per contact. 0 = automatic: 2 in
  /// planar problems (the only valid value there), 4 in 3-D (≥ 3 allowed).
  int cone_directions = 0;
  /// e, Stronge's energetic coefficient of restitution per contact (m),
  /// each in [0, 1], or empty for 0 (inelastic). Read by the Routh law only
  /// (routh.h, "Restitution"); the Anitescu–Potra and sequential references
  /// are inelastic and ignore it.
  Eigen::VectorXd restitution;

  int dofs() const { return static_cast<int>(velocity.size()); }
  int contacts() const { return static_cast<int>(normals.rows()); }
  /// Tangent rows per contact: 1 (planar) or 2 (3-D); 0 when m = 0.
  int tangent_dimension() const {
    return contacts() == 0 ? 0 : static_cast<int>(tangents.rows()) / contacts();
  }
  /// The d in force (resolves 0 = automatic).
  int directions() const {
    if (cone_directions != 0) return cone_directions;
    return tangent_dimension() == 2 ? 4 : 2;
  }

  /// Builds a problem from dense matrices; exact zeros are not stored.
  static FrictionalProblem from_dense(const Eigen::MatrixXd& inverse_mass,
                                      const Eigen::MatrixXd& normals,
                                      const Eigen::MatrixXd& tangents,
                                      const Eigen::VectorXd& velocity,
                                      const Eigen::VectorXd& friction);
};

/// Checks everything validate(ImpactProblem) checks, plus: J_t has m or 2m
/// rows with n columns, no zero tangent row, μ (m entries, finite, ≥ 0),
/// e (empty, or m entries in [0, 1]), offsets sizes, and d (2 planar; ≥ 3 and ≤ kMaxConeDirections in 3-D).
/// Throws InvalidProblem naming the first problem found.
void validate(const FrictionalProblem& problem);

/// Largest d accepted in 3-D. 64 directions approximate the circular cone
/// to 0.12 % (1 − cos(π/64)); more only inflates the LCPs (size (3 + d) m).
inline constexpr int kMaxConeDirections = 64;

/// One post-impact state of a frictional law, with the quantities Halm & Posa
/// plot (contact-frame velocities) and the cost that produced it.
struct FrictionalOutcome {
  Eigen::VectorXd velocity;               ///< v⁺ (n).
  Eigen::VectorXd normal_impulses;        ///< Λ_n (m), total over the impact, ≥ 0.
  Eigen::VectorXd tangential_impulses;    ///< Λ_t (rows of J_t), contact frame.
  Eigen::VectorXd normal_velocities;      ///< u_n⁺ = J_n v⁺ + b_n (m).
  Eigen::VectorXd tangential_velocities;  ///< u_t⁺ = J_t v⁺ + b_t (rows of J_t).
  double energy_change = 0.0;  ///< ΔE (see glossary); ≤ 0 for every law here.
  int lcps = 0;                ///< LCPs (or single-contact solves) spent.
  /// Routh with box pivoting: LCPs (increments, or the Anitescu–Potra
  /// fallback) box pivoting could not solve to the residual tolerance, left
  /// to Lemke (routh.h, "LCP solvers").
  int increment_fallbacks = 0;
  /// Routh with Lemke primary (IncrementSolver::kAutomatic, small
  /// clusters): LCPs both Lemke runs failed and box pivoting, from a cold
  /// start, solved to the same residual tolerance (routh.h, "LCP solvers").
  int increment_rescues = 0;
  /// Routh: h in force for this sample [N·s], the largest cap scale h_i —
  /// RouthSampler::step(), or the simultaneous step's when the sample was
  /// drawn again under it (routh.h, "Automatic step"). 0 for other laws.
  double step = 0.0;
  /// The law itself reached a non-colliding velocity (u_n⁺ ≥ −tolerance).
  /// False when a step limit was hit or a solve failed; see the law's
  /// fallback.
  bool terminated = true;
  /// The law could not end the impact (status kStepLimitReached or
  /// kLcpFailed) and its documented fallback did (Routh: one Anitescu–Potra
  /// LCP): the velocity is non-colliding and dissipative, though not the
  /// law's own. terminated || finished_by_fallback ⇔ non-colliding.
  bool finished_by_fallback = false;
  /// Velocities along the way, v⁻ first, when the law was asked to record
  /// them (Routh: after each increment; sequential: after each impact).
  std::vector<Eigen::VectorXd> trajectory;
  /// The normal work of each contact (m), split by sign [J, ≥ 0], as the
  /// Routh law accounts it (routh.h, "Restitution"): increment by
  /// increment w_i = ½ (u_n,i + u_n,i′) Δλ_n,i; compression_work sums −w_i
  /// over increments with w_i < 0, restitution_work sums w_i > 0. With
  /// restitution e_i the law stops contact i pushing once
  /// restitution_work_i = e_i² compression_work_i (Stronge). Empty for the
  /// other laws.
  Eigen::VectorXd compression_work, restitution_work;
};

/// Result of one call of a frictional law.
struct FrictionalResult {
  Status status = Status::kSuccess;
  std::string message;                     ///< why, when status != kSuccess.
  std::vector<FrictionalOutcome> outcomes; ///< one, or every distinct one.
};

/// The frictionless part of a frictional problem (normals, velocity,
/// offsets; restitution 0), for the propagative and plastic laws.
ImpactProblem normal_part(const FrictionalProblem& problem);

}  // namespace simpact
