// The final check every core law runs on the outcome it is about to return
// (propagative.h, "Status"): one place, so that `success` means the same
// thing for every law. Everything is in contact space; every tolerance is
// relative to the problem's DATA, computed before the law runs, never to the
// size of the solution (a check relative to huge impulses accepts anything).
//
// Data scales, for contact i (row i of J, W_ii = J_i M⁻¹ J_iᵀ):
//   S        largest g-normalized pre-impact speed max_j |u⁻_j| / √W_jj
//            (the laws' own S; the Routh sampler includes its direction rows);
//   a_i      |b_i| + Σ_k |J_ik v⁻_k|: the magnitude of the terms summing to
//            u⁻_i, the size of the rounding in any u_i computed from a v;
//   V_i      = S √W_ii + a_i: the velocity scale of contact i;
//   Λ_i      = V_i / W_ii: the impulse that changes u_i by V_i, the natural
//            impulse of contact i (frictional laws add the step h);
//   E_s      = ½ S²: the kinetic energy of the fastest approach in its own
//            direction, the energy scale of the data.
#pragma once

#include <simpact/propagative.h>

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

namespace simpact::internal {

/// u⁺_i ≥ −this × V_i. The laws stop at 1e-10 (propagative) and 1e-9 (Routh)
/// of S √W_ii; the final velocities are recomputed from v⁺, whose rounding is
/// ~n·1e-16 of a_i. 1e-8 is ten times the laws' own tolerance and still far
/// below any approach that matters (1e-8 m/s after a 1 m/s impact). A law
/// with a looser tolerance of its own passes it (OutcomeScales::build).
inline constexpr double kOutcomeApproachTolerance = 1e-8;

/// ΔE ≤ this × E_s (+ the rounding allowance of long sequences, below). ΔE
/// is 0 (elastic) or ≤ 0 (plastic, blends, Routh) in exact arithmetic and
/// is computed as ½ λᵀ(u⁻ + u⁺): each term is ~E_s at natural impulses, so
/// its rounding is ~m·1e-16·E_s; 1e-8 leaves eight orders for that and is
/// still far below a gain anyone could see.
inline constexpr double kOutcomeEnergyTolerance = 1e-8;

/// Normal impulses ≥ −this × Λ_i and friction Σ_k λ_D,ik − μ_i λ_n,i ≤ this
/// × Λ_i·(1 + μ_i). Lemke's accepted residual is 1e-9 of the data per LCP
/// (lcp.h); a Routh sample adds up to max_steps (100) increments, so 1e-7
/// bounds what accurate solves can accumulate, while a friction impulse
/// outside its cone by more than 1e-7 of the natural impulse is an
/// inaccurate LCP, not rounding.
inline constexpr double kOutcomeImpulseTolerance = 1e-7;

/// Per-reflection rounding allowance of ΔE for long elastic sequences: the
/// impulses of a sequence of N reflections grow to ~N Λ and u⁺ carries ~N
/// roundings, so ΔE's rounding grows like N²·1e-16·E_s; 4 × the unit roundoff
/// (2.2e-16) per N² bounds it (it matters only beyond N ~ 10⁴).
inline constexpr double kSequenceRoundingPerStepSquared = 4.0 * std::numeric_limits<double>::epsilon();

/// Thresholds of the final check for one problem, built once from its data.
struct OutcomeScales {
  Eigen::VectorXd approach;  ///< m: u⁺_i ≥ −approach_i passes.
  Eigen::VectorXd impulse;   ///< m: the slack of the impulse checks (Λ_i·tol).
  double energy = 0.0;       ///< ΔE ≤ energy (before the sequence allowance).
  double energy_scale = 0.0; ///< E_s.

  /// w_diag: W_ii per contact (≤ 0 or tiny for inert contacts is fine: their
  /// impulse slack uses the largest finite Λ); magnitude: a_i; speed: S;
  /// law_tolerance: the law's own approach tolerance relative to S (the
  /// check is never stricter than 10× it); extra_impulse: added to every Λ_i
  /// (Routh: the step h, the largest impulse an increment may take).
  void build(const Eigen::VectorXd& w_diag, const Eigen::VectorXd& magnitude, double speed,
             double law_tolerance, double extra_impulse = 0.0) {
    const Eigen::Index m = w_diag.size();
    const double tolerance = std::max(kOutcomeApproachTolerance, 10.0 * law_tolerance);
    approach.resize(m);
    impulse.resize(m);
    double largest = 0.0;
    for (Eigen::Index i = 0; i < m; ++i) {
      const double w = w_diag[i] > 0.0 ? w_diag[i] : 0.0;
      const double v = speed * std::sqrt(w) + magnitude[i];
      approach[i] = tolerance * v;
      impulse[i] = w > 0.0 ? v / w + extra_impulse : -1.0;  // inert: filled below
      if (impulse[i] > largest && std::isfinite(impulse[i])) largest = impulse[i];
    }
    for (Eigen::Index i = 0; i < m; ++i)
      impulse[i] = kOutcomeImpulseTolerance * (impulse[i] >= 0.0 && std::isfinite(impulse[i]) ? impulse[i] : largest);
    energy_scale = 0.5 * speed * speed;
    energy = kOutcomeEnergyTolerance * energy_scale;
  }
};

/// What the final check looks at. u_after must be recomputed from the
/// returned velocity (J v⁺ + b), not carried along by the law.
struct OutcomeView {
  const Eigen::VectorXd* velocity = nullptr;         ///< v⁺ (n)
  const Eigen::VectorXd* u_after = nullptr;          ///< u⁺ (m), from v⁺
  const Eigen::VectorXd* normal_impulses = nullptr;  ///< λ_n (m)
  double energy_change = 0.0;                        ///< ΔE = ½ λᵀ(u⁻ + u⁺)
  std::int64_t sequence_length = 0;                  ///< N, reflections (elastic)
  /// Frictional laws: Σ_k λ_D,ik per contact (m) and μ (m); null otherwise.
  const Eigen::VectorXd* direction_sums = nullptr;
  const Eigen::VectorXd* friction = nullptr;
  /// Other values that must be finite (the frictional laws' tangential
  /// impulses and velocities); may be null.
  const Eigen::VectorXd* extra = nullptr;
  /// false only for a frictional sample that the caller asked to leave
  /// colliding (Routh with finish_with_anitescu_potra = false).
  bool require_separation = true;
};

/// Returns kSuccess or the first failed check's status, with a message
/// naming the contact and the sizes involved.
/// The parts streamed into one message (6 significant digits); only failed
/// checks build one (a stream costs more than the checks of a small impact).
template <class... Parts>
std::string check_message(const Parts&... parts) {
  std::ostringstream os;
  os.precision(6);
  (os << ... << parts);
  return os.str();
}

inline Status check_outcome(const OutcomeView& o, const OutcomeScales& s, std::string& message) {
  auto finite = [](const Eigen::VectorXd* x) { return x == nullptr || x->allFinite(); };
  if (!finite(o.velocity) || !finite(o.u_after) || !finite(o.normal_impulses) ||
      !finite(o.direction_sums) || !finite(o.extra) || !std::isfinite(o.energy_change)) {
    message = "the outcome is not finite (an impulse or velocity overflowed)";
    return Status::kNonFinite;
  }
  const Eigen::Index m = o.normal_impulses->size();
  for (Eigen::Index i = 0; i < m; ++i) {
    const double lambda = (*o.normal_impulses)[i];
    if (lambda < -s.impulse[i]) {
      message = check_message("contact ", i, " has a negative normal impulse ", lambda, " (tolerance ",
                              s.impulse[i], ")");
      return Status::kImpulseOutsideCone;
    }
    if (o.direction_sums != nullptr) {
      const double mu = (*o.friction)[i];
      const double excess = (*o.direction_sums)[i] - mu * lambda;
      if (excess > s.impulse[i] * (1.0 + mu)) {
        message = check_message("contact ", i, ": friction impulse ", (*o.direction_sums)[i],
                                " exceeds mu * normal impulse = ", mu * lambda, " by ", excess, " (tolerance ",
                                s.impulse[i] * (1.0 + mu), ")");
        return Status::kImpulseOutsideCone;
      }
    }
  }
  if (o.require_separation) {
    for (Eigen::Index i = 0; i < m; ++i) {
      if ((*o.u_after)[i] < -s.approach[i]) {
        message = check_message("contact ", i, " still approaches at ", (*o.u_after)[i], " (tolerance ",
                                s.approach[i], ")");
        return Status::kStillApproaching;
      }
    }
  }
  const double steps = static_cast<double>(o.sequence_length);
  const double allowed = s.energy + kSequenceRoundingPerStepSquared * steps * steps * s.energy_scale;
  if (o.energy_change > allowed) {
    message = check_message("the outcome gains kinetic energy ", o.energy_change, " (tolerance ", allowed,
                            ", data energy scale ", s.energy_scale, ")");
    return Status::kEnergyGain;
  }
  message.clear();
  return Status::kSuccess;
}

}  // namespace simpact::internal
