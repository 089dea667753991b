// SPDX-License-Identifier: GPL-2.0-or-later
//
// The program scripts/demo probes: a few calls with values worth seeing.
#include <stdio.h>
#include <string.h>

__attribute__((noipa)) int compute(int a, int b) { return a * b + 1; }

__attribute__((noipa)) size_t greet(const char* who) {
  printf("hello, %s\n", who);
  return strlen(who);
}

int main(void) {
  const char* names[] = {"kernel", "kprobectl", "world"};
  for (int i = 1; i <= 3; ++i) {
    int result = compute(i, i + 1);
    printf("compute(%d, %d) = %d\n", i, i + 1, result);
    greet(names[i - 1]);
  }
  return 0;
}
