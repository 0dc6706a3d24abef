/* test_tmpfile.c - src/tmpfile.c: temporary names, the registry's slots, and what SIGTERM, SIGINT
 * and SIGHUP leave: a child process registers files, gets the signal, and must end by it with its
 * registered files gone and the unregistered one kept. */
#include <errno.h>
#include <fcntl.h>
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
    /* dp_tmp_fopen: a new name is created and registered; a taken name (a file, a symbolic link to a
       file, a dangling link) is refused with EEXIST, its file left as it was */
    snprintf(a, sizeof a, "%s/tmpfile_new", dir);
    snprintf(b, sizeof b, "%s/tmpfile_taken", dir);
    snprintf(c, sizeof c, "%s/tmpfile_link", dir);
    remove(a), remove(b), remove(c);
    FILE *fp = dp_tmp_fopen(a);
    CHECK(fp && fputs("x", fp) >= 0 && fclose(fp) == 0 && exists(a), "dp_tmp_fopen creates a new name");
    dp_tmp_done(a);
    {
        FILE *t = fopen(b, "w");
        CHECK(t && fputs("precious", t) >= 0 && fclose(t) == 0, "the taken file");
    }
    CHECK(symlink(b, c) == 0, "a link to it");
    for (int k = 0; k < 2; ++k) {
        const char *name = k ? c : b;
        errno = 0;
        CHECK(dp_tmp_fopen(name) == NULL && errno == EEXIST, "%s: refused with EEXIST (errno %d)", name, errno);
    }
    {
        char buf[16] = "";
        FILE *t = fopen(b, "r");
        CHECK(t && fgets(buf, sizeof buf, t) && strcmp(buf, "precious") == 0, "the taken file is unchanged: '%s'", buf);
        if (t) fclose(t);
    }
    remove(b);
    errno = 0;
    CHECK(dp_tmp_fopen(c) == NULL && errno == EEXIST, "a dangling link is refused too (errno %d)", errno);
    CHECK(!exists(b), "and nothing is created through it");
    CHECK(strstr(dp_tmp_strerror(EEXIST), "remove it") != NULL, "EEXIST's reason says what to do");
    remove(a), remove(c);

    /* dp_tmp_claim: a free name is registered before it is created, so a signal right after the
       create (before any later registration) removes it; a taken name is not claimed, and a signal
       leaves that file alone */
    snprintf(a, sizeof a, "%s/tmpfile_claim", dir);
    snprintf(b, sizeof b, "%s/tmpfile_claim_taken", dir);
    remove(a);
    touch(b);
    {
        const pid_t cp = fork();
        if (cp == 0) {
            signal(SIGTERM, SIG_DFL);
            dp_tmp_handlers();
            if (dp_tmp_claim(a) != 1 || dp_tmp_claim(b) != 0) _exit(3);
            const int fd = open(a, O_WRONLY | O_CREAT | O_EXCL, 0666); /* the create, then the signal */
            if (fd < 0) _exit(4);
            raise(SIGTERM);
            _exit(0);
        }
        int cs = 0;
        waitpid(cp, &cs, 0);
        CHECK(WIFSIGNALED(cs) && WTERMSIG(cs) == SIGTERM, "claim: the child ends by SIGTERM (status %#x)", cs);
        CHECK(!exists(a), "claim: a file created after its claim is removed by the signal");
        CHECK(exists(b), "claim: a taken name is not claimed, its file kept");
    }
    remove(a), remove(b);

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
