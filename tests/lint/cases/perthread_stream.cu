// cudaStreamPerThread in the fourth argument is not the legacy default stream.
// expect: {"line": 12, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect: {"line": 13, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect: {"line": 14, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": true}
// expect-exit: 1
__global__ void k(float *x) {}

void f(float *x, dim3 g, dim3 b)
{
    cudaStream_t s;
    cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0);
    k<<<g, b, 0, s>>>(x);
    k<<<g, b, 0, cudaStreamPerThread>>>(x);
    k<<<g, b, 0, cudaStreamLegacy>>>(x);
}
