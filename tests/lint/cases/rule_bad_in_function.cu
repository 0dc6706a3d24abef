// The "Bad" example inside a host function, as it would be written in a real file.
// expect: {"line": 12, "kernel": "scale", "grid": "grid", "block": "block", "function": "run", "result": true}
// expect-exit: 1
#include <cuda_runtime.h>

__global__ void scale(float *data) { data[threadIdx.x] *= 2.0f; }

void run(float *data, dim3 grid, dim3 block)
{
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    scale<<<grid, block>>>(data);
    cudaStreamDestroy(stream);
}
