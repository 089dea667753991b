// SPDX-License-Identifier: GPL-2.0-or-later
//
// A small strict JSON reader for tests: validity (RFC 8259, UTF-8 checked)
// and the value of a top-level or nested key, as its JSON text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kprobectl::test {

bool JsonValid(std::string_view text);
// The raw JSON text of the value at a path of object keys ("args.a").
std::optional<std::string> JsonField(std::string_view text, std::string_view path);

}  // namespace kprobectl::test
