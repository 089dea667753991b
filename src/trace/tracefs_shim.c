// SPDX-License-Identifier: GPL-2.0-or-later
//
// The one file that sees libtracefs. It is C because tracefs.h is not
// valid C++ (an inline function converts an int to an enum); decoder.cc
// calls it through tracefs_shim.h.
#include "tracefs_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracefs/tracefs.h>
#include <unistd.h>

struct kp_ring {
  struct tracefs_instance* instance;
  struct tracefs_cpu** cpus;
  int* poll_fds;  // a second open of each pipe, polled only: tracefs_cpu keeps its own private
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
  ring->poll_fds = malloc((size_t)ring->ncpus * sizeof *ring->poll_fds);
  if (!ring->instance || !ring->cpus || !ring->poll_fds) {
    kp_ring_close(ring);
    return NULL;
  }
  for (int cpu = 0; cpu < ring->ncpus; ++cpu) {
    ring->poll_fds[cpu] = -1;
    ring->cpus[cpu] = tracefs_cpu_open(ring->instance, cpu, true);
    if (!ring->cpus[cpu]) continue;
    ring->page_size = tracefs_cpu_read_size(ring->cpus[cpu]);
    char file[64];
    snprintf(file, sizeof file, "per_cpu/cpu%d/trace_pipe_raw", cpu);
    char* path = tracefs_instance_get_file(ring->instance, file);
    if (path) ring->poll_fds[cpu] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    tracefs_put_tracing_file(path);
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

int kp_ring_poll_fd(const struct kp_ring* ring, int cpu) {
  return cpu >= 0 && cpu < ring->ncpus ? ring->poll_fds[cpu] : -1;
}

void kp_ring_close(struct kp_ring* ring) {
  if (!ring) return;
  for (int cpu = 0; ring->cpus && cpu < ring->ncpus; ++cpu)
    if (ring->cpus[cpu]) tracefs_cpu_close(ring->cpus[cpu]);
  for (int cpu = 0; ring->poll_fds && cpu < ring->ncpus; ++cpu)
    if (ring->poll_fds[cpu] >= 0) close(ring->poll_fds[cpu]);
  free(ring->poll_fds);
  free(ring->cpus);
  if (ring->instance) tracefs_instance_free(ring->instance);
  free(ring);
}
