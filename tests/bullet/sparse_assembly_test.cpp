// The assemble stage's sparse helpers (bullet/sparse_assembly.h) against
// Eigen's own setFromTriplets and dense products, and the object numbering
// shared by the rigid adapter and the touching walk (bullet/object_numbers.h).
#include "bullet/object_numbers.h"
#include "bullet/sparse_assembly.h"

#include <btBulletCollisionCommon.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace simpact::bullet::internal {
namespace {

using Triplet = Eigen::Triplet<double>;
using RowMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;
using ColMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor>;

// Entries grouped by outer index in increasing order (as the adapters emit
// them), inner indices shuffled within each group, with repeats and zeros.
std::vector<Triplet> OrderedEntries(std::mt19937& rng, int outer, int inner, bool row_major) {
  std::uniform_int_distribution<int> count(0, 6), index(0, inner - 1), pick(0, 9);
  std::uniform_real_distribution<double> value(-2.0, 2.0);
  std::vector<Triplet> entries;
  for (int o = 0; o < outer; ++o) {
    const int n = count(rng);
    for (int e = 0; e < n; ++e) {
      const int i = index(rng);
      const double v = pick(rng) == 0 ? 0.0 : value(rng);
      entries.push_back(row_major ? Triplet(o, i, v) : Triplet(i, o, v));
      if (pick(rng) == 0) entries.push_back(row_major ? Triplet(o, i, -0.5 * v) : Triplet(i, o, -0.5 * v));
    }
  }
  return entries;
}

template <class Sparse>
void ExpectSameMatrix(const Sparse& actual, const Sparse& expected) {
  ASSERT_EQ(actual.rows(), expected.rows());
  ASSERT_EQ(actual.cols(), expected.cols());
  EXPECT_TRUE(actual.isCompressed());
  const Eigen::MatrixXd a(actual), e(expected);
  EXPECT_EQ(a, e);  // bitwise: each value is the same sum in the same order
  EXPECT_EQ(actual.nonZeros(), expected.nonZeros());  // same pattern: no entry added or dropped
  for (Eigen::Index o = 0; o < actual.outerSize(); ++o) {
    Eigen::Index last = -1;
    for (typename Sparse::InnerIterator it(actual, o); it; ++it) {
      EXPECT_GT(it.index(), last) << "inner indices must increase (outer " << o << ")";
      last = it.index();
    }
  }
}

TEST(SparseAssembly, OrderedTripletsMatchSetFromTriplets) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<Triplet> rows = OrderedEntries(rng, 9, 13, true);
    RowMatrix expected(9, 13), actual;
    expected.setFromTriplets(rows.begin(), rows.end());
    set_from_ordered_triplets(rows, 9, 13, actual);
    ExpectSameMatrix(actual, expected);

    std::vector<Triplet> cols = OrderedEntries(rng, 11, 8, false);
    ColMatrix expected_cols(8, 11), actual_cols;
    expected_cols.setFromTriplets(cols.begin(), cols.end());
    set_from_ordered_triplets(cols, 8, 11, actual_cols);
    ExpectSameMatrix(actual_cols, expected_cols);
  }
}

TEST(SparseAssembly, UnorderedTripletsTakeSetFromTriplets) {
  std::mt19937 rng(8);
  std::vector<Triplet> entries = OrderedEntries(rng, 9, 13, true);
  ASSERT_GT(entries.size(), 2u);
  std::shuffle(entries.begin(), entries.end(), rng);
  RowMatrix expected(9, 13), actual;
  expected.setFromTriplets(entries.begin(), entries.end());
  set_from_ordered_triplets(entries, 9, 13, actual);
  EXPECT_EQ(Eigen::MatrixXd(actual), Eigen::MatrixXd(expected));
}

TEST(SparseAssembly, WriterMatchesSetFromTripletsWithoutZeros) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 50; ++trial) {
    const std::vector<Triplet> entries = OrderedEntries(rng, 10, 12, true);
    RowMatrix written;
    OuterVectorWriter<RowMatrix> writer(written, 10, 12, static_cast<Eigen::Index>(entries.size()));
    int row = 0;
    for (const Triplet& t : entries) {
      while (row < t.row()) {
        writer.next();
        ++row;
      }
      writer.add(t.col(), t.value());
    }
    writer.finish();  // closes the current row and the empty ones after it
    std::vector<Triplet> nonzero;
    for (const Triplet& t : entries)
      if (t.value() != 0.0) nonzero.push_back(t);
    RowMatrix expected(10, 12);
    expected.setFromTriplets(nonzero.begin(), nonzero.end());
    ExpectSameMatrix(written, expected);
  }
}

TEST(SparseAssembly, RowQuadraticFormsAreTheDiagonalOfJMJt) {
  std::mt19937 rng(10);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  const int n = 18, m = 7;
  // A symmetric block-diagonal M⁻¹ (three 6×6 blocks) and sparse rows.
  Eigen::MatrixXd dense_m = Eigen::MatrixXd::Zero(n, n);
  for (int b = 0; b < 3; ++b) {
    Eigen::MatrixXd block = Eigen::MatrixXd::NullaryExpr(6, 6, [&]() { return value(rng); });
    dense_m.block(6 * b, 6 * b, 6, 6) = block * block.transpose();
  }
  std::vector<Triplet> row_entries = OrderedEntries(rng, m, n, true);
  RowMatrix rows(m, n);
  rows.setFromTriplets(row_entries.begin(), row_entries.end());
  const ColMatrix inverse_mass = dense_m.sparseView();
  std::vector<double> scratch;
  const Eigen::VectorXd w = row_quadratic_forms(rows, inverse_mass, scratch);
  const Eigen::MatrixXd dense_j(rows);
  const Eigen::VectorXd expected = (dense_j * dense_m * dense_j.transpose()).diagonal();
  ASSERT_EQ(w.size(), m);
  for (int r = 0; r < m; ++r) EXPECT_NEAR(w[r], expected[r], 1e-12 * (1.0 + std::abs(expected[r]))) << "row " << r;
  for (const double s : scratch) EXPECT_EQ(s, 0.0);  // left clean for the next call
}

TEST(ObjectNumbers, NumbersInOrderThroughSlotsAndTheMap) {
  btCollisionObject in_world_a, in_world_b, stale, no_world;
  in_world_a.setWorldArrayIndex(3);
  in_world_b.setWorldArrayIndex(70);
  stale.setWorldArrayIndex(3);  // a slot another object already holds
  no_world.setWorldArrayIndex(-1);
  ObjectNumbers numbers;
  EXPECT_EQ(numbers.add(&in_world_a), 0);
  EXPECT_EQ(numbers.add(&stale), 1);
  EXPECT_EQ(numbers.add(&no_world), 2);
  EXPECT_EQ(numbers.add(&in_world_b), 3);
  EXPECT_EQ(numbers.add(&stale), 1);  // found again, not renumbered
  EXPECT_EQ(numbers.find(&in_world_a), 0);
  EXPECT_EQ(numbers.find(&stale), 1);
  EXPECT_EQ(numbers.find(&no_world), 2);
  EXPECT_EQ(numbers.find(&in_world_b), 3);
  EXPECT_EQ(numbers.size(), 4);
  EXPECT_EQ(numbers.object(1), &stale);
  numbers.clear();
  EXPECT_EQ(numbers.size(), 0);
  for (const btCollisionObject* o : {&in_world_a, &in_world_b, &stale, &no_world}) EXPECT_EQ(numbers.find(o), -1);
  // After clear() the stale object's slot is free for it.
  EXPECT_EQ(numbers.add(&stale), 0);
  EXPECT_EQ(numbers.find(&in_world_a), -1);
}

}  // namespace
}  // namespace simpact::bullet::internal
