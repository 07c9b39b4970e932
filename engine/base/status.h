// Status / StatusOr: results without exceptions across module boundaries.
// Codes drive behaviour (retry on kUnavailable, exit 1 on the rest); messages
// are chained with " <- " as context is added at each hop:
//   apply 0000:af:00.0 numVfs <- write /sys/.../sriov_numvfs <- EBUSY
#ifndef PROVISIONER_ENGINE_BASE_STATUS_H_
#define PROVISIONER_ENGINE_BASE_STATUS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace provisioner {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // user input is wrong
  kFailedPrecondition,  // host state blocks the operation
  kUnavailable,         // transient: retrying may help
  kNotFound,
  kPermissionDenied,
  kAlreadyExists,
  kDeadlineExceeded,
  kUnimplemented,
  kInternal,
};

// [[nodiscard]]: a Status or StatusOr that is dropped is a failure nobody
// handles. Handle or propagate it (RETURN_IF_ERROR, ASSIGN_OR_RETURN).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, int err = 0)
      : code_(code), message_(std::move(message)), errno_(err) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The errno behind a host failure, 0 when there is none.
  int err() const { return errno_; }

  // Returns a copy whose message reads "<context> <- <message>".
  Status WithContext(std::string_view context) const;

  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  int errno_ = 0;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status FailedPreconditionError(std::string message);
Status NotFoundError(std::string message);
Status InternalError(std::string message);
Status UnimplementedError(std::string message);
Status DeadlineExceededError(std::string message);
Status UnavailableError(std::string message);

// Maps an errno to a code and a message "<what>: <ERRNAME> (<strerror>)".
Status ErrnoToStatus(int err, std::string_view what);
// "EBUSY", "ENOENT", ... (falls back to the number).
std::string ErrnoName(int err);

// Either a value (ok()) or a failed Status, never an OK one without a value:
// built from an OK Status it holds an internal error instead, so that ok()
// always means value() is there.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const T& value) : value_(value) {}             // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}       // NOLINT
  StatusOr(const Status& status) : status_(status) { CheckNotOk(); }        // NOLINT
  StatusOr(Status&& status) : status_(std::move(status)) { CheckNotOk(); }  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  T& operator*() & { return *value_; }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }
  T value_or(T fallback) const { return ok() ? *value_ : std::move(fallback); }

 private:
  void CheckNotOk() {
    if (status_.ok()) {
      status_ = Status(StatusCode::kInternal, "StatusOr built from an OK Status without a value");
    }
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace provisioner

#define PROV_CONCAT_INNER_(a, b) a##b
#define PROV_CONCAT_(a, b) PROV_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::provisioner::Status _st = (expr);        \
    if (!_st.ok()) return _st;                 \
  } while (0)

// tmp is a name and lhs may be a declaration ("auto x"): neither can be
// parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(PROV_CONCAT_(_status_or_, __LINE__), lhs, expr)

#endif  // PROVISIONER_ENGINE_BASE_STATUS_H_
