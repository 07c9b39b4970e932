// Small text helpers for diagnostics: UTF-8 checks and safe quoting of user
// values (no control bytes reach the terminal).
#ifndef PROVISIONER_ENGINE_CONFIG_TEXT_H_
#define PROVISIONER_ENGINE_CONFIG_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/base/strings.h"

namespace provisioner::config {

// The quoting helpers live in engine/base/strings.h (host-side messages use
// them too); here under their old names.
using provisioner::EditDistance;  // engine/base/strings.h
using provisioner::IsValidUtf8;
using provisioner::Printable;
using provisioner::Quote;

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_TEXT_H_
