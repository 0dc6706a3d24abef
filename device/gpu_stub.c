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
