// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the kernel gets: one line of kprobe_events, uprobe_events or
// dynamic_events.
//
//   p[:GRP/EV] SYM[+OFF] | MOD:SYM[+OFF] | 0xADDR      [NAME=FETCHARG[:TYPE] ...]
//   r[MAXACTIVE][:GRP/EV] ...
//   p[:GRP/EV] /PATH:0xOFF[(0xREFCTR)]                  (uprobes)
//   f[:GRP/EV] [MOD:]SYM | f[MAXACTIVE][:GRP/EV] [MOD:]SYM%return   (fprobes, 6.5)
//   t[:GRP/EV] TRACEPOINT                               (tracepoint probes, 6.5)
//   e[:GRP/EV] SYSTEM.EVENT                             (event probes, 5.15)
//
// FormatDefinition() writes the form we send; ParseDefinition() reads that
// form and also what the kernel prints back when the file is read (offsets in
// decimal for kprobes, zero-padded hex for uprobes, "r10:" for maxactive).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

enum class ProbeKind { kKernel, kUser };
// How the kernel attaches it: a kprobe or uprobe (p/r), a function-entry or
// -exit probe on ftrace (f: no offsets, every function of the name), or a
// probe on a tracepoint (t), or a probe on an existing event (e, an
// event probe: it runs when that event is recorded and reads its fields).
// fprobes, tracepoint probes and event probes are kernel probes, written to
// dynamic_events; an event probe's target is the event, SYSTEM.EVENT
// (ProbeTarget's module and symbol).
enum class ProbeType { kProbe, kFprobe, kTracepoint, kEventProbe };

// Every hidden argument of kprobectl's (below) begins so: recorded, never
// printed as an argument.
inline constexpr std::string_view kHiddenFieldPrefix = "__kp_";
// The hidden arguments of a stack capture (trace --stack on a user probe
// kprobectl adds itself): a register, named by its DWARF number, and the
// bytes above the stack pointer in chunks of kCaptureChunkBytes, in order.
inline constexpr std::string_view kCaptureRegisterPrefix = "__kp_r";
inline constexpr std::string_view kCaptureStackPrefix = "__kp_s";
inline constexpr unsigned kCaptureChunkBytes = 512;  // x64[64]: the kernel's longest array
// trace --latency on Go's FUNC%return: the goroutine (Go's g register),
// a hidden argument of the entry and of each return instruction's probe,
// pairs them; a goroutine may move to another thread between the two.
inline constexpr std::string_view kGoroutineField = "__kp_g";
// A return's arguments kept by its entry (FetchArg::at_entry): the stack
// pointer, a hidden argument of the entry and of the return, tells which
// open call a return ends (arch.h: return_address_bytes).
inline constexpr std::string_view kCallStackField = "__kp_call_sp";
// Go copies a goroutine's stack elsewhere to grow it, which moves a call's
// stack pointer between its entry and its return, but not its distance
// from the stack's top: g.stack.hi, the second word of the goroutine
// (runtime.g begins with stack{lo, hi} in every Go version), fetched
// through the call register beside kCallStackField.
inline constexpr std::string_view kStackTopField = "__kp_g_top";  // not __kp_s..., a stack capture's
inline constexpr unsigned kGoStackHiOffset = 8;

// A counted string (Go's string, Rust's &str...): its bytes in NAME, a
// u8[N] of the bound, and its length in NAME + kCountedLengthSuffix right
// after; the trace prints NAME as a string cut at the length.
inline constexpr std::string_view kCountedLengthSuffix = "__len";
inline constexpr unsigned kCountedStringBound = 64;  // the kernel's longest array

struct FetchArg {
  std::string name;
  std::string fetch;  // e.g. "+0(%di)", "$retval", "@+0x4010"
  std::string type;   // e.g. "string", "s32"; empty for the kernel default (x64)
  // trace and hist alone: a return probe's argument the kernel cannot keep
  // for it, fetched (as `fetch` says) at the function's entry by a hidden
  // probe they add, and printed with the return that ends the same call.
  // PlanTrace moves it to that entry: never in a line the kernel is sent.
  bool at_entry = false;
  bool operator==(const FetchArg&) const = default;
};

struct ProbeTarget {
  enum Kind { kSymbol, kAddress, kFile } kind = kSymbol;
  std::string module;                      // kSymbol: "MOD" in MOD:SYM+OFF
  std::string symbol;                      // kSymbol: a symbol or "_text"
  uint64_t offset = 0;                     // kSymbol: +OFF; kFile: offset in the file
  uint64_t address = 0;                    // kAddress
  std::string path;                        // kFile: absolute path of the ELF
  std::optional<uint64_t> ref_ctr_offset;  // kFile: SDT semaphore
  bool operator==(const ProbeTarget&) const = default;
};

struct TraceEventDef {
  ProbeKind kind = ProbeKind::kKernel;
  ProbeType type = ProbeType::kProbe;
  bool retprobe = false;
  unsigned maxactive = 0;  // kretprobes only; 0 = the kernel's default
  std::string group;
  std::string event;
  ProbeTarget target;
  std::vector<FetchArg> args;
  bool operator==(const TraceEventDef&) const = default;

  // A line read back from the kernel that kprobectl could not read whole
  // (a newer kernel's syntax): the line as it is, with only its group and
  // event known. Such a definition is listed and deleted, never rewritten.
  std::string unread;
  std::string FullName() const { return group + ":" + event; }
  // "GROUP/EVENT": its directory under tracefs' events/, and the key events
  // are known by in sets and maps.
  std::string Path() const { return group + "/" + event; }
};

// A probe on a return instruction of a function (Go's FUNC%return): that
// function's entry, and the register that tells its calls apart where a
// thread does not (Go's goroutine: "r14"; empty: the thread).
struct ReturnSite {
  ProbeTarget entry;
  std::string call_register;
};

// The file a definition is written to and read from: kprobe_events,
// uprobe_events, or dynamic_events for fprobes and tracepoint probes.
std::string_view EventsFileOf(const TraceEventDef& def);

std::string FormatTarget(const ProbeTarget& target);
std::string FormatFetchArg(const FetchArg& arg);
std::string FormatDefinition(const TraceEventDef& def);
// The line that removes the event: "-:GRP/EV".
std::string FormatDeletion(std::string_view group, std::string_view event);

// `kind` says which file the line came from; a kernel line may be p, r, f or t.
Result<TraceEventDef> ParseDefinition(std::string_view line, ProbeKind kind);
Result<FetchArg> ParseFetchArg(std::string_view text);

}  // namespace kprobectl
