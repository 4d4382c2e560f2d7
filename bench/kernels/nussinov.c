/* nussinov: RNA base-pair maximisation by dynamic programming over a triangle. */
#ifndef N
#define N 60
#endif
#define max_score(a, b) ((a) >= (b) ? (a) : (b))
#define pairs(b1, b2) (((b1) + (b2)) == 3 ? 1 : 0)
void kernel_nussinov(int seq[N], int table[N][N])
{
  int i, j, k;
#pragma scop
  for (i = N - 1; i >= 0; i--) {
    for (j = i + 1; j < N; j++) {
      if (j - 1 >= 0)
        table[i][j] = max_score(table[i][j], table[i][j - 1]);
      if (i + 1 < N)
        table[i][j] = max_score(table[i][j], table[i + 1][j]);
      if (j - 1 >= 0 && i + 1 < N) {
        if (i < j - 1)
          table[i][j] = max_score(table[i][j], table[i + 1][j - 1] + pairs(seq[i], seq[j]));
        else
          table[i][j] = max_score(table[i][j], table[i + 1][j - 1]);
      }
      for (k = i + 1; k < j; k++)
        table[i][j] = max_score(table[i][j], table[i][k] + table[k + 1][j]);
    }
  }
#pragma endscop
}
