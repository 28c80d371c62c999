#include <simpact_cli/json_input.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <istream>
#include <limits>
#include <set>
#include <string_view>
#include <utility>

namespace simpact::cli {
namespace {

// Long enough to recognize a value, short enough to keep the message on one
// readable line when someone passes a whole matrix where a number belongs.
constexpr std::size_t kExcerptLength = 40;

// nlohmann prefixes its messages with "[json.exception.parse_error.101] ",
// which means nothing to a user.
std::string without_exception_id(const std::string& message) {
  const std::size_t end = message.find("] ");
  return message.rfind("[json.exception.", 0) == 0 && end != std::string::npos
             ? message.substr(end + 2)
             : message;
}

std::optional<double> finite_number(const Json& value) {
  if (!value.is_number()) return std::nullopt;
  const double number = value.get<double>();
  if (!std::isfinite(number) || std::abs(number) > kMaxMagnitude) return std::nullopt;
  return number;
}

// nlohmann parses 1e400 as inf, and a value built in code may hold NaN; say
// which of the checks failed.
[[noreturn]] void reject_number(const std::string& where, const Json& value) {
  if (!value.is_number()) {
    throw InputError(where + " is not a number (got " + excerpt(value) + ")");
  }
  const double number = value.get<double>();
  if (std::isnan(number)) throw InputError(where + " is not finite (got " + excerpt(value) + ")");
  throw InputError(where + " is too large: numbers must lie within +-" + excerpt(kMaxMagnitude) +
                   " (got " + excerpt(value) + ")");
}

void check_length(const std::string& subject, const char* unit, Eigen::Index actual,
                  const Extent& expected) {
  if (actual != expected.size) {
    throw InputError(subject + " has " + std::to_string(actual) + " " + unit + ", expected " +
                     std::to_string(expected.size) + " (" + expected.origin + ")");
  }
}

Eigen::Index length(const Json& array) { return static_cast<Eigen::Index>(array.size()); }

double number_at(const Json& array, Eigen::Index index, const std::string& array_name) {
  const Json& entry = array[static_cast<std::size_t>(index)];
  const std::optional<double> number = finite_number(entry);
  if (!number) reject_number(array_name + " entry " + std::to_string(index), entry);
  return *number;
}

std::optional<std::uint64_t> as_unsigned(const Json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer()) {  // signed: only "-0" is acceptable
    const auto number = value.get<std::int64_t>();
    if (number >= 0) return static_cast<std::uint64_t>(number);
    return std::nullopt;
  }
  if (value.is_number_float()) {
    const double number = value.get<double>();
    constexpr double kTwoTo64 = 18446744073709551616.0;
    if (number >= 0.0 && number < kTwoTo64 && std::floor(number) == number) {
      return static_cast<std::uint64_t>(number);
    }
  }
  return std::nullopt;
}

}  // namespace

std::string join(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

Json parse_json(std::istream& in) {
  std::vector<std::set<std::string>> keys_of_open_objects;
  const Json::parser_callback_t reject_duplicate_keys =
      [&keys_of_open_objects](int depth, Json::parse_event_t event, Json& parsed) {
        // `depth` counts the containers already open around this one, so
        // depth kMaxNestingDepth would open level kMaxNestingDepth + 1.
        const bool opens = event == Json::parse_event_t::object_start ||
                           event == Json::parse_event_t::array_start;
        if (opens && depth >= kMaxNestingDepth) {
          throw InputError("the input nests arrays and objects deeper than " +
                           std::to_string(kMaxNestingDepth) + " levels (kMaxNestingDepth)");
        }
        switch (event) {
          case Json::parse_event_t::object_start:
            keys_of_open_objects.emplace_back();
            break;
          case Json::parse_event_t::object_end:
            keys_of_open_objects.pop_back();
            break;
          case Json::parse_event_t::key: {
            const auto& key = parsed.get_ref<const std::string&>();
            if (!keys_of_open_objects.back().insert(key).second) {
              throw InputError("duplicate key " + quote(key));
            }
            break;
          }
          default:
            break;
        }
        return true;
      };
  // Read with a bound first: a stream of unbounded length must not be
  // buffered whole before it is rejected.
  std::string text;
  std::array<char, 1 << 16> buffer{};
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes) {
      throw InputError("the input is longer than " + std::to_string(kMaxInputBytes) +
                       " bytes (kMaxInputBytes)");
    }
  }
  if (in.bad()) throw InputError("the input could not be read");
  try {
    return Json::parse(text, reject_duplicate_keys);
  } catch (const Json::exception& e) {
    throw InputError("invalid JSON: " + without_exception_id(e.what()));
  }
}

std::string quote(const std::string& text) {
  // replace: a key is already valid UTF-8 once parsed, but quote() is also
  // used on file names, which need not be.
  return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string excerpt(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kExcerptLength) text = text.substr(0, kExcerptLength - 3) + "...";
  return text;
}

InputError not_one_of(const std::string& key, const std::vector<std::string>& names,
                      const std::string& got) {
  return InputError(quote(key) + " must be one of: " + join(names) + " (got " + quote(got) + ")");
}

void require_object(const Json& value, const std::string& what) {
  if (!value.is_object()) {
    throw InputError(what + " must be a JSON object (got " + excerpt(value) + ")");
  }
}

void check_keys(const Json& object, const std::vector<std::string>& allowed) {
  for (const auto& item : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end()) {
      std::vector<std::string> sorted = allowed;
      std::sort(sorted.begin(), sorted.end());
      throw InputError("unknown key " + quote(item.key()) + " (allowed: " + join(sorted) + ")");
    }
  }
}

const Json& require(const Json& object, const std::string& key) {
  const auto found = object.find(key);
  if (found == object.end()) throw InputError("missing required key " + quote(key));
  return *found;
}

double read_number(const Json& object, const std::string& key) {
  const Json& value = require(object, key);
  const std::optional<double> number = finite_number(value);
  if (!number) reject_number(quote(key), value);
  return *number;
}

double read_at_least_zero(const Json& object, const std::string& key) {
  const double number = read_number(object, key);
  if (number < 0.0) throw InputError(quote(key) + " must be >= 0 (got " + excerpt(number) + ")");
  return number;
}

double read_positive(const Json& object, const std::string& key) {
  const double number = read_number(object, key);
  if (!(number > 0.0)) throw InputError(quote(key) + " must be > 0 (got " + excerpt(number) + ")");
  if (number < kMinPositive) {
    throw InputError(quote(key) + " is too small: a positive quantity must be >= " +
                     excerpt(kMinPositive) + " (got " + excerpt(number) + ")");
  }
  return number;
}

bool read_bool(const Json& object, const std::string& key) {
  const Json& value = require(object, key);
  if (!value.is_boolean())
    throw InputError(quote(key) + " must be true or false (got " + excerpt(value) + ")");
  return value.get<bool>();
}

std::string read_string(const Json& object, const std::string& key) {
  const Json& value = require(object, key);
  if (!value.is_string()) {
    throw InputError(quote(key) + " must be a string (got " + excerpt(value) + ")");
  }
  return value.get<std::string>();
}

std::uint64_t read_unsigned(const Json& object, const std::string& key) {
  const Json& value = require(object, key);
  const std::optional<std::uint64_t> number = as_unsigned(value);
  if (!number) {
    throw InputError(quote(key) + " must be a non-negative integer (got " + excerpt(value) + ")");
  }
  return *number;
}

std::int64_t read_integer(const Json& object, const std::string& key, std::int64_t minimum) {
  const Json& value = require(object, key);
  const std::optional<std::uint64_t> number = as_unsigned(value);
  constexpr auto kMaximum = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!number || *number > kMaximum || static_cast<std::int64_t>(*number) < minimum) {
    throw InputError(quote(key) + " must be an integer >= " + std::to_string(minimum) + " (got " +
                     excerpt(value) + ")");
  }
  return static_cast<std::int64_t>(*number);
}

Eigen::VectorXd read_vector(const Json& object, const std::string& key,
                            const std::optional<Extent>& size) {
  const Json& value = require(object, key);
  if (!value.is_array()) {
    throw InputError(quote(key) + " must be an array of numbers (got " + excerpt(value) + ")");
  }
  if (size) check_length(quote(key), "entries", length(value), *size);
  const std::string name = quote(key);
  Eigen::VectorXd vector(length(value));
  for (Eigen::Index i = 0; i < vector.size(); ++i) vector[i] = number_at(value, i, name);
  return vector;
}

Eigen::MatrixXd read_matrix(const Json& object, const std::string& key,
                            const std::optional<Extent>& rows, const std::optional<Extent>& cols) {
  const Json& value = require(object, key);
  if (!value.is_array()) {
    throw InputError(quote(key) + " must be an array of rows (got " + excerpt(value) + ")");
  }
  if (rows) check_length(quote(key), "rows", length(value), *rows);
  std::optional<Extent> row_length = cols;
  Eigen::MatrixXd matrix(length(value), cols ? cols->size : 0);
  for (Eigen::Index i = 0; i < matrix.rows(); ++i) {
    const Json& row = value[static_cast<std::size_t>(i)];
    const std::string row_name = quote(key) + " row " + std::to_string(i);
    if (!row.is_array()) {
      throw InputError(row_name + " must be an array of numbers (got " + excerpt(row) + ")");
    }
    if (!row_length) {
      row_length = Extent{length(row), "as row 0"};
      matrix.resize(matrix.rows(), row_length->size);
    }
    check_length(row_name, "entries", length(row), *row_length);
    for (Eigen::Index j = 0; j < matrix.cols(); ++j) matrix(i, j) = number_at(row, j, row_name);
  }
  return matrix;
}

void require_finite_output(const Json& output) {
  // Iterative, with the path of each pending value; outputs nest a few
  // levels, but nothing here should depend on that.
  std::vector<std::pair<const Json*, std::string>> pending = {{&output, ""}};
  while (!pending.empty()) {
    const auto [value, path] = pending.back();
    pending.pop_back();
    if (value->is_number_float() && !std::isfinite(value->get<double>())) {
      throw InputError("the result is not finite at " + quote(path.empty() ? "/" : path) +
                       ": the input is too large or too badly scaled for double precision");
    }
    if (value->is_array()) {
      for (std::size_t i = value->size(); i-- > 0;) {
        pending.emplace_back(&(*value)[i], path + "/" + std::to_string(i));
      }
    } else if (value->is_object()) {
      std::vector<std::pair<const Json*, std::string>> members;
      for (const auto& item : value->items()) {
        members.emplace_back(&item.value(), path + "/" + item.key());
      }
      pending.insert(pending.end(), members.rbegin(), members.rend());
    }
  }
}

}  // namespace simpact::cli
