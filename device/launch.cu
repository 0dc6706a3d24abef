/* launch.cu - the one host-side launch helper (PDL bit on or off), the pending-launch pool of the cdp
 * refinement and its failed launches' message, the device timeline's download and trace writer, the
 * reset of the level scans (level_scan.cuh). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"
#include "device/level_scan.cuh"
#include "src/tmpfile.h"

cudaError_t launch_pdl(const void *kernel, dim3 grid, dim3 block, cudaStream_t s, int pdl, void **args)
{
    return launch_pdl_smem(kernel, grid, block, 0, s, pdl, args);
}

cudaError_t launch_pdl_smem(const void *kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s, int pdl,
                            void **args)
{
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = pdl ? 1 : 0;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelExC(&cfg, kernel, args);
}

cudaError_t pool_acquire(long long pool, size_t *before, long long *granted)
{
    cudaError_t e = cudaDeviceGetLimit(before, cudaLimitDevRuntimePendingLaunchCount);
    if (e == cudaSuccess) e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)pool);
    if (e != cudaSuccess) return e; /* the limit is as it was */
    size_t got = 0;
    e = cudaDeviceGetLimit(&got, cudaLimitDevRuntimePendingLaunchCount);
    if (e != cudaSuccess) {
        (void)cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, *before); /* as it was */
        return e;
    }
    *granted = (long long)got;
    return cudaSuccess;
}

void pool_release(size_t before)
{
    const cudaError_t e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, before);
    if (e != cudaSuccess) { /* the result stands; what runs next in this process has a larger pool */
        fprintf(stderr, "dpamr: warning: the pending-launch pool could not be set back to %zu: %s\n", before,
                cudaGetErrorString(e));
        (void)cudaGetLastError(); /* not left for the next check to find */
    }
}

int launch_failures(const unsigned long long *st, long long pool_size, const char *grain, long long bound,
                    const char *hint, char *err, size_t errlen)
{
    const long long failed = (long long)(st[ST_FAIL_PENDING] + st[ST_FAIL_RESOURCES] + st[ST_FAIL_OTHER]);
    if (failed == 0) return 0;
    const long long issued = failed + (long long)st[ST_LAUNCHES];
    snprintf(err, errlen,
             "%lld of %lld device-side launches failed (%llu pending-launch pool full, %llu out of resources, "
             "%llu other): the pending-launch pool of %lld is too small for this mesh at cdp_grain=%s; the "
             "computed bound is %lld (run with pool=0 or pool >= %lld)%s. No output was written.",
             failed, issued, st[ST_FAIL_PENDING], st[ST_FAIL_RESOURCES], st[ST_FAIL_OTHER], pool_size, grain, bound,
             bound > issued ? bound : issued, hint ? hint : "");
    return -1;
}

int timeline_write(const char *path, const char *const *names, const unsigned long long *stamps, int n, char *err,
                   size_t errlen)
{
    if (!path || !path[0]) return 0;
    char tmp[4200];
    if (dp_tmp_name(path, 0, tmp, sizeof tmp) != 0) {
        snprintf(err, errlen, "trace %.1000s: the path is too long", path);
        return -1;
    }
    FILE *fp = dp_tmp_fopen(tmp); /* removed if a signal ends the run before the rename (src/tmpfile.h) */
    if (!fp) {
        snprintf(err, errlen, "trace %.1000s: cannot write its temporary file %.1000s: %s", path, tmp,
                 dp_tmp_strerror(errno));
        return -1;
    }
    unsigned long long t0 = ~0ull;
    for (int i = 0; i < n; ++i)
        if (stamps[2 * i + 1] && stamps[2 * i] < t0) t0 = stamps[2 * i];
    fprintf(fp, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    int prev = -1;
    for (int i = 0; i < n; ++i) {
        if (!stamps[2 * i + 1]) continue; /* kernel did not run */
        /* gap to the previous kernel in stream order: negative = the two overlapped */
        char args[96] = "";
        if (prev >= 0)
            snprintf(args, sizeof args, ",\"args\":{\"gap_from_previous_ns\":%lld}",
                     (long long)stamps[2 * i] - (long long)stamps[2 * prev + 1]);
        fprintf(fp, "%s{\"name\":\"%s\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f%s}",
                prev < 0 ? "" : ",\n", names[i], i % 2, (stamps[2 * i] - t0) / 1e3,
                (stamps[2 * i + 1] - stamps[2 * i]) / 1e3, args);
        prev = i;
    }
    fprintf(fp, "\n]}\n");
    const int bad = ferror(fp);
    if (fclose(fp) != 0 || bad || rename(tmp, path) != 0) {
        remove(tmp);
        dp_tmp_done(tmp);
        snprintf(err, errlen, "trace %s: write failed", path);
        return -1;
    }
    dp_tmp_done(tmp);
    return 0;
}

int timeline_write_named(const char *path, void (*name)(int i, char *buf, size_t n, const void *ctx), const void *ctx,
                         const unsigned long long *stamps, int n, char *err, size_t errlen)
{
    if (!path || !path[0]) return 0;
    const char **names = (const char **)malloc((size_t)n * sizeof *names);
    char(*buf)[64] = (char(*)[64])malloc((size_t)n * 64);
    int rc = -1;
    if (names && buf) {
        for (int i = 0; i < n; ++i) {
            name(i, buf[i], 64, ctx);
            names[i] = buf[i];
        }
        rc = timeline_write(path, names, stamps, n, err, errlen);
    } else {
        snprintf(err, errlen, "out of host memory for the trace");
    }
    free(names);
    free(buf);
    return rc;
}

int timeline_download(const dmesh_t *M, int nslot, cudaStream_t s, unsigned long long **stamps, char *err,
                      size_t errlen)
{
    *stamps = (unsigned long long *)malloc(2 * (size_t)nslot * sizeof **stamps);
    if (!*stamps) {
        snprintf(err, errlen, "out of host memory for the timeline");
        return -1;
    }
    CK(cudaMemcpyAsync(*stamps, M->stamps, 2 * (size_t)nslot * sizeof **stamps, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    return 0;
fail:
    return -1;
}

cudaError_t chain_graphs_create(chain_graphs_t *c, const cudaKernelNodeParams *kp, const cudaKernelNodeParams *kp_last,
                                const cudaKernelNodeParams *head, int nhead, int n, cudaGraphExec_t *d_exec,
                                cudaStream_t s)
{
    cudaError_t e;
    memset(c, 0, sizeof *c);
    if (n < 1 || n > DP_MAX_LEVELS) return cudaErrorInvalidValue;
    if ((e = cudaGraphCreate(&c->graph, 0)) != cudaSuccess) return e;
    if ((e = cudaGraphAddKernelNode(&c->node, c->graph, NULL, 0, kp)) != cudaSuccess) return e;
    if (kp_last) {
        if ((e = cudaGraphCreate(&c->graph_last, 0)) != cudaSuccess) return e;
        if ((e = cudaGraphAddKernelNode(&c->node_last, c->graph_last, NULL, 0, kp_last)) != cudaSuccess) return e;
    }
    if (nhead > 0) { /* step 0's graph: the head's kernels one after the other, then step 0's node */
        cudaGraphNode_t prev = NULL, node;
        if ((e = cudaGraphCreate(&c->graph_head, 0)) != cudaSuccess) return e;
        for (int i = 0; i <= nhead; ++i) {
            const cudaKernelNodeParams *q = i < nhead ? &head[i] : n == 1 && kp_last ? kp_last : kp;
            if ((e = cudaGraphAddKernelNode(&node, c->graph_head, i ? &prev : NULL, i ? 1 : 0, q)) != cudaSuccess)
                return e;
            prev = node;
        }
    }
    for (int k = 0; k < n; ++k) {
        cudaGraph_t g = k == 0 && c->graph_head ? c->graph_head : k == n - 1 && c->graph_last ? c->graph_last : c->graph;
        if ((e = cudaGraphInstantiate(&c->exec[k], g, cudaGraphInstantiateFlagDeviceLaunch)) != cudaSuccess)
            return e;
        c->n = k + 1;
        if ((e = cudaGraphUpload(c->exec[k], s)) != cudaSuccess) return e;
    }
    /* c->exec stays (the caller's struct) while the copy reads it */
    return cudaMemcpyAsync(d_exec, c->exec, (size_t)n * sizeof *d_exec, cudaMemcpyHostToDevice, s);
}

cudaError_t chain_graphs_set(chain_graphs_t *c, const cudaKernelNodeParams *kp, const cudaKernelNodeParams *kp_last,
                             cudaStream_t s)
{
    cudaError_t e;
    if (c->graph_head || (c->graph_last && !kp_last)) return cudaErrorInvalidValue;
    for (int k = 0; k < c->n; ++k) {
        const int own = k == c->n - 1 && c->graph_last; /* the last step's graph, a node of its own */
        if ((e = cudaGraphExecKernelNodeSetParams(c->exec[k], own ? c->node_last : c->node, own ? kp_last : kp)) !=
            cudaSuccess)
            return e;
        if ((e = cudaGraphUpload(c->exec[k], s)) != cudaSuccess) return e;
    }
    return cudaSuccess;
}

void chain_graphs_destroy(chain_graphs_t *c)
{
    for (int k = 0; k < c->n; ++k)
        if (c->exec[k]) cudaGraphExecDestroy(c->exec[k]);
    if (c->graph) cudaGraphDestroy(c->graph);
    if (c->graph_last) cudaGraphDestroy(c->graph_last);
    if (c->graph_head) cudaGraphDestroy(c->graph_head);
    memset(c, 0, sizeof *c);
}

__global__ void initLevelScans(level_scans_t S)
{
    const int k = blockIdx.y;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        S.tickets[k] = 0;
        if (S.started && k == 0) *S.started = 0;
        if (S.done) S.done[k] = 0;
    }
    scan_state_t st;
    st.Init(S.nb[k], S.scan + S.off[k], 0);
    st.InitializeStatus(S.nb[k]);
    cudaTriggerProgrammaticLaunchCompletion();
}
