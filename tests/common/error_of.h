// The message of the exception of type E that a call throws, for tests of one-line errors.
#pragma once

#include <string>
#include <utility>

namespace vkc::testing {

/// What `fn()` throws as E (its what()), or `none` when it returns.
template <typename E, typename Fn>
std::string error_of(Fn&& fn, std::string none = "no error") {
  try {
    std::forward<Fn>(fn)();
  } catch (const E& e) {
    return e.what();
  }
  return none;
}

}  // namespace vkc::testing
