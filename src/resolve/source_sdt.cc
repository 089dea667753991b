// SPDX-License-Identifier: GPL-2.0-or-later
//
// USDT markers (the SDT notes of a binary): [%][sdt_]PROVIDER:NAME gives a
// uprobe at every site of the marker, in group sdt_PROVIDER, named NAME,
// NAME_1... as perf names them. A marker's arguments are arg1..argN (or
// $arg1..), each read as its operand in the note says, typed by its size
// (-4@ is s32, 8@ u64); with no argument written, every one the kernel's
// fetchargs can read, as perf fetches them. A marker with a semaphore gets
// the semaphore's file offset as the uprobe's reference counter, so the
// kernel raises it in every process that maps the file while the probe
// exists (uprobe_register_refctr(), Linux 4.20).
#include <algorithm>
#include <cctype>
#include <set>

#include "kprobectl/glob.h"
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

namespace {

bool ProviderMatches(std::string_view pattern, std::string_view provider) {
  return GlobMatch(pattern, provider) || (pattern.starts_with("sdt_") && GlobMatch(pattern.substr(4), provider));
}

std::string MarkerName(const SdtNote& note) { return "sdt_" + note.provider + ":" + note.name; }

Result<std::vector<const SdtNote*>> Matching(const ProbePoint& p, const ElfImage& image) {
  std::vector<const SdtNote*> out;
  std::set<std::string> providers;
  for (const SdtNote& note : image.sdt_notes())
    if (ProviderMatches(p.sdt_provider, note.provider) && GlobMatch(p.sdt_name, note.name)) {
      out.push_back(&note);
      providers.insert(note.provider);
    }
  if (out.empty()) {
    std::string what = "no USDT marker " + DescribePoint(p).substr(1) + " in " + image.path();
    if (image.sdt_notes().empty())
      return Fail(what + ": it has no SDT notes (.note.stapsdt)",
                  "a name followed by ':' and a name is a marker; a line of a function is FUNC:LINE, "
                  "a C++ scope is NS::NAME");
    return Fail(what, "list its markers with 'kprobectl -x " + image.path() + " funcs --sdt'");
  }
  if (providers.size() > 1)
    return Fail("'" + DescribePoint(p).substr(1) + "' matches markers of several providers (" +
                    Join(std::vector<std::string>(providers.begin(), providers.end()), ", ") + ") in " + image.path(),
                "name one provider: each provider's events are a group of their own");
  return out;
}

FetchType TypeOfSize(const SdtOperand& op) {
  return FetchType::Integer(op.is_signed ? FetchType::kSigned : FetchType::kUnsigned, op.size * 8);
}

// Where the operand's value is: a register, memory, a constant.
Result<TypedFetch> OperandFetch(const SdtOperand& op, const ElfImage& image, const ArgContext& ctx) {
  TypedFetch out;
  switch (op.kind) {
    case SdtOperand::kRegister:
      out.root = FetchRoot::Named(FetchRoot::kRegister, op.reg);
      break;
    case SdtOperand::kMemory:
      out.root = FetchRoot::Named(FetchRoot::kRegister, op.reg);
      out.derefs.push_back({op.displacement, false});
      break;
    case SdtOperand::kImmediate:
      if (!ctx.features->immediates) return Fail("this kernel's fetchargs take no constants (\\IMM, Linux 5.3)");
      // The kernel reads \IMM as an unsigned long: a negative one as its
      // two's complement, which the signed type reads back.
      out.root = FetchRoot::Named(FetchRoot::kImmediate, op.immediate < 0 ? Hex(static_cast<uint64_t>(op.immediate))
                                                                          : std::to_string(op.immediate));
      break;
    case SdtOperand::kStatic: {
      uint64_t address = static_cast<uint64_t>(op.displacement);
      if (!op.symbol.empty()) {
        const ElfSymbol* found = nullptr;
        for (const ElfSymbol& s : image.symbols())
          if (s.name == op.symbol && s.type != ElfSymbol::kOther && (!found || s.global)) found = &s;
        if (!found)
          return Fail("it reads '" + op.symbol + "', which is not in the symbol table of " + image.path() +
                      " (stripped?)");
        address += found->value;
      } else if (image.shared_object()) {
        return Fail("it reads an absolute address in a position-independent file");
      }
      out.root = FetchRoot::Of(FetchRoot::kStatic, address);
      out.derefs.push_back({0, false});  // the load @+OFF itself makes
      break;
    }
  }
  out.type = TypeOfSize(op);
  return out;
}

// Marker argument N (1-based) of `note`, or why it cannot be read.
Result<TypedFetch> MarkerArgument(const SdtNote& note, size_t n, const ElfImage& image, const ArgContext& ctx) {
  std::vector<std::string> args = SplitSdtArguments(note.args);
  if (n == 0 || n > args.size())
    return Fail(MarkerName(note) + " has " + std::to_string(args.size()) + " argument" + (args.size() == 1 ? "" : "s") +
                    ", no arg" + std::to_string(n),
                args.empty() ? "it takes none" : "its arguments are arg1..arg" + std::to_string(args.size()));
  auto op = ctx.arch->ParseSdtArgument(args[n - 1]);
  auto fetch = op ? OperandFetch(*op, image, ctx) : std::unexpected(op.error());
  if (!fetch)
    return Fail("arg" + std::to_string(n) + " of " + MarkerName(note) + " (" + args[n - 1] +
                    ") cannot be fetched: " + fetch.error().message,
                "fetch the other arguments; this one needs the program's registers at the marker (%REG)");
  fetch->name = "arg" + std::to_string(n);
  return fetch;
}

// arg3 or $arg3: the marker argument's number; 0 for anything else.
size_t ArgumentNumber(const ArgExpr& e) {
  if (e.kind == ArgKind::kArg) return e.number;
  if (e.kind != ArgKind::kVariable || !e.accessors.empty() || !e.name.starts_with("arg")) return 0;
  auto n = ParseUnsigned(std::string_view(e.name).substr(3));
  return n && std::isdigit(static_cast<unsigned char>(e.name[3])) ? static_cast<size_t>(*n) : 0;
}

// A written argument that names a marker argument, with its :TYPE, its
// +OFF(...) and NAME=. A string or array type reads what the value points to.
Result<TypedFetch> WrittenArgument(const ProbeSpec& spec, const ProbeArg& arg, size_t n, const SdtNote& note,
                                   const ElfImage& image, const ArgContext& ctx) {
  auto fetch = MarkerArgument(note, n, image, ctx);
  if (!fetch) return ArgError(spec, arg.expr.pos, fetch.error().message, fetch.error().hint);
  for (const ArgDeref& d : arg.expr.derefs) fetch->derefs.push_back(d);
  if (!arg.type.empty()) {
    FetchType type = KP_TRY(CheckArgType(spec, arg, ctx));
    if ((type.ReadsString() || type.array_len) && arg.expr.derefs.empty()) fetch->derefs.push_back({0, false});
    fetch->type = type;
  } else if (!arg.expr.derefs.empty()) {
    fetch->type.reset();  // memory the note says nothing of: the kernel's default
  }
  if (!arg.name.empty()) fetch->name = arg.name;
  KP_TRY_VOID(CheckDepth(spec, arg, *fetch));
  return fetch;
}

// Every argument of the marker; those fetchargs cannot read are left out,
// saying why.
std::vector<TypedFetch> AllArguments(const SdtNote& note, const ElfImage& image, const ArgContext& ctx,
                                     std::vector<std::string>* left_out) {
  std::vector<TypedFetch> out;
  size_t count = SplitSdtArguments(note.args).size();
  for (size_t n = 1; n <= count; ++n) {
    auto fetch = MarkerArgument(note, n, image, ctx);
    if (fetch)
      out.push_back(std::move(*fetch));
    else if (left_out)
      left_out->push_back("note: " + fetch.error().message + "; it is left out");
  }
  return out;
}

Result<std::vector<TypedFetch>> Arguments(const ProbeSpec& spec, const SdtNote& note, const ElfImage& image,
                                          const ArgContext& ctx, std::vector<std::string>* left_out) {
  std::vector<TypedFetch> out;
  std::vector<const ProbeArg*> from;
  if (spec.args.empty()) {
    out = AllArguments(note, image, ctx, left_out);
    from.assign(out.size(), nullptr);
  }
  for (size_t i = 0; i < spec.args.size(); ++i) {
    const ProbeArg& arg = spec.args[i];
    if (arg.expr.kind == ArgKind::kVars || arg.expr.kind == ArgKind::kParams) {
      for (TypedFetch& fetch : AllArguments(note, image, ctx, left_out)) {
        out.push_back(std::move(fetch));
        from.push_back(nullptr);
      }
      continue;
    }
    if (size_t n = ArgumentNumber(arg.expr)) {
      out.push_back(KP_TRY(WrittenArgument(spec, arg, n, note, image, ctx)));
    } else if (arg.expr.kind == ArgKind::kVariable) {
      size_t count = SplitSdtArguments(note.args).size();
      return ArgError(spec, arg.expr.pos,
                      "'" + arg.expr.name + "' is not an argument of " + MarkerName(note) +
                          (arg.expr.accessors.empty() ? "" : " (a marker's arguments have no type to take members of)"),
                      count ? "its arguments are arg1..arg" + std::to_string(count) + "; read memory with +OFF(argN)"
                            : "it has no arguments");
    } else {
      out.push_back(KP_TRY(RawArg(spec, i, ctx)));  // %REG, $comm, @SYM...
    }
    from.push_back(&arg);
  }
  KP_TRY_VOID(FinishArgs(spec, out, from));
  return out;
}

}  // namespace

Result<std::vector<ResolvedLocation>> LocateSdt(const ProbeSpec& spec, const Target& target, const SystemView& system,
                                                std::vector<std::string>* left_out) {
  const ProbePoint& p = spec.point;
  if (!target.kernel() && !target.image) return Fail("no binary to look for USDT markers in");
  if (target.kernel())
    return Fail("'" + DescribePoint(p).substr(1) + "' is a USDT marker, which user-space binaries have",
                "name the binary with -x: kprobectl -x /usr/bin/python3 add 'sdt_python:function__entry'");
  const ElfImage& image = *target.image;
  if (image.path().find_first_of(" \t\n") != std::string::npos)
    return Fail("the path '" + image.path() + "' has a blank, which uprobe_events cannot take",
                "probe it through a symbolic link whose path has no blanks");
  std::vector<ResolvedLocation> out;
  std::vector<std::string> dropped;  // once for a marker at several sites
  for (const SdtNote* note : KP_TRY(Matching(p, image))) {
    ResolvedLocation loc;
    loc.address = note->address;
    loc.target = KP_TRY(TargetAt(ProbeKind::kUser, image, note->address));
    if (note->semaphore) {
      if (!system.features.ref_ctr_offset)
        return Fail(MarkerName(*note) +
                        " has a semaphore, which this kernel's uprobes cannot raise "
                        "(its tracefs README has no ref_ctr_offset)",
                    "Linux 4.20 and later raise semaphores; on this kernel the program runs the marker only when "
                    "something else sets " +
                        Hex(note->semaphore));
      loc.target.ref_ctr_offset = KP_TRY(image.FileOffset(note->semaphore));
    }
    loc.origin.marker = MarkerName(*note);
    loc.origin.source = "the SDT notes";
    if (const ElfSymbol* f = image.FunctionAt(note->address)) {
      loc.origin.function = f->name;
      loc.origin.symbol = f->name;
      loc.origin.symbol_offset = note->address - f->value;
    }
    loc.event_base = !spec.event.empty() ? spec.event : EventBaseFromSymbol(note->name);
    ArgContext ctx{target.arch, ProbeKind::kUser, false, false, &system.features, &image, note->address};
    loc.args = KP_TRY(Arguments(spec, *note, image, ctx, &dropped));
    out.push_back(std::move(loc));
  }
  for (std::string& line : dropped)
    if (left_out && std::find(left_out->begin(), left_out->end(), line) == left_out->end())
      left_out->push_back(std::move(line));
  return out;
}

}  // namespace kprobectl::resolve
