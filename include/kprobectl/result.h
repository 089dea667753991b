// SPDX-License-Identifier: GPL-2.0-or-later
//
// Errors as values. Every fallible function returns Result<T>; the CLI prints
// the Error once ("kprobectl: error: <message>" then "  hint: <hint>").
// Libraries never print and never exit.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace kprobectl {

struct Error {
  std::string message;  // what went wrong, naming the input; may span lines
  std::string hint;     // what to do about it; empty when we have nothing useful
};

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> Fail(std::string message, std::string hint = {}) {
  return std::unexpected<Error>(Error{std::move(message), std::move(hint)});
}

}  // namespace kprobectl

// Propagates the error of a Result-returning expression, or yields its value.
// A statement expression (GNU C++): the codebase is g++-only by design (Debian 12).
#define KP_TRY(expr)                                                     \
  __extension__({                                                        \
    auto&& kp_try_result_ = (expr);                                      \
    if (!kp_try_result_) return std::unexpected(kp_try_result_.error()); \
    std::move(*kp_try_result_);                                          \
  })

// The same for Result<void>.
#define KP_TRY_VOID(expr)                                                \
  do {                                                                   \
    auto&& kp_try_result_ = (expr);                                      \
    if (!kp_try_result_) return std::unexpected(kp_try_result_.error()); \
  } while (0)
