/* build.c - the single build of `dpamr run` (build.h): one pipeline, the serial hooks here, the MPI
 * hooks in src/dist.c. */
#include "src/build.h"

#include <stdio.h>
#include <string.h>

#include "device/gpu.h"
#include "src/capacity.h"
#include "src/engine.h"
#include "src/partition.h"
#include "src/run.h"
#include "src/timer.h"

/* An error on every process: the root says it. The exit status. */
static int fail(const build_ops_t *o, const char *err) { return o->root ? run_die(err) : 1; }

int build_run(deck_t *d, mesh_t *m, const build_in_t *in, const build_ops_t *o)
{
    char err[ERRLEN] = "";
    const double t0 = in->t0;
    const int variant = in->variant, device = in->device;
    /* mpi: an MPI run, of one rank too, says which rank's figures a line gives */
    const int say = d->verbosity != DP_VERBOSITY_QUIET, root = o->root, mpi = o->nranks > 0;
    const int nranks = mpi ? o->nranks : 1;
    d->quiet |= !say; /* quiet: warnings, errors and "wrote" only */
    const double load_ms = timer_ms() - t0 - in->setup_ms;
    long long in_levels = m->nlevels;
    o->reduce(o->ctx, &in_levels, 1, 1);

    /* the estimates and the output's room before any refinement: at least the loaded levels. The
     * capacity each process's host memory allows (each holds its part's result), summed. */
    long long sums[2] = { m->ntiles, m->ntiles }; /* the input's tiles; the capacity */
    if (part_has_frontier(m, (int)in_levels)) {
        cap_host_ctx_t hc;
        cap_memory_t host;
        cap_t hcap;
        cap_host_memory(m, d->share_host > 0 ? d->share_host : 1, 0.0, &hc, &host);
        cap_compute(d->max_tiles, &d->p, m, -1, &host, 1, &hcap);
        if (hcap.cap > m->ntiles) sums[1] = hcap.cap;
    }
    o->reduce(o->ctx, sums, 2, 0);
    const long long in_tiles = sums[0], cap = sums[1];
    const double file_lo = h5io_raw_bytes(m, in_tiles), file_hi = h5io_raw_bytes(m, cap);
    const int room = !root || run_check_output("output", d->output, file_lo, err, sizeof err) == 0;
    if (o->agree(o->ctx, room, err, sizeof err) != 0) return fail(o, err);
    if (root) run_note_stale_tmp(d->output);

    if (device >= 0) run_info_device(in->why);
    if (root && d->p.fill == DP_FILL_MODEL) run_warn_model(d); /* stderr, before the lines of the run */
    if (root && say) {
        char label[128], ranks[32] = "", lo[32], hi[32], mem[32];
        if (mpi) snprintf(ranks, sizeof ranks, "%d rank%s, ", nranks, nranks > 1 ? "s" : "");
        if (d->trace[0] && variant == DP_VARIANT_CPU)
            printf("trace=%s: not written, the cpu variant has no device timeline\n", d->trace);
        printf("dpamr run %s: %svariant=%s, %dD, tile %d^%d, %lld tiles on levels 0..%lld, max_level %d\n", d->path,
               ranks, deck_engine_label(d, variant, label, sizeof label), d->p.dim, d->p.B, d->p.dim, in_tiles,
               in_levels - 1, d->p.max_level);
        printf("reads %s, writes %s (estimated %s to %s; memory up to %s for %lld tiles%s)\n", d->mesh_file, d->output,
               run_bytes_text(file_lo, lo, sizeof lo), run_bytes_text(file_hi, hi, sizeof hi),
               run_bytes_text(run_memory_bytes(m, cap), mem, sizeof mem), cap, mpi ? ", all ranks" : "");
        if (in->replacing) run_say_replacing(d, "output", d->output);
        if (d->verbosity == DP_VERBOSITY_VERBOSE) run_print_info(stdout);
        if (o->say_parts) o->say_parts(o->ctx);
        fflush(stdout);
    }

    /* refine: the device validates what it built where asked (dp_vreq), and a GPU run may stream
     * its cells into the file while they come down */
    refine_report_t r;
    memset(&r, 0, sizeof r);
    r.device_launches = r.launch_failures = r.pool_size = -1;
    for (int L = 0; L < DP_MAX_LEVELS; ++L) r.level_ms[L] = -1.0; /* as engine_refine sets them */
    dp_vreq vq;
    dp_vdev vd;
    memset(&vd, 0, sizeof vd);
    run_valid_request(d, &vq);
    int streamed = 0;
    const int refined = o->refine(o->ctx, variant, d, m, (int)in_levels, &r, &vq, &vd, &streamed, err, sizeof err) == 0;
    if (o->agree(o->ctx, refined, err, sizeof err) != 0) {
        if (o->discard) o->discard(o->ctx);
        dp_vdev_free(&vd);
        return fail(o, err);
    }
    long long ntiles = 0;
    int nlevels = 0;
    o->count(o->ctx, m, &ntiles, &nlevels);
    /* device-side launches and their failures summed over the processes (cdp; launches -1 where none
     * launched from the device, failures 0: format.md); the pool is each process's own (the root's is
     * said); the slowest refinement */
    long long launches[3] = { r.device_launches > 0 ? r.device_launches : 0, r.launch_failures > 0 ? r.launch_failures : 0,
                              r.device_launches >= 0 };
    o->reduce(o->ctx, launches, 3, 0);
    if (launches[2] == 0) launches[0] = -1;
    double refine_ms = r.refine_ms;
    o->reduce_max(o->ctx, &refine_ms, 1);
    if (root && say) {
        if (r.note[0]) printf("%s%s\n", mpi ? "rank 0: " : "", r.note);
        run_say_capacity(&r, nranks);
        run_say_pool(&r, launches[0], launches[1], nranks);
        if (mpi) printf("refined in %.3f ms (slowest rank): %lld tiles on %d levels\n", refine_ms, ntiles, nlevels);
        else printf("refined in %.3f ms (engine total %.3f ms): %lld tiles on %d levels\n", refine_ms, r.total_ms, ntiles,
                    nlevels);
    }
    if (root) run_warn_depth(d, nlevels);

    /* validation: a refinement output is complete to max_level; from the device's passes where they
     * ran and passed, else on the CPU */
    const double tv = timer_ms();
    valid_report_t v;
    int by_cpu = 1;
    const int vrc = o->validate(o->ctx, d, m, &vd, &v, &by_cpu, err, sizeof err);
    const double host_ms = timer_ms() - tv, validate_ms = run_validate_ms(&vd, host_ms);
    if (vrc == 0 && root && (say || !v.passed)) run_say_valid(d, variant, &vd, by_cpu, host_ms, mpi ? "rank 0: " : "");
    dp_vdev_free(&vd);
    if (vrc != 0) {
        if (o->discard) o->discard(o->ctx);
        return fail(o, err);
    }
    if (root && (say || !v.passed)) valid_print(&v, m); /* m's header only */
    if (!v.passed) {
        if (o->discard) o->discard(o->ctx); /* the cells written so far go with the temporary file */
        if (root) fprintf(stderr, "dpamr: error: validation failed; %s not written\n", d->output);
        return 2;
    }

    /* provenance, the same on every process (a collective write stores one copy): the root's variant,
     * load, validation and transfer times, pool, build and machine; the slowest refinement and level
     * times; the launches summed */
    run_stats_t st;
    run_stats_from_report(&st, &r, nlevels);
    o->reduce_max(o->ctx, st.level_ms, DP_MAX_LEVELS);
    double times[5] = { load_ms, validate_ms, r.upload_ms, r.download_ms, timer_ms() - t0 };
    int variant0 = variant;
    o->bcast(o->ctx, times, sizeof times);
    o->bcast(o->ctx, &variant0, sizeof variant0);
    o->bcast(o->ctx, &st.pool_size, sizeof st.pool_size);
    run_info_t ri = *run_info(); /* host, date and device differ among ranks */
    o->bcast(o->ctx, &ri, sizeof ri);
    run_info_set(&ri);
    st.load_ms = times[0];
    st.validate_ms = times[1];
    st.upload_ms = times[2];
    st.download_ms = times[3];
    st.total_ms = times[4];
    st.refine_ms = refine_ms;
    st.device_launches = launches[0];
    st.launch_failures = launches[1];
    h5io_meta_t meta;
    run_provenance(&meta, d, deck_variant_name(variant0), &v, &st);
    h5io_rank_t row = { .rank = 0, .device = device, .root_tiles = m->level_start[1], .tiles = m->ntiles,
                        .cells = (int64_t)m->ntiles * mesh_cells(m), .refine_ms = r.refine_ms, .write_ms = 0.0 };
    double write_ms = 0.0;
    char how[96] = "";
    if (o->write(o->ctx, d, m, &meta, &row, &write_ms, how, sizeof how, err, sizeof err) != 0) return fail(o, err);
    if (root) printf("wrote %s%s\n", d->output, how);
    if (root && say && o->say_ranks) o->say_ranks(o->ctx, ntiles);
    if (root && say) {
        char up[32] = "-", down[48] = "-";
        if (variant0 != DP_VARIANT_CPU) { /* the root's transfers */
            snprintf(up, sizeof up, "%.3f ms", r.upload_ms);
            snprintf(down, sizeof down, streamed ? "%.3f ms (the cells streamed into the file)" : "%.3f ms",
                     r.download_ms);
        }
        printf("phases: load %.3f ms, upload %s, refine %.3f ms, download %s, validate %.3f ms%s, write %.3f ms, "
               "total %.3f ms\n", load_ms, up, refine_ms, down, validate_ms,
               by_cpu ? "" : mpi ? " (rank 0 on the GPU)" : " (on the GPU)", write_ms, timer_ms() - t0);
    }
    return 0;
}

/* ---- one process ------------------------------------------------------------------------------ */

/* The serial hooks' context: the streamed write of a GPU run (run_stream_t, src/run.h). */
typedef struct {
    run_stream_t rs;
    gpu_stream_t gs;
} serial_t;

static int serial_agree(void *ctx, int ok, char *err, size_t n)
{
    (void)ctx, (void)err, (void)n;
    return ok ? 0 : -1;
}

static void serial_reduce(void *ctx, long long *v, int n, int max) { (void)ctx, (void)v, (void)n, (void)max; }

static void serial_reduce_max(void *ctx, double *v, int n) { (void)ctx, (void)v, (void)n; }

static void serial_bcast(void *ctx, void *buf, size_t bytes) { (void)ctx, (void)buf, (void)bytes; }

static int serial_refine(void *ctx, int variant, const deck_t *d, mesh_t *m, int in_levels, refine_report_t *r,
                         const dp_vreq *vq, dp_vdev *vd, int *streamed, char *err, size_t n)
{
    (void)in_levels; /* the whole mesh: its frontier is there (run_read_mesh) */
    serial_t *s = ctx;
    /* a GPU variant validated on the GPU streams its cells into the file while they come down
     * (gpu_stream_t): the file is finished by serial_write once the validation passed, or removed */
    s->rs = (run_stream_t){ .d = d, .vd = vd, .progress = d->progress && d->verbosity != DP_VERBOSITY_QUIET, .out = NULL };
    s->gs = (gpu_stream_t){ .ctx = &s->rs, .write = run_stream_write, .need_cells = run_stream_need_cells, .used = 0 };
    if (run_stream_wanted(d, variant)) gpu_stream_set(&s->gs);
    const int rc = engine_refine_valid(variant, d, m, r, vq, vd, err, n);
    gpu_stream_set(NULL);
    *streamed = s->gs.used;
    return rc;
}

static void serial_discard(void *ctx) { run_stream_abort(&((serial_t *)ctx)->rs); }

static void serial_count(void *ctx, const mesh_t *m, long long *ntiles, int *nlevels)
{
    (void)ctx;
    *ntiles = m->ntiles;
    *nlevels = m->nlevels;
}

static int serial_validate(void *ctx, const deck_t *d, const mesh_t *m, const dp_vdev *vd, valid_report_t *v,
                           int *by_cpu, char *err, size_t n)
{
    (void)ctx, (void)err, (void)n;
    valid_parts_t parts;
    const valid_opts_t vo = { .complete = 1, .roots = -1, .gstart = NULL,
                              .progress = d->progress && d->verbosity != DP_VERBOSITY_QUIET };
    valid_check_device(m, &d->p, &vo, vd, v, &parts, by_cpu);
    valid_fold(&parts, &d->p, v);
    valid_parts_free(&parts);
    return 0;
}

static int serial_write(void *ctx, const deck_t *d, mesh_t *m, h5io_meta_t *meta, h5io_rank_t *row, double *write_ms,
                        char *how, size_t hn, char *err, size_t n)
{
    serial_t *s = ctx;
    (void)hn;
    how[0] = '\0';
    meta->nranks = 1; /* the rank table of a run without MPI: one row (nothing was written before it) */
    meta->ranks = row;
    const double tw = timer_ms();
    int rc;
    if (s->rs.out) { /* streamed: the cells are in the file; /dpamr, close, rename */
        h5io_out_t *out = s->rs.out;
        s->rs.out = NULL;
        rc = h5io_out_finish(out, m, meta, err, n);
    } else {
        rc = h5io_write(d->output, m, meta, err, n);
    }
    *write_ms = timer_ms() - tw;
    return rc;
}

int build_serial(deck_t *d, mesh_t *m, double t0)
{
    char err[ERRLEN], why[512];
    int rc = 1, device = -1, replacing = 0;
    /* the output's name, owner and folder before the device (its room: build_run, once the sizes are known) */
    if (run_output_name(d, err, sizeof err) != 0 ||
        (replacing = run_refuse_overwrite("output", d->output, d, 1, err, sizeof err)) < 0 ||
        run_check_output("output", d->output, 0.0, err, sizeof err) != 0) {
        mesh_free(m);
        return run_die(err);
    }
    const double tv = timer_ms();
    const int variant = run_variant(d, -1, &device, why, sizeof why, err, sizeof err);
    const double setup_ms = timer_ms() - tv;
    if (variant < 0) {
        mesh_free(m);
        return run_die(err);
    }
    if (d->verbosity != DP_VERBOSITY_QUIET && d->variant == DP_VARIANT_AUTO && variant == DP_VARIANT_CPU)
        run_say_auto_cpu(why);
    serial_t s;
    memset(&s, 0, sizeof s);
    const build_ops_t o = { .ctx = &s, .root = 1, .nranks = 0, .agree = serial_agree, .reduce = serial_reduce,
                            .reduce_max = serial_reduce_max, .bcast = serial_bcast, .say_parts = NULL,
                            .refine = serial_refine, .discard = serial_discard, .count = serial_count,
                            .validate = serial_validate, .write = serial_write, .say_ranks = NULL };
    const build_in_t in = { .t0 = t0, .setup_ms = setup_ms, .variant = variant, .device = device, .why = why,
                            .replacing = replacing };
    rc = build_run(d, m, &in, &o);
    mesh_free(m);
    return rc;
}
