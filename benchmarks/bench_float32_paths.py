"""The float32 one-vs-rest solvers against the float64 path on the same float32 logits.

Issue 23 keeps a float32 path only where it is at least 1.5x faster at equal
answers. This fits ``PlattScaler`` and ``BetaCalibrator`` on float32 logits
with the float32 solver and with it switched off (the float64 path, which
reads the same float32 logits in float64 row chunks), interleaved in one
process (order swapped every repetition), and prints the best CPU and wall
times, their ratio and the largest relative difference of the fitted
parameters. CPU time is the figure to read on a loaded machine.

Usage::

    PYTHONPATH=. python benchmarks/bench_float32_paths.py --sizes 100000x100,1000000x10
"""

import argparse
import os
import time

import numpy as np
from _common import make_logits

import skcal.ovr._beta as beta_mod
import skcal.ovr._platt as platt_mod
from skcal import BetaCalibrator, PlattScaler

_PLATT32 = platt_mod._fit_platt_ovr32
_BETA_MIN_ROWS = beta_mod.BATCH_MIN_ROWS


def _switch(float32):
    """Turn the float32 solvers on or off (off: the float64 path runs)."""
    platt_mod._fit_platt_ovr32 = _PLATT32 if float32 else (lambda *a, **k: None)
    beta_mod.BATCH_MIN_ROWS = _BETA_MIN_ROWS if float32 else np.iinfo(np.int64).max


def _params(est):
    names = ("a_", "b_", "c_") if isinstance(est, BetaCalibrator) else ("a_", "b_")
    return np.concatenate([np.atleast_1d(getattr(est, n)) for n in names])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000x100,1000000x10")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"load {os.getloadavg()}")
    print("| size | calibrator | float32 cpu / wall s | float64 cpu / wall s "
          "| speed-up cpu / wall | max rel. param diff |")
    print("|---|---|---|---|---|---|")
    for size in args.sizes.split(","):
        n, k = (int(v) for v in size.split("x"))
        Z, y = make_logits(n, k)
        for cls in (PlattScaler, BetaCalibrator):
            times, fits = {True: [], False: []}, {}
            for rep in range(args.reps):
                for float32 in (True, False) if rep % 2 == 0 else (False, True):
                    _switch(float32)
                    w, c = time.perf_counter(), time.process_time()
                    fits[float32] = cls().fit(Z, y)
                    times[float32].append((time.process_time() - c, time.perf_counter() - w))
            _switch(True)
            c32, w32 = (min(t[i] for t in times[True]) for i in (0, 1))
            c64, w64 = (min(t[i] for t in times[False]) for i in (0, 1))
            p32, p64 = _params(fits[True]), _params(fits[False])
            rel = np.max(np.abs(p32 - p64) / np.maximum(np.abs(p64), 1e-3))
            print(f"| {n:,}x{k:,} | {cls.__name__} | {c32:.3f} / {w32:.3f} | "
                  f"{c64:.3f} / {w64:.3f} | {c64 / c32:.2f}x / {w64 / w32:.2f}x | {rel:.1e} |")
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
