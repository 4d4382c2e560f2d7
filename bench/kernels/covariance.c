/* covariance of M variables over N observations. */
#ifndef M
#define M 28
#endif
#ifndef N
#define N 32
#endif
void kernel_covariance(double fn, double data[N][M], double cov[M][M], double mean[M])
{
  int i, j, k;
#pragma scop
  for (j = 0; j < M; j++) {
    mean[j] = 0.0;
    for (i = 0; i < N; i++)
      mean[j] += data[i][j];
    mean[j] /= fn;
  }
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      data[i][j] -= mean[j];
  for (i = 0; i < M; i++)
    for (j = i; j < M; j++) {
      cov[i][j] = 0.0;
      for (k = 0; k < N; k++)
        cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (fn - 1.0);
      cov[j][i] = cov[i][j];
    }
#pragma endscop
}
