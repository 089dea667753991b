#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# clang-tidy on every source file of src/ (scripts/lint), a file at a time
# on every core, skipping the files it passed before with the same input:
# a file's key is the hash of clang-tidy's version, .clang-tidy, the extra
# arguments, the file's path in the tree and its preprocessed text (g++ -E
# -P of its compile command: every header it includes, without line
# markers, so that the key is the same in any clone of the tree). A file
# that passes leaves its key in CACHE_DIR; one that fails leaves none and
# its findings are printed. Stdlib only.
#
#   tidy.py BUILD_DIR CACHE_DIR LOG [EXTRA_ARG...]   (exit 1 on a finding)
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys

TIDY = "clang-tidy-19"


def preprocess_command(entry):
    """The entry's compile command made to write its preprocessed text to stdout."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        out.append(a)
    return out + ["-E", "-P", "-o", "-"]


def key_of(entry, root, common):
    text = subprocess.run(preprocess_command(entry), cwd=entry["directory"], capture_output=True, check=True).stdout
    h = hashlib.sha256(common)
    h.update(os.path.relpath(entry["file"], root).encode() + b"\0")
    h.update(text)
    return h.hexdigest()


def main():
    build, cache, log = sys.argv[1:4]
    extra = sys.argv[4:]
    root = os.getcwd()
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = [e for e in json.load(f) if os.path.relpath(e["file"], root).startswith("src/")]
    version = subprocess.run([TIDY, "--version"], capture_output=True, check=True).stdout
    with open(".clang-tidy", "rb") as f:
        config = f.read()
    common = version + b"\0" + config + b"\0" + "\0".join(extra).encode() + b"\0"

    def check(entry):
        key = key_of(entry, root, common)
        mark = os.path.join(cache, key)
        if os.path.exists(mark):
            return entry["file"], True, "", True
        run = subprocess.run([TIDY, "-p", build, "--quiet"] + [f"--extra-arg={a}" for a in extra] + [entry["file"]],
                             capture_output=True, text=True)
        if run.returncode == 0:
            open(mark, "w").close()
        return entry["file"], run.returncode == 0, run.stdout + run.stderr, False

    failed, cached = [], 0
    with open(log, "w") as out, concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        for name, ok, text, hit in pool.map(check, entries):
            cached += hit
            out.write(f"== {os.path.relpath(name, root)}: {'cached pass' if hit else 'pass' if ok else 'FAILED'}\n{text}")
            if not ok:
                failed.append(name)
    print(f"clang-tidy: {len(entries)} files, {cached} passed before with the same input, {len(failed)} with findings")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
