#include "core/contact_space.h"

#include <algorithm>
#include <cmath>

namespace simpact::internal {

void ContactSpace::build(const SparseRowMatrix& normals, const SparseColMatrix& inverse_mass) {
  n_ = static_cast<int>(normals.cols());
  m_ = static_cast<int>(normals.rows());

  // J by columns, by a counting pass over its rows.
  jt_.start.assign(n_ + 1, 0);
  for (int i = 0; i < m_; ++i)
    for (SparseRowMatrix::InnerIterator it(normals, i); it; ++it) ++jt_.start[it.col() + 1];
  for (int d = 0; d < n_; ++d) jt_.start[d + 1] += jt_.start[d];
  jt_.index.resize(jt_.start[n_]);
  jt_.value.resize(jt_.start[n_]);
  {
    std::vector<int>& fill = mark_;
    fill.assign(jt_.start.begin(), jt_.start.end() - 1);
    for (int i = 0; i < m_; ++i)
      for (SparseRowMatrix::InnerIterator it(normals, i); it; ++it) {
        const int slot = fill[it.col()]++;
        jt_.index[slot] = i;
        jt_.value[slot] = it.value();
      }
  }

  // Classic sparse accumulation with a marker per row: mark_[r] == stamp
  // means acc_[r] already holds this column's partial sum.
  const int scratch = std::max(n_, m_);
  acc_.assign(scratch, 0.0);
  acc_abs_.assign(n_, 0.0);
  mark_.assign(scratch, -1);
  y_.clear(m_);
  w_.clear(m_);
  // Upper bounds on the nonzeros of Y and W (repeats counted), for reserve.
  std::size_t y_bound = 0, w_bound = 0;
  for (int i = 0; i < m_; ++i)
    for (SparseRowMatrix::InnerIterator jk(normals, i); jk; ++jk)
      for (SparseColMatrix::InnerIterator mk(inverse_mass, jk.col()); mk; ++mk) {
        ++y_bound;
        w_bound += static_cast<std::size_t>(jt_.end(static_cast<int>(mk.row())) - jt_.begin(static_cast<int>(mk.row())));
      }
  y_.reserve(y_bound);
  w_.reserve(w_bound);
  diag_.assign(m_, 0.0);
  diag_abs_.assign(m_, 0.0);
  for (int i = 0; i < m_; ++i) {
    // Column i of Y = Σ_k J_ik · M⁻¹[:, k].
    const int y_begin = static_cast<int>(y_.index.size());
    for (SparseRowMatrix::InnerIterator jk(normals, i); jk; ++jk)
      for (SparseColMatrix::InnerIterator mk(inverse_mass, jk.col()); mk; ++mk) {
        const int d = static_cast<int>(mk.row());
        if (mark_[d] != 2 * i) {
          mark_[d] = 2 * i;
          acc_[d] = 0.0;
          acc_abs_[d] = 0.0;
          y_.index.push_back(d);
        }
        acc_[d] += jk.value() * mk.value();
        acc_abs_[d] += std::abs(jk.value() * mk.value());
      }
    for (SparseRowMatrix::InnerIterator jd(normals, i); jd; ++jd)
      if (mark_[jd.col()] == 2 * i) diag_abs_[i] += std::abs(jd.value()) * acc_abs_[jd.col()];
    const int y_end = static_cast<int>(y_.index.size());
    for (int k = y_begin; k < y_end; ++k) y_.value.push_back(acc_[y_.index[k]]);
    y_.start.push_back(y_end);

    // Column i of W = J · Y[:, i]; stamps 2i+1 keep the two passes apart.
    const int w_begin = static_cast<int>(w_.index.size());
    for (int k = y_begin; k < y_end; ++k) {
      const int d = y_.index[k];
      const double yd = y_.value[k];
      for (int s = jt_.begin(d); s < jt_.end(d); ++s) {
        const int j = jt_.index[s];
        if (mark_[j] != 2 * i + 1) {
          mark_[j] = 2 * i + 1;
          acc_[j] = 0.0;
          w_.index.push_back(j);
        }
        acc_[j] += jt_.value[s] * yd;
      }
    }
    const int w_end = static_cast<int>(w_.index.size());
    for (int k = w_begin; k < w_end; ++k) {
      const int j = w_.index[k];
      w_.value.push_back(acc_[j]);
      if (j == i) diag_[i] = acc_[j];
    }
    w_.start.push_back(w_end);
  }
}

void ContactSpace::contact_velocity(const SparseRowMatrix& normals, const Eigen::VectorXd& v,
                                    const Eigen::VectorXd& offsets, Eigen::VectorXd& u) const {
  u.resize(m_);
  for (int i = 0; i < m_; ++i) {
    double s = offsets.size() ? offsets[i] : 0.0;
    for (SparseRowMatrix::InnerIterator it(normals, i); it; ++it) s += it.value() * v[it.col()];
    u[i] = s;
  }
}

void ContactSpace::apply_impulses(const Eigen::VectorXd& v, const Eigen::VectorXd& impulses,
                                  Eigen::VectorXd& out) const {
  out = v;
  for (int i = 0; i < m_; ++i) {
    const double l = impulses[i];
    if (l == 0.0) continue;
    for (int k = y_.begin(i); k < y_.end(i); ++k) out[y_.index[k]] += y_.value[k] * l;
  }
}

double ContactSpace::impulse_norm(const Eigen::VectorXd& impulses) const {
  double s = 0.0;
  for (int i = 0; i < m_; ++i) {
    const double l = impulses[i];
    if (l == 0.0) continue;
    for (int k = w_.begin(i); k < w_.end(i); ++k) s += impulses[w_.index[k]] * w_.value[k] * l;
  }
  return std::sqrt(std::max(s, 0.0));
}

Eigen::MatrixXd ContactSpace::dense_w() const {
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(m_, m_);
  for (int i = 0; i < m_; ++i)
    for (int k = w_.begin(i); k < w_.end(i); ++k) w(w_.index[k], i) = w_.value[k];
  return w;
}

}  // namespace simpact::internal
