// SPDX-License-Identifier: GPL-2.0-or-later
//
// Fuzz target: a raw BTF blob read by the BTF index (btf_index.h), which
// reads what /sys/kernel/btf/vmlinux or --btf FILE holds without libbpf. The
// input is indexed (every type's length checked), both as a copy of its
// sections and referring to it, and each index read back from its own
// sealed bytes; every type, name and pointer is then looked up in both,
// which must agree: no read outside the blob or the index.
#include <string>
#include <string_view>

#include "btf/btf_index.h"
#include "btf/btf_raw.h"
#include "fuzz_target.h"

using namespace kprobectl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kprobectl::btf::BlobKey key{size, 1, 2};
  const std::string_view blob(reinterpret_cast<const char*>(data), size);
  // The index holding a copy of the blob's sections, and one referring to
  // the blob.
  for (bool refer : {false, true}) {
    auto built = kprobectl::btf::Index::Build(blob, key, refer);
    if (!built) return 0;
    auto read = kprobectl::btf::Index::FromBytes(built->bytes(), key, blob);
    KP_FUZZ_CHECK(read);
    auto names = (*read)->FunctionNames();
    KP_FUZZ_CHECK(names && *names == *built->FunctionNames());
    for (uint32_t id = 0; id < 4096; ++id) {
      auto type = (*read)->Get(id);
      KP_FUZZ_CHECK(type && *type == *built->Get(id));
      if (type->kind == kprobectl::btf::Type::kVoid && id > 0) break;
      for (uint32_t kind : {kprobectl::btf::kRawFunc, kprobectl::btf::kRawStruct, kprobectl::btf::kRawTypedef,
                            kprobectl::btf::kRawEnum64})
        KP_FUZZ_CHECK(*(*read)->Find(type->name, kind) == *built->Find(type->name, kind));
      KP_FUZZ_CHECK(*(*read)->PointerTo(id) == *built->PointerTo(id));
    }
  }
  return 0;
}
