// SPDX-License-Identifier: GPL-2.0-or-later
//
// Fuzz target: the debuginfo index cache file (BUILD-ID.idx). A file whose
// header or blocks fail their hashes is refused, so the target seals the
// input as the writer does (the payload's size in the header, the block
// table after it; the key taken from the header) to reach the checks of
// the layout and every look-up: a cache file is never trusted, whoever
// wrote it.
#include <cstring>
#include <string>

#include "debuginfo/index_file.h"
#include "fuzz_target.h"
#include "kprobectl/cache_file.h"

using namespace kprobectl;

namespace {

// The header's layout (index_file.cc): build-id size at 12, the id at 16,
// the indexed file's size at 64 and mtime at 72, the payload's size at 80
// and the seal at 88, 128 bytes in all.
constexpr size_t kHeaderSize = 128, kPayloadAt = 80, kSealAt = 88;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  dwarf::IndexKey key;
  if (size >= kHeaderSize) {
    uint64_t payload = size;
    std::memcpy(bytes.data() + kPayloadAt, &payload, 8);
    SealBlocks(bytes, kHeaderSize, kSealAt);
    uint32_t id_size = 0;
    std::memcpy(&id_size, bytes.data() + 12, 4);
    key.build_id.assign(bytes.data() + 16, std::min<uint32_t>(id_size, 48));
    std::memcpy(&key.size, bytes.data() + 64, 8);
    std::memcpy(&key.mtime_ns, bytes.data() + 72, 8);
  }
  auto view = dwarf::IndexView::FromBytes(std::move(bytes), key);
  if (!view) return 0;
  auto names = (*view)->FunctionNames();
  if (!names) return 0;
  for (const std::string& name : *names) {
    (void)(*view)->Functions(name);
    (void)(*view)->Globals(name);
    (void)(*view)->Files(name);
  }
  (void)(*view)->Functions("compute");
  (void)(*view)->Units();
  (void)(*view)->FrameFor(0x1139);
  return 0;
}
