/*
 * hash-mix-u32: per-row hashes of R rows of L unsigned words.
 *   h[r]: FNV-1a style: h ^= word; h *= 16777619u (wraps mod 2^32),
 *         then a murmur-like finaliser (^= >>, *=, <<=, |=)
 *   f[r]: rotate-and-add mix: f += 3u * word + (unsigned)i; f = rotl(f, 7)
 *   g[r]: sum of the words shifted left by i % 8, kept to 24 bits with &=,
 *         the row number or-ed into the top byte with |=
 * All arithmetic is unsigned int, so every overflow wraps (defined in C).
 * Only affine subscripts: the hash never indexes an array.
 */
#ifndef R
#define R 16
#endif
#ifndef L
#define L 24
#endif

void kernel_hash_mix_u32(unsigned int d[R][L], unsigned int h[R],
                         unsigned int f[R], unsigned int g[R])
{
  int r, i;

#pragma scop
  for (r = 0; r < R; r++) {
    h[r] = 2166136261u;
    f[r] = 0u;
    g[r] = 0xFFFFu;
    for (i = 0; i < L; i++) {
      h[r] ^= d[r][i];
      h[r] *= 16777619u;
      f[r] += 3u * d[r][i] + (unsigned int)i;
      f[r] = (f[r] << 7) | (f[r] >> 25);
      g[r] += d[r][i] << (i % 8);
      g[r] &= 0x00FFFFFFu;
    }
    h[r] ^= h[r] >> 16;
    h[r] *= 0x85ebca6bu;
    h[r] ^= h[r] >> 13;
    h[r] <<= 3;
    h[r] |= f[r] & 7u;
    g[r] |= (unsigned int)r << 24;
  }
#pragma endscop
}
