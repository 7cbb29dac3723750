// Small force-inlined helpers: give the line table multi-level inline chains that cross files.
#pragma once

__device__ __forceinline__ float sq(float x) { return x * x; }

__device__ __forceinline__ float poly(float x, int n)
{
    float acc = 0.0f;
    for (int i = 0; i < n; ++i)
        acc = acc * x + sq(x + i);
    return acc;
}
