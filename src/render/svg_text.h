// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the SVG writers share: text made safe for XML (names come from
// binaries and processes, and need not be UTF-8), numbers written the same
// everywhere whatever the locale, colours as #rrggbb (what a test reading
// the rendered pixels compares with), and the page's opening.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kprobectl::render {

// &, <, >, " and ' escaped; valid UTF-8 kept; other bytes and control
// characters (which XML 1.0 forbids) written as the text \xNN.
void AppendXml(std::string& out, std::string_view text);
std::string Xml(std::string_view text);

// `value` with `decimals` digits after the point, trailing zeros (and a
// bare point) dropped: "12.5", "3".
std::string Number(double value, int decimals = 2);

// A colour from hue (degrees), saturation and lightness (0..1), as #rrggbb.
std::string HslColour(double hue, double saturation, double lightness);

// A stable small hash of a name (FNV-1a), for colour variations that do not
// change between runs.
uint32_t NameHash(std::string_view name);

// The <svg> element's opening for a picture of this size, with its fonts.
std::string SvgOpening(unsigned width, unsigned height, std::string_view extra_attributes = {});

}  // namespace kprobectl::render
