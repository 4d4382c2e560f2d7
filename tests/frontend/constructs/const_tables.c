/* Constant tables: initialized local arrays the kernel only reads (a 3x3 filter, a 1-d lookup with
   its size taken from the list, a table with missing elements, which are zero, and one whose zeros
   differ in sign). */
void const_tables(float in[10][10], float out[10][10], int code[10], int mapped[10], float signs[8])
{
  const float k[3][3] = {{1.0f, 2.0f, 1.0f}, {2.0f, 4.0f, 2.0f}, {1.0f, 2.0f, 1.0f}};
  static const int lut[] = {7, -3, 7, 12, 7, 0, 5};
  int pad[2][3] = {{1}, {4, 5}};
  const float zs[4] = {0.0f, -0.0f, 2.0f, -0.0f};
  int i, j, di, dj;
#pragma scop
  for (i = 1; i < 9; i++)
    for (j = 1; j < 9; j++) {
      out[i][j] = 0.0f;
      for (di = 0; di < 3; di++)
        for (dj = 0; dj < 3; dj++)
          out[i][j] += k[di][dj] * in[i + di - 1][j + dj - 1];
    }
  for (i = 0; i < 7; i++)
    mapped[i] = code[i] * lut[i] + pad[i % 2][i % 3] + lut[3];
  for (i = 0; i < 8; i++)
    signs[i] = zs[i % 4] * 1.0f;
#pragma endscop
}
