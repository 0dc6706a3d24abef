/* valid_gpu.cuh - the GPU validator's hooks in the tile store's download (device/valid_gpu.cu).
 *
 * gpu_refine_valid (device/gpu.h) registers a request for the one refinement it runs; the engines
 * end by downloading their store with dmesh_download, which calls valid_gpu_start on the store
 * before the transfer (the validation's kernels then run on a stream of their own, reading the
 * store while the download reads it too) and valid_gpu_finish after it (wait, copy the results
 * back, free the scratch). Without a registered request both return at once. */
#ifndef DPAMR_VALID_GPU_CUH
#define DPAMR_VALID_GPU_CUH

#include "device/gpu_common.cuh"

/** Enqueue the validation of tiles [0, ntiles) of M (refined, in canonical order) behind the work
 *  of stream s; the test hook DPAMR_TEST_DEVICE_CORRUPT=nan|key|parent first damages the store's
 *  last tile on s (so the download carries the damage too). 0, or -1 with err (a CUDA error). */
int valid_gpu_start(const dmesh_t *M, long long ntiles, cudaStream_t s, char *err, size_t errlen);
/** Wait for the validation started by valid_gpu_start, fill the request's result and free the
 *  scratch. 0, or -1 with err. Harmless when nothing was started. */
int valid_gpu_finish(char *err, size_t errlen);

#endif
