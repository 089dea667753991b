// SPDX-License-Identifier: GPL-2.0-or-later
//
// A C interface over the part of libtracefs kprobectl uses: the per-CPU raw
// ring-buffer pipes of an instance.
#ifndef KPROBECTL_TRACEFS_SHIM_H
#define KPROBECTL_TRACEFS_SHIM_H

#ifdef __cplusplus
extern "C" {
#endif

struct kp_ring;

// NULL on failure (errno says why).
struct kp_ring* kp_ring_open(const char* root, const char* instance);
int kp_ring_cpus(const struct kp_ring* ring);
int kp_ring_page_size(const struct kp_ring* ring);
// Bytes read into `page` (kp_ring_page_size() of room), 0 when none are
// there now, or -errno.
int kp_ring_read(struct kp_ring* ring, int cpu, void* page);
// A descriptor of the CPU's raw pipe to poll (readable once the kernel's
// buffer_percent of its buffer is full), or -1.
int kp_ring_poll_fd(const struct kp_ring* ring, int cpu);
void kp_ring_close(struct kp_ring* ring);

#ifdef __cplusplus
}
#endif

#endif
