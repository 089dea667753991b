// SPDX-License-Identifier: GPL-2.0-or-later
//
// Flame graphs. In: stacks and how many times each was seen (a hist stack
// key's rows, trace --stack's events), each frame the function, the file or
// module it is in, and which side it runs on; a title saying what was
// counted and a subtitle saying over how long. Out: folded stacks (one line
// per stack, "root;...;leaf COUNT", what flamegraph.pl, inferno, speedscope
// and Pyroscope read) or an interactive SVG drawn here (width by count,
// colour by side and file, hover text, click to zoom, search). The answer
// is plain data; each output is one function of it.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kprobectl {

struct StackFrame {
  // kLabel: not code but what the stacks are split by (an event, a comm,
  // a key's value), drawn below the code's frames.
  enum Side { kUser, kKernel, kLabel };
  std::string name;    // the function, without an offset; an address when no symbol holds it
  std::string object;  // user space: the file's path; kernel: the module, empty for the kernel itself
  Side side = kUser;
  auto operator<=>(const StackFrame&) const = default;
};

struct CountedStack {
  std::vector<StackFrame> frames;  // the root (outermost) first
  uint64_t count = 0;
};

struct StackProfile {
  std::string title;     // what was counted: "probe_demo:compute by user-space stack"
  std::string subtitle;  // over how long, and how: "37 events in 2.50 s, counted by kprobectl"
  std::vector<CountedStack> stacks;
};

// A frame as trace --stack and hist print it: kernel frames
// "FUNC+0xOFF[/0xSIZE] [MODULE]" or an address, user frames
// "FUNC+0xOFF (PATH)", "0xADDR (PATH)", "0xADDR ([unknown])".
StackFrame ParseFrame(std::string_view printed, StackFrame::Side side);

// Folded stacks: identical stacks merged, one line each in the order of
// their frames, "frame;frame;frame COUNT\n". A name's ';' is written %3B,
// its '%' %25 and a line break %0A, so that every tool splits frames where
// kprobectl did. Kernel frames end in "_[k]" (the annotation perf's
// stackcollapse and flamegraph.pl's palettes use) when the profile has user
// frames too.
std::string FoldedStacks(const StackProfile& profile);

struct FlameGraphOptions {
  unsigned width = 1200;   // of the picture, in pixels
  double min_width = 1.0;  // frames narrower than this (px, unzoomed) are not drawn, and counted
};
// A standalone SVG document (its script included): the root at the bottom,
// each frame as wide as its count's share, siblings in name order.
std::string FlameGraphSvg(const StackProfile& profile, const FlameGraphOptions& options = {});

}  // namespace kprobectl
