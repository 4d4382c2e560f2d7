/* `if (c) { ...; break; }` on data: a search that stops at the first match, and a search per row
   that stops inside an inner loop (each row's flag cleared before its loop). */
#define N 16

void break_search(const float A[N], const int K[N][N], int idx[1], int first[N], int count[N])
{
  idx[0] = -1;
  for (int i = 0; i < N; i++)
    if (A[i] > 0.5f) {
      idx[0] = i;
      break;
    }
  for (int i = 0; i < N; i++) {
    first[i] = N;
    count[i] = 0;
    for (int j = 0; j < N; j++) {
      if (K[i][j] % 7 == 3) {
        first[i] = j;
        break;
      }
      count[i] += K[i][j] & 1;
    }
  }
}
