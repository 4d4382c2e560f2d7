/* No `#pragma scop` and no --function: the only function besides `main` is the kernel, whole. */
void saxpy(float a, float X[32], float Y[32])
{
  for (int i = 0; i < 32; i++)
    Y[i] = a * X[i] + Y[i];
}

int main(void)
{
  float X[32], Y[32];
  for (int i = 0; i < 32; i++) {
    X[i] = i;
    Y[i] = 1;
  }
  saxpy(2.0f, X, Y);
  return 0;
}
