// SPDX-License-Identifier: GPL-2.0-or-later
//
// "Did you mean": the names closest to one that matched nothing, among
// candidates offered one by one (a symbol table, kallsyms, BTF: up to a few
// hundred thousand names, so each is judged on its own and few are kept).
// Close means a few edits away (insertions, deletions, substitutions,
// transpositions: "vfs_raed" is "vfs_read"), then containing the name or
// contained in it ("compu" in "compute"), or, for a qualified name, the
// same name with a path part left out or added ("ledger::Account::deposit"
// for "ledger::bank::Account::deposit", "http.Header.Get" for
// "net/http.Header.Get"); nearest first.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kprobectl {

class NearestNames {
 public:
  explicit NearestNames(std::string_view name, size_t count = 5);
  void Offer(std::string_view candidate);
  // The closest, nearest first, each once.
  std::vector<std::string> Take() const;

 private:
  struct Kept {
    size_t score;  // lower is closer
    std::string name;
  };
  std::string name_;
  size_t count_;
  size_t max_edits_;
  std::vector<std::string> parts_;  // of a qualified name: "ns::Type::fn", "pkg/path.Type.Method"
  std::vector<Kept> kept_;          // sorted by score, then name; at most count_
};

// The optimal-string-alignment distance between `a` and `b`, or `limit` + 1
// when it is more than `limit`.
size_t EditDistance(std::string_view a, std::string_view b, size_t limit);

}  // namespace kprobectl
