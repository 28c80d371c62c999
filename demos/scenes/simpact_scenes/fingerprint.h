// simpact scenes — a 64-bit FNV-1a fingerprint of floating-point values, bit
// for bit: two runs, builds or compilers that give the same fingerprint gave
// the same numbers (to within a 2⁻⁶⁴ chance of collision). Used by the fuzz
// harness's per-step state digest (random_worlds.cpp, --trace) and by the
// test that pins the worlds a seed draws (tests/bullet/fuzz_worlds_test.cpp).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace simpact::scenes {

/// FNV-1a (Fowler, Noll, Vo; offset basis 0xcbf29ce484222325, prime
/// 0x100000001b3) over the bytes of each value's bit pattern, least
/// significant byte first whatever the machine's byte order.
class Fingerprint {
 public:
  /// One float or double (its sizeof(T) bytes of bits).
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  void add(T value) {
    using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
    static_assert(sizeof(Bits) == sizeof(T), "float or double");
    Bits bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    for (std::size_t byte = 0; byte < sizeof bits; ++byte)
      hash_ = (hash_ ^ ((bits >> (8 * byte)) & 0xFFu)) * 0x100000001B3ull;
  }
  /// Every coefficient of a vector or matrix, in storage order.
  template <class Derived>
  void add(const Eigen::DenseBase<Derived>& values) {
    for (Eigen::Index i = 0; i < values.size(); ++i) add(values.derived().coeff(i));
  }
  /// x, y, z, w.
  template <class T>
  void add(const Eigen::Quaternion<T>& q) {
    add(q.coeffs());
  }
  template <class First, class Second, class... Rest>
  void add(const First& first, const Second& second, const Rest&... rest) {
    add(first);
    add(second);
    (add(rest), ...);
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xCBF29CE484222325ull;
};

}  // namespace simpact::scenes
