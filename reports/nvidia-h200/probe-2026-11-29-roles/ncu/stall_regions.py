import csv, sys, collections
fn = sys.argv[1]
rows = list(csv.reader(open(fn)))
hdr_i = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
hdr = rows[hdr_i]; data = [r for r in rows[hdr_i+1:] if len(r) == len(hdr)]
ix = {h: i for i, h in enumerate(hdr)}
stall_cols = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
def num(x):
    try: return float(x.replace(",", ""))
    except: return 0.0
addr = [int(r[ix["Address"]], 16) for r in data]
src = [r[ix["Source"]] for r in data]
# regions: MMA branch starts at USETMAXREG.TRY_ALLOC, epilogue at USETMAXREG.DEALLOC
alloc = next(i for i, s in enumerate(src) if "TRY_ALLOC" in s)
dealloc = next(i for i, s in enumerate(src) if "DEALLOC" in s)
dm = [i for i, s in enumerate(src) if "DMMA" in s]
print("alloc", alloc, "dealloc", dealloc, "dmma idx", dm[:2], dm[-2:], "n", len(src))
# loop: find the backward branch after the last DMMA
loop_lo = dm[0]
while loop_lo > 0 and not (src[loop_lo].strip().startswith("LDS.128") ): loop_lo -= 1
loop_hi = dm[-1]
while loop_hi < len(src) and "BRA" not in src[loop_hi]: loop_hi += 1
print("loop", loop_lo, loop_hi, src[loop_hi])
def region(lo, hi, name):
    tot = collections.Counter(); samples = 0; inst = 0
    for i in range(lo, hi):
        r = data[i]; samples += num(r[ix["Warp Stall Sampling (All Samples)"]]); inst += num(r[ix["Instructions Executed"]])
        for c in stall_cols: tot[c] += num(r[ix[c]])
    print(f"{name:12s} samples {samples:9.0f} inst {inst:12.0f}  " + ", ".join(f"{c[6:]} {v/ max(samples,1)*100:.0f}%" for c, v in tot.most_common(7)))
    return samples
mma_lo, mma_hi = (alloc, len(src)) if alloc > dealloc else (alloc, dealloc)
epi_lo, epi_hi = (dealloc, alloc) if alloc > dealloc else (dealloc, len(src))
region(0, min(alloc, dealloc), "prologue")
region(mma_lo, mma_hi, "MMA branch")
region(loop_lo, loop_hi + 1, " k16 loop")
region(epi_lo, epi_hi, "epilogue")
