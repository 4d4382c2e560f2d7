/* 64-bit unsigned loop counters (`size_t`, `uint64_t`): the check that a counter stays in its type's
   range compared against 2^64 - 1, a constant isl's small-integer constructor cannot take (internal
   error before the fix). */
#include <stddef.h>
#include <stdint.h>

void unsigned_64_counters(uint64_t A[16], uint64_t B[16], int32_t C[12])
{
  for (size_t i = 0; i < 12; i++)
    C[i] = (int32_t) (A[i] >> 3) - (int32_t) i;
  for (uint64_t i = 15; i > 0; i--)
    B[i] = A[i] * 3u + A[i - 1];
}
