/* bench.c - `dpamr bench DECK`: the comparison users come for.
 *
 * 1. Gate: every variant it will time builds the mesh once and must match the reference (cpu when
 *    bench_cpu=on, else host with pdl off) byte for byte: tiles, tree and every field bit. A
 *    mismatch fails the run before anything is timed.
 * 2. Timing: bench_warmup untimed runs, then bench_repeats timed runs per variant and pdl setting;
 *    medians. GPU times come from CUDA events around the refinement (upload and download are
 *    reported apart); per-level times and PDL gaps come from the device timeline.
 * 3. Table on stdout, plus BENCH_OUT.csv and BENCH_OUT.json.
 */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../device/gpu.h"
#include "engine.h"
#include "timer.h"

#define ERRLEN 2048
#define MAXREP 1000

typedef struct {
    int variant, pdl;
    const char *label;
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

/* Run one variant on a fresh copy of the input; the refined mesh is left in out. */
static int run_once(deck_t *d, const mesh_t *in, int variant, int pdl, mesh_t *out, refine_report_t *r, char *err)
{
    if (mesh_copy(out, in) != 0) {
        snprintf(err, ERRLEN, "out of host memory copying the input mesh");
        return -1;
    }
    d->pdl = pdl;
    d->trace[0] = '\0';
    return engine_refine(variant, d, out, r, err, ERRLEN);
}

/* Write s as a JSON string literal. */
static void json_str(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\') fprintf(fp, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(fp, "\\u%04x", (unsigned char)*s);
        else fputc(*s, fp);
    }
    fputc('"', fp);
}

/* Close fp (open on tmp) and rename tmp to path; 0 or -1 with a message naming path. */
static int finish_file(FILE *fp, const char *tmp, const char *path, char *err)
{
    const int bad = ferror(fp);
    if (fclose(fp) != 0 || bad || rename(tmp, path) != 0) {
        snprintf(err, ERRLEN, "cannot write %.1000s: %s", path, strerror(errno ? errno : EIO));
        remove(tmp);
        return -1;
    }
    return 0;
}

static int write_results(const deck_t *d, const row_t *rows, int nrows, int base, int cells, int Lfirst, int nlevels,
                         const char *device, char *err)
{
    char path[2][4200], tmp[2][4300];
    FILE *fp[2];
    for (int k = 0; k < 2; ++k) {
        snprintf(path[k], sizeof path[k], "%s.%s", d->bench_out, k ? "json" : "csv");
        snprintf(tmp[k], sizeof tmp[k], "%.4100s.tmp.%ld", path[k], (long)getpid());
        fp[k] = fopen(tmp[k], "w");
        if (!fp[k]) {
            snprintf(err, ERRLEN, "cannot write %.1000s: %s", path[k], strerror(errno));
            if (k) {
                fclose(fp[0]);
                remove(tmp[0]);
            }
            return -1;
        }
    }
    FILE *csv = fp[0], *js = fp[1];
    fprintf(csv, "deck,variant,pdl,refine_ms,end_to_end_ms,tiles_per_s,cells_per_s,ratio,gap_ns,new_tiles\n");
    fprintf(js, "{\"deck\":");
    json_str(js, d->path);
    fprintf(js, ",\"device\":");
    json_str(js, device);
    fprintf(js, ",\"repeats\":%d,\"baseline\":\"%s\",\"rows\":[\n", d->bench_repeats,
            rows[base].variant == DP_VARIANT_CPU ? "cpu" : "host pdl=off");
    for (int i = 0; i < nrows; ++i) {
        const row_t *w = &rows[i];
        const double sec = w->med_refine * 1e-3;
        const char *pdl = w->variant == DP_VARIANT_CPU ? "-" : (w->pdl ? "on" : "off");
        fprintf(csv, "\"%s\",%s,%s,%.6f,%.6f,%.6g,%.6g,%.6f,%.1f,%lld\n", d->path, w->label, pdl, w->med_refine,
                w->med_total, w->new_tiles / sec, w->new_tiles * (double)cells / sec,
                w->med_refine / rows[base].med_refine, w->have_gap ? w->med_gap : 0.0, w->new_tiles);
        char gapj[32] = "null";
        if (w->have_gap) snprintf(gapj, sizeof gapj, "%.1f", w->med_gap);
        fprintf(js,
                "%s{\"variant\":\"%s\",\"pdl\":\"%s\",\"refine_ms\":%.6f,\"end_to_end_ms\":%.6f,\"ratio\":%.6f,"
                "\"gap_ns\":%s,\"new_tiles\":%lld,\"level_ms\":[",
                i ? ",\n" : "", w->label, pdl, w->med_refine, w->med_total, w->med_refine / rows[base].med_refine, gapj,
                w->new_tiles);
        for (int L = Lfirst; L < nlevels; ++L) fprintf(js, "%s%.6f", L > Lfirst ? "," : "", w->med_level[L]);
        fprintf(js, "]}");
    }
    fprintf(js, "\n]}\n");
    errno = 0;
    const int rc0 = finish_file(csv, tmp[0], path[0], err);
    const int rc1 = rc0 == 0 ? finish_file(js, tmp[1], path[1], err) : (fclose(js), remove(tmp[1]), -1);
    return rc0 == 0 && rc1 == 0 ? 0 : -1;
}

int bench_main(int argc, char **argv)
{
    char err[ERRLEN], why[512];
    deck_t d;
    mesh_t in;
    memset(&in, 0, sizeof in);
    if (driver_load(&d, &in, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "dpamr: error: %s\n", err);
        return 1;
    }
    d.quiet = 1;
    const int gpu = gpu_available(why, sizeof why);
    row_t rows[5];
    int nrows = 0;
    memset(rows, 0, sizeof rows);
    if (d.bench_cpu) rows[nrows++] = (row_t){ .variant = DP_VARIANT_CPU, .pdl = 0, .label = "cpu" };
    if (gpu) {
        rows[nrows++] = (row_t){ .variant = DP_VARIANT_HOST, .pdl = 0, .label = "host" };
        rows[nrows++] = (row_t){ .variant = DP_VARIANT_HOST, .pdl = 1, .label = "host" };
        rows[nrows++] = (row_t){ .variant = DP_VARIANT_CDP, .pdl = 0, .label = "cdp" };
        rows[nrows++] = (row_t){ .variant = DP_VARIANT_CDP, .pdl = 1, .label = "cdp" };
    } else {
        printf("bench: no usable GPU (%s): timing cpu only\n", why);
    }
    if (nrows == 0) {
        fprintf(stderr, "dpamr: error: nothing to time: no GPU (%s) and bench_cpu=off\n", why);
        return 1;
    }
    int base = 0; /* the stated baseline: host with pdl off (cpu without a GPU) */
    for (int i = 0; i < nrows; ++i)
        if (rows[i].variant == DP_VARIANT_HOST && !rows[i].pdl) base = i;
    const int cells = mesh_cells(&in);
    printf("dpamr bench %s: %dD, tile %d^%d, %d field(s), max_level %d, fill %s; %lld input tiles\n", d.path, d.p.dim,
           d.p.B, d.p.dim, d.p.nf, d.p.max_level, d.p.fill == DP_FILL_PROLONG ? "prolong" : "model",
           (long long)in.ntiles);
    if (gpu) printf("device: %s\n", why);

    /* 1. the byte-for-byte gate */
    mesh_t ref;
    memset(&ref, 0, sizeof ref);
    for (int i = 0; i < nrows; ++i) {
        mesh_t out;
        refine_report_t r;
        if (run_once(&d, &in, rows[i].variant, rows[i].pdl, &out, &r, err) != 0) {
            fprintf(stderr, "dpamr: error: bench %s pdl=%s: %s\n", rows[i].label, rows[i].pdl ? "on" : "off", err);
            return 1;
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
        printf("gate: %-4s pdl=%-3s vs %s: %s\n", rows[i].label, rows[i].pdl ? "on" : "off", rows[0].label,
               same ? "byte-identical" : diff);
        mesh_free(&out);
        if (!same) {
            fprintf(stderr, "dpamr: error: bench: %s pdl=%s differs from %s (%s); nothing timed\n", rows[i].label,
                    rows[i].pdl ? "on" : "off", rows[0].label, diff);
            return 3;
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
            if (run_once(&d, &in, w->variant, w->pdl, &out, &r, err) != 0) {
                fprintf(stderr, "dpamr: error: bench %s: %s\n", w->label, err);
                return 1;
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

    /* 3. the table */
    const double bytes_new = (double)rows[0].new_tiles * ((double)cells * 4.0 * d.p.nf + 33.0);
    printf("\nmedian of %d runs after %d warm-up; refine = the refinement on the device (CUDA events) or host (cpu);\n"
           "end-to-end adds upload, sort (cdp) and download; ratio = refine time / baseline (%s);\n"
           "gap = median over PDL transitions of (next kernel's first block start - previous kernel's last block "
           "end), negative = overlap\n\n",
           d.bench_repeats, d.bench_warmup, rows[base].variant == DP_VARIANT_CPU ? "cpu" : "host pdl=off");
    printf("%-5s %-4s %12s %13s %12s %12s %8s %10s  per-level us\n", "var", "pdl", "refine ms", "end-to-end ms",
           "tiles/s", "cells/s", "ratio", "gap ns");
    for (int i = 0; i < nrows; ++i) {
        const row_t *w = &rows[i];
        const double sec = w->med_refine * 1e-3;
        char gap[32] = "-";
        if (w->have_gap) snprintf(gap, sizeof gap, "%.0f", w->med_gap);
        printf("%-5s %-4s %12.3f %13.3f %12.4g %12.4g %8.3f %10s ", w->label,
               w->variant == DP_VARIANT_CPU ? "-" : (w->pdl ? "on" : "off"), w->med_refine, w->med_total,
               w->new_tiles / sec, w->new_tiles * (double)cells / sec, w->med_refine / rows[base].med_refine, gap);
        for (int L = Lfirst; L < nlevels; ++L)
            if (w->med_level[L] >= 0) printf(" %.0f", w->med_level[L] * 1e3);
            else printf(" -");
        printf("\n");
    }
    double bw = 0.0, best = 0.0;
    for (int i = 0; i < nrows; ++i)
        if (rows[i].variant != DP_VARIANT_CPU && (best == 0.0 || rows[i].med_refine < best)) best = rows[i].med_refine;
    if (gpu && gpu_copy_bandwidth(&bw, err, sizeof err) == 0 && bw > 0) {
        const double floor_ms = bytes_new / (bw * 1e9) * 1e3;
        printf("\nbandwidth floor: %.3g new tiles, %.3f GB of new cells and metadata written; device copy bandwidth "
               "%.0f GB/s (measured now) -> floor %.3f ms; best GPU refine is %.1fx the floor\n",
               (double)rows[0].new_tiles, bytes_new * 1e-9, bw, floor_ms, best / floor_ms);
    }
    for (int i = 0; i < nrows; ++i)
        if (rows[i].variant == DP_VARIANT_CDP)
            printf("cdp pdl=%s: %lld device-side launches, pending-launch pool %lld\n", rows[i].pdl ? "on" : "off",
                   rows[i].launches, rows[i].pool);

    /* CSV and JSON, each written to a temporary name and renamed */
    if (write_results(&d, rows, nrows, base, cells, Lfirst, nlevels, gpu ? why : "none", err) != 0) {
        fprintf(stderr, "dpamr: error: %s\n", err);
        return 1;
    }
    printf("wrote %s.csv and %s.json\n", d.bench_out, d.bench_out);
    mesh_free(&in);
    deck_free(&d);
    return 0;
}
