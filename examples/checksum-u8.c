/*
 * checksum-u8: per-block checksums of NB blocks of BL bytes (uint8).
 *   s1[b]: byte sum modulo 256 (uint8 wraparound via a cast)
 *   d1[b]: byte difference modulo 256 (uint8 wraparound, can go "below 0")
 *   s2[b]: running sum of s1 (uint32, Fletcher-style second sum)
 *   h[b]:  multiplicative hash (uint32, multiply wraps modulo 2^32)
 *   h[b] is finally mixed with unsigned shifts.
 * There is no data-dependent control flow: all wrapping is arithmetic.
 */
#include <stdint.h>

#ifndef NB
#define NB 16
#endif
#ifndef BL
#define BL 32
#endif

void kernel_checksum_u8(uint8_t data[NB][BL], uint8_t s1[NB], uint8_t d1[NB],
                        uint32_t s2[NB], uint32_t h[NB])
{
  int b, i;

#pragma scop
  for (b = 0; b < NB; b++) {
    s1[b] = 0;
    d1[b] = 0;
    s2[b] = 0;
    h[b] = 2166136261u;
    for (i = 0; i < BL; i++) {
      s1[b] = (uint8_t)(s1[b] + data[b][i]);
      d1[b] = (uint8_t)(d1[b] - data[b][i]);
      s2[b] = s2[b] + s1[b];
      h[b] = (h[b] + data[b][i]) * 16777619u;
    }
    h[b] = h[b] + (h[b] >> 15) + (s2[b] << 8);
  }
#pragma endscop
}
