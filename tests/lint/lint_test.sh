#!/bin/bash
# One cu-launch-lint case: run the tool with --json on CASE and check its output and exit status
# against the expectations written in CASE's own comments:
#   // expect: {"line": N, "kernel": ..., "grid": ..., "block": ..., "function": ..., "result": B}
#       one line per launch, in the order the tool reports them ("file" is CASE itself);
#   // expect-exit: N      the exit status;
#   // expect-args: ARGS   extra command-line arguments (optional).
# The JSON must parse, every launch must be expected, every expectation met, in order.
# usage: lint_test.sh TOOL CASE
set -u
tool=$1 case=$2
[ -x "$tool" ] || { echo "FAIL: no tool at $tool"; exit 1; }
[ -r "$case" ] || { echo "FAIL: no case file $case"; exit 1; }
args=$(sed -n 's|^// expect-args: *||p' "$case")
source "$(dirname "$0")/../lib.sh"
tmp_dir
out=$tmp/out
# shellcheck disable=SC2086
"$tool" --json $args "$case" >"$out"
rc=$?
python3 - "$case" "$out" "$rc" <<'PY'
import json, re, sys
case, out, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(case, encoding="utf-8").read()
want = [json.loads(m) for m in re.findall(r"^// expect: (.*)$", text, re.M)]
exits = re.findall(r"^// expect-exit: *(\d+) *$", text, re.M)
fail = []
if len(exits) != 1:
    sys.exit(f"FAIL: {case}: needs exactly one '// expect-exit:' line")
for w in want:
    w["file"] = case
try:
    got = json.loads(open(out, encoding="utf-8").read())
except ValueError as e:
    sys.exit(f"FAIL: {case}: the output is not JSON: {e}\n" + open(out, encoding="utf-8", errors="replace").read())
if not isinstance(got, list) or not all(isinstance(g, dict) for g in got):
    sys.exit(f"FAIL: {case}: the output is not an array of objects")
keys = {"file", "line", "kernel", "grid", "block", "function", "result"}
for g in got:
    if set(g) != keys:
        fail.append(f"fields {sorted(g)} != {sorted(keys)}")
    if not isinstance(g.get("result"), bool) or not isinstance(g.get("line"), int):
        fail.append(f"result must be a Boolean and line an integer: {g}")
for i in range(max(len(want), len(got))):
    w = want[i] if i < len(want) else None
    g = got[i] if i < len(got) else None
    if w != g:
        fail.append(f"launch {i + 1}:\n    expected {json.dumps(w)}\n    got      {json.dumps(g)}")
if rc != int(exits[0]):
    fail.append(f"exit status {rc}, expected {exits[0]}")
if want and rc != (1 if any(w["result"] for w in want) else 0):
    fail.append("the expected exit status disagrees with the expected results")
if fail:
    print(f"FAIL: {case}")
    for f in fail:
        print("  " + f)
    sys.exit(1)
print(f"ok: {case}: {len(got)} launch(es), exit {rc}")
PY
