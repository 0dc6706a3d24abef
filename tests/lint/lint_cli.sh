#!/bin/bash
# cu-launch-lint's command line: exit statuses, usage errors, unreadable paths, the text output,
# JSON escaping, and the directory walk (sorted, by extension, hidden entries and --exclude).
# usage: lint_cli.sh TOOL CASEDIR
set -u
tool=$1 cases=$2
source "$(dirname "$0")/../lib.sh"
tmp_dir
# expect_rc WANT DESCRIPTION -- COMMAND...: run COMMAND (stdout to $tmp/out, stderr to $tmp/err)
expect_rc() {
    local want=$1 what=$2
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "$what: exit $rc, expected $want"
        sed 's/^/    /' "$tmp/out" "$tmp/err"
    else
        echo "ok: $what (exit $rc)"
    fi
}
# json_check DESCRIPTION PYTHON-EXPRESSION: the expression over `got` (the parsed $tmp/out) must hold
json_check() {
    python3 - "$tmp/out" "$2" <<'PY' || fail "$1"
import json, sys
got = json.loads(open(sys.argv[1], encoding="utf-8").read())
if not eval(sys.argv[2]):
    print("  got:", json.dumps(got, indent=1))
    sys.exit(1)
PY
}

# ---- usage
expect_rc 2 "no arguments" -- "$tool"
grep -q "^usage: cu-launch-lint" "$tmp/err" || fail "no arguments: no usage line on stderr"
expect_rc 2 "unknown option" -- "$tool" --frobnicate "$cases/rule_bad.cu"
expect_rc 2 "--exclude without a directory" -- "$tool" "$cases/rule_bad.cu" --exclude
expect_rc 2 "--exclude of a missing directory" -- "$tool" --exclude "$tmp/nowhere" "$cases/rule_bad.cu"
expect_rc 0 "--help" -- "$tool" --help
grep -q "^usage: cu-launch-lint" "$tmp/out" || fail "--help: no usage on stdout"
expect_rc 0 "-h" -- "$tool" -h

# ---- unreadable paths: exit 2, and it wins over a true result; the JSON is still whole
expect_rc 2 "a missing file" -- "$tool" --json "$tmp/missing.cu"
json_check "a missing file: the output is []" 'got == []'
expect_rc 2 "a missing file next to a bad one" -- "$tool" --json "$cases/rule_bad.cu" "$tmp/missing.cu"
json_check "a missing file next to a bad one: the bad one is still reported" \
    'len(got) == 1 and got[0]["result"] is True'
mkdir -p "$tmp/dangling"
ln -s "$tmp/nowhere.cu" "$tmp/dangling/gone.cu"
expect_rc 2 "a dangling link in a directory" -- "$tool" "$tmp/dangling"

# ---- no launches: [] and exit 0; nothing on stdout without --json
printf '/* no launches */\nint main(void) { return 0; }\n' >"$tmp/none.c"
expect_rc 0 "no launches, --json" -- "$tool" --json "$tmp/none.c"
[ "$(cat "$tmp/out")" = "[]" ] || fail "no launches: --json printed '$(cat "$tmp/out")', expected []"
expect_rc 0 "no launches, text" -- "$tool" "$tmp/none.c"
[ -s "$tmp/out" ] && fail "no launches: text output is not empty"

# ---- the text output: one line per launch
expect_rc 1 "text output, rule's Bad example" -- "$tool" "$cases/rule_bad.cu"
want="$cases/rule_bad.cu:6: kernel scale<<<grid, block>>> in (file scope): default stream: true ("
case "$(cat "$tmp/out")" in "$want"*) echo "ok: text line" ;; *) fail "text line: got '$(cat "$tmp/out")'" ;; esac
[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "text output: not one line"
expect_rc 0 "text output, rule's Good example" -- "$tool" "$cases/rule_good.cu"
grep -q ": default stream: false (" "$tmp/out" || fail "text output, Good: no false result"

# ---- --per-thread turns the rule off everywhere
expect_rc 0 "--per-thread on the Bad example" -- "$tool" --json --per-thread "$cases/rule_bad.cu"
json_check "--per-thread: result false" 'len(got) == 1 and got[0]["result"] is False'

# ---- JSON escaping: a file name with a quote, a backslash and a tab
odd="$tmp/q\"u\\o	te.cu"
printf 'void f(cudaStream_t s) { k<<<g, b>>>(x); }\n' >"$odd"
expect_rc 1 "a file name that needs escaping" -- "$tool" --json "$odd"
python3 - "$tmp/out" "$odd" <<'PY' || fail "a file name that needs escaping: JSON"
import json, sys
got = json.loads(open(sys.argv[1], encoding="utf-8").read())
assert got[0]["file"] == sys.argv[2], got
PY

# ---- JSON stays valid UTF-8 when the source is not: bytes that are not UTF-8 become U+FFFD
printf 'void f(cudaStream_t s) { k<<<pick("\xff\xfe \xe2\x82\xac"), b>>>(x); }\n' >"$tmp/latin.cu"
expect_rc 1 "a source that is not UTF-8" -- "$tool" --json "$tmp/latin.cu"
json_check "a source that is not UTF-8: JSON" 'got[0]["grid"] == "pick(\"\ufffd\ufffd \u20ac\")"'

# ---- "--" ends the options
printf 'k<<<g, b>>>(x);\n' >"$tmp/-dash.cu"
expect_rc 0 "a file named like an option after --" -- bash -c 'cd "$1" && exec "$2" --json -- -dash.cu' _ "$tmp" "$tool"
json_check "after --: the file is read" 'len(got) == 1 and got[0]["file"] == "-dash.cu"'

# ---- directories: recursive, sorted, only .cu .cuh .c .cpp .h, hidden entries skipped
d="$tmp/tree"
mkdir -p "$d/b_dir" "$d/a_dir/deeper" "$d/.hidden" "$d/skip_me"
bad='void run(cudaStream_t s) { k<<<g, b>>>(x); }'
printf '%s\n' "$bad" >"$d/b_dir/one.cu"
printf '%s\n' "$bad" >"$d/a_dir/two.cuh"
printf '%s\n' "$bad" >"$d/a_dir/deeper/three.cpp"
printf '%s\n' "$bad" >"$d/a_dir/four.h"
printf '%s\n' "$bad" >"$d/a_dir/five.c"
printf '%s\n' "$bad" >"$d/a_dir/six.txt"
printf '%s\n' "$bad" >"$d/a_dir/seven.hpp.orig"
printf '%s\n' "$bad" >"$d/.hidden/eight.cu"
printf '%s\n' "$bad" >"$d/skip_me/nine.cu"
printf 'k<<<g, b>>>(x);\n' >"$d/zero.cu"
expect_rc 1 "a directory" -- "$tool" --json "$d"
json_check "a directory: the right files, sorted" \
    '[g["file"].split("/tree/")[1] for g in got] == ["a_dir/deeper/three.cpp", "a_dir/five.c", "a_dir/four.h",
        "a_dir/two.cuh", "b_dir/one.cu", "skip_me/nine.cu", "zero.cu"]'
expect_rc 1 "a directory with a trailing slash" -- "$tool" --json "$d/"
json_check "a trailing slash: no double slash" 'all("//" not in g["file"] for g in got) and len(got) == 7'
expect_rc 1 "--exclude one subdirectory" -- "$tool" --json --exclude "$d/skip_me" "$d"
json_check "--exclude: skip_me left out" 'len(got) == 6 and not any("skip_me" in g["file"] for g in got)'
expect_rc 0 "--exclude=DIR of everything with a true result" -- "$tool" --json "--exclude=$d/a_dir" \
    --exclude "$d/b_dir" "$d" --exclude "$d/skip_me"
json_check "--exclude, twice: only zero.cu" 'len(got) == 1 and got[0]["file"].endswith("/zero.cu")'
expect_rc 1 "a file named outright is read whatever its extension" -- "$tool" --json "$d/a_dir/six.txt"

# ---- all the cases as one directory: every expectation, in file order
expect_rc 1 "the case directory" -- "$tool" --json "$cases"
python3 - "$tmp/out" "$cases" <<'PY' || fail "the case directory: not the union of the cases' expectations"
import json, os, re, sys
got = json.loads(open(sys.argv[1], encoding="utf-8").read())
want = []
for name in sorted(os.listdir(sys.argv[2])):
    text = open(os.path.join(sys.argv[2], name), encoding="utf-8").read()
    if re.search(r"^// expect-args:", text, re.M):
        continue  # read with other options
    for m in re.findall(r"^// expect: (.*)$", text, re.M):
        w = json.loads(m)
        w["file"] = os.path.join(sys.argv[2], name)
        want.append(w)
got = [g for g in got if not g["file"].endswith("perthread_flag.cu")]
assert got == want, (len(got), len(want))
PY

finish lint_cli
