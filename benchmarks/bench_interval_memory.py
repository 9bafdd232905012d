"""Peak extra memory and time of bootstrap intervals on a large input.

Command (from the repository root)::

    python benchmarks/bench_interval_memory.py [--rows 1000000] [--classes 10]
        [--resamples 200]

Prints, for each metric, the tracemalloc peak of
``skcal.metrics.confidence_interval`` (NumPy input, float32 logits) as a
multiple of the input's size, and the seconds taken. The per-row statistics
are a few ``(n,)`` float64 vectors (one per class for classwise errors) and a
batch of resamples holds at most 2**20 row indices, so the peak does not grow
with the number of resamples. Timings are noisy on a shared machine.
"""

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import make_logits  # noqa: E402

from skcal.metrics import confidence_interval  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--resamples", type=int, default=200)
    args = ap.parse_args(argv)
    Z, y = make_logits(args.rows, args.classes)
    size = Z.nbytes
    print(f"input: {args.rows} x {args.classes} float32 logits = {size / 2**20:.0f} MiB; "
          f"{args.resamples} resamples\n")
    print("| metric | options | peak extra MiB | x input | seconds |")
    print("|---|---|---|---|---|")
    cases = [("ece", {}), ("ece", {"strategy": "quantile"}),
             ("debiased_calibration_error", {}), ("nll", {}), ("brier", {}),
             ("ece", {"kind": "classwise"})]
    for metric, opts in cases:
        tracemalloc.start()
        t = time.perf_counter()
        confidence_interval(metric, y, Z, input_type="logits", random_state=0,
                            n_resamples=args.resamples, **opts)
        sec = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"| {metric} | {opts or ''} | {peak / 2**20:.0f} | {peak / size:.2f} | "
              f"{sec:.1f} |", flush=True)


if __name__ == "__main__":
    main()
