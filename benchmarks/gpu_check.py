"""One prepared GPU check: CUDA parity tests, then bfloat16 speed at large sizes.

On a single CUDA GPU, within about 5 minutes, this script

1. runs the CUDA variants of the torch parity tests
   (``pytest tests/backends/test_torch.py -m gpu``: every calibrator and metric,
   torch on CUDA against numpy);
2. times, on bfloat16 logits of 10,000,000 x 100 and 1,000,000 x 1,000
   generated on the GPU, one *pass* (chunked ``cross_entropy``: stable
   log-softmax + NLL), ``TemperatureScaler.fit`` and ``predict_proba``, and
   prints the achieved memory bandwidth of each, the fit in passes, and the
   error of the fitted inverse temperature against a float64 solve of the same
   matrix on the GPU.

Bandwidth is the bytes that must cross memory divided by the time: the
bfloat16 input once per pass (plus the float32 output for ``predict_proba``).

Run::

    python benchmarks/gpu_check.py                      # on a CUDA machine
    python benchmarks/gpu_check.py --device cpu --small # CPU smoke run of the same code
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def make_logits_torch(n, k, device, dtype, seed=0):
    """Over-confident synthetic logits made on ``device`` in row blocks (see _common)."""
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    y = torch.randint(0, k, (n,), device=device, generator=g)
    Z = torch.empty((n, k), dtype=dtype, device=device)
    margin = 2.0 + 0.5 * float(torch.log(torch.tensor(float(k))))
    step = max(1, (1 << 26) // k)
    for s in range(0, n, step):
        e = min(n, s + step)
        block = torch.randn((e - s, k), device=device, generator=g)
        wrong = torch.rand(e - s, device=device, generator=g) > 0.7
        c = torch.where(wrong, torch.randint(0, k, (e - s,), device=device, generator=g),
                        y[s:e])
        block[torch.arange(e - s, device=device), c] += margin
        Z[s:e] = (4.0 * block).to(dtype)
    return Z, y


def run_parity(device):
    if device == "cpu":
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               os.path.join(ROOT, "tests", "test_torch.py"), "-k", "cpu"]
    else:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               os.path.join(ROOT, "tests", "test_torch.py"), "-m", "gpu"]
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240)
    tail = (res.stdout + res.stderr).strip().splitlines()
    print("\n".join(tail[-8:]))
    print(f"parity tests: exit code {res.returncode} in {time.perf_counter() - t0:.0f} s",
          flush=True)
    return res.returncode


def bench(n, k, device, dtype_name, repeat):
    import torch

    from _common import best_time, torch_pass
    from skcal import TemperatureScaler
    from skcal._backend import _torch
    from skcal.scaling._temperature import fit_temperature

    dtype = getattr(torch, dtype_name)
    Z, y = make_logits_torch(n, k, device, dtype)
    nbytes = Z.numel() * Z.element_size()
    t_pass, _ = best_time(lambda: torch_pass(Z, y), repeat=repeat, device=device)
    t_fit, ts = best_time(lambda: TemperatureScaler().fit(Z, y), repeat=repeat, device=device)
    t_pred, P = best_time(lambda: ts.predict_proba(Z), repeat=repeat, device=device)
    out_bytes = P.numel() * P.element_size()
    del P
    # float64 reference on the same values, in row blocks of the float64 copy
    Z64 = Z.to(torch.float64)
    beta_ref, _, _ = fit_temperature(Z64, y, None, _torch, tol=1e-14, warm_start=False)
    del Z64
    beta = 1.0 / ts.temperature_
    gbs = 1e9
    print(f"| {n:,}x{k:,} | {dtype_name} | {nbytes / 2**30:.2f} | "
          f"{t_pass * 1e3:.1f} ms, {nbytes / t_pass / gbs:.3g} GB/s | "
          f"{t_fit * 1e3:.1f} ms = {t_fit / t_pass:.1f} passes ({ts.n_iter_} full) | "
          f"{t_pred * 1e3:.1f} ms = {t_pred / t_pass:.1f} passes, "
          f"{(nbytes + out_bytes) / t_pred / gbs:.3g} GB/s | "
          f"{abs(beta - beta_ref) / beta_ref:.1e} |", flush=True)
    del Z, y
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--small", action="store_true",
                    help="small sizes (100,000x100 and 20,000x1,000): a smoke run")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-tests", action="store_true")
    args = ap.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("CUDA is not available; use --device cpu --small for a smoke run.")
    name = (torch.cuda.get_device_name(args.device) if args.device.startswith("cuda")
            else "CPU")
    print(f"# skcal GPU check on {args.device} ({name}), torch {torch.__version__}")
    t0 = time.perf_counter()
    rc = 0 if args.skip_tests else run_parity(args.device)
    sizes = ([(100_000, 100), (20_000, 1_000)] if args.small
             else [(10_000_000, 100), (1_000_000, 1_000)])
    print("\n| size | dtype | GiB | pass | TemperatureScaler.fit | predict_proba "
          "| rel. error of beta vs float64 |")
    print("|---|---|---|---|---|---|---|")
    for n, k in sizes:
        bench(n, k, args.device, args.dtype, args.repeat)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    sys.exit(rc)


if __name__ == "__main__":
    main()
