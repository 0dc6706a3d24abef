/* test_util.h - a CHECK macro for the unit tests: print what failed, count, go on. */
#ifndef DPAMR_TEST_UTIL_H
#define DPAMR_TEST_UTIL_H
#include <stdio.h>
static int g_fail = 0, g_pass = 0;
#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (cond) {                                                                   \
            ++g_pass;                                                                 \
        } else {                                                                      \
            ++g_fail;                                                                 \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\n");                                                    \
        }                                                                             \
    } while (0)
#define TEST_DONE()                                                                   \
    (printf("%d checks passed, %d failed\n", g_pass, g_fail), g_fail ? 1 : 0)
#endif
