// SPDX-License-Identifier: GPL-2.0-or-later
//
// btf_parity BTF_FILE [CACHE_DIR]: every function of a raw BTF blob
// answered by libbpf's reader and by the index (built this run, then read
// back from CACHE_DIR's cache file), compared: the function list (funcs),
// each function's parameters (vars), its $params fetches with what they
// skip, and its $retval type. Prints "N functions, M differ" and the first
// differences; exits 1 on any. bench/btf runs it over the running kernel's
// BTF and the 6.1 kernel's.
#include <cstdio>
#include <filesystem>
#include <string>

#include "kprobectl/arch.h"
#include "kprobectl/btf.h"
#include "kprobectl/fetch_type.h"

using namespace kprobectl;

namespace {

std::string Render(const VariableFetch& f) {
  std::string out = std::to_string(f.root) + "/" + std::to_string(f.dwarf_register) + "/" + std::to_string(f.argument) +
                    "/" + std::to_string(f.address) + "/" + std::to_string(f.constant);
  for (int64_t d : f.derefs) out += "+" + std::to_string(d);
  return out + " " + FormatFetchType(f.type) + " " + f.name + " {" + f.c_type + "}";
}

// What a function's answers are, as one text.
std::string Answers(const BtfInfo& btf, const std::string& function) {
  std::string out;
  if (auto params = btf.Parameters(function)) {
    for (const BtfParameter& p : *params) {
      out += "param " + p.name + " {" + p.c_type + "}" + (p.in_pieces ? " pieces" : "");
      for (const std::string& m : p.piece_members) out += " +" + m;
      for (const std::string& m : p.pieces_refused) out += " -" + m;
      out += "\n";
    }
  } else {
    out += "params error: " + params.error().message + " / " + params.error().hint + "\n";
  }
  std::vector<std::string> skipped;
  if (auto all = btf.FetchAll(function, &skipped)) {
    for (const VariableFetch& f : *all) out += "fetch " + Render(f) + "\n";
  } else {
    out += "fetch error: " + all.error().message + " / " + all.error().hint + "\n";
  }
  for (const std::string& s : skipped) out += "skipped " + s + "\n";
  if (auto ret = btf.ReturnType(function))
    out += "retval " + FormatFetchType(ret->first) + " {" + ret->second + "}\n";
  else
    out += "retval none\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: btf_parity BTF_FILE [CACHE_DIR]\n");
    return 2;
  }
  const std::string path = argv[1];
  const std::string cache = argc > 2 ? argv[2] : "";
  auto libbpf = BtfInfo::Open(path, X86_64Arch(), {}, {}, BtfReader::kLibbpf);
  auto built = BtfInfo::Open(path, X86_64Arch(), {}, cache, BtfReader::kIndex);
  auto cached = BtfInfo::Open(path, X86_64Arch(), {}, cache, BtfReader::kIndex);
  if (!libbpf || !built || !cached) {
    std::fprintf(stderr, "btf_parity: cannot open '%s'\n", path.c_str());
    return 1;
  }
  size_t differ = 0;
  auto functions = (*libbpf)->Functions();
  if ((*built)->Functions() != functions || (*cached)->Functions() != functions) {
    std::printf("the function lists differ\n");
    ++differ;
  }
  for (const std::string& function : functions) {
    std::string expected = Answers(**libbpf, function);
    for (const BtfInfo* other : {built->get(), cached->get()}) {
      std::string got = Answers(*other, function);
      if (got == expected) continue;
      if (++differ <= 5)
        std::printf("%s differs:\n--- libbpf\n%s--- index\n%s", function.c_str(), expected.c_str(), got.c_str());
      break;
    }
  }
  std::printf("%s: %zu functions, %zu differ\n", path.c_str(), functions.size(), differ);
  return differ ? 1 : 0;
}
