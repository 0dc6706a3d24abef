/* test_tmpfile.c - src/tmpfile.c: temporary names, the registry's slots, and what SIGTERM, SIGINT
 * and SIGHUP leave: a child process registers files, gets the signal, and must end by it with its
 * registered files gone and the unregistered one kept. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/tmpfile.h"
#include "tests/test_util.h"

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void touch(const char *p)
{
    FILE *f = fopen(p, "w");
    if (f) fclose(f);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    char tmp[64], a[600], b[600], c[600];
    CHECK(dp_tmp_name("out.hdf", 1234, tmp, sizeof tmp) == 0 && strcmp(tmp, "out.hdf.tmp.1234") == 0, "%s", tmp);
    CHECK(dp_tmp_name("out.hdf", 1234, tmp, 10) == -1, "a name that does not fit is refused");
    CHECK(dp_tmp_name("x", 0, tmp, sizeof tmp) == 0 && strncmp(tmp, "x.tmp.", 6) == 0, "pid 0: this process");
    /* the slots: DP_TMP_SLOTS at once, one more refused, a finished one free again */
    char names[DP_TMP_SLOTS + 1][32];
    for (int i = 0; i <= DP_TMP_SLOTS; ++i) snprintf(names[i], sizeof names[i], "slot%d", i);
    for (int i = 0; i < DP_TMP_SLOTS; ++i) CHECK(dp_tmp_begin(names[i]) == 0, "slot %d", i);
    CHECK(dp_tmp_begin(names[DP_TMP_SLOTS]) == -1, "slot past DP_TMP_SLOTS refused");
    dp_tmp_done(names[3]);
    CHECK(dp_tmp_begin(names[DP_TMP_SLOTS]) == 0, "a finished slot is free again");
    for (int i = 0; i <= DP_TMP_SLOTS; ++i) dp_tmp_done(names[i]);

    static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
    for (int k = 0; k < 3; ++k) {
        snprintf(a, sizeof a, "%s/tmpfile_a.%d", dir, k);
        snprintf(b, sizeof b, "%s/tmpfile_b.%d", dir, k);
        snprintf(c, sizeof c, "%s/tmpfile_c.%d", dir, k);
        touch(a), touch(b), touch(c);
        const pid_t pid = fork();
        if (pid == 0) {
            signal(sigs[k], SIG_DFL); /* as a job started from a terminal */
            dp_tmp_handlers();
            dp_tmp_begin(a);
            dp_tmp_begin(b);
            dp_tmp_begin(c);
            dp_tmp_done(c); /* renamed: kept */
            raise(sigs[k]);
            _exit(0); /* not reached: the signal ends the process */
        }
        int st = 0;
        waitpid(pid, &st, 0);
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == sigs[k], "signal %d: the child ends by it (status %#x)", sigs[k], st);
        CHECK(!exists(a) && !exists(b), "signal %d: the registered files are removed", sigs[k]);
        CHECK(exists(c), "signal %d: a finished file is kept", sigs[k]);
        remove(c);
    }
    /* a signal ignored at start stays ignored (nohup): the handler is not installed over it */
    snprintf(a, sizeof a, "%s/tmpfile_ign", dir);
    touch(a);
    const pid_t pid = fork();
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN);
        dp_tmp_handlers();
        dp_tmp_begin(a);
        raise(SIGHUP);
        _exit(7);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7 && exists(a), "an ignored SIGHUP stays ignored (status %#x)", st);
    remove(a);
    return TEST_DONE();
}
