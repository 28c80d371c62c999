// Sparse assembly helpers shared by both Bullet adapters' assemble stage
// (cluster_stages.h): filling compressed matrices from entries the adapter
// emits in storage order, and the diagonal of J M⁻¹ Jᵀ without forming it.
//
// Internal to simpact::bullet; never installed.
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace simpact::bullet::internal {

/// Fills a compressed sparse matrix one outer vector at a time, in order
/// (rows of a row-major matrix, columns of a column-major one), straight
/// into its arrays: no triplet list (16 bytes an entry, a page fault every
/// 256 entries in a fresh process) and no transpose. add() buffers an
/// entry of the current vector, leaving exact zeros out; keep() buffers any
/// value; next() closes the vector (entries sorted by inner index, stable,
/// repeats summed in the order given); finish() closes the rest. The
/// result equals setFromTriplets on the entries buffered.
template <class Sparse>
class OuterVectorWriter {
 public:
  OuterVectorWriter(Sparse& out, Eigen::Index rows, Eigen::Index cols, Eigen::Index expected_nonzeros)
      : out_(out), outer_size_(Sparse::IsRowMajor ? rows : cols) {
    out_.resize(rows, cols);
    out_.reserve(expected_nonzeros);
  }
  OuterVectorWriter(const OuterVectorWriter&) = delete;
  OuterVectorWriter& operator=(const OuterVectorWriter&) = delete;

  /// Entry (current vector, inner) += value, unless value is 0.
  void add(Eigen::Index inner, double value) {
    if (value != 0.0) keep(inner, value);
  }
  /// Entry (current vector, inner) += value, stored even when 0.
  void keep(Eigen::Index inner, double value) { buffer_.emplace_back(inner, value); }
  /// Closes the current outer vector and moves to the next.
  void next() {
    out_.startVec(outer_);
    for (std::size_t i = 1; i < buffer_.size(); ++i)  // insertion sort: a contact row has ≤ 12
      for (std::size_t j = i; j > 0 && buffer_[j - 1].first > buffer_[j].first; --j)
        std::swap(buffer_[j - 1], buffer_[j]);
    for (std::size_t i = 0; i < buffer_.size();) {
      const Eigen::Index inner = buffer_[i].first;
      double value = 0.0;
      while (i < buffer_.size() && buffer_[i].first == inner) value += buffer_[i++].second;
      if (Sparse::IsRowMajor)
        out_.insertBack(outer_, inner) = value;
      else
        out_.insertBack(inner, outer_) = value;
    }
    buffer_.clear();
    ++outer_;
  }
  /// Closes the remaining outer vectors (empty) and compresses.
  void finish() {
    while (outer_ < outer_size_) next();
    out_.finalize();
  }

 private:
  Sparse& out_;
  Eigen::Index outer_size_;
  Eigen::Index outer_ = 0;
  std::vector<std::pair<Eigen::Index, double>> buffer_;
};

/// `out` = the rows × cols matrix of `entries` (repeated positions summed),
/// as Eigen's setFromTriplets. When the entries come grouped by outer index
/// in increasing order (rows of a row-major `out`, columns of a
/// column-major one), as the adapters emit contact rows and M⁻¹ blocks,
/// an OuterVectorWriter fills the compressed arrays in one pass; otherwise
/// setFromTriplets, which transposes through a second matrix. The result is
/// the same either way: it is compressed, its inner indices increase, and
/// each value is the sum in input order.
template <class Sparse>
void set_from_ordered_triplets(const std::vector<Eigen::Triplet<double>>& entries, Eigen::Index rows,
                               Eigen::Index cols, Sparse& out) {
  using Triplet = Eigen::Triplet<double>;
  constexpr bool kRowMajor = Sparse::IsRowMajor;
  const auto outer = [](const Triplet& t) -> Eigen::Index { return kRowMajor ? t.row() : t.col(); };
  const bool ordered = std::is_sorted(entries.begin(), entries.end(), [&](const Triplet& a, const Triplet& b) {
    return outer(a) < outer(b);
  });
  if (!ordered) {
    out.resize(rows, cols);
    out.setFromTriplets(entries.begin(), entries.end());
    return;
  }
  OuterVectorWriter<Sparse> writer(out, rows, cols, static_cast<Eigen::Index>(entries.size()));
  const Eigen::Index outer_size = kRowMajor ? rows : cols;
  std::size_t e = 0;
  for (Eigen::Index o = 0; o < outer_size; ++o) {
    for (; e < entries.size() && outer(entries[e]) == o; ++e)
      writer.keep(kRowMajor ? entries[e].col() : entries[e].row(), entries[e].value());
    writer.next();
  }
  writer.finish();
}

/// w_r = J_r M⁻¹ J_rᵀ for every row r of `rows` (m × n), M⁻¹ symmetric
/// (n × n, column-major): each row scattered into `scratch` (n entries,
/// left all zero) and read back along M⁻¹'s columns at its own nonzeros,
/// O(Σ_r Σ_{c ∈ J_r} nnz(M⁻¹ column c)) work and no m × n product.
inline Eigen::VectorXd row_quadratic_forms(const Eigen::SparseMatrix<double, Eigen::RowMajor>& rows,
                                           const Eigen::SparseMatrix<double, Eigen::ColMajor>& inverse_mass,
                                           std::vector<double>& scratch) {
  using Row = Eigen::SparseMatrix<double, Eigen::RowMajor>;
  using Col = Eigen::SparseMatrix<double, Eigen::ColMajor>;
  scratch.assign(static_cast<std::size_t>(rows.cols()), 0.0);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(rows.rows());
  for (Eigen::Index r = 0; r < rows.rows(); ++r) {
    for (Row::InnerIterator it(rows, r); it; ++it) scratch[static_cast<std::size_t>(it.col())] = it.value();
    double sum = 0.0;
    for (Row::InnerIterator it(rows, r); it; ++it)
      for (Col::InnerIterator mk(inverse_mass, it.col()); mk; ++mk)
        sum += it.value() * mk.value() * scratch[static_cast<std::size_t>(mk.row())];
    for (Row::InnerIterator it(rows, r); it; ++it) scratch[static_cast<std::size_t>(it.col())] = 0.0;
    w[r] = sum;
  }
  return w;
}

}  // namespace simpact::bullet::internal
