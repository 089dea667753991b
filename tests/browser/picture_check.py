#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What a browser made of kprobectl's pictures, measured (the standard
# library only: the PNG decoded here).
#
#   picture_check.py flame SVG PNG WIDE NARROW A B
#     The flame graph SVG as chromium drew it (PNG, its screenshot): the
#     picture is not blank, and frames A and B (two callers of one function)
#     are as wide as WIDE:NARROW of their common parent, within a pixel,
#     measured in the screenshot's pixels of each frame's colour.
#   picture_check.py heat SVG PNG LOW-HIGH:CALLS...
#     The heat map SVG as chromium drew it: not blank; its cells hold CALLS
#     calls in the buckets between LOW and HIGH ns, for each range given,
#     and no others; each cell is drawn in its colour where the SVG puts it.
#   picture_check.py timeline TEF EXPORT NESTED
#     The Trace Event Format file as speedscope read it (EXPORT, speedscope's
#     own file of what it imported): every thread's slices, as many as the
#     file's "X" events of that thread, with their names; NESTED of them
#     inside another.
#   picture_check.py folded FOLDED EXPORT
#     Folded stacks as speedscope read them: the stacks and counts it
#     exports are the file's, and caller_a;work 30, caller_b;work 7 among
#     them.
import json
import re
import struct
import sys
import zlib


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    at, idat, header = 8, b"", None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        fail(f"{path}: a PNG of depth {depth}, colour type {colour}, interlace {interlace}: not read here")
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


def frame(svg, name):
    """x, y, width, fill of the first frame named `name` in the SVG."""
    m = re.search(r'<g data-n="' + re.escape(name) + r'"><title>[^<]*</title><rect x="([\d.]+)" y="([\d.]+)" '
                  r'width="([\d.]+)" height="[\d.]+" fill="#([0-9a-f]{6})"', svg)
    if not m:
        fail(f"no frame {name} in the SVG")
    fill = tuple(int(m.group(4)[i:i + 2], 16) for i in (0, 2, 4))
    return float(m.group(1)), float(m.group(2)), float(m.group(3)), fill


def drawn_width(rows, x, y, width, fill):
    """The pixels of colour `fill` across the frame's row 3.5 px under its
    top (below its rounded corners), from its first to its last: its text
    lies between them; a pixel the edge cuts is another colour."""
    row = rows[int(y) + 3]
    near = lambda p: max(abs(a - b) for a, b in zip(p, fill)) <= 6
    left = int(x) + 1
    if not near(row[left]):
        fail(f"the pixel at ({left}, {int(y) + 3}) is {row[left]}, not the frame's colour {fill}")
    while left > 0 and near(row[left - 1]):
        left -= 1
    right = min(int(x + width) + 2, len(row) - 1)
    while right > left and not near(row[right]):
        right -= 1
    return right - left + 1


def flame(svg_path, png_path, wide, narrow, a, b):
    svg = open(svg_path, encoding="utf-8").read()
    _, _, rows = read_png(png_path)
    not_blank(rows)
    fa, fb = frame(svg, a), frame(svg, b)
    if fa[1] != fb[1]:
        fail(f"{a} and {b} are not siblings (rows at {fa[1]} and {fb[1]})")
    wa, wb = drawn_width(rows, *fa), drawn_width(rows, *fb)
    total = wide + narrow
    # Their parent spans both: its drawn width is theirs added.
    whole = wa + wb
    ea, eb = whole * wide / total, whole * narrow / total
    print(f"drawn: {a} {wa} px, {b} {wb} px; {wide}:{narrow} of {whole} px is {ea:.2f}:{eb:.2f}; "
          f"the SVG says {fa[2]}:{fb[2]}")
    if abs(wa - ea) > 1 or abs(wb - eb) > 1:
        fail(f"{a}:{b} drawn {wa}:{wb} px, not {wide}:{narrow} within a pixel")
    if abs(wa - fa[2]) > 1 or abs(wb - fb[2]) > 1:
        fail(f"drawn {wa}:{wb} px where the SVG says {fa[2]}:{fb[2]}")


def not_blank(rows):
    # Frames, cells and text: the pixels darker than the light background.
    painted = sum(1 for row in rows for p in row if min(p) < 200)
    print(f"screenshot {len(rows[0])}x{len(rows)}, {painted} pixels of frames, cells and text")
    if painted < 5000:
        fail(f"the picture is blank: {painted} pixels of frames, cells or text")


def heat(svg_path, png_path, ranges):
    svg = open(svg_path, encoding="utf-8").read()
    _, _, rows = read_png(png_path)
    not_blank(rows)
    cells = re.findall(r'<rect class="cell" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" '
                       r'fill="#([0-9a-f]{6})"><title>[^<]*, [(\[](\d+), (\d+)\] ns: (\d+) calls?</title>', svg)
    if not cells:
        fail("the heat map has no cells")
    wanted = []
    for r in ranges:
        span, calls = r.split(":")
        low, high = span.split("-")
        wanted.append((int(low), int(high), int(calls)))
    found = [0] * len(wanted)
    for x, y, w, h, fill, low, high, calls in cells:
        where = [i for i, (lo, hi, _) in enumerate(wanted) if int(low) >= lo and int(high) <= hi]
        if not where:
            fail(f"calls in ({low}, {high}] ns, outside every range expected")
        found[where[0]] += int(calls)
        colour = tuple(int(fill[i:i + 2], 16) for i in (0, 2, 4))
        px = rows[int(float(y) + float(h) / 2)][int(float(x) + float(w) / 2)]
        if max(abs(a - b) for a, b in zip(px, colour)) > 6:
            fail(f"the cell of ({low}, {high}] ns at ({x}, {y}) is drawn {px}, not its colour {colour}")
    print(f"heat map: {len(cells)} cells; calls by range {found}, expected {[c for _, _, c in wanted]}")
    if found != [c for _, _, c in wanted]:
        fail(f"calls by range {found}, not {[c for _, _, c in wanted]}")


def exported_by_speedscope(export_path):
    text = open(export_path, encoding="utf-8").read()
    m = re.search(r'<pre id="exported">(.*?)</pre>', text, re.S)
    if not m:
        fail("speedscope exported nothing: it did not load the file")
    unescaped = m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return json.loads(unescaped)


def folded(folded_path, export_path):
    expected = {}
    for line in open(folded_path, encoding="utf-8"):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        expected[stack] = expected.get(stack, 0) + int(count)
    exported = exported_by_speedscope(export_path)
    frames = exported["shared"]["frames"]
    got = {}
    for profile in exported["profiles"]:
        if profile["type"] == "sampled":
            for sample, weight in zip(profile["samples"], profile["weights"]):
                stack = ";".join(frames[i]["name"] for i in sample)
                got[stack] = got.get(stack, 0) + int(weight)
            continue
        # Evented (as speedscope 1.25 keeps folded stacks): a stack's count
        # is the time it is open with nothing above it.
        open_frames, previous = [], None
        for e in profile["events"]:
            if previous is not None and open_frames and e["at"] > previous:
                stack = ";".join(frames[i]["name"] for i in open_frames)
                got[stack] = got.get(stack, 0) + round(e["at"] - previous)
            previous = e["at"]
            if e["type"] == "O":
                open_frames.append(e["frame"])
            else:
                open_frames.pop()
    print(f"speedscope: {len(got)} stacks, {sum(got.values())} samples; the file: {len(expected)}, "
          f"{sum(expected.values())}")
    if got != expected:
        fail(f"speedscope read {got}, the file says {expected}")
    ends = {stack.split(";")[-2] + ";" + stack.split(";")[-1]: n for stack, n in got.items() if stack.count(";")}
    if ends.get("caller_a;work") != 30 or ends.get("caller_b;work") != 7:
        fail(f"the stacks end {ends}, not caller_a;work 30 and caller_b;work 7")


def timeline(tef_path, export_path, nested_expected):
    tef = json.load(open(tef_path, encoding="utf-8"))
    exported = exported_by_speedscope(export_path)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in tef["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = {}
    for e in tef["traceEvents"]:
        if e["ph"] == "X":
            slices.setdefault((e["pid"], e["tid"]), []).append(e["name"])
    frames = exported["shared"]["frames"]
    seen = nested = 0
    for profile in exported["profiles"]:
        opened = [frames[e["frame"]]["name"] for e in profile["events"] if e["type"] == "O"]
        closed = sum(1 for e in profile["events"] if e["type"] == "C")
        depth = deepest = 0
        for e in profile["events"]:
            nested += e["type"] == "O" and depth > 0
            depth += 1 if e["type"] == "O" else -1
            deepest = max(deepest, depth)
        print(f"speedscope: profile '{profile['name']}': {len(opened)} slices, nested {deepest} deep")
        if closed != len(opened):
            fail(f"{profile['name']}: {len(opened)} slices opened, {closed} closed")
        match = [k for k, n in names.items() if profile["name"].startswith(n) or n in profile["name"]]
        mine = [k for k in slices if str(k[1]) in profile["name"] or any(k == m for m in match)]
        if len(mine) != 1:
            fail(f"speedscope's profile '{profile['name']}' is none or several of the file's threads {list(slices)}")
        expected = sorted(slices.pop(mine[0]))
        got = sorted(name.split(" ")[0] for name in opened)
        if got != expected:
            fail(f"{profile['name']}: speedscope has slices {got}, the file {expected}")
        seen += len(opened)
    if slices:
        fail(f"threads with slices speedscope did not show: {list(slices)}")
    print(f"speedscope read {seen} slices, {nested} of them nested")
    if nested != nested_expected:
        fail(f"{nested} slices nested in another, not {nested_expected}")


if __name__ == "__main__":
    if len(sys.argv) == 8 and sys.argv[1] == "flame":
        flame(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7])
    elif len(sys.argv) >= 5 and sys.argv[1] == "heat":
        heat(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) == 4 and sys.argv[1] == "folded":
        folded(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "timeline":
        timeline(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        fail("usage: picture_check.py flame SVG PNG WIDE NARROW A B | heat SVG PNG LOW-HIGH:CALLS... | "
             "timeline TEF EXPORT NESTED | folded FOLDED EXPORT")
