// SPDX-License-Identifier: GPL-2.0-or-later
//
// Reading the ring buffer: event formats and raw per-CPU pages turned into
// records, through libtraceevent (which stays in decoder.cc) and libtracefs
// (in tracefs_shim.c). In: the text of the events' format files, and a
// tracefs root and instance to read pages from (or captured pages, in tests
// and benchmarks). Out: EventFormat descriptions and Records that point
// into the pages they were decoded from.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

struct FieldFormat {
  std::string name;
  unsigned offset = 0;
  unsigned size = 0;
  bool is_signed = false;
  bool dynamic = false;    // __data_loc: a 32-bit (length << 16 | offset) in the record
  unsigned elem_size = 0;  // arrays: size of one element; 0 for scalars
};

struct EventFormat {
  int id = 0;
  std::string system;               // the group
  std::string name;                 // the event
  std::vector<FieldFormat> fields;  // the event's own fields, not common_*
  std::string print_fmt;            // the format string of "print fmt"
};

struct Record {
  uint64_t ts = 0;  // nanoseconds, the instance's trace clock
  int cpu = 0;
  int type = 0;  // the event id
  int pid = 0;
  uint32_t stacks = 0;            // 1 + the index of the stacks recorded after it (Tracer), 0 for none
  const uint8_t* data = nullptr;  // the whole event, common fields first
  unsigned size = 0;
};

class EventDecoder {
 public:
  // Formats from the text of format files (each "name: ...\nID: ...\nformat: ..."),
  // with the group each belongs to: events/GROUP/EVENT/format as read.
  static Result<std::unique_ptr<EventDecoder>> FromFormats(
      const std::vector<std::pair<std::string, std::string>>& system_and_format);
  virtual ~EventDecoder() = default;

  virtual const std::vector<EventFormat>& formats() const = 0;

  // Records of one ring-buffer page ("sub-buffer"), in order; `missed`
  // receives how many events the kernel dropped before it (overwritten).
  virtual Result<void> DecodePage(std::span<const uint8_t> page, int cpu, std::vector<Record>& out,
                                  uint64_t* missed) = 0;
};

// Non-blocking reader of an instance's per-CPU trace_pipe_raw files.
class RingReader {
 public:
  static Result<std::unique_ptr<RingReader>> Open(const std::string& root, const std::string& instance);
  virtual ~RingReader() = default;
  virtual int cpus() const = 0;
  // Reads the next full or partial page of `cpu` into `page`; returns its
  // size, 0 when nothing is there now.
  virtual Result<size_t> ReadPage(int cpu, std::vector<uint8_t>& page) = 0;
  // Descriptors to poll(): readable once a CPU's buffer is filling (the
  // instance's buffer_percent full, half by default). None for captured
  // pages.
  virtual std::vector<int> PollFds() const { return {}; }
};

}  // namespace kprobectl
