// SPDX-License-Identifier: GPL-2.0-or-later
//
// Walking a captured user stack through CFI. For each frame, the rules of
// the FDE that covers its program counter (looked up at pc - 1 above the
// first frame: a return address is the instruction after the call, which
// may begin the next function) give the CFA, from which the caller's stack
// pointer is the CFA and its return address is read: on x86-64 the return
// address column (16) is saved at CFA-8; on arm64 it is x30, in the
// register at a function's entry, later saved at CFA-N. Registers the
// capture has not (callee-saved ones a frame stored) are followed as far
// as they are needed; a rule that reads memory outside the captured bytes
// ends the walk.
#include "kprobectl/unwind.h"

#include <dwarf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "dwarf_internal.h"

namespace kprobectl {

struct Unwinder::File {
  void* map = MAP_FAILED;
  size_t size = 0;
  Elf* elf = nullptr;
  Dwarf_CFI* eh_frame = nullptr;  // dwarf_getcfi_elf: ours to end
  Dwarf* dwarf = nullptr;         // for .debug_frame
  Dwarf_CFI* debug_frame = nullptr;
  ~File() {
    if (eh_frame) dwarf_cfi_end(eh_frame);
    if (dwarf) dwarf_end(dwarf);
    dwarf::CloseElf(elf);
    if (map != MAP_FAILED) munmap(map, size);
  }
};

Unwinder::Unwinder() = default;
Unwinder::~Unwinder() = default;

Unwinder::File* Unwinder::Open(const std::string& path) {
  auto [it, fresh] = files_.try_emplace(path);
  if (!fresh) return it->second.get();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  auto file = std::make_unique<File>();
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    file->size = static_cast<size_t>(st.st_size);
    file->map = mmap(nullptr, file->size, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  close(fd);
  if (file->map == MAP_FAILED) return nullptr;
  file->elf = dwarf::OpenElf(file->map, file->size);
  if (!file->elf) return nullptr;
  file->eh_frame = dwarf_getcfi_elf(file->elf);
  file->dwarf = dwarf_begin_elf(file->elf, DWARF_C_READ, nullptr);
  if (file->dwarf) file->debug_frame = dwarf_getcfi(file->dwarf);
  if (!file->eh_frame && !file->debug_frame) return nullptr;
  it->second = std::move(file);
  return it->second.get();
}

namespace {

using Registers = std::map<unsigned, uint64_t>;

std::optional<uint64_t> ReadStack(const CapturedStack& stack, uint64_t address) {
  if (address < stack.stack_start || address - stack.stack_start + 8 > stack.stack.size()) return std::nullopt;
  uint64_t value;
  std::memcpy(&value, stack.stack.data() + (address - stack.stack_start), 8);
  return value;
}

// A CFI expression: the CFA's (a value), or a register rule's (where the
// register was saved, or with DW_OP_stack_value its value). `in_register`
// receives a register rule's "the value is in register N".
struct Evaluated {
  uint64_t value = 0;
  bool is_value = false;  // a value, not an address to read
};

std::optional<Evaluated> Evaluate(const Dwarf_Op* ops, size_t nops, const Registers& regs, uint64_t cfa,
                                  const CapturedStack& stack) {
  std::vector<uint64_t> s;
  auto reg = [&](uint64_t n) -> std::optional<uint64_t> {
    auto it = regs.find(static_cast<unsigned>(n));
    if (it == regs.end()) return std::nullopt;
    return it->second;
  };
  for (size_t i = 0; i < nops; ++i) {
    const Dwarf_Op& op = ops[i];
    uint8_t atom = op.atom;
    if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
      auto r = reg(atom - DW_OP_breg0);
      if (!r) return std::nullopt;
      s.push_back(*r + op.number);
    } else if (atom == DW_OP_bregx) {
      auto r = reg(op.number);
      if (!r) return std::nullopt;
      s.push_back(*r + op.number2);
    } else if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
      auto r = reg(atom - DW_OP_reg0);
      if (!r) return std::nullopt;
      return Evaluated{*r, true};
    } else if (atom == DW_OP_regx) {
      auto r = reg(op.number);
      if (!r) return std::nullopt;
      return Evaluated{*r, true};
    } else if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
      s.push_back(atom - DW_OP_lit0);
    } else if (atom == DW_OP_call_frame_cfa) {
      s.push_back(cfa);
    } else if (atom == DW_OP_consts || atom == DW_OP_constu || atom == DW_OP_const1u || atom == DW_OP_const1s ||
               atom == DW_OP_const2u || atom == DW_OP_const2s || atom == DW_OP_const4u || atom == DW_OP_const4s ||
               atom == DW_OP_const8u || atom == DW_OP_const8s) {
      s.push_back(op.number);
    } else if (atom == DW_OP_plus_uconst) {
      if (s.empty()) return std::nullopt;
      s.back() += op.number;
    } else if (atom == DW_OP_plus || atom == DW_OP_minus || atom == DW_OP_and) {
      if (s.size() < 2) return std::nullopt;
      uint64_t b = s.back();
      s.pop_back();
      s.back() = atom == DW_OP_plus ? s.back() + b : atom == DW_OP_minus ? s.back() - b : s.back() & b;
    } else if (atom == DW_OP_deref) {
      if (s.empty()) return std::nullopt;
      auto v = ReadStack(stack, s.back());
      if (!v) return std::nullopt;
      s.back() = *v;
    } else if (atom == DW_OP_stack_value) {
      if (s.empty()) return std::nullopt;
      return Evaluated{s.back(), true};
    } else {
      return std::nullopt;  // an operation a frame rule does not need
    }
  }
  if (s.empty()) return std::nullopt;
  return Evaluated{s.back(), false};
}

// The frame at `pc` (bias removed) in one of the file's tables.
Dwarf_Frame* FrameAt(Dwarf_CFI* eh_frame, Dwarf_CFI* debug_frame, uint64_t address) {
  Dwarf_Frame* frame = nullptr;
  if (eh_frame && dwarf_cfi_addrframe(eh_frame, address, &frame) == 0) return frame;
  if (debug_frame && dwarf_cfi_addrframe(debug_frame, address, &frame) == 0) return frame;
  return nullptr;
}

// The caller's registers, from this frame's rules: the tracked registers
// and the return address column.
std::optional<Registers> CallerRegisters(Dwarf_Frame* frame, const Registers& regs, uint64_t cfa,
                                         const CapturedStack& stack, int ra_column) {
  Registers caller;
  std::vector<unsigned> wanted;
  for (const auto& [n, v] : regs) wanted.push_back(n);
  if (ra_column >= 0 && !regs.contains(static_cast<unsigned>(ra_column)))
    wanted.push_back(static_cast<unsigned>(ra_column));
  for (unsigned n : wanted) {
    Dwarf_Op mem[3];
    Dwarf_Op* ops = nullptr;
    size_t nops = 0;
    if (dwarf_frame_register(frame, static_cast<int>(n), mem, &ops, &nops) != 0) continue;
    if (nops == 0) {
      if (ops == nullptr && regs.contains(n)) caller[n] = regs.at(n);  // same value
      continue;                                                        // undefined
    }
    auto where = Evaluate(ops, nops, regs, cfa, stack);
    if (!where) continue;
    if (where->is_value) {
      caller[n] = where->value;
    } else if (auto saved = ReadStack(stack, where->value)) {
      caller[n] = *saved;
    }
  }
  return caller;
}

}  // namespace

std::vector<uint64_t> Unwinder::Unwind(const CapturedStack& stack, const FindLoadedFile& find, size_t max_frames) {
  std::vector<uint64_t> pcs;
  Registers regs = stack.registers;
  if (!regs.contains(stack.pc_register) || !regs.contains(stack.sp_register)) return pcs;
  uint64_t pc = regs[stack.pc_register];
  pcs.push_back(pc);
  for (size_t depth = 0; depth + 1 < max_frames; ++depth) {
    auto mapped = find(pc);
    File* file = mapped ? Open(mapped->path) : nullptr;
    if (!file) break;
    uint64_t lookup = (depth == 0 ? pc : pc - 1) - mapped->bias;
    Dwarf_Frame* frame = FrameAt(file->eh_frame, file->debug_frame, lookup);
    if (!frame) break;
    Dwarf_Op* cfa_ops = nullptr;
    size_t cfa_nops = 0;
    std::optional<Evaluated> cfa;
    if (dwarf_frame_cfa(frame, &cfa_ops, &cfa_nops) == 0 && cfa_nops > 0)
      cfa = Evaluate(cfa_ops, cfa_nops, regs, 0, stack);
    int ra_column = dwarf_frame_info(frame, nullptr, nullptr, nullptr);
    std::optional<Registers> caller = cfa ? CallerRegisters(frame, regs, cfa->value, stack, ra_column) : std::nullopt;
    free(frame);
    if (!caller || ra_column < 0 || !caller->contains(static_cast<unsigned>(ra_column))) break;
    uint64_t return_address = caller->at(static_cast<unsigned>(ra_column));
    // The stack grows down: a caller's frame is above its callee's (at an
    // arm64 function's entry the CFA is the stack pointer itself).
    uint64_t sp = regs[stack.sp_register];
    if (return_address == 0 || cfa->value < sp || (cfa->value == sp && depth > 0)) break;
    (*caller)[stack.sp_register] = cfa->value;
    (*caller)[stack.pc_register] = return_address;
    regs = std::move(*caller);
    pc = return_address;
    pcs.push_back(pc);
  }
  return pcs;
}

}  // namespace kprobectl
