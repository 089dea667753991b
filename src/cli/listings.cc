// SPDX-License-Identifier: GPL-2.0-or-later
//
// line (-L) and vars (-V): what can be probed, in perf's layout.
#include <iomanip>
#include <sstream>

#include "commands.h"
#include "kprobectl/glob.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

// "compute+4" for an address, from the ELF symbols.
std::string SymbolOffset(const ElfImage& image, uint64_t address) {
  const ElfSymbol* f = image.FunctionAt(address);
  if (!f) return Hex(address);
  return f->name + "+" + std::to_string(address - f->value);
}

std::string RangesText(const ElfImage& image, uint64_t function_start, const std::string& function,
                       const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::vector<std::string> parts;
  for (const auto& [start, end] : ranges) {
    if (end <= function_start) continue;
    uint64_t s = start < function_start ? 0 : start - function_start;
    parts.push_back(std::to_string(s) + "-" + std::to_string(end - function_start));
  }
  (void)image;
  return "@<" + function + "+[" + Join(parts, ",") + "]>";
}

}  // namespace

Result<void> RunLine(const Options& options, const std::string& text, Streams io) {
  LineRange range = KP_TRY(ParseLineRange(text));
  TargetFiles files = KP_TRY(OpenTargetFiles(options, io.err, /*need_symbols=*/false));
  Debuginfo* debuginfo = KP_TRY(RequireDebuginfo(files));
  FindOptions find{!options.no_inlines, options.source_dirs};
  SourceListing listing = KP_TRY(debuginfo->Listing(range, find));
  ReportIndex(files, options, io.err);
  io.out << listing.header << "\n";
  if (!listing.have_source)
    io.err << "kprobectl: the source of " << listing.path << " was not found (looked at "
           << Join(listing.searched, ", ") << "); showing the lines that have code\n"
           << "  hint: give the source tree's top with -s DIR\n";
  for (const SourceListing::Line& line : listing.lines) {
    if (line.probeable) io.out << std::setw(7) << line.shown << "  " << line.text << "\n";
    else io.out << "         " << line.text << "\n";
  }
  return {};
}

Result<void> RunVars(const Options& options, const std::string& text, Streams io) {
  ProbeSpec spec = KP_TRY(ParseProbeSpec(text));
  TargetFiles files = KP_TRY(OpenTargetFiles(options, io.err));
  Debuginfo* debuginfo = KP_TRY(RequireDebuginfo(files));
  FindOptions find{!options.no_inlines, options.source_dirs};
  std::vector<DwarfAddress> addresses;
  if (spec.point.address) addresses.push_back(KP_TRY(debuginfo->AtAddress(*spec.point.address)));
  else addresses = KP_TRY(debuginfo->Resolve(spec.point, find));
  ReportIndex(files, options, io.err);
  // Where add would put a probe that fetches variables (after the
  // prologue of unoptimized code).
  if (!spec.point.line && !spec.point.lazy_pattern && !spec.point.offset && !spec.point.retprobe && !spec.point.address)
    for (DwarfAddress& at : addresses) at = debuginfo->AfterPrologue(at);
  io.out << "Available variables at " << DescribePoint(spec.point) << "\n";
  for (const DwarfAddress& at : addresses) {
    io.out << "\t@<" << SymbolOffset(*files.image, at.address) << ">";
    if (at.inlined) io.out << " (" << at.function << " inlined)";
    io.out << "\n";
    auto vars = KP_TRY(debuginfo->Variables(at, options.externs));
    const ElfSymbol* f = files.image->FunctionAt(at.address);
    bool any = false;
    for (const VariableInfo& v : vars) {
      if (!v.available && !options.ranges) continue;
      any = true;
      io.out << "\t\t";
      if (options.ranges) io.out << (v.available ? "[VAL]\t" : "[INV]\t");
      if (v.external) io.out << "(extern) ";
      io.out << v.c_type << "\t" << v.name;
      if (options.ranges && f && !v.external) io.out << "\t" << RangesText(*files.image, f->value, f->name, v.ranges);
      io.out << "\n";
    }
    if (!any) io.out << "\t\t(No matched variables)\n";
  }
  return {};
}

}  // namespace kprobectl::cli
