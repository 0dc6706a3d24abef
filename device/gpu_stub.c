/* gpu_stub.c - used when dpamr is built without CUDA (DPAMR_CUDA=OFF or no nvcc). */
#include "device/gpu.h"

#include <stdio.h>
#include <string.h>

int gpu_available(char *why, size_t whylen)
{
    snprintf(why, whylen, "this dpamr was built without CUDA (configure with nvcc and DPAMR_CUDA=ON)");
    return 0;
}

int gpu_refine(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    (void)variant;
    (void)d;
    (void)m;
    (void)r;
    gpu_available(err, errlen);
    return -1;
}

int gpu_refine_valid(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, const dp_vreq *q, dp_vdev *res,
                     char *err, size_t errlen)
{
    (void)q;
    memset(res, 0, sizeof *res);
    return gpu_refine(variant, d, m, r, err, errlen);
}

int gpu_copy_bandwidth(double *gbps, char *err, size_t errlen)
{
    *gbps = 0.0;
    gpu_available(err, errlen);
    return -1;
}

int gpu_select(int index, char *why, size_t whylen)
{
    (void)index;
    gpu_available(why, whylen);
    return -1;
}

void gpu_versions(int *runtime, int *driver)
{
    *runtime = *driver = 0;
}

void gpu_stream_set(gpu_stream_t *st)
{
    (void)st; /* nothing streams without CUDA */
}

struct gpu_regrid {
    int unused;
};

int gpu_regrid_open(int variant, const deck_t *d, const mesh_t *m, gpu_regrid_t **g, double *upload_ms, char *err,
                    size_t errlen)
{
    (void)d;
    (void)m;
    *g = NULL;
    *upload_ms = 0.0;
    char why[256];
    gpu_available(why, sizeof why);
    snprintf(err, errlen, "variant=%s needs a CUDA device: %s", deck_variant_name(variant), why);
    return -1;
}

int gpu_regrid_step(gpu_regrid_t *g, double t, regrid_report_t *r, char *err, size_t errlen)
{
    (void)g;
    (void)t;
    memset(r, 0, sizeof *r);
    for (int L = 0; L < DP_MAX_LEVELS; ++L) r->level_ms[L] = -1.0;
    gpu_available(err, errlen);
    return -1;
}

int gpu_regrid_download(gpu_regrid_t *g, mesh_t *m, double *ms, char *err, size_t errlen)
{
    (void)g;
    (void)m;
    *ms = 0.0;
    gpu_available(err, errlen);
    return -1;
}

void gpu_regrid_close(gpu_regrid_t *g)
{
    (void)g; /* gpu_regrid_open never returns one without CUDA */
}
