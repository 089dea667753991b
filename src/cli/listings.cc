// SPDX-License-Identifier: GPL-2.0-or-later
//
// line (-L) and vars (-V): what can be probed, in perf's layout.
#include <iomanip>
#include <optional>
#include <sstream>

#include "commands.h"
#include "kprobectl/cxx_names.h"
#include "kprobectl/glob.h"
#include "kprobectl/json_object.h"
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

// "compute+4" (or the address): where a location is, as perf names it.
std::string AtName(const ResolvedLocation& loc, uint64_t address) {
  return loc.origin.symbol.empty() ? Hex(address)
                                   : DisplaySymbol(loc.origin.symbol) + "+" + std::to_string(loc.origin.symbol_offset);
}

std::string AtText(const ResolvedLocation& loc, uint64_t address) { return "\t@<" + AtName(loc, address) + ">"; }

// vars' answer in perf's layout ("Available variables at POINT", a line per
// location, a line per variable) or as JSON, one object per location
// ({"point":..,"at":..,"variables":[..]}); written whole at the end, once
// every location could be described.
class VarsListing {
 public:
  VarsListing(bool json, std::string point, std::string note = {}) : json_(json), point_(std::move(point)) {
    if (!json_) out_ = "Available variables at " + point_ + "\n" + note;
  }
  // A location's object starts with the point.
  JsonObject Object() const { return JsonObject().String("point", point_); }
  // `text`: its line (none when empty); `json`: its object, Object()'s.
  void Location(const std::string& text, JsonObject json) {
    Close();
    if (!json_ && !text.empty()) out_ += text + "\n";
    location_ = std::move(json);
  }
  // `text`: the variable's line after its indent; `json`: its object.
  void Variable(const std::string& text, const std::string& json) {
    if (json_)
      variables_.push_back(json);
    else
      out_ += "\t\t" + text + "\n";
    any_ = true;
  }
  std::string Finish() {
    Close();
    return std::move(out_);
  }

 private:
  void Close() {
    if (!location_) return;
    if (json_)
      out_ += location_->Raw("variables", JsonArray(variables_)).str() + "\n";
    else if (!any_)
      out_ += "\t\t(No matched variables)\n";
    location_.reset();
    variables_.clear();
    any_ = false;
  }
  bool json_;
  std::string point_, out_;
  std::optional<JsonObject> location_;
  std::vector<std::string> variables_;
  bool any_ = false;
};

std::string PiecesJson(const std::vector<std::string>& members, const std::vector<std::string>& refused) {
  return JsonObject().Raw("members", JsonStrings(members)).Raw("refused", JsonStrings(refused)).str();
}

// A kernel without DWARF: what its BTF knows at the function's entry (the
// parameters) or its return (the return value).
Result<void> ListBtfVars(const ProbeSpec& spec, const Resolution& resolution, const BtfInfo& btf,
                         const GlobFilter& filter, VarsListing& listing) {
  for (const ResolvedLocation& loc : resolution.probes.front().locations) {
    listing.Location(
        AtText(loc, 0) + " (BTF: " + (spec.point.retprobe ? "the return value" : "the parameters at entry") + ")",
        listing.Object().String("at", AtName(loc, 0)).String("source", "btf"));
    if (spec.point.retprobe) {
      if (auto ret = btf.ReturnType(loc.origin.function))
        listing.Variable(ret->second + "\t$retval",
                         JsonObject().String("name", "$retval").String("type", ret->second).str());
      continue;
    }
    auto params = KP_TRY(btf.Parameters(loc.origin.function));
    std::erase_if(params, [&](const BtfParameter& p) { return !filter.Matches(p.name); });
    for (const BtfParameter& p : params) {
      JsonObject json;
      json.String("name", p.name).String("type", p.c_type);
      std::string text = p.c_type + "\t" + p.name;
      if (p.in_pieces) {
        text += "\t" + PiecesNote(p.piece_members, p.pieces_refused);
        json.Raw("pieces", PiecesJson(p.piece_members, p.pieces_refused));
      }
      listing.Variable(text, json.str());
    }
  }
  return {};
}

}  // namespace

// A USDT marker's arguments at each of its sites: their type (from their
// size), name, and where the kernel reads them.
Result<void> ListMarkerVars(const Resolution& resolution, const Target& target, VarsListing& listing) {
  for (const ResolvedLocation& loc : resolution.probes.front().locations) {
    listing.Location(AtText(loc, loc.address) + " (" + loc.origin.marker + ")",
                     listing.Object().String("at", AtName(loc, loc.address)).String("marker", loc.origin.marker));
    for (const TypedFetch& fetch : loc.args) {
      FetchArg arg = KP_TRY(SynthesizeArg(fetch, *target.arch, ProbeKind::kUser, target.image.get(), loc.address));
      std::string type = arg.type.empty() ? "x64" : arg.type;
      listing.Variable(type + "\t" + arg.name + "\t(" + arg.fetch + ")",
                       JsonObject().String("name", arg.name).String("type", type).String("fetch", arg.fetch).str());
    }
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
  std::string event = p.event_system + ":" + p.event_name;
  VarsListing listing(
      options.json, DescribePoint(p),
      "\t(the fields of " + event + (p.event_system == "syscalls" ? "; its pointers lead to user memory" : "") + ")\n");
  listing.Location("", listing.Object().String("event", event));
  for (const EventFieldView& f : fields) {
    JsonObject json;
    json.String("name", f.field.name).String("type", f.field.c_type);
    std::string text = f.field.c_type + "\t" + f.field.name + "\t";
    if (f.fetch.empty()) {
      text += "(cannot be read: " + f.why_not + ")";
      json.Raw("fetch", "null").String("why_not", f.why_not);
    } else {
      text += f.fetch;
      json.String("fetch", f.fetch);
    }
    if (!f.points_to.empty()) {
      text += "\t(->MEMBER of " + f.points_to + ")";
      json.String("points_to", f.points_to);
    }
    listing.Variable(text, json.str());
  }
  io.out << listing.Finish();
  return {};
}

namespace {

// One DWARF variable's line and object.
void ListVariable(const VariableInfo& v, const Options& options, const ElfSymbol* f, Debuginfo::Language language,
                  VarsListing& listing) {
  JsonObject json;
  json.String("name", v.name).String("type", v.c_type).Bool("available", v.available);
  if (v.external) json.Bool("external", true);
  std::string text;
  if (options.ranges) text += v.available ? "[VAL]\t" : "[INV]\t";
  if (v.external) text += "(extern) ";
  text += v.c_type + "\t" + v.name;
  if (options.ranges && f && !v.external) {
    text += "\t" + RangesText(f->value, f->size, DisplaySymbol(f->name), v.ranges);
    std::vector<std::string> ranges;
    for (const auto& [start, end] : v.ranges) ranges.push_back(JsonArray({std::to_string(start), std::to_string(end)}));
    json.Raw("ranges", JsonArray(ranges));
  }
  // A string or slice named whole is fetched as its bytes cut at its length.
  if (auto counted = CountedStringKind(v.underlying_type, language)) {
    text += "\t(" + *counted + ": '" + v.name + "' whole is its bytes, cut at " + v.name + "__len)";
    json.String("counted_string", *counted);
  }
  if (v.in_pieces) {
    text += "\t" + PiecesNote(v.piece_members, v.pieces_refused);
    json.Raw("pieces", PiecesJson(v.piece_members, v.pieces_refused));
  }
  listing.Variable(text, json.str());
}

}  // namespace

Result<void> RunVars(const Options& options, const std::string& text, Streams io) {
  ProbeSpec spec = KP_TRY(ParseProbeSpec(text));
  if (!spec.point.event_name.empty()) return PrintEventVars(spec, options, io);
  // --filter: the variables to show, by name (perf's -V --filter).
  GlobFilter filter = KP_TRY(GlobFilter::Parse(options.filter.empty() ? "*" : options.filter));
  Target target = KP_TRY(OpenTargetOf(options, io.err));
  VarsListing listing(options.json, DescribePoint(spec.point));
  bool marker = !spec.point.sdt_name.empty();
  if (marker) {
    SystemView system = ReadSystemView(nullptr, options.env, target, false);
    Resolution resolution = KP_TRY(Resolve({spec}, target, system, ResolveOptionsOf(options)));
    ReportResolution(resolution, options, io.err);
    KP_TRY_VOID(ListMarkerVars(resolution, target, listing));
    io.out << listing.Finish();
    return {};
  }
  if (!target.btf) (void)KP_TRY(target.RequireDebuginfo());
  SystemView system = ReadSystemView(nullptr, options.env, target, false);
  ResolveOptions resolve = ResolveOptionsOf(options);
  resolve.for_variables = true;
  Resolution resolution = KP_TRY(Resolve({spec}, target, system, resolve));
  ReportResolution(resolution, options, io.err);
  ReportIndex(target, options, io.err);
  if (!target.debuginfo) {
    KP_TRY_VOID(ListBtfVars(spec, resolution, *target.btf, filter, listing));
    io.out << listing.Finish();
    return {};
  }
  for (const ResolvedLocation& loc : resolution.probes.front().locations) {
    const DwarfAddress& at = *loc.dwarf;
    JsonObject json = listing.Object().String("at", AtName(loc, at.address));
    if (at.inlined) json.String("inlined", at.function);
    listing.Location(AtText(loc, at.address) + (at.inlined ? " (" + at.function + " inlined)" : ""), std::move(json));
    auto vars = KP_TRY(target.debuginfo->Variables(at, options.externs));
    std::erase_if(vars, [&](const VariableInfo& v) { return !filter.Matches(v.name); });
    const ElfSymbol* f = target.image->FunctionAt(at.address);
    const Debuginfo::Language language = target.debuginfo->LanguageAt(at);
    for (const VariableInfo& v : vars)
      if (v.available || options.ranges) ListVariable(v, options, f, language, listing);
  }
  io.out << listing.Finish();
  return {};
}

}  // namespace kprobectl::cli
