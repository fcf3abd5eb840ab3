#!/usr/bin/env python3
"""Summaries of the block-phase traces the issue-22 fifth-session builds write to FB_TRACE_FILE.

  trace_report.py blocks FILE       8afec9d + block-phase-trace.patch: 10 words a block (smid, then
                                    start, x staged, loop 0 end, koff 1 staged, loop 1 end, finish
                                    start, statistics done, end)
  trace_report.py occupancy FILE    the first trace build (4 words: smid, start, finish start, end):
                                    share of time by (blocks before their finish, blocks in it) per SM
  trace_report.py persistent FILE   the persistent build (8 words a tile: smid, top, after the wait,
                                    loop 0 end, loop 1 end, finish start, end)
  trace_report.py tiles FILE T [M]  T tiles per block (8 words a tile: smid, loops start, loop 0 end,
                                    loop 1 end, finish start, finish end, x landed, x converted; M = 6
                                    for the cp.async build, which marks no landing: ..., finish end,
                                    x converted)

Times are the low 32 bits of %globaltimer (ns) written by thread 0; medians over the tiles.
"""
import collections
import statistics as st
import struct
import sys

N_TILES = 32768  # the default problem (B = 32)


def load(path, words):
    raw = open(path, "rb").read()
    v = struct.unpack("<%dI" % (len(raw) // 4), raw)
    rows = [v[words * i:words * i + words] for i in range(N_TILES)]
    base = min(r[1] for r in rows)
    return [(r[0],) + tuple((t - base) % (1 << 32) for t in r[1:]) for r in rows]


def phases(tiles, names, first=1):
    for k in range(first + 1, first + len(names)):
        d = sorted(b[k] - b[k - 1] for b in tiles)
        print("%-22s -> %-22s median %6.2f us  p10 %6.2f p90 %6.2f" % (
            names[k - first - 1], names[k - first], st.median(d) / 1e3, d[len(d) // 10] / 1e3, d[len(d) * 9 // 10] / 1e3))


def share_by_sm(tiles, busy, other, end):
    """Share of time (sampled) by (tiles inside [busy), tiles inside [other)) on one SM; mark `end`
    is a tile's last."""
    span = max(b[end] for b in tiles)
    by_sm = collections.defaultdict(list)
    for b in tiles:
        by_sm[b[0]].append(b)
    hist = collections.Counter()
    points = [span * i / 400 for i in range(20, 380)]
    for bl in by_sm.values():
        for t in points:
            a = sum(1 for b in bl if b[busy[0]] <= t < b[busy[1]])
            f = sum(1 for b in bl if b[other[0]] <= t < b[other[1]])
            hist[(a, f)] += 1
    total = sum(hist.values())
    return {k: round(c / total, 3) for k, c in sorted(hist.items())}


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "blocks":
        b = load(path, 10)
        print("span us %.1f" % (max(x[8] for x in b) / 1e3))
        phases(b, ["start", "stage+koff0 done", "loop0 done(w0)", "store0+koff1 done", "loop1 done(w0)",
                   "finish start", "stats done(t0)", "end"])
        print("life median %.2f" % (st.median([x[8] - x[1] for x in b]) / 1e3))
    elif mode == "occupancy":
        b = load(path, 4)
        life = [x[3] - x[1] for x in b]
        fin = [x[3] - x[2] for x in b]
        print("kernel span us %.1f" % (max(x[3] for x in b) / 1e3))
        print("block life median %.2f us, finish %.2f us (share %.3f)" % (
            st.median(life) / 1e3, st.median(fin) / 1e3, st.median(fin) / st.median(life)))
        print("(blocks before finish, blocks in finish): share of time", share_by_sm(b, (1, 2), (2, 3), 3))
    elif mode == "persistent":
        b = load(path, 8)
        phases(b, ["top", "after wait+sync", "loop0 end(w0)", "loop1 end(w0)", "finish start", "end"])
        print("tile life median %.2f us" % (st.median([x[6] - x[1] for x in b]) / 1e3))
        print("(in loops incl. mid, in finish):", share_by_sm(b, (2, 4), (5, 6), 6))
        grid = 396
        ends = sorted(max(b[t][6] for t in range(k, N_TILES, grid)) for k in range(grid))
        print("span %.1f us; block end min %.1f median %.1f max %.1f" % (
            max(x[6] for x in b) / 1e3, ends[0] / 1e3, st.median(ends) / 1e3, ends[-1] / 1e3))
        lives = collections.Counter(
            round(st.mean([b[t][6] - b[t][1] for t in range(k, N_TILES, grid)]) / 1e3) for k in range(grid))
        print("mean tile life per block (us): blocks", sorted(lives.items()))
    elif mode == "tiles":
        t_per_block = int(sys.argv[3])
        marks = int(sys.argv[4]) if len(sys.argv) > 4 else 7
        b = load(path, 8)
        names = ["loops start", "loop0 end", "loop1 end", "finish start", "finish end", "x landed", "x converted"]
        if marks == 6:
            names = names[:5] + ["x converted"]
        blocks = N_TILES // t_per_block
        for j in range(t_per_block):
            s = b[j * blocks:(j + 1) * blocks]
            print("tile %d of its block: " % j + "; ".join(
                "%s -> %s %.2f" % (names[k - 2], names[k - 1], st.median([x[k] - x[k - 1] for x in s]) / 1e3)
                for k in range(2, marks + 1)))
    else:
        sys.exit("trace_report.py: unknown mode %s (blocks, occupancy, persistent, tiles)" % mode)


if __name__ == "__main__":
    main()
