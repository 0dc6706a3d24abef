// A unit that creates no stream but receives one (a cudaStream_t parameter) takes part in stream
// work: launching without it drains the overlap the caller set up.
// expect: {"line": 10, "kernel": "k", "grid": "g", "block": "b", "function": "step", "result": true}
// expect: {"line": 11, "kernel": "k", "grid": "g", "block": "b", "function": "step", "result": false}
// expect-exit: 1
__global__ void k(float *x) {}

void step(float *x, dim3 g, dim3 b, cudaStream_t stream)
{
    k<<<g, b>>>(x);
    k<<<g, b, 0, stream>>>(x);
}
