// Comments: launches and stream arguments inside comments are not read.
// expect: {"line": 18, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": true}
// expect: {"line": 19, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect: {"line": 20, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": true}
// expect-exit: 1
__global__ void k(int *x) {}

void f(int *x, dim3 g, dim3 b)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    // k<<<g, b, 0, s>>>(x);   a launch in a line comment
    /* k<<<g, b>>>(x);         a launch in a block comment
       k<<<g, b, 0, 0>>>(x);
    */
    // a line comment that continues \
    k<<<h, b>>>(x);
    k<<<g /*, b, 0, s */, b>>>(x);           /* the stream is commented out */
    k<<<g, /* >>> */ b, 0, /* 0 */ s>>>(x);  /* a comment holds ">>>" */
    k<<<g, b, /* s */ 0>>>(x);               // shared memory only
}
