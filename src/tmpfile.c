/* tmpfile.c - temporary output names removed on SIGINT, SIGTERM and SIGHUP (tmpfile.h). The
 * handler calls only async-signal-safe functions (unlink, signal, raise) on slots that are complete
 * whenever their flag is set: a slot's path is written before its flag is raised, and its flag is
 * cleared before the path is reused. */
#include "src/tmpfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static char slot_path[DP_TMP_SLOTS][PATH_MAX];
static volatile sig_atomic_t slot_used[DP_TMP_SLOTS];

int dp_tmp_name(const char *path, long pid, char *tmp, size_t n)
{
    const int k = snprintf(tmp, n, "%s.tmp.%ld", path, pid > 0 ? pid : (long)getpid());
    return k >= 0 && (size_t)k < n ? 0 : -1;
}

int dp_tmp_begin(const char *tmp)
{
    if (strlen(tmp) >= PATH_MAX) return -1;
    for (int i = 0; i < DP_TMP_SLOTS; ++i)
        if (!slot_used[i]) {
            memcpy(slot_path[i], tmp, strlen(tmp) + 1);
            atomic_signal_fence(memory_order_seq_cst); /* the path is complete before the flag is seen */
            slot_used[i] = 1;
            return 0;
        }
    return -1;
}

void dp_tmp_done(const char *tmp)
{
    for (int i = 0; i < DP_TMP_SLOTS; ++i)
        if (slot_used[i] && strcmp(slot_path[i], tmp) == 0) {
            slot_used[i] = 0;
            atomic_signal_fence(memory_order_seq_cst); /* cleared before the path may be reused */
        }
}

int dp_tmp_claim(const char *tmp)
{
    struct stat st;
    if (lstat(tmp, &st) == 0 || errno != ENOENT) return 0; /* taken (not ours), or not known to be free */
    return dp_tmp_begin(tmp) == 0;
}

FILE *dp_tmp_fopen(const char *tmp)
{
    const int claimed = dp_tmp_claim(tmp);
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        const int e = errno;
        if (claimed) dp_tmp_done(tmp); /* not made by us: not ours to remove */
        errno = e;
        return NULL;
    }
    if (!claimed) dp_tmp_begin(tmp);
    FILE *fp = fdopen(fd, "w");
    if (!fp) {
        const int e = errno;
        close(fd);
        unlink(tmp);
        dp_tmp_done(tmp);
        errno = e;
    }
    return fp;
}

const char *dp_tmp_strerror(int e)
{
    return e == EEXIST ? "a file of that name exists (left by an interrupted run, or not dpamr's); dpamr never writes "
                         "through or over it: remove it, or choose another output"
                       : strerror(e);
}

static void on_signal(int sig)
{
    for (int i = 0; i < DP_TMP_SLOTS; ++i)
        if (slot_used[i]) unlink(slot_path[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

void dp_tmp_handlers(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        /* a signal ignored at start (nohup, a background job of a non-interactive shell) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
    /* past the file size limit (ulimit -f) a write fails with EFBIG, which the writers report and
     * clean up after, instead of SIGXFSZ ending the process with its temporary file left */
    signal(SIGXFSZ, SIG_IGN);
}
