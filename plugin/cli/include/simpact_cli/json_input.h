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

/// Malformed input. what() is one line without the "error: " prefix.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses one whole document. Rejects syntax errors and also duplicate keys:
/// the JSON grammar allows them, but a second "restitution" is a mistake
/// that nlohmann's last-one-wins would silently hide.
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

/// A finite number.
double read_number(const Json& object, const std::string& key);
std::string read_string(const Json& object, const std::string& key);
/// A non-negative integer up to 2⁶⁴−1. Integral floats (1e6) are accepted.
std::uint64_t read_unsigned(const Json& object, const std::string& key);
/// An integer in [minimum, 2⁶³−1]; `minimum` must be ≥ 0.
std::int64_t read_integer(const Json& object, const std::string& key, std::int64_t minimum);
/// A finite number ≥ 0.
double read_at_least_zero(const Json& object, const std::string& key);
/// A finite number > 0.
double read_positive(const Json& object, const std::string& key);
/// true or false.
bool read_bool(const Json& object, const std::string& key);
/// An array of finite numbers, of length `size` when given.
Eigen::VectorXd read_vector(const Json& object, const std::string& key,
                            const std::optional<Extent>& size = std::nullopt);
/// An array of rows, each an array of finite numbers. Without `cols`, every
/// row must match row 0 (and an empty matrix has no columns).
Eigen::MatrixXd read_matrix(const Json& object, const std::string& key,
                            const std::optional<Extent>& rows, const std::optional<Extent>& cols);

}  // namespace simpact::cli
