/* fuzz_h5.c - libFuzzer target: the mesh and output loaders (io/h5io_read.c) on any bytes, opened as an
 * HDF5 file image in memory: h5io_read as `dpamr run` loads a mesh, then what `dpamr check` does with
 * a file (the stored deck parsed, the tiles validated with it, h5io_verify). Every input must end in
 * a result or an error message; never a crash, a sanitizer report or a leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5io.h"
#include "src/deck.h"
#include "validation/valid.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/** One OpenMP thread: validation's parallel loops would otherwise start and synchronise a thread team
 *  for every input of a few tiles, which took half the time of a run (docs/testing.md); the results do
 *  not depend on the thread count (test_engine), and libFuzzer wants a deterministic target. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mesh_t m;
    char *text = NULL, err[2048] = "";
    if (h5io_read_image(data, size, "fuzz.hdf", &m, &text, err, sizeof err) != 0) {
        if (!err[0]) abort(); /* a refusal always has a message */
        return 0;
    }
    deck_t d;
    if (text && deck_parse_text(&d, "fuzz.hdf:/dpamr/deck", text, err, sizeof err) == 0) {
        /* the checks of run_mesh_matches_deck that valid_check relies on */
        if (d.p.dim == m.dim && d.p.B == m.B && d.p.nf == m.nf && d.p.crit_field < m.nf) {
            valid_report_t v;
            valid_check(&m, &d.p, &v);
            if (v.passed) h5io_verify_image(data, size, "fuzz.hdf", &m, &v, err, sizeof err);
        }
        deck_free(&d);
    }
    free(text);
    mesh_free(&m);
    return 0;
}
