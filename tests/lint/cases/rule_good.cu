// CU-LAUN0002, example "Good", verbatim: the launch names the stream.
// expect: {"line": 6, "kernel": "scale", "grid": "grid", "block": "block", "function": "(file scope)", "result": false}
// expect-exit: 0

cudaStreamCreate(&stream);
scale<<<grid, block, 0, stream>>>(data);
