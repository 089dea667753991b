// SPDX-License-Identifier: GPL-2.0-or-later
//
// The btf stage: what a kernel's BTF (/sys/kernel/btf/vmlinux, a module's
// split BTF, an ELF file's .BTF section) says of its functions, as the
// resolver needs it. BTF has every function's prototype and every type, and
// no locations, lines or locals: a parameter is known only at the
// function's entry, where the ABI puts it (the Nth integer argument), and
// the return value's type only at its return. From there member chains
// (->, ., [N], anonymous members, bitfields, arrays, strings) are walked as
// the DWARF's are, to the same VariableFetch.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/fetch_type.h"
#include "kprobectl/probe_spec.h"
#include "kprobectl/result.h"
#include "kprobectl/variable_fetch.h"

namespace kprobectl {

class Arch;
namespace btf {
class File;
}

struct BtfParameter {
  std::string name;
  std::string c_type;
  // A struct passed in two argument registers: the members that lie in
  // one, which can be fetched ("optval.user"), and the others.
  bool in_pieces = false;
  std::vector<std::string> piece_members;
  std::vector<std::string> pieces_refused;
};

// Who reads a raw BTF blob: an index of it, kept in the cache directory
// when there is one (a warm run reads a few of its pages), or libbpf, which
// parses all of it (and reads ELF files and split BTF whichever is asked).
enum class BtfReader { kIndex, kLibbpf };

class BtfInfo {
 public:
  // A raw BTF file or an ELF file's .BTF section; with `base_path`, a
  // module's split BTF over its kernel's. Parameters are placed as `arch`'s
  // psABI places them (BTF has no locations). `cache_dir` empty: nothing
  // kept (--no-cache).
  static Result<std::unique_ptr<BtfInfo>> Open(const std::string& path, const Arch& arch,
                                               const std::string& base_path = {}, const std::string& cache_dir = {},
                                               BtfReader reader = BtfReader::kIndex);
  // A module's split BTF given as its bytes (its .BTF section, as read from
  // a .ko, .ko.xz or .ko.zst), over the kernel's BTF at `base_path`; `path`
  // names it.
  static Result<std::unique_ptr<BtfInfo>> OpenSplit(const std::string& path, std::string_view bytes, const Arch& arch,
                                                    const std::string& base_path);
  ~BtfInfo();
  BtfInfo(const BtfInfo&) = delete;
  BtfInfo& operator=(const BtfInfo&) = delete;

  const std::string& path() const;
  bool HasFunction(std::string_view function) const;
  // Every function the BTF describes, sorted, unique.
  std::vector<std::string> Functions() const;
  // The parameters of `function`, as declared.
  Result<std::vector<BtfParameter>> Parameters(std::string_view function) const;
  // A parameter and its member chain (expr: NAME->a.b[2]) at the entry.
  Result<VariableFetch> Fetch(std::string_view function, const ArgExpr& expr, bool want_string) const;
  // Every parameter that can be fetched ($params); the others in `skipped`, with why.
  Result<std::vector<VariableFetch>> FetchAll(std::string_view function, std::vector<std::string>* skipped) const;
  // How $retval reads: the return type's fetch type, and its C spelling.
  std::optional<std::pair<FetchType, std::string>> ReturnType(std::string_view function) const;

  // What a value of C type `c_type` leads to through `expr`'s accessors: a
  // value an event's field holds, typed by the event's format, a cast the
  // user wrote or a tracepoint's prototype ("struct sk_buff *"). The
  // fetch's root is that value (kArgument, argument 0: the caller puts the
  // field there).
  Result<VariableFetch> FetchFromValue(std::string_view c_type, const ArgExpr& expr, bool want_string) const;
  // The C type of parameter `name` of tracepoint `tracepoint`, from its
  // prototype (the typedef btf_trace_TRACEPOINT: void *, then the
  // tracepoint's parameters).
  std::optional<std::string> TracepointParameter(std::string_view tracepoint, std::string_view name) const;
  // How a scalar C type is read ("umode_t": u16), typedefs followed.
  std::optional<FetchType> ScalarType(std::string_view c_type) const;

 private:
  BtfInfo(std::shared_ptr<const btf::File> file, const Arch& arch);
  std::shared_ptr<const btf::File> file_;
  const Arch* arch_;
};

}  // namespace kprobectl
