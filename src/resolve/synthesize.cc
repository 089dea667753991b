// SPDX-License-Identifier: GPL-2.0-or-later
//
// The last passes: unique event names, then the definitions themselves,
// with each typed argument written as a fetcharg in the target
// architecture's registers.
//
// @SYMBOL of a user probe becomes @+OFFSET, the uprobe form that is
// relative to where the probed file is mapped and so survives PIE and
// ASLR. The kernel computes the address as (the probe's runtime address -
// the probe's file offset) + OFFSET (translate_user_vaddr() in
// kernel/trace/trace_uprobe.c). Despite the documentation's "offset from
// the file", OFFSET is therefore not the symbol's file offset: it is its
// virtual address less (vaddr - offset) of the segment holding the probe.
// Measured: the file offset reads the wrong bytes when .data's
// vaddr-offset delta differs from .text's, as it does in every gcc binary.
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl {

std::string Dereference(int64_t offset, bool user, const std::string& inner) {
  // The magnitude as unsigned: -INT64_MIN does not fit an int64_t.
  uint64_t magnitude = offset < 0 ? 0 - static_cast<uint64_t>(offset) : static_cast<uint64_t>(offset);
  return (offset < 0 ? "-" : "+") + std::string(user ? "u" : "") + std::to_string(magnitude) + "(" + inner + ")";
}

std::string UprobeMemoryRef(const ElfImage& image, uint64_t probe_address, uint64_t target) {
  for (const LoadSegment& seg : image.segments())
    if (probe_address >= seg.vaddr && probe_address < seg.vaddr + seg.filesz)
      return "@+" + Hex(target - (seg.vaddr - seg.offset));
  return "@+" + Hex(target);  // unreachable for a resolved probe: its address is in code
}

std::string KernelMemoryRef(const ElfImage& image, uint64_t target) {
  const ElfSymbol* sym = image.ObjectAt(target);
  if (!sym) sym = image.FunctionAt(target);
  if (sym && image.CountNamed(sym->name, sym->type) == 1) {
    uint64_t off = target - sym->value;
    return "@" + sym->name + (off ? "+" + std::to_string(off) : "");
  }
  // A static whose name several symbols share: kallsyms would find the
  // first, so count from _text (arm64: _stext), which KASLR moves with
  // everything else.
  std::string_view anchor = KernelTextSymbol(image);
  if (const ElfSymbol* text = image.Find(anchor); text && target >= text->value)
    return "@" + std::string(anchor) + "+" + std::to_string(target - text->value);
  return "@" + Hex(target);
}

Result<ProbeTarget> KernelTarget(const ElfImage& image, uint64_t address) {
  ProbeTarget t;
  if (!image.module().empty()) {
    // MOD:SYMBOL+OFF: the kernel looks the name up in that module only.
    const ElfSymbol* f = image.FunctionAt(address);
    if (!f) return Fail("no function of module " + image.module() + " holds " + Hex(address));
    if (image.CountNamed(f->name, ElfSymbol::kFunction) > 1)
      return Fail("module " + image.module() + " has " +
                  std::to_string(image.CountNamed(f->name, ElfSymbol::kFunction)) + " functions named '" + f->name +
                  "'; the kernel would probe the first");
    t.module = image.module();
    t.symbol = f->name;
    t.offset = address - f->value;
    return t;
  }
  const ElfSymbol* sym = image.FunctionAt(address);
  if (sym && image.CountNamed(sym->name, ElfSymbol::kFunction) == 1) {
    t.symbol = sym->name;
    t.offset = address - sym->value;
    return t;
  }
  std::string anchor(KernelTextSymbol(image));
  const ElfSymbol* text = image.Find(anchor);
  if (!text || address < text->value)
    return Fail("no unique symbol holds " + Hex(address) + ", and the image has no " + anchor + " to count from");
  t.symbol = anchor;
  t.offset = address - text->value;
  return t;
}

Result<ProbeTarget> TargetAt(ProbeKind kind, const ElfImage& image, uint64_t address) {
  if (kind == ProbeKind::kKernel) return KernelTarget(image, address);
  ProbeTarget t;
  t.kind = ProbeTarget::kFile;
  t.path = image.path();
  t.offset = KP_TRY(image.CodeFileOffset(address));
  return t;
}

std::optional<uint64_t> KernelImageAddress(const ElfImage& image, const ProbeTarget& t) {
  if (t.kind == ProbeTarget::kAddress)
    return image.module().empty() ? std::optional<uint64_t>(t.address) : std::nullopt;
  if (t.kind != ProbeTarget::kSymbol || t.module != image.module()) return std::nullopt;
  const ElfSymbol* s = image.Find(t.symbol);
  if (!s || (t.symbol != KernelTextSymbol(image) && image.CountNamed(t.symbol, ElfSymbol::kFunction) != 1))
    return std::nullopt;
  return s->value + t.offset;
}

Result<FetchArg> SynthesizeArg(const TypedFetch& fetch, const Arch& arch, ProbeKind kind, const ElfImage* image,
                               uint64_t address) {
  const FetchRoot& r = fetch.root;
  std::string text;
  size_t first_deref = 0;
  switch (r.kind) {
    case FetchRoot::kDwarfRegister: {
      auto reg = arch.DwarfRegisterName(static_cast<unsigned>(r.number));
      if (!reg) return Fail("DWARF register " + std::to_string(r.number) + " has no name the kernel knows");
      text = "%" + std::string(*reg);
      break;
    }
    case FetchRoot::kRegister:
      text = "%" + r.name;
      break;
    case FetchRoot::kArgument:
      // A Go function's arguments are where Go's own ABI puts them, not
      // the psABI's: decided by the Go version the binary names.
      text = image && image->go()
                 ? KP_TRY(arch.GoArgumentAtEntry(static_cast<unsigned>(r.number), image->go_register_abi()))
                 : arch.ArgumentAtEntry(static_cast<unsigned>(r.number));
      break;
    case FetchRoot::kReturnArgument:
      text = "$arg" + std::to_string(r.number);
      break;
    case FetchRoot::kReturnValue:
      text = "$retval";
      break;
    case FetchRoot::kComm:
      text = "$comm";
      break;
    case FetchRoot::kStack:
      text = "$stack";
      break;
    case FetchRoot::kStackEntry:
      text = "$stack" + std::to_string(r.number);
      break;
    case FetchRoot::kStatic: {
      if (!image || fetch.derefs.empty()) return Fail("a static address needs its image and a load");
      uint64_t target = r.number + static_cast<uint64_t>(fetch.derefs[0].offset);
      text = kind == ProbeKind::kUser ? UprobeMemoryRef(*image, address, target) : KernelMemoryRef(*image, target);
      first_deref = 1;
      break;
    }
    case FetchRoot::kKernelSymbol:
      text = "@" + r.name + (r.value > 0 ? "+" + std::to_string(r.value) : r.value < 0 ? std::to_string(r.value) : "");
      break;
    case FetchRoot::kFileOffset:
      text = "@+" + Hex(r.number);
      break;
    case FetchRoot::kAbsolute:
      text = "@" + Hex(r.number);
      break;
    case FetchRoot::kImmediate:
      text = "\\" + r.name;
      break;
    case FetchRoot::kConstant:
      text = "\\" + std::to_string(r.value);
      break;
    case FetchRoot::kKernelName:
      text = r.name;
      break;
  }
  for (size_t i = first_deref; i < fetch.derefs.size(); ++i)
    text = Dereference(fetch.derefs[i].offset, fetch.derefs[i].user, text);
  return FetchArg{fetch.name, text, fetch.type ? FormatFetchType(*fetch.type) : std::string(), fetch.at_entry};
}

void AddStackCapture(TraceEventDef& def, const Arch& arch, unsigned chunks) {
  for (const Arch::UnwindRegister& r : arch.unwind_registers())
    def.args.push_back(
        {std::string(kCaptureRegisterPrefix) + std::to_string(r.dwarf), "%" + std::string(r.name), "x64"});
  std::string sp = "%" + std::string(arch.stack_pointer());
  for (unsigned i = 0; i < chunks; ++i)
    def.args.push_back({std::string(kCaptureStackPrefix) + std::to_string(i),
                        Dereference(static_cast<int64_t>(i) * kCaptureChunkBytes, false, sp),
                        "x64[" + std::to_string(kCaptureChunkBytes / 8) + "]"});
}

Result<void> NameEvents(Resolution& resolution, EventNamer& namer) {
  for (ResolvedProbe& probe : resolution.probes)
    for (ResolvedLocation& loc : probe.locations)
      loc.event = KP_TRY(namer.Take(probe.group, loc.event_base, probe.retprobe, loc.extra));
  return {};
}

Result<std::vector<TraceEventDef>> Synthesize(const Resolution& resolution, const Target& target) {
  std::vector<TraceEventDef> defs;
  for (const ResolvedProbe& probe : resolution.probes)
    for (const ResolvedLocation& loc : probe.locations) {
      TraceEventDef def;
      def.kind = probe.kind;
      def.type = probe.type;
      def.retprobe = probe.retprobe;
      def.maxactive = probe.maxactive;
      def.group = probe.group;
      def.event = loc.event;
      def.target = loc.target;
      for (const TypedFetch& fetch : loc.args)
        def.args.push_back(KP_TRY(SynthesizeArg(fetch, *target.arch, probe.kind, target.image.get(), loc.address)));
      defs.push_back(std::move(def));
    }
  return defs;
}

std::string DescribeOrigin(const ProbeOrigin& o, bool retprobe) {
  if (!o.marker.empty()) return "%" + o.marker;
  if (o.function.empty()) return {};
  std::string file = o.decl.file.empty() ? o.at.file : o.decl.file;
  if (file.empty()) return {};
  if (o.entry || retprobe) return o.function + (retprobe ? "%return" : "") + "@" + file;
  if (o.line_start && o.at.file == o.decl.file && o.at.line >= o.decl.line)
    return o.function + ":" + std::to_string(o.at.line - o.decl.line) + "@" + file;
  if (!o.symbol.empty()) return o.symbol + "+" + std::to_string(o.symbol_offset) + "@" + file;
  return o.function + "@" + file;
}

std::string SourceOfDefinition(const TraceEventDef& def, const ElfImage* image, Debuginfo* debuginfo) {
  if (image && def.target.kind == ProbeTarget::kFile && !def.retprobe)
    if (auto address = image->VirtualAddress(def.target.offset))
      for (const SdtNote& note : image->sdt_notes())
        if (note.address == *address) return "%sdt_" + note.provider + ":" + note.name;
  if (!image || !debuginfo) return {};
  auto address = def.target.kind == ProbeTarget::kFile ? image->VirtualAddress(def.target.offset)
                                                       : KernelImageAddress(*image, def.target);
  if (!address) return {};
  auto at = debuginfo->BeginningAt(*address);
  // arm64's return probe is at the symbol, before ftrace's patchable NOPs,
  // which no DWARF function covers: its function is the one after them.
  const ElfSymbol* symbol = image->FunctionAt(*address);
  if ((!at || at->function.empty()) && def.retprobe && symbol && symbol->value == *address && image->arch())
    at = debuginfo->BeginningAt(*address + image->arch()->patchable_entry());
  if (!at || at->function.empty()) return {};
  ProbeOrigin o;
  o.function = at->function;
  o.decl = at->decl;
  o.at = at->at;
  o.entry = at->entry;
  o.line_start = at->line_start;
  if (symbol) {
    o.symbol = symbol->name;
    o.symbol_offset = *address - symbol->value;
  }
  return DescribeOrigin(o, def.retprobe);
}

}  // namespace kprobectl
