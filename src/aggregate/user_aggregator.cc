// SPDX-License-Identifier: GPL-2.0-or-later
//
// Aggregating in kprobectl, for kernels without hist triggers: each record
// copied out of the ring buffer is read here, its keys bucketed as the
// kernel's would be, its values summed or maxed. What the kernel does with
// no copy, done with one per event.
#include <algorithm>
#include <cstring>

#include "kprobectl/aggregation.h"
#include "kprobectl/trace_plan.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

namespace {

uint64_t ReadInteger(const Record& record, unsigned offset, unsigned size, bool is_signed) {
  if (offset + size > record.size || size == 0 || size > 8) return 0;
  uint64_t raw = 0;
  std::memcpy(&raw, record.data + offset, size);  // little-endian, as the ring buffer
  if (is_signed && size < 8 && (raw >> (size * 8 - 1)) & 1) raw |= ~uint64_t{0} << (size * 8);
  return raw;
}

// A __data_loc string: a 32-bit (length << 16 | offset), its bytes there,
// quoted as trace prints it; none (length 0) where the fetch faulted.
std::string ReadString(const Record& record, unsigned offset) {
  uint64_t loc = ReadInteger(record, offset, 4, false);
  size_t at = loc & 0xffff, length = loc >> 16;
  if (length == 0 || at + length > record.size) return "(fault)";
  std::string_view text(reinterpret_cast<const char*>(record.data) + at, length);
  std::string out;
  AppendCString(out, text.substr(0, text.find('\0')));
  return out;
}

}  // namespace

Result<UserAggregator> UserAggregator::Create(const AggregationSpec& spec, const EventFormat& format,
                                              std::function<std::string(int)> comm, bool latency, const KeptArgs* kept,
                                              const EventFormat* entry) {
  auto in = [&](const EventFormat& where, const std::string& name, bool from_entry) -> Result<Field> {
    for (const FieldFormat& f : where.fields)
      if (f.name == name) return Field{f.offset, f.size, f.is_signed, f.dynamic, false, from_entry};
    return Fail(where.system + ":" + where.name + "'s format has no field '" + name + "'");
  };
  auto field = [&](const std::string& name) -> Result<Field> {
    if (latency && name == "ns") return Field{0, 8, false, false, true};
    if (kept && entry)
      for (size_t i = 0; i < kept->args.size(); ++i)
        if (kept->args[i].name == name && kept->args[i].at_entry) return in(*entry, kept->fields[i], true);
    return in(format, name, false);
  };
  std::vector<Field> keys, values;
  for (const AggKey& key : spec.keys) keys.push_back(key.kind == AggKey::kArg ? KP_TRY(field(key.arg)) : Field{});
  for (const AggValue& value : spec.values) values.push_back(KP_TRY(field(value.arg)));
  return UserAggregator(spec, std::move(keys), std::move(values), std::move(comm));
}

bool UserAggregator::Add(const Record& record, uint64_t latency_ns, const Printer::Frames* stacks,
                         const Record* entry) {
  auto kept = [](const Field& f) { return f.from_entry; };
  if (!entry && (std::any_of(key_fields_.begin(), key_fields_.end(), kept) ||
                 std::any_of(value_fields_.begin(), value_fields_.end(), kept)))
    return false;
  auto of = [&](const Field& f) -> const Record& { return f.from_entry ? *entry : record; };
  ++hits_;
  AggRow row;
  row.count = 1;
  for (size_t i = 0; i < spec_.keys.size(); ++i) {
    const AggKey& key = spec_.keys[i];
    const Field& f = key_fields_[i];
    if (key.kind == AggKey::kComm)
      row.keys.push_back(AggCell{comm_(record.pid), 0, false});
    else if (key.IsStack())
      row.keys.push_back(stacks ? StackCell(key.kind == AggKey::kKernelStack ? stacks->kernel : stacks->user,
                                            key.kind == AggKey::kKernelStack ? spec_.stack_top : std::string())
                                : StackCell({}));
    else if (key.kind == AggKey::kPid)
      row.keys.push_back(NumberCell(key, static_cast<uint64_t>(record.pid)));
    else if (f.latency)
      row.keys.push_back(NumberCell(key, latency_ns));
    else if (f.dynamic)
      row.keys.push_back(AggCell{ReadString(of(f), f.offset), 0, false});
    else
      row.keys.push_back(NumberCell(key, ReadInteger(of(f), f.offset, f.size, f.is_signed)));
  }
  for (const Field& f : value_fields_)
    row.values.push_back(
        static_cast<int64_t>(f.latency ? latency_ns : ReadInteger(of(f), f.offset, f.size, f.is_signed)));
  MergeRow(rows_, spec_, std::move(row));
  return true;
}

AggTable UserAggregator::Table(const std::string& event) const {
  AggTable table;
  table.event = event;
  table.hits = hits_;
  for (const auto& [keys, row] : rows_) table.rows.push_back(row);
  return table;
}

void UserAggregator::Clear() {
  rows_.clear();
  hits_ = 0;
}

}  // namespace kprobectl
