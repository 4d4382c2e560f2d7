/* correlation matrix of M variables over N observations (sqrt in the standard deviation). */
#include <math.h>
#ifndef M
#define M 28
#endif
#ifndef N
#define N 32
#endif
void kernel_correlation(double fn, double data[N][M], double corr[M][M], double mean[M], double stddev[M])
{
  int i, j, k;
  double eps = 0.1;
#pragma scop
  for (j = 0; j < M; j++) {
    mean[j] = 0.0;
    for (i = 0; i < N; i++)
      mean[j] += data[i][j];
    mean[j] /= fn;
  }
  for (j = 0; j < M; j++) {
    stddev[j] = 0.0;
    for (i = 0; i < N; i++)
      stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= fn;
    stddev[j] = sqrt(stddev[j]);
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= sqrt(fn) * stddev[j];
    }
  for (i = 0; i < M - 1; i++) {
    corr[i][i] = 1.0;
    for (j = i + 1; j < M; j++) {
      corr[i][j] = 0.0;
      for (k = 0; k < N; k++)
        corr[i][j] += (data[k][i] * data[k][j]);
      corr[j][i] = corr[i][j];
    }
  }
  corr[M - 1][M - 1] = 1.0;
#pragma endscop
}
