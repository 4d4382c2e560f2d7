/* A structure parameter used as a value (`n - 1`) crashed the datapath generator (drop_params did
 * not take a PwAff), so compile, sim and even --dpn-only (cycle model latencies) failed. */
void kernel_pv(int n, int alpha, int A[20], int B[20])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    B[i] = A[i] * (n - 1) + alpha * 2 + A[i] * -alpha + i * n;
#pragma endscop
}
