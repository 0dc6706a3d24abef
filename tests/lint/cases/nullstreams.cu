// What counts as the null (legacy default) stream in the fourth argument, and what does not.
// expect: {"line": 38, "kernel": "k", "grid": "1", "block": "1", "function": "f", "result": true}
// expect: {"line": 39, "kernel": "k", "grid": "2", "block": "1", "function": "f", "result": true}
// expect: {"line": 40, "kernel": "k", "grid": "3", "block": "1", "function": "f", "result": true}
// expect: {"line": 41, "kernel": "k", "grid": "4", "block": "1", "function": "f", "result": true}
// expect: {"line": 42, "kernel": "k", "grid": "5", "block": "1", "function": "f", "result": true}
// expect: {"line": 43, "kernel": "k", "grid": "6", "block": "1", "function": "f", "result": true}
// expect: {"line": 44, "kernel": "k", "grid": "7", "block": "1", "function": "f", "result": true}
// expect: {"line": 45, "kernel": "k", "grid": "8", "block": "1", "function": "f", "result": true}
// expect: {"line": 46, "kernel": "k", "grid": "9", "block": "1", "function": "f", "result": true}
// expect: {"line": 47, "kernel": "k", "grid": "10", "block": "1", "function": "f", "result": true}
// expect: {"line": 48, "kernel": "k", "grid": "11", "block": "1", "function": "f", "result": true}
// expect: {"line": 49, "kernel": "k", "grid": "12", "block": "1", "function": "f", "result": true}
// expect: {"line": 50, "kernel": "k", "grid": "13", "block": "1", "function": "f", "result": true}
// expect: {"line": 51, "kernel": "k", "grid": "14", "block": "1", "function": "f", "result": true}
// expect: {"line": 52, "kernel": "k", "grid": "15", "block": "1", "function": "f", "result": true}
// expect: {"line": 53, "kernel": "k", "grid": "16", "block": "1", "function": "f", "result": true}
// expect: {"line": 55, "kernel": "k", "grid": "21", "block": "1", "function": "f", "result": false}
// expect: {"line": 56, "kernel": "k", "grid": "22", "block": "1", "function": "f", "result": false}
// expect: {"line": 57, "kernel": "k", "grid": "23", "block": "1", "function": "f", "result": false}
// expect: {"line": 58, "kernel": "k", "grid": "24", "block": "1", "function": "f", "result": false}
// expect: {"line": 59, "kernel": "k", "grid": "25", "block": "1", "function": "f", "result": false}
// expect: {"line": 60, "kernel": "k", "grid": "26", "block": "1", "function": "f", "result": false}
// expect: {"line": 61, "kernel": "k", "grid": "27", "block": "1", "function": "f", "result": false}
// expect: {"line": 62, "kernel": "k", "grid": "28", "block": "1", "function": "f", "result": false}
// expect: {"line": 63, "kernel": "k", "grid": "29", "block": "1", "function": "f", "result": false}
// expect: {"line": 64, "kernel": "k", "grid": "30", "block": "1", "function": "f", "result": false}
// expect-exit: 1
#include <cuda_runtime.h>
#include <cstddef>
__global__ void k(int *x) {}
cudaStream_t pick(int i);

void f(int *x, cudaStream_t s, int i)
{
    const size_t smem = 64;
    /* the null stream: true in this unit (it receives a cudaStream_t) */
    k<<<1, 1>>>(x);
    k<<<2, 1, smem>>>(x);
    k<<<3, 1, 0, 0>>>(x);
    k<<<4, 1, 0, 0u>>>(x);
    k<<<5, 1, 0, 0U>>>(x);
    k<<<6, 1, 0, NULL>>>(x);
    k<<<7, 1, 0, nullptr>>>(x);
    k<<<8, 1, 0, cudaStreamLegacy>>>(x);
    k<<<9, 1, 0, (cudaStream_t)0>>>(x);
    k<<<10, 1, 0, (cudaStream_t)NULL>>>(x);
    k<<<11, 1, 0, ( (cudaStream_t) (0) )>>>(x);
    k<<<12, 1, 0, static_cast<cudaStream_t>(nullptr)>>>(x);
    k<<<13, 1, 0, reinterpret_cast<cudaStream_t>(0)>>>(x);
    k<<<14, 1, 0, cudaStream_t()>>>(x);
    k<<<15, 1, 0, (cudaStream_t)0x1>>>(x);    /* the value of cudaStreamLegacy */
    k<<<16, 1, 0, (cudaStream_t)((void *)0)>>>(x);
    /* not the null stream */
    k<<<21, 1, 0, s>>>(x);
    k<<<22, 1, 0, cudaStreamPerThread>>>(x);
    k<<<23, 1, 0, cudaStreamFireAndForget>>>(x);
    k<<<24, 1, 0, cudaStreamTailLaunch>>>(x);
    k<<<25, 1, 0, (cudaStream_t)0x2>>>(x);    /* the value of cudaStreamPerThread */
    k<<<26, 1, 0, pick(i)>>>(x);
    k<<<27, 1, 0, i ? s : 0>>>(x);
    k<<<28, 1, 0, (cudaStream_t)s>>>(x);
    k<<<29, 1, 0, 1>>>(x);
    k<<<30, 1, 0, (s)>>>(x);
}
