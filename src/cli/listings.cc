// SPDX-License-Identifier: GPL-2.0-or-later
//
// line (-L) and vars (-V): what can be probed, in perf's layout.
#include <iomanip>
#include <sstream>

#include "commands.h"
#include "kprobectl/cxx_names.h"
#include "kprobectl/glob.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

std::string RangesText(uint64_t function_start, uint64_t function_size, const std::string& function,
                       const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::vector<std::string> parts;
  // A location of one expression holds everywhere ([0, -1)): the function's
  // own code, then.
  const uint64_t function_end = function_size ? function_start + function_size : UINT64_MAX;
  for (const auto& [start, end] : ranges) {
    if (end <= function_start || start >= function_end) continue;
    uint64_t s = start < function_start ? 0 : start - function_start;
    parts.push_back(std::to_string(s) + "-" + std::to_string(std::min(end, function_end) - function_start));
  }
  return "@<" + function + "+[" + Join(parts, ",") + "]>";
}

// A struct split over several places (DW_OP_piece, or two argument
// registers): which of its members can be fetched, each lying in one.
std::string PiecesNote(const std::vector<std::string>& members, const std::vector<std::string>& refused) {
  if (members.empty()) return "(in pieces, none of its members in one of them)";
  std::string note = "(in pieces: " + Join(members, " ");
  if (!refused.empty()) note += "; not " + Join(refused, " ");
  return note + ")";
}

}  // namespace

Result<void> RunLine(const Options& options, const std::string& text, Streams io) {
  LineRange range = KP_TRY(ParseLineRange(text));
  Target target = KP_TRY(OpenTargetOf(options, io.err, /*need_symbols=*/false));
  // Without the kernel's DWARF there is no listing, but a wrong name is
  // said first, with the nearest ones.
  if (!target.debuginfo && target.kind == Target::kRunningKernel)
    KP_TRY_VOID(CheckKernelFunction(range.function, target, ReadSystemView(nullptr, options.env, target, false)));
  FindOptions find{!options.no_inlines, options.source_dirs};
  SourceListing listing = KP_TRY(ListSource(range, target, find));
  ReportIndex(target, options, io.err);
  io.out << listing.header << "\n";
  if (!listing.have_source)
    io.err << "kprobectl: the source of " << listing.path << " was not found (looked at "
           << Join(listing.searched, ", ") << "); showing the lines that have code\n"
           << "  hint: give the source tree's top with -s DIR\n";
  for (const SourceListing::Line& line : listing.lines) {
    if (line.probeable)
      io.out << std::setw(7) << line.shown << "  " << line.text << "\n";
    else
      io.out << "         " << line.text << "\n";
  }
  return {};
}

namespace {

std::string AtText(const ResolvedLocation& loc, uint64_t address) {
  return "\t@<" +
         (loc.origin.symbol.empty()
              ? Hex(address)
              : DisplaySymbol(loc.origin.symbol) + "+" + std::to_string(loc.origin.symbol_offset)) +
         ">";
}

// A kernel without DWARF: what its BTF knows at the function's entry (the
// parameters) or its return (the return value).
Result<void> PrintBtfVars(const ProbeSpec& spec, const Resolution& resolution, const BtfInfo& btf,
                          const GlobFilter& filter, Streams io) {
  for (const ResolvedLocation& loc : resolution.probes.front().locations) {
    io.out << AtText(loc, 0) << " (BTF: " << (spec.point.retprobe ? "the return value" : "the parameters at entry")
           << ")\n";
    if (spec.point.retprobe) {
      auto ret = btf.ReturnType(loc.origin.function);
      io.out << "\t\t" << (ret ? ret->second + "\t$retval" : std::string("(No matched variables)")) << "\n";
      continue;
    }
    auto params = KP_TRY(btf.Parameters(loc.origin.function));
    std::erase_if(params, [&](const BtfParameter& p) { return !filter.Matches(p.name); });
    for (const BtfParameter& p : params) {
      io.out << "\t\t" << p.c_type << "\t" << p.name;
      if (p.in_pieces) io.out << "\t" << PiecesNote(p.piece_members, p.pieces_refused);
      io.out << "\n";
    }
    if (params.empty()) io.out << "\t\t(No matched variables)\n";
  }
  return {};
}

}  // namespace

// A USDT marker's arguments at each of its sites: their type (from their
// size), name, and where the kernel reads them.
Result<void> PrintMarkerVars(const Resolution& resolution, const Target& target, Streams io) {
  for (const ResolvedLocation& loc : resolution.probes.front().locations) {
    io.out << AtText(loc, loc.address) << " (" << loc.origin.marker << ")\n";
    for (const TypedFetch& fetch : loc.args) {
      FetchArg arg = KP_TRY(SynthesizeArg(fetch, *target.arch, ProbeKind::kUser, target.image.get(), loc.address));
      io.out << "\t\t" << (arg.type.empty() ? "x64" : arg.type) << "\t" << arg.name << "\t(" << arg.fetch << ")\n";
    }
    if (loc.args.empty()) io.out << "\t\t(No matched variables)\n";
  }
  return {};
}

// An event probe's point: the event's fields, how each is read whole, and
// what a pointer field leads to (its members, through BTF).
Result<void> PrintEventVars(const ProbeSpec& spec, const Options& options, Streams io) {
  auto dir = KP_TRY(OpenTracefs(options, /*may_mount=*/false));
  Target target = KP_TRY(OpenTargetOf(options, io.err, true, /*btf_types=*/true));
  SystemView system = ReadSystemView(dir.get(), options.env, target, false);
  auto fields = KP_TRY(DescribeEventFields(spec, target, system));
  const ProbePoint& p = spec.point;
  io.out << "Available variables at " << DescribePoint(p) << "\n\t(the fields of " << p.event_system << ":"
         << p.event_name << (p.event_system == "syscalls" ? "; its pointers lead to user memory" : "") << ")\n";
  for (const EventFieldView& f : fields) {
    io.out << "\t\t" << f.field.c_type << "\t" << f.field.name << "\t";
    io.out << (f.fetch.empty() ? "(cannot be read: " + f.why_not + ")" : f.fetch);
    if (!f.points_to.empty()) io.out << "\t(->MEMBER of " << f.points_to << ")";
    io.out << "\n";
  }
  if (fields.empty()) io.out << "\t\t(No matched variables)\n";
  return {};
}

Result<void> RunVars(const Options& options, const std::string& text, Streams io) {
  ProbeSpec spec = KP_TRY(ParseProbeSpec(text));
  if (!spec.point.event_name.empty()) return PrintEventVars(spec, options, io);
  // --filter: the variables to show, by name (perf's -V --filter).
  GlobFilter filter = KP_TRY(GlobFilter::Parse(options.filter.empty() ? "*" : options.filter));
  Target target = KP_TRY(OpenTargetOf(options, io.err));
  bool marker = !spec.point.sdt_name.empty();
  if (marker) {
    SystemView system = ReadSystemView(nullptr, options.env, target, false);
    Resolution resolution = KP_TRY(Resolve({spec}, target, system, ResolveOptionsOf(options)));
    ReportResolution(resolution, options, io.err);
    io.out << "Available variables at " << DescribePoint(spec.point) << "\n";
    return PrintMarkerVars(resolution, target, io);
  }
  if (!target.btf) (void)KP_TRY(target.RequireDebuginfo());
  SystemView system = ReadSystemView(nullptr, options.env, target, false);
  ResolveOptions resolve = ResolveOptionsOf(options);
  resolve.for_variables = true;
  Resolution resolution = KP_TRY(Resolve({spec}, target, system, resolve));
  ReportResolution(resolution, options, io.err);
  ReportIndex(target, options, io.err);
  if (!target.debuginfo) {
    // Printed once every location is known to have a prototype.
    std::ostringstream listing;
    KP_TRY_VOID(PrintBtfVars(spec, resolution, *target.btf, filter, {listing, io.err}));
    io.out << "Available variables at " << DescribePoint(spec.point) << "\n" << listing.str();
    return {};
  }
  io.out << "Available variables at " << DescribePoint(spec.point) << "\n";
  for (const ResolvedLocation& loc : resolution.probes.front().locations) {
    const DwarfAddress& at = *loc.dwarf;
    io.out << AtText(loc, at.address);
    if (at.inlined) io.out << " (" << at.function << " inlined)";
    io.out << "\n";
    auto vars = KP_TRY(target.debuginfo->Variables(at, options.externs));
    std::erase_if(vars, [&](const VariableInfo& v) { return !filter.Matches(v.name); });
    const ElfSymbol* f = target.image->FunctionAt(at.address);
    const Debuginfo::Language language = target.debuginfo->LanguageAt(at);
    bool any = false;
    for (const VariableInfo& v : vars) {
      if (!v.available && !options.ranges) continue;
      any = true;
      io.out << "\t\t";
      if (options.ranges) io.out << (v.available ? "[VAL]\t" : "[INV]\t");
      if (v.external) io.out << "(extern) ";
      io.out << v.c_type << "\t" << v.name;
      if (options.ranges && f && !v.external)
        io.out << "\t" << RangesText(f->value, f->size, DisplaySymbol(f->name), v.ranges);
      // A string or slice named whole is fetched as its bytes cut at its length.
      if (auto counted = CountedStringKind(v.underlying_type, language))
        io.out << "\t(" << *counted << ": '" << v.name << "' whole is its bytes, cut at " << v.name << "__len)";
      if (v.in_pieces) io.out << "\t" << PiecesNote(v.piece_members, v.pieces_refused);
      io.out << "\n";
    }
    if (!any) io.out << "\t\t(No matched variables)\n";
  }
  return {};
}

}  // namespace kprobectl::cli
