// SPDX-License-Identifier: GPL-2.0-or-later
//
// The flame graph's script, run by the browser that opens the SVG: hover
// text in the details line, click to zoom (the frame full width, what it
// called scaled with it, its callers full width and faded, the rest
// hidden), Reset Zoom, and search by regular expression (Search, Ctrl-F or
// '/'; Escape resets), which colours the matches and says what share of
// the width they cover. It reads the layout from the drawn rectangles:
// nothing is drawn by the script that the SVG does not already show.
#pragma once

namespace kprobectl::render {

extern const char kFlameScript[];

}  // namespace kprobectl::render
