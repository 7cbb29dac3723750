// The check every native collector harness uses: on failure, name the condition and its line and leave the
// calling function (main or a check of its own) with 1.
#pragma once

#include <cstdio>

#define EXPECT(cond)                                          \
  do {                                                        \
    if (!(cond)) {                                            \
      std::printf("failed: %s (line %d)\n", #cond, __LINE__); \
      return 1;                                               \
    }                                                         \
  } while (0)
