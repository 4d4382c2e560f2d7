// dpn-synth-args: --param n=40
/* Running sums and maxima in 64 bits, with a loop-carried scalar and a decrementing suffix pass. */
#include <stdint.h>

void kernel_prefix_max_i64(int n, int64_t x[n], int64_t pre[n], int64_t suf[n], int64_t best[1])
{
  int64_t s;
  int i;
#pragma scop
  s = 0;
  for (i = 0; i < n; i++) {
    s = s + x[i];
    pre[i] = s;
  }
  suf[n - 1] = x[n - 1];
  for (i = n - 2; i >= 0; i--)
    suf[i] = suf[i + 1] + x[i];
  best[0] = pre[0];
  for (i = 1; i < n; i++)
    best[0] = pre[i] > best[0] ? pre[i] : best[0];
#pragma endscop
}
