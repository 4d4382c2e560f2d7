/* Constants at the file scope: a `const` table, enumerators (anonymous, in a typedef, one counted
   on from the last, one counting the table with `sizeof`), a `const` scalar, and a local enumeration
   in the kernel. */
static const float coeff[5] = {0.125f, 0.25f, 0.25f, 0.25f, 0.125f};
enum { N = 24, TAPS = sizeof(coeff) / sizeof(coeff[0]) };
typedef enum { HALF = N / 2, AFTER } sizes_t;
static const double gain = 1.5;
const int stride = 2;

void file_scope_constants(const float x[N + 4], float y[N], double z[AFTER], int w[HALF])
{
  enum { TWO = 2 };
  for (int i = 0; i < N; i++) {
    float s = 0.0f;
    for (int t = 0; t < TAPS; t++)
      s += coeff[t] * x[i + t];
    y[i] = s;
  }
  for (int i = 0; i < AFTER; i++)
    z[i] = gain * x[stride * (i % HALF)] + TWO;
  for (int i = 0; i < HALF; i++)
    w[i] = i * TWO + HALF + (int) (sizeof(coeff[0]) * sizeof gain);
}
