// SPDX-License-Identifier: GPL-2.0-or-later
//
// ev:SYSTEM:EVENT: an event probe (e: in dynamic_events, Linux 5.15). It
// runs whenever that event is recorded and reads the event's fields with
// the kernel's fetchargs: $FIELD, dereferences, strings. The fields and
// their C types come from the event's format file; what a pointer field
// leads to comes from the kernel's BTF, through the type the format
// declares, a cast the user writes ((struct sk_buff *)skbaddr) or, for a
// field the format leaves untyped (void *, an integer), the parameter of
// that name in the tracepoint's prototype. A syscall event's pointers are
// user space's: strings there are ustring, dereferences +u. The kernel
// attaches event probes to any event but kprobe, uprobe and other event
// probe events (trace_eprobe.c, find_and_get_event()).
#include "kprobectl/nearest_names.h"
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

namespace {

constexpr std::string_view kArgsHint =
    "an event probe's arguments are the event's fields by name, with ->member and .member where BTF knows what a "
    "pointer field points to, ((struct TYPE *)FIELD)->member where it does not, +OFF(FIELD) and @SYMBOL";

struct EventContext {
  const ProbeSpec& spec;
  const std::vector<EventField>& fields;
  const Target& target;
  const SystemView& system;
  bool user_memory = false;  // a syscall event: its pointers are user space's
};

std::string FieldNames(const std::vector<EventField>& fields) {
  std::vector<std::string> names;
  for (const EventField& f : fields) names.push_back(f.name);
  return names.empty() ? "it has none an event probe can read" : "its fields: " + Join(names, ", ");
}

// How a scalar field is read: its C type through BTF (typedefs such as
// umode_t), else its size and signedness. A syscall event stores every
// argument in 8 bytes, unsigned, whatever its C type: the C type decides.
FetchType ScalarOf(const EventField& f, const BtfInfo* btf) {
  if (btf)
    if (auto type = btf->ScalarType(f.c_type)) return *type;
  static const std::pair<std::string_view, FetchType> kKnown[] = {
      {"int", FetchType::Integer(FetchType::kSigned, 32)},
      {"unsigned int", FetchType::Integer(FetchType::kUnsigned, 32)},
      {"long", FetchType::Integer(FetchType::kSigned, 64)},
      {"unsigned long", FetchType::Integer(FetchType::kUnsigned, 64)},
      {"short", FetchType::Integer(FetchType::kSigned, 16)},
      {"unsigned short", FetchType::Integer(FetchType::kUnsigned, 16)},
      {"char", FetchType::Integer(FetchType::kSigned, 8)},
      {"unsigned char", FetchType::Integer(FetchType::kUnsigned, 8)},
      {"pid_t", FetchType::Integer(FetchType::kSigned, 32)},
      {"bool", FetchType::Integer(FetchType::kUnsigned, 8)},
  };
  for (const auto& [name, type] : kKnown)
    if (f.c_type == name) return type;
  unsigned bits = f.size >= 1 && f.size <= 8 && (f.size & (f.size - 1)) == 0 ? f.size * 8 : 64;
  return FetchType::Integer(f.is_signed ? FetchType::kSigned : FetchType::kUnsigned, bits);
}

bool IsCharPointer(const EventField& f) {
  std::string pointee = f.Pointee();
  return pointee == "char" || pointee == "const char" || pointee == "unsigned char" || pointee == "const unsigned char";
}

// The pointer type a member chain on `f` goes through, and where it came from.
Result<std::string> PointerType(const EventContext& c, const ProbeArg& arg, const EventField& f) {
  const ArgExpr& e = arg.expr;
  if (!e.cast.empty()) {
    if (!e.cast.ends_with('*'))
      return ArgError(c.spec, e.cast_pos, "a cast of a field to '" + e.cast + "': only to a pointer type",
                      "e.g. ((struct sk_buff *)" + f.name + ")->len");
    return e.cast;
  }
  std::string pointee = f.Pointee();
  if (f.IsPointer() && pointee != "void" && pointee != "const void") return f.c_type;
  if (c.target.btf)
    if (auto declared = c.target.btf->TracepointParameter(c.spec.point.event_name, f.name);
        declared && declared->ends_with('*') && *declared != "void *" && *declared != "const void *")
      return *declared;
  return ArgError(c.spec, e.pos, "'" + f.name + "' is a " + f.c_type + " field: what it points to is not known",
                  "name the type with a cast: ((struct TYPE *)" + f.name + ")->MEMBER");
}

// A field whole: its value, or the string it holds or points to.
Result<TypedFetch> WholeField(const EventContext& c, const ProbeArg& arg, const EventField& f,
                              const std::optional<FetchType>& asked) {
  TypedFetch out;
  out.root = FetchRoot::Named(FetchRoot::kKernelName, "$" + f.name);
  out.c_type = f.c_type;
  out.name = f.name;
  bool chars = f.InlineString() || IsCharPointer(f);
  if ((f.data_loc || f.array_count) && !f.InlineString())
    return ArgError(
        c.spec, arg.expr.pos,
        "'" + f.name + "' (" + f.c_type +
            ") is an array the event holds; an event probe reads a "
            "field's value, not its elements",
        "trace the event itself: kprobectl trace " + c.spec.point.event_system + ":" + c.spec.point.event_name);
  if (f.InlineString() && asked && !asked->IsString())
    return ArgError(c.spec, arg.type_pos, "'" + f.name + "' (" + f.c_type + ") is a string the event holds",
                    "read it as :string");
  if (asked) {
    out.type = asked;
  } else if (chars) {
    out.type = FetchType::Of(FetchType::kString);
  } else if (f.IsPointer()) {
    out.type = FetchType::Of(FetchType::kHex);
  } else {
    out.type = ScalarOf(f, c.target.btf.get());
  }
  // The event's own string is kernel memory; what a syscall's pointer
  // points to is user memory.
  if (out.type->base == FetchType::kString && c.user_memory && !f.InlineString()) out.type->base = FetchType::kUString;
  if (out.type->ReadsString() && !chars && !f.IsPointer())
    return ArgError(c.spec, arg.type_pos, "'" + f.name + "' (" + f.c_type + ") holds no string");
  return out;
}

Result<TypedFetch> ThroughPointer(const EventContext& c, const ProbeArg& arg, const EventField& f,
                                  const std::optional<FetchType>& asked) {
  const ArgExpr& e = arg.expr;
  std::string pointer = KP_TRY(PointerType(c, arg, f));
  if (!c.target.btf)
    return ArgError(c.spec, e.pos,
                    "what '" + f.name + "' points to needs the kernel's BTF: " + c.target.btf_error.message,
                    "a kernel built with CONFIG_DEBUG_INFO_BTF has /sys/kernel/btf/vmlinux");
  bool want_string = asked && asked->ReadsString();
  auto v = c.target.btf->FetchFromValue(pointer, e, want_string);
  if (!v) return ArgError(c.spec, e.pos, v.error().message, v.error().hint);
  TypedFetch out;
  out.root = FetchRoot::Named(FetchRoot::kKernelName, "$" + f.name);
  out.name = v->name;
  out.c_type = v->c_type;
  out.type = asked ? asked : std::optional<FetchType>(v->type);
  for (int64_t d : v->derefs) out.derefs.push_back({d, c.user_memory});
  if (out.type->base == FetchType::kString && c.user_memory) out.type->base = FetchType::kUString;
  return out;
}

Result<TypedFetch> EventArg(const EventContext& c, const ProbeArg& arg) {
  const ArgExpr& e = arg.expr;
  std::optional<FetchType> asked;
  if (!arg.type.empty()) {
    ArgContext ctx{c.target.arch, ProbeKind::kKernel, false, false, &c.system.features, nullptr, 0};
    asked = KP_TRY(CheckArgType(c.spec, arg, ctx));
  }
  if (e.kind == ArgKind::kSymbol || e.kind == ArgKind::kImmediate) {
    ArgContext ctx{c.target.arch, ProbeKind::kKernel, false, false, &c.system.features, nullptr, 0};
    ProbeSpec one = c.spec;
    one.args = {arg};
    return RawArg(one, 0, ctx);
  }
  if (e.kind != ArgKind::kVariable)
    return ArgError(c.spec, e.pos, "'" + arg.text + "' is not something an event probe can read",
                    e.kind == ArgKind::kComm ? "an event probe reads the event's fields; $comm is a kprobe's"
                                             : std::string(kArgsHint));
  const EventField* field = nullptr;
  for (const EventField& f : c.fields)
    if (f.name == e.name) field = &f;
  if (!field) {
    NearestNames nearest(e.name);
    for (const EventField& f : c.fields) nearest.Offer(f.name);
    auto similar = nearest.Take();
    std::string hint = FieldNames(c.fields);
    if (e.name.starts_with("common_")) hint = "an event probe cannot read the common fields; " + hint;
    return ArgError(c.spec, e.pos,
                    "event " + c.spec.point.event_system + ":" + c.spec.point.event_name + " has no field '" + e.name +
                        "'" + (similar.empty() ? "" : " (similar: " + Join(similar, ", ") + ")"),
                    hint);
  }
  bool through = !e.accessors.empty() || !e.cast.empty();
  TypedFetch out = KP_TRY(through ? ThroughPointer(c, arg, *field, asked) : WholeField(c, arg, *field, asked));
  for (const ArgDeref& d : e.derefs) out.derefs.push_back(d);
  if (!arg.name.empty()) out.name = arg.name;
  KP_TRY_VOID(CheckDepth(c.spec, arg, out));
  return out;
}

}  // namespace

Result<std::vector<ResolvedLocation>> LocateEventProbe(const ProbeSpec& spec, const Target& target,
                                                       const SystemView& system) {
  const ProbePoint& p = spec.point;
  if (!target.kernel())
    return Fail("'" + DescribePoint(p) + "' is a kernel event; -x probes user space", "leave -x out for event probes");
  std::vector<EventField> fields = KP_TRY(EventFieldsOf(spec, system));
  EventContext c{spec, fields, target, system, p.event_system == "syscalls"};
  ResolvedLocation loc;
  loc.target.kind = ProbeTarget::kSymbol;
  loc.target.module = p.event_system;
  loc.target.symbol = p.event_name;
  loc.origin.function = p.event_system + ":" + p.event_name;
  loc.origin.source = "the event's format";
  loc.event_base = spec.event.empty() ? p.event_name : spec.event;
  std::vector<const ProbeArg*> from;
  for (const ProbeArg& arg : spec.args) {
    loc.args.push_back(KP_TRY(EventArg(c, arg)));
    from.push_back(&arg);
  }
  KP_TRY_VOID(FinishArgs(spec, loc.args, from));
  return std::vector<ResolvedLocation>{std::move(loc)};
}

}  // namespace kprobectl::resolve

namespace kprobectl {

Result<std::vector<EventField>> EventFieldsOf(const ProbeSpec& spec, const SystemView& system) {
  const ProbePoint& p = spec.point;
  std::string name = p.event_system + ":" + p.event_name;
  if (!system.event_format)
    return Fail("no tracefs to read the fields of event " + name + " from",
                "mount tracefs: mount -t tracefs nodev /sys/kernel/tracing");
  auto format = system.event_format(p.event_system, p.event_name);
  if (!format) {
    NearestNames nearest(name);
    if (system.event_names)
      for (const std::string& event : system.event_names()) nearest.Offer(event);
    auto similar = nearest.Take();
    return Fail("no event " + name + " in the running kernel", similar.empty()
                                                                   ? "its events are listed in tracefs available_events"
                                                                   : "similar events: " + Join(similar, ", "));
  }
  if (system.unattachable_events.contains(p.event_system + "/" + p.event_name))
    return Fail("event " + name +
                    " is a kprobe, uprobe or event probe event, and the kernel attaches event probes "
                    "to none of those",
                "probe the same place with a kprobe or uprobe of its own, with the arguments wanted");
  return ParseEventFields(*format);
}

Result<std::vector<EventFieldView>> DescribeEventFields(const ProbeSpec& spec, const Target& target,
                                                        const SystemView& system) {
  std::vector<EventField> fields = KP_TRY(EventFieldsOf(spec, system));
  resolve::EventContext c{spec, fields, target, system, spec.point.event_system == "syscalls"};
  std::vector<EventFieldView> out;
  for (const EventField& f : fields) {
    EventFieldView view{f, {}, {}, {}};
    ProbeArg arg;
    arg.expr.name = f.name;
    arg.text = f.name;
    if (auto fetch = resolve::EventArg(c, arg)) {
      if (auto synthesized = SynthesizeArg(*fetch, *target.arch, ProbeKind::kKernel, nullptr, 0))
        view.fetch = synthesized->fetch + (synthesized->type.empty() ? "" : ":" + synthesized->type);
    } else {
      std::string why = fetch.error().message;
      why = why.substr(0, why.find('\n'));
      if (why.starts_with("invalid argument: ")) why = why.substr(18);
      view.why_not = why;
    }
    if (f.IsPointer() && !resolve::IsCharPointer(f)) {
      arg.expr.accessors.push_back({ArgAccessor::kArrow, "x", 0, 0});
      if (auto type = resolve::PointerType(c, arg, f)) {
        std::string pointee = *type == f.c_type ? f.Pointee() : type->substr(0, type->size() - 1);
        view.points_to = std::string(Trim(pointee)) + (*type == f.c_type ? "" : " (the tracepoint's prototype)");
      }
    }
    out.push_back(std::move(view));
  }
  return out;
}

}  // namespace kprobectl
