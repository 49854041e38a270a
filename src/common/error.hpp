// SPDX-License-Identifier: Apache-2.0
// Typed exceptions used everywhere inside sfft; capi/ turns them into sfft_status codes.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "sfft/sfft.h"

namespace sfft {

class Error : public std::runtime_error {
 public:
  Error(sfft_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  sfft_status status() const noexcept { return status_; }

 private:
  sfft_status status_;
};

// Concatenates any streamable values into one message.
template <class... Parts>
std::string cat(Parts &&...parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

template <class... Parts>
[[noreturn]] void fail(sfft_status status, Parts &&...parts) {
  throw Error(status, cat(std::forward<Parts>(parts)...));
}

// Argument validation: throws SFFT_ERROR_INVALID_ARGUMENT with the message when cond is false.
template <class... Parts>
void require(bool cond, Parts &&...parts) {
  if (!cond) fail(SFFT_ERROR_INVALID_ARGUMENT, std::forward<Parts>(parts)...);
}

}  // namespace sfft
