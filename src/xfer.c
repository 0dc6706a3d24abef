/* xfer.c - the host side of long transfers (xfer.h): parallel memcpy, progress lines. */
#include "src/xfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/timer.h"

#define XFER_PIECE ((size_t)1 << 20)

void xfer_copy(void *dst, const void *src, size_t n)
{
    if (n < 4 * XFER_PIECE) {
        memcpy(dst, src, n);
        return;
    }
    const long long pieces = (long long)((n + XFER_PIECE - 1) / XFER_PIECE);
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < pieces; ++i) {
        const size_t a = (size_t)i * XFER_PIECE, k = n - a < XFER_PIECE ? n - a : XFER_PIECE;
        memcpy((char *)dst + a, (const char *)src + a, k);
    }
}

/* ---- progress ---------------------------------------------------------------------------------- */

#define TTY_EVERY_MS 100.0
#define PLAIN_AFTER_MS 5000.0
#define PLAIN_EVERY_MS 10000.0

/** 1 when DPAMR_TEST_PROGRESS_NOW is set (tests): lines at every update, from the start. */
static int progress_now(void)
{
    const char *e = getenv("DPAMR_TEST_PROGRESS_NOW");
    return e && e[0] && strcmp(e, "0") != 0;
}

void progress_begin(progress_t *p, int on, const char *phase, double total, const char *unit)
{
    memset(p, 0, sizeof *p);
    p->on = on;
    if (!on) return;
    p->tty = isatty(STDOUT_FILENO);
    p->bytes = unit == NULL;
    p->phase = phase;
    p->unit = unit ? unit : "GB";
    p->total = total;
    p->t0 = p->shown = timer_ms();
    p->now = progress_now();
}

/** One progress text: "download  3.21 of 9.60 GB  12.3 GB/s  1 s left". */
static void progress_text(const progress_t *p, double now, char *buf, size_t n)
{
    const double s = (now - p->t0) / 1e3, scale = p->bytes ? 1e-9 : 1.0;
    const double rate = s > 0 ? p->done * scale / s : 0.0;
    int k = snprintf(buf, n, "%s %8.2f", p->phase, p->done * scale);
    if (p->total > 0 && k >= 0 && (size_t)k < n) k += snprintf(buf + k, n - (size_t)k, " of %.2f", p->total * scale);
    if (k >= 0 && (size_t)k < n) k += snprintf(buf + k, n - (size_t)k, " %s, %.1f s", p->unit, s);
    if (rate > 0 && k >= 0 && (size_t)k < n) k += snprintf(buf + k, n - (size_t)k, ", %.2f %s/s", rate, p->unit);
    if (rate > 0 && p->total > p->done && k >= 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, ", %.0f s left", (p->total - p->done) * scale / rate);
}

void progress_update(progress_t *p, double done)
{
    if (!p->on) return;
    p->done = done;
    const double now = timer_ms();
    char line[256];
    if (p->tty) {
        if (!p->now && now - p->shown < TTY_EVERY_MS) return;
        progress_text(p, now, line, sizeof line);
        printf("\r%-79s", line);
        fflush(stdout);
        p->drawn = 1;
    } else {
        if (!p->now && (now - p->t0 < PLAIN_AFTER_MS || now - p->shown < PLAIN_EVERY_MS)) return;
        progress_text(p, now, line, sizeof line);
        printf("%s\n", line);
        fflush(stdout);
        p->drawn = 1;
    }
    p->shown = now;
}

void progress_end(progress_t *p)
{
    if (!p->on || !p->drawn) return;
    char line[256];
    progress_text(p, timer_ms(), line, sizeof line);
    if (p->tty) printf("\r%-79s\n", line);
    else printf("%s (done)\n", line);
    fflush(stdout);
    p->drawn = 0;
}

void progress_fail(progress_t *p)
{
    if (!p->on || !p->drawn) return;
    if (p->tty) {
        printf("\n"); /* the error message that follows starts on a line of its own */
        fflush(stdout);
    }
    p->drawn = 0;
}

/* ---- the plan of a streamed write ---------------------------------------------------------------- */

int64_t xfer_tiles_per_piece(size_t piece, size_t cells)
{
    const size_t tile = cells * sizeof(float);
    return tile > 0 && piece / tile > 0 ? (int64_t)(piece / tile) : 1;
}

void xfer_plan_init(xfer_plan_t *p, int nlevels, const int64_t *level_start, int nf, size_t cells, size_t piece)
{
    memset(p, 0, sizeof *p);
    p->nlevels = nlevels;
    p->nf = nf;
    p->level_start = level_start;
    p->tpp = xfer_tiles_per_piece(piece, cells);
    p->t = nlevels > 0 ? level_start[0] : 0;
}

int xfer_plan_next(xfer_plan_t *p, xfer_piece_t *out)
{
    while (p->L < p->nlevels) {
        const int64_t end = p->level_start[p->L + 1];
        if (p->f < p->nf && p->t < end) {
            const int64_t n = end - p->t < p->tpp ? end - p->t : p->tpp;
            *out = (xfer_piece_t){ .level = p->L, .field = p->f, .tile = p->t, .ntiles = n };
            p->t += n;
            return 1;
        }
        /* the field (or an empty level) is done: the next field of the level, or the next level */
        if (++p->f >= p->nf || p->level_start[p->L] >= end) {
            p->f = 0;
            ++p->L;
        }
        p->t = p->level_start[p->L < p->nlevels ? p->L : p->nlevels];
    }
    return 0;
}
