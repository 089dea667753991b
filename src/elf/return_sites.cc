// SPDX-License-Identifier: GPL-2.0-or-later
//
// Capstone decodes the function from its first byte to its last, in
// order: Go's compiler puts no data in its functions' code (only padding
// after the last instruction: INT3 on amd64, which decodes, zero words on
// arm64, which Capstone 4 does not decode and which end the sweep), so a
// linear sweep meets every instruction. A return instruction is a return site.
// A direct jump whose target lies outside the function leaves it without
// returning through a return instruction of its own (a tail call, Go's
// wrappers' JMP to the method): its return would be missed, so the
// function is refused. An indirect jump stays in: Go emits one only for a
// switch's jump table (Go 1.19+), whose targets are the function's own.
// Capstone is loaded when a Go return is first looked for (SharedLibrary
// says why): its functions are called through the pointers it gives.
#include "kprobectl/return_sites.h"

#include <capstone/capstone.h>
#include <elf.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include "kprobectl/shared_library.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

struct Capstone {
  SharedLibrary library;
  decltype(&cs_open) open_disassembler;
  decltype(&cs_close) close_disassembler;
  decltype(&cs_option) set_option;
  decltype(&cs_malloc) alloc_insn;
  decltype(&cs_free) free_insn;
  decltype(&cs_disasm_iter) disasm_iter;
  decltype(&cs_insn_group) insn_group;
};

Result<Capstone> LoadCapstone() {
  SharedLibrary library =
      KP_TRY(SharedLibrary::Open(KPROBECTL_CAPSTONE_SONAME, "a Go function's %return", KPROBECTL_CAPSTONE_PACKAGE));
  return Capstone{library,
                  KP_TRY(library.Function<decltype(cs_open)>("cs_open")),
                  KP_TRY(library.Function<decltype(cs_close)>("cs_close")),
                  KP_TRY(library.Function<decltype(cs_option)>("cs_option")),
                  KP_TRY(library.Function<decltype(cs_malloc)>("cs_malloc")),
                  KP_TRY(library.Function<decltype(cs_free)>("cs_free")),
                  KP_TRY(library.Function<decltype(cs_disasm_iter)>("cs_disasm_iter")),
                  KP_TRY(library.Function<decltype(cs_insn_group)>("cs_insn_group"))};
}

// What differs between architectures in Capstone's answers: its mode, and
// what its per-architecture details say of a branch. A row per ELF machine
// (Arch::elf_machine()); Capstone's types stay in this file.
struct Decoder {
  uint16_t machine;
  cs_arch arch;
  cs_mode mode;
  // Whether a call Capstone does not put in its call group is one.
  bool (*extra_call)(const cs_insn& insn);
  // Whether a jump (in the jump group, not a call) is conditional.
  bool (*conditional)(const cs_insn& insn);
  // The target of a direct jump, branch or call, if its operand is an immediate.
  std::optional<uint64_t> (*direct_target)(const cs_insn& insn);
};

std::optional<uint64_t> X86Target(const cs_insn& insn) {
  const cs_x86& x86 = insn.detail->x86;
  if (x86.op_count == 1 && x86.operands[0].type == X86_OP_IMM) return static_cast<uint64_t>(x86.operands[0].imm);
  return std::nullopt;
}

// The target is the last operand: tbz/tbnz's first immediate is the bit tested.
std::optional<uint64_t> Arm64Target(const cs_insn& insn) {
  const cs_arm64& arm64 = insn.detail->arm64;
  if (arm64.op_count > 0 && arm64.operands[arm64.op_count - 1].type == ARM64_OP_IMM)
    return static_cast<uint64_t>(arm64.operands[arm64.op_count - 1].imm);
  return std::nullopt;
}

constexpr Decoder kDecoders[] = {
    {EM_X86_64, CS_ARCH_X86, CS_MODE_64, [](const cs_insn&) { return false; },
     [](const cs_insn& insn) { return insn.id != X86_INS_JMP; }, X86Target},
    // Capstone 4 puts arm64's bl and blr in the jump group, not the call group.
    {EM_AARCH64, CS_ARCH_ARM64, CS_MODE_ARM,
     [](const cs_insn& insn) { return insn.id == ARM64_INS_BL || insn.id == ARM64_INS_BLR; },
     [](const cs_insn& insn) {
       return insn.id == ARM64_INS_CBZ || insn.id == ARM64_INS_CBNZ || insn.id == ARM64_INS_TBZ ||
              insn.id == ARM64_INS_TBNZ ||
              (insn.id == ARM64_INS_B && insn.detail->arm64.cc != ARM64_CC_INVALID &&
               insn.detail->arm64.cc != ARM64_CC_AL);
     },
     Arm64Target},
};

Result<const Decoder*> DecoderOf(const Arch& arch) {
  for (const Decoder& d : kDecoders)
    if (d.machine == arch.elf_machine()) return &d;
  return Fail("no disassembler for " + std::string(arch.name()));
}

// One instruction as the sweeps need it.
struct Insn {
  uint64_t address = 0, next = 0;
  bool ret = false, call = false, jump = false, conditional = false;
  std::optional<uint64_t> target;  // a direct jump's or call's
  std::string text;                // "jmp 0x485880", for messages
};

// Decodes `code` (at `address`) instruction by instruction, in order, up
// to its end or its trailing zero padding, giving each to `visit`, which
// returns false to stop. `failing` and `hint` say what bytes that do not
// decode stop.
Result<void> Sweep(std::string_view code, uint64_t address, const Arch& arch, const std::string& failing,
                   const std::string& hint, const std::function<Result<bool>(const Insn&)>& visit) {
  const Decoder& decoder = *KP_TRY(DecoderOf(arch));
  const Capstone cs = KP_TRY(LoadCapstone());
  csh handle = 0;
  if (cs.open_disassembler(decoder.arch, decoder.mode, &handle) != CS_ERR_OK)
    return Fail("cannot open Capstone's disassembler");
  auto close_handle = [&cs](csh* h) { cs.close_disassembler(h); };
  std::unique_ptr<csh, decltype(close_handle)> closer(&handle, close_handle);
  cs.set_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  auto free_insn = [&cs](cs_insn* i) { cs.free_insn(i, 1); };
  std::unique_ptr<cs_insn, decltype(free_insn)> insn(cs.alloc_insn(handle), free_insn);
  if (!insn) return Fail("Capstone could not allocate an instruction");
  const auto* bytes = reinterpret_cast<const uint8_t*>(code.data());
  size_t left = code.size();
  uint64_t at = address;
  while (left > 0) {
    if (!cs.disasm_iter(handle, &bytes, &left, &at, insn.get())) {
      if (std::all_of(bytes, bytes + left, [](uint8_t b) { return b == 0; })) break;
      return Fail(failing + ": the instruction at " + Hex(at) + " does not decode", hint);
    }
    Insn i;
    i.address = insn->address;
    i.next = at;
    i.ret = cs.insn_group(handle, insn.get(), CS_GRP_RET);
    i.call = cs.insn_group(handle, insn.get(), CS_GRP_CALL) || decoder.extra_call(*insn);
    i.jump = !i.call && cs.insn_group(handle, insn.get(), CS_GRP_JUMP);
    i.conditional = i.jump && decoder.conditional(*insn);
    if (i.jump || i.call) i.target = decoder.direct_target(*insn);
    i.text = std::string(insn->mnemonic) + " " + insn->op_str;
    if (!KP_TRY(visit(i))) break;
  }
  return {};
}

}  // namespace

Result<std::vector<uint64_t>> FindReturnSites(std::string_view code, uint64_t address, const Arch& arch,
                                              const std::string& what) {
  const uint64_t end = address + code.size();
  std::vector<uint64_t> sites;
  KP_TRY_VOID(Sweep(code, address, arch, "cannot find the returns of " + what,
                    "probe its last lines (kprobectl line FUNC) instead", [&](const Insn& i) -> Result<bool> {
                      if (i.ret) sites.push_back(i.address);
                      if (i.jump && i.target && (*i.target < address || *i.target >= end))
                        return Fail("cannot find the returns of " + what + ": it jumps out of itself at " +
                                        Hex(i.address) + " (" + i.text +
                                        "), a tail call whose return is another function's",
                                    "probe the function it jumps to, or its last lines (kprobectl line FUNC)");
                      return true;
                    }));
  return sites;
}

Result<uint64_t> GoEntryPastStackCheck(std::string_view code, uint64_t address, const Arch& arch,
                                       const std::string& what) {
  // The check is one of the function's first instructions; the jump back
  // to its start, after runtime.morestack's call, at its end.
  constexpr int kCheckWithin = 8;
  std::optional<Insn> check;
  bool back = false;
  int seen = 0;
  KP_TRY_VOID(Sweep(code, address, arch, "cannot find where the entry of " + what + " runs once a call",
                    "probe a line of it (kprobectl line FUNC)", [&](const Insn& i) -> Result<bool> {
                      if (++seen <= kCheckWithin && !check && i.conditional && i.target && *i.target > i.address)
                        check = i;
                      if (check && i.jump && !i.conditional && i.target == address && i.address >= *check->target)
                        back = true;
                      return !back;
                    }));
  return check && back ? check->next : address;
}

}  // namespace kprobectl
