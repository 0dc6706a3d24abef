/* run.h - the pieces of the app layer's pipelines, shared by the subcommands (src/main.c), the single
 * build (src/build.c), the time steps (src/steps.c), the MPI hooks (src/dist.c) and bench
 * (src/bench.c): load and check the inputs, resolve the variant, the report's lines, the streamed
 * write's callbacks, fill the provenance. Nothing here calls into main.c. */
#ifndef DPAMR_RUN_H
#define DPAMR_RUN_H

#include <stddef.h>
#include <stdio.h>
#include "io/h5io.h"
#include "validation/valid.h"
#include "src/deck.h"
#include "src/mesh.h"
#include "src/refine.h"

#define ERRLEN 2048
/* Where a user finds the numpy-to-mesh script, in a source tree and in an install (CMakeLists.txt). */
#define RUN_NUMPY_SCRIPT "mesh_from_numpy.py (tools/ in the source, share/dpamr/ in an install)"

/** Print "dpamr: error: msg" to stderr; returns 1 (the exit status). */
int run_die(const char *msg);
/** The mesh file must describe the deck's domain: same dim, tile size, root grid, geometry, fields.
 *  suggest: the message says how to make a fitting mesh (a run; not a check of a stored deck). */
int run_mesh_matches_deck(const mesh_t *m, const deck_t *d, const char *file, int suggest, char *err, size_t n);
/** `dpamr run` with steps = 0 writes one file: an output that reads as a pattern of time steps
 *  (run_%05d.hdf) is refused (a literal '%' otherwise stays). -1 with err, else 0. */
int run_output_name(const deck_t *d, char *err, size_t n);
/** A mesh to refine must have tiles on its finest declared level (the frontier). */
int run_mesh_has_frontier(const mesh_t *m, const char *file, char *err, size_t n);
/** 1 when paths a and b name the same existing file (through links too). */
int run_same_file(const char *a, const char *b);
/** Refuse to write `target` over one of dpamr's inputs (the deck, and the mesh file if check_mesh), over
 *  anything that is not a file dpamr wrote (h5io_is_dpamr_output), over a file of dpamr's of the
 *  other kind (check_mesh: a run's output, which never replaces a level-0 mesh of `dpamr mesh`; else
 *  that mesh, which never replaces a run's output), and over dpamr's own earlier output when the deck
 *  says overwrite = never. -1 with err; 0 for a new file; 1 when target is an earlier dpamr output of
 *  the same kind that will be replaced (say so: run_say_replacing). */
int run_refuse_overwrite(const char *key, const char *target, const deck_t *d, int check_mesh, char *err, size_t n);
/** A note (stderr, every verbosity) when target's folder holds NAME.tmp.PID files of dpamr's output
 *  kinds whose process PID is gone: left by runs that ended without their cleanup (SIGKILL, as
 *  mpiexec ends its ranks on an interrupt). Never removes them: they may be another's. */
void run_note_stale_tmp(const char *target);
/** The one line saying that key = target, an earlier dpamr output, will be replaced (none with
 *  verbosity = quiet). */
void run_say_replacing(const deck_t *d, const char *key, const char *target);
/** Before any work: the folder of target exists and takes new files, and its file system has bytes
 *  free. 0, or -1 with err naming the key, the path and what is wrong. */
int run_check_output(const char *key, const char *target, double bytes, char *err, size_t n);
/** The shortest decimal that reads back as v, into buf (0.05, not 0.050000000000000003): times in
 *  JSON and CSV. */
const char *run_number_text(char *buf, size_t n, double v);
/** s as the body of a JSON string (quote, backslash and control characters escaped) into out; -1
 *  when it does not fit. */
int run_json_escape(const char *s, char *out, size_t n);
/** s as one CSV field (RFC 4180: in double quotes, a quote doubled), so that a path holding commas
 *  or quotes stays one field; into out, -1 when it does not fit. */
int run_csv_field(const char *s, char *out, size_t n);
/** "12.3 kB", "4.5 MB", "1.23 GB" into buf. */
const char *run_bytes_text(double bytes, char *buf, size_t n);
/** Host memory of a tile store of cap tiles shaped like m. */
double run_memory_bytes(const mesh_t *m, dp_tidx cap);
/** Read the mesh file the deck names and check it against the deck (the two checks above). 0 or -1 with err. */
int run_read_mesh(const deck_t *d, mesh_t *m, char *err, size_t n);
/** Load the deck (argv[0], overrides argv[1..]), set its thread count, read its mesh. 0 or -1 with err. */
int run_load(deck_t *d, mesh_t *m, int argc, char **argv, char *err, size_t n);

/** Warn (stderr) about model objects entirely outside the domain; returns how many. */
int run_warn_model(const deck_t *d);
/** Warn (stderr) when a refinement output of nlevels levels stops below max_level, with the reason. */
/** The tile store capacity line of `dpamr run`: the tiles and what limits them (rank 0's, for
 *  nranks > 1). */
void run_say_capacity(const refine_report_t *r, int nranks);

/** The cdp pending-launch pool line of `dpamr run` (nothing for other engines): the pool granted,
 *  asked and computed (rank 0's, for nranks > 1) and the device launches and failures (all ranks). */
void run_say_pool(const refine_report_t *r, long long launches, long long failures, int nranks);

void run_warn_depth(const deck_t *d, int nlevels);

/** What a run asks of the engine besides the refinement (engine_refine_valid): the device validates
 *  a GPU variant's result unless validate = cpu (the cpu variant ignores the request). */
void run_valid_request(const deck_t *d, dp_vreq *q);
/** One line: where the report came from (the GPU's passes and their CUDA-event time, the CPU
 *  validator and why), for a run of variant whose device result is g; host_ms: the report's host
 *  part (the assembly, or the CPU validator). prefix: "" or "rank 0: ". */
void run_say_valid(const deck_t *d, int variant, const dp_vdev *g, int by_cpu, double host_ms, const char *prefix);
/** The validation time a run records: the GPU validator's, from its launch to its results on the
 *  host (it overlaps the download), plus the host part; the host part alone when the GPU did not
 *  validate. */
double run_validate_ms(const dp_vdev *g, double host_ms);

/** The streamed write of a GPU run (device/gpu.h, gpu_stream_t): the output is opened and its cells
 *  written while they come from the device; run_stream_finish then writes /dpamr and renames, or
 *  run_stream_abort removes the temporary file (no partial output). */
typedef struct {
    const deck_t *d;
    const dp_vdev *vd;   /* the GPU validator's result (filled before need_cells is asked) */
    int progress;        /* the write's progress line */
    h5io_out_t *out;     /* the file being written, NULL before the write began or after the end */
} run_stream_t;
/** 1 when a serial run of variant streams its output: a GPU variant validated on the GPU (unless
 *  the test hook DPAMR_TEST_NO_STREAM is set). */
int run_stream_wanted(const deck_t *d, int variant);
/** The gpu_stream_t callbacks of rs: open d->output and write its cells from the source; whether the
 *  validation report needs the cells on the host (valid_device_suffices). */
int run_stream_write(void *rs, const mesh_t *m, xfer_src_t *src, char *err, size_t errlen);
int run_stream_need_cells(void *rs, const mesh_t *m);
/** Remove the temporary file of a streamed write that began (nothing when none did). */
void run_stream_abort(run_stream_t *rs);

/** The variant a run uses. cpu stays cpu; auto becomes cdp with a usable GPU, else cpu (then `why`
 *  says what is missing); cdp or host without a usable GPU is an error (-1, message in err).
 *  local >= 0: first make device `local` (modulo the visible devices) current, as an MPI rank does
 *  with its node-local rank. *device: the device used, -1 on the cpu. */
int run_variant(const deck_t *d, int local, int *device, char *why, size_t whylen, char *err, size_t n);
/** The line of a `variant = auto` run that run_variant resolved to cpu, with its why. */
void run_say_auto_cpu(const char *why);

/** What a refinement run measured, for /dpamr/provenance. A serial run fills it from its engine's
 *  report (run_stats_from_report); an MPI run then combines the ranks' (slowest refinement and
 *  level times, launches summed, rank 0's pool and load and validation times). */
typedef struct {
    double load_ms, refine_ms, validate_ms;
    double upload_ms, download_ms; /* GPU transfers, 0 on the cpu */
    double total_ms;               /* from the start until the write began */
    int nlevels;                    /* levels in the output: level_ms[0..nlevels) are written */
    double level_ms[DP_MAX_LEVELS]; /* time building each level, -1 where none was built */
    long long device_launches, launch_failures, pool_size; /* -1: not a cdp run */
} run_stats_t;

/** The build and the machine, for /dpamr/provenance and --version. */
typedef struct {
    char commit[64], build[64], compiler[128], cuda[128], device[256], host[256], date[64];
    int threads;
} run_info_t;

/** This process's build and machine (filled on the first call; device "cpu" until run_info_device). */
const run_info_t *run_info(void);
/** Replace it (an MPI run records rank 0's on every rank: collective attributes must agree). */
void run_info_set(const run_info_t *ri);
/** One line: commit, build type, compiler, CUDA runtime and driver, device, host, threads, date. */
void run_print_info(FILE *fp);
/** The device a run used (the name gpu_available gave), recorded in the provenance. */
void run_info_device(const char *name);

/** Stats of one engine run whose output has nlevels levels (load and validate times left 0). */
void run_stats_from_report(run_stats_t *s, const refine_report_t *r, int nlevels);

/** The provenance of every file dpamr writes: the deck, the variant, the version, the validation
 *  report, and the run's stats (NULL for a file that was not refined, e.g. `dpamr mesh`). */
void run_provenance(h5io_meta_t *meta, const deck_t *d, const char *variant, const valid_report_t *v,
                    const run_stats_t *s);

#endif
