#include "core/frictional_space.h"

#include "core/lcp.h"

#include <algorithm>
#include <cmath>

namespace simpact::internal {

namespace {
constexpr double kPi = 3.14159265358979323846;
}  // namespace

void FrictionalSpace::build(const FrictionalProblem& problem, bool dense_storage) {
  n = problem.dofs();
  m = problem.contacts();
  d = problem.directions();
  tangent_dim = problem.tangent_dimension();
  dense = dense_storage;

  cos_k.assign(static_cast<size_t>(d), 0.0);
  sin_k.assign(static_cast<size_t>(d), 0.0);
  if (tangent_dim == 1) {
    cos_k = {1.0, -1.0};  // +t, −t
  } else {
    // Exact values on the axes (d = 4 gives exactly ±t1, ±t2, no 6e-17
    // leakage between the tangents).
    for (int k = 0; k < d; ++k) {
      const double angle = 2.0 * kPi * k / d;
      double c = std::cos(angle), s = std::sin(angle);
      if (4 * k % d == 0) {
        const int quarter = 4 * k / d;
        c = quarter == 0 ? 1.0 : quarter == 2 ? -1.0 : 0.0;
        s = quarter == 1 ? 1.0 : quarter == 3 ? -1.0 : 0.0;
      }
      cos_k[static_cast<size_t>(k)] = c;
      sin_k[static_cast<size_t>(k)] = s;
    }
  }

  // J̄ = [J_n; J_D] as sparse rows (the direction rows combine a contact's
  // tangent rows), and its products; dense copies in dense mode.
  {
    std::vector<Eigen::Triplet<double>> entries;
    for (int i = 0; i < m; ++i)
      for (SparseRowMatrix::InnerIterator it(problem.normals, i); it; ++it) entries.emplace_back(i, it.index(), it.value());
    for (int i = 0; i < m; ++i)
      for (int k = 0; k < d; ++k) {
        const double c = cos_k[static_cast<size_t>(k)], s = sin_k[static_cast<size_t>(k)];
        for (SparseRowMatrix::InnerIterator it(problem.tangents, i * tangent_dim); it; ++it)
          if (c != 0.0) entries.emplace_back(direction_row(i, k), it.index(), c * it.value());
        if (tangent_dim == 2)
          for (SparseRowMatrix::InnerIterator it(problem.tangents, i * 2 + 1); it; ++it)
            if (s != 0.0) entries.emplace_back(direction_row(i, k), it.index(), s * it.value());
      }
    jbar_rows.resize(rows(), n);
    jbar_rows.setFromTriplets(entries.begin(), entries.end());
  }
  jt_rows = problem.tangents;
  inverse_mass = problem.inverse_mass;
  if (dense) {
    jbar = Eigen::MatrixXd(jbar_rows);
    const Eigen::MatrixXd jt = Eigen::MatrixXd(problem.tangents);
    if (rows() == 0) {
      // No contacts: every contact-space quantity is empty. Eigen's products
      // with an empty operand offset a null data pointer (undefined behaviour
      // that clang's UBSan reports), so they are not formed.
      y.resize(n, 0);
      wbar.resize(0, 0);
      tbar.resize(0, 0);
    } else {
      y = problem.inverse_mass * jbar.transpose();
      wbar = jbar * y;
      // Rounding leaves W̄ asymmetric at 1e-16; symmetrize so that mode
      // enumeration and Lemke see one matrix.
      wbar = (0.5 * (wbar + wbar.transpose())).eval();
      tbar = jt * y;
    }
    wdiag = rows() > 0 ? Eigen::VectorXd(wbar.diagonal()) : Eigen::VectorXd(0);
  } else {
    jbar.resize(0, 0);
    y.resize(0, 0);
    wbar.resize(0, 0);
    tbar.resize(0, 0);
    // diag W̄: J̄_j M⁻¹ J̄_jᵀ row by row.
    wdiag.resize(rows());
    const SparseColMatrix ym = problem.inverse_mass * SparseColMatrix(jbar_rows.transpose());
    for (int j = 0; j < rows(); ++j) wdiag[j] = ym.col(j).dot(jbar_rows.row(j).transpose());
  }
  if (rows() == 0) {
    u0.resize(0);
    ut0.resize(0);
  } else if (dense) {  // the dense products as they always were (bit for bit)
    u0 = jbar * problem.velocity;
    ut0 = Eigen::MatrixXd(problem.tangents) * problem.velocity;
  } else {
    u0 = jbar_rows * problem.velocity;
    ut0 = problem.tangents * problem.velocity;
  }
  if (problem.normal_offsets.size() != 0) u0.head(m) += problem.normal_offsets;
  if (problem.tangent_offsets.size() != 0) {
    ut0 += problem.tangent_offsets;
    for (int i = 0; i < m; ++i)
      for (int k = 0; k < d; ++k) {
        double b = cos_k[static_cast<size_t>(k)] * problem.tangent_offsets[i * tangent_dim];
        if (tangent_dim == 2) b += sin_k[static_cast<size_t>(k)] * problem.tangent_offsets[i * 2 + 1];
        u0[direction_row(i, k)] += b;
      }
  }
  mu = problem.friction;

  // √W̄_jj, floored at 1e-12 of the largest diagonal (kRankTolerance's
  // reasoning): a row no impulse can move keeps a finite normalization.
  scale.resize(rows());
  const double max_diag = rows() > 0 ? std::max(wdiag.maxCoeff(), 1e-300) : 1.0;
  for (int j = 0; j < rows(); ++j)
    scale[j] = std::sqrt(std::max(wdiag[j], kRankTolerance * max_diag));
  approach_scale = 0.0;
  for (int i = 0; i < m; ++i) approach_scale = std::max(approach_scale, std::abs(u0[i]) / scale[i]);

  magnitude.resize(rows());
  if (rows() > 0 && dense) {  // (empty products: see above)
    magnitude = jbar.cwiseAbs() * problem.velocity.cwiseAbs();
    magnitude.head(m) += (u0.head(m) - jbar.topRows(m) * problem.velocity).cwiseAbs();
    magnitude.tail(rows() - m) += (u0.tail(rows() - m) - jbar.bottomRows(rows() - m) * problem.velocity).cwiseAbs();
  } else if (rows() > 0) {
    const SparseRowMatrix abs_rows = jbar_rows.cwiseAbs();
    magnitude = abs_rows * problem.velocity.cwiseAbs();
    const Eigen::VectorXd plain = jbar_rows * problem.velocity;
    magnitude += (u0 - plain).cwiseAbs();
  }
  speed_scale = 0.0;
  for (int j = 0; j < rows(); ++j) speed_scale = std::max(speed_scale, std::abs(u0[j]) / scale[j]);
  // Inert contacts: W̄_ii ≤ kRankTolerance ‖J_n,i‖² max_k M⁻¹_kk, the
  // propagative law's criterion (propagative.cpp): below the rank tolerance
  // of the data's inverse inertia, the contact is infinitely massive.
  double max_inverse_mass = 0.0;
  for (int c = 0; c < problem.inverse_mass.outerSize(); ++c)
    for (SparseColMatrix::InnerIterator it(problem.inverse_mass, c); it; ++it)
      if (it.row() == c) max_inverse_mass = std::max(max_inverse_mass, it.value());
  inert.assign(static_cast<size_t>(m), 0);
  for (int i = 0; i < m; ++i)
    if (!(wdiag[i] > kRankTolerance * problem.normals.row(i).squaredNorm() * max_inverse_mass))
      inert[static_cast<size_t>(i)] = 1;
}

void FrictionalSpace::apply_w(const Eigen::VectorXd& lambda, Eigen::VectorXd& out) const {
  if (dense) {
    out.noalias() = wbar * lambda;
    return;
  }
  const Eigen::VectorXd impulse = jbar_rows.transpose() * lambda;
  const Eigen::VectorXd change = inverse_mass * impulse;
  out.noalias() = jbar_rows * change;
}

Eigen::VectorXd FrictionalSpace::apply_w(const Eigen::VectorXd& lambda) const {
  Eigen::VectorXd out;
  apply_w(lambda, out);
  return out;
}

Eigen::VectorXd FrictionalSpace::apply_y(const Eigen::VectorXd& lambda) const {
  if (dense) return y * lambda;
  const Eigen::VectorXd impulse = jbar_rows.transpose() * lambda;
  return inverse_mass * impulse;
}

Eigen::VectorXd FrictionalSpace::apply_t(const Eigen::VectorXd& lambda) const {
  if (dense) return tbar * lambda;
  return jt_rows * apply_y(lambda);
}

Eigen::VectorXd FrictionalSpace::apply_jbar(const Eigen::VectorXd& v) const { return jbar_rows * v; }

Eigen::MatrixXd FrictionalSpace::dense_w() const {
  if (dense) return wbar;
  if (rows() == 0) return Eigen::MatrixXd(0, 0);
  const Eigen::MatrixXd ym = Eigen::MatrixXd(inverse_mass * SparseColMatrix(jbar_rows.transpose()));
  Eigen::MatrixXd w = jbar_rows * ym;
  return 0.5 * (w + w.transpose());
}

Eigen::MatrixXd FrictionalSpace::dense_y() const {
  if (dense) return y;
  if (rows() == 0) return Eigen::MatrixXd(n, 0);
  return Eigen::MatrixXd(inverse_mass * SparseColMatrix(jbar_rows.transpose()));
}

void FrictionalSpace::tangential_impulse(const Eigen::VectorXd& lambda, int i, double* out) const {
  out[0] = 0.0;
  if (tangent_dim == 2) out[1] = 0.0;
  for (int k = 0; k < d; ++k) {
    const double l = lambda[direction_row(i, k)];
    out[0] += cos_k[static_cast<size_t>(k)] * l;
    if (tangent_dim == 2) out[1] += sin_k[static_cast<size_t>(k)] * l;
  }
}

double FrictionalSpace::energy_change(const Eigen::VectorXd& lambda) const {
  if (dense) return lambda.dot(u0 + 0.5 * (wbar * lambda));
  return lambda.dot(u0 + 0.5 * apply_w(lambda));
}

void FrictionalSpace::fill_outcome(const FrictionalProblem& problem, const Eigen::VectorXd& lambda,
                                   FrictionalOutcome& outcome) const {
  if (dense) {
    outcome.velocity = problem.velocity + y * lambda;
  } else {
    outcome.velocity = problem.velocity + apply_y(lambda);
  }
  outcome.normal_impulses = lambda.head(m);
  outcome.tangential_impulses.resize(m * tangent_dim);
  for (int i = 0; i < m; ++i)
    tangential_impulse(lambda, i, outcome.tangential_impulses.data() + i * tangent_dim);
  if (dense) {
    outcome.normal_velocities = u0.head(m) + wbar.topRows(m) * lambda;
    outcome.tangential_velocities = ut0 + tbar * lambda;
  } else {
    outcome.normal_velocities = u0.head(m) + apply_w(lambda).head(m);
    outcome.tangential_velocities = ut0 + apply_t(lambda);
  }
  outcome.energy_change = energy_change(lambda);
}

bool FrictionalSpace::colliding(const Eigen::VectorXd& u, double tolerance) const {
  for (int i = 0; i < m; ++i)
    if (u[i] / scale[i] < -tolerance * approach_scale) return true;
  return false;
}

Eigen::MatrixXd anitescu_potra_matrix(const FrictionalSpace& sp, const std::vector<int>& contacts,
                                      std::vector<int>* rows_out) {
  if (sp.dense) return anitescu_potra_matrix(sp, sp.wbar, contacts, rows_out);
  return anitescu_potra_matrix(sp, sp.dense_w(), contacts, rows_out);
}

Eigen::MatrixXd anitescu_potra_matrix(const FrictionalSpace& sp, const Eigen::MatrixXd& wbar,
                                      const std::vector<int>& contacts, std::vector<int>* rows_out) {
  std::vector<int> set = contacts;
  if (set.empty())
    for (int i = 0; i < sp.m; ++i) set.push_back(i);
  const int c = static_cast<int>(set.size()), d = sp.d, cd = c * d, size = (2 + d) * c;
  // λ̄ rows of the chosen contacts: normals first, then their directions.
  std::vector<int> rows;
  for (int i : set) rows.push_back(sp.normal_row(i));
  for (int i : set)
    for (int k = 0; k < d; ++k) rows.push_back(sp.direction_row(i, k));
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(size, size);
  for (int r = 0; r < c + cd; ++r)
    for (int s = 0; s < c + cd; ++s)
      a(r, s) = wbar(rows[static_cast<size_t>(r)], rows[static_cast<size_t>(s)]);
  for (int j = 0; j < c; ++j) {
    for (int k = 0; k < d; ++k) {
      a(c + j * d + k, c + cd + j) = 1.0;   // E γ in the direction rows (32)
      a(c + cd + j, c + j * d + k) = -1.0;  // −Eᵀ λ_D in the γ row (33)
    }
    a(c + cd + j, j) = sp.mu[set[static_cast<size_t>(j)]];
  }
  if (rows_out) *rows_out = std::move(rows);
  return a;
}

bool anitescu_potra_lemke(const FrictionalSpace& sp, const Eigen::VectorXd& u,
                          const std::vector<int>& contacts, Eigen::VectorXd& lambda,
                          std::string* message) {
  std::vector<int> rows;
  const Eigen::MatrixXd a = anitescu_potra_matrix(sp, contacts, &rows);
  const int variables = static_cast<int>(rows.size());
  Eigen::VectorXd q = Eigen::VectorXd::Zero(a.rows());
  for (int r = 0; r < variables; ++r) q[r] = u[rows[static_cast<size_t>(r)]];
  const LcpResult r = solve_lcp_lemke(a, q);
  if (r.status != LcpStatus::kSolved) {
    if (message) *message = r.message;
    return false;
  }
  lambda = Eigen::VectorXd::Zero(sp.rows());
  for (int s = 0; s < variables; ++s) lambda[rows[static_cast<size_t>(s)]] = r.z[s];
  return true;
}

}  // namespace simpact::internal
