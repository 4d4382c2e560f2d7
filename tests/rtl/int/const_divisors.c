/* Division and remainder by constants (signed, unsigned, 64-bit, negative divisors): the datapath
 * multiplies by the reciprocal (hls/rtl/int_arith.py:reciprocal) instead of using the divider. */
void kernel_cd(int n, int A[40], unsigned B[40], long C[40], int D[40], unsigned E2[40], long F[40])
{
  int i;
#pragma scop
  for (i = 0; i < 40; i++) {
    D[i] = A[i] / 3 + A[i] % 7 + A[i] / -5 + A[i] % -6;
    E2[i] = B[i] / 10 + B[i] % 3u + B[i] / 0x7fffffffu;
    F[i] = C[i] / 1000003 + C[i] % -9 + C[i] / 6;
  }
#pragma endscop
}
