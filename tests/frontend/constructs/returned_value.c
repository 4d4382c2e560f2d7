/* A kernel that returns what it computes: the sum of squares of the differences, in double,
   returned as float (C's conversion), and a count of the large ones through an array. */
#define N 20

float returned_value(const float *a, const float *b, int over[1])
{
  double s = 0.0;
  over[0] = 0;
  for (int i = 0; i < N; i++) {
    float d = a[i] - b[i];
    s += d * d;
    if (d > 0.5f)
      over[0]++;
  }
  return s / N;
}
