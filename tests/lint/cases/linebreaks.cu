// Line breaks inside the chevrons, between the kernel and "<<<", and any whitespace between
// ">>>" and the argument list. The line reported is the kernel name's.
// expect: {"line": 18, "kernel": "k", "grid": "dim3(n, 1)", "block": "b", "function": "f", "result": true}
// expect: {"line": 22, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect: {"line": 26, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": true}
// expect: {"line": 29, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": true}
// expect: {"line": 30, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect: {"line": 31, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": true}
// expect: {"line": 35, "kernel": "k", "grid": "(n + 255) / 256", "block": "b", "function": "f", "result": true}
// expect-exit: 1
__global__ void k(int *x) {}

void f(int *x, int n, dim3 g, dim3 b)
{
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

    k<<<dim3(n,
             1),
        b>>>(x);

    k<<<g, b,
        0,
        s>>>(x);

    k
    <<<g, b>>>(x);

    k<<<g, b>>>   (x);
    k<<<g, b, 0, s>>>	(x);
    k<<<g, b>>>
    (
        x
    );
    k<<<(n   +   255)
       /   256, b>>>(x);
}
