/* adi: alternating-direction implicit sweeps for a 2-D heat problem, written for dpn-synth tests. */
#ifndef TS
#define TS 20
#endif
#ifndef N
#define N 20
#endif
void kernel_adi(double u[N][N], double v[N][N], double p[N][N], double q[N][N])
{
  int t, i, j;
  double DX = 1.0 / N, DY = 1.0 / N, DT = 1.0 / TS;
  double B1 = 2.0, B2 = 1.0;
  double m1 = B1 * DT / (DX * DX), m2 = B2 * DT / (DY * DY);
  double a = -m1 / 2.0, b = 1.0 + m1, c = a;
  double d = -m2 / 2.0, e = 1.0 + m2, f = d;
#pragma scop
  for (t = 1; t <= TS; t++) {
    for (i = 1; i < N - 1; i++) {
      v[0][i] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = v[0][i];
      for (j = 1; j < N - 1; j++) {
        p[i][j] = -c / (a * p[i][j - 1] + b);
        q[i][j] = (-d * u[j][i - 1] + (1.0 + 2.0 * d) * u[j][i] - f * u[j][i + 1] - a * q[i][j - 1]) / (a * p[i][j - 1] + b);
      }
      v[N - 1][i] = 1.0;
      for (j = N - 2; j >= 1; j--)
        v[j][i] = p[i][j] * v[j + 1][i] + q[i][j];
    }
    for (i = 1; i < N - 1; i++) {
      u[i][0] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = u[i][0];
      for (j = 1; j < N - 1; j++) {
        p[i][j] = -f / (d * p[i][j - 1] + e);
        q[i][j] = (-a * v[i - 1][j] + (1.0 + 2.0 * a) * v[i][j] - c * v[i + 1][j] - d * q[i][j - 1]) / (d * p[i][j - 1] + e);
      }
      u[i][N - 1] = 1.0;
      for (j = N - 2; j >= 1; j--)
        u[i][j] = p[i][j] * u[i][j + 1] + q[i][j];
    }
  }
#pragma endscop
}
