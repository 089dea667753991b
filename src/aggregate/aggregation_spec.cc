// SPDX-License-Identifier: GPL-2.0-or-later
//
// The aggregation's words, parsed and checked against the events' own
// arguments before anything is written. Keys and modifiers are spelt as the
// kernel's hist triggers spell them (n.log2, n.buckets=10), which is also
// what `trace-cmd hist` users type; comm and pid are bpftrace's names.
#include <algorithm>
#include <charconv>

#include "kprobectl/aggregation.h"
#include "kprobectl/fetch_type.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

Result<AggKey> ParseKey(const std::string& text) {
  AggKey key;
  key.text = text;
  if (text == "comm" || text == "pid") {
    key.kind = text == "comm" ? AggKey::kComm : AggKey::kPid;
    return key;
  }
  size_t dot = text.find('.');
  key.arg = text.substr(0, dot);
  // Stacks: bpftrace's kstack and ustack, and the kernel's own names.
  if (key.arg == "kstack" || key.arg == "stacktrace" || key.arg == "common_stacktrace" || key.arg == "ustack") {
    key.kind = key.arg == "ustack" ? AggKey::kUserStack : AggKey::kKernelStack;
    key.arg.clear();
    if (dot != std::string::npos)
      return Fail("--key '" + text + "': a stack has no modifier ('" + text.substr(dot) + "')",
                  "count by the stack alone: -k " + text.substr(0, dot));
    return key;
  }
  if (key.arg.empty()) return Fail("--key '" + text + "': no argument name before the '.'");
  if (dot == std::string::npos) return key;
  std::string modifier = text.substr(dot + 1);
  if (modifier == "log2") {
    key.buckets = AggKey::kLog2;
    return key;
  }
  if (modifier.starts_with("buckets=")) {
    std::string_view n = std::string_view(modifier).substr(8);
    auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), key.step);
    if (ec != std::errc() || end != n.data() + n.size() || n.empty())
      return Fail("--key '" + text + "': the bucket size '" + std::string(n) + "' is not a number");
    if (key.step == 0)
      return Fail("--key '" + text + "': a bucket size of 0", "buckets are N wide, N > 0: " + key.arg + ".buckets=10");
    key.buckets = AggKey::kLinear;
    return key;
  }
  return Fail("--key '" + text + "': unknown modifier '." + modifier + "'",
              "a key is comm, pid, kstack, ustack or an argument's name, which may end in .log2 or .buckets=N");
}

std::vector<std::string> SplitCommas(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const std::string& word : words)
    for (size_t start = 0; start <= word.size();) {
      size_t comma = std::min(word.find(',', start), word.size());
      if (comma > start) out.push_back(word.substr(start, comma - start));
      start = comma + 1;
    }
  return out;
}

std::vector<std::string> Columns(const AggregationSpec& spec) {
  std::vector<std::string> out{"hits"};
  for (const AggKey& k : spec.keys) out.push_back(k.text);
  for (const AggValue& v : spec.values) out.push_back(v.Column());
  return out;
}

Result<void> ParseSort(const std::string& text, AggregationSpec& spec) {
  if (text.empty()) return {};
  std::string column = text;
  std::optional<bool> descending;
  for (auto [suffix, down] : {std::pair{".descending", true}, std::pair{".ascending", false}})
    if (column.ends_with(suffix)) {
      column.resize(column.size() - std::string_view(suffix).size());
      descending = down;
    }
  std::vector<std::string> columns = Columns(spec);
  if (std::find(columns.begin(), columns.end(), column) == columns.end())
    return Fail("--sort '" + text + "': no column '" + column + "'", "the columns: " + Join(columns, ", "));
  spec.sort = column;
  // Keys ascending, counts and values descending, unless told.
  bool is_key = std::any_of(spec.keys.begin(), spec.keys.end(), [&](const AggKey& k) { return k.text == column; });
  spec.descending = descending.value_or(!is_key);
  return {};
}

}  // namespace

bool HasKey(const AggregationSpec& spec, AggKey::Kind kind) {
  return std::any_of(spec.keys.begin(), spec.keys.end(), [&](const AggKey& k) { return k.kind == kind; });
}

Result<AggregationSpec> ParseAggregation(const AggregationWords& words) {
  AggregationSpec spec;
  std::vector<std::string> keys = SplitCommas(words.keys);
  if (keys.empty()) keys.push_back("comm");
  for (const std::string& text : keys) {
    AggKey key = KP_TRY(ParseKey(text));
    if (std::any_of(spec.keys.begin(), spec.keys.end(),
                    [&](const AggKey& k) { return k.text == key.text || (key.IsStack() && k.kind == key.kind); }))
      return Fail("--key '" + text + "' is given twice");
    spec.keys.push_back(std::move(key));
  }
  for (auto [list, op] : {std::pair{&words.sums, AggValue::kSum}, std::pair{&words.maxes, AggValue::kMax}})
    for (const std::string& arg : SplitCommas(*list)) spec.values.push_back(AggValue{op, arg, {}});
  spec.top = words.top;
  KP_TRY_VOID(ParseSort(words.sort, spec));
  return spec;
}

Result<AggregationSpec> BindAggregation(const AggregationSpec& spec, const TraceEventDef& def) {
  AggregationSpec out = spec;
  std::vector<std::string> names;
  for (const FetchArg& a : def.args)
    if (!a.name.starts_with("__")) names.push_back(a.name);
  std::string has = names.empty() ? "it has no arguments" : "its arguments: " + Join(names, ", ");
  auto find = [&](const std::string& name, const std::string& option) -> Result<FetchType> {
    auto it = std::find_if(def.args.begin(), def.args.end(), [&](const FetchArg& a) { return a.name == name; });
    if (it == def.args.end() || name.starts_with("__"))
      return Fail(option + ": " + def.FullName() + " has no argument '" + name + "' (" + has + ")",
                  "name the probe's arguments as you wrote them: 'SPEC n=%di'; kprobectl list shows them");
    if (it->type.empty()) return FetchType::Integer(FetchType::kHex, 64);
    return ParseFetchType(it->type);
  };
  for (AggKey& key : out.keys) {
    if (key.kind != AggKey::kArg) continue;
    std::string option = "--key '" + key.text + "'";
    FetchType type = KP_TRY(find(key.arg, option));
    std::string type_text = FormatFetchType(type);
    if (type.array_len || type.base == FetchType::kDentry || type.base == FetchType::kFile ||
        type.base == FetchType::kSymbol)
      return Fail(
          option + ": " + def.FullName() + "'s " + key.arg + " is of type " + type_text + ", which cannot be a key",
          "a key is an integer or a string");
    if (type.IsString() && key.buckets != AggKey::kExact)
      return Fail(option + ": " + def.FullName() + "'s " + key.arg + " is a string: it has no buckets");
    key.type = type;
  }
  for (AggValue& value : out.values) {
    std::string option = (value.op == AggValue::kSum ? "--sum '" : "--max '") + value.arg + "'";
    FetchType type = KP_TRY(find(value.arg, option));
    if (type.IsString() || type.array_len || type.base == FetchType::kDentry || type.base == FetchType::kFile)
      return Fail(option + ": " + def.FullName() + "'s " + value.arg + " is of type " + FormatFetchType(type) +
                  ", not a number");
    value.type = type;
  }
  return out;
}

}  // namespace kprobectl
