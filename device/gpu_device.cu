/* gpu_device.cu - the device: availability and selection, the engine dispatch (gpu_refine), the
 * copy-bandwidth probe, and the deck's parameters in constant memory (c_params). */
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"

__constant__ dp_params c_params;

extern "C" void gpu_versions(int *runtime, int *driver)
{
    *runtime = *driver = 0;
    if (cudaRuntimeGetVersion(runtime) != cudaSuccess) *runtime = 0; /* 0: unknown, as the callers print it */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); /* not through the runtime: no driver, no error */
    if (!lib) return;
    typedef int (*get_version_t)(int *);
    get_version_t get = (get_version_t)dlsym(lib, "cuDriverGetVersion");
    if (get) get(driver);
    dlclose(lib);
}

/** Why cudaGetDeviceCount found no device, in the user's terms: no NVIDIA driver at all, a driver
 *  older than this build's CUDA runtime, or a driver without a visible device are different fixes. */
static void why_no_device(cudaError_t e, char *why, size_t whylen)
{
    int rt = 0, drv = 0;
    gpu_versions(&rt, &drv);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, whylen, "no NVIDIA driver is installed (libcuda.so.1 not found)");
        return;
    }
    dlclose(lib);
    if (e == cudaErrorInsufficientDriver || (drv > 0 && drv < rt))
        snprintf(why, whylen, "the NVIDIA driver supports CUDA %d.%d, older than this build's CUDA runtime %d.%d: "
                 "update the driver", drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
    else if (e == cudaSuccess || e == cudaErrorNoDevice)
        snprintf(why, whylen, "the NVIDIA driver (CUDA %d.%d) sees no device (check CUDA_VISIBLE_DEVICES and "
                 "nvidia-smi)", drv / 1000, drv % 1000 / 10);
    else
        snprintf(why, whylen, "the CUDA runtime cannot use the driver: %s", cudaGetErrorString(e));
}

extern "C" int gpu_available(char *why, size_t whylen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        why_no_device(e, why, whylen);
        return 0;
    }
    int dev = 0;
    cudaDeviceProp prop;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        snprintf(why, whylen, "cannot query CUDA device %d", dev);
        return 0;
    }
    if (prop.major < 9) {
        snprintf(why, whylen, "device %d (%s) is sm_%d%d; dpamr's GPU engines need sm_90 or newer (PDL)", dev,
                 prop.name, prop.major, prop.minor);
        return 0;
    }
    snprintf(why, whylen, "%s", prop.name);
    return 1;
}

extern "C" int gpu_select(int index, char *why, size_t whylen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        why_no_device(e, why, whylen);
        return -1;
    }
    const int dev = (index % n + n) % n;
    e = cudaSetDevice(dev);
    if (e != cudaSuccess) {
        snprintf(why, whylen, "cudaSetDevice(%d) failed: %s", dev, cudaGetErrorString(e));
        return -1;
    }
    return dev;
}

extern "C" int gpu_refine(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    char why[256];
    if (!gpu_available(why, sizeof why)) {
        snprintf(err, errlen, "variant=%s needs a CUDA device: %s", deck_variant_name(variant), why);
        return -1;
    }
    if (variant == DP_VARIANT_CDP) return refine_cdp(d, m, r, err, errlen);
    if (variant == DP_VARIANT_HOSTLAUNCH) return refine_host(d, m, r, err, errlen);
    snprintf(err, errlen, "gpu_refine: variant %d is not a GPU variant", variant);
    return -1;
}

extern "C" int gpu_copy_bandwidth(double *gbps, char *err, size_t errlen)
{
    const size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float best = 1e30f;
    *gbps = 0.0;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemsetAsync(a, 1, bytes, s));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 6; ++i) {
        float ms = 0.0f;
        CK(cudaEventRecord(e0, s));
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i > 0 && ms < best) best = ms; /* first copy is the warm-up */
    }
    *gbps = 2.0 * (double)bytes / (best * 1e-3) / 1e9;
fail:
    cudaFree(a);
    cudaFree(b);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return *gbps > 0.0 ? 0 : -1;
}

cudaError_t upload_params(const dp_params *p, cudaStream_t s)
{
    return cudaMemcpyToSymbolAsync(c_params, p, sizeof *p, 0, cudaMemcpyHostToDevice, s);
}
