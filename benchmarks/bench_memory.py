"""Peak extra memory of skcal's calibrators, as a fraction of the input's size.

"Extra" is what ``fit`` (or ``predict_proba``) allocates on top of the logit
matrix that already exists: the peak traced by :mod:`tracemalloc` (numpy
registers its buffers with it), cross-checked with the peak resident set size
sampled by :mod:`psutil` every millisecond. The output of ``predict_proba``
(an (n, K) float32 matrix, 1.0x a float32 input) is part of its figure.

Run (from the repository root)::

    python benchmarks/bench_memory.py                       # 1,000,000 x 100 float32
    python benchmarks/bench_memory.py --size 100000x100 --calibrators TemperatureScaler
"""

import argparse
import gc
import os
import sys
import threading
import time
import tracemalloc
import warnings


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_logits  # noqa: E402


class _RssPeak:
    """Sample the resident set size in a thread; ``peak`` in bytes."""

    def __init__(self):
        import psutil

        self._proc = psutil.Process()
        self.base = self.peak = self._proc.memory_info().rss
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._proc.memory_info().rss)
            time.sleep(0.001)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def measure(fn):
    """Run ``fn()``; return (traced peak bytes, rss peak - rss before bytes, seconds)."""
    gc.collect()
    try:
        rss = _RssPeak()
    except ImportError:
        rss = None
    tracemalloc.start()
    t0 = time.perf_counter()
    if rss is None:
        out = fn()
    else:
        with rss:
            out = fn()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del out
    return peak, (None if rss is None else rss.peak - rss.base), dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1000000x100")
    ap.add_argument("--calibrators",
                    default="TemperatureScaler,VectorScaler,PlattScaler,IsotonicScaler")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    import skcal

    n, k = (int(v) for v in args.size.lower().split("x"))
    Z, y = make_logits(n, k, seed=args.seed)
    size = Z.nbytes
    print(f"# skcal memory benchmark: float32 {n:,} x {k:,} = {size / 2**20:.0f} MiB input")
    print("\n| calibrator | step | traced peak extra | / input | RSS peak extra | / input "
          "| seconds |")
    print("|---|---|---|---|---|---|---|")
    for name in args.calibrators.split(","):
        if not hasattr(skcal, name):
            print(f"| {name} | not in skcal | | | | | |")
            continue
        est = getattr(skcal, name)()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for step, fn in (("fit", lambda: est.fit(Z, y)),
                             ("predict_proba", lambda: est.predict_proba(Z))):
                traced, rss, dt = measure(fn)
                rss_s = "n/a" if rss is None else f"{rss / 2**20:.0f} MiB"
                rss_r = "n/a" if rss is None else f"{rss / size:.2f}x"
                print(f"| {name} | {step} | {traced / 2**20:.0f} MiB | "
                      f"**{traced / size:.2f}x** | {rss_s} | {rss_r} | {dt:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()
