// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/call_pairing.h"

#include <cstring>

namespace kprobectl {

namespace {

// An 8-byte hidden field of the record, if the plan has it.
std::optional<uint64_t> Field(const Record& record, std::optional<unsigned> offset) {
  if (!offset || *offset + 8 > record.size) return std::nullopt;
  uint64_t value = 0;
  std::memcpy(&value, record.data + *offset, 8);
  return value;
}

// The stack pointer, as a place in its stack: where Go records its stack's
// top, less that top (wrapping, which keeps the order: deeper is lower),
// so that a stack Go moved to grow it still pairs.
std::optional<uint64_t> StackPlace(const Record& record, const EventPlan& plan) {
  std::optional<uint64_t> sp = Field(record, plan.stack_offset);
  if (!sp) return std::nullopt;
  return *sp - Field(record, plan.stack_top_offset).value_or(0);
}

}  // namespace

Record OpenCall::AsRecord() const {
  Record r;
  r.ts = ts;
  r.data = data.data();
  r.size = static_cast<unsigned>(data.size());
  return r;
}

std::optional<OpenCall> CallPairing::Next(const EventPlan& plan, const Record& record) {
  // A call is its goroutine's where the probes record it (Go's g), else
  // its thread's.
  const uint64_t who = Field(record, plan.call_offset).value_or(static_cast<uint64_t>(record.pid));
  if (!plan.opens.empty()) {
    std::optional<uint64_t> stack = StackPlace(record, plan);
    OpenCall call{record.ts, stack.value_or(0), {}};
    if (plan.keep_record) call.data.assign(record.data, record.data + record.size);
    for (const std::string& key : plan.opens) Open(open_[{key, who}], call, stack.has_value());
    return std::nullopt;
  }
  if (plan.call_key.empty()) return std::nullopt;
  auto calls = open_.find({plan.call_key, who});
  if (calls == open_.end()) return std::nullopt;
  return End(calls->second, plan, record);
}

// The stack grows down: a deeper call's stack pointer is lower.
void CallPairing::Open(Stack& calls, const OpenCall& call, bool by_stack) {
  while (by_stack && !calls.empty() && calls.back().stack <= call.stack) calls.pop_back();
  calls.push_back(call);
}

std::optional<OpenCall> CallPairing::End(Stack& calls, const EventPlan& plan, const Record& record) {
  std::optional<uint64_t> stack = StackPlace(record, plan);
  if (stack) {
    // A return probe runs past the return, a probe on a return
    // instruction (Go's) before it.
    const uint64_t entry = *stack - (plan.retprobe ? return_address_bytes_ : 0);
    while (!calls.empty() && calls.back().stack < entry) calls.pop_back();
    if (calls.empty() || calls.back().stack != entry) return std::nullopt;
  } else if (calls.empty()) {
    return std::nullopt;  // entered before tracing began
  }
  OpenCall call = std::move(calls.back());
  calls.pop_back();
  return call;
}

}  // namespace kprobectl
