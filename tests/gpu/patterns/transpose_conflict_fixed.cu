// Fixed version of transpose_conflict.cu: one word of padding per tile row (tile[32][33]) puts the 32 words
// of a column in 32 different banks, so each warp read is one wavefront again (the padding fix). The kernel
// and the host program are otherwise identical, so the before/after counters differ only by the conflict.
#define TILE_PITCH (TILE + 1)
#include "transpose_conflict.cu"
