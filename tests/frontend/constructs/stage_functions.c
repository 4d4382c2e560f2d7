/* A dataflow of stages, each a `void` function called as a statement (as dataflow HLS code writes
   them): inlined, their counters and locals renamed apart from the caller's, an array passed by name,
   a scalar argument converted to its parameter (copied where the function assigns it), a trailing
   `return;`.  The kernel is the function calling the others (no pragmas, `main` aside). */
#define H 12
#define W 10
static void blur(const float in[H][W], float out[H][W])
{
  for (int i = 0; i < H; i++)
    for (int j = 1; j < W - 1; j++)
      out[i][j] = (in[i][j - 1] + in[i][j] + in[i][j + 1]) * 0.25f;
  for (int i = 0; i < H; i++) {
    out[i][0] = in[i][0];
    out[i][W - 1] = in[i][W - 1];
  }
}

static void scale(float x[H][W], float k, int n)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < W; j++)
      x[i][j] = x[i][j] > 0.5f ? x[i][j] * k : x[i][j];
  k = 0.0f;
}

static void rowsum(const float x[H][W], float s[H])
{
  for (int i = 0; i < H; i++) {
    float acc = 0.0f;
    for (int j = 0; j < W; j++)
      acc += x[i][j];
    s[i] = acc;
  }
  return;
}

void top(const float in[H][W], float out[H][W], float s[H], float k)
{
  float tmp[H][W];
  blur(in, tmp);
  scale(tmp, k * 2.0f, H - 2);
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++)
      out[i][j] = tmp[i][j];
  rowsum(tmp, s);
}

int main(void) { return 0; }
