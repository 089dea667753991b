// SPDX-License-Identifier: GPL-2.0-or-later
//
//   field:const char * filename;	offset:24;	size:8;	signed:0;
//   field:__data_loc char[] filename;	offset:8;	size:4;	signed:0;
//   field:char prev_comm[16];	offset:8;	size:16;	signed:0;
#include "kprobectl/event_fields.h"

#include "kprobectl/strings.h"

namespace kprobectl {

bool EventField::InlineString() const {
  bool chars = c_type.find("char") != std::string::npos;
  return chars && (data_loc || array_count.has_value());
}

bool EventField::IsPointer() const { return !data_loc && !array_count && c_type.ends_with('*'); }

std::string EventField::Pointee() const {
  if (!IsPointer()) return {};
  return std::string(Trim(std::string_view(c_type).substr(0, c_type.size() - 1)));
}

namespace {

std::optional<unsigned> Number(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  size_t start = at + key.size();
  size_t end = line.find(';', start);
  auto n = ParseUnsigned(line.substr(start, end == std::string_view::npos ? end : end - start));
  if (!n || *n > 0xffffffff) return std::nullopt;
  return static_cast<unsigned>(*n);
}

}  // namespace

Result<std::vector<EventField>> ParseEventFields(std::string_view format) {
  std::vector<EventField> fields;
  for (const std::string& raw : SplitLines(format)) {
    std::string_view line = Trim(raw);
    if (!line.starts_with("field:")) continue;
    size_t semi = line.find(';');
    if (semi == std::string_view::npos) return Fail("cannot read the event format line '" + std::string(line) + "'");
    std::string_view decl = Trim(line.substr(6, semi - 6));
    EventField f;
    // The name is the last word, before any [N].
    std::string_view head = decl;
    if (head.ends_with(']')) {
      size_t open = head.rfind('[');
      if (open == std::string_view::npos) return Fail("cannot read the event field '" + std::string(decl) + "'");
      if (auto n = ParseUnsigned(head.substr(open + 1, head.size() - open - 2)); n && *n <= 0xffffffff)
        f.array_count = static_cast<unsigned>(*n);
      head = Trim(head.substr(0, open));
    }
    size_t split = head.find_last_of(" *");
    if (split == std::string_view::npos) return Fail("cannot read the event field '" + std::string(decl) + "'");
    f.name = std::string(head.substr(split + 1));
    f.c_type = std::string(Trim(head.substr(0, split + 1)));
    if (f.c_type.starts_with("__data_loc") || f.c_type.starts_with("__rel_loc")) {
      f.data_loc = true;
      f.array_count.reset();
    } else if (f.array_count) {
      f.c_type += "[" + std::to_string(*f.array_count) + "]";
    }
    auto offset = Number(line, "offset:");
    auto size = Number(line, "size:");
    auto is_signed = Number(line, "signed:");
    if (f.name.empty() || !offset || !size) return Fail("cannot read the event field '" + std::string(decl) + "'");
    f.offset = *offset;
    f.size = *size;
    f.is_signed = is_signed.value_or(0) != 0;
    if (f.name.starts_with("common_")) continue;
    fields.push_back(std::move(f));
  }
  return fields;
}

}  // namespace kprobectl
