#!/usr/bin/python3
"""file_format.py MODE ... - files in the HDF5 formats dpamr refuses, and damaged headers (tests/file_format.sh).

  file_format.py old GOOD.hdf OUT.hdf    OUT: GOOD's groups, datasets and attributes written again with
                                         h5py's default format (HDF5 1.6: superblock 0, version-1 object
                                         headers without checksums), as older tools and h5py write
  file_format.py mixed GOOD.hdf OUT.hdf  the same with the free-space manager kept in the file, which
                                         needs superblock 2 while the objects keep version-1 headers
  file_format.py headers FILE            the byte offsets of FILE's object headers and continuation
                                         chunks (signatures OHDR, OCHK), one a line
  file_format.py damage FILE OUTDIR      for every object header and continuation chunk of FILE
                                         (signatures OHDR, OCHK) at byte AT, OUTDIR/dmg_AT.hdf: FILE with
                                         the bits of byte AT + 12 (inside the checksummed part) flipped"""
import sys

import h5py


def rewrite(good, out, **kw):
    with h5py.File(good, "r") as src, h5py.File(out, "w", **kw) as dst:
        def copy_attrs(a, b):
            for k, v in a.attrs.items():
                b.attrs.create(k, v, dtype=a.attrs.get_id(k).dtype)

        def visit(name, obj):
            if isinstance(obj, h5py.Group):
                copy_attrs(obj, dst.create_group(name))
            else:
                d = dst.create_dataset(name, data=obj[()], dtype=obj.dtype)
                copy_attrs(obj, d)
        copy_attrs(src, dst)
        src.visititems(visit)


mode = sys.argv[1]
if mode == "old":
    rewrite(sys.argv[2], sys.argv[3])
elif mode == "mixed":
    rewrite(sys.argv[2], sys.argv[3], fs_strategy="fsm", fs_persist=True)
elif mode == "damage":
    data = open(sys.argv[2], "rb").read()
    for sig in (b"OHDR", b"OCHK"):
        at = data.find(sig)
        while at >= 0:
            bad = bytearray(data)
            bad[at + 12] ^= 0x5A
            with open("%s/dmg_%d.hdf" % (sys.argv[3], at), "wb") as fp:
                fp.write(bad)
            at = data.find(sig, at + 1)
else:
    sys.exit("file_format.py: unknown mode " + mode)
