// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/glob.h"
#include "kprobectl/resolve.h"

namespace kprobectl {

Result<std::vector<TraceEventDef>> BuildKernelDefinitions(const std::vector<ProbeSpec>& specs,
                                                          const KernelFeatures& features,
                                                          const DefinitionOptions& options, EventNamer& namer) {
  std::vector<TraceEventDef> defs;
  for (const ProbeSpec& spec : specs) {
    KP_TRY_VOID(RequireNoDebuginfo(spec));
    const ProbePoint& p = spec.point;
    if (IsGlob(p.function))
      return Fail("'" + p.function + "': kernel function globs need the kernel's symbol table",
                  "name one function");
    if (!p.version.empty() || p.any_file)
      return Fail("'" + DescribePoint(p) + "': symbol versions and @* are for user-space probes");
    TraceEventDef def;
    def.kind = ProbeKind::kKernel;
    def.retprobe = p.retprobe;
    def.maxactive = p.retprobe ? options.maxactive : 0;
    def.group = spec.group.empty() ? std::string(kKernelGroup) : spec.group;
    if (p.address) {
      def.target.kind = ProbeTarget::kAddress;
      def.target.address = *p.address + p.offset.value_or(0);
    } else {
      def.target.kind = ProbeTarget::kSymbol;
      def.target.symbol = p.function;
      def.target.offset = p.offset.value_or(0);
    }
    std::string base = !spec.event.empty() ? spec.event : EventBase(p, p.address ? "" : p.function);
    def.event = KP_TRY(namer.Take(def.group, base, def.retprobe, false));
    FetchContext context{ProbeKind::kKernel, p.retprobe, !p.address && p.offset.value_or(0) == 0, &features, nullptr};
    def.args = KP_TRY(ConvertArgs(spec, context));
    defs.push_back(std::move(def));
  }
  return defs;
}

std::optional<uint64_t> KernelImageAddress(const ElfImage& image, const ProbeTarget& t) {
  if (t.kind == ProbeTarget::kAddress) return image.module().empty() ? std::optional<uint64_t>(t.address) : std::nullopt;
  if (t.kind != ProbeTarget::kSymbol || t.module != image.module()) return std::nullopt;
  const ElfSymbol* s = image.Find(t.symbol);
  if (!s || (t.symbol != "_text" && image.CountNamed(t.symbol, ElfSymbol::kFunction) != 1)) return std::nullopt;
  return s->value + t.offset;
}

Result<std::vector<TraceEventDef>> BuildKernelDefinitionsFromImage(const ProbeSpec& spec, const ElfImage& image,
                                                                   const KernelFeatures& features,
                                                                   const DefinitionOptions& options, EventNamer& namer) {
  ResolvedProbe resolved = KP_TRY(ResolveUserProbe(spec, image));  // the same ELF lookup
  std::vector<TraceEventDef> defs;
  for (size_t i = 0; i < resolved.locations.size(); ++i) {
    const ProbeLocation& loc = resolved.locations[i];
    TraceEventDef def;
    def.kind = ProbeKind::kKernel;
    def.retprobe = spec.point.retprobe;
    def.maxactive = def.retprobe ? options.maxactive : 0;
    def.group = spec.group.empty() ? std::string(kKernelGroup) : spec.group;
    std::string base = !spec.event.empty() ? spec.event : EventBase(spec.point, loc.function);
    def.event = KP_TRY(namer.Take(def.group, base, def.retprobe, i > 0));
    def.target = KP_TRY(KernelTarget(image, loc.address));
    FetchContext context{ProbeKind::kKernel, def.retprobe, loc.at_entry, &features, &image, loc.address};
    def.args = KP_TRY(ConvertArgs(spec, context));
    defs.push_back(std::move(def));
  }
  return defs;
}

}  // namespace kprobectl
