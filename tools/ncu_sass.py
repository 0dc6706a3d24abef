#!/usr/bin/env python3
"""ncu_sass.py CSV [TOP] - what one kernel's instructions cost, from Nsight Compute's SASS source page
(`ncu --import REP --page source --csv --print-source sass`, as tools/gpu_profile.sh writes it with
SOURCE=1): the warp stall reasons over all samples, the executed instructions by opcode, and the TOP
(default 25) instructions with the most stall samples, each with its executed count and its main
stall reasons. The sample counts are Nsight Compute's; nothing here is timed."""
import collections
import csv
import re
import sys


def num(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.reader(f))
    # the first row names the kernel, the second holds the columns
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    hdr, data = rows[head], rows[head + 1:]
    ix = {h: i for i, h in enumerate(hdr)}
    src, ex, smp = ix["Source"], ix["Instructions Executed"], ix["Warp Stall Sampling (All Samples)"]
    reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    print(" ".join(rows[0])[:160])
    total_ex = sum(num(r[ex]) for r in data)
    total_smp = sum(num(r[smp]) for r in data)
    print(f"{len(data)} instructions, {total_ex:.4g} warp instructions executed, {total_smp:.0f} stall samples")
    print("\nstall reasons (share of the samples):")
    per = {h: sum(num(r[ix[h]]) for r in data) for h in reasons}
    for h, v in sorted(per.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {h[6:]:18s} {v / max(total_smp, 1):6.1%}")
    print("\nexecuted instructions by opcode:")
    ops = collections.Counter()
    for r in data:
        m = re.match(r"\s*(@!?U?P\w+\s+)?([A-Z0-9_]+)", r[src])
        if m:
            ops[m.group(2)] += num(r[ex])
    for k, v in ops.most_common(15):
        print(f"  {k:10s} {v / max(total_ex, 1):6.1%}")
    print(f"\nthe {top} instructions with the most stall samples (index, samples, executed, stalls):")
    order = sorted(range(len(data)), key=lambda i: -num(data[i][smp]))[:top]
    for i in sorted(order):
        r = data[i]
        st = sorted(((h[6:], num(r[ix[h]])) for h in reasons if num(r[ix[h]]) > 0), key=lambda kv: -kv[1])[:3]
        stalls = ", ".join(f"{k} {v:.0f}" for k, v in st)
        print(f"  {i:5d} {num(r[smp]):7.0f} {num(r[ex]):10.0f}  {r[src].strip()[:48]:48s} {stalls}")


if __name__ == "__main__":
    main()
