#!/usr/bin/env python3
"""Summarises a k44_time --trace output (K44TRACE lines: block, batch, then the stamps of
add_trace.py in microseconds from the first block's entry): per stamp the spread over batches, per
phase its length, and the batches that finished last (the critical path).
    phase_trace.py FILE"""
import sys

NAMES = ["entry", "streamed", "rects", "contribs", "arrived", "batch end", "finished"]


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]


rows = [[float(x) for x in line.split()[1:]] for line in open(sys.argv[1])
        if line.startswith("K44TRACE") and "call" not in line]
calls = [line.strip() for line in open(sys.argv[1]) if line.startswith("K44TRACE call")]
print(calls[0] if calls else "", f"- {len(rows)} batches in {len({r[0] for r in rows})} blocks")
for k, name in enumerate(NAMES):
    v = [r[2 + k] for r in rows if r[2 + k] >= 0]
    print(f"  {name:10s} n {len(v):4d}  min {min(v):6.2f}  p10 {pct(v, 10):6.2f}  p50 {pct(v, 50):6.2f}"
          f"  p90 {pct(v, 90):6.2f}  max {max(v):6.2f} us")
for i, j in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]:
    d = [r[2 + j] - r[2 + i] for r in rows if r[2 + i] >= 0 and r[2 + j] >= 0]
    print(f"  {NAMES[i]} -> {NAMES[j]}: p50 {pct(d, 50):.2f}  p90 {pct(d, 90):.2f}  max {max(d):.2f} us")
print("  last to finish (block batch, stamps):")
for r in sorted(rows, key=lambda r: r[7])[-4:]:
    print("   ", " ".join(f"{x:.2f}" for x in r))
