/* run.c - the pieces of the app layer's pipelines (run.h): input and output checks, variant, report lines, provenance. */
#include "src/run.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dpamr_commit.h" /* DPAMR_COMMIT: written at build time (cmake/commit.cmake) */
#include "device/gpu.h"
#include "src/tmpfile.h"

int run_die(const char *msg)
{
    fprintf(stderr, "dpamr: error: %s\n", msg);
    return 1;
}

/* "x y" or "x y z": the first dim of v */
static const char *ints_text(const int *v, int dim, char *buf, size_t n)
{
    snprintf(buf, n, dim == 3 ? "%d %d %d" : "%d %d", v[0], v[1], v[2]);
    return buf;
}

int run_output_name(const deck_t *d, char *err, size_t n)
{
    size_t len = 0;
    char why[256];
    if (d->steps > 0 || deck_pattern_check(d->output, &len, why, sizeof why) < 0) return 0;
    return snprintf(err, n, "output = %.1000s is a pattern of time steps (a %%d in the name) but steps = 0 writes one "
                            "file: give its name, or steps > 0", d->output), -1;
}

int run_mesh_matches_deck(const mesh_t *m, const deck_t *d, const char *file, int suggest, char *err, size_t n)
{
    const dp_params *p = &d->p;
    /* what the deck says comes from its file and its command-line overrides; a mesh made for it fits */
    char hint[1200] = "", a1[48], a2[48];
    if (suggest)
        snprintf(hint, sizeof hint, " (the deck with its overrides): give a mesh made for them%s%.900s%s",
                 p->nobj > 0 ? " (`dpamr mesh " : "", p->nobj > 0 ? d->path : "",
                 p->nobj > 0 ? " KEY=VALUE... mesh_file=NEW.hdf` with the same overrides samples one)" : "");
    if (m->dim != p->dim || m->B != p->B)
        return snprintf(err, n, "%.900s has dim %d and tile_size %d, but %.900s says dim %d and tile_size %d%s", file,
                        m->dim, m->B, d->path, p->dim, p->B, hint), -1;
    for (int a = 0; a < 3; ++a)
        if (m->root[a] != d->root[a])
            return snprintf(err, n, "%.900s has root %s, but %.900s says root %s%s", file, ints_text(m->root, p->dim, a1,
                            sizeof a1), d->path, ints_text(d->root, p->dim, a2, sizeof a2), hint), -1;
    for (int a = 0; a < p->dim; ++a)
        if (m->origin[a] != p->origin[a] || m->h0 != p->h0) {
            char o1[96], o2[96];
            snprintf(o1, sizeof o1, "%.17g %.17g", m->origin[0], m->origin[1]);
            snprintf(o2, sizeof o2, "%.17g %.17g", p->origin[0], p->origin[1]);
            if (p->dim == 3) {
                snprintf(o1 + strlen(o1), sizeof o1 - strlen(o1), " %.17g", m->origin[2]);
                snprintf(o2 + strlen(o2), sizeof o2 - strlen(o2), " %.17g", p->origin[2]);
            }
            return snprintf(err, n, "%.900s has origin %s and cell_size %.17g, but %.900s says origin %s and cell_size "
                            "%.17g%s", file, o1, m->h0, d->path, o2, p->h0, hint), -1;
        }
    if (m->nf != p->nf)
        return snprintf(err, n, "%.900s has %d field%s, but %.900s names %d in 'fields'%s", file, m->nf,
                        m->nf == 1 ? "" : "s", d->path, p->nf, hint), -1;
    for (int f = 0; f < p->nf; ++f)
        if (strcmp(m->field_name[f], d->field_name[f]) != 0)
            return snprintf(err, n, "%.900s: field %d is '%s', but %.900s says '%s' (fields must match in order)%s", file,
                            f, m->field_name[f], d->path, d->field_name[f], hint), -1;
    return 0;
}

int run_mesh_has_frontier(const mesh_t *m, const char *file, char *err, size_t n)
{
    const int L = m->nlevels - 1;
    if (L >= 1 && m->level_start[L] == m->level_start[L + 1])
        return snprintf(err, n, "%.1000s declares %d levels but level %d holds no tiles: dpamr run refines the finest "
                                "level, and this one is empty (write the mesh without trailing empty levels)",
                        file, m->nlevels, L), -1;
    return 0;
}

int run_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int run_refuse_overwrite(const char *key, const char *target, const deck_t *d, int check_mesh, char *err, size_t n)
{
    const int want = check_mesh ? 1 : 2; /* the kind written: a run's output, or a level-0 mesh */
    if (run_same_file(target, d->path))
        return snprintf(err, n, "%s = %.1000s is the deck itself: dpamr never writes over its input", key, target), -1;
    if (check_mesh && run_same_file(target, d->mesh_file))
        return snprintf(err, n, "%s = %.1000s is the input mesh (mesh_file): dpamr never writes over its input; "
                                "choose another output", key, target), -1;
    struct stat st;
    if (lstat(target, &st) != 0) return 0; /* a new file */
    if (!S_ISREG(st.st_mode))
        return snprintf(err, n, "%s = %.1000s: it exists and is not a regular file (%s): dpamr writes only new "
                                "files or replaces its own; choose another %s", key, target,
                         S_ISLNK(st.st_mode)   ? "a symbolic link"
                         : S_ISDIR(st.st_mode) ? "a directory"
                                               : "a device, FIFO or socket",
                         key), -1;
    char what[1500];
    const int kind = h5io_is_dpamr_output(target, what, sizeof what);
    if (!kind)
        return snprintf(err, n, "%s = %.1000s exists and %s: dpamr never writes over a file it did not write; move it "
                                "away or choose another %s", key, target, what, key), -1;
    /* a mesh is some deck's input: a run's output never replaces it, nor a mesh a run's output */
    if (kind != want)
        return snprintf(err, n, "%s = %.1000s exists and is %s: dpamr %s replaces only its own earlier %s; move it "
                                "away or choose another %s", key, target,
                        kind == 2 ? "a level-0 mesh written by `dpamr mesh` (a deck's input)"
                                  : "the output of a `dpamr run` (a refinement or a time step)",
                        want == 2 ? "mesh" : "run", want == 2 ? "level-0 mesh (`dpamr mesh`)" : "run output", key), -1;
    if (d->overwrite == DP_OVERWRITE_NEVER)
        return snprintf(err, n, "%s = %.1000s exists (an earlier dpamr output) and overwrite = never: move it away, "
                                "choose another %s, or set overwrite=own", key, target, key), -1;
    return 1;
}

void run_say_replacing(const deck_t *d, const char *key, const char *target)
{
    if (d->verbosity == DP_VERBOSITY_QUIET) return; /* quiet: warnings, errors and "wrote" only */
    printf("%s = %s exists, written by dpamr earlier: it will be replaced (overwrite=never keeps it)\n", key, target);
}

/** The folder of path ("." for a bare name) into dir. */
static void dir_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, n, ".");
    else if (slash == path) snprintf(dir, n, "/");
    else snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* NAME.tmp.PID of a dpamr output kind (.hdf, .hdf.series, .csv, .json) whose process PID is gone. */
static int stale_tmp(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    if (!t) return 0;
    const char *digits = t + 5;
    if (!*digits || strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 10) return 0;
    static const char *const kinds[] = { ".hdf", ".hdf.series", ".csv", ".json" };
    int ours = 0;
    for (int k = 0; k < 4; ++k) {
        const size_t lk = strlen(kinds[k]);
        if ((size_t)(t - name) >= lk && strncmp(t - lk, kinds[k], lk) == 0) ours = 1;
    }
    const long pid = atol(digits);
    return ours && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void run_note_stale_tmp(const char *target)
{
    char dir[8192];
    dir_of(target, dir, sizeof dir);
    DIR *dp = opendir(dir);
    if (!dp) return;
    char names[4][256];
    int k = 0;
    for (struct dirent *e; (e = readdir(dp)) != NULL;)
        if (stale_tmp(e->d_name)) {
            if (k < 4) snprintf(names[k], sizeof names[k], "%s", e->d_name);
            ++k;
        }
    closedir(dp);
    if (k == 0) return;
    fflush(stdout);
    fprintf(stderr, "dpamr: note: %s holds %d temporary file(s) of dpamr runs that ended without removing them "
                    "(no process of that number runs on this host; an interrupt under mpiexec ends the ranks with "
                    "SIGKILL, which no program can catch):", dir, k);
    for (int i = 0; i < k && i < 4; ++i) fprintf(stderr, " %s", names[i]);
    fprintf(stderr, "%s; dpamr removes only the files of its own run: remove them by hand\n", k > 4 ? " ..." : "");
}

int run_check_output(const char *key, const char *target, double bytes, char *err, size_t n)
{
    char dir[8192];
    dir_of(target, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0)
        return snprintf(err, n, "%s = %.1000s: its folder %.1000s does not exist (%s); make it first", key, target, dir,
                        strerror(errno)), -1;
    if (!S_ISDIR(st.st_mode))
        return snprintf(err, n, "%s = %.1000s: %.1000s is not a folder", key, target, dir), -1;
    if (access(dir, W_OK | X_OK) != 0)
        return snprintf(err, n, "%s = %.1000s: cannot write in the folder %.1000s (%s)", key, target, dir,
                        strerror(errno)), -1;
    /* the file is written as NAME.tmp.PID first (src/tmpfile.h): that name must fit too */
    const char *slash = strrchr(target, '/'), *base = slash ? slash + 1 : target;
    const long name_max = pathconf(dir, _PC_NAME_MAX) > 0 ? pathconf(dir, _PC_NAME_MAX) : 255;
    if ((long)strlen(base) + DP_TMP_SUFFIX_MAX > name_max)
        return snprintf(err, n, "%s = %.1000s: the file name has %zu characters; at most %ld fit in %.1000s (dpamr "
                                "writes NAME.tmp.PID first, %d characters more)", key, target, strlen(base),
                        name_max - DP_TMP_SUFFIX_MAX, dir, DP_TMP_SUFFIX_MAX), -1;
    if (strlen(target) + DP_TMP_SUFFIX_MAX >= 4096)
        return snprintf(err, n, "%s = %.200s...: the path has %zu characters; at most %d are allowed", key, target,
                        strlen(target), 4095 - DP_TMP_SUFFIX_MAX), -1;
    struct statvfs sv;
    char need[32], have[32];
    if (statvfs(dir, &sv) == 0 && (double)sv.f_bavail * (double)sv.f_frsize < bytes)
        return snprintf(err, n, "%s = %.1000s: the file needs at least %s and the file system of %.1000s has %s free",
                        key, target, run_bytes_text(bytes, need, sizeof need), dir,
                        run_bytes_text((double)sv.f_bavail * (double)sv.f_frsize, have, sizeof have)), -1;
    return 0;
}

int run_json_escape(const char *s, char *out, size_t n)
{
    size_t w = 0;
    out[0] = '\0';
    for (const char *c = s; *c; ++c) {
        const unsigned char u = (unsigned char)*c;
        const int k = u < 0x20 ? snprintf(out + w, n - w, "\\u%04x", u)
                      : u == '"' || u == '\\' ? snprintf(out + w, n - w, "\\%c", u)
                                             : snprintf(out + w, n - w, "%c", u);
        if (k < 0 || (size_t)k >= n - w) return -1;
        w += (size_t)k;
    }
    return 0;
}

int run_csv_field(const char *s, char *out, size_t n)
{
    size_t w = 0;
    if (n < 3) return -1;
    out[w++] = '"';
    for (const char *c = s; *c; ++c) {
        if (w + 4 > n) return -1; /* room for a doubled quote, the closing one and the end */
        if (*c == '"') out[w++] = '"';
        out[w++] = *c;
    }
    out[w++] = '"';
    out[w] = '\0';
    return 0;
}

const char *run_number_text(char *buf, size_t n, double v)
{
    for (int prec = 1; prec <= 17; ++prec) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

const char *run_bytes_text(double bytes, char *buf, size_t n)
{
    if (bytes < 1e6) snprintf(buf, n, "%.1f kB", bytes / 1e3);
    else if (bytes < 1e9) snprintf(buf, n, "%.1f MB", bytes / 1e6);
    else snprintf(buf, n, "%.2f GB", bytes / 1e9);
    return buf;
}

double run_memory_bytes(const mesh_t *m, dp_tidx cap)
{
    /* the tile store: the tile arrays (mesh.h) and the fields (float32) */
    return (double)cap * ((double)DP_TILE_META_BYTES + 4.0 * (double)mesh_cells(m) * m->nf);
}

/* A refined file (levels past 0) goes on refining only with the deck that made its levels: its
 * stored deck (/dpamr/deck, `stored`) against d (deck_same_levels), so that a changed threshold is
 * named now rather than found by validation after the whole refinement. A time step's file is left
 * to the step loop (restart_step, src/steps.c: the series' own keys); a stored deck this version
 * cannot parse is not compared (an earlier version's keys). 0, or -1 with err. */
static int same_levels(const deck_t *d, const mesh_t *m, const char *stored, char *err, size_t n)
{
    if (m->nlevels < 2 || !stored) return 0;
    long long k = 0;
    double t = 0.0;
    char why[512], key[160];
    if (h5io_read_step(d->mesh_file, &k, &t, NULL, why, sizeof why) != 0) return 0;
    deck_t was;
    memset(&was, 0, sizeof was);
    if (deck_parse_text(&was, d->mesh_file, stored, why, sizeof why) != 0) return 0;
    const int same = deck_same_levels(d, &was, key, sizeof key);
    deck_free(&was);
    if (same) return 0;
    return snprintf(err, n, "mesh_file = %.1000s holds levels 1 to %d refined with another '%s' (its stored deck, "
                    "/dpamr/deck): the refinement goes on only with the keys that made them; set %s as it was, or "
                    "start from a level-0 mesh (`dpamr mesh`)", d->mesh_file, m->nlevels - 1, key, key), -1;
}

int run_read_mesh(const deck_t *d, mesh_t *m, char *err, size_t n)
{
    struct stat st;
    if (stat(d->mesh_file, &st) != 0 && errno == ENOENT) {
        /* dpamr mesh must see the same overrides (mesh_file= among them) to make this mesh; it takes
           no output= (main.c, mesh_output_override) */
        const char *same = d->noverrides > 0 ? " KEY=VALUE...` (this command's overrides, output= left out)" : "`";
        return d->p.nobj > 0
                   ? snprintf(err, n, "mesh_file = %.1000s does not exist: make it from the deck's model.objects with "
                                      "`dpamr mesh %.1000s%s, or set mesh_file to an existing mesh "
                                      "(" RUN_NUMPY_SCRIPT " writes one from numpy arrays)", d->mesh_file, d->path, same)
                   : snprintf(err, n, "mesh_file = %.1000s does not exist: set mesh_file to an existing mesh "
                                      "(" RUN_NUMPY_SCRIPT " writes one from numpy arrays; with model.objects in the "
                                      "deck, `dpamr mesh %.1000s%s samples one)", d->mesh_file, d->path, same), -1;
    }
    char *stored = NULL;
    if (h5io_read(d->mesh_file, m, &stored, err, n) != 0) return -1;
    int rc = run_mesh_matches_deck(m, d, d->mesh_file, 1, err, n);
    if (rc == 0) rc = same_levels(d, m, stored, err, n);
    free(stored);
    return rc != 0 ? -1 : run_mesh_has_frontier(m, d->mesh_file, err, n);
}

int run_load(deck_t *d, mesh_t *m, int argc, char **argv, char *err, size_t n)
{
    if (deck_load(d, argv[0], argc - 1, argv + 1, err, n) != 0) return -1;
#ifdef _OPENMP
    if (d->threads > 0) omp_set_num_threads(d->threads);
#endif
    return run_read_mesh(d, m, err, n);
}

int run_variant(const deck_t *d, int local, int *device, char *why, size_t whylen, char *err, size_t n)
{
    *device = -1;
    if (whylen) why[0] = '\0';
    if (d->variant == DP_VARIANT_CPU) return DP_VARIANT_CPU;
    const int dev = local >= 0 ? gpu_select(local, why, whylen) : 0;
    if (dev >= 0 && gpu_available(why, whylen)) {
        *device = dev;
        return d->variant == DP_VARIANT_AUTO ? DP_VARIANT_CDP : d->variant;
    }
    if (d->variant == DP_VARIANT_AUTO) return DP_VARIANT_CPU;
    snprintf(err, n, "variant=%s needs a CUDA device: %s (use variant=cpu or variant=auto)",
             deck_variant_name(d->variant), why);
    return -1;
}

void run_say_auto_cpu(const char *why)
{
    printf("variant=auto: no usable GPU (%s); falling back to variant=cpu\n", why);
}

#ifndef DPAMR_COMMIT
#define DPAMR_COMMIT "unknown"
#endif
#ifndef DPAMR_BUILD_TYPE
#define DPAMR_BUILD_TYPE "unknown"
#endif
#ifndef DPAMR_COMPILER
#define DPAMR_COMPILER "unknown"
#endif

static run_info_t g_info;
static int g_info_set;

const run_info_t *run_info(void)
{
    if (g_info_set) return &g_info;
    g_info_set = 1;
    snprintf(g_info.commit, sizeof g_info.commit, "%s", DPAMR_COMMIT);
    snprintf(g_info.build, sizeof g_info.build, "%s", DPAMR_BUILD_TYPE);
    snprintf(g_info.compiler, sizeof g_info.compiler, "%s", DPAMR_COMPILER);
    int rt = 0, drv = 0;
    gpu_versions(&rt, &drv);
    if (rt == 0) snprintf(g_info.cuda, sizeof g_info.cuda, "none (built without CUDA)");
    else if (drv == 0) snprintf(g_info.cuda, sizeof g_info.cuda, "runtime %d.%d, no driver", rt / 1000, rt % 1000 / 10);
    else snprintf(g_info.cuda, sizeof g_info.cuda, "runtime %d.%d, driver %d.%d", rt / 1000, rt % 1000 / 10,
                  drv / 1000, drv % 1000 / 10);
    snprintf(g_info.device, sizeof g_info.device, "cpu");
    if (gethostname(g_info.host, sizeof g_info.host - 1) != 0) snprintf(g_info.host, sizeof g_info.host, "unknown");
    const time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(g_info.date, sizeof g_info.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
#ifdef _OPENMP
    g_info.threads = omp_get_max_threads();
#else
    g_info.threads = 1;
#endif
    return &g_info;
}

void run_info_set(const run_info_t *ri)
{
    g_info = *ri;
    g_info_set = 1;
}

void run_info_device(const char *name)
{
    run_info();
    snprintf(g_info.device, sizeof g_info.device, "%s", name);
}

void run_print_info(FILE *fp)
{
    const run_info_t *ri = run_info();
    fprintf(fp, "build: commit %s, %s, %s; CUDA: %s; device: %s; host %s, %d thread%s, %s\n", ri->commit, ri->build,
            ri->compiler, ri->cuda, ri->device, ri->host, ri->threads, ri->threads == 1 ? "" : "s", ri->date);
}

void run_stats_from_report(run_stats_t *s, const refine_report_t *r, int nlevels)
{
    memset(s, 0, sizeof *s);
    s->refine_ms = r->refine_ms;
    s->upload_ms = r->upload_ms;
    s->download_ms = r->download_ms;
    s->nlevels = nlevels;
    for (int L = 0; L < DP_MAX_LEVELS; ++L) s->level_ms[L] = r->level_ms[L];
    s->device_launches = r->device_launches;
    s->launch_failures = r->launch_failures;
    s->pool_size = r->pool_size;
}

void run_provenance(h5io_meta_t *meta, const deck_t *d, const char *variant, const valid_report_t *v,
                    const run_stats_t *s)
{
    memset(meta, 0, sizeof *meta);
    meta->deck_text = d->text;
    meta->variant = variant;
    meta->version = DPAMR_VERSION;
    meta->pdl = d->pdl;
    meta->device_launches = meta->launch_failures = meta->pool_size = -1;
    meta->valid = v;
    meta->progress = d->progress && !d->quiet && d->verbosity != DP_VERBOSITY_QUIET;
    const run_info_t *ri = run_info();
    meta->commit = ri->commit;
    meta->build = ri->build;
    meta->compiler = ri->compiler;
    meta->cuda = ri->cuda;
    meta->device_name = ri->device;
    meta->host = ri->host;
    meta->date = ri->date;
    meta->threads = ri->threads;
    if (!s) return;
    meta->upload_ms = s->upload_ms;
    meta->download_ms = s->download_ms;
    meta->total_ms = s->total_ms;
    meta->load_ms = s->load_ms;
    meta->refine_ms = s->refine_ms;
    meta->validate_ms = s->validate_ms;
    meta->nlevels_timed = s->nlevels;
    for (int L = 0; L < s->nlevels && L < DP_MAX_LEVELS; ++L) meta->level_ms[L] = s->level_ms[L];
    meta->device_launches = s->device_launches;
    meta->launch_failures = s->launch_failures;
    meta->pool_size = s->pool_size;
}

int run_warn_model(const deck_t *d)
{
    const dp_params *p = &d->p;
    int n = 0;
    for (int o = 0; o < p->nobj; ++o) {
        const dp_object *ob = &p->obj[o];
        /* the object's reach: its semi-axes or half-widths; a gaussian's 3 widths (exp(-9) ~ 1e-4) */
        const double reach = ob->kind == DP_OBJ_GAUSSIAN ? 3.0 : 1.0;
        int axis = -1;
        for (int a = 0; a < p->dim && axis < 0; ++a) {
            const double lo = p->origin[a], hi = lo + (double)d->root[a] * p->B * p->h0;
            if (ob->center[a] + reach * ob->radius[a] < lo || ob->center[a] - reach * ob->radius[a] > hi) axis = a;
        }
        if (axis < 0) continue;
        fflush(stdout);
        const double lo = p->origin[axis], hi = lo + (double)d->root[axis] * p->B * p->h0;
        fprintf(stderr, "dpamr: warning: %s: model object '%s' lies entirely outside the domain (axis %c: centre %g, "
                        "%s %g; the domain spans %g..%g): it adds only its outside value\n",
                d->path, d->object_name[o], "xyz"[axis], ob->center[axis],
                ob->kind == DP_OBJ_GAUSSIAN ? "3 widths" : "radius", reach * ob->radius[axis], lo, hi);
        ++n;
    }
    return n;
}

void run_say_capacity(const refine_report_t *r, int nranks)
{
    if (r->capacity > 0)
        printf("tile store capacity%s %lld: %s\n", nranks > 1 ? " (rank 0)" : "", r->capacity, r->capacity_limit);
}

void run_say_pool(const refine_report_t *r, long long launches, long long failures, int nranks)
{
    if (r->pool_size < 0) return; /* not a cdp run */
    printf("pending-launch pool%s: %lld granted (asked %lld; computed bound %lld); device launches%s: %lld, "
           "failed: %lld\n",
           nranks > 1 ? " (rank 0)" : "", r->pool_size, r->pool_requested, r->pool_bound, nranks > 1 ? ", all ranks" : "",
           launches, failures);
}

void run_valid_request(const deck_t *d, dp_vreq *q)
{
    memset(q, 0, sizeof *q);
    q->validate = d->validate != DP_VALIDATE_CPU;
    q->complete = 1; /* a refinement output: complete to max_level */
}

int run_stream_wanted(const deck_t *d, int variant)
{
    const char *off = getenv("DPAMR_TEST_NO_STREAM");
    return variant != DP_VARIANT_CPU && d->validate != DP_VALIDATE_CPU && !(off && off[0] && strcmp(off, "0") != 0);
}

int run_stream_write(void *ctx, const mesh_t *m, xfer_src_t *src, char *err, size_t errlen)
{
    run_stream_t *rs = ctx;
    if (h5io_out_open(rs->d->output, m, rs->progress, &rs->out, err, errlen) != 0) return -1;
    if (h5io_out_cells(rs->out, m, src, err, errlen) != 0) {
        run_stream_abort(rs);
        return -1;
    }
    return 0;
}

int run_stream_need_cells(void *ctx, const mesh_t *m)
{
    const run_stream_t *rs = ctx;
    const valid_opts_t vo = { .complete = 1, .roots = -1, .gstart = NULL };
    return !valid_device_suffices(m, &rs->d->p, &vo, rs->vd);
}

void run_stream_abort(run_stream_t *rs)
{
    h5io_out_abort(rs->out);
    rs->out = NULL;
}

double run_validate_ms(const dp_vdev *g, double host_ms) { return g && g->ran ? g->wall_ms + host_ms : host_ms; }

void run_say_valid(const deck_t *d, int variant, const dp_vdev *g, int by_cpu, double host_ms, const char *prefix)
{
    if (variant == DP_VARIANT_CPU) return; /* the cpu variant validates on the CPU: nothing to say */
    if (d->validate == DP_VALIDATE_CPU) {
        printf("%svalidate=cpu: validated on the CPU after the download in %.3f ms\n", prefix, host_ms);
    } else if (!g || !g->ran) {
        printf("%svalidate=%s: %s (%.3f ms)\n", prefix, d->validate == DP_VALIDATE_GPU ? "gpu" : "auto",
               g && g->note[0] ? g->note : "validated on the CPU", host_ms);
    } else if (!by_cpu) {
        printf("%svalidated on the GPU: passed; kernels %.3f ms (CUDA events), results on the host %.3f ms after the "
               "launch (overlapping the download), report assembled in %.3f ms\n",
               prefix, g->kernel_ms, g->wall_ms, host_ms);
    } else {
        printf("%svalidated on the GPU: %lld failed checks%s (kernels %.3f ms, CUDA events); the report is the CPU "
               "validator's (%.3f ms)\n",
               prefix, g->nfail, g->dup ? ", a duplicate child" : g->unsorted ? ", tiles out of level order" : "",
               g->kernel_ms, host_ms);
    }
}

void run_warn_depth(const deck_t *d, int nlevels)
{
    const dp_params *p = &d->p;
    if (nlevels - 1 >= p->max_level) return;
    fflush(stdout); /* after the lines before it, in a log of both */
    fprintf(stderr, "dpamr: warning: refinement stopped at level %d, below max_level %d: no cell of level %d is "
                    "flagged (criterion %s, threshold %g on field %s)%s\n",
            nlevels - 1, p->max_level, nlevels - 1, p->crit == DP_CRIT_JUMP ? "jump" : "gradient", p->threshold,
            d->field_name[p->crit_field],
            p->fill == DP_FILL_PROLONG && p->crit == DP_CRIT_JUMP
                ? "; with fill=prolong a jump is spread over more cells at every level, so a lower threshold, "
                  "criterion=gradient or fill=model refines deeper"
                : "; a lower threshold refines deeper");
}
