// CU-LAUN0002, example "Bad", verbatim: a stream exists, the launch names none.
// expect: {"line": 6, "kernel": "scale", "grid": "grid", "block": "block", "function": "(file scope)", "result": true}
// expect-exit: 1

cudaStreamCreate(&stream);
scale<<<grid, block>>>(data);
