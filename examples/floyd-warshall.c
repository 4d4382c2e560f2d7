/*
 * floyd-warshall: all-pairs shortest paths, in place on an N x N int32
 * distance matrix.  The minimum is written with ?: (a data-dependent
 * select in the value; the control flow stays static).
 * Entries are expected to be in [0, 2^30) so that the sums cannot
 * overflow int32.
 */
#include <stdint.h>

#ifndef N
#define N 24
#endif

void kernel_floyd_warshall(int32_t path[N][N])
{
  int i, j, k;

#pragma scop
  for (k = 0; k < N; k++)
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        path[i][j] = path[i][j] < path[i][k] + path[k][j]
                       ? path[i][j]
                       : path[i][k] + path[k][j];
#pragma endscop
}
