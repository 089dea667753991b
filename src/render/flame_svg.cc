// SPDX-License-Identifier: GPL-2.0-or-later
//
// The flame graph as SVG, laid out here and made interactive by the script
// of flame_script.cc. The stacks are merged into a tree (siblings in name
// order, as flamegraph.pl orders them), each node as wide as its count's
// share of the whole, the root ("all") at the bottom. Colour says where a
// frame runs: the kernel in warm colours (the kernel itself orange, each
// module its own), user space in cool ones (each file its own hue), labels
// (events, key values) grey; a legend names them. Within a file the
// lightness varies by the function's name, and two neighbours never share
// one, so that adjacent frames stay apart. A frame narrower than
// `min_width` pixels is not drawn (nor its children): how many were left
// out, and their samples, is said under the title.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "flame_script.h"
#include "kprobectl/flame_graph.h"
#include "svg_text.h"

namespace kprobectl {

namespace {

using render::AppendXml;
using render::Number;
using render::Xml;

constexpr double kPad = 10;          // left and right margins
constexpr double kFrameHeight = 16;  // a frame's row, its 1 px gap included
constexpr double kTop = 84;          // title, subtitle, notes and legend above the frames
constexpr double kBottom = 34;       // the details line under them
constexpr double kFontSize = 12;
constexpr double kCharWidth = 0.59 * kFontSize;  // Verdana's average, as flamegraph.pl assumes

struct Node {
  StackFrame frame;
  uint64_t total = 0;
  std::map<StackFrame, std::unique_ptr<Node>> children;
};

Node BuildTree(const StackProfile& profile) {
  Node root;
  root.frame = {"all", "", StackFrame::kLabel};
  for (const CountedStack& s : profile.stacks) {
    root.total += s.count;
    Node* at = &root;
    for (const StackFrame& f : s.frames) {
      auto& child = at->children[f];
      if (!child) child = std::make_unique<Node>(Node{f, 0, {}});
      child->total += s.count;
      at = child.get();
    }
  }
  return root;
}

// Where a frame runs, for its colour and the legend: the file or module.
struct Place {
  StackFrame::Side side;
  std::string object;
  auto operator<=>(const Place&) const = default;
};

std::string PlaceName(const Place& p) {
  if (p.side == StackFrame::kKernel) return p.object.empty() ? "kernel" : "[" + p.object + "]";
  if (p.side == StackFrame::kLabel) return "label";
  if (p.object.empty()) return "unknown file";
  size_t slash = p.object.rfind('/');
  return slash == std::string::npos ? p.object : p.object.substr(slash + 1);
}

// Each place's hue, the busiest first: the kernel's warm, user space's cool.
class Palette {
 public:
  explicit Palette(const Node& root) {
    std::map<Place, uint64_t> weight;
    Weigh(root, weight);
    std::vector<std::pair<uint64_t, Place>> order;
    for (const auto& [place, w] : weight) order.emplace_back(w, place);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    static constexpr double kKernelHues[] = {28, 45, 12, 36, 52, 20};
    static constexpr double kUserHues[] = {205, 140, 270, 175, 320, 95, 240, 160, 295, 190};
    size_t kernel = 0, user = 0;
    for (const auto& [w, place] : order) {
      if (place.side == StackFrame::kLabel || (place.side == StackFrame::kUser && place.object.empty())) {
        hues_[place] = -1;  // grey
      } else if (place.side == StackFrame::kKernel) {
        hues_[place] = kKernelHues[kernel++ % std::size(kKernelHues)];
      } else {
        hues_[place] = kUserHues[user++ % std::size(kUserHues)];
      }
      legend_.push_back(place);
    }
  }
  // A frame's colour; `avoid` is its left neighbour's, which it must not be.
  std::string Colour(const StackFrame& f, const std::string& avoid) const {
    auto found = hues_.find(Place{f.side, f.object});
    double hue = found == hues_.end() ? -1 : found->second;  // the root, "all"
    uint32_t h = render::NameHash(f.name);
    for (int step = 0;; ++step) {
      double light = 0.55 + 0.025 * ((h + static_cast<uint32_t>(step) * 3) % 7);
      std::string c = hue < 0 ? render::HslColour(0, 0, light + 0.1) : render::HslColour(hue, 0.75, light);
      if (c != avoid || step > 7) return c;
    }
  }
  std::string Swatch(const Place& p) const {
    double hue = hues_.at(p);
    return hue < 0 ? render::HslColour(0, 0, 0.7) : render::HslColour(hue, 0.75, 0.6);
  }
  const std::vector<Place>& legend() const { return legend_; }

 private:
  static void Weigh(const Node& n, std::map<Place, uint64_t>& weight) {
    for (const auto& [f, child] : n.children) {
      weight[Place{f.side, f.object}] += child->total;
      Weigh(*child, weight);
    }
  }
  std::map<Place, double> hues_;
  std::vector<Place> legend_;
};

// How deep the drawn frames go: those `scale` makes at least `min_width`
// wide (the picture is as tall as what it shows).
size_t DrawnDepth(const Node& n, double scale, double min_width) {
  size_t depth = 0;
  for (const auto& [f, child] : n.children)
    if (static_cast<double>(child->total) * scale >= min_width)
      depth = std::max(depth, 1 + DrawnDepth(*child, scale, min_width));
  return depth;
}

std::string Fitted(const std::string& name, double width) {
  auto fits = static_cast<size_t>((width - 6) / kCharWidth);
  if (fits < 3) return {};
  if (name.size() <= fits) return name;
  return name.substr(0, fits - 2) + "..";
}

std::string HoverText(const Node& n, uint64_t total) {
  std::string where;
  if (n.frame.side == StackFrame::kKernel)
    where = n.frame.object.empty() ? " (kernel)" : " (kernel module " + n.frame.object + ")";
  else if (n.frame.side == StackFrame::kUser)
    where = n.frame.object.empty() ? " (user space)" : " (" + n.frame.object + ")";
  return n.frame.name + where + ": " + std::to_string(n.total) + (n.total == 1 ? " sample, " : " samples, ") +
         Number(100.0 * static_cast<double>(n.total) / static_cast<double>(total), 2) + "%";
}

class Layout {
 public:
  Layout(const Palette& palette, uint64_t total, double scale, double min_width, double bottom)
      : palette_(palette), total_(total), scale_(scale), min_width_(min_width), bottom_(bottom) {}

  void Draw(const Node& n, uint64_t x, size_t depth, const std::string& left) {
    double width = static_cast<double>(n.total) * scale_;
    if (width < min_width_) {
      Omit(n);
      return;
    }
    double px = kPad + static_cast<double>(x) * scale_;
    double y = bottom_ - static_cast<double>(depth + 1) * kFrameHeight;
    std::string fill = palette_.Colour(n.frame, left);
    out_ += "<g data-n=\"";
    AppendXml(out_, n.frame.name);
    out_ += "\"><title>";
    AppendXml(out_, HoverText(n, total_));
    out_ += "</title><rect x=\"" + Number(px) + "\" y=\"" + Number(y) + "\" width=\"" + Number(width) + "\" height=\"" +
            Number(kFrameHeight - 1) + "\" fill=\"" + fill + "\" rx=\"2\" ry=\"2\"/><text x=\"" + Number(px + 3) +
            "\" y=\"" + Number(y + 11.5) + "\">";
    AppendXml(out_, Fitted(n.frame.name, width));
    out_ += "</text></g>\n";
    uint64_t at = x;
    std::string previous;
    for (const auto& [f, child] : n.children) {
      Draw(*child, at, depth + 1, previous);
      previous = last_fill_;
      at += child->total;
    }
    last_fill_ = fill;
  }
  std::string& out() { return out_; }
  uint64_t omitted_frames() const { return omitted_frames_; }
  uint64_t omitted_samples() const { return omitted_samples_; }

 private:
  void Omit(const Node& n) {
    omitted_samples_ += n.total;
    Count(n);
    last_fill_.clear();
  }
  void Count(const Node& n) {
    ++omitted_frames_;
    for (const auto& [f, child] : n.children) Count(*child);
  }
  const Palette& palette_;
  uint64_t total_;
  double scale_, min_width_, bottom_;
  std::string out_, last_fill_;
  uint64_t omitted_frames_ = 0, omitted_samples_ = 0;
};

std::string Legend(const Palette& palette, double width) {
  std::string out;
  double x = kPad;
  size_t shown = 0;
  for (const Place& p : palette.legend()) {
    if (p.side == StackFrame::kLabel) continue;
    std::string name = (p.side == StackFrame::kKernel ? "kernel: " : "user: ") + PlaceName(p);
    double needed = 16 + static_cast<double>(name.size()) * kCharWidth * 0.92 + 14;
    if (x + needed > width - kPad) {
      out += "<text x=\"" + Number(x) + "\" y=\"70\" class=\"note\">and " +
             std::to_string(palette.legend().size() - shown) + " more</text>\n";
      break;
    }
    out += "<rect x=\"" + Number(x) + "\" y=\"61\" width=\"11\" height=\"11\" fill=\"" + palette.Swatch(p) +
           "\"/><text x=\"" + Number(x + 15) + "\" y=\"70.5\" class=\"note\">" + Xml(name) + "</text>\n";
    x += needed;
    ++shown;
  }
  return out;
}

}  // namespace

std::string FlameGraphSvg(const StackProfile& profile, const FlameGraphOptions& options) {
  Node root = BuildTree(profile);
  Palette palette(root);
  const double width = options.width;
  uint64_t total = std::max<uint64_t>(root.total, 1);
  const double scale = (width - 2 * kPad) / static_cast<double>(total);
  const double bottom = kTop + static_cast<double>(DrawnDepth(root, scale, options.min_width) + 1) * kFrameHeight;
  const auto height = static_cast<unsigned>(bottom + kBottom);
  Layout layout(palette, total, scale, options.min_width, bottom);
  if (root.total) layout.Draw(root, 0, 0, "");

  std::string out = render::SvgOpening(options.width, height, "onload=\"init(evt)\"");
  out +=
      "<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}#title{font-size:17px;text-anchor:middle}"
      "#subtitle{text-anchor:middle;fill:#555}.note{font-size:11px;fill:#555}.button{cursor:pointer;fill:#333}"
      ".hide{display:none}#frames g{cursor:pointer}#frames g:hover rect{stroke:#000;stroke-width:0.5}"
      "#frames text{pointer-events:none}</style>\n";
  out += "<script><![CDATA[\n";
  out += render::kFlameScript;
  out += "]]></script>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f8f8f4\"/>\n";
  out += "<text id=\"title\" x=\"" + Number(width / 2) + "\" y=\"24\">" + Xml(profile.title) + "</text>\n";
  out += "<text id=\"subtitle\" x=\"" + Number(width / 2) + "\" y=\"42\">" + Xml(profile.subtitle) + "</text>\n";
  out += "<text id=\"unzoom\" class=\"button hide\" x=\"" + Number(kPad) + "\" y=\"24\">Reset Zoom</text>\n";
  out += "<text id=\"search\" class=\"button\" x=\"" + Number(width - kPad) +
         "\" y=\"24\" style=\"text-anchor:end\">Search</text>\n";
  std::string note;
  if (layout.omitted_frames())
    note = std::to_string(layout.omitted_frames()) + " frames narrower than " + Number(options.min_width) +
           " px not drawn (the stacks of " + std::to_string(layout.omitted_samples()) + " of " +
           std::to_string(root.total) + " samples cut short there)";
  out += "<text id=\"omitted\" x=\"" + Number(width / 2) + "\" y=\"56\" class=\"note\" style=\"text-anchor:middle\">" +
         Xml(note) + "</text>\n";
  out += Legend(palette, width);
  out += "<g id=\"frames\" data-pad=\"" + Number(kPad) + "\" data-char=\"" + Number(kCharWidth) + "\">\n";
  out += layout.out();
  out += "</g>\n";
  out += "<text id=\"details\" x=\"" + Number(kPad) + "\" y=\"" + Number(bottom + 22) + "\"> </text>\n";
  out += "<text id=\"matched\" x=\"" + Number(width - kPad) + "\" y=\"" + Number(bottom + 22) +
         "\" style=\"text-anchor:end\"> </text>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace kprobectl
