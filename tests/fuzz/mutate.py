#!/usr/bin/python3
"""mutate.py DPAMR SRC WORKDIR [--cases N] [--seed S] [--timeout T] - a mutation campaign against the
dpamr program (not run by ctest; docs/testing.md gives its figures).

Mutated decks (byte flips, inserted and deleted bytes and lines, numbers replaced by extreme values,
line endings changed, duplicated and truncated lines) go to `dpamr mesh` and `dpamr run`; mutated
meshes (the shipped level-0 meshes) to `dpamr run` and `dpamr check`; mutated run outputs to
`dpamr check`. File mutations: 1 to 8 random bytes flipped, a byte of an object header changed,
a block zeroed, the file truncated or extended. Every command runs under a timeout. Findings:
  crash         killed by a signal (or a sanitizer's report in a sanitizer build)
  hang          still running after the timeout
  silent        `check` exits 0 on a changed file whose datasets or checked attributes differ from
                the original (the changes check cannot see: /dpamr/provenance timings and labels, and
                bytes nothing reads)
  no message    a non-zero exit with nothing on stderr (nor "FAILED" from check's validation on stdout)
Prints the counts and exits 1 when any finding; reproducers are kept under WORKDIR/findings."""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("dpamr")
ap.add_argument("src")
ap.add_argument("work")
ap.add_argument("--cases", type=int, default=500, help="cases per kind (decks, meshes, outputs)")
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--timeout", type=float, default=20.0)
a = ap.parse_args()
rng = random.Random(a.seed)
work = os.path.abspath(a.work)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work + "/findings")
env = dict(os.environ, OMP_NUM_THREADS="1")
counts = {}
findings = []

# provenance values nothing derived from the data can confirm (check_tamper.py): changes there are
# not silent accepts
UNCHECKED = {"version", "pdl", "load_ms", "refine_ms", "validate_ms", "level_ms", "device_launches",
             "launch_failures", "pool_size", "upload_ms", "download_ms", "total_ms", "commit", "build", "compiler",
             "cuda", "device", "host", "date", "threads"}


def count(key):
    counts[key] = counts.get(key, 0) + 1


def run(cmd, label, files):
    """Run cmd; classify crash, hang, no message. Returns (rc, stderr) or None on a finding."""
    count("commands")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=a.timeout, env=env,
                           cwd=work)
    except subprocess.TimeoutExpired:
        return finding("hang", label, cmd, files, "")
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0 or p.returncode >= 128 or "Sanitizer" in err or "runtime error:" in err:
        return finding("crash", label, cmd, files, err)
    # `check` reports failed validation on stdout ("validation: FAILED (...)"), everything else on stderr
    if p.returncode != 0 and not err.strip() and b"FAILED" not in p.stdout:
        return finding("no message", label, cmd, files, err)
    count("%s: exit %d" % (label, min(p.returncode, 2)))
    return p.returncode, err


def finding(kind, label, cmd, files, err):
    count(kind)
    n = len(findings)
    keep = []
    for f in files:
        dst = "%s/findings/%d_%s" % (work, n, os.path.basename(f))
        shutil.copyfile(f, dst)
        keep.append(dst)
    findings.append((kind, label, " ".join(cmd), keep, err.strip().splitlines()[-1:] if err else []))
    return None


# ---- decks -------------------------------------------------------------------------------------
NUMS = ["0", "-1", "1e308", "-1e308", "nan", "inf", "-inf", "4294967296", "99999999999999999999", "1e-320", "0x10",
        "", "1 2 3 4", "3.5", "-0"]


kinds = []  # the mutations mutate_text made to the last deck


def mutate_text(t):
    if not t:
        return b"\n" if rng.random() < 0.5 else b""
    lines = t.split("\n")
    k = rng.randrange(9)
    kinds.append(k)
    if k == 0:  # flip bytes
        b = bytearray(t.encode())
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b)
    if k == 1:  # a number replaced
        nums = [(i, m) for i, l in enumerate(lines) for m in re.finditer(r"-?\d+(\.\d*)?(e-?\d+)?", l)]
        if nums:
            i, m = rng.choice(nums)
            lines[i] = lines[i][:m.start()] + rng.choice(NUMS) + lines[i][m.end():]
    elif k == 2:  # a line deleted or duplicated
        i = rng.randrange(len(lines))
        if rng.random() < 0.5:
            del lines[i]
        else:
            lines.insert(i, lines[i])
    elif k == 3:  # line endings
        return t.replace("\n", rng.choice(["\r", "\r\n", "\n\r", "\n\n"])).encode()
    elif k == 4:  # random bytes inserted
        b = bytearray(t.encode())
        i = rng.randrange(len(b) + 1)
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return bytes(b)
    elif k == 5:  # truncated
        return t.encode()[:rng.randrange(len(t) + 1)]
    elif k == 6:  # a value replaced by a long or odd token
        i = rng.randrange(len(lines))
        if "=" in lines[i]:
            key = lines[i].split("=")[0]
            lines[i] = key + "= " + rng.choice(["x" * rng.randint(1, 5000), '"a b"', "'", "\"", "\\", "=", "#",
                                               "vtkGhostType", "a" * 64, "rho rho", " ".join(["f"] * 9)])
    elif k == 7:  # a key misspelt or an unknown key
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(["tile_sise = 8", "= 3", "max_level", "model.x.type = cube",
                                                                  "model.objects = a a", "dim = 4"]))
    else:  # two mutations
        return mutate_text(mutate_text(t).decode("utf-8", "replace"))
    return "\n".join(lines).encode()


same_mesh = {}  # base deck -> contents of its mesh


def decks():
    base = [f for f in ("default", "model2d", "sphere3d", "blob3d")]
    for c in range(a.cases):
        name = rng.choice(base)
        text = open("%s/inputs/%s.inp" % (a.src, name)).read()
        text = re.sub(r"(?m)^mesh_file.*$", "mesh_file = %s/inputs/%s.mesh.hdf" % (a.src, name), text)
        text = re.sub(r"(?m)^max_level\s*=.*$", "max_level = 3", text)  # keep runs short
        deck = "%s/deck_%d.inp" % (work, c)
        del kinds[:]
        open(deck, "wb").write(mutate_text(text))
        count("decks")
        out = "%s/deck_out.hdf" % work
        r = run([a.dpamr, "mesh", deck, "mesh_file=" + out], "deck -> mesh", [deck])
        if r is not None and r[0] == 0 and kinds == [3]:
            # only the line endings changed (CR, CRLF, LFCR, blank lines): the same mesh, or a finding
            if name not in same_mesh:
                ref = "%s/ref_%s.hdf" % (work, name)
                open(deck + ".ref", "w").write(text)
                subprocess.run([a.dpamr, "mesh", deck + ".ref", "mesh_file=" + ref], check=True,
                               stdout=subprocess.DEVNULL, env=env)
                same_mesh[name] = contents(ref)
                os.remove(deck + ".ref")
            got, want = contents(out), same_mesh[name]
            count("deck -> mesh: line endings changed, accepted")
            if got is None or {k: v for k, v in got.items() if k != "/dpamr/deck"} != \
                    {k: v for k, v in want.items() if k != "/dpamr/deck"}:
                finding("silent", "deck -> mesh: other line endings gave another mesh", ["mesh", deck], [deck], "")
        r = run([a.dpamr, "run", deck, "variant=cpu", "output=" + out], "deck -> run", [deck])
        for f in (deck, out):
            if os.path.exists(f):
                os.remove(f)


# ---- files -------------------------------------------------------------------------------------
FILE_KINDS = ("bits flipped", "bytes replaced", "object header byte", "block zeroed", "truncated", "extended")
file_kind = [0]


def mutate_file(data):
    b = bytearray(data)
    k = rng.randrange(6)
    file_kind[0] = k
    if k == 0 or k == 1:  # random bytes
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256) if k else b[i] ^ (1 << rng.randrange(8))
    elif k == 2:  # a byte of an object header (metadata)
        heads = [m.start() for m in re.finditer(b"OHDR|OCHK", data)]
        if heads:
            i = rng.choice(heads) + rng.randrange(4, 64)
            if i < len(b):
                b[i] ^= 1 << rng.randrange(8)
    elif k == 3:  # a block zeroed
        i = rng.randrange(len(b))
        n = rng.randint(1, 512)
        b[i:i + n] = bytes(len(b[i:i + n]))
    elif k == 4:  # truncated
        b = b[:rng.randrange(len(b))]
    else:  # extended
        b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096)))
    return bytes(b)


def tob(v):
    v = np.asarray(v)
    return repr(v.tolist()) if v.dtype.kind == "O" else v.tobytes()


def contents(path):
    """Datasets and checked attributes of path as {name: bytes}, reached by name from the root group as
    dpamr reads them, or None when h5py cannot read one of them. (Metadata dpamr never reads, e.g. the
    free-space manager of a fractal heap that holds many attributes, is not compared: H5Ovisit, which
    h5py's visit() calls, reads it to size the metadata, so it is not used.)"""
    out = {}

    def walk(g, path):
        for k, v in g.attrs.items():
            if not (path == "/dpamr/provenance" and k in UNCHECKED):
                out["%s@%s" % (path, k)] = tob(v)
        if isinstance(g, h5py.Dataset):
            if not path.startswith("/dpamr/provenance"):
                out[path] = tob(g[()])
            return
        for n in g.keys():
            walk(g[n], path.rstrip("/") + "/" + n)
    try:
        with h5py.File(path, "r") as f:
            walk(f, "/")
    except Exception:
        return None
    return out


def files(kind, originals, commands):
    for c in range(a.cases):
        deck, orig = rng.choice(originals)
        data = open(orig, "rb").read()
        mut = "%s/%s_%d.hdf" % (work, kind, c)
        new = mutate_file(data)
        if new == data:
            continue
        open(mut, "wb").write(new)
        count(kind)
        for label, cmd in commands(deck, mut):
            r = run(cmd, label, [mut])
            if r is None or r[0] != 0 or cmd[1] != "check":
                continue
            got, want = contents(mut), contents(orig)
            if got is not None and got == want:
                count("check accepts a change nothing reads: " + FILE_KINDS[file_kind[0]])
                continue
            diff = "h5py cannot read the file" if got is None else ", ".join(
                sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))[:5])
            finding("silent", label + " (" + diff + ")", cmd, [mut], "")
        out = "%s/out.hdf" % work
        for f in (mut, out):
            if os.path.exists(f):
                os.remove(f)


names = ("default", "model2d", "sphere3d", "blob3d")
meshes = [("%s/inputs/%s.inp" % (a.src, n), "%s/inputs/%s.mesh.hdf" % (a.src, n)) for n in names]
outputs = []
for n in names:
    o = "%s/orig_%s.hdf" % (work, n)
    subprocess.run([a.dpamr, "run", "%s/inputs/%s.inp" % (a.src, n), "variant=cpu", "max_level=3", "output=" + o],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    outputs.append((None, o))
print("mutate.py: %d cases per kind, seed %d, timeout %g s" % (a.cases, a.seed, a.timeout), flush=True)
decks()
files("meshes", meshes, lambda d, m: [("mesh -> run", [a.dpamr, "run", d, "variant=cpu", "max_level=3",
                                                      "mesh_file=" + m, "output=%s/out.hdf" % work]),
                                      ("mesh -> check", [a.dpamr, "check", m])])
files("outputs", outputs, lambda d, o: [("output -> check", [a.dpamr, "check", o])])
for k in sorted(counts):
    print("  %-40s %d" % (k, counts[k]))
for kind, label, cmd, keep, err in findings:
    print("FINDING %s: %s: %s (%s) %s" % (kind, label, cmd, " ".join(keep), " ".join(err)))
print("mutate.py: %d findings" % len(findings))
sys.exit(1 if findings else 0)
