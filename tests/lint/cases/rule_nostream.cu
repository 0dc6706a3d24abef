// CU-LAUN0002: a file that names no stream anywhere returns False for this launch.
// expect: {"line": 5, "kernel": "scale", "grid": "grid", "block": "block", "function": "(file scope)", "result": false}
// expect-exit: 0

scale<<<grid, block>>>(data)
