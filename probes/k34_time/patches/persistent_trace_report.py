#!/usr/bin/env python3
"""The persistent #34 kernel's tile-phase trace (persistent-phase-trace.patch): per tile 8 words,
smid, block, then %globaltimer's low 32 bits (ns) at: the tile's top (after the barrier), w phase 0's
k16 loop done (thread 0's warp), w phase 1's, the finish's start, its end, the next box converted.

  persistent_trace_report.py FILE

Prints the phases' medians and, per SM, the share of time with k blocks in their k16 loops
(sampled at 2000 instants of each SM's busy span): a convoy of an SM's blocks shows as time with 0
or 3 in their loops, staggered blocks as time with 2. Then each phase's duration by how many of
the SM's other blocks were in their loops meanwhile.
"""
import collections
import statistics as st
import struct
import sys

raw = open(sys.argv[1], "rb").read()
v = struct.unpack("<%dI" % (len(raw) // 4), raw)
rows = [v[8 * i:8 * i + 8] for i in range(len(v) // 8)]
rows = [r for r in rows if r[2] != 0]
base = min(r[2] for r in rows)
T = [(r[0], r[1]) + tuple(((t - base) % (1 << 32)) if t else None for t in r[2:]) for r in rows]
names = ["top", "loop 0 done", "loop 1 done", "finish start", "finish end", "box converted"]
for k in range(1, 6):
    d = sorted(t[2 + k] - t[1 + k] for t in T if t[2 + k] is not None and t[1 + k] is not None)
    print("%-14s -> %-14s median %6.2f us  p10 %6.2f  p90 %6.2f  (%d tiles)" % (
        names[k - 1], names[k], st.median(d) / 1e3, d[len(d) // 10] / 1e3, d[len(d) * 9 // 10] / 1e3, len(d)))
by_block = collections.defaultdict(list)
for t in T:
    by_block[t[1]].append(t)
life = []
for bl in by_block.values():
    bl.sort(key=lambda t: t[2])
    for a, b in zip(bl, bl[1:]):
        life.append(b[2] - a[2])
print("tile life (top to the next tile's top in its block): median %.2f us" % (st.median(life) / 1e3))
by_sm = collections.defaultdict(list)
for t in T:
    by_sm[t[0]].append(t)
hist = collections.Counter()
for sm, tl in by_sm.items():
    lo = min(t[2] for t in tl)
    hi = max(t[6] for t in tl if t[6] is not None)
    for i in range(2000):
        x = lo + (hi - lo) * (i + 0.5) / 2000
        hist[sum(1 for t in tl if t[2] <= x < t[4])] += 1
tot = sum(hist.values())
print("share of time with k of an SM's blocks in their k16 loops: " +
      ", ".join("%d: %.3f" % (k, hist[k] / tot) for k in sorted(hist)))
print("blocks per SM: %s" % sorted(collections.Counter(len({t[1] for t in tl}) for tl in by_sm.values()).items()))


def overlap_share(span, spans):
    """The mean number of `spans` that cover an instant of `span` (start, end)."""
    a, b = span
    covered = 0
    for c, d in spans:
        lo, hi = max(a, c), min(b, d)
        if hi > lo:
            covered += hi - lo
    return covered / (b - a) if b > a else 0.0


# Each phase's duration against how many of the SM's other blocks were in their k16 loops meanwhile
# (the mean over the phase, rounded to halves): a phase that slows as more blocks loop shares
# something with the loops (the DMMA pipe, issue, the memory pipes); one that does not, does not.
phases = [("both k16 loops", 2, 4), ("stores, claim, copies", 4, 5), ("finish", 5, 6), ("box conversion", 6, 7)]
by_concurrency = {name: collections.defaultdict(list) for name, _, _ in phases}
for tl in by_sm.values():
    for t in tl:
        near = [(u[2], u[4]) for u in tl if u[1] != t[1] and u[4] is not None and u[4] > t[2] - 200000 and u[2] < t[2] + 200000]
        for name, i, j in phases:
            if t[i] is not None and t[j] is not None:
                k = round(overlap_share((t[i], t[j]), near) * 2) / 2
                by_concurrency[name][k].append((t[j] - t[i]) / 1e3)
for name, _, _ in phases:
    print("%s (us), by the mean number of the SM's other blocks in their k16 loops meanwhile:" % name)
    for k in sorted(by_concurrency[name]):
        d = sorted(by_concurrency[name][k])
        print("   %.1f: %6d  median %6.2f  p10 %6.2f  p90 %6.2f" % (k, len(d), st.median(d), d[len(d) // 10], d[len(d) * 9 // 10]))
