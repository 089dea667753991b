// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/find_binary.h"

#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
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

void ReadLdSoConf(const std::string& path, int depth, std::vector<std::string>& out) {
  if (depth > 8) return;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::string_view l = Trim(std::string_view(line).substr(0, line.find('#')));
    if (l.empty()) continue;
    if (l.starts_with("include")) {
      std::string pattern(Trim(l.substr(7)));
      if (!pattern.starts_with('/')) pattern = path.substr(0, path.rfind('/') + 1) + pattern;
      glob_t g{};
      if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) ReadLdSoConf(g.gl_pathv[i], depth + 1, out);
      globfree(&g);
      continue;
    }
    if (l.starts_with('/')) out.emplace_back(l);
  }
}

bool IsX86_64Elf(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  Elf64_Ehdr header;
  bool ok = read(fd, &header, sizeof header) == static_cast<ssize_t>(sizeof header);
  close(fd);
  return ok && std::string_view(reinterpret_cast<const char*>(header.e_ident), 4) == ELFMAG &&
         header.e_ident[EI_CLASS] == ELFCLASS64 && header.e_machine == EM_X86_64;
}

Result<std::string> RealPath(const std::string& path) {
  char real[PATH_MAX];
  if (!realpath(path.c_str(), real)) return Fail("cannot resolve " + path);
  return std::string(real);
}

}  // namespace

SearchPaths SearchPathsFrom(const char* path, const char* ld_library_path, const std::string& ld_so_conf) {
  SearchPaths out;
  out.programs = SplitColons(path);
  out.libraries = SplitColons(ld_library_path);
  ReadLdSoConf(ld_so_conf, 0, out.libraries);
  for (const char* dir :
       {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"})
    out.libraries.emplace_back(dir);
  return out;
}

Result<std::string> FindBinary(const std::string& name, const SearchPaths& search) {
  if (name.empty()) return Fail("-x needs a binary: an executable or a shared library, by path or name");
  if (name.find('/') != std::string::npos || access(name.c_str(), F_OK) == 0) {
    auto real = RealPath(name);
    if (!real)
      return Fail("cannot find the binary '" + name + "'", "give -x a path to an executable or a shared library");
    return real;
  }
  for (const std::string& dir : search.programs) {
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return RealPath(candidate);
  }
  if (name.find(".so") != std::string::npos)
    for (const std::string& dir : search.libraries) {
      std::string candidate = dir + "/" + name;
      if (access(candidate.c_str(), R_OK) == 0 && IsX86_64Elf(candidate)) return RealPath(candidate);
    }
  return Fail("cannot find the binary '" + name + "' in PATH" +
                  (name.find(".so") != std::string::npos ? " or where the dynamic linker looks for libraries" : ""),
              "give -x a path to an executable or a shared library");
}

}  // namespace kprobectl
