// SPDX-License-Identifier: GPL-2.0-or-later
#include "flame_script.h"

namespace kprobectl::render {

const char kFlameScript[] = R"JS("use strict";
var frames, details, matched, unzoomButton, searchButton, pad, charWidth, full, searching = null, zoomed = null;
function init(evt) {
  frames = document.getElementById("frames");
  details = document.getElementById("details").firstChild;
  matched = document.getElementById("matched").firstChild;
  unzoomButton = document.getElementById("unzoom");
  searchButton = document.getElementById("search");
  pad = parseFloat(frames.getAttribute("data-pad"));
  charWidth = parseFloat(frames.getAttribute("data-char"));
  full = parseFloat(document.documentElement.getAttribute("width")) - 2 * pad;
  for (const g of frames.children) {
    const r = g.querySelector("rect");
    g.x0 = parseFloat(r.getAttribute("x"));
    g.w0 = parseFloat(r.getAttribute("width"));
    g.y0 = parseFloat(r.getAttribute("y"));
    g.fill0 = r.getAttribute("fill");
    g.addEventListener("mouseover", function () { details.nodeValue = g.querySelector("title").textContent; });
    g.addEventListener("mouseout", function () { details.nodeValue = " "; });
    g.addEventListener("click", function () { zoom(g); });
  }
  unzoomButton.addEventListener("click", unzoom);
  searchButton.addEventListener("click", function () { if (searching) resetSearch(); else searchPrompt(); });
  window.addEventListener("keydown", function (e) {
    if (((e.ctrlKey || e.metaKey) && e.key === "f") || e.key === "/") {
      e.preventDefault();
      searchPrompt();
    } else if (e.key === "Escape") {
      resetSearch();
      unzoom();
    }
  });
}
function place(g, x, w) {
  const r = g.querySelector("rect"), t = g.querySelector("text");
  r.setAttribute("x", x.toFixed(2));
  r.setAttribute("width", w.toFixed(2));
  t.setAttribute("x", (x + 3).toFixed(2));
  const name = g.getAttribute("data-n"), fits = Math.floor((w - 6) / charWidth);
  t.textContent = fits < 3 ? "" : name.length <= fits ? name : name.substring(0, fits - 2) + "..";
}
function zoom(target) {
  const eps = 0.02, x = target.x0, w = target.w0, y = target.y0, scale = full / w;
  zoomed = target;
  unzoomButton.classList.remove("hide");
  for (const g of frames.children) {
    g.style.opacity = "";
    g.classList.remove("hide");
    if (g.y0 <= y && g.x0 >= x - eps && g.x0 + g.w0 <= x + w + eps) {
      place(g, pad + (g.x0 - x) * scale, g.w0 * scale);
    } else if (g.y0 > y && g.x0 <= x + eps && g.x0 + g.w0 >= x + w - eps) {
      g.style.opacity = "0.6";
      place(g, pad, full);
    } else {
      g.classList.add("hide");
    }
  }
  if (searching) search(searching);
}
function unzoom() {
  zoomed = null;
  unzoomButton.classList.add("hide");
  for (const g of frames.children) {
    g.style.opacity = "";
    g.classList.remove("hide");
    place(g, g.x0, g.w0);
  }
  if (searching) search(searching);
}
function searchPrompt() {
  const term = prompt("Search for (a regular expression):", searching ? searching.source : "");
  if (!term) return;
  try {
    search(new RegExp(term));
  } catch (e) {
    matched.nodeValue = "Not a regular expression: " + term;
  }
}
function search(re) {
  searching = re;
  const spans = [];
  for (const g of frames.children) {
    const r = g.querySelector("rect");
    if (!g.classList.contains("hide") && re.test(g.getAttribute("data-n"))) {
      r.setAttribute("fill", "#e040e0");
      spans.push([parseFloat(r.getAttribute("x")), parseFloat(r.getAttribute("width"))]);
    } else {
      r.setAttribute("fill", g.fill0);
    }
  }
  // A match's callees are within it: each part of the width counted once.
  spans.sort(function (a, b) { return a[0] - b[0]; });
  let covered = 0, end = -Infinity;
  for (const [x, w] of spans) {
    const from = Math.max(x, end);
    if (x + w > from) covered += x + w - from;
    end = Math.max(end, x + w);
  }
  matched.nodeValue = "Matched: " + (100 * covered / full).toFixed(1) + "% of " + (zoomed ? "the zoomed frame" : "all");
  searchButton.textContent = "Reset Search";
}
function resetSearch() {
  if (!searching) return;
  searching = null;
  for (const g of frames.children) g.querySelector("rect").setAttribute("fill", g.fill0);
  matched.nodeValue = " ";
  searchButton.textContent = "Search";
}
)JS";

}  // namespace kprobectl::render
