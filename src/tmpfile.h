/* tmpfile.h - outputs written under a temporary name (PATH.tmp.PID, renamed onto PATH when complete),
 * removed when the process is interrupted: SIGINT (Ctrl-C), SIGTERM and SIGHUP unlink every
 * temporary file registered at that moment, then end the process as the signal would have. So an
 * interrupted run, mesh or bench leaves neither a partial output nor its temporary file
 * (docs/decks.md, *Paths*). */
#ifndef DPAMR_TMPFILE_H
#define DPAMR_TMPFILE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest name of an output's final path component: the temporary name adds ".tmp." and the
 *  process id (at most 10 digits) to it and must stay within the file system's NAME_MAX (255). */
#define DP_TMP_SUFFIX_MAX 15

/** The temporary name of path for this process (pid: 0 for getpid(), else the writing rank 0's) into
 *  tmp. 0, or -1 when it does not fit in n. */
int dp_tmp_name(const char *path, long pid, char *tmp, size_t n);
/** tmp is being written: removed if a signal ends the process before dp_tmp_done. At most
 *  DP_TMP_SLOTS at once; past that it is not registered (-1). */
int dp_tmp_begin(const char *tmp);
/** Before tmp is created exclusively (O_EXCL): when no file, directory or link of that name exists,
 *  register it now (1), so that a signal between the create and a later registration cannot leave
 *  the new file behind; else 0, nothing registered (the name is not ours; the create will fail with
 *  EEXIST). After a claim, a create that fails with EEXIST (a file made in between, not ours) calls
 *  dp_tmp_done; one that succeeds is registered already. */
int dp_tmp_claim(const char *tmp);
/** tmp was renamed or removed: no longer removed on a signal. */
void dp_tmp_done(const char *tmp);
/** Create tmp for writing only if no file, directory or symbolic link of that name exists
 *  (O_CREAT | O_EXCL: never through a link, never over another file), then register it as
 *  dp_tmp_begin does. NULL with errno (EEXIST when the name is taken: the caller must not remove
 *  it, it is not the caller's). */
FILE *dp_tmp_fopen(const char *tmp);
/** The reason for errno e of a temporary file's creation: for EEXIST, that the name is taken and
 *  what to do; else strerror(e). */
const char *dp_tmp_strerror(int e);
/** Install the handlers (once, at start; idempotent). */
void dp_tmp_handlers(void);

#define DP_TMP_SLOTS 8

#ifdef __cplusplus
}
#endif
#endif
