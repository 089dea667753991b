// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/nearest_names.h"

#include <algorithm>

namespace kprobectl {

namespace {

// A qualified name's parts: "ledger::bank::Account::deposit",
// "net/http.(*Header).Write" split at "::", '.' and '/'.
std::vector<std::string_view> Parts(std::string_view name) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    const bool colons = i + 1 < name.size() && name[i] == ':' && name[i + 1] == ':';
    if (i < name.size() && !colons && name[i] != '.' && name[i] != '/') continue;
    if (i > start) out.push_back(name.substr(start, i - start));
    if (colons) ++i;
    start = i + 1;
  }
  return out;
}

// Whether `few`'s parts are `many`'s, some left out, in order, ending alike.
template <typename Few, typename Many>
bool PartsWithin(const Few& few, const Many& many) {
  if (few.empty() || few.size() >= many.size() || std::string_view(few.back()) != std::string_view(many.back()))
    return false;
  size_t at = 0;
  for (std::string_view part : many)
    if (at < few.size() && part == std::string_view(few[at])) ++at;
  return at == few.size();
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b, size_t limit) {
  size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > limit) return limit + 1;
  // Three rows of the dynamic programme: i-2, i-1, i.
  std::vector<size_t> before(m + 1), previous(m + 1), current(m + 1);
  for (size_t j = 0; j <= m; ++j) previous[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    current[0] = i;
    size_t row_min = current[0];
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
      row_min = std::min(row_min, current[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return std::min(previous[m], limit + 1);
}

NearestNames::NearestNames(std::string_view name, size_t count)
    : name_(name), count_(count), max_edits_(std::clamp<size_t>(name.size() / 4, 1, 3)) {
  for (std::string_view part : Parts(name_)) parts_.emplace_back(part);
}

void NearestNames::Offer(std::string_view candidate) {
  if (candidate.empty() || candidate == name_) return;
  size_t score = EditDistance(name_, candidate, max_edits_);
  if (score > max_edits_) {
    // Containing it, or contained: after every near miss, shorter first.
    bool contains = name_.size() >= 3 && candidate.find(name_) != std::string_view::npos;
    bool contained = candidate.size() > 3 && name_.find(candidate) != std::string::npos;
    size_t gap = candidate.size() > name_.size() ? candidate.size() - name_.size() : name_.size() - candidate.size();
    // A qualified name with a part left out or one too many
    // ("ledger::Account::deposit" for "ledger::bank::Account::deposit").
    // An unqualified name a few edits from a qualified one's last part
    // ("handel" for "main.handle").
    if (!contains && !contained && parts_.size() == 1 && candidate.size() > name_.size() &&
        candidate.find_first_of(":./") != std::string_view::npos) {
      auto parts = Parts(candidate);
      if (parts.size() < 2 || EditDistance(name_, parts.back(), max_edits_) > max_edits_) return;
      gap = parts.size() - 1 + EditDistance(name_, parts.back(), max_edits_);
    } else if (!contains && !contained && parts_.size() >= 2 && candidate.ends_with(parts_.back())) {
      auto parts = Parts(candidate);
      if (PartsWithin(parts_, parts) || PartsWithin(parts, parts_))
        gap = parts.size() > parts_.size() ? parts.size() - parts_.size() : parts_.size() - parts.size();
      else
        return;
    } else if (!contains && !contained) {
      return;
    }
    score = max_edits_ + 1 + gap;
  }
  if (kept_.size() == count_ && score >= kept_.back().score) return;
  auto at = std::lower_bound(kept_.begin(), kept_.end(), score, [&](const Kept& k, size_t s) {
    return k.score < s || (k.score == s && k.name < candidate);
  });
  for (const Kept& k : kept_)
    if (k.name == candidate) return;
  kept_.insert(at, Kept{score, std::string(candidate)});
  if (kept_.size() > count_) kept_.pop_back();
}

std::vector<std::string> NearestNames::Take() const {
  std::vector<std::string> out;
  for (const Kept& k : kept_) out.push_back(k.name);
  return out;
}

}  // namespace kprobectl
