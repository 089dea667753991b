// SPDX-License-Identifier: GPL-2.0-or-later
//
// The program bench/serve-load probes: THREADS threads (default 1) call
// serve_load_call(lane, n) in a tight loop, lane the thread's number and n
// the call's number modulo 2^20 (a log2 histogram's worth of sizes), and
// serve_load_extra(n) every 256th call, until SIGTERM or SIGINT; then it
// prints its counts, which the probes' must equal:
//   calls TOTAL extra EXTRA lane0 N0 lane1 N1 ...
// Built by bench/serve-load with cc into a temporary directory.
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 8

__attribute__((noipa)) long serve_load_call(int lane, unsigned long n) { return lane + (long)n; }
__attribute__((noipa)) long serve_load_extra(unsigned long n) { return (long)n; }

static atomic_int stop;

static void on_stop(int sig) {
  (void)sig;
  atomic_store(&stop, 1);
}

struct lane {
  pthread_t thread;
  int number;
  unsigned long calls;
  unsigned long extra;
};

static void* run(void* arg) {
  struct lane* lane = arg;
  // noipa: the calls stay, though their results are unused.
  unsigned long calls = 0, extra = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    serve_load_call(lane->number, calls & 0xfffff);
    ++calls;
    if ((calls & 255) == 0) {
      serve_load_extra(calls);
      ++extra;
    }
  }
  lane->calls = calls;
  lane->extra = extra;
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  if (threads < 1 || threads > MAX_THREADS) {
    fprintf(stderr, "usage: serve_load [THREADS (1-%d)]\n", MAX_THREADS);
    return 2;
  }
  struct sigaction action = {0};
  action.sa_handler = on_stop;
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGINT, &action, NULL);
  struct lane lanes[MAX_THREADS] = {0};
  for (int i = 0; i < threads; ++i) {
    lanes[i].number = i;
    if (pthread_create(&lanes[i].thread, NULL, run, &lanes[i]) != 0) {
      perror("serve_load: pthread_create");
      return 1;
    }
  }
  unsigned long calls = 0, extra = 0;
  for (int i = 0; i < threads; ++i) {
    pthread_join(lanes[i].thread, NULL);
    calls += lanes[i].calls;
    extra += lanes[i].extra;
  }
  printf("calls %lu extra %lu", calls, extra);
  for (int i = 0; i < threads; ++i) printf(" lane%d %lu", i, lanes[i].calls);
  printf("\n");
  return 0;
}
