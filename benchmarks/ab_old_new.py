"""Old against new skcal in one process, interleaved: fit and predict_proba times and pass ratios.

The load of a shared machine changes within seconds, so two separate runs of
``bench_speed.py --growth`` compare badly; here every calibrator is fitted by
the old and the new code alternately (``--reps`` times, order swapped every
repetition) with a reference pass timed before each fit, and the best times
are divided by the median pass.

Usage::

    git archive <old-commit> skcal | tar -x -C /tmp/old   # the old tree
    mkdir -p /tmp/oldpkg && cp -r /tmp/old/skcal /tmp/oldpkg/skcal_old
    PYTHONPATH=. python benchmarks/ab_old_new.py --old /tmp/oldpkg \\
        --calibrators BetaCalibrator,HistogramCalibrator --sizes 100000x100,1000000x10

(skcal's modules import each other relatively, so the old copy imports as
``skcal_old`` next to the new ``skcal``.)
"""

import argparse
import statistics
import sys
import time
import warnings

from _common import make_logits, pass_time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="directory holding the package skcal_old")
    ap.add_argument("--calibrators", required=True, help="comma-separated class names")
    ap.add_argument("--sizes", default="100000x100,1000000x10")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    sys.path.insert(0, args.old)
    import skcal
    import skcal_old

    warnings.simplefilter("ignore")
    print("| size | calibrator | pass s (min-max) | fit old | fit new | predict old | predict new "
          "| speed-up fit / predict |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes.split(","):
        n, k = (int(v) for v in size.lower().split("x"))
        Z, y = make_logits(n, k, seed=args.seed)
        for name in args.calibrators.split(","):
            passes = []
            T = {key: [] for key in ("old fit", "new fit", "old pred", "new pred")}
            for r in range(args.reps):
                order = [("old", skcal_old), ("new", skcal)]
                for ver, mod in (order if r % 2 == 0 else order[::-1]):
                    passes.append(pass_time(Z, y, repeat=3)[0])
                    t = time.perf_counter()
                    est = getattr(mod, name)().fit(Z, y)
                    T[f"{ver} fit"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    est.predict_proba(Z)
                    T[f"{ver} pred"].append(time.perf_counter() - t)
            p = statistics.median(passes)
            best = {key: min(v) for key, v in T.items()}
            cells = [f"{best[key]:.2f} s ({best[key] / p:.1f})" for key in T]
            print(f"| {n:,}x{k:,} | {name} | {min(passes):.3f}-{max(passes):.3f} | "
                  + " | ".join(cells)
                  + f" | {best['old fit'] / best['new fit']:.1f}x / "
                  f"{best['old pred'] / best['new pred']:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
