// SPDX-License-Identifier: GPL-2.0-or-later
#include "svg_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kprobectl/strings.h"

namespace kprobectl::render {

namespace {

// Length of the valid UTF-8 sequence at s[i] (overlong forms and surrogates
// refused, as an XML parser refuses them), or 0.
size_t Utf8At(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  auto c1 = static_cast<unsigned char>(s[i + 1]);
  if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
    return 0;
  return n;
}

}  // namespace

void AppendXml(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      if (size_t n = Utf8At(text, i)) {
        out.append(text.substr(i, n));
        i += n;
        continue;
      }
    }
    ++i;
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&#39;";
        continue;
      default:
        break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
}

std::string Xml(std::string_view text) {
  std::string out;
  AppendXml(out, text);
  return out;
}

std::string Number(double value, int decimals) { return DecimalText(value, decimals); }

std::string HslColour(double hue, double saturation, double lightness) {
  hue = std::fmod(std::fmod(hue, 360.0) + 360.0, 360.0);
  double chroma = (1 - std::fabs(2 * lightness - 1)) * saturation;
  double x = chroma * (1 - std::fabs(std::fmod(hue / 60.0, 2.0) - 1));
  double m = lightness - chroma / 2;
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(hue / 60.0)) {
    case 0:
      r = chroma, g = x;
      break;
    case 1:
      r = x, g = chroma;
      break;
    case 2:
      g = chroma, b = x;
      break;
    case 3:
      g = x, b = chroma;
      break;
    case 4:
      r = x, b = chroma;
      break;
    default:
      r = chroma, b = x;
      break;
  }
  auto byte = [&](double v) { return std::clamp(static_cast<int>(std::lround((v + m) * 255)), 0, 255); };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", byte(r), byte(g), byte(b));
  return buf;
}

uint32_t NameHash(std::string_view name) {
  uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

std::string SvgOpening(unsigned width, unsigned height, std::string_view extra_attributes) {
  std::string w = std::to_string(width), h = std::to_string(height);
  std::string out = "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"" + w + "\" height=\"" +
                    h + "\" viewBox=\"0 0 " + w + " " + h + "\" xmlns=\"http://www.w3.org/2000/svg\"";
  if (!extra_attributes.empty()) out += " " + std::string(extra_attributes);
  out += ">\n";
  return out;
}

}  // namespace kprobectl::render
