/* main.c - the dpamr driver (app layer): the subcommands. deck -> mesh file -> refinement engine ->
 * validation -> file; the pipeline's pieces are in run.c, shared with the MPI run (dist.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../device/gpu.h"
#include "../io/h5io.h"
#include "../validation/valid.h"
#include "bench.h"
#include "dist.h"
#include "deck.h"
#include "engine.h"
#include "mesh.h"
#include "run.h"
#include "timer.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "dpamr %s - adaptive mesh refinement with CUDA dynamic parallelism, a host-restructured\n"
            "GPU variant and a CPU reference that all build the same mesh bit for bit.\n\n"
            "usage:\n"
            "  dpamr run   DECK [key=value ...]  refine the deck's mesh_file, validate, write `output`\n"
            "  dpamr mesh  DECK [key=value ...]  sample level 0 from the deck's model into mesh_file\n"
            "  dpamr check FILE                  re-validate a file written by dpamr\n"
            "  dpamr bench DECK [key=value ...]  check that the variants agree, then time them\n"
            "  dpamr gpu                         say whether a usable CUDA device is present (exit 0/1)\n"
            "  dpamr --help | --version\n\n"
            "Deck keys: docs/decks.md; file layout: docs/format.md.\n",
            DPAMR_VERSION);
}

#ifndef DPAMR_MPI
static int cmd_run(int argc, char **argv)
{
    char err[ERRLEN];
    deck_t d;
    mesh_t m;
    memset(&m, 0, sizeof m);
    const double t0 = timer_ms();
    if (run_load(&d, &m, argc, argv, err, sizeof err) != 0) return run_die(err);
    if (run_refuse_overwrite("output", d.output, &d, 1, err, sizeof err) != 0) return run_die(err);
    const double load_ms = timer_ms() - t0;
    int device = -1;
    char why[512];
    const int variant = run_variant(&d, -1, &device, why, sizeof why, err, sizeof err);
    if (variant < 0) return run_die(err);
    if (d.variant == DP_VARIANT_AUTO && variant == DP_VARIANT_CPU)
        printf("variant=auto: no usable GPU (%s); falling back to variant=cpu\n", why);
    if (d.trace[0] && variant == DP_VARIANT_CPU)
        printf("trace=%s: not written, the cpu variant has no device timeline\n", d.trace);

    char label[128];
    printf("dpamr run %s: variant=%s, %dD, tile %d^%d, %lld tiles on levels 0..%d, max_level %d\n", d.path,
           deck_engine_label(&d, variant, label, sizeof label), d.p.dim, d.p.B, d.p.dim, (long long)m.ntiles,
           m.nlevels - 1, d.p.max_level);
    refine_report_t r;
    if (engine_refine(variant, &d, &m, &r, err, sizeof err) != 0) return run_die(err);
    if (r.note[0]) printf("%s\n", r.note);
    if (r.pool_size >= 0)
        printf("pending-launch pool: %lld granted (asked %lld; computed bound %lld); device launches: %lld, "
               "failed: %lld\n",
               r.pool_size, r.pool_requested, r.pool_bound,
               r.device_launches, r.launch_failures);
    printf("refined in %.3f ms (engine total %.3f ms): %lld tiles on %d levels\n", r.refine_ms, r.total_ms,
           (long long)m.ntiles, m.nlevels);

    const double tv = timer_ms();
    valid_report_t v;
    valid_check_mode(&m, &d.p, 1, &v); /* a refinement output: complete to max_level */
    const double validate_ms = timer_ms() - tv;
    valid_print(&v, &m);
    if (!v.passed) {
        fprintf(stderr, "dpamr: error: validation failed; %s not written\n", d.output);
        return 2;
    }
    run_stats_t st;
    run_stats_from_report(&st, &r, m.nlevels);
    st.load_ms = load_ms;
    st.validate_ms = validate_ms;
    h5io_meta_t meta;
    run_provenance(&meta, &d, deck_variant_name(variant), &v, &st);
    /* the rank table of a run without MPI: one row (write_ms: nothing was written before it) */
    const h5io_rank_t row = { .rank = 0, .device = device,
                              .root_tiles = m.level_start[1], .tiles = m.ntiles,
                              .cells = (int64_t)m.ntiles * mesh_cells(&m), .refine_ms = r.refine_ms, .write_ms = 0.0 };
    meta.nranks = 1;
    meta.ranks = &row;
    if (h5io_write(d.output, &m, &meta, err, sizeof err) != 0) return run_die(err);
    printf("wrote %s\n", d.output);
    mesh_free(&m);
    deck_free(&d);
    return 0;
}

#endif

static int cmd_mesh(int argc, char **argv)
{
    char err[ERRLEN];
    deck_t d;
    mesh_t m;
    if (deck_load(&d, argv[0], argc - 1, argv + 1, err, sizeof err) != 0) return run_die(err);
    if (run_refuse_overwrite("mesh_file", d.mesh_file, &d, 0, err, sizeof err) != 0) return run_die(err);
    /* the estimate first: the tiles, and the writer's AMRBox and ghost buffers for them */
    const double ntiles = (double)d.root[0] * d.root[1] * d.root[2], cells = (double)dp_cells(d.p.dim, d.p.B);
    const double bytes = mesh_bytes(ntiles, d.p.dim, d.p.B, d.p.nf) + ntiles * (24.0 + cells);
    char why[256];
    printf("dpamr mesh %s: level 0 of %.0f tiles x %.0f cells x %d field(s) needs about %.3g GB of memory\n", d.path,
           ntiles, cells, d.p.nf, bytes / 1e9);
    if (mesh_fits_memory(bytes, why, sizeof why) != 0) {
        snprintf(err, sizeof err, "%.1000s: root %d %d %d: level 0 does not fit in memory: %s", d.path, d.root[0],
                 d.root[1], d.root[2], why);
        return run_die(err);
    }
    if (engine_make_level0(&d, &m, err, sizeof err) != 0) return run_die(err);
    valid_report_t v;
    valid_check_mode(&m, &d.p, 0, &v); /* level 0: not refined yet */
    if (!v.passed) {
        fprintf(stderr, "dpamr: error: level-0 mesh failed validation: %s\n", v.first_failure);
        return 2;
    }
    h5io_meta_t meta;
    run_provenance(&meta, &d, "mesh", &v, NULL);
    if (h5io_write(d.mesh_file, &m, &meta, err, sizeof err) != 0) return run_die(err);
    printf("wrote %s: %lld root tiles of %d^%d cells, %d field(s)\n", d.mesh_file, (long long)m.ntiles, d.p.B,
           d.p.dim, d.p.nf);
    mesh_free(&m);
    deck_free(&d);
    return 0;
}

/** The stored deck must be exactly what dpamr wrote: the effective deck it renders from the keys
 *  (any other byte, a comment or a space, was changed after the file was written). 0, or -1 with
 *  the first line that differs in err. */
static int check_deck_text(const char *file, const char *stored, const char *rendered, char *err, size_t n)
{
    if (strcmp(stored, rendered) == 0) return 0;
    int line = 1;
    const char *a = stored, *b = rendered;
    for (; *a && *a == *b; ++a, ++b)
        if (*a == '\n') ++line;
    const char *la = a, *lb = b;
    while (la > stored && la[-1] != '\n') --la, --lb;
    const int ka = (int)strcspn(la, "\n"), kb = (int)strcspn(lb, "\n");
    const int ends = ka == kb && strncmp(la, lb, (size_t)ka) == 0; /* the same text: its line end differs */
    snprintf(err, n, "%s:/dpamr/deck:%d: '%.*s'%s is not what dpamr wrote ('%.*s'%s): the stored deck changed after the "
             "file was written", file, line, ka > 200 ? 200 : ka, la, ends ? (la[ka] ? " + newline" : " (no newline)") : "",
             kb > 200 ? 200 : kb, lb, ends ? (lb[kb] ? " + newline" : " (no newline)") : "");
    return -1;
}

/** Exit status 2 after the message of a failed check. */
static int check_failed(const char *msg)
{
    run_die(msg);
    return 2;
}

static int cmd_check(const char *file)
{
    char err[ERRLEN];
    mesh_t m;
    char *text = NULL;
    const int rd = h5io_read(file, &m, &text, err, sizeof err);
    if (rd != 0) return rd == H5IO_BAD_CONTENT ? check_failed(err) : run_die(err);
    if (!text) {
        mesh_free(&m);
        snprintf(err, sizeof err, "%s: no /dpamr/deck in the file: cannot tell the criterion to check against", file);
        return check_failed(err);
    }
    deck_t d;
    char origin[4200];
    snprintf(origin, sizeof origin, "%s:/dpamr/deck", file);
    int rc = deck_parse_text(&d, origin, text, err, sizeof err) != 0 ? 2 : 0;
    if (rc == 0 && (check_deck_text(file, text, d.text, err, sizeof err) != 0 ||
                    run_mesh_matches_deck(&m, &d, file, err, sizeof err) != 0))
        rc = 2;
    free(text);
    if (rc != 0) {
        mesh_free(&m);
        if (d.text) deck_free(&d);
        return check_failed(err);
    }
    valid_report_t v;
    valid_check(&m, &d.p, &v);
    printf("%s: %lld tiles on %d levels\n", file, (long long)m.ntiles, m.nlevels);
    valid_print(&v, &m);
    /* every value recorded when the file was written must still hold, and /VTKHDF must show the
     * same tiles and values as /dpamr: any changed bit shows */
    if (v.passed && h5io_verify(file, &m, &v, err, sizeof err) != 0) rc = check_failed(err);
    else if (!v.passed) rc = 2;
    else printf("checksums: match the ones recorded when the file was written; /VTKHDF matches /dpamr\n");
    mesh_free(&m);
    deck_free(&d);
    return rc;
}

static int driver_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
#ifdef DPAMR_MPI
        const char *mpi = "yes";
#else
        const char *mpi = "no";
#endif
        printf("dpamr %s (MPI: %s, parallel HDF5: %s)\n", DPAMR_VERSION, mpi, h5io_parallel() ? "yes" : "no");
        return 0;
    }
    if (!strcmp(cmd, "gpu")) {
        char why[512];
        const int ok = gpu_available(why, sizeof why);
        printf("%s: %s\n", ok ? "GPU" : "no GPU", why);
        return ok ? 0 : 1;
    }
    const int known = !strcmp(cmd, "run") || !strcmp(cmd, "mesh") || !strcmp(cmd, "check") || !strcmp(cmd, "bench");
    if (!known) {
        fprintf(stderr, "dpamr: error: unknown subcommand '%s' (valid: run, mesh, check, bench, gpu)\n", cmd);
        return 1;
    }
    if (argc < 3) {
        fprintf(stderr, "dpamr: error: '%s' needs a %s argument\n", cmd, strcmp(cmd, "check") ? "DECK" : "FILE");
        return 1;
    }
#ifdef DPAMR_MPI
    if (!strcmp(cmd, "run")) return dist_run(argc - 2, argv + 2);
#else
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
#endif
    if (!strcmp(cmd, "mesh")) return cmd_mesh(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench")) return bench_main(argc - 2, argv + 2);
    if (argc > 3) {
        fprintf(stderr, "dpamr: error: 'check' takes one FILE (got %d arguments)\n", argc - 2);
        return 1;
    }
    return cmd_check(argv[2]);
}

#ifdef DPAMR_MPI
#include <mpi.h>

/* Built with MPI: `run` is distributed (one rank included); the other subcommands run on one rank. */
int main(int argc, char **argv)
{
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc;
    const int distributed = argc >= 2 && !strcmp(argv[1], "run");
    if (distributed || size == 1) {
        rc = driver_main(argc, argv);
    } else {
        if (rank == 0)
            fprintf(stderr, "dpamr: error: '%s' runs on one rank, not %d: only 'dpamr run' is distributed "
                            "(start it without mpirun, or with -np 1)\n", argv[1] ? argv[1] : "", size);
        rc = 1;
    }
    MPI_Finalize();
    return rc;
}
#else
int main(int argc, char **argv) { return driver_main(argc, argv); }
#endif
