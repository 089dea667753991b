// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/find_binary.h"

#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

std::vector<std::string> SplitColons(const char* text) {
  std::vector<std::string> out;
  if (!text) return out;
  std::string_view s(text);
  while (!s.empty()) {
    size_t colon = s.find(':');
    std::string_view part = s.substr(0, colon);
    if (!part.empty()) out.emplace_back(part);
    if (colon == std::string_view::npos) break;
    s.remove_prefix(colon + 1);
  }
  return out;
}

void ReadLdSoConf(const std::string& root, const std::string& path, int depth, std::vector<std::string>& out) {
  if (depth > 8) return;
  std::ifstream in(root + path);
  std::string line;
  while (std::getline(in, line)) {
    std::string_view l = Trim(std::string_view(line).substr(0, line.find('#')));
    if (l.empty()) continue;
    if (l.starts_with("include")) {
      std::string pattern(Trim(l.substr(7)));
      if (!pattern.starts_with('/')) pattern = path.substr(0, path.rfind('/') + 1) + pattern;
      glob_t g{};
      if (glob((root + pattern).c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) ReadLdSoConf(root, g.gl_pathv[i] + root.size(), depth + 1, out);
      globfree(&g);
      continue;
    }
    if (l.starts_with('/')) out.emplace_back(l);
  }
}

bool IsElfOf(const std::string& path, uint16_t machine) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  Elf64_Ehdr header;
  bool ok = read(fd, &header, sizeof header) == static_cast<ssize_t>(sizeof header);
  close(fd);
  return ok && std::string_view(reinterpret_cast<const char*>(header.e_ident), 4) == ELFMAG &&
         header.e_ident[EI_CLASS] == ELFCLASS64 && (machine == 0 || header.e_machine == machine);
}

// A path inside the search's root as a path from here.
Result<std::string> RealPath(const std::string& path, const std::string& root) {
  if (!root.empty()) return ResolveInRoot(root, path);
  char real[PATH_MAX];
  if (!realpath(path.c_str(), real)) return Fail("cannot resolve " + path);
  return std::string(real);
}

}  // namespace

Result<std::string> ResolveInRoot(const std::string& root, const std::string& path) {
  // The components still to walk, last first; `at` is resolved so far.
  std::vector<std::string> todo;
  auto push = [&](std::string_view p) {
    std::vector<std::string> parts;
    while (!p.empty()) {
      size_t slash = p.find('/');
      std::string_view part = p.substr(0, slash);
      if (!part.empty() && part != ".") parts.emplace_back(part);
      if (slash == std::string_view::npos) break;
      p.remove_prefix(slash + 1);
    }
    todo.insert(todo.end(), parts.rbegin(), parts.rend());
  };
  push(path);
  std::string at;
  for (int links = 0; !todo.empty();) {
    std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == "..") {
      at = at.substr(0, at.rfind('/'));
      continue;
    }
    std::string next = at + "/" + part;
    char target[PATH_MAX];
    ssize_t n = readlink((root + next).c_str(), target, sizeof target - 1);
    if (n < 0) {
      if (errno != EINVAL) return Fail("cannot resolve " + path + " in " + root + ": " + std::strerror(errno));
      at = std::move(next);  // not a link
      continue;
    }
    if (++links > 40) return Fail("cannot resolve " + path + " in " + root + ": too many symbolic links");
    std::string_view link(target, static_cast<size_t>(n));
    if (link.starts_with('/')) at.clear();
    push(link);
  }
  return root + (at.empty() ? "/" : at);
}

SearchPaths SearchPathsFrom(const char* path, const char* ld_library_path, const LibraryMachine& machine,
                            const std::string& ld_so_conf, const std::string& root) {
  SearchPaths out;
  out.root = root;
  out.machine = machine.machine;
  out.programs = SplitColons(path);
  out.libraries = SplitColons(ld_library_path);
  ReadLdSoConf(root, ld_so_conf, 0, out.libraries);
  if (!machine.multiarch.empty()) {
    out.libraries.push_back("/lib/" + machine.multiarch);
    out.libraries.push_back("/usr/lib/" + machine.multiarch);
  }
  for (const char* dir : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) out.libraries.emplace_back(dir);
  return out;
}

std::vector<std::string> SeparateDebuginfoCandidates(const std::string& root, std::string_view build_id) {
  std::vector<std::string> out;
  if (build_id.size() <= 2) return out;
  std::string tail = "/usr/lib/debug/.build-id/" + std::string(build_id.substr(0, 2)) + "/" +
                     std::string(build_id.substr(2)) + ".debug";
  if (!root.empty()) out.push_back(root + tail);
  out.push_back(tail);
  return out;
}

Result<std::string> FindBinary(const std::string& name, const SearchPaths& search) {
  if (name.empty()) return Fail("-x needs a binary: an executable or a shared library, by path or name");
  const std::string& root = search.root;
  std::string where = root.empty() ? "" : " in " + root;
  bool as_path = name.find('/') != std::string::npos || (root.empty() && access(name.c_str(), F_OK) == 0);
  if (as_path) {
    std::string path = root.empty() || name.starts_with('/') ? name : "/" + name;
    auto real = RealPath(path, root);
    if (!real || access(real->c_str(), F_OK) != 0)
      return Fail("cannot find the binary '" + name + "'" + where,
                  "give -x a path to an executable or a shared library" +
                      std::string(root.empty() ? "" : ", as the process sees it"));
    return real;
  }
  for (const std::string& dir : search.programs) {
    std::string candidate = dir + "/" + name;
    if (access((root + candidate).c_str(), X_OK) == 0) return RealPath(candidate, root);
  }
  if (name.find(".so") != std::string::npos)
    for (const std::string& dir : search.libraries) {
      std::string candidate = dir + "/" + name;
      if (access((root + candidate).c_str(), R_OK) == 0 && IsElfOf(root + candidate, search.machine))
        return RealPath(candidate, root);
    }
  return Fail("cannot find the binary '" + name + "' in PATH" +
                  (name.find(".so") != std::string::npos ? " or where the dynamic linker looks for libraries" : "") +
                  where,
              "give -x a path to an executable or a shared library");
}

}  // namespace kprobectl
