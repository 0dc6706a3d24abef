/* steps.c - time steps: the host driver of `dpamr run` and `dpamr bench` on a deck with steps > 0.
 *
 * Step 0 is the first build (engine_refine, as a run without steps). Step k (1..steps) is at time
 * k x dt; every regrid_every steps the engine regrids the hierarchy to that time (engine_regrid:
 * objects moved, tiles sampled again, refined and coarsened; docs/design.md, "Time steps"). Every
 * output_every steps (step 0 included) the hierarchy is validated and written to the output pattern's
 * file of that step, with /dpamr@step and @time, and the series file NAME.hdf.series, which ParaView
 * opens as one time-varying dataset, is written again listing every file so far. A run from a step's
 * file (mesh_file = run_00040.hdf) continues the series from that step.
 *
 * Every variant regrids: cpu on the host mesh; hostlaunch and cdp on the device (device/regrid_gpu.cu),
 * where the mesh stays between steps and comes back only at output steps (engine_regrid_sync).
 *
 * The loop (steps_loop) is written once for one process and for the ranks of an MPI run: what differs
 * goes through the hooks of steps_ops_t, the serial ones here, the distributed ones in src/dist.c (the
 * only MPI file). Rank 0 (the one process) prints and writes the series.
 *
 * Every output is written to a temporary name and renamed; before any work every file the run will
 * write is checked as `dpamr run` checks its output (run_refuse_overwrite): dpamr never writes over
 * a file it did not write. */
#include "src/steps.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/h5io.h"
#include "validation/valid.h"
#include "src/engine.h"
#include "src/run.h"
#include "src/timer.h"
#include "src/tmpfile.h"

/* The largest relative change of a field's composite total through the regrids between two outputs
 * that validation accepts (fill = prolong): restriction and prolongation round each cell to half an
 * ulp (6e-8 relative), the per-parent-cell tolerance of valid_check is 1e-6, and so is this. */
#define STEPS_CONS_TOL 1e-6
/* The marker that makes a series file dpamr's own (ParaView ignores keys it does not know). */
#define SERIES_MARK "\"written-by\" : \"dpamr\""

/* run_die after what the run printed so far, so a log of both streams keeps their order. */
static int die(const char *msg)
{
    fflush(stdout);
    return run_die(msg);
}

int steps_file_name(const char *pattern, long long step, char *out, size_t n)
{
    size_t len = 0;
    char why[256], spec[16], num[32];
    const int at = deck_pattern_check(pattern, &len, why, sizeof why);
    if (at < 0 || len >= sizeof spec) return -1;
    memcpy(spec, pattern + at, len);
    spec[len] = '\0';
    snprintf(num, sizeof num, spec, (int)step); /* spec is %d or %0Nd: deck_pattern_check, parse_steps */
    const int k = snprintf(out, n, "%.*s%s%s", at, pattern, num, pattern + at + len);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

int steps_series_name(const char *pattern, char *out, size_t n)
{
    size_t len = 0;
    char why[256];
    const int at = deck_pattern_check(pattern, &len, why, sizeof why);
    if (at < 0) return -1;
    char *s = malloc(strlen(pattern) + 16);
    if (!s) return -1;
    snprintf(s, strlen(pattern) + 16, "%.*s%s", at, pattern, pattern + at + len);
    size_t l = strlen(s); /* ends in .hdf (the deck checks it) */
    char *slash = strrchr(s, '/');
    char *base = slash ? slash + 1 : s;
    size_t cut = l - 4;
    while (cut > (size_t)(base - s) && strchr("_-.", s[cut - 1])) --cut;
    const int k = cut == (size_t)(base - s) ? snprintf(out, n, "%.*sseries.hdf.series", (int)cut, s)
                                            : snprintf(out, n, "%.*s.hdf.series", (int)cut, s);
    free(s);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}


static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The output pattern an existing series of dpamr's lists the files of (its marker's "output", as
 * series_write writes it, JSON-escaped) into out: 1, or 0 when it does not say (a series of an
 * earlier version) or cannot be read. */
static int series_output(const char *path, char *out, size_t n)
{
    static const char key[] = "\"dpamr\" : { \"output\" : \"";
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    char *buf = malloc(24577);
    const long size = buf && fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
    size_t k = 0;
    if (size >= 0 && fseek(fp, size > 24576 ? size - 24576 : 0, SEEK_SET) == 0) k = fread(buf, 1, 24576, fp);
    fclose(fp);
    int found = 0;
    if (buf) {
        buf[k] = '\0';
        const char *at = strstr(buf, key), *end = at ? strstr(at + sizeof key - 1, "\", " SERIES_MARK) : NULL;
        if (end && (size_t)(end - (at + sizeof key - 1)) < n) {
            snprintf(out, n, "%.*s", (int)(end - (at + sizeof key - 1)), at + sizeof key - 1);
            found = 1;
        }
    }
    free(buf);
    return found;
}

/* Is the existing file at path a series dpamr wrote: its JSON header first and its marker within
 * the last 4 KB (series_write puts it after the list of files, which grows with the run)? 1, 0, or
 * -1 with errno when it cannot be read. */
static int series_is_own(const char *path)
{
    static const char head[] = "{\n  \"file-series-version\" : \"1.0\"";
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    char buf[4097];
    size_t k = fread(buf, 1, sizeof head - 1, fp);
    int own = k == sizeof head - 1 && memcmp(buf, head, k) == 0;
    if (own) { /* the last 4 KB (or the whole file) */
        const long size = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
        own = size >= 0 && fseek(fp, size > 4096 ? size - 4096 : 0, SEEK_SET) == 0;
        k = own ? fread(buf, 1, sizeof buf - 1, fp) : 0;
        buf[k] = '\0';
        own = own && strstr(buf, SERIES_MARK) != NULL;
    }
    const int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        errno = EIO;
        return -1;
    }
    return own;
}

/** What a run writes: the steps with a file, their names, the series. */
typedef struct {
    long long nout;       /* output steps listed in the series so far */
    long long *step;      /* [steps / output_every + 1] */
    double *time;
    char series[8300];
} series_t;

/* Write the series listing its first nout files, to a temporary name renamed over series. */
static int series_write(const deck_t *d, const series_t *s, char *err, size_t n)
{
    char tmp[8400];
    if (dp_tmp_name(s->series, 0, tmp, sizeof tmp) != 0)
        return snprintf(err, n, "cannot write the series %.1000s: the path is too long", s->series), -1;
    FILE *fp = dp_tmp_fopen(tmp);
    if (!fp)
        return snprintf(err, n, "cannot write the series %.1000s: its temporary file %.1000s: %s", s->series, tmp,
                        dp_tmp_strerror(errno)), -1;
    fprintf(fp, "{\n  \"file-series-version\" : \"1.0\",\n  \"files\" : [\n");
    char esc[6 * 8300];
    for (long long i = 0; i < s->nout; ++i) {
        char name[8300], num[40];
        steps_file_name(d->output, s->step[i], name, sizeof name);
        run_number_text(num, sizeof num, s->time[i]);
        run_json_escape(base_name(name), esc, sizeof esc);
        fprintf(fp, "    { \"name\" : \"%s\", \"time\" : %s }%s\n", esc, num, i + 1 < s->nout ? "," : "");
    }
    /* the pattern the listed files follow (another run's series of the same name is told apart), then
     * the marker, last: series_is_own looks for it at the end */
    run_json_escape(base_name(d->output), esc, sizeof esc);
    fprintf(fp, "  ],\n  \"dpamr\" : { \"output\" : \"%s\", " SERIES_MARK " }\n}\n", esc);
    errno = 0;
    const int bad = ferror(fp);
    if (fclose(fp) != 0 || bad || rename(tmp, s->series) != 0) {
        snprintf(err, n, "cannot write the series %.1000s: %s", s->series, strerror(errno ? errno : EIO));
        if (remove(tmp) != 0 && errno != ENOENT) {
            const size_t l = strlen(err);
            snprintf(err + l, n > l ? n - l : 0, "; its temporary file %.1000s is left (removing it failed: %s)", tmp,
                     strerror(errno));
        }
        dp_tmp_done(tmp);
        return -1;
    }
    dp_tmp_done(tmp);
    return 0;
}

/* The output checks of every file the run will write, before any work: the series, and each output
 * step's file from `from` on. Returns the count of dpamr's own earlier files to be replaced, or -1.
 * note: a line to print once the run goes ahead (a series of another pattern replaced), or "". */
static long long check_outputs(const deck_t *d, long long from, const char *series, char *note, size_t nn, char *err,
                               size_t n)
{
    note[0] = '\0';
    long long replacing = 0;
    struct stat st;
    if (lstat(series, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return snprintf(err, n, "the series %.1000s exists and is not a regular file: dpamr writes only new files "
                                    "or replaces its own; choose another output", series), -1;
        const int own = series_is_own(series);
        if (own < 0)
            return snprintf(err, n, "cannot read the series %.1000s (to see whether dpamr wrote it): %s", series,
                            strerror(errno)), -1;
        if (!own)
            return snprintf(err, n, "the series %.1000s exists and was not written by dpamr: dpamr never writes over "
                                    "a file it did not write; move it away or choose another output", series), -1;
        if (d->overwrite == DP_OVERWRITE_NEVER)
            return snprintf(err, n, "the series %.1000s exists (an earlier dpamr output) and overwrite = never: move "
                                    "it away, choose another output, or set overwrite=own", series), -1;
        char was[8400], now[6 * 8300];
        if (series_output(series, was, sizeof was) && run_json_escape(base_name(d->output), now, sizeof now) == 0 &&
            strcmp(was, now) != 0) /* printed by the caller once the run goes ahead */
            snprintf(note, nn, "dpamr: note: the series %.1000s lists the files of output = %.1000s; it will list "
                     "this run's (%.1000s) instead, and those files stay where they are\n", series, was,
                     base_name(d->output));
        ++replacing;
    }
    for (long long k = from; k <= d->steps; ++k) {
        if (k % d->output_every) continue;
        char name[8300];
        if (steps_file_name(d->output, k, name, sizeof name) != 0)
            return snprintf(err, n, "output = %.1000s: the name of step %lld is too long", d->output, k), -1;
        const int r = run_refuse_overwrite("output", name, d, 1, err, n);
        if (r < 0) return -1;
        replacing += r;
    }
    return replacing;
}

/* A failure the processes agreed on: rank 0's message (the others return 1 quietly). */
static int fail(const steps_ops_t *o, const char *msg)
{
    return o->root ? die(msg) : 1;
}

/* Validate m at an output step and write it; 0, 1 (run failed) or 2 (validation failed), the same
 * on every process. cons: the conservation of the whole mesh's totals (steps_ops_t.regridded). */
static int output_step(const deck_t *d, int variant, const mesh_t *m, long long k, double t, double work_ms,
                       double cons, series_t *s, int say, double *write_ms, const steps_ops_t *o)
{
    char err[ERRLEN], name[8300];
    steps_file_name(d->output, k, name, sizeof name);
    dp_params pt;
    dp_params_at(&d->p, t, &pt);
    const double tv = timer_ms();
    valid_report_t v;
    if (o->validate(o->ctx, m, &pt, &v, err, sizeof err) != 0) return fail(o, err);
    const double validate_ms = timer_ms() - tv;
    if (o->root && (!v.passed || d->verbosity == DP_VERBOSITY_VERBOSE)) valid_print(&v, m);
    if (!v.passed) {
        fflush(stdout);
        if (o->root) fprintf(stderr, "dpamr: error: step %lld: validation failed; %s not written\n", k, name);
        return 2;
    }
    if (d->p.fill == DP_FILL_PROLONG && !(cons <= STEPS_CONS_TOL)) {
        fflush(stdout);
        if (o->root)
            fprintf(stderr, "dpamr: error: step %lld: the composite total changed by %.3g (relative) through the "
                            "regrids since the last output, more than %.0e: %s not written\n", k, cons,
                    STEPS_CONS_TOL, name);
        return 2;
    }
    long long ntiles = 0;
    int nlevels = 0;
    o->count(o->ctx, m, &ntiles, &nlevels);
    run_stats_t st;
    memset(&st, 0, sizeof st);
    st.refine_ms = work_ms;
    st.validate_ms = validate_ms;
    st.nlevels = nlevels;
    for (int L = 0; L < DP_MAX_LEVELS; ++L) st.level_ms[L] = -1.0;
    st.device_launches = st.launch_failures = st.pool_size = -1;
    h5io_meta_t meta;
    run_provenance(&meta, d, deck_variant_name(variant), &v, &st);
    meta.has_step = 1;
    meta.step = k;
    meta.time = t;
    const double tw = timer_ms();
    if (o->write(o->ctx, d, m, name, &meta, work_ms, err, sizeof err) != 0) return fail(o, err);
    s->step[s->nout] = k;
    s->time[s->nout] = t;
    s->nout++;
    const int ok = !o->root || series_write(d, s, err, sizeof err) == 0;
    if (!ok) { /* the series on disk is as it was: step k's file is written but listed nowhere */
        s->nout--;
        const size_t l = strlen(err);
        snprintf(err + l, sizeof err - l, " (%.1000s was written, but no series lists it)", name);
    }
    if (o->agree(o->ctx, ok, err, sizeof err) != 0) return fail(o, err);
    *write_ms += timer_ms() - tw;
    if (!o->root) return 0;
    if (say)
        printf("  step %lld validated (total hash %016llx%s), wrote %s\n", k, (unsigned long long)v.total_hash,
               v.conservation_checked ? ", conserved" : "", name);
    else
        printf("wrote %s\n", name);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Was a step's file, whose stored deck is `stored` (freed here; NULL: none), written with d's
 * refinement: the keys deck_same_refinement compares (a deck of an earlier version that this one
 * cannot parse is not compared). 1, or 0 with the first key that differs. */
static int same_series_deck(const deck_t *d, const char *path, char *stored, char *key, size_t n)
{
    if (!stored) return 1;
    deck_t was;
    memset(&was, 0, sizeof was);
    char why[512];
    const int parsed = deck_parse_text(&was, path, stored, why, sizeof why) == 0;
    free(stored);
    const int same = !parsed || deck_same_refinement(d, &was, key, n);
    if (parsed) deck_free(&was);
    return same;
}

/* Does the file `name` belong to this run's series at step k: dpamr's step k at time k x dt, run
 * with d's refinement. 1, or 0 with the reason in why (for a note). */
static int series_member(const deck_t *d, const char *name, long long k, char *why, size_t n)
{
    long long kk = -1;
    double t = 0.0;
    char *stored = NULL, key[160], err[512];
    const int r = h5io_read_step(name, &kk, &t, &stored, err, sizeof err);
    if (r < 0) return snprintf(why, n, "%s", err), 0;
    if (r == 0) return snprintf(why, n, "not a step's file"), free(stored), 0;
    if (kk != k || t != (double)k * d->dt) {
        free(stored);
        char a[40], b[40]; /* the shortest decimals that read back as the times */
        return snprintf(why, n, "it is step %lld at time %s, not step %lld at %s", kk, run_number_text(a, sizeof a, t), k,
                        run_number_text(b, sizeof b, (double)k * d->dt)), 0;
    }
    if (!same_series_deck(d, name, stored, key, sizeof key))
        return snprintf(why, n, "it was run with another '%s'", key), 0;
    return 1;
}

/* The restart point: *is_step = 0 for a mesh that is not a step's file; else 1 and its step
 * (checked against the deck) is returned. -1 with err. */
static long long restart_step(const deck_t *d, int *is_step, double *t, char *err, size_t n)
{
    long long k = 0;
    *t = 0.0;
    char *stored = NULL;
    const int r = h5io_read_step(d->mesh_file, &k, t, &stored, err, n);
    *is_step = r == 1;
    if (r <= 0) return r;
    char key[160];
    if (!same_series_deck(d, d->mesh_file, stored, key, sizeof key))
        return snprintf(err, n, "mesh_file = %.1000s is step %lld of a series run with another '%s' (its stored "
                        "deck, /dpamr/deck): a series continues with the deck it was run with; set %s as it was, or "
                        "start a new series under another output", d->mesh_file, k, key, key), -1;
    if (k >= d->steps)
        return snprintf(err, n, "mesh_file = %.1000s is step %lld of a series and steps = %lld: nothing is left to run "
                                "(steps must be larger to continue the series)", d->mesh_file, k, d->steps), -1;
    if (*t != (double)k * d->dt) {
        char a[40], b[40], c[40]; /* the shortest decimals that read back as the times */
        return snprintf(err, n, "mesh_file = %.1000s is step %lld at time %s, but dt = %s puts step %lld at %s: "
                                "continue the series with the dt it was run with", d->mesh_file, k,
                        run_number_text(a, sizeof a, *t), run_number_text(b, sizeof b, d->dt), k,
                        run_number_text(c, sizeof c, (double)k * d->dt)), -1;
    }
    if (k % d->regrid_every)
        return snprintf(err, n, "mesh_file = %.1000s is step %lld, not a multiple of regrid_every = %d: a series "
                                "continues from a regridded step", d->mesh_file, k, d->regrid_every), -1;
    const long long next = (k / d->output_every + 1) * d->output_every; /* the first step the run would write */
    if (next > d->steps)
        return snprintf(err, n, "mesh_file = %.1000s is step %lld and steps = %lld: no step from %lld to %lld is a "
                                "multiple of output_every = %d, so the run would write no file (steps must be at "
                                "least %lld to continue the series)", d->mesh_file, k, d->steps, k + 1, d->steps,
                        d->output_every, next), -1;
    return k;
}

/* The serial hooks: one process holds the whole mesh; the context is the device (-1: cpu). */
static int serial_agree(void *ctx, int ok, char *err, size_t n)
{
    (void)ctx, (void)err, (void)n;
    return ok ? 0 : -1;
}

static void serial_count(void *ctx, const mesh_t *m, long long *ntiles, int *nlevels)
{
    (void)ctx;
    *ntiles = m->ntiles;
    *nlevels = m->nlevels;
}

static int serial_build(void *ctx, int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t n)
{
    (void)ctx;
    return engine_refine(variant, d, m, r, err, n);
}

static void serial_regridded(void *ctx, const dp_params *p, regrid_report_t *r)
{
    (void)ctx, (void)p, (void)r; /* the report is already the whole mesh's */
}

static int serial_validate(void *ctx, const mesh_t *m, const dp_params *pt, valid_report_t *v, char *err, size_t n)
{
    (void)ctx, (void)err, (void)n;
    valid_check_mode(m, pt, 1, v);
    return 0;
}

static int serial_write(void *ctx, const deck_t *d, const mesh_t *m, const char *name, h5io_meta_t *meta,
                        double work_ms, char *err, size_t n)
{
    (void)d;
    const int device = *(const int *)ctx; /* the GPU the variant runs on, or -1 (cpu) */
    const h5io_rank_t row = { .rank = 0, .device = device, .root_tiles = m->level_start[1], .tiles = m->ntiles,
                              .cells = (int64_t)m->ntiles * mesh_cells(m), .refine_ms = work_ms, .write_ms = 0.0 };
    meta->nranks = 1;
    meta->ranks = &row;
    return h5io_write(name, m, meta, err, n);
}

int steps_run(deck_t *d, mesh_t *m, double t0)
{
    char err[ERRLEN];
    int device = -1;
    char why[512];
    const int variant = run_variant(d, -1, &device, why, sizeof why, err, sizeof err);
    if (variant < 0) return mesh_free(m), die(err);
    if (device >= 0) run_info_device(why);
    if (d->verbosity != DP_VERBOSITY_QUIET && d->variant == DP_VARIANT_AUTO && variant == DP_VARIANT_CPU)
        run_say_auto_cpu(why);
    const steps_ops_t o = { .ctx = &device, .root = 1, .agree = serial_agree, .count = serial_count,
                            .build = serial_build, .regridded = serial_regridded, .validate = serial_validate,
                            .write = serial_write };
    const int rc = steps_loop(d, m, t0, variant, &o);
    mesh_free(m);
    return rc;
}

int steps_loop(deck_t *d, mesh_t *m, double t0, int variant, const steps_ops_t *o)
{
    char err[ERRLEN];
    const int say = d->verbosity != DP_VERBOSITY_QUIET, root = o->root;
    d->quiet |= !say;
    if (root && say && d->trace[0])
        printf("trace=%s: not written, a run with steps > 0 writes no device timeline\n", d->trace);
    double tk = 0.0;
    int restart = 0;
    long long ntiles = 0;
    int nlevels = 0;
    o->count(o->ctx, m, &ntiles, &nlevels);
    /* every process reads the step of the same file: the same answer everywhere */
    const long long k0 = restart_step(d, &restart, &tk, err, sizeof err);
    if (o->agree(o->ctx, k0 >= 0, err, sizeof err) != 0) return fail(o, err);
    if (engine_beyond_max_level(d, nlevels, err, sizeof err)) return fail(o, err); /* the whole mesh's levels */
    series_t s;
    memset(&s, 0, sizeof s);
    if (steps_series_name(d->output, s.series, sizeof s.series) != 0)
        return fail(o, "output pattern: the series name is too long");
    const long long nmax = d->steps / d->output_every + 2;
    s.step = malloc((size_t)nmax * sizeof *s.step);
    s.time = malloc((size_t)nmax * sizeof *s.time);
    double *regrid_ms = malloc((size_t)(d->steps + 1) * sizeof *regrid_ms);
    snprintf(err, sizeof err, "out of memory for the step tables");
    if (o->agree(o->ctx, s.step && s.time && regrid_ms, err, sizeof err) != 0) {
        free(s.step), free(s.time), free(regrid_ms);
        return fail(o, err);
    }
    int rc = 0;
    engine_regrids_t eng; /* the GPU variants' device-resident mesh: released at done */
    memset(&eng, 0, sizeof eng);
    const long long from = restart ? k0 + 1 : 0;
    long long replacing = 0, nout0 = 0;
    char note[3300] = "";
    if (root) { /* the file checks on one process: the files are the same for all */
        replacing = check_outputs(d, from, s.series, note, sizeof note, err, sizeof err);
        char first[8300];
        steps_file_name(d->output, from + (d->output_every - from % d->output_every) % d->output_every, first,
                        sizeof first);
        if (replacing >= 0 && run_check_output("output", first, h5io_raw_bytes(m, ntiles), err, sizeof err) != 0)
            replacing = -1;
        /* the longest names too: the last step's (its number has the most digits) and the series' */
        char last[8300];
        steps_file_name(d->output, d->steps - d->steps % d->output_every, last, sizeof last);
        if (replacing >= 0 && (run_check_output("output", last, 0.0, err, sizeof err) != 0 ||
                               run_check_output("output", s.series, 0.0, err, sizeof err) != 0))
            replacing = -1;
    }
    if (o->agree(o->ctx, replacing >= 0, err, sizeof err) != 0) {
        rc = fail(o, err);
        goto done;
    }
    if (root && note[0]) fputs(note, stderr); /* said at every verbosity: another pattern's files leave the series */
    if (root) run_note_stale_tmp(s.series); /* the series' folder holds the step files too */
    if (root && d->p.fill == DP_FILL_MODEL) run_warn_model(d);
    /* a continued series lists the earlier steps' files that are there, as the run that wrote them did */
    if (restart)
        for (long long k = 0; k <= k0; k += d->output_every) {
            char name[8300], why[1024];
            if (steps_file_name(d->output, k, name, sizeof name) != 0 || access(name, F_OK) != 0) continue;
            if (series_member(d, name, k, why, sizeof why)) {
                s.step[s.nout] = k;
                s.time[s.nout++] = (double)k * d->dt;
            } else if (root) { /* said at every verbosity: a file of the user's left out */
                fprintf(stderr, "dpamr: note: %s is left out of the continued series %s: %s\n", name, s.series, why);
            }
        }
    if (root && d->steps % d->output_every) /* a warning: said at every verbosity */
        fprintf(stderr, "dpamr: warning: steps = %lld is not a multiple of output_every = %d: the last step written "
                "is %lld, steps %lld..%lld are computed and not saved\n", d->steps, d->output_every,
                d->steps - d->steps % d->output_every, d->steps - d->steps % d->output_every + 1, d->steps);
    if (root && say) {
        char label[128];
        printf("dpamr run %s: variant=%s, %dD, tile %d^%d, %lld tiles on levels 0..%d, max_level %d, fill %s\n", d->path,
               deck_engine_label(d, variant, label, sizeof label), d->p.dim, d->p.B, d->p.dim, ntiles, nlevels - 1,
               d->p.max_level,
               d->p.fill == DP_FILL_PROLONG ? "prolong" : "model");
        printf("steps %lld..%lld, dt %g, regrid every %d, output every %d: reads %s, writes %s and %s\n", from,
               d->steps, d->dt, d->regrid_every, d->output_every, d->mesh_file, d->output, s.series);
        if (restart)
            printf("continues the series from step %lld (time %g): %lld earlier file(s) listed\n", k0, tk, s.nout);
        if (replacing) printf("%lld existing file(s) written by dpamr earlier will be replaced (overwrite=never keeps "
                              "them)\n", replacing);
        if (d->verbosity == DP_VERBOSITY_VERBOSE) run_print_info(stdout);
    }
    nout0 = s.nout; /* the earlier files a continued series lists */
    double write_ms = 0.0, cons = 0.0, first_ms = 0.0, xfer_ms = 0.0;
    long long nregrid = 0;
    if (!restart) {
        refine_report_t r;
        const int ok = o->build(o->ctx, variant, d, m, &r, err, sizeof err) == 0;
        if (o->agree(o->ctx, ok, err, sizeof err) != 0) {
            rc = fail(o, err);
            goto done;
        }
        first_ms = r.refine_ms;
        o->count(o->ctx, m, &ntiles, &nlevels);
        if (root && say) printf("step 0 t=0: built %lld tiles on %d levels in %.3f ms\n", ntiles, nlevels, r.refine_ms);
        if (root) run_warn_depth(d, nlevels);
        if ((rc = output_step(d, variant, m, 0, 0.0, r.refine_ms, 0.0, &s, say, &write_ms, o)) != 0) goto done;
    }
    { /* the mesh goes to the device once (GPU variants) */
        double up = 0.0;
        const int ok = engine_regrid_begin(&eng, variant, d, m, &up, err, sizeof err) == 0;
        if (o->agree(o->ctx, ok, err, sizeof err) != 0) {
            rc = fail(o, err);
            goto done;
        }
        xfer_ms += up;
        if (root && say && variant != DP_VARIANT_CPU)
            printf("the mesh stays on the device between steps: upload %.3f ms (downloads at output steps only)\n", up);
    }
    for (long long k = from > 0 ? from : 1; k <= d->steps; ++k) {
        const double t = (double)k * d->dt;
        double work = 0.0;
        if (k % d->regrid_every == 0) {
            regrid_report_t r;
            const int ok = engine_regrid_next(&eng, m, t, &r, err, sizeof err) == 0;
            if (!ok) snprintf(err + strlen(err), sizeof err - strlen(err), " (step %lld)", k);
            if (o->agree(o->ctx, ok, err, sizeof err) != 0) {
                rc = fail(o, err);
                goto done;
            }
            o->regridded(o->ctx, &d->p, &r);
            work = r.regrid_ms;
            xfer_ms += r.transfer_ms;
            regrid_ms[nregrid++] = r.regrid_ms;
            if (r.conservation_rel > cons) cons = r.conservation_rel;
            if (root && say) {
                printf("step %lld t=%g: %lld tiles on %d levels, +%lld -%lld, changed %.2f%%, regrid %.3f ms "
                       "(sample %.3f, restrict %.3f, rebuild %.3f)", k, t, r.tiles_after, r.nlevels, r.added, r.removed,
                       100.0 * r.changed_fraction, r.regrid_ms, r.sample_ms, r.restrict_ms, r.rebuild_ms);
                if (r.conservation_checked) printf(", total conserved to %.2g", r.conservation_rel);
                if (variant != DP_VARIANT_CPU) printf(", device events; transfer %.3f ms", r.transfer_ms);
                if (r.device_launches >= 0) printf(", %lld device launch(es)", r.device_launches);
                printf("\n");
            }
        }
        if (k % d->output_every == 0) {
            double down = 0.0;
            const int ok = engine_regrid_sync(&eng, m, &down, err, sizeof err) == 0;
            if (!ok) snprintf(err + strlen(err), sizeof err - strlen(err), " (step %lld)", k);
            if (o->agree(o->ctx, ok, err, sizeof err) != 0) {
                rc = fail(o, err);
                goto done;
            }
            xfer_ms += down;
            if ((rc = output_step(d, variant, m, k, t, work, cons, &s, say, &write_ms, o)) != 0) goto done;
            cons = 0.0;
        }
        /* each step's lines out now: a log of an interrupted run (SIGINT) ends with the last step done
         * (stdout stays fully buffered otherwise: `dpamr --version | grep -q` must not meet SIGPIPE) */
        if (root) fflush(stdout);
    }
    if (root) printf("wrote %s (%lld file(s))\n", s.series, s.nout); /* a file written: said at every verbosity */
    if (root && say) {
        double med = 0.0, mx = 0.0;
        if (nregrid > 0) {
            qsort(regrid_ms, (size_t)nregrid, sizeof *regrid_ms, cmp_double);
            med = nregrid % 2 ? regrid_ms[nregrid / 2] : 0.5 * (regrid_ms[nregrid / 2 - 1] + regrid_ms[nregrid / 2]);
            mx = regrid_ms[nregrid - 1];
        }
        if (restart) printf("phases: restart from step %lld, ", k0);
        else printf("phases: first build %.3f ms, ", first_ms);
        printf("%lld regrid(s): median %.3f ms, max %.3f ms; ", nregrid, med, mx);
        if (variant != DP_VARIANT_CPU) printf("transfer %.3f ms; ", xfer_ms);
        printf("write %.3f ms, total %.3f ms\n", write_ms, timer_ms() - t0);
    }
done:
    if (rc != 0 && root && replacing > 0 && s.nout > nout0) { /* what the failure left of an earlier run's files
                                                                  (when this run replaced the series) */
        const long long after = s.nout > 0 ? s.step[s.nout - 1] + d->output_every : from;
        long long left = 0, k1 = -1, k2 = -1;
        for (long long k = after - after % d->output_every; k <= d->steps; k += d->output_every) {
            char name[8300], what[512];
            if (k < after || steps_file_name(d->output, k, name, sizeof name) != 0 ||
                !h5io_is_dpamr_output(name, what, sizeof what))
                continue;
            if (k1 < 0) k1 = k;
            k2 = k;
            ++left;
        }
        if (left > 0) {
            char a[8300], b[8300];
            steps_file_name(d->output, k1, a, sizeof a);
            steps_file_name(d->output, k2, b, sizeof b);
            char earlier[64] = "";
            if (nout0 > 0) snprintf(earlier, sizeof earlier, ", %lld of them continued from before", nout0);
            fprintf(stderr, "dpamr: note: %lld file(s) of an earlier run were not replaced (%s%s%s): they are not in "
                    "%s, which lists %lld file(s)%s\n", left, a, left > 1 ? " .. " : "", left > 1 ? b : "", s.series,
                    s.nout, earlier);
        }
    }
    engine_regrid_end(&eng);
    free(s.step);
    free(s.time);
    free(regrid_ms);
    return rc;
}
