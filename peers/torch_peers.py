#!/usr/bin/env python3
"""The peer column's helper: the five models as PyTorch users write them (KernelBench's nn.Modules),
run the ways a user would try instead of our kernels, timed with the bench's protocol.

    torch_peers.py CASE_DIR

CASE_DIR holds what `fusebench bench --peers torch` wrote for one case:
  case.json   {"model", "config", "device", "peers": [...], "policy": {...}, "warmup_calls", "output_shape"}
  tensors.pt  a dict of the parameters and buffers the reference used (state_dict names) and "input"

For each requested peer, in order, the helper writes CASE_DIR/<peer>.pt (the output of its last timed
call, on the CPU) and then prints one JSON line on stdout:
  {"peer", "status": "timed" | "skipped" | "error", "reason", "samples" [seconds], "warmup_calls",
   "compile_seconds" (first call, compilation included; null for eager), "output", "torch", "device"}
Nothing else reaches stdout (the helper's own stdout is sent to stderr), so the harness can read it.
The helper never judges the values: `fusebench` judges every peer's output with its own verdict rules.

Peers: eager, eager_tf32 (eager with torch.backends.cudnn.benchmark = True), compile, compile_tf32
(torch.compile, default mode), max_autotune, max_autotune_tf32 (torch.compile(mode=
"max-autotune-no-cudagraphs")); "_tf32" allows TF32 in cuDNN and matmuls, the others forbid it.
cudnn.benchmark is on for every peer: it is what a user tuning for speed sets first.
Exit status: 0 when every peer has its line (whatever its status), 2 on bad usage or a bad case folder.
"""
import json
import math
import os
import sys
import time
import traceback

ALL_PEERS = ("eager", "eager_tf32", "compile", "compile_tf32", "max_autotune", "max_autotune_tf32")


def protocol_stream():
    """The real stdout for the protocol lines; everything else printed to stdout goes to stderr."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


def build_models(torch):
    """KernelBench level-2 problems 15, 34, 42, 44, 77, with the constructor arguments of SPEC.md §1."""
    nn = torch.nn

    class ConvTranspose3dBatchNormSubtract(nn.Module):  # KernelBench #15
        def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                     padding=padding, bias=bias)
            self.batch_norm = nn.BatchNorm3d(out_channels)

        def forward(self, x):
            x = self.conv_transpose(x)
            x = self.batch_norm(x)
            return x - torch.mean(x, dim=(2, 3, 4), keepdim=True)

    class ConvTranspose3dLayerNormGELUScaling(nn.Module):  # KernelBench #34
        def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True, eps=1e-5,
                     scaling_factor=1.0):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                     padding=padding, bias=bias)
            self.layer_norm = nn.LayerNorm(out_channels, eps=eps)
            self.scaling_factor = scaling_factor

        def forward(self, x):
            x = self.conv_transpose(x)
            x = self.layer_norm(x)
            x = torch.nn.functional.gelu(x)
            return x * self.scaling_factor

    class ConvTranspose2dGlobalAvgPoolBiasAddLogSumExpSumMultiply(nn.Module):  # KernelBench #42
        def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)
            self.bias = nn.Parameter(torch.randn(bias_shape))

        def forward(self, x):
            x = self.conv_transpose(x)
            x = torch.mean(x, dim=(2, 3), keepdim=True)
            x = x + self.bias
            x = torch.logsumexp(x, dim=1, keepdim=True)
            x = torch.sum(x, dim=(2, 3))
            return x * 10.0

    class ConvTranspose2dMultiplyGlobalAvgPool(nn.Module):  # KernelBench #44
        def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                     padding=padding, output_padding=output_padding)
            self.multiplier = multiplier

        def forward(self, x):
            x = self.conv_transpose(x)
            x = x * self.multiplier
            x = torch.mean(x, dim=[2, 3], keepdim=True)
            return torch.mean(x, dim=[2, 3], keepdim=True)

    class ConvTranspose3dScaleBatchNormGlobalAvgPool(nn.Module):  # KernelBench #77
        def __init__(self, in_channels, out_channels, kernel_size, scale_factor, eps=1e-5, momentum=0.1):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)
            self.scale_factor = scale_factor
            self.batch_norm = nn.BatchNorm3d(out_channels, eps=eps, momentum=momentum)
            self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))

        def forward(self, x):
            x = self.conv_transpose(x)
            x = x * self.scale_factor
            x = self.batch_norm(x)
            return self.global_avg_pool(x)

    def conv3d_bn_sub(c):
        return ConvTranspose3dBatchNormSubtract(c["in_channels"], c["out_channels"], c["kernel_size"], c["stride"],
                                                c["padding"], c.get("bias", True))

    def conv3d_ln_gelu(c):
        return ConvTranspose3dLayerNormGELUScaling(c["in_channels"], c["out_channels"], c["kernel_size"], c["stride"],
                                                   c["padding"], c.get("bias", True), c.get("eps", 1e-5),
                                                   c.get("scaling_factor", 1.0))

    def conv2d_gap_lse(c):
        return ConvTranspose2dGlobalAvgPoolBiasAddLogSumExpSumMultiply(c["in_channels"], c["out_channels"],
                                                                       c["kernel_size"], (c["out_channels"], 1, 1))

    def conv2d_mul_gap(c):
        return ConvTranspose2dMultiplyGlobalAvgPool(c["in_channels"], c["out_channels"], c["kernel_size"], c["stride"],
                                                    c["padding"], c["output_padding"], c["multiplier"])

    def conv3d_scale_bn(c):
        return ConvTranspose3dScaleBatchNormGlobalAvgPool(c["in_channels"], c["out_channels"], c["kernel_size"],
                                                          c["scale_factor"], c.get("eps", 1e-5),
                                                          c.get("momentum", 0.1))

    return {
        "convt3d_bn_sub": conv3d_bn_sub,
        "convt3d_ln_gelu_scale": conv3d_ln_gelu,
        "convt2d_gap_bias_lse": conv2d_gap_lse,
        "convt2d_mul_gap": conv2d_mul_gap,
        "convt3d_scale_bn_gap": conv3d_scale_bn,
    }


def want_more(policy, samples, elapsed):
    """harness/bench/repetition_policy.cpp's rule, line for line."""
    if len(samples) < policy["min_samples"]:
        return True
    if len(samples) >= policy["max_samples"] or elapsed >= policy["time_cap"]:
        return False
    if elapsed < policy["min_time"]:
        return True
    n = len(samples)
    mean = abs(sum(samples) / n)
    if n < 2 or mean == 0.0:  # harness/stats/summary.cpp: the relative standard error is then infinite
        return True
    stdev = math.sqrt(sum((s - mean) ** 2 for s in samples) / (n - 1))
    return stdev / math.sqrt(n) / mean > policy["target_rse"]


class Timer:
    """One sample as the bench takes it: on CUDA an L2 flush enqueued before the start event (read of
    twice the L2, as harness/bench/device_timing.cu's l2_flusher does), then CUDA events around the call;
    on the CPU the wall clock around the call."""

    def __init__(self, torch, device):
        self.torch = torch
        self.cuda = device.type == "cuda"
        if self.cuda:
            # L2_cache_size is in every torch with torch.compile; 64 MiB (above any GPU's L2) where absent.
            l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 64 << 20)
            self.flush_buffer = torch.empty(max(2 * l2, 1 << 20) // 4, dtype=torch.float32, device=device)
            self.flush_buffer.fill_(1.0)
            self.flush_sink = torch.empty((), dtype=torch.float32, device=device)
            self.start = torch.cuda.Event(enable_timing=True)
            self.stop = torch.cuda.Event(enable_timing=True)

    def time_once(self, call):
        if not self.cuda:
            t0 = time.perf_counter()
            call()
            return time.perf_counter() - t0
        self.torch.sum(self.flush_buffer, dim=0, out=self.flush_sink)
        self.start.record()
        call()
        self.stop.record()
        self.stop.synchronize()
        return self.start.elapsed_time(self.stop) * 1e-3


def set_tf32(torch, allowed):
    torch.backends.cuda.matmul.allow_tf32 = allowed
    torch.backends.cudnn.allow_tf32 = allowed
    torch.set_float32_matmul_precision("high" if allowed else "highest")


def compile_unavailable(torch, device):
    """Why torch.compile cannot run here, or None."""
    if not hasattr(torch, "compile"):
        return "torch.compile does not exist in torch {} (it came with torch 2.0)".format(torch.__version__)
    if device.type != "cuda":
        return "the compile peers are GPU peers: on the CPU only the eager peers are timed"
    return None


def run_peer(torch, name, case, make_model, state, x, timer, case_dir):
    """Times one peer; returns its protocol record (without "peer")."""
    device = x.device
    tf32 = name.endswith("_tf32")
    kind = name[:-len("_tf32")] if tf32 else name
    if kind != "eager":
        why = compile_unavailable(torch, device)
        if why is not None:
            return {"status": "skipped", "reason": why}
    if tf32 and device.type != "cuda":
        return {"status": "skipped", "reason": "TF32 exists only on CUDA devices"}
    torch.backends.cudnn.benchmark = True
    set_tf32(torch, tf32)
    model = make_model(case["config"]).to(device)
    # The harness's tensors, not a fresh initialisation: strict, so a missing or extra name is an error.
    model.load_state_dict({k: v.to(device) for k, v in state.items()}, strict=True)
    model.train(bool(case["config"].get("training", True)))
    if kind != "eager":
        import torch._dynamo  # explicit: older torch 2.x loads it lazily
        torch._dynamo.reset()  # strict and TF32 compile apart, never one reusing the other's code
        mode = None if kind == "compile" else "max-autotune-no-cudagraphs"
        model = torch.compile(model, mode=mode)
    policy = case["policy"]
    out = None
    with torch.no_grad():
        # The first call compiles (torch.compile) or picks algorithms (cudnn.benchmark): reported apart.
        t0 = time.perf_counter()
        out = model(x)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        first_call = time.perf_counter() - t0
        spent = 0.0
        for _ in range(max(0, int(case.get("warmup_calls", 3)) - 1)):
            spent += timer.time_once(lambda: model(x))
            if spent > 0.1 * policy["time_cap"]:
                break
        samples = []
        started = time.perf_counter()
        holder = {}

        def call():
            holder["out"] = model(x)

        while want_more(policy, samples, time.perf_counter() - started):
            holder.clear()  # the previous output is freed outside the timed call
            samples.append(timer.time_once(call))
        out = holder.get("out", out)
    output_file = name + ".pt"
    torch.save(out.detach().to("cpu").contiguous(), os.path.join(case_dir, output_file))
    return {"status": "timed", "samples": samples, "warmup_calls": int(case.get("warmup_calls", 3)),
            "compile_seconds": first_call if kind != "eager" else None, "first_call_seconds": first_call,
            "output": output_file}


def load(torch, path):
    """torch.load of the harness's own file (torch::pickle_save): plain tensors, trusted."""
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except TypeError:  # a torch older than weights_only
        return torch.load(path, map_location="cpu")


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    case_dir = argv[1]
    protocol = protocol_stream()
    try:
        with open(os.path.join(case_dir, "case.json")) as f:
            case = json.load(f)
        peers = case["peers"]
        unknown = [p for p in peers if p not in ALL_PEERS]
        if unknown:
            print("torch_peers: unknown peer(s) {} (peers: {})".format(unknown, ", ".join(ALL_PEERS)), file=sys.stderr)
            return 2
    except (OSError, ValueError, KeyError) as e:
        print("torch_peers: {}: not a case folder: {}".format(case_dir, e), file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError as e:  # no torch in this Python: every peer is skipped, with the reason
        for name in peers:
            protocol.write(json.dumps({"peer": name, "status": "skipped", "torch": "",
                                       "reason": "no torch in {} ({})".format(sys.executable, e)}) + "\n")
        return 0
    if case["device"].startswith("cuda") and not torch.cuda.is_available():
        for name in peers:
            protocol.write(json.dumps({"peer": name, "status": "skipped", "torch": torch.__version__,
                                       "reason": "torch {} in {} sees no CUDA device".format(torch.__version__,
                                                                                             sys.executable)}) + "\n")
        return 0

    makers = build_models(torch)
    if case["model"] not in makers:
        print("torch_peers: unknown model {} (models: {})".format(case["model"], ", ".join(makers)), file=sys.stderr)
        return 2
    device = torch.device(case["device"])
    tensors = load(torch, os.path.join(case_dir, "tensors.pt"))
    x = tensors.pop("input").to(device).contiguous()
    timer = Timer(torch, device)
    for name in peers:
        record = {"peer": name}
        try:
            record.update(run_peer(torch, name, case, makers[case["model"]], tensors, x, timer, case_dir))
        except Exception as e:  # one peer's failure is its own row; the others still run
            traceback.print_exc(file=sys.stderr)
            record.update({"status": "error", "reason": "{}: {}".format(type(e).__name__, str(e).splitlines()[0]
                                                                        if str(e) else "")})
        record["torch"] = torch.__version__
        record["device"] = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
        protocol.write(json.dumps(record) + "\n")
        protocol.flush()
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
