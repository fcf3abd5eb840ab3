#!/usr/bin/env python3
"""A hostile stand-in for peers/torch_peers.py (property_tests/peers_hostile_test.sh): FAKE_MODE says how
it misbehaves. It speaks the helper's protocol (a JSON line per peer on stdout, <peer>.pt beside) badly."""
import json
import os
import signal
import sys

case_dir = sys.argv[1]
case = json.load(open(os.path.join(case_dir, "case.json")))
mode = os.environ["FAKE_MODE"]


def say(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def timed(peer, tensor):
    import torch
    torch.save(tensor, os.path.join(case_dir, peer + ".pt"))
    say({"peer": peer, "status": "timed", "samples": [1e-3, 1.1e-3, 0.9e-3], "output": peer + ".pt",
         "compile_seconds": None, "torch": torch.__version__})


for peer in case["peers"]:
    if mode == "wrong_shape":
        import torch
        timed(peer, torch.zeros(1, 2, 3))
    elif mode == "zeros":  # the right shape, the wrong values: only the harness's judging can tell
        import torch
        timed(peer, torch.zeros(case["output_shape"]))
    elif mode == "not_a_tensor":
        open(os.path.join(case_dir, peer + ".pt"), "w").write("not a tensor")
        say({"peer": peer, "status": "timed", "samples": [1e-3], "output": peer + ".pt", "torch": "fake"})
    elif mode == "bad_samples":
        say({"peer": peer, "status": "timed", "samples": [-1.0], "output": peer + ".pt", "torch": "fake"})
    elif mode == "escape":  # an output outside the case folder
        say({"peer": peer, "status": "timed", "samples": [1e-3], "output": "../../etc/passwd", "torch": "fake"})
    elif mode == "first_then_crash":  # one record, then the process dies on the next peer
        say({"peer": peer, "status": "skipped", "reason": "fake skip", "torch": "fake"})
        os.kill(os.getpid(), signal.SIGSEGV)
    else:
        sys.exit("fake_helper: unknown FAKE_MODE " + mode)
