/* bench.c - `dpamr bench DECK`: the comparison users come for.
 *
 * 1. Gate: every variant it will time builds the mesh once and must match the reference (cpu when
 *    bench_cpu=on, else hostlaunch with pdl off) byte for byte: tiles, tree and every field bit. A
 *    mismatch fails the run before anything is timed.
 * 2. Timing: bench_warmup untimed runs, then bench_repeats timed runs per variant and pdl setting;
 *    medians. GPU times come from CUDA events around the refinement (upload and download are
 *    reported apart); per-level times and PDL gaps come from the device timeline.
 * 3. Table on stdout, plus BENCH_OUT.csv and BENCH_OUT.json.
 * A deck with steps > 0 runs bench_steps instead: the regrid per step of cpu, hostlaunch and cdp.
 */
#include "src/bench.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "device/gpu.h"
#include "io/h5io.h"
#include "src/engine.h"
#include "src/run.h"
#include "src/timer.h"
#include "src/tmpfile.h"

#define MAXREP 1000
#define MAXROWS (3 + 2 * (2 + DP_MAX_BENCH_GROUPS))

typedef struct {
    int variant, pdl;
    int grain, group;    /* cdp: launch grain and group size (cdp_grain, cdp_group) */
    char label[32];      /* cpu, hostlaunch, cdp tile, cdp g64, cdp level */
    double refine[MAXREP], total[MAXREP], gap[MAXREP];
    double level[DP_MAX_LEVELS][MAXREP];
    int nrep;
    long long pool, launches, new_tiles;
    double med_refine, med_total, med_gap, med_level[DP_MAX_LEVELS];
    int have_gap;
} row_t;

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_d);
    const double m = n == 0 ? 0.0 : (n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]));
    free(c);
    return m;
}

/* Run one variant on a fresh copy of the input; the refined mesh is left in out (nothing on an error). */
static int run_once(deck_t *d, const mesh_t *in, const row_t *w, mesh_t *out, refine_report_t *r, char *err)
{
    if (mesh_copy(out, in) != 0) {
        snprintf(err, ERRLEN, "out of host memory copying the input mesh");
        return -1;
    }
    d->pdl = w->pdl;
    d->cdp_grain = w->grain;
    d->cdp_group = w->group;
    d->trace[0] = '\0';
    if (engine_refine(w->variant, d, out, r, err, ERRLEN) == 0) return 0;
    mesh_free(out);
    return -1;
}

/* Write s as a JSON string literal. */
static void json_str(FILE *fp, const char *s)
{
    static char esc[6 * 8400]; /* a path of at most 8300 characters, every one escaped */
    if (run_json_escape(s, esc, sizeof esc) != 0) esc[0] = '\0';
    fprintf(fp, "\"%s\"", esc);
}

/* The opening of a bench JSON: {"deck", "device", "commit", "date", "machine": {...} (no closing brace). */
static void json_head(FILE *js, const deck_t *d, const char *device)
{
    const run_info_t *ri = run_info();
    fprintf(js, "{\"deck\":");
    json_str(js, d->path);
    fprintf(js, ",\"device\":");
    json_str(js, device);
    fprintf(js, ",\"commit\":");
    json_str(js, ri->commit);
    fprintf(js, ",\"date\":");
    json_str(js, ri->date);
    fprintf(js, ",\"machine\":{\"host\":");
    json_str(js, ri->host);
    fprintf(js, ",\"device\":");
    json_str(js, ri->device);
    fprintf(js, ",\"cuda\":");
    json_str(js, ri->cuda);
    fprintf(js, ",\"compiler\":");
    json_str(js, ri->compiler);
    fprintf(js, ",\"build\":");
    json_str(js, ri->build);
    fprintf(js, ",\"threads\":%d}", ri->threads);
}

/* The first line of the CSV of `dpamr bench` (refinement, and time steps) and the start of its JSON:
 * what bench_out may replace. */
#define CSV_HEAD "deck,variant,grain,group,pdl,refine_ms,end_to_end_ms,tiles_per_s,cells_per_s,ratio,x_floor,gap_ns," \
                 "new_tiles,launches,pool,refine_min_ms,refine_max_ms,refine_samples_ms,host,commit,date\n"
#define CSV_HEAD_STEPS "deck,variant,pdl,step,time,tiles,added,removed,changed_fraction,regrid_ms,regrid_min_ms," \
                       "regrid_max_ms,regrid_samples_ms,host,commit,date\n"
#define JSON_HEAD "{\"deck\":"

/* Is the regular file at path one that `dpamr bench` wrote: a CSV starting with one of its header
 * lines, or a JSON starting as json_head starts with its machine record in the first 32 KiB (after
 * the deck's path and the device's name, each at most a few KiB)? */
static int bench_file_is_ours(const char *path, int json)
{
    static char buf[32769];
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    const size_t k = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[k] = '\0';
    if (json) return strncmp(buf, JSON_HEAD, strlen(JSON_HEAD)) == 0 && strstr(buf, ",\"machine\":{\"host\":") != NULL;
    return strncmp(buf, CSV_HEAD, strlen(CSV_HEAD)) == 0 || strncmp(buf, CSV_HEAD_STEPS, strlen(CSV_HEAD_STEPS)) == 0;
}

/* Before any timing: bench_out's two files (PREFIX.csv, PREFIX.json) may be written. Each is new or
 * a regular file that dpamr bench wrote earlier (replaced unless overwrite = never, and said so);
 * never the deck, the mesh, a symbolic link, a folder or a file of the user's; its folder exists,
 * takes new files and has room for them (bench_out_bytes), and its name leaves room for the temporary
 * suffix. 0, or 1 after the message. */
/* An upper bound on the bytes of bench_out's CSV or JSON, for the room check before any timing:
 * every row with the deck's path, its per-level times and every repeat's samples. */
static double bench_out_bytes(const deck_t *d)
{
    const double per_row = 1024.0 + 2.0 * (double)strlen(d->path) + 24.0 * (d->p.max_level + 2) +
                           48.0 * d->bench_repeats;
    const double rows = d->steps > 0 ? 5.0 * ((double)d->steps / d->regrid_every + 1.0) : (double)MAXROWS;
    return 8192.0 + rows * per_row;
}

static int bench_check_out(const deck_t *d)
{
    char err[ERRLEN];
    for (int k = 0; k < 2; ++k) {
        char path[8300];
        const char *ext = k ? "json" : "csv";
        if (snprintf(path, sizeof path, "%s.%s", d->bench_out, ext) >= (int)sizeof path) {
            snprintf(err, sizeof err, "bench_out = %.200s...: the path is too long", d->bench_out);
            return run_die(err);
        }
        if (run_check_output("bench_out", path, bench_out_bytes(d), err, sizeof err) != 0) return run_die(err);
        if (run_same_file(path, d->path) || run_same_file(path, d->mesh_file)) {
            snprintf(err, sizeof err, "bench_out = %.500s: %.500s is the %s: dpamr never writes over its input",
                     d->bench_out, path, run_same_file(path, d->path) ? "deck itself" : "input mesh (mesh_file)");
            return run_die(err);
        }
        struct stat st;
        if (lstat(path, &st) != 0) continue; /* a new file */
        if (!S_ISREG(st.st_mode)) {
            snprintf(err, sizeof err, "bench_out = %.500s: %.500s exists and is not a regular file (%s): dpamr writes "
                     "only new files or replaces its own; choose another bench_out", d->bench_out, path,
                     S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a directory"
                                                                                 : "a device, FIFO or socket");
            return run_die(err);
        }
        if (!bench_file_is_ours(path, k)) {
            snprintf(err, sizeof err, "bench_out = %.500s: %.500s exists and is not a %s that dpamr bench wrote: "
                     "dpamr never writes over a file it did not write; move it away or choose another bench_out",
                     d->bench_out, path, ext);
            return run_die(err);
        }
        if (d->overwrite == DP_OVERWRITE_NEVER) {
            snprintf(err, sizeof err, "bench_out = %.500s: %.500s exists (an earlier dpamr bench output) and overwrite "
                     "= never: move it away, choose another bench_out, or set overwrite=own", d->bench_out, path);
            return run_die(err);
        }
        run_say_replacing(d, "bench_out", path);
    }
    return 0;
}

/* Open path's temporary name tmp (PATH.tmp.PID) for writing, registered so that a signal removes it
 * (src/tmpfile.h). NULL with err. */
static FILE *open_tmp(const char *path, char *tmp, size_t tn, char *err)
{
    if (dp_tmp_name(path, 0, tmp, tn) != 0) {
        snprintf(err, ERRLEN, "cannot write %.1000s: the path is too long", path);
        return NULL;
    }
    FILE *fp = dp_tmp_fopen(tmp);
    if (!fp) snprintf(err, ERRLEN, "cannot write %.1000s: its temporary file %.1000s: %s", path, tmp, dp_tmp_strerror(errno));
    return fp;
}

/* Remove an unfinished temporary file. */
static void drop_tmp(FILE *fp, const char *tmp)
{
    fclose(fp);
    remove(tmp);
    dp_tmp_done(tmp);
}

/* Close fp (open on tmp, written for path): 0, or -1 with a message naming path and tmp removed. */
static int close_tmp(FILE *fp, const char *tmp, const char *path, char *err)
{
    errno = 0;
    const int bad = ferror(fp);
    if (fclose(fp) != 0 || bad) {
        snprintf(err, ERRLEN, "cannot write %.1000s: %s", path, strerror(errno ? errno : EIO));
        remove(tmp);
        dp_tmp_done(tmp);
        return -1;
    }
    return 0;
}

/* The CSV and the JSON of one bench, both closed on their temporary names: renamed onto their paths
 * together, so that neither replaces an earlier table unless both were written whole. 0, or -1 with
 * a message and no temporary file left. */
static int rename_pair(char tmp[2][8400], char path[2][8300], char *err)
{
    int rc = 0;
    for (int k = 0; k < 2; ++k) {
        if (rc == 0 && rename(tmp[k], path[k]) != 0) {
            snprintf(err, ERRLEN, "cannot write %.1000s: renaming %.1000s onto it failed: %s", path[k], tmp[k],
                     strerror(errno));
            rc = -1;
        }
        if (rc != 0 && remove(tmp[k]) != 0 && errno != ENOENT) {
            const size_t l = strlen(err);
            snprintf(err + l, ERRLEN > l ? ERRLEN - l : 0, "; %.1000s is left (removing it failed: %s)", tmp[k],
                     strerror(errno));
        }
        dp_tmp_done(tmp[k]);
    }
    return rc;
}

/* The floor of a row: the cpu's against the host's copy bandwidth, a GPU variant's against the
 * device's (0: not measured). */
typedef struct {
    double dev_ms, host_ms; /* the new cells and metadata written once at that bandwidth */
    double dev_gbps, host_gbps;
    int host_threads;
} floors_t;

static double row_floor(const floors_t *f, const row_t *w)
{
    return w->variant == DP_VARIANT_CPU ? f->host_ms : f->dev_ms;
}

/* The host's copy bandwidth with the cpu engine's threads, as gpu_copy_bandwidth measures the
 * device's: two buffers of 256 MiB (past the caches of today's CPUs), each thread's static share
 * first touched by it (so the copy measures memory, not page faults), then 6 copies of the whole
 * buffer by every thread's share at once; read plus write bytes over the fastest of the last 5.
 * 0, or -1 (not measured: the floor is then left out) when the host has not 1 GiB free for them. */
static int host_copy_bandwidth(double *gbps, int *threads)
{
    const size_t bytes = (size_t)256 << 20;
    const long page = sysconf(_SC_PAGESIZE), avail = sysconf(_SC_AVPHYS_PAGES);
    *gbps = 0.0;
    *threads = 1;
    if (page > 0 && avail > 0 && (double)avail * (double)page < 4.0 * (double)bytes) return -1;
    char *a = malloc(bytes), *b = malloc(bytes);
    double best = 1e30;
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    for (int i = 0; i < 7; ++i) {
        const double t0 = timer_ms();
#pragma omp parallel
        {
            int nt = 1, id = 0;
#ifdef _OPENMP
            nt = omp_get_num_threads();
            id = omp_get_thread_num();
#endif
            const size_t lo = bytes / (size_t)nt * (size_t)id, hi = id == nt - 1 ? bytes : lo + bytes / (size_t)nt;
            if (i == 0) { /* first touch */
                memset(a + lo, 1, hi - lo);
                memset(b + lo, 0, hi - lo);
            } else {
                memcpy(b + lo, a + lo, hi - lo);
            }
            if (id == 0) *threads = nt;
        }
        const double ms = timer_ms() - t0;
        if (i > 1 && ms < best) best = ms; /* i = 1: the warm-up copy */
    }
    free(a);
    free(b);
    *gbps = best > 0 ? 2.0 * (double)bytes / (best * 1e-3) / 1e9 : 0.0;
    return *gbps > 0 ? 0 : -1;
}

static int write_results(const deck_t *d, const row_t *rows, int nrows, int base, int cells, int Lfirst, int nlevels,
                         const char *device, const floors_t *fl, char *err)
{
    char path[2][8300], tmp[2][8400];
    FILE *fp[2];
    for (int k = 0; k < 2; ++k) {
        snprintf(path[k], sizeof path[k], "%.8200s.%s", d->bench_out, k ? "json" : "csv");
        fp[k] = open_tmp(path[k], tmp[k], sizeof tmp[k], err);
        if (!fp[k]) {
            if (k) drop_tmp(fp[0], tmp[0]);
            return -1;
        }
    }
    FILE *csv = fp[0], *js = fp[1];
    fprintf(csv, CSV_HEAD);
    const run_info_t *ri = run_info();
    char deckc[2 * 8300 + 3], hostc[2 * sizeof ri->host + 3]; /* CSV fields: quoted, a quote doubled */
    run_csv_field(d->path, deckc, sizeof deckc);
    run_csv_field(ri->host, hostc, sizeof hostc);
    json_head(js, d, device);
    /* null where not measured (no device; bench_cpu = off) */
    char fj[4][32];
    const double fv[4] = { fl->dev_ms, fl->host_ms, fl->dev_gbps, fl->host_gbps };
    for (int k = 0; k < 4; ++k)
        if (fv[k] > 0) snprintf(fj[k], sizeof fj[k], k < 2 ? "%.6f" : "%.3f", fv[k]);
        else snprintf(fj[k], sizeof fj[k], "null");
    fprintf(js, ",\"floor_ms\":%s,\"host_floor_ms\":%s,\"device_copy_gbps\":%s,\"host_copy_gbps\":%s", fj[0], fj[1],
            fj[2], fj[3]);
    fprintf(js, ",\"repeats\":%d,\"baseline\":\"%s\",\"rows\":[\n", d->bench_repeats,
            rows[base].variant == DP_VARIANT_CPU ? "cpu" : "hostlaunch pdl=off");
    for (int i = 0; i < nrows; ++i) {
        const row_t *w = &rows[i];
        const double sec = w->med_refine * 1e-3;
        const char *pdl = w->variant == DP_VARIANT_CPU ? "-" : (w->pdl ? "on" : "off");
        const int cdp = w->variant == DP_VARIANT_CDP;
        const char *variant = deck_variant_name(w->variant), *grain = cdp ? deck_grain_name(w->grain) : "";
        const int group = cdp && w->grain != DP_GRAIN_LEVEL ? w->group : 0;
        const double floor_ms = row_floor(fl, w), xf = floor_ms > 0 ? w->med_refine / floor_ms : 0.0;
        double lo = w->refine[0], hi = w->refine[0];
        for (int k = 1; k < w->nrep; ++k) {
            lo = w->refine[k] < lo ? w->refine[k] : lo;
            hi = w->refine[k] > hi ? w->refine[k] : hi;
        }
        /* what does not apply to a row (a floor not measured, a gap without PDL pairs, launches and
         * pool of a variant that launches nothing from the device) is an empty CSV field, JSON null */
        char xfc[32] = "", gapc[32] = "", lc[32] = "", pc[32] = "", groupc[16] = "";
        if (floor_ms > 0) snprintf(xfc, sizeof xfc, "%.3f", xf);
        if (w->have_gap) snprintf(gapc, sizeof gapc, "%.1f", w->med_gap);
        if (cdp) snprintf(lc, sizeof lc, "%lld", w->launches), snprintf(pc, sizeof pc, "%lld", w->pool);
        fprintf(csv, "%s,%s,%s,%s,%s,%.6f,%.6f,%.6g,%.6g,%.6f,%s,%s,%lld,%s,%s,%.6f,%.6f,", deckc, variant, grain,
                group ? (snprintf(groupc, sizeof groupc, "%d", group), groupc) : "", pdl, w->med_refine, w->med_total,
                w->new_tiles / sec, w->new_tiles * (double)cells / sec, w->med_refine / rows[base].med_refine, xfc, gapc,
                w->new_tiles, lc, pc, lo, hi);
        for (int k = 0; k < w->nrep; ++k) fprintf(csv, "%s%.6f", k ? ";" : "", w->refine[k]);
        fprintf(csv, ",%s,%s,%s\n", hostc, ri->commit, ri->date);
        char gapj[32] = "null", grainj[16] = "null", groupj[16] = "null", xfj[32] = "null";
        if (w->have_gap) snprintf(gapj, sizeof gapj, "%.1f", w->med_gap);
        if (cdp) snprintf(grainj, sizeof grainj, "\"%s\"", grain);
        if (group) snprintf(groupj, sizeof groupj, "%d", group);
        if (floor_ms > 0) snprintf(xfj, sizeof xfj, "%.4f", xf);
        fprintf(js,
                "%s{\"variant\":\"%s\",\"grain\":%s,\"group\":%s,\"pdl\":\"%s\",\"refine_ms\":%.6f,"
                "\"end_to_end_ms\":%.6f,\"ratio\":%.6f,\"x_floor\":%s,\"gap_ns\":%s,\"new_tiles\":%lld,"
                "\"launches\":%s,\"pool\":%s,\"level_ms\":[",
                i ? ",\n" : "", variant, grainj, groupj, pdl, w->med_refine, w->med_total,
                w->med_refine / rows[base].med_refine, xfj, gapj, w->new_tiles, cdp ? lc : "null", cdp ? pc : "null");
        for (int L = Lfirst; L < nlevels; ++L) fprintf(js, "%s%.6f", L > Lfirst ? "," : "", w->med_level[L]);
        fprintf(js, "],\"refine_min_ms\":%.6f,\"refine_max_ms\":%.6f,\"refine_samples_ms\":[", lo, hi);
        for (int k = 0; k < w->nrep; ++k) fprintf(js, "%s%.6f", k ? "," : "", w->refine[k]);
        fprintf(js, "],\"end_to_end_samples_ms\":[");
        for (int k = 0; k < w->nrep; ++k) fprintf(js, "%s%.6f", k ? "," : "", w->total[k]);
        fprintf(js, "]}");
    }
    fprintf(js, "\n]}\n");
    const int rc0 = close_tmp(csv, tmp[0], path[0], err);
    const int rc1 = rc0 == 0 ? close_tmp(js, tmp[1], path[1], err) : (drop_tmp(js, tmp[1]), -1);
    if (rc0 == 0 && rc1 != 0) { /* the CSV alone would not match the JSON left from before */
        remove(tmp[0]);
        dp_tmp_done(tmp[0]);
    }
    return rc0 == 0 && rc1 == 0 ? rename_pair(tmp, path, err) : -1;
}

/* ---- a moving deck (steps > 0): the regrid per step of every variant ------------------------------ */

/* The regrid's phases in the bench's phase table: its report's sample, restrict and rebuild times,
 * and of the rebuild the part outside its levels (rebuild_ms less the sum of its level_ms: the
 * kernels before the first level, the first level's launch, the end of the chain, the sums after). */
#define NPHASE 4

typedef struct {
    long long tiles, added, removed;
    double changed;
    double *ms; /* [repeats] */
    double med, lo, hi;
} step_row_t;

/* One variant of the steps bench: cpu, or a GPU variant with pdl off or on. */
typedef struct {
    int variant, pdl;
    char label[40];
    step_row_t *rows; /* [steps + 1] */
    double all_med, all_lo, all_hi;
    double *lev;                 /* [max_level + 1][nlev_cap]: level_ms of every timed regrid, by level */
    long long nlev_cap, nlev[DP_MAX_LEVELS];
    double lev_med[DP_MAX_LEVELS]; /* -1: no sample */
    double *ph;                    /* [NPHASE][nlev_cap]: the phases of every timed regrid (phase_names) */
    long long nph;
    double ph_med[NPHASE];
} step_var_t;

static const char *const phase_names[NPHASE] = { "sample", "restrict", "rebuild", "rebuild outside levels" };



/* One run of every step of variant v from a copy of the input (the first build and the regrids on
 * that variant; a GPU variant keeps the mesh on the device and downloads the last step's); the final
 * mesh in out; per-step rows filled when `timed` (repeat j's regrid time: CUDA events on the GPU). */
static int bench_once(const deck_t *d, const mesh_t *in, step_var_t *v, mesh_t *out, int timed, int j, char *err)
{
    deck_t dv = *d;
    dv.pdl = v->pdl;
    if (mesh_copy(out, in) != 0) return snprintf(err, ERRLEN, "out of host memory copying the input mesh"), -1;
    refine_report_t rr;
    engine_regrids_t e;
    double up = 0.0, down = 0.0;
    if (engine_refine(v->variant, &dv, out, &rr, err, ERRLEN) != 0 ||
        engine_regrid_begin(&e, v->variant, &dv, out, &up, err, ERRLEN) != 0) {
        mesh_free(out); /* nothing left on an error */
        return -1;
    }
    int rc = 0;
    for (long long k = 1; k <= d->steps && rc == 0; ++k) {
        if (k % d->regrid_every) continue;
        regrid_report_t r;
        if ((rc = engine_regrid_next(&e, out, (double)k * d->dt, &r, err, ERRLEN)) != 0) break;
        if (!timed) continue;
        step_row_t *w = &v->rows[k];
        w->tiles = r.tiles_after;
        w->added = r.added;
        w->removed = r.removed;
        w->changed = r.changed_fraction;
        w->ms[j] = r.regrid_ms;
        double in_levels = 0.0;
        for (int L = 1; L <= d->p.max_level && L < DP_MAX_LEVELS; ++L)
            if (r.level_ms[L] >= 0) {
                in_levels += r.level_ms[L];
                if (v->nlev[L] < v->nlev_cap) v->lev[(size_t)L * v->nlev_cap + v->nlev[L]++] = r.level_ms[L];
            }
        if (v->nph < v->nlev_cap) {
            const double ph[NPHASE] = { r.sample_ms, r.restrict_ms, r.rebuild_ms, r.rebuild_ms - in_levels };
            for (int q = 0; q < NPHASE; ++q) v->ph[(size_t)q * v->nlev_cap + v->nph] = ph[q];
            ++v->nph;
        }
    }
    if (rc == 0) rc = engine_regrid_sync(&e, out, &down, err, ERRLEN);
    engine_regrid_end(&e);
    if (rc != 0) mesh_free(out);
    return rc;
}

/* `dpamr bench` of a deck with steps > 0: the regrid time per step of cpu (bench_cpu = on) and, with a
 * usable GPU, hostlaunch and cdp with pdl off and on, and the fraction of tiles changed. Gate first:
 * one run of every variant, each one's last step byte-identical to the first variant's; then
 * bench_warmup untimed and bench_repeats timed runs of every step per variant. Table on stdout,
 * BENCH_OUT.csv and .json. The exit status. */
/* What bench_steps can time, before anything is announced or written: a series from its first build
 * (not a step's file) with at least one regrid. 0, or 1 after the message. */
static int bench_steps_check(const deck_t *d)
{
    char err[ERRLEN];
    long long k0 = 0;
    double tk = 0.0;
    const int is_step = h5io_read_step(d->mesh_file, &k0, &tk, NULL, err, sizeof err);
    if (is_step < 0) return run_die(err);
    if (is_step) {
        snprintf(err, sizeof err, "mesh_file = %.1000s is step %lld of a series: dpamr bench times a series from its "
                 "first build (give it the mesh the series started from)", d->mesh_file, k0);
        return run_die(err);
    }
    if (d->steps < d->regrid_every) {
        snprintf(err, sizeof err, "%.1000s: steps = %lld and regrid_every = %d: no step regrids, so there is nothing to "
                 "time (steps must be at least regrid_every)", d->path, d->steps, d->regrid_every);
        return run_die(err);
    }
    return 0;
}

static int bench_steps(deck_t *d, const mesh_t *in)
{
    char err[ERRLEN], why[512];
    const int gpu = gpu_available(why, sizeof why);
    step_var_t vars[5];
    int nv = 0;
    memset(vars, 0, sizeof vars);
    if (d->bench_cpu) vars[nv++].variant = DP_VARIANT_CPU;
    if (gpu)
        for (int vi = 0; vi < 2; ++vi)
            for (int pdl = 0; pdl < 2; ++pdl) {
                vars[nv].variant = vi == 0 ? DP_VARIANT_HOSTLAUNCH : DP_VARIANT_CDP;
                vars[nv++].pdl = pdl;
            }
    if (nv == 0) {
        snprintf(err, sizeof err, "nothing to time: no GPU (%s) and bench_cpu=off", why);
        return run_die(err);
    }
    for (int i = 0; i < nv; ++i) {
        if (vars[i].variant == DP_VARIANT_CPU) snprintf(vars[i].label, sizeof vars[i].label, "cpu");
        else snprintf(vars[i].label, sizeof vars[i].label, "%s pdl=%s", deck_variant_name(vars[i].variant),
                      vars[i].pdl ? "on" : "off");
    }
    const int nrep = d->bench_repeats;
    const size_t nrow = (size_t)d->steps + 1;
    step_row_t *rows = calloc(nrow * (size_t)nv, sizeof *rows);
    double *ms = calloc(nrow * (size_t)nv * (size_t)nrep, sizeof *ms);
    if (!rows || !ms) {
        free(rows), free(ms);
        return run_die("out of memory for the step table");
    }
    for (int i = 0; i < nv; ++i) {
        vars[i].rows = rows + (size_t)i * nrow;
        for (size_t k = 0; k < nrow; ++k) vars[i].rows[k].ms = ms + ((size_t)i * nrow + k) * (size_t)nrep;
        /* per-level times: at most one sample per level of every timed regrid */
        const long long nregrids = d->steps / d->regrid_every;
        vars[i].nlev_cap = (nregrids > 0 ? nregrids : 1) * nrep;
        vars[i].lev = malloc((size_t)(d->p.max_level + 1) * (size_t)vars[i].nlev_cap * sizeof(double));
        vars[i].ph = malloc((size_t)NPHASE * (size_t)vars[i].nlev_cap * sizeof(double));
        if (!vars[i].lev || !vars[i].ph) {
            for (int j = 0; j <= i; ++j) free(vars[j].lev), free(vars[j].ph);
            free(rows), free(ms);
            return run_die("out of memory for the per-level table");
        }
    }
    long long lev_tiles[DP_MAX_LEVELS]; /* the last step's tiles per level (the reference run) */
    int lev_n = 0;
    printf("dpamr bench %s: %dD, tile %d^%d, %d field(s), max_level %d, fill %s; %lld input tiles; %lld steps, dt %g, "
           "regrid every %d\n", d->path, d->p.dim, d->p.B, d->p.dim, d->p.nf, d->p.max_level,
           d->p.fill == DP_FILL_PROLONG ? "prolong" : "model", (long long)in->ntiles, d->steps, d->dt, d->regrid_every);
    if (gpu) {
        printf("device: %s\n", why);
        run_info_device(why);
    } else {
        printf("bench: no usable GPU (%s): timing the cpu regrid only\n", why);
    }
    int rc = 0;
    /* 1. the gate: every variant's last step byte-identical to the first variant's */
    mesh_t ref;
    memset(&ref, 0, sizeof ref);
    for (int i = 0; i < nv && rc == 0; ++i) {
        mesh_t out;
        memset(&out, 0, sizeof out);
        if (bench_once(d, in, &vars[i], &out, 0, 0, err) != 0) {
            fprintf(stderr, "dpamr: error: bench %s: %s\n", vars[i].label, err);
            rc = 1;
        } else if (i == 0) {
            ref = out;
            lev_n = ref.nlevels;
            for (int L = 0; L < lev_n; ++L) lev_tiles[L] = (long long)(ref.level_start[L + 1] - ref.level_start[L]);
            printf("gate: reference %s: %lld steps, the last with %lld tiles on %d levels\n", vars[0].label, d->steps,
                   (long long)ref.ntiles, ref.nlevels);
            continue;
        } else {
            char diff[512];
            const int same = mesh_equal(&ref, &out, diff, sizeof diff);
            printf("gate: %-18s vs %s: last step %s\n", vars[i].label, vars[0].label, same ? "byte-identical" : diff);
            if (!same) {
                fprintf(stderr, "dpamr: error: bench: %s's last step differs from %s's (%s); nothing timed\n",
                        vars[i].label, vars[0].label, diff);
                rc = 3;
            }
        }
        mesh_free(&out);
    }
    if (rc != 0) {
        mesh_free(&ref);
        goto done;
    }
    /* 2. timing: warm-up and timed runs of every step, variant by variant, each run's last step
     * byte-identical to the reference too */
    for (int i = 0; i < nv && rc == 0; ++i)
        for (int k = 0; k < d->bench_warmup + nrep && rc == 0; ++k) {
            mesh_t out;
            memset(&out, 0, sizeof out);
            char diff[512];
            if (bench_once(d, in, &vars[i], &out, k >= d->bench_warmup, k - d->bench_warmup, err) != 0) {
                fprintf(stderr, "dpamr: error: bench %s: %s\n", vars[i].label, err);
                rc = 1;
            } else if (!mesh_equal(&ref, &out, diff, sizeof diff)) {
                fprintf(stderr, "dpamr: error: bench: %s run %d's last step differs from the reference (%s)\n",
                        vars[i].label, k + 1, diff);
                rc = 3;
            }
            mesh_free(&out);
        }
    if (rc == 0)
        printf("gate: %d run(s) of %lld steps, the last step's mesh byte-identical in every run of every variant (%lld "
               "tiles on %d levels)\n", nv * (1 + d->bench_warmup + nrep), d->steps, (long long)ref.ntiles, ref.nlevels);
    mesh_free(&ref);
    if (rc != 0) goto done;
    {
        double *all = malloc(nrow * sizeof *all);
        if (!all) {
            rc = run_die("out of memory for the step table");
            goto done;
        }
        for (int i = 0; i < nv; ++i) {
            long long nr = 0;
            for (long long k = 1; k <= d->steps; ++k) {
                if (k % d->regrid_every) continue;
                step_row_t *w = &vars[i].rows[k];
                w->med = median(w->ms, nrep);
                w->lo = w->hi = w->ms[0];
                for (int j = 1; j < nrep; ++j) {
                    w->lo = w->ms[j] < w->lo ? w->ms[j] : w->lo;
                    w->hi = w->ms[j] > w->hi ? w->ms[j] : w->hi;
                }
                all[nr++] = w->med;
            }
            vars[i].all_med = median(all, (int)nr);
            qsort(all, (size_t)nr, sizeof *all, cmp_d);
            vars[i].all_lo = nr > 0 ? all[0] : 0.0;
            vars[i].all_hi = nr > 0 ? all[nr - 1] : 0.0;
        }
        free(all);
    }
    printf("\nmedian of %d runs after %d warm-up; regrid = sample every tile at the step's time, restrict (prolong),\n"
           "flag, keep / add / drop children, in canonical order; cpu: OpenMP across tiles, wall time; GPU: CUDA\n"
           "events on the engine's stream, the mesh resident on the device (transfers not included); changed =\n"
           "(added + removed) / tiles before the regrid. Regrid ms per variant:\n\n", nrep, d->bench_warmup);
    printf("%6s %10s %10s %8s %8s %8s", "step", "time", "tiles", "added", "removed", "changed");
    for (int i = 0; i < nv; ++i) printf(" %18s", vars[i].label);
    printf("\n");
    for (long long k = 1; k <= d->steps; ++k) {
        if (k % d->regrid_every) continue;
        const step_row_t *w = &vars[0].rows[k]; /* the counts: the same in every variant (the gate) */
        printf("%6lld %10g %10lld %8lld %8lld %7.2f%%", k, (double)k * d->dt, w->tiles, w->added, w->removed,
               100.0 * w->changed);
        for (int i = 0; i < nv; ++i) printf(" %18.3f", vars[i].rows[k].med);
        printf("\n");
    }
    for (int i = 0; i < nv; ++i)
        printf("regrid per step (%s): median %.3f ms, min %.3f ms, max %.3f ms\n", vars[i].label, vars[i].all_med,
               vars[i].all_lo, vars[i].all_hi);
    /* the rebuild level by level: where a variant's time goes (cdp's device launches, for one) */
    int lev_any = 0;
    for (int i = 0; i < nv; ++i)
        for (int L = 0; L < DP_MAX_LEVELS; ++L) {
            vars[i].lev_med[L] = vars[i].nlev[L] > 0 ? median(vars[i].lev + (size_t)L * vars[i].nlev_cap, (int)vars[i].nlev[L]) : -1.0;
            lev_any |= vars[i].nlev[L] > 0;
        }
    if (lev_any) {
        printf("\nrebuild per level, ms (median over the timed regrids; level L: its tiles written and filled; GPU:\n"
               "device timestamps from the end of level L-1's kernel to the end of level L's, which also flags level L,\n"
               "so the launch between them is in it; cpu: wall time of the pass that flags level L-1 and writes L):\n\n"
               "%6s %12s", "level", "tiles (last)");
        for (int i = 0; i < nv; ++i) printf(" %18s", vars[i].label);
        printf("\n");
        for (int L = 1; L < DP_MAX_LEVELS; ++L) {
            int any = 0;
            for (int i = 0; i < nv; ++i) any |= vars[i].nlev[L] > 0;
            if (!any) continue;
            printf("%6d %12lld", L, L < lev_n ? lev_tiles[L] : 0ll);
            for (int i = 0; i < nv; ++i) {
                if (vars[i].nlev[L] > 0) printf(" %18.3f", vars[i].lev_med[L]);
                else printf(" %18s", "-");
            }
            printf("\n");
        }
    }
    /* the phases: where a variant's regrid goes outside the levels (cdp's first launch and the end of
     * its chain, for one) */
    for (int i = 0; i < nv; ++i)
        for (int q = 0; q < NPHASE; ++q)
            vars[i].ph_med[q] = vars[i].nph > 0 ? median(vars[i].ph + (size_t)q * vars[i].nlev_cap, (int)vars[i].nph) : -1.0;
    printf("\nregrid per step by phase, ms (median over the timed regrids, each phase's own median; rebuild outside\n"
           "levels = the rebuild less its levels above: its kernels before the first level, the first level's\n"
           "launch, the end of the chain, the per-tile sums after):\n\n%24s", "phase");
    for (int i = 0; i < nv; ++i) printf(" %18s", vars[i].label);
    printf("\n");
    for (int q = 0; q < NPHASE; ++q) {
        printf("%24s", phase_names[q]);
        for (int i = 0; i < nv; ++i) printf(" %18.3f", vars[i].ph_med[q]);
        printf("\n");
    }
    /* CSV and JSON, each to a temporary name renamed */
    char path[2][8300], tmp[2][8400];
    for (int k = 0; k < 2 && rc == 0; ++k) {
        snprintf(path[k], sizeof path[k], "%.8200s.%s", d->bench_out, k ? "json" : "csv");
        FILE *fp = open_tmp(path[k], tmp[k], sizeof tmp[k], err);
        if (!fp) {
            rc = run_die(err);
            if (k == 1) { /* the CSV closed before it goes too */
                remove(tmp[0]);
                dp_tmp_done(tmp[0]);
            }
            break;
        }
        const run_info_t *ri = run_info();
        char deckc[2 * 8300 + 3], hostc[2 * sizeof ri->host + 3]; /* CSV fields: quoted, a quote doubled */
        run_csv_field(d->path, deckc, sizeof deckc);
        run_csv_field(ri->host, hostc, sizeof hostc);
        if (k == 0) {
            fprintf(fp, CSV_HEAD_STEPS);
        } else {
            json_head(fp, d, gpu ? why : "none");
            char dtnum[40];
            fprintf(fp, ",\"repeats\":%d,\"steps\":%lld,\"dt\":%s,\"regrid_every\":%d,\"rows\":[\n", nrep, d->steps,
                    run_number_text(dtnum, sizeof dtnum, d->dt), d->regrid_every);
        }
        int firstrow = 1;
        for (int i = 0; i < nv; ++i) {
            const char *vn = deck_variant_name(vars[i].variant);
            const char *pdl = vars[i].variant == DP_VARIANT_CPU ? "-" : (vars[i].pdl ? "on" : "off");
            for (long long s = 1; s <= d->steps; ++s) {
                if (s % d->regrid_every) continue;
                const step_row_t *w = &vars[i].rows[s];
                char tnum[40];
                if (k == 0) {
                    fprintf(fp, "%s,%s,%s,%lld,%s,%lld,%lld,%lld,%.6f,%.6f,%.6f,%.6f,", deckc, vn, pdl, s,
                            run_number_text(tnum, sizeof tnum, (double)s * d->dt), w->tiles, w->added, w->removed,
                            w->changed, w->med, w->lo, w->hi);
                    for (int j = 0; j < nrep; ++j) fprintf(fp, "%s%.6f", j ? ";" : "", w->ms[j]);
                    fprintf(fp, ",%s,%s,%s\n", hostc, ri->commit, ri->date);
                } else {
                    fprintf(fp, "%s{\"variant\":\"%s\",\"pdl\":\"%s\",\"step\":%lld,\"time\":%s,\"tiles\":%lld,"
                                "\"added\":%lld,\"removed\":%lld,\"changed_fraction\":%.6f,\"regrid_ms\":%.6f,"
                                "\"regrid_min_ms\":%.6f,\"regrid_max_ms\":%.6f,\"regrid_samples_ms\":[",
                            firstrow ? "" : ",\n", vn, pdl, s, run_number_text(tnum, sizeof tnum, (double)s * d->dt),
                            w->tiles, w->added, w->removed, w->changed, w->med, w->lo, w->hi);
                    for (int j = 0; j < nrep; ++j) fprintf(fp, "%s%.6f", j ? "," : "", w->ms[j]);
                    fprintf(fp, "]}");
                }
                firstrow = 0;
            }
        }
        if (k == 1) {
            fprintf(fp, "\n],\"level_ms\":[");
            for (int i = 0; i < nv; ++i) {
                fprintf(fp, "%s\n{\"variant\":\"%s\",\"pdl\":\"%s\",\"median_ms\":[", i ? "," : "",
                        deck_variant_name(vars[i].variant),
                        vars[i].variant == DP_VARIANT_CPU ? "-" : (vars[i].pdl ? "on" : "off"));
                for (int L = 0; L <= d->p.max_level && L < DP_MAX_LEVELS; ++L) {
                    if (vars[i].nlev[L] > 0) fprintf(fp, "%s%.6f", L ? "," : "", vars[i].lev_med[L]);
                    else fprintf(fp, "%snull", L ? "," : "");
                }
                fprintf(fp, "]}");
            }
            fprintf(fp, "\n],\"phase_ms\":[");
            for (int i = 0; i < nv; ++i) {
                fprintf(fp, "%s\n{\"variant\":\"%s\",\"pdl\":\"%s\"", i ? "," : "", deck_variant_name(vars[i].variant),
                        vars[i].variant == DP_VARIANT_CPU ? "-" : (vars[i].pdl ? "on" : "off"));
                static const char *const keys[NPHASE] = { "sample", "restrict", "rebuild", "rebuild_outside_levels" };
                for (int q = 0; q < NPHASE; ++q) fprintf(fp, ",\"%s\":%.6f", keys[q], vars[i].ph_med[q]);
                fprintf(fp, "}");
            }
            fprintf(fp, "\n]}\n");
        }
        if (close_tmp(fp, tmp[k], path[k], err) != 0) {
            rc = run_die(err);
            if (k == 1) { /* the CSV closed before it goes too: a pair or nothing */
                remove(tmp[0]);
                dp_tmp_done(tmp[0]);
            }
        }
    }
    if (rc == 0 && rename_pair(tmp, path, err) != 0) rc = run_die(err);
    if (rc == 0) printf("wrote %s.csv and %s.json\n", d->bench_out, d->bench_out);
done:
    for (int i = 0; i < nv; ++i) free(vars[i].lev), free(vars[i].ph);
    free(rows);
    free(ms);
    return rc;
}

static void add_row(row_t *rows, int *n, int variant, int pdl, int grain, int group)
{
    row_t *w = &rows[(*n)++];
    w->variant = variant;
    w->pdl = pdl;
    w->grain = grain;
    w->group = group;
    if (variant != DP_VARIANT_CDP) snprintf(w->label, sizeof w->label, "%s", deck_variant_name(variant));
    else if (grain == DP_GRAIN_GROUP) snprintf(w->label, sizeof w->label, "cdp g%d", group);
    else snprintf(w->label, sizeof w->label, "cdp %s", deck_grain_name(grain));
}

int bench_main(int argc, char **argv)
{
    char err[ERRLEN], why[512];
    deck_t d;
    mesh_t in;
    memset(&in, 0, sizeof in);
    if (run_load(&d, &in, argc, argv, err, sizeof err) != 0) {
        mesh_free(&in);
        deck_free(&d);
        return run_die(err);
    }
    d.quiet = 1;
    if ((d.steps > 0 && bench_steps_check(&d) != 0) || bench_check_out(&d) != 0) { /* before any work */
        mesh_free(&in);
        deck_free(&d);
        return 1;
    }
    if (d.steps > 0) { /* a moving deck: the regrid per step (src/steps.c) */
        const int rc = bench_steps(&d, &in);
        mesh_free(&in);
        deck_free(&d);
        return rc;
    }
    const int gpu = gpu_available(why, sizeof why);
    static row_t rows[MAXROWS]; /* large: the per-repeat samples */
    int nrows = 0;
    memset(rows, 0, sizeof rows);
    if (d.bench_cpu) add_row(rows, &nrows, DP_VARIANT_CPU, 0, 0, 0);
    if (gpu) {
        /* host, then the cdp grains from the smallest launch to the largest; pdl off and on each */
        for (int pdl = 0; pdl < 2; ++pdl) add_row(rows, &nrows, DP_VARIANT_HOSTLAUNCH, pdl, 0, 0);
        for (int pdl = 0; pdl < 2; ++pdl) add_row(rows, &nrows, DP_VARIANT_CDP, pdl, DP_GRAIN_TILE, 1);
        for (int g = 0; g < d.nbench_groups; ++g)
            for (int pdl = 0; pdl < 2; ++pdl) add_row(rows, &nrows, DP_VARIANT_CDP, pdl, DP_GRAIN_GROUP, d.bench_groups[g]);
        for (int pdl = 0; pdl < 2; ++pdl) add_row(rows, &nrows, DP_VARIANT_CDP, pdl, DP_GRAIN_LEVEL, 0);
    } else if (d.bench_cpu) {
        printf("bench: no usable GPU (%s): timing cpu only\n", why);
    }
    int rc = 1; /* every way out below frees the mesh and the deck */
    mesh_t ref;
    memset(&ref, 0, sizeof ref);
    if (nrows == 0) {
        fprintf(stderr, "dpamr: error: nothing to time: no GPU (%s) and bench_cpu=off\n", why);
        goto done;
    }
    int base = 0; /* the stated baseline: host with pdl off (cpu without a GPU) */
    for (int i = 0; i < nrows; ++i)
        if (rows[i].variant == DP_VARIANT_HOSTLAUNCH && !rows[i].pdl) base = i;
    const int cells = mesh_cells(&in);
    printf("dpamr bench %s: %dD, tile %d^%d, %d field(s), max_level %d, fill %s; %lld input tiles\n", d.path, d.p.dim,
           d.p.B, d.p.dim, d.p.nf, d.p.max_level, d.p.fill == DP_FILL_PROLONG ? "prolong" : "model",
           (long long)in.ntiles);
    if (gpu) printf("device: %s\n", why);
    if (gpu) run_info_device(why);

    /* 1. the byte-for-byte gate */
    for (int i = 0; i < nrows; ++i) {
        mesh_t out;
        refine_report_t r;
        if (run_once(&d, &in, &rows[i], &out, &r, err) != 0) {
            fprintf(stderr, "dpamr: error: bench %s pdl=%s: %s\n", rows[i].label, rows[i].pdl ? "on" : "off", err);
            goto done;
        }
        rows[i].new_tiles = out.ntiles - in.ntiles;
        if (i == 0) {
            ref = out;
            printf("gate: reference %s%s: %lld tiles on %d levels\n", rows[0].label,
                   rows[0].variant == DP_VARIANT_CPU ? "" : (rows[0].pdl ? " pdl=on" : " pdl=off"),
                   (long long)ref.ntiles, ref.nlevels);
            continue;
        }
        char diff[512];
        const int same = mesh_equal(&ref, &out, diff, sizeof diff);
        printf("gate: %-10s pdl=%-3s vs %s: %s\n", rows[i].label, rows[i].pdl ? "on" : "off", rows[0].label,
               same ? "byte-identical" : diff);
        mesh_free(&out);
        if (!same) {
            fprintf(stderr, "dpamr: error: bench: %s pdl=%s differs from %s (%s); nothing timed\n", rows[i].label,
                    rows[i].pdl ? "on" : "off", rows[0].label, diff);
            rc = 3;
            goto done;
        }
    }
    const int nlevels = ref.nlevels, Lfirst = in.nlevels;
    mesh_free(&ref);

    /* 2. timing */
    for (int i = 0; i < nrows; ++i) {
        row_t *w = &rows[i];
        w->nrep = d.bench_repeats;
        for (int k = 0; k < d.bench_warmup + d.bench_repeats; ++k) {
            mesh_t out;
            refine_report_t r;
            if (run_once(&d, &in, w, &out, &r, err) != 0) {
                fprintf(stderr, "dpamr: error: bench %s: %s\n", w->label, err);
                goto done;
            }
            mesh_free(&out);
            if (k < d.bench_warmup) continue;
            const int j = k - d.bench_warmup;
            w->refine[j] = r.refine_ms;
            w->total[j] = r.total_ms;
            for (int L = Lfirst; L < nlevels; ++L) w->level[L][j] = r.level_ms[L];
            w->have_gap = r.ngaps > 0;
            w->gap[j] = r.ngaps > 0 ? median(r.gap_ns, r.ngaps) : 0.0;
            w->pool = r.pool_size;
            w->launches = r.device_launches;
        }
        w->med_refine = median(w->refine, w->nrep);
        w->med_total = median(w->total, w->nrep);
        w->med_gap = median(w->gap, w->nrep);
        for (int L = Lfirst; L < nlevels; ++L) w->med_level[L] = median(w->level[L], w->nrep);
    }

    /* 3. the table, with the bandwidth floors: the new cells and metadata written once at the
     *    device's copy bandwidth, and for the cpu at the host's with its threads (both measured now) */
    const double bytes_new = mesh_bytes((double)rows[0].new_tiles, d.p.dim, d.p.B, d.p.nf);
    floors_t fl;
    memset(&fl, 0, sizeof fl);
    if (gpu && gpu_copy_bandwidth(&fl.dev_gbps, err, sizeof err) == 0 && fl.dev_gbps > 0)
        fl.dev_ms = bytes_new / (fl.dev_gbps * 1e9) * 1e3;
    if (d.bench_cpu && host_copy_bandwidth(&fl.host_gbps, &fl.host_threads) == 0)
        fl.host_ms = bytes_new / (fl.host_gbps * 1e9) * 1e3;
    printf("\nmedian of %d runs after %d warm-up; refine = from the input tiles on the device to the canonical mesh on\n"
           "the device (CUDA events; cdp tile and group include their sort to canonical order) or on the host (cpu);\n"
           "end-to-end adds upload and download; ratio = refine time / baseline (%s); x floor = refine time / the\n"
           "bandwidth floor (the host's for cpu); gap = median over transitions of (next kernel's first block start - previous kernel's\n"
           "last block end), negative = overlap: PDL pairs (host, sort of cdp tile/group) or device launches (cdp level)\n\n",
           d.bench_repeats, d.bench_warmup, rows[base].variant == DP_VARIANT_CPU ? "cpu" : "hostlaunch pdl=off");
    printf("%-10s %-4s %11s %13s %11s %11s %8s %8s %8s %9s %9s  per-level us\n", "variant", "pdl", "refine ms",
           "end-to-end ms", "tiles/s", "cells/s", "ratio", "x floor", "gap ns", "launches", "pool");
    for (int i = 0; i < nrows; ++i) {
        const row_t *w = &rows[i];
        const double sec = w->med_refine * 1e-3;
        char gap[32] = "-", xf[32] = "-", launches[32] = "-", pool[32] = "-";
        if (w->have_gap) snprintf(gap, sizeof gap, "%.0f", w->med_gap);
        if (row_floor(&fl, w) > 0) snprintf(xf, sizeof xf, "%.1f", w->med_refine / row_floor(&fl, w));
        if (w->variant == DP_VARIANT_CDP) {
            snprintf(launches, sizeof launches, "%lld", w->launches);
            snprintf(pool, sizeof pool, "%lld", w->pool);
        }
        printf("%-10s %-4s %11.3f %13.3f %11.4g %11.4g %8.3f %8s %8s %9s %9s ", w->label,
               w->variant == DP_VARIANT_CPU ? "-" : (w->pdl ? "on" : "off"), w->med_refine, w->med_total,
               w->new_tiles / sec, w->new_tiles * (double)cells / sec, w->med_refine / rows[base].med_refine, xf, gap,
               launches, pool);
        for (int L = Lfirst; L < nlevels; ++L)
            if (w->med_level[L] >= 0) printf(" %.0f", w->med_level[L] * 1e3);
            else printf(" -");
        printf("\n");
    }
    if (fl.dev_ms > 0 || fl.host_ms > 0)
        printf("\nbandwidth floor: %.3g new tiles, %.3f GB of new cells and metadata written\n", (double)rows[0].new_tiles,
               bytes_new * 1e-9);
    if (fl.dev_ms > 0)
        printf("  device copy bandwidth %.0f GB/s (measured now) -> floor %.3f ms\n", fl.dev_gbps, fl.dev_ms);
    if (fl.host_ms > 0)
        printf("  host copy bandwidth %.1f GB/s on %d thread%s (measured now) -> floor %.3f ms (the cpu row)\n",
               fl.host_gbps, fl.host_threads, fl.host_threads == 1 ? "" : "s", fl.host_ms);
    printf("launches = device-side launches of one refinement; pool = the pending-launch pool granted (the computed "
           "bound for the grain)\n");

    /* CSV and JSON, each written to a temporary name and renamed */
    if (write_results(&d, rows, nrows, base, cells, Lfirst, nlevels, gpu ? why : "none", &fl, err) != 0) {
        fprintf(stderr, "dpamr: error: %s\n", err);
        goto done;
    }
    printf("wrote %s.csv and %s.json\n", d.bench_out, d.bench_out);
    rc = 0;
done:
    mesh_free(&ref);
    mesh_free(&in);
    deck_free(&d);
    return rc;
}
