// Seeded random frictional impact problems for property tests of the Routh,
// Anitescu–Potra and sequential laws, and the closed form of Routh's
// single-contact planar impact.
#pragma once

#include <simpact/frictional_problem.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <random>

namespace simpact::testing {

struct RandomFrictional {
  FrictionalProblem problem;
  Eigen::MatrixXd mass;  ///< M = (M⁻¹)⁻¹ (M⁻¹ is drawn positive definite).
};

/// n DOFs, m contacts, planar (one tangent per contact) or 3-D (two). M⁻¹ =
/// A Aᵀ + 0.1 I (positive definite, eigenvalues ≳ 0.1); rows of J uniform in
/// [−1, 1]; v uniform in [−1, 1] then shifted so that contact 0 approaches
/// at speed ≥ 0.2 (every problem is an impact); μ uniform in [0, 1.5].
inline RandomFrictional random_frictional(std::uint64_t seed, int n, int m, bool planar) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), mu(0.0, 1.5);
  auto matrix = [&](int rows, int cols) {
    Eigen::MatrixXd a(rows, cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) a(i, j) = unit(rng);
    return a;
  };
  const Eigen::MatrixXd a = matrix(n, n);
  const Eigen::MatrixXd inverse_mass = a * a.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n);
  const Eigen::MatrixXd jn = matrix(m, n);
  const Eigen::MatrixXd jt = matrix(planar ? m : 2 * m, n);
  Eigen::VectorXd v = matrix(n, 1);
  // Shift v along M⁻¹ J_0ᵀ so that u_n,0 = J_0 v ≤ −0.2.
  const Eigen::VectorXd push = inverse_mass * jn.row(0).transpose();
  const double u0 = jn.row(0).dot(v), w00 = jn.row(0).dot(push);
  if (u0 > -0.2) v -= ((u0 + 0.2 + 0.3 * std::abs(unit(rng))) / w00) * push;
  Eigen::VectorXd friction(m);
  for (int i = 0; i < m; ++i) friction[i] = mu(rng);
  RandomFrictional out;
  out.problem = FrictionalProblem::from_dense(inverse_mass, jn, jt, v, friction);
  out.mass = inverse_mass.llt().solve(Eigen::MatrixXd::Identity(n, n));
  return out;
}

/// A planar rigid body q = [x, y, θ] (mass m, inertia I) touching the
/// ground at a point r = (rx, ry) from its centre: normal +y, tangent +x;
/// velocity v, friction μ.
inline FrictionalProblem planar_point(double m, double inertia, double rx, double ry, const Eigen::Vector3d& v,
                                      double mu) {
  Eigen::MatrixXd minv = Eigen::Vector3d(1.0 / m, 1.0 / m, 1.0 / inertia).asDiagonal();
  Eigen::MatrixXd jn(1, 3), jt(1, 3);
  jn << 0.0, 1.0, rx;   // point velocity y: v_y + θ̇ rx
  jt << 1.0, 0.0, -ry;  // point velocity x: v_x − θ̇ ry
  return FrictionalProblem::from_dense(minv, jn, jt, v, Eigen::VectorXd::Constant(1, mu));
}

/// Routh's inelastic impact of ONE planar contact (Routh 1891; Halm & Posa,
/// §2.2.2: Mathew Halm and Michael Posa, "Set-Valued Rigid-Body Dynamics for
/// Simultaneous, Inelastic, Frictional Impacts", arXiv:2103.15714),
/// closed form. Contact-space inverse inertia [[a, b], [b, c]] for (n, t),
/// pre-impact (u_n < 0, u_t), friction μ. The normal impulse grows; while the
/// contact slips, Λ_t = −μ sgn(u_t) Λ_n; if the slip reaches zero and
/// |b / c| ≤ μ the contact sticks (dΛ_t = −(b/c) dΛ_n); the impact ends when
/// u_n = 0. Returns (Λ_n, Λ_t) and whether the slip reached zero. Cases that
/// reverse the slip (|b/c| > μ after sticking) are not covered: callers
/// choose μ ≥ |b/c|.
struct RouthSingle {
  double normal = 0.0, tangential = 0.0;
  bool stuck = false;
};

inline RouthSingle routh_single_contact(double a, double b, double c, double un, double ut,
                                        double mu) {
  RouthSingle r;
  const double s = ut > 0.0 ? 1.0 : ut < 0.0 ? -1.0 : 0.0;
  if (s != 0.0) {
    const double dn = a - mu * s * b, dt = b - mu * s * c;  // rates while slipping
    const double to_stop_slip = dt != 0.0 ? -ut / dt : INFINITY;
    // While slipping u_n changes at rate dn; dn ≤ 0 (friction drives the
    // contact into the ground) means only sticking can end the impact.
    const double to_end = dn > 0.0 ? -un / dn : INFINITY;
    if (!(to_stop_slip > 0.0) || to_stop_slip >= to_end) {
      r.normal = to_end;
      r.tangential = -mu * s * to_end;
      return r;
    }
    r.normal = to_stop_slip;
    r.tangential = -mu * s * to_stop_slip;
    un += dn * to_stop_slip;
  }
  r.stuck = true;
  const double more = -un / (a - b * b / c);
  r.normal += more;
  r.tangential += -(b / c) * more;
  return r;
}

/// Routh's method with Stronge's energetic restitution for ONE planar
/// contact (W. J. Stronge, "Rigid body collisions with friction", Proc. R.
/// Soc. Lond. A 431, 1990; the single-contact algorithm of B. Mirtich,
/// "Impulse-based dynamic simulation of rigid body systems", PhD thesis,
/// 1996), integrated exactly: with the normal impulse P as the variable,
/// u_n and u_t are piecewise linear in P, one piece per slip mode (slip
/// +, slip −, stick), so each piece's normal work u_n Δ + ½ k_n Δ² is exact.
/// Compression ends at u_n = 0 with work W_c < 0; restitution goes on until
/// its work reaches e² |W_c|. Same inputs as routh_single_contact plus e;
/// `pieces` counts the mode pieces (kinks) the path took.
struct StrongeSingle {
  double normal = 0.0, tangential = 0.0;
  double compression_work = 0.0, restitution_work = 0.0;  ///< ≥ 0
  int pieces = 0;
};

inline StrongeSingle stronge_single_contact(double a, double b, double c, double un, double ut,
                                            double mu, double e) {
  StrongeSingle r;
  auto sign = [](double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : 0.0; };
  bool restituting = false;
  double budget = 0.0;  // restitution work still due
  for (int guard = 0; guard < 16; ++guard) {
    ++r.pieces;
    // The mode at this point: slipping, sticking, or (|b/c| > μ) slipping
    // off the stick in the direction of sgn(b).
    double s = sign(ut);
    double dt_ratio;  // dΛ_t / dP
    const bool stick = s == 0.0 && std::abs(b) <= mu * c;
    if (stick) {
      dt_ratio = -b / c;
    } else {
      if (s == 0.0) s = sign(b);
      dt_ratio = -mu * s;
    }
    // Sticking keeps u_t exactly 0 (b + c·(−b/c) would round).
    const double kn = a + b * dt_ratio, kt = stick ? 0.0 : b + c * dt_ratio;
    // Length of this piece: to the slip's end (u_t → 0), and to the phase's end.
    double to_slip_end = INFINITY;
    if (s != 0.0 && std::abs(ut) > 0.0 && kt * ut < 0.0) to_slip_end = -ut / kt;
    double to_phase_end;
    if (!restituting) {
      to_phase_end = kn > 0.0 ? -un / kn : INFINITY;  // u_n = 0
    } else {
      // un Δ + ½ kn Δ² = budget (un ≥ 0; the smallest positive root)
      const double disc = un * un + 2.0 * kn * budget;
      to_phase_end = kn != 0.0 ? (-un + std::sqrt(std::max(disc, 0.0))) / kn : budget / un;
    }
    const double step = std::min(to_slip_end, to_phase_end);
    const double work = un * step + 0.5 * kn * step * step;
    r.normal += step;
    r.tangential += dt_ratio * step;
    un += kn * step;
    ut = step == to_slip_end ? 0.0 : ut + kt * step;
    if (!restituting) {
      r.compression_work -= work;
    } else {
      r.restitution_work += work;
      budget -= work;
    }
    if (step == to_phase_end) {
      if (restituting) return r;
      restituting = true;
      un = 0.0;
      budget = e * e * r.compression_work;
      if (budget <= 0.0) return r;
    }
  }
  return r;
}

}  // namespace simpact::testing
