// simpact CLI — the JSON reading layer.
//
// Every reader throws InputError with a message that names the key (and the
// row or entry) it rejects, e.g.
//     "normals" row 1 has 2 entries, expected 3 (one per entry of "velocity")
// so that a user can fix an input file from the message alone. Rows and
// entries are counted from 0, as JSON arrays are.
#pragma once

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace simpact::cli {

// Ordered, so that output objects keep a logical key order and the first
// unknown key reported is the first one in the file.
using Json = nlohmann::ordered_json;

/// Bounds on every input document, checked while it is read, so that no
/// input can exhaust the stack, the memory or the time of the tool.
///
/// Containers nested deeper than this are rejected while parsing. The
/// deepest valid document ("multibodies" → entry → "links" → entry →
/// "colliders" → entry → "center") nests 7 levels; 64 leaves room for any
/// future format while keeping every recursive walk of a value (printing an
/// excerpt in a message, destroying it) far from the stack limit.
inline constexpr int kMaxNestingDepth = 64;
/// Largest input document [bytes]. 16 MiB is ~2 million numbers, far beyond
/// any hand-written impact problem or scene, and bounds the parsed value's
/// memory to a few hundred MB.
inline constexpr std::size_t kMaxInputBytes = std::size_t{16} << 20;
/// Largest magnitude of any number read: |x| <= 1e50, and a quantity that
/// must be positive (masses, dt, radii) must also be >= 1e-50, so that its
/// inverse obeys the same bound. Products of a few such numbers (energies
/// ½ m v², Delassus entries J M⁻¹ Jᵀ, impulses) stay below ~1e200, far from
/// double overflow at 1.8e308, whereas 1e154 squared already overflows. No
/// physical quantity in SI units comes near 1e50.
inline constexpr double kMaxMagnitude = 1e50;
inline constexpr double kMinPositive = 1.0 / kMaxMagnitude;

/// Malformed input. what() is one line without the "error: " prefix.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses one whole document. Rejects syntax errors and also duplicate keys:
/// the JSON grammar allows them, but a second "restitution" is a mistake
/// that nlohmann's last-one-wins would silently hide. Also rejects documents
/// longer than kMaxInputBytes and containers nested deeper than
/// kMaxNestingDepth (before they are built).
Json parse_json(std::istream& in);

/// The text quoted and escaped as a JSON string: "key". Used in messages so
/// that odd keys (quotes, newlines) cannot break the one-line format.
std::string quote(const std::string& text);

/// "a, b, c".
std::string join(const std::vector<std::string>& names);

/// A short JSON rendering of a rejected value for "(got ...)" in messages.
std::string excerpt(const Json& value);

/// "<key> must be one of: a, b, c (got "x")".
InputError not_one_of(const std::string& key, const std::vector<std::string>& names,
                      const std::string& got);

/// Throws unless `value` is an object; `what` names it ("the input").
void require_object(const Json& value, const std::string& what);

/// Throws naming the first key of `object` that is not in `allowed`.
void check_keys(const Json& object, const std::vector<std::string>& allowed);

/// object[key]; throws "missing required key" when absent.
const Json& require(const Json& object, const std::string& key);

/// The length an array must have, and where that length comes from, e.g.
/// {3, "one per entry of \"velocity\""}; the origin ends the error message.
struct Extent {
  Eigen::Index size = 0;
  std::string origin;
};

/// A finite number with |x| <= kMaxMagnitude.
double read_number(const Json& object, const std::string& key);
std::string read_string(const Json& object, const std::string& key);
/// A non-negative integer up to 2⁶⁴−1. Integral floats (1e6) are accepted.
std::uint64_t read_unsigned(const Json& object, const std::string& key);
/// An integer in [minimum, 2⁶³−1]; `minimum` must be ≥ 0.
std::int64_t read_integer(const Json& object, const std::string& key, std::int64_t minimum);
/// A finite number ≥ 0.
double read_at_least_zero(const Json& object, const std::string& key);
/// A finite number in [kMinPositive, kMaxMagnitude].
double read_positive(const Json& object, const std::string& key);
/// true or false.
bool read_bool(const Json& object, const std::string& key);
/// An array of finite numbers (|x| <= kMaxMagnitude), of length `size` when
/// given.
Eigen::VectorXd read_vector(const Json& object, const std::string& key,
                            const std::optional<Extent>& size = std::nullopt);
/// An array of rows, each an array of finite numbers (|x| <= kMaxMagnitude). Without `cols`, every
/// row must match row 0 (and an empty matrix has no columns).
Eigen::MatrixXd read_matrix(const Json& object, const std::string& key,
                            const std::optional<Extent>& rows, const std::optional<Extent>& cols);

/// Throws InputError unless every number in `output` is finite, naming the
/// first non-finite one by its JSON pointer. nlohmann prints NaN and ±inf as
/// null, which a reader would take for a valid document.
void require_finite_output(const Json& output);

}  // namespace simpact::cli
