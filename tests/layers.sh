#!/bin/bash
# layers.sh NM [--main=OBJECT] NAME=LIBRARY=ALLOWED,... - the layers' dependencies point down
# (docs/design.md, "Layers"): no static library references an undefined symbol that only a library
# outside ALLOWED (the libraries its layer may use) defines. With --main, the object of src/main.c
# defines no global symbol but main: nothing calls into main.c. Reads the symbols with nm.
set -euo pipefail
nm=$1
shift
if [[ ${1:-} == --main=* ]]; then
    obj=${1#--main=}
    shift
    [ -f "$obj" ] || { echo "layers.sh: no object $obj"; exit 1; }
    extra=$("$nm" -g --defined-only "$obj" | awk 'NF >= 3 && $3 != "main" { print $3 }')
    if [ -n "$extra" ]; then
        echo "FAILED: src/main.c defines symbols others may call (nothing may call into main.c): $extra"
        exit 1
    fi
    echo "src/main.c: defines main only"
fi
declare -A lib allowed
names=()
for spec in "$@"; do
    IFS='=' read -r name path deps <<< "$spec"
    [ -f "$path" ] || { echo "layers.sh: $name: no library $path"; exit 1; }
    lib[$name]=$path
    allowed[$name]=",$name,$deps,"
    names+=("$name")
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# NAME.def: the global symbols a library defines; NAME.undef: those it needs from elsewhere
for name in "${names[@]}"; do
    "$nm" -g --defined-only "${lib[$name]}" | awk 'NF >= 3 { print $3 }' | sort -u > "$work/$name.def"
    "$nm" -u "${lib[$name]}" | awk 'NF >= 2 && $1 == "U" { print $2 }' | sort -u > "$work/$name.undef"
    if [ ! -s "$work/$name.def" ]; then
        echo "layers.sh: $name (${lib[$name]}) defines no symbol: nothing to check"
        exit 1
    fi
done
bad=0
for name in "${names[@]}"; do
    for owner in "${names[@]}"; do
        [ "$owner" = "$name" ] && continue
        # the symbols `name` needs that `owner` defines and no library `name` may use defines
        comm -12 "$work/$name.undef" "$work/$owner.def" > "$work/both"
        [ -s "$work/both" ] || continue
        while read -r sym; do
            ok=0
            for other in "${names[@]}"; do
                if [[ ${allowed[$name]} == *",$other,"* ]] && grep -qxF "$sym" "$work/$other.def"; then
                    ok=1
                    break
                fi
            done
            if [ $ok -eq 0 ]; then
                echo "dpamr_$name calls $sym, defined in dpamr_$owner: not a layer it may use (allowed:${allowed[$name]//,/ })"
                bad=1
            fi
        done < "$work/both"
    done
done
for name in "${names[@]}"; do
    echo "dpamr_$name: $(wc -l < "$work/$name.def") symbols defined, $(wc -l < "$work/$name.undef") needed; may use:$(echo "${allowed[$name]//,/ }" | sed "s/ $name / /")"
done
if [ $bad -ne 0 ]; then
    echo "FAILED: a library calls upward (or sideways into a library it does not declare)"
    exit 1
fi
echo "layers OK: every dependency points down"
