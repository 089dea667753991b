// SPDX-License-Identifier: GPL-2.0-or-later
//
// What is the same for every architecture, over the tables of arch_spec.h:
// looking registers up, naming argument slots, the "SIZE@" prefix of a USDT
// argument, and choosing the architecture from an ELF machine or uname.
#include <elf.h>

#include "arch_spec.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

constexpr Arch kArchitectures[] = {Arch(kX86_64Spec), Arch(kAarch64Spec)};

// ELF machines kprobectl does not support, named for the error.
struct MachineName {
  uint16_t machine;
  std::string_view name;
};
constexpr MachineName kOtherMachines[] = {
    {EM_386, "i386 (EM_386)"},
    {EM_ARM, "32-bit ARM (EM_ARM)"},
    {EM_RISCV, "RISC-V (EM_RISCV)"},
    {EM_PPC64, "PowerPC 64 (EM_PPC64)"},
    {EM_PPC, "PowerPC (EM_PPC)"},
    {EM_S390, "s390 (EM_S390)"},
    {EM_MIPS, "MIPS (EM_MIPS)"},
    {EM_SPARCV9, "SPARC (EM_SPARCV9)"},
    {258 /* EM_LOONGARCH */, "LoongArch (EM_LOONGARCH)"},
};

std::string Supported() {
  std::string out;
  for (const Arch& a : kArchitectures) out += (out.empty() ? "" : " and ") + std::string(a.name());
  return out;
}

}  // namespace

std::unexpected<Error> SdtCannot(std::string_view text, const std::string& what) {
  return Fail("marker argument '" + std::string(text) + "' is " + what);
}

std::string_view Arch::name() const { return spec_->name; }
std::string_view Arch::elf_name() const { return spec_->elf_name; }
uint16_t Arch::elf_machine() const { return spec_->machine; }
std::string_view Arch::multiarch() const { return spec_->multiarch; }
std::string_view Arch::uname() const { return spec_->uname; }
std::string_view Arch::stack_pointer() const { return spec_->stack_pointer; }
std::string_view Arch::return_register() const { return spec_->return_register; }
unsigned Arch::argument_registers() const { return static_cast<unsigned>(spec_->argument_registers.size()); }
std::string Arch::RegisterSummary() const { return std::string(spec_->register_summary); }
std::span<const std::string_view> Arch::no_probe_sections() const { return spec_->no_probe_sections; }
uint32_t Arch::relative_relocation() const { return spec_->relative_relocation; }
uint64_t Arch::patchable_entry() const { return spec_->patchable_entry; }
uint64_t Arch::return_address_bytes() const { return spec_->return_address_bytes; }
std::optional<uint64_t> Arch::DirectJumpTarget(std::string_view code, uint64_t address) const {
  return spec_->direct_jump(code, address);
}
std::string_view Arch::kernel_text_symbol() const { return spec_->kernel_text; }
std::span<const Arch::UnwindRegister> Arch::unwind_registers() const { return spec_->unwind_registers; }
unsigned Arch::sp_dwarf() const { return spec_->unwind_registers[0].dwarf; }
unsigned Arch::pc_dwarf() const { return spec_->unwind_registers[1].dwarf; }
std::pair<int64_t, int64_t> Arch::ftrace_site_window() const {
  return {spec_->ftrace_site_min, spec_->ftrace_site_max};
}

std::optional<std::string_view> Arch::DwarfRegisterName(unsigned dwarf_number) const {
  for (const RegisterName& r : spec_->registers)
    if (r.dwarf >= 0 && static_cast<unsigned>(r.dwarf) == dwarf_number) return r.kernel;
  return std::nullopt;
}

bool Arch::IsRegister(std::string_view name) const {
  for (const RegisterName& r : spec_->registers)
    if (r.kernel == name) return true;
  return false;
}

namespace {

// The kernel's name of a register `spec` knows under another name.
std::optional<std::string_view> AliasOf(const ArchSpec& spec, std::string_view name) {
  for (const RegisterName& r : spec.registers)
    for (std::string_view alias : r.aliases)
      if (!alias.empty() && alias == name && alias != r.kernel) return r.kernel;
  return std::nullopt;
}

}  // namespace

std::optional<Arch::Suggestion> Arch::SuggestRegister(std::string_view name) const {
  if (auto alias = AliasOf(*spec_, name)) return Suggestion{*alias, {}};
  // Another architecture's register for a role this one has too.
  for (const Arch& other : kArchitectures) {
    if (other == *this) continue;
    std::string_view canonical = other.IsRegister(name) ? name : AliasOf(*other.spec_, name).value_or("");
    if (canonical.empty()) continue;
    std::string role;
    std::string_view mine;
    if (auto n = other.ArgumentIn(canonical); n && *n <= argument_registers()) {
      role = "register for argument " + std::to_string(*n);
      mine = spec_->argument_registers[*n - 1];
    } else if (canonical == other.stack_pointer()) {
      role = "stack pointer";
      mine = stack_pointer();
    } else if (canonical == other.spec_->instruction_pointer) {
      role = "instruction pointer";
      mine = spec_->instruction_pointer;
    } else if (canonical == other.return_register()) {
      role = "return value's register";
      mine = return_register();
    } else {
      continue;
    }
    return Suggestion{mine, "%" + std::string(name) + " is " + std::string(other.name()) + "'s " + role + "; on " +
                                std::string(this->name()) + " it is %" + std::string(mine)};
  }
  return std::nullopt;
}

std::string Arch::ArgumentAtEntry(unsigned n) const {
  unsigned registers = argument_registers();
  if (n >= 1 && n <= registers) return "%" + std::string(spec_->argument_registers[n - 1]);
  int64_t offset = spec_->first_stack_argument + 8 * static_cast<int64_t>(n - registers - 1);
  return "+" + std::to_string(offset) + "(%" + std::string(spec_->stack_pointer) + ")";
}

std::string_view Arch::GoGoroutineRegister() const { return spec_->go_goroutine_register; }

bool Arch::GoRegisterAbiIn(unsigned go_minor) const {
  return spec_->go_register_abi_since != 0 && go_minor >= spec_->go_register_abi_since;
}

Result<std::string> Arch::GoArgumentAtEntry(unsigned n, bool register_abi) const {
  if (!register_abi)
    return "+" + std::to_string(kGoArgumentArea + 8 * static_cast<int64_t>(n - 1)) + "(%" +
           std::string(spec_->stack_pointer) + ")";
  const auto& registers = spec_->go_argument_registers;
  if (n >= 1 && n <= registers.size()) return "%" + std::string(registers[n - 1]);
  return Fail("$arg" + std::to_string(n) + " of a Go function: Go's register ABI has " +
                  std::to_string(registers.size()) + " integer argument registers on " + std::string(name()) +
                  ", and puts an argument on the stack when it or one before it does not fit, which only the "
                  "function's types tell",
              "fetch it by name through the DWARF (a Go binary has it unless built with -ldflags=-w)");
}

std::optional<unsigned> Arch::ArgumentIn(std::string_view name) const {
  for (unsigned i = 0; i < spec_->argument_registers.size(); ++i)
    if (spec_->argument_registers[i] == name) return i + 1;
  return std::nullopt;
}

std::vector<ParamPlace> Arch::PlaceParams(std::span<const ParamClass> params) const {
  return spec_->place_params(params);
}

Result<SdtOperand> Arch::ParseSdtArgument(std::string_view text) const {
  SdtOperand out;
  std::string_view operand = text;
  // "[-]SIZE@": the argument's size in bytes, negative when signed. Old
  // notes (version 1) have no size: a word.
  if (size_t at = operand.find('@'); at != std::string_view::npos && at > 0) {
    auto size = ParseSigned(operand.substr(0, at));
    if (!size || (*size != 1 && *size != 2 && *size != 4 && *size != 8 && *size != -1 && *size != -2 && *size != -4 &&
                  *size != -8))
      return SdtCannot(text, "of size '" + std::string(operand.substr(0, at)) + "' (sizes are 1, 2, 4 or 8 bytes)");
    out.is_signed = *size < 0;
    out.size = static_cast<unsigned>(*size < 0 ? -*size : *size);
    operand = operand.substr(at + 1);
  }
  if (operand.empty()) return SdtCannot(text, "empty");
  return spec_->parse_sdt_operand(text, operand, out);
}

std::vector<std::string> SplitSdtArguments(std::string_view args) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (char c : args) {
    if (c == '[' || c == '(') ++depth;
    if ((c == ']' || c == ')') && depth > 0) --depth;
    if ((c == ' ' || c == '\t' || c == '\n') && depth == 0) {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

std::span<const Arch> Architectures() { return kArchitectures; }
const Arch& X86_64Arch() { return kArchitectures[0]; }
const Arch& Aarch64Arch() { return kArchitectures[1]; }

Result<const Arch*> ArchOfElf(uint16_t machine, bool elf64, const std::string& what) {
  for (const Arch& a : kArchitectures)
    if (a.elf_machine() == machine && elf64) return &a;
  std::string name = "ELF machine " + std::to_string(machine);
  for (const MachineName& m : kOtherMachines)
    if (m.machine == machine) name = std::string(m.name);
  for (const Arch& a : kArchitectures)
    if (a.elf_machine() == machine) name = "32-bit " + std::string(a.name());
  if (!elf64 && machine == EM_X86_64) name = "x32 (32-bit EM_X86_64)";
  return Fail(what + " is for " + name + ", an architecture kprobectl does not support",
              "kprobectl reads " + Supported() + " files");
}

Result<const Arch*> ArchOfUname(std::string_view machine) {
  for (const Arch& a : kArchitectures)
    if (a.uname() == machine) return &a;
  return Fail("the running kernel is " + std::string(machine) + ", an architecture kprobectl does not support",
              "kprobectl supports " + Supported() + " kernels; -k VMLINUX -D prints definitions for one offline");
}

}  // namespace kprobectl
