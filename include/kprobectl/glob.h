// SPDX-License-Identifier: GPL-2.0-or-later
//
// Globs for event and function names. GlobMatch() is shell-style ('*', '?',
// '[...]' with '!' or '^' negation, '\' escapes). GlobFilter is perf's
// --filter language on top: '!' negates, '&' and '|' combine (& binds
// tighter), parentheses group: "vfs_* & !vfs_read".
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "kprobectl/result.h"

namespace kprobectl {

bool GlobMatch(std::string_view pattern, std::string_view text);
bool IsGlob(std::string_view s);

class GlobFilter {
 public:
  // `leaf`, if given, makes each glob of the expression the pattern it
  // stands for (a Go name's "(*T)" and "[...]": GoGlob). A '(' inside a
  // glob ("net/http.(*ServeMux)*") is the glob's, through its ')'.
  static Result<GlobFilter> Parse(std::string_view expression,
                                  const std::function<std::string(std::string_view)>& leaf = {});
  bool Matches(std::string_view name) const;

  struct Node;
  GlobFilter(GlobFilter&&) noexcept;
  GlobFilter& operator=(GlobFilter&&) noexcept;
  ~GlobFilter();

 private:
  explicit GlobFilter(std::unique_ptr<Node> root);
  std::unique_ptr<Node> root_;
};

}  // namespace kprobectl
