#!/usr/bin/env python3
"""ab_table.py OUT DECK[:key=v,...]... - the table of tools/gpu_ab.sh from the benches' JSON under OUT
(OUT/a/NAME_ROUND.json, OUT/b/NAME_ROUND.json): every variant's median per round and tree and the
ratio B / A. Works on whatever rounds are there, so a call cut short still gives a table
(tools/gpu_exp_round.sh runs it again after a cut)."""
import json, os, statistics, sys
out, decks = sys.argv[1], [os.path.basename(a.split(':')[0])[:-4] for a in sys.argv[2:]]
LEVELS = {}  # (deck, side, variant) -> [per round: the level medians] (refinement decks)
def samples(path, deck, side):
    """variant label -> every timed sample (refine ms, or regrid ms of every step)"""
    d, s = json.load(open(path)), {}
    for r in d['rows']:
        label = r['variant'] + (' ' + r['grain'] if r.get('grain') else '') + \
            (str(r['group']) if r.get('grain') == 'group' else '') + ' pdl=' + r['pdl']
        s.setdefault(label, []).extend(r.get('refine_samples_ms') or r.get('regrid_samples_ms') or [])
        if isinstance(r.get('level_ms'), list) and r['level_ms']:
            LEVELS.setdefault((deck, side, label), []).append(r['level_ms'])
    return s, d.get('commit', '?'), 'steps' in d
def load(path, deck, side):
    try:
        return samples(path, deck, side)
    except (OSError, ValueError, KeyError) as e:  # a bench cut while writing, or failed
        print(f'{path}: not read ({e})')
        return None
for deck in dict.fromkeys(decks):
    sides = {}
    for side in 'ab':
        got = [g for k in (1, 2) if os.path.exists(f'{out}/{side}/{deck}_{k}.json')
               for g in [load(f'{out}/{side}/{deck}_{k}.json', deck, side)] if g]
        if not got:
            continue
        merged = {}
        for s, _, _ in got:
            for k, v in s.items():
                merged.setdefault(k, []).append(statistics.median(v))
        sides[side] = (merged, got[0][1], got[0][2])
    if len(sides) < 2:
        print(f'{deck}: a bench failed or was not run, no comparison')
        continue
    (A, ca, steps), (B, cb, _) = sides['a'], sides['b']
    what = 'regrid ms per step' if steps else 'refine ms'
    print(f'\n{deck}: {what}, median per round (round 1, round 2); A = {ca}, B = {cb}')
    print(f'{"variant":28s} {"A":>17s} {"B":>17s} {"B / A":>7s}')
    for k in A:
        if k not in B:
            continue
        a, b = statistics.median(A[k]), statistics.median(B[k])
        fa = ', '.join(f'{x:.3f}' for x in A[k])
        fb = ', '.join(f'{x:.3f}' for x in B[k])
        print(f'{k:28s} {fa:>17s} {fb:>17s} {b / a:7.3f}')
    # per level (refinement decks): the median over rounds of each level's median, A and B, in ms
    for k in A:
        la, lb = LEVELS.get((deck, 'a', k)), LEVELS.get((deck, 'b', k))
        if not la or not lb or len(la[0]) != len(lb[0]):
            continue
        ma = [statistics.median(r[i] for r in la) for i in range(len(la[0]))]
        mb = [statistics.median(r[i] for r in lb) for i in range(len(lb[0]))]
        print(f'  {k} per level, A: ' + ' '.join(f'{x:.4f}' for x in ma))
        print(f'  {" " * len(k)}            B: ' + ' '.join(f'{x:.4f}' for x in mb))
