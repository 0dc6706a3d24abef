/* test_util.h - the one CHECK macro of the unit tests.
 *
 *   CHECK(cond);                   CHECK(cond, "printf format", args...);
 *
 * Counts the check; when cond is false prints file, line, the condition and the message on stderr
 * and goes on, or exits 1 at once when the test has set g_check_fatal (test_h5io: its later checks
 * read what a failed one should have made). TEST_DONE() prints the counts and is main's exit status.
 */
#ifndef DPAMR_TEST_UTIL_H
#define DPAMR_TEST_UTIL_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
static int g_fail = 0, g_pass = 0, g_check_fatal = 0;
/* The message's arguments end with an extra "" (see CHECK), which vfprintf ignores. */
static void check_failed(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: CHECK(%s) failed", file, line, cond);
    if (fmt[0]) {
        fprintf(stderr, ": ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fprintf(stderr, "\n");
    if (g_check_fatal) exit(1);
}
#define CHECK(...) CHECK_AT_(__VA_ARGS__, "")
#define CHECK_AT_(cond, ...)                                                          \
    do {                                                                              \
        if (cond) {                                                                   \
            ++g_pass;                                                                 \
        } else {                                                                      \
            ++g_fail;                                                                 \
            check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__);                     \
        }                                                                             \
    } while (0)
#define TEST_DONE()                                                                   \
    (printf("%d checks passed, %d failed\n", g_pass, g_fail), g_fail ? 1 : 0)
#endif
