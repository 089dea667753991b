// SPDX-License-Identifier: GPL-2.0-or-later
//
// Fuzz target: the debuginfo index cache file (BUILD-ID.idx). A file that
// fails its hash is refused before anything else is read, so the target
// writes the right length and hash into the input's header (and takes the
// key from it) to reach the checks of the layout and every look-up: a
// cache file is never trusted, whoever wrote it.
#include <cstring>
#include <string>

#include "debuginfo/index_file.h"
#include "fuzz_target.h"
#include "kprobectl/cache_file.h"

using namespace kprobectl;

namespace {

// The header's layout (index_file.cc): build-id size at 12, the id at 16,
// the indexed file's size at 64 and mtime at 72, the file's size at 80 and
// its hash at 88, 128 bytes in all.
constexpr size_t kHeaderSize = 128, kFileSizeAt = 80, kHashAt = 88;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  dwarf::IndexKey key;
  if (size >= kHeaderSize) {
    uint64_t file_size = size;
    std::memcpy(bytes.data() + kFileSizeAt, &file_size, 8);
    uint64_t hash = FileHash64(reinterpret_cast<const unsigned char*>(bytes.data()), size, kHeaderSize, kHashAt);
    std::memcpy(bytes.data() + kHashAt, &hash, 8);
    uint32_t id_size = 0;
    std::memcpy(&id_size, bytes.data() + 12, 4);
    key.build_id.assign(bytes.data() + 16, std::min<uint32_t>(id_size, 48));
    std::memcpy(&key.size, bytes.data() + 64, 8);
    std::memcpy(&key.mtime_ns, bytes.data() + 72, 8);
  }
  auto view = dwarf::IndexView::FromBytes(std::move(bytes), key);
  if (!view) return 0;
  for (const std::string& name : (*view)->FunctionNames()) {
    (void)(*view)->Functions(name);
    (void)(*view)->Globals(name);
    (void)(*view)->Files(name);
  }
  (void)(*view)->Functions("compute");
  (void)(*view)->Units();
  (void)(*view)->FrameFor(0x1139);
  return 0;
}
