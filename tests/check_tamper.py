#!/usr/bin/python3
"""check_tamper.py DPAMR GOOD.hdf WORKDIR [--format-1] - every change to a file dpamr wrote makes `dpamr check` fail.

GOOD.hdf is a file from `dpamr run` or `dpamr mesh` that `dpamr check` accepts. On copies of it:
  - every dataset: one bit flipped in the first, a middle and the last element (the deck: a byte of
    a value and a byte of its comment line; the rank table: a count) -> exit 2 and a message;
  - every attribute checked against the data (all but the timings and labels of
    /dpamr/provenance, which nothing can recompute): its value changed -> exit 2 and a message;
  - every attribute but the optional provenance (OPTIONAL below) deleted -> non-zero exit and a message;
  - every group and every dataset deleted -> non-zero exit and a message;
  - a group added to /VTKHDF (a level past the tiles', a misnamed level, another name) -> exit 2.
With --format-1 (a file in format version 1), the recorded checksums (checksum_hash, checksum_sum,
tree_hash, total_hash) are of the definition before the GPU validator and `check` does not compare
their values (docs/format.md): they must be present, and changes to their values are not cases.
Prints one line per case and exits 1 naming the failures, else 0."""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

dpamr, good, work = sys.argv[1], sys.argv[2], sys.argv[3]
format1 = "--format-1" in sys.argv[4:]
fails = []
cases = 0

# provenance attributes nothing derived from the data can confirm (timings, labels)
UNCHECKABLE = {"/dpamr/provenance@" + a for a in ("version", "pdl", "load_ms", "refine_ms", "validate_ms",
                                                   "level_ms", "device_launches", "launch_failures", "pool_size")}
# provenance of the run and the build (issue 16), newer than the file format: optional, so files
# written before them still check; nothing can confirm their values either
OPTIONAL = {"/dpamr/provenance@" + a for a in ("level_ms", "upload_ms", "download_ms", "total_ms", "commit", "build",
                                                "compiler", "cuda", "device", "host", "date", "threads")}
UNCHECKABLE |= OPTIONAL
# a format-1 file's checksum values: present, not compared
VALUE_UNCHECKED = {"/dpamr/validation@tree_hash", "/dpamr/validation@total_hash", "/dpamr/validation/checksum_hash",
                   "/dpamr/validation/checksum_sum"} if format1 else set()
UNCHECKABLE |= {k for k in VALUE_UNCHECKED if "@" in k}


def check(label, copy, want_rc):
    """Run dpamr check on copy: want_rc 2 (a difference) or None (any non-zero exit), and a message."""
    global cases
    cases += 1
    p = subprocess.run([dpamr, "check", copy], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="replace", timeout=60)
    msg = p.stderr.strip().splitlines()
    ok = p.returncode != 0 and (want_rc is None or p.returncode == want_rc) and p.returncode < 128
    ok = ok and msg and "dpamr: error:" in msg[-1] and copy in msg[-1]
    print("%s %-60s rc=%d  %s" % ("ok  " if ok else "FAIL", label, p.returncode, msg[-1][:220] if msg else "(no message)"))
    if not ok:
        fails.append(label)


def fresh(tag):
    path = os.path.join(work, "t_%s.hdf" % tag)
    shutil.copyfile(good, path)
    return path


def flip(a, i):
    """a copy of array a with the lowest bit of element i's first byte flipped"""
    a = np.array(a)
    raw = a.reshape(-1).view(np.uint8)
    raw[i * a.dtype.itemsize] ^= 1
    return a


objects = {}  # path -> "group" | "dataset"
attrs = []    # (object path, attribute name)
with h5py.File(good, "r") as f:
    def visit(name, obj):
        objects["/" + name] = "group" if isinstance(obj, h5py.Group) else "dataset"
    f.visititems(visit)
    for path in ["/"] + sorted(objects):
        for a in f[path].attrs:
            attrs.append((path, a))

n = 0
for path, kind in sorted(objects.items()):
    if kind != "dataset":
        continue
    with h5py.File(good, "r") as f:
        d = f[path]
        size, dtype = d.size, d.dtype
    if path == "/dpamr/deck":
        with h5py.File(good, "r") as f:
            text = f[path][()]
        # (a value the check depends on: a key that changes nothing, such as output, cannot be told
        # from the one written, as no hash of the deck is recorded)
        for what, edit in (("a value", lambda t: t.replace(b"root = 4 4", b"root = 4 2", 1)),
                           ("the comment", lambda t: t.replace(b"effective", b"effectivf", 1))):
            n += 1
            copy = fresh(n)
            with h5py.File(copy, "r+") as f:
                f[path][()] = edit(text)
            check("%s: %s edited" % (path, what), copy, 2)
        continue
    if dtype.names:  # the rank table: a count (its timings are not derived from the data)
        n += 1
        copy = fresh(n)
        with h5py.File(copy, "r+") as f:
            t = f[path][()]
            t["tiles"][0] += 1
            f[path][...] = t
        check("%s: tiles[0] + 1" % path, copy, 2)
        continue
    for i in sorted({0, size // 2, size - 1}):
        if size == 0 or path in VALUE_UNCHECKED:
            break
        n += 1
        copy = fresh(n)
        with h5py.File(copy, "r+") as f:
            d = f[path]
            d[...] = flip(d[()], i).reshape(d.shape)
        check("%s: bit flipped in element %d" % (path, i), copy, 2)

for path, a in attrs:
    key = "%s@%s" % (path, a)
    if key in UNCHECKABLE:
        continue
    n += 1
    copy = fresh(n)
    with h5py.File(copy, "r+") as f:
        obj = f[path]
        aid = h5py.h5a.open(obj.id, a.encode())
        dtype, v = aid.dtype, obj.attrs[a]
        if dtype.kind == "S":
            s = bytes(v) if not isinstance(v, bytes) else v
            v = (s[:-1] + bytes([s[-1] ^ 1])) if s else b"x"
            dtype = np.dtype("S%d" % max(len(v), 1))
        elif dtype.kind == "O":
            v = (v + "x") if isinstance(v, str) else v
        else:
            v = flip(v, 0)
        shape = aid.shape
        aid.close()
        del obj.attrs[a]
        obj.attrs.create(a, np.array(v, dtype=dtype).reshape(shape) if dtype.kind != "O" else v, dtype=dtype)
    check("%s: value changed" % key, copy, 2)

for path, a in attrs:
    key = "%s@%s" % (path, a)
    if key in OPTIONAL:
        continue
    n += 1
    copy = fresh(n)
    with h5py.File(copy, "r+") as f:
        del f[path].attrs[a]
    check("%s: deleted" % key, copy, None)

for path, kind in sorted(objects.items()):
    n += 1
    copy = fresh(n)
    with h5py.File(copy, "r+") as f:
        del f[path]
    check("%s (%s): deleted" % (path, kind), copy, None)

# the stored (deflated) bytes of a chunk of vtkGhostType damaged in place, as a disk would: check
# inflates the chunks itself (in parallel) and must notice, as HDF5 would. The byte damaged is the
# last one, of the stream's checksum (adler32): a damaged back-reference in the middle of these
# periodic bytes can inflate to the very same cells, which is no damage to the data
with h5py.File(good, "r") as f:
    chunked = []
    f.visititems(lambda k, o: chunked.append(k) if isinstance(o, h5py.Dataset) and k.endswith("vtkGhostType")
                 and o.chunks and o.id.get_num_chunks() > 0 else None)
    where = [(k, f[k].id.get_chunk_info(f[k].id.get_num_chunks() - 1)) for k in chunked]
for k, info in where[-1:]:
    n += 1
    copy = fresh(n)
    with open(copy, "r+b") as fp:
        fp.seek(info.byte_offset + info.size - 1)
        b = fp.read(1)
        fp.seek(info.byte_offset + info.size - 1)
        fp.write(bytes([b[0] ^ 0x5A]))
    check("/%s: a byte of its last stored chunk damaged" % k, copy, 2)

# a member added to /VTKHDF (a level past the tiles', a misnamed level, anything else): a reader shows
# what it finds there
with h5py.File(good, "r") as f:
    nlev = len([k for k in f["VTKHDF"].keys() if k.startswith("Level")])
for extra in ("Level%d" % nlev, "Level%d" % (nlev + 1), "Level01", "Extra"):
    n += 1
    copy = fresh(n)
    with h5py.File(copy, "a") as f:
        f["VTKHDF"].create_group(extra)
    check("/VTKHDF/%s: added" % extra, copy, 2)

copy = fresh("untouched")
p = subprocess.run([dpamr, "check", copy], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
if p.returncode != 0:
    fails.append("the untouched copy: rc %d %s" % (p.returncode, p.stderr.strip()))
print("%d cases on %s, %d failed" % (cases, good, len(fails)))
if fails:
    print("FAILED: " + "; ".join(fails))
    sys.exit(1)
