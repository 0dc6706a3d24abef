// --per-thread (sources compiled with -DCUDA_API_PER_THREAD_DEFAULT_STREAM or nvcc
// --default-stream per-thread) turns the rule off for every file. The same file without the
// flag is rule_bad_in_function.cu, whose result is true.
// expect-args: --per-thread
// expect: {"line": 13, "kernel": "scale", "grid": "grid", "block": "block", "function": "run", "result": false}
// expect-exit: 0
__global__ void scale(float *data) { data[threadIdx.x] *= 2.0f; }

void run(float *data, dim3 grid, dim3 block)
{
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    scale<<<grid, block>>>(data);
    cudaStreamDestroy(stream);
}
