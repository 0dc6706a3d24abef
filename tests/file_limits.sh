#!/bin/bash
# file_limits.sh DPAMR DECK WORKDIR - sizes are checked before memory is taken: small files that
# declare 5e7 tiles (tests/file_limits.py), attributes with empty (null) dataspaces, and a level 0
# larger than the machine are refused at once (under 10 s and 1 GB), with a message naming the file,
# the object and the size.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
"$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf" >/dev/null
$py "$tests/file_limits.py" "$work/mesh.hdf" "$work" "$tests/data/v1/default.mesh.hdf"

# refused: exit non-zero within 10 s, under 1 GB (when /usr/bin/time can tell), stderr matching WANT
refused() {
    local what=$1 want=$2
    shift 2
    local rc=0
    if [ -x /usr/bin/time ]; then
        timeout -k 5 10 /usr/bin/time -o "$work/time" -f "%M" "$@" >"$work/out" 2>"$work/err" || rc=$?
    else
        timeout -k 5 10 "$@" >"$work/out" 2>"$work/err" || rc=$?
    fi
    local kb
    kb=$(tail -1 "$work/time" 2>/dev/null || echo 0)
    if timed_out "$rc"; then fail "$what: not refused within 10 s"
    elif [ "$rc" -eq 0 ]; then fail "$what: accepted"
    elif ! grep -q -- "$want" "$work/err"; then fail "$what: message does not say '$want':"; cat "$work/err"
    elif [ "${kb:-0}" -gt 1048576 ]; then fail "$what: took $kb KB"
    else echo "ok   $what (${kb} KB): $(head -1 "$work/err" | cut -c1-200)"
    fi
}
refused "5e7-row tiles/parent" "big_level.hdf: /dpamr/tiles/parent declares 400000000 bytes" "$dpamr" check "$work/big_level.hdf"
refused "5e7 rows everywhere" "big_all.hdf: /dpamr/tiles/parent declares" "$dpamr" check "$work/big_all.hdf"
refused "5e7 compressed rows" "big_gzip.hdf: .*deflate" "$dpamr" check "$work/big_gzip.hdf"
refused "5e7 rows everywhere, format version 1" "big_all_v1.hdf: /dpamr/tiles/level declares 200000000 bytes" \
    "$dpamr" check "$work/big_all_v1.hdf"
refused "5e7 rows as a mesh to run" "big_all.hdf: /dpamr/tiles/parent declares" "$dpamr" run "$deck" \
    mesh_file="$work/big_all.hdf" output="$work/o.hdf"
refused "null @format_version" "null_version.hdf: attribute /dpamr@format_version has an empty (null) dataspace" \
    "$dpamr" check "$work/null_version.hdf"
refused "null @dim" "null_dim.hdf: attribute /dpamr@dim has an empty (null) dataspace" "$dpamr" check "$work/null_dim.hdf"
refused "null @origin" "null_origin.hdf: attribute /dpamr@origin has an empty (null) dataspace" \
    "$dpamr" check "$work/null_origin.hdf"
refused "a 2 GB /dpamr/deck declared" "big_deck.hdf: /dpamr/deck declares 2000000000 bytes and the file stores 0" \
    "$dpamr" check "$work/big_deck.hdf"
refused "a damaged /dpamr object header" "damaged_header.hdf: /dpamr cannot be opened: its object header is damaged" \
    "$dpamr" check "$work/damaged_header.hdf"
# a 3D root of 2^21 tiles per axis, the most the header allows (the Morton key): 2^63 root tiles, one
# past int64, named as a number (the product overflowed: a negative count, UB) for check and run
printf 'dim = 3\nroot = 1 1 1\ntile_size = 4\nmax_level = 1\nmodel.objects = b\nmodel.b.type = sphere\nmodel.b.center = 0.5 0.5 0.5\nmodel.b.radius = 0.25\n' >"$work/d3.inp"
"$dpamr" mesh "$work/d3.inp" mesh_file="$work/huge_root.hdf" >/dev/null
$py -c 'import sys, h5py; h5py.File(sys.argv[1], "r+")["dpamr"].attrs["root"] = [2**21] * 3' "$work/huge_root.hdf"
refused "a 3D root of 2^21 x 2^21 x 2^21 tiles" \
    "huge_root.hdf: level 0 has 1 tiles, expected root 2097152x2097152x2097152 = 9223372036854775808, more tiles" \
    "$dpamr" check "$work/huge_root.hdf"
refused "the same root as a mesh to run" "huge_root.hdf: level 0 has 1 tiles, expected root .* = 9223372036854775808" \
    "$dpamr" run "$work/d3.inp" mesh_file="$work/huge_root.hdf" output="$work/o.hdf"
refused "a level 0 larger than the machine" "level 0 does not fit in memory: .* GB asked, the machine has" \
    "$dpamr" mesh "$deck" root="65536 65536" tile_size=32 mesh_file="$work/huge.hdf"
test ! -e "$work/huge.hdf" || fail "a refused mesh was written"
finish file_limits
