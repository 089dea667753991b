// SPDX-License-Identifier: GPL-2.0-or-later
//
// The symbol index of a large image (a vmlinux: 100,000+ symbols read in
// place), kept in the cache as <build-id>.sym: the names hashed into an
// open-addressing table and the functions and objects sorted by address.
// Without it every look-up by name is a pass over the whole table. Like the
// debuginfo index it is used only when its magic, version, build-id, the
// image's size and mtime, its symbol count, its length and its seal (of the
// header and the block table, cache_file.h) agree; each block a look-up
// reads is checked against its hash then, and each entry it reads to be in
// range (elf_symbols.cc): a look-up reads a few slots of 2 MB.
//
// Layout (little-endian): header 128 bytes (magic "KPSYMIDX", u32 version,
// u32 symbol count, u64 image size, i64 image mtime in ns, u64 payload
// size, u64 seal, u32 slots, u32 functions, u32 objects, u32 pad, u64 max
// size[2], char build-id hex[48]); u64 slots[] (entry + 1 in the low 32
// bits, 0 empty; the name's hash's high 32 bits above, so a probe reads a
// name only when they agree); then for functions and
// objects, u64 values[] and u32 entries[] (each padded to 8); the block
// table.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

#include "kprobectl/cache_file.h"
#include "kprobectl/elf_image.h"

namespace kprobectl {

namespace {

constexpr char kMagic[8] = {'K', 'P', 'S', 'Y', 'M', 'I', 'D', 'X'};
// 3: checked block by block; 4: tagged slots (a vmlinux's 482 ".LC0" and
// 365 "__func__.0" made clusters whose every name a look-up read, a page
// fault each: 2 ms of a warm command for ten names); 5: blocks on the
// file's pages (cache_file.h)
constexpr uint32_t kVersion = 5;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t count;
  uint64_t image_size;
  int64_t image_mtime_ns;
  uint64_t payload;
  uint64_t seal;
  uint32_t slots, functions, objects, pad;
  uint64_t max_size[2];
  char build_id[48];
};
static_assert(sizeof(Header) == 128);

size_t Padded(size_t bytes) { return (bytes + 7) / 8 * 8; }

template <typename T>
void Put(std::string& out, const std::vector<T>& v) {
  if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  out.resize(Padded(out.size()), '\0');
}

}  // namespace

void ElfImage::Table::IndexFailed() const {
  // Once: the file goes, this run's look-ups scan, the next run rebuilds it.
  if (!index_path.empty()) unlink(index_path.c_str());
}

void ElfImage::Table::UseSymbolIndex(const std::string& cache_dir, const std::string& build_id, uint64_t image_size,
                                     int64_t mtime_ns) {
  if (cache_dir.empty() || build_id.empty() || build_id.size() >= 48 || !raw_symbols) return;
  const std::string path = cache_dir + "/" + build_id + ".sym";
  auto check = [&](const std::shared_ptr<const LazyFile>& file) -> bool {
    Header h;
    const unsigned char* data = file->Read(0, sizeof h);
    if (!data) return false;
    std::memcpy(&h, data, sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion || h.count != raw_count ||
        h.image_size != image_size || h.image_mtime_ns != mtime_ns ||
        std::string_view(h.build_id, strnlen(h.build_id, sizeof h.build_id)) != build_id || h.slots == 0 ||
        (h.slots & (h.slots - 1)) != 0)
      return false;
    size_t need = sizeof h + Padded(size_t{h.slots} * 8) + Padded(size_t{h.functions} * 8) +
                  Padded(size_t{h.functions} * 4) + Padded(size_t{h.objects} * 8) + Padded(size_t{h.objects} * 4);
    if (need != h.payload) return false;
    auto checked = CheckedBytes::Open(file, h.payload, sizeof h, offsetof(Header, seal));
    if (!checked) return false;
    index_bytes = *checked;
    index_base = data;
    index_path = path;
    const unsigned char* p = data + sizeof h;
    name_slots = {reinterpret_cast<const uint64_t*>(p), h.slots};
    p += Padded(size_t{h.slots} * 8);
    uint32_t counts[2] = {h.functions, h.objects};
    for (int t : {0, 1}) {
      values[t] = {reinterpret_cast<const uint64_t*>(p), counts[t]};
      p += Padded(size_t{counts[t]} * 8);
      order[t] = {reinterpret_cast<const uint32_t*>(p), counts[t]};
      p += Padded(size_t{counts[t]} * 4);
      max_size[t] = h.max_size[t];
    }
    return true;
  };
  // Not read in at once: a look-up reads a few of its pages.
  if (auto file = LazyFile::Open(path); file && check(*file)) {
    index_mapping = *file;
    return;
  }
  // Build it: the address orders, and every name hashed.
  IndexAddresses();
  std::vector<uint64_t> slots(std::max<size_t>(2, std::bit_ceil(raw_count * 2)));
  const size_t mask = slots.size() - 1;
  for (size_t i = 0; i < raw_count; ++i) {
    Entry e = At(i);
    if (e.skip) continue;
    std::string_view name = Name(e);
    uint64_t hash = Hash64(name.data(), name.size());
    size_t slot = hash & mask;
    while (slots[slot]) slot = (slot + 1) & mask;
    slots[slot] = NameSlot(hash, static_cast<uint32_t>(i));
  }
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.count = static_cast<uint32_t>(raw_count);
  h.image_size = image_size;
  h.image_mtime_ns = mtime_ns;
  h.slots = static_cast<uint32_t>(slots.size());
  h.functions = static_cast<uint32_t>(owned_values[0].size());
  h.objects = static_cast<uint32_t>(owned_values[1].size());
  h.max_size[0] = max_size[0];
  h.max_size[1] = max_size[1];
  std::memcpy(h.build_id, build_id.data(), build_id.size());
  std::string bytes(sizeof h, '\0');
  Put(bytes, slots);
  for (int t : {0, 1}) {
    Put(bytes, owned_values[t]);
    Put(bytes, owned_order[t]);
  }
  h.payload = bytes.size();
  std::memcpy(bytes.data(), &h, sizeof h);
  SealBlocks(bytes, sizeof h, offsetof(Header, seal));
  (void)WriteFileAtomically(path, bytes);  // a cache: without it, look-ups only take longer
  // This run uses what it built: the slots go where the spans can see them.
  auto owned = std::make_shared<std::vector<uint64_t>>(std::move(slots));
  name_slots = *owned;
  index_mapping = owned;
}

}  // namespace kprobectl
