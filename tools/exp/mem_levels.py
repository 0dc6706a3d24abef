#!/usr/bin/env python3
"""mem_levels.py RUN_TXT NCU_CSV [--copy-gbps G] - what each hostlaunch level step moves (issue 12).

RUN_TXT: a plain `dpamr run ... variant=hostlaunch` log (its "level N: T tiles" lines and its header's
tile size and dim); NCU_CSV: gpu_profile.sh METRICS=... of the same deck (next.sh mem). Per refineStep
(level L-1 -> L, in launch order) it prints the new tiles, the bytes the bench's floor counts for them
(cells and metadata written once: src/mesh.c mesh_bytes), the DRAM bytes read and written, their
ratio to the floor's bytes, the kernel's time against the floor's time at the copy bandwidth (read and
write counted, as `dpamr bench` measures it), and the global load and store sectors per request.
"""
import argparse
import csv
import re
import sys

META = 33  # DP_TILE_META_BYTES (src/mesh.h)


def read_run(path):
    txt = open(path).read()
    m = re.search(r"(\d)D, tile (\d+)\^", txt)
    if not m:
        sys.exit(f"mem_levels: {path}: no 'ND, tile B^' header")
    dim, B = int(m.group(1)), int(m.group(2))
    # the refine's level lines ("level  3:  3079 tiles  7.45 ms"), not the summary's (which have cells)
    tiles = {}
    for L, t in re.findall(r"^\s+level\s+(\d+):\s+(\d+) tiles\s+[\d.]+ ms", txt, re.M):
        tiles[int(L)] = int(t)
    fields = re.search(r"^\s+level\s+0:.*$", txt, re.M)
    nf = len(re.findall(r"(\w+) sum=", fields.group(0))) if fields else 1
    return dim, B, max(nf, 1), tiles


def read_ncu(path):
    rows = {}
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(lines):
        k = int(r["ID"])
        d = rows.setdefault(k, {"name": r["Kernel Name"], "grid": r.get("Grid Size", "")})
        v = r["Metric Value"].replace(",", "")
        unit = r["Metric Unit"]
        try:
            x = float(v)
        except ValueError:
            continue
        scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9,
                 "ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3}.get(unit, 1)
        d[r["Metric Name"]] = x * scale
    return [rows[k] for k in sorted(rows)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("ncu")
    ap.add_argument("--copy-gbps", type=float, default=0.0,
                    help="the device copy bandwidth (read + write); default: print no time ratio")
    a = ap.parse_args()
    dim, B, nf, tiles = read_run(a.run)
    cells = B ** dim
    per_tile = META + 4 * nf * cells
    steps = [k for k in read_ncu(a.ncu) if re.match(r"(void )?refineStep\b", k["name"])]
    L = min(tiles) if tiles else 1
    print(f"{dim}D tile {B}, {nf} field(s): {per_tile} floor bytes per new tile")
    print("level  new tiles  floor MB  DRAM rd MB  DRAM wr MB  (rd+wr)/floor  us  x floor-time"
          "  ld sect/req  st sect/req  DRAM %  warps %")
    for k in steps:
        n = tiles.get(L, 0)
        fb = n * per_tile / 1e6
        rd, wr = k.get("dram__bytes_read.sum", 0) / 1e6, k.get("dram__bytes_write.sum", 0) / 1e6
        us = k.get("gpu__time_duration.sum", 0)
        xt = (us / (fb / a.copy_gbps * 1e-3 * 1e6)) if a.copy_gbps and fb else 0
        ld = k.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 0) / max(
            k.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 0), 1)
        st = k.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0) / max(
            k.get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 0), 1)
        print(f"{L:5d}  {n:9d}  {fb:8.1f}  {rd:10.1f}  {wr:10.1f}  {(rd + wr) / fb if fb else 0:13.2f}  "
              f"{us:4.0f}  {xt:12.2f}  {ld:11.2f}  {st:11.2f}  "
              f"{k.get('dram__throughput.avg.pct_of_peak_sustained_elapsed', 0):6.1f}  "
              f"{k.get('sm__warps_active.avg.pct_of_peak_sustained_active', 0):7.1f}")
        L += 1


if __name__ == "__main__":
    main()
