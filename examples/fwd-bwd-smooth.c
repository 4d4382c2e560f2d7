// dpn-synth-args: --param m=8 --param n=32
/*
 * fwd-bwd-smooth: zero-phase exponential smoothing of m signals of length
 * n (double), as filtfilt does with a first-order filter.  The sizes are
 * run-time parameters (C99 VLA parameters); n must be even.
 *   forward : y[r][i] = y[r][i-1] + alpha * (x[r][i] - y[r][i-1])
 *             (written with -=, *= and += on y[r][i])
 *   backward: z[r][i] = z[r][i+1] + alpha * (y[r][i] - z[r][i+1]),
 *             for (i = n - 2; i >= 0; i--)   (decrementing loop)
 *   res = x - z with -=, in a decrementing loop, and the odd samples of z
 *   taken from the end by a decrementing strided loop (i -= 2) into d.
 */
void kernel_fwd_bwd_smooth(int m, int n, double alpha, double x[m][n],
                           double y[m][n], double z[m][n], double res[m][n],
                           double d[m][n / 2])
{
  int r, i;

#pragma scop
  for (r = 0; r < m; r++) {
    y[r][0] = x[r][0];
    for (i = 1; i < n; i++) {
      y[r][i] = x[r][i];
      y[r][i] -= y[r][i - 1];
      y[r][i] *= alpha;
      y[r][i] += y[r][i - 1];
    }
    z[r][n - 1] = y[r][n - 1];
    for (i = n - 2; i >= 0; i--)
      z[r][i] = z[r][i + 1] + alpha * (y[r][i] - z[r][i + 1]);
    for (i = n - 1; i >= 0; i--) {
      res[r][i] = x[r][i];
      res[r][i] -= z[r][i];
    }
    for (i = n - 1; i > 0; i -= 2)
      d[r][i / 2] = z[r][i];
  }
#pragma endscop
}
