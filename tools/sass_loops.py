#!/usr/bin/env python3
"""sass_loops.py DISASM FUNCTION [MAX]: the loops of one kernel in nvdisasm's output (-g -c -sf, with
line info): every backward branch's body, its size in instructions, its spill instructions (LDL,
STL) and the source lines it holds most, innermost loops first (bodies of at most MAX instructions,
default 1000). tools/sass_loops.sh runs it."""
import collections, re, sys

path, fn = sys.argv[1], sys.argv[2]
most = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
lines = open(path).read().split('\n')
starts = [i for i, l in enumerate(lines) if l.startswith('.text.' + fn + ':')]
if not starts:
    names = sorted({l[6:-1] for l in lines if l.startswith('.text.') and l.endswith(':')})
    sys.exit(f'sass_loops: no function {fn}; the file has:\n  ' + '\n  '.join(names))
s = starts[0]
e = next((i for i in range(s + 1, len(lines)) if lines[i].startswith('//-----')), len(lines))
src, labels, ins = '?', {}, []
for l in lines[s:e]:
    m = re.search(r'//## File "([^"]+)", line (\d+)', l)
    if m:
        src = m.group(1).split('/')[-1] + ':' + m.group(2)
        continue
    m = re.match(r'\s*(\.L_x_\d+):', l)
    if m:
        labels[m.group(1)] = len(ins)
        continue
    m = re.match(r'\s+/\*[0-9a-f]{4,}\*/\s+(.*?);', l)
    if m:
        ins.append((src, m.group(1).strip()))
spills = sum(1 for _, op in ins if re.search(r'\b(LDL|STL)\b', op))
print(f'{fn}: {len(ins)} instructions, {spills} spill instructions (LDL/STL)')
loops = []
for k, (_, op) in enumerate(ins):
    m = re.search(r'BRA `\((\.L_x_\d+)\)', op)
    if m and labels.get(m.group(1), k + 1) <= k:
        loops.append((labels[m.group(1)], k))
for a, b in sorted(loops, key=lambda x: x[1] - x[0]):
    if b - a + 1 > most:
        continue
    body = ins[a:b + 1]
    sp = [f'{x[0]} {x[1].split()[0]}' for x in body if re.search(r'\b(LDL|STL)\b', x[1])]
    top = ', '.join(f'{k}:{c}' for k, c in collections.Counter(x[0] for x in body).most_common(5))
    print(f'loop {a:5d}-{b:5d} {b - a + 1:5d} instructions, {len(sp)} spill: {top}')
    if sp:
        print('      spills: ' + ', '.join(sp))
