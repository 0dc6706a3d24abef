/* main.c - the dpamr driver (app layer): the subcommands. `dpamr run` is the single build
 * (src/build.c) or the time steps (src/steps.c), each one pipeline for one process and the ranks of
 * an MPI run (src/dist.c); their shared pieces are in src/run.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/gpu.h"
#include "io/h5io.h"
#include "validation/valid.h"
#include "src/bench.h"
#include "src/build.h"
#include "src/dist.h"
#include "src/deck.h"
#include "src/engine.h"
#include "src/mesh.h"
#include "src/tmpfile.h"
#include "src/run.h"
#include "src/steps.h"
#include "src/capacity.h"
#include "src/check.h"
#include "src/timer.h"

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
            "  dpamr help KEY | keys             a deck key's type, default and valid values | every key\n"
            "  dpamr SUBCOMMAND --help | dpamr --help | --version | --man\n\n"
            "Deck keys: docs/decks.md; file layout: docs/format.md (installed: share/doc/dpamr/docs/; the\n"
            "scripts tools/*.py and validation/*.py in share/dpamr/, the shipped decks in share/dpamr/inputs/).\n",
            DPAMR_VERSION);
}

/* The subcommands' own help: `dpamr SUBCOMMAND --help` (or -h), `dpamr help SUBCOMMAND`. */
static const struct {
    const char *name, *text;
} k_sub_help[] = {
    { "run", "usage: dpamr run DECK [key=value ...]\n"
             "  Load the deck's mesh_file, refine it with `variant` up to max_level, validate the result and write\n"
             "  `output` (VTKHDF OverlappingAMR plus dpamr's /dpamr group).\n"
             "  Paths set in the deck are relative to the deck's folder; paths given as key=value on the command\n"
             "  line are relative to the current directory. The header prints the resolved paths, the estimated\n"
             "  file size and memory. An existing run output written by dpamr is replaced (and the run says so;\n"
             "  overwrite=never refuses); any other existing file (a `dpamr mesh` mesh too) is never written over.\n"
             "  A missing mesh_file: make it with `dpamr mesh DECK`.\n"
             "  With steps > 0 (every variant): then regrid step by step as the model objects move, validate and write\n"
             "  a file every output_every steps (output = a pattern such as run_%05d.hdf) and the series\n"
             "  NAME.hdf.series for ParaView; mesh_file = a step's file continues its series (docs/decks.md).\n"
             "  Exit 0; 1 on bad input or a failed run; 2 when validation fails (nothing is written then).\n"
             "  Keys: `dpamr help KEY`, docs/decks.md.\n" },
    { "mesh", "usage: dpamr mesh DECK [key=value ...]\n"
              "  Sample level 0 from the deck's model.objects and write it to mesh_file (default: the deck's name\n"
              "  with .mesh.hdf, beside the deck). A mesh_file dpamr did not write (e.g. one from\n"
              "  mesh_from_numpy.py) is never written over, nor a `dpamr run` output; an earlier `dpamr mesh`\n"
              "  output is replaced and the command says so (overwrite=never refuses). It writes no output: output=\n"
              "  on its command line is refused (give mesh_file=).\n" },
    { "check", "usage: dpamr check FILE\n"
               "  Re-validate a file written by dpamr with the deck stored in it and compare its checksums with the\n"
               "  ones recorded when it was written. Exit 0 when it passes; 1 when dpamr cannot open the file\n"
               "  (missing, not a regular file, not HDF5, the HDF5 1.6 format, truncated, a damaged superblock or\n"
               "  root group), it holds neither /dpamr/deck nor /dpamr/provenance (not written by dpamr), a\n"
               "  dataset is stored with an HDF5 filter this HDF5 lacks (it cannot be read here), or the file\n"
               "  changed while it was being checked (check it again); 2 with the first failure of any other file\n"
               "  (a dpamr file changed or damaged, even with one of those two deleted).\n" },
    { "bench", "usage: dpamr bench DECK [key=value ...]\n"
               "  Build the mesh once with every variant and require identical bytes, then time bench_warmup\n"
               "  untimed and bench_repeats timed runs of each (cpu, hostlaunch, cdp at every grain, pdl off and on).\n"
               "  Writes BENCH_OUT.csv and BENCH_OUT.json (bench_out, default `bench`). Exit 3 on a mismatch.\n"
               "  With steps > 0: every variant's regrid time per step (and per level) and the fraction of tiles\n"
               "  changed.\n" },
    { "gpu", "usage: dpamr gpu\n"
             "  Say whether a usable CUDA device is present (exit 0) or why not (exit 1).\n" },
    { "help", "usage: dpamr help [KEY | SUBCOMMAND]\n"
              "  A deck key's type, default, valid values and meaning (model.NAME.type and model.disc.type alike),\n"
              "  or a subcommand's help. Without an argument: the overview. `dpamr --man` prints the man page.\n" },
};

static const char *sub_help(const char *name)
{
    for (size_t i = 0; i < sizeof k_sub_help / sizeof k_sub_help[0]; ++i)
        if (!strcmp(k_sub_help[i].name, name)) return k_sub_help[i].text;
    return NULL;
}

static int is_help_flag(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/** `dpamr help KEY|SUBCOMMAND|keys`. */
static int cmd_help(const char *what)
{
    if (!strcmp(what, "keys")) { /* every key, one line each: name, type, default, meaning */
        for (int i = 0; i < deck_key_count(); ++i) {
            const deck_key_t *k = deck_key_at(i);
            printf("%-22s %-16s %-12s %s\n", k->key, k->type, k->def, k->meaning);
        }
        printf("(`dpamr help KEY`: a key's valid values; docs/decks.md)\n");
        return 0;
    }
    const char *text = sub_help(what);
    if (text) return fputs(text, stdout), 0;
    const deck_key_t *k = deck_key_find(what);
    if (k) return deck_key_help(stdout, k), 0;
    char near[160];
    static const char *const subs[] = { "run", "mesh", "check", "bench", "gpu", "help" };
    const int si = deck_nearest(what, subs, 6);
    if (deck_key_suggest(what, near, sizeof near) || si >= 0) {
        fprintf(stderr, "dpamr: error: help: '%s' is neither a deck key nor a subcommand; did you mean '%s'?\n", what,
                si >= 0 ? subs[si] : near);
        return 1;
    }
    fprintf(stderr, "dpamr: error: help: '%s' is neither a deck key nor a subcommand (keys:", what);
    for (int i = 0; i < deck_key_count(); ++i) fprintf(stderr, "%s %s", i ? "," : "", deck_key_at(i)->key);
    fprintf(stderr, "; subcommands: run, mesh, check, bench, gpu, help)\n");
    return 1;
}

/** Roff text: backslashes and leading dots/quotes escaped. */
static void man_text(const char *s)
{
    if (*s == '.' || *s == '\'') fputs("\\&", stdout);
    for (; *s; ++s) {
        if (*s == '\\') fputs("\\e", stdout);
        else if (*s == '-') fputs("\\-", stdout);
        else putchar(*s);
    }
}

/** `dpamr --man`: the man page, its KEYS section from the deck key table. */
static int cmd_man(void)
{
    printf(".TH DPAMR 1 \"\" \"dpamr %s\" \"User Commands\"\n.SH NAME\ndpamr \\- adaptive mesh refinement with CUDA "
           "dynamic parallelism, a host-launched GPU variant and a CPU reference\n.SH SYNOPSIS\n", DPAMR_VERSION);
    for (size_t i = 0; i < sizeof k_sub_help / sizeof k_sub_help[0]; ++i) {
        const char *t = k_sub_help[i].text + strlen("usage: ");
        printf(".B %.*s\n.br\n", (int)(strchr(t, '\n') - t), t);
    }
    printf(".SH SUBCOMMANDS\n");
    for (size_t i = 0; i < sizeof k_sub_help / sizeof k_sub_help[0]; ++i) {
        const char *t = strchr(k_sub_help[i].text, '\n') + 1;
        while (*t == ' ') ++t;
        printf(".TP\n.B %s\n", k_sub_help[i].name);
        for (; *t; ++t) { /* the lines joined: roff fills the paragraph */
            if (*t == '\n') {
                putchar(' ');
                while (t[1] == ' ') ++t;
            } else {
                putchar(*t);
            }
        }
        putchar('\n');
    }
    printf(".SH DECK KEYS\nA deck is key = value lines; # starts a comment; lists are whitespace-separated. "
           "key=value arguments after the deck override it.\n");
    for (int i = 0; i < deck_key_count(); ++i) {
        const deck_key_t *k = deck_key_at(i);
        char valid[512];
        printf(".TP\n.B ");
        man_text(k->key);
        printf("\n");
        man_text(k->type);
        printf(", default ");
        man_text(k->def);
        if (deck_key_valid(k, valid, sizeof valid)[0]) {
            printf("; valid: ");
            man_text(valid);
        }
        printf(".\n");
        man_text(k->meaning);
        printf(".\n");
    }
    printf(".SH SEE ALSO\nREADME.md, docs/decks.md, docs/format.md (installed under share/doc/dpamr)\n");
    return 0;
}

/* A subcommand's work on its loaded deck (and mesh); the exit status. */
typedef int (*deck_work_t)(deck_t *d, mesh_t *m, double t0);

/* Load DECK [key=value ...] (with its mesh: with_mesh), do the work, and free both on every path. */
static int with_deck(int argc, char **argv, int with_mesh, deck_work_t work)
{
    char err[ERRLEN];
    deck_t d;
    mesh_t m;
    memset(&d, 0, sizeof d);
    memset(&m, 0, sizeof m);
    const double t0 = timer_ms();
    const int loaded = with_mesh ? run_load(&d, &m, argc, argv, err, sizeof err)
                                 : deck_load(&d, argv[0], argc - 1, argv + 1, err, sizeof err);
    const int rc = loaded != 0 ? run_die(err) : work(&d, &m, t0);
    mesh_free(&m);
    deck_free(&d);
    return rc;
}

#ifndef DPAMR_MPI
/* `dpamr run`: a series of time steps (src/steps.c) or the single build. */
static int run_work(deck_t *d, mesh_t *m, double t0)
{
    return d->steps > 0 ? steps_run(d, m, t0) : build_serial(d, m, t0);
}

static int cmd_run(int argc, char **argv) { return with_deck(argc, argv, 1, run_work); }

#endif

/* An override of `output` given to `dpamr mesh`, which writes mesh_file: the user meant the mesh to
 * go there, and the mesh would have replaced the deck's mesh_file instead. 1 with err, else 0. */
static int mesh_output_override(int n, char **ov, char *err, size_t len)
{
    for (int i = 0; i < n; ++i) {
        const char *s = ov[i], *eq = strchr(s, '=');
        if (!eq) continue;
        while (*s == ' ' || *s == '\t') ++s;
        const char *e = eq;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) --e;
        if (e - s == 6 && strncmp(s, "output", 6) == 0) {
            const char *v = eq + 1;
            while (*v == ' ' || *v == '\t') ++v;
            return snprintf(err, len, "command line: override '%.300s': dpamr mesh writes level 0 to mesh_file, not to output (the "
                            "file dpamr run writes); give mesh_file=%.300s", ov[i], v), 1;
        }
    }
    return 0;
}

/* `dpamr mesh` on the loaded deck: level 0 sampled into m, validated, written. The exit status; the
 * caller frees d and m. */
static int mesh_build(deck_t *d, mesh_t *m, double t0)
{
    (void)t0;
    char err[ERRLEN];
    if (d->p.nobj == 0) { /* level 0 would be all zeros */
        snprintf(err, sizeof err, "%.1000s: dpamr mesh samples level 0 from model.objects, and the deck names none: "
                 "give model.objects (docs/decks.md), or make a mesh from arrays with " RUN_NUMPY_SCRIPT, d->path);
        return run_die(err);
    }
    const int replacing = run_refuse_overwrite("mesh_file", d->mesh_file, d, 0, err, sizeof err);
    if (replacing < 0) return run_die(err);
    if (run_check_output("mesh_file", d->mesh_file, 0.0, err, sizeof err) != 0) return run_die(err);
    if (replacing) run_say_replacing(d, "mesh_file", d->mesh_file);
    run_warn_model(d);
    /* the estimate first: the tiles, and the writer's AMRBox and ghost buffers for them */
    const double ntiles = (double)d->root[0] * d->root[1] * d->root[2], cells = (double)dp_cells(d->p.dim, d->p.B);
    const double bytes = mesh_bytes(ntiles, d->p.dim, d->p.B, d->p.nf) + ntiles * (24.0 + cells);
    char why[256];
    if (d->verbosity != DP_VERBOSITY_QUIET)
        printf("dpamr mesh %s: level 0 of %.0f tiles x %.0f cells x %d field(s) needs about %.3g GB of memory\n", d->path,
               ntiles, cells, d->p.nf, bytes / 1e9);
    if (mesh_fits_memory(bytes, why, sizeof why) != 0) {
        snprintf(err, sizeof err, "%.1000s: root %d %d %d: level 0 does not fit in memory: %s", d->path, d->root[0],
                 d->root[1], d->root[2], why);
        return run_die(err);
    }
    if (engine_make_level0(d, m, err, sizeof err) != 0) return run_die(err);
    valid_report_t v;
    valid_check_mode(m, &d->p, 0, &v); /* level 0: not refined yet */
    if (!v.passed) {
        fprintf(stderr, "dpamr: error: level-0 mesh failed validation: %s\n", v.first_failure);
        return 2;
    }
    h5io_meta_t meta;
    run_provenance(&meta, d, "mesh", &v, NULL);
    if (h5io_write(d->mesh_file, m, &meta, err, sizeof err) != 0) return run_die(err);
    printf("wrote %s: %lld root tiles of %d^%d cells, %d field(s)\n", d->mesh_file, (long long)m->ntiles, d->p.B,
           d->p.dim, d->p.nf);
    return 0;
}

static int cmd_mesh(int argc, char **argv)
{
    char err[ERRLEN];
    if (mesh_output_override(argc - 1, argv + 1, err, sizeof err)) return run_die(err);
    return with_deck(argc, argv, 0, mesh_build);
}


static int driver_main(int argc, char **argv)
{
    h5io_init(); /* before any HDF5 call */
    dp_tmp_handlers(); /* an interrupted write leaves no temporary file (src/tmpfile.h) */
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (is_help_flag(cmd) || (!strcmp(cmd, "help") && argc == 2)) {
        usage(stdout);
        return 0;
    }
    /* `dpamr SUBCOMMAND --help` (or -h) anywhere after the subcommand */
    for (int i = 2; i < argc && sub_help(cmd); ++i)
        if (is_help_flag(argv[i])) return fputs(sub_help(cmd), stdout), 0;
    if (!strcmp(cmd, "help")) {
        if (argc > 3) {
            fprintf(stderr, "dpamr: error: 'help' takes one KEY or SUBCOMMAND (got %d arguments)\n", argc - 2);
            return 1;
        }
        return cmd_help(argv[2]);
    }
    /* the commands without arguments refuse one, as check and help refuse a second */
    if ((!strcmp(cmd, "--man") || !strcmp(cmd, "--version") || !strcmp(cmd, "gpu")) && argc > 2) {
        fprintf(stderr, "dpamr: error: '%s' takes no arguments (got '%s')\n", cmd, argv[2]);
        return 1;
    }
    if (!strcmp(cmd, "--man")) return cmd_man();
    if (!strcmp(cmd, "--version")) {
#ifdef DPAMR_MPI
        const char *mpi = "yes";
#else
        const char *mpi = "no";
#endif
        printf("dpamr %s (MPI: %s, parallel HDF5: %s)\n", DPAMR_VERSION, mpi, h5io_parallel() ? "yes" : "no");
        char why[512];
        if (gpu_available(why, sizeof why)) run_info_device(why);
        run_print_info(stdout);
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
        static const char *const subs[] = { "run", "mesh", "check", "bench", "gpu", "help" };
        const int si = deck_nearest(cmd, subs, 6);
        char near[64] = "";
        if (si >= 0) snprintf(near, sizeof near, "did you mean '%s'? ", subs[si]);
        fprintf(stderr, "dpamr: error: unknown subcommand '%s' (%svalid: run, mesh, check, bench, gpu, help; "
                "--help, --version, --man)\n", cmd, near);
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
    return check_file(argv[2]);
}

/* A closed stdin, stdout or stderr (`dpamr run ... >&-`) opened on /dev/null, first thing (before
 * MPI_Init too): else the next file opened (MPI's, or the output's temporary file) would take its
 * number and receive the messages. */
static void std_fds_open(void)
{
    for (int fd = 0; fd <= 2; ++fd)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            const int nul = open("/dev/null", O_RDWR);
            if (nul >= 0 && nul != fd) close(nul); /* the lowest free number is fd: taken as intended */
        }
}

/* The exit status rc, or 1 where what was printed could not be written (a full disk under a
 * redirected stdout, /dev/full): the report, the table or the file names would be lost silently. */
static int stdout_checked(int rc)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "dpamr: error: writing to standard output failed: %s\n", strerror(errno ? errno : EIO));
        return rc ? rc : 1;
    }
    return rc;
}

#ifdef DPAMR_MPI
#include <mpi.h>

/* Built with MPI: `run` is distributed (one rank included); the other subcommands run on one rank. */
int main(int argc, char **argv)
{
    int provided = 0, rank = 0, size = 1;
    std_fds_open();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc;
    const int distributed = argc >= 2 && !strcmp(argv[1], "run");
    if (distributed || size == 1) {
        rc = stdout_checked(driver_main(argc, argv));
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
int main(int argc, char **argv)
{
    std_fds_open();
    return stdout_checked(driver_main(argc, argv));
}
#endif
