// SPDX-License-Identifier: GPL-2.0-or-later
//
// libtraceevent parses the format files (tep) and walks ring-buffer pages
// (kbuffer); libtracefs (through tracefs_shim.c) opens the per-CPU raw
// pipes of an instance. Nothing outside these files sees either library.
//
// The formats are parsed from texts the caller read, never loaded with
// tracefs_local_events_system(): that also reads /proc/kallsyms (5 MB,
// grown 8 KB at a time with realloc), saved_cmdlines and printk_formats,
// and parses every event of each group, none of which the printer uses
// (it took 14 s under ASan, 0.6 s otherwise, for one event).
#include <traceevent/event-parse.h>
// kbuffer.h has no extern "C" of its own.
extern "C" {
#include <traceevent/kbuffer.h>
}
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kprobectl/strings.h"
#include "kprobectl/trace_decoder.h"
#include "tracefs_shim.h"

namespace kprobectl {

namespace {

struct TepFree {
  void operator()(tep_handle* tep) const { tep_free(tep); }
};
struct KbufferFree {
  void operator()(kbuffer* k) const { kbuffer_free(k); }
};

class TepDecoder : public EventDecoder {
 public:
  explicit TepDecoder(tep_handle* tep)
      : tep_(tep), kbuf_(kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST)) {}

  Result<void> Describe(tep_event* event) {
    EventFormat f;
    f.id = event->id;
    f.system = event->system ? event->system : "";
    f.name = event->name ? event->name : "";
    f.print_fmt = event->print_fmt.format ? event->print_fmt.format : "";
    tep_format_field** fields = tep_event_fields(event);
    if (!fields) return Fail("cannot read the fields of " + f.system + ":" + f.name);
    for (int i = 0; fields[i]; ++i) {
      tep_format_field* field = fields[i];
      FieldFormat ff;
      ff.name = field->name;
      ff.offset = static_cast<unsigned>(field->offset);
      ff.size = static_cast<unsigned>(field->size);
      ff.is_signed = field->flags & TEP_FIELD_IS_SIGNED;
      ff.dynamic = field->flags & TEP_FIELD_IS_DYNAMIC;
      if ((field->flags & TEP_FIELD_IS_ARRAY) && !ff.dynamic) ff.elem_size = field->elementsize;
      f.fields.push_back(std::move(ff));
    }
    free(fields);
    formats_.push_back(std::move(f));
    return {};
  }

  const std::vector<EventFormat>& formats() const override { return formats_; }

  // A page's header: a u64 timestamp and a 64-bit commit (the data's
  // length in its low 27 bits, flags above).
  static constexpr size_t kPageHeader = 16;
  static constexpr uint64_t kCommitMask = (uint64_t{1} << 27) - 1;

  Result<void> DecodePage(std::span<const uint8_t> page, int cpu, std::vector<Record>& out, uint64_t* missed) override {
    if (page.size() < kPageHeader) return {};
    // kbuffer trusts the page's commit field (its data's length): a page
    // shorter than its header says is corrupt, never read past its end.
    uint64_t commit = 0;
    std::memcpy(&commit, page.data() + 8, 8);
    if (kPageHeader + (commit & kCommitMask) > page.size())
      return Fail("a corrupt ring-buffer page of CPU " + std::to_string(cpu) + ": its header says " +
                  std::to_string(commit & kCommitMask) + " bytes of events in " + std::to_string(page.size()));
    // kbuffer reads the page in place; it never writes to it.
    if (kbuffer_load_subbuffer(kbuf_.get(), const_cast<uint8_t*>(page.data())) < 0)
      return Fail("cannot read a ring-buffer page of CPU " + std::to_string(cpu));
    int lost = kbuffer_missed_events(kbuf_.get());
    if (missed && lost) *missed += lost > 0 ? static_cast<uint64_t>(lost) : 1;
    unsigned long long ts = 0;
    const uint8_t* previous = nullptr;
    for (void* data = kbuffer_read_event(kbuf_.get(), &ts); data; data = kbuffer_next_event(kbuf_.get(), &ts)) {
      // kbuffer steps by each event's length: a corrupt length of 0 would
      // give the same event forever.
      if (previous && static_cast<const uint8_t*>(data) <= previous)
        return Fail("a corrupt ring-buffer page of CPU " + std::to_string(cpu) + ": its events do not advance");
      previous = static_cast<const uint8_t*>(data);
      Record r;
      r.ts = ts;
      r.cpu = cpu;
      r.data = static_cast<const uint8_t*>(data);
      r.size = static_cast<unsigned>(kbuffer_event_size(kbuf_.get()));
      if (r.data < page.data() || r.size > page.size() ||
          r.data - page.data() > static_cast<ptrdiff_t>(page.size() - r.size))
        return Fail("a corrupt ring-buffer page of CPU " + std::to_string(cpu) + ": an event runs past its end");
      if (r.size < 8) continue;
      uint16_t type;
      int32_t pid;
      std::memcpy(&type, r.data, 2);
      std::memcpy(&pid, r.data + 4, 4);
      r.type = type;
      r.pid = pid;
      out.push_back(r);
    }
    return {};
  }

 private:
  std::unique_ptr<tep_handle, TepFree> tep_;
  std::unique_ptr<kbuffer, KbufferFree> kbuf_;
  std::vector<EventFormat> formats_;
};

class TracefsRingReader : public RingReader {
 public:
  explicit TracefsRingReader(kp_ring* ring) : ring_(ring) {}
  ~TracefsRingReader() override { kp_ring_close(ring_); }
  TracefsRingReader(const TracefsRingReader&) = delete;
  TracefsRingReader& operator=(const TracefsRingReader&) = delete;

  int cpus() const override { return kp_ring_cpus(ring_); }
  std::vector<int> PollFds() const override {
    std::vector<int> fds;
    for (int cpu = 0; cpu < cpus(); ++cpu)
      if (int fd = kp_ring_poll_fd(ring_, cpu); fd >= 0) fds.push_back(fd);
    return fds;
  }
  Result<size_t> ReadPage(int cpu, std::vector<uint8_t>& page) override {
    page.resize(static_cast<size_t>(kp_ring_page_size(ring_)));
    int n = kp_ring_read(ring_, cpu, page.data());
    if (n < 0) return Fail("cannot read the ring buffer of CPU " + std::to_string(cpu) + ": " + std::strerror(-n));
    return static_cast<size_t>(n);
  }

 private:
  kp_ring* ring_;
};

}  // namespace

Result<std::unique_ptr<EventDecoder>> EventDecoder::FromFormats(
    const std::vector<std::pair<std::string, std::string>>& system_and_format) {
  tep_handle* tep = tep_alloc();
  if (!tep) return Fail("out of memory");
  tep_set_long_size(tep, static_cast<int>(sizeof(long)));
  tep_set_page_size(tep, static_cast<int>(sysconf(_SC_PAGESIZE)));
  auto decoder = std::make_unique<TepDecoder>(tep);
  for (const auto& [system, text] : system_and_format) {
    tep_event* event = nullptr;
    if (tep_parse_format(tep, &event, text.c_str(), text.size(), system.c_str()) != TEP_ERRNO__SUCCESS || !event)
      return Fail("cannot parse an event format of " + system);
    KP_TRY_VOID(decoder->Describe(event));
  }
  return std::unique_ptr<EventDecoder>(std::move(decoder));
}

Result<std::unique_ptr<RingReader>> RingReader::Open(const std::string& root, const std::string& instance) {
  kp_ring* ring = kp_ring_open(root.c_str(), instance.c_str());
  if (!ring)
    return Fail("cannot open the raw ring buffers of the tracefs instance " + instance + ": " + std::strerror(errno));
  return std::unique_ptr<RingReader>(std::make_unique<TracefsRingReader>(ring));
}

}  // namespace kprobectl
