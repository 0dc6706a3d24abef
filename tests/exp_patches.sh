#!/bin/bash
# exp_patches.sh LINT CC CORE_LIB - the device experiments of tools/exp/ still apply to this tree, in
# order (the diagnostic ones, *diag*.patch, each to this tree alone, as next.sh applies them); the
# patched tree passes the launch lint (rule CU-LAUN0002), and its test_core (the shared host/device
# functions, which a patch may add to and test) builds with CC against CORE_LIB and passes. A patch
# that no longer applies is an experiment the next device session cannot run (tools/exp/README.md).
# Needs git (git apply works outside a repository); exit 77 (skipped) without it or without patches
# and base diffs.
source "$(dirname "$0")/lib.sh"
lint=${1:?usage: exp_patches.sh LINT CC CORE_LIB} cc=${2:?} core_lib=${3:?}
root=$(cd "$tests/.." && pwd)
command -v git >/dev/null || { echo "exp_patches: no git: skipped"; exit 77; }
shopt -s nullglob
patches=() diags=()
for p in "$root"/tools/exp/*.patch; do
    case $(basename "$p") in *diag*) diags+=("$p") ;; *) patches+=("$p") ;; esac
done
bases=("$root"/tools/exp/base/*.diff "${diags[@]}")
[ ${#patches[@]} -gt 0 ] || [ ${#bases[@]} -gt 0 ] || { echo "exp_patches: no patches or base diffs in tools/exp: skipped"; exit 77; }
tmp_dir
cp -r "$root/src" "$root/device" "$root/tests" "$root/io" "$tmp/"
# the diffs that give an earlier state of the tree for an A/B of landed changes (quick_ab.sh's
# A_DIFF) and the diagnostic patches: each applies to this tree alone
for p in "${bases[@]}"; do
    if (cd "$tmp" && git apply --check "$p") 2>"$tmp/apply.log"; then
        echo "applies alone: ${p#$root/}"
    else
        fail "${p#$root/} does not apply to this tree: $(head -3 "$tmp/apply.log")"
    fi
done
for p in "${patches[@]}"; do
    if (cd "$tmp" && git apply "$p") 2>"$tmp/apply.log"; then
        echo "applies: ${p#$root/}"
    else
        fail "${p#$root/} does not apply after the patches before it: $(head -3 "$tmp/apply.log")"
    fi
done
"$lint" --exclude "$tmp/tests/lint" "$tmp/device" "$tmp/src" >"$tmp/lint.log" 2>&1 ||
    fail "the patched tree fails the launch lint: $(head -5 "$tmp/lint.log")"
"$cc" -std=c11 -O2 -Wall -Wextra -ffp-contract=off -fno-fast-math -fno-trapping-math -I"$tmp" \
    -o "$tmp/test_core" "$tmp/tests/test_core.c" "$core_lib" -lm >"$tmp/cc.log" 2>&1 ||
    fail "the patched test_core does not build: $(head -5 "$tmp/cc.log")"
if [ -x "$tmp/test_core" ]; then
    "$tmp/test_core" "$tmp" >"$tmp/core.log" 2>&1 || fail "the patched test_core fails: $(grep -m3 failed "$tmp/core.log")"
    echo "patched test_core: $(tail -1 "$tmp/core.log")"
fi
finish exp_patches
