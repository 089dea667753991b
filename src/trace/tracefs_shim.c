// SPDX-License-Identifier: GPL-2.0-or-later
//
// The one file that sees libtracefs. It is C because tracefs.h is not
// valid C++ (an inline function converts an int to an enum); decoder.cc
// calls it through tracefs_shim.h.
#include "tracefs_shim.h"

#include <errno.h>
#include <stdlib.h>
#include <tracefs/tracefs.h>
#include <unistd.h>

struct kp_ring {
  struct tracefs_instance* instance;
  struct tracefs_cpu** cpus;
  int ncpus;
  int page_size;
};

struct kp_ring* kp_ring_open(const char* root, const char* instance) {
  struct kp_ring* ring = calloc(1, sizeof *ring);
  if (!ring) return NULL;
  ring->instance = tracefs_instance_alloc(root, instance);
  long n = sysconf(_SC_NPROCESSORS_CONF);
  ring->ncpus = n > 0 ? (int)n : 1;
  ring->cpus = calloc((size_t)ring->ncpus, sizeof *ring->cpus);
  if (!ring->instance || !ring->cpus) {
    kp_ring_close(ring);
    return NULL;
  }
  for (int cpu = 0; cpu < ring->ncpus; ++cpu) {
    ring->cpus[cpu] = tracefs_cpu_open(ring->instance, cpu, true);
    if (ring->cpus[cpu]) ring->page_size = tracefs_cpu_read_size(ring->cpus[cpu]);
  }
  if (ring->page_size <= 0) {
    kp_ring_close(ring);
    return NULL;
  }
  return ring;
}

int kp_ring_cpus(const struct kp_ring* ring) { return ring->ncpus; }
int kp_ring_page_size(const struct kp_ring* ring) { return ring->page_size; }

int kp_ring_read(struct kp_ring* ring, int cpu, void* page) {
  if (cpu < 0 || cpu >= ring->ncpus || !ring->cpus[cpu]) return 0;
  int n = tracefs_cpu_read(ring->cpus[cpu], page, true);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
  return n;
}

void kp_ring_close(struct kp_ring* ring) {
  if (!ring) return;
  for (int cpu = 0; ring->cpus && cpu < ring->ncpus; ++cpu)
    if (ring->cpus[cpu]) tracefs_cpu_close(ring->cpus[cpu]);
  free(ring->cpus);
  if (ring->instance) tracefs_instance_free(ring->instance);
  free(ring);
}
