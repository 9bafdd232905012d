"""GroupedCalibrator on dask: lockstep fits (one job per pass) vs group after group.

For ``G`` groups, fits :class:`skcal.GroupedCalibrator` on a dask array on a
LocalCluster of 2 single-threaded worker processes twice: in lockstep (the
default: every data step of all groups -- label and weight checks, warm-start
subsamples, Newton passes -- is one job of one task per row block) and
sequentially (each group's fit its own jobs, the path taken for estimators
that are not skcal calibrators). The arrays are persisted on the workers
first (a job ships its graph, not the data). Prints the dask jobs and the
wall time of each, their ratios, and the largest relative difference of the
fitted parameters. Small arrays are forced onto the cluster
(``LOCAL_MAX_BYTES = 0``), as a calibration set too large for the client
would be.

Run (from the repository root)::

    python benchmarks/bench_dask_grouped.py     # 400,000 x 10, G = 2, 4, 16, 64
    python benchmarks/bench_dask_grouped.py --rows 2000000 --groups 4 16 64

Timings on a loaded machine are noisy; read the ratios (same run).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--chunk-rows", type=int, default=50_000)
    ap.add_argument("--groups", type=int, nargs="+", default=[2, 4, 16, 64])
    ap.add_argument("--method", default="TemperatureScaler",
                    choices=["TemperatureScaler", "VectorScaler", "PlattScaler"])
    args = ap.parse_args()

    import dask
    import dask.array as da
    import distributed

    import skcal
    from skcal._backend import _dask
    from skcal.meta import _grouped

    _dask.LOCAL_MAX_BYTES = 0
    rng = np.random.default_rng(0)
    n, k = args.rows, args.classes
    y = rng.integers(0, k, n)
    Z = np.eye(k)[y] + rng.normal(size=(n, k))
    est = getattr(skcal, args.method)()
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, dashboard_address=None
    )
    client = distributed.Client(cluster)
    rows = []
    try:
        for G in args.groups:
            g = rng.integers(0, G, n)
            Zg = Z * (0.5 + g % 4)[:, None]  # a different temperature per group
            Zd = da.from_array(Zg.astype(np.float32), chunks=(args.chunk_rows, k))
            yd = da.from_array(y, chunks=args.chunk_rows)
            gd = da.from_array(g, chunks=args.chunk_rows)
            # the blocks live on the workers (as blocks read from a store
            # would): a job ships its small graph, not the data
            Zd, yd, gd = client.persist([Zd, yd, gd])
            distributed.wait([Zd, yd, gd])
            out = {}
            for mode in ("lockstep", "sequential"):
                calls = []

                def counting(expr, keys, **kw):
                    calls.append(1)
                    return client.get(expr, keys, **kw)

                saved = _grouped._lockstep_ok
                if mode == "sequential":
                    _grouped._lockstep_ok = lambda e: False
                try:
                    t = time.perf_counter()
                    with dask.config.set(scheduler=counting):
                        fitted = skcal.GroupedCalibrator(est, min_group_size=1).fit(
                            Zd, yd, groups=gd
                        )
                    out[mode] = (len(calls), time.perf_counter() - t, fitted)
                finally:
                    _grouped._lockstep_ok = saved
            diff = 0.0
            a, b = out["lockstep"][2], out["sequential"][2]
            for key in a.calibrators_:
                pairs = zip(_params(a.calibrators_[key]), _params(b.calibrators_[key]))
                for pa, pb in pairs:
                    rel = np.abs(pa - pb) / np.maximum(np.abs(pb), 1e-300)
                    diff = max(diff, float(np.max(rel)))
            rows.append((G, out["lockstep"][:2], out["sequential"][:2], diff))
    finally:
        client.close()
        cluster.close()

    print(f"{args.method}, {n:,} x {k} float32, {args.chunk_rows:,}-row chunks, "
          f"2 workers x 1 thread; load {os.getloadavg()[0]:.1f}")
    print(f"{'groups':>6}  {'jobs lock':>9}  {'s lock':>7}  {'jobs seq':>8}  "
          f"{'s seq':>7}  {'jobs ratio':>10}  {'time ratio':>10}  {'max rel diff':>12}")
    for G, (jl, tl), (js, ts), d in rows:
        print(f"{G:>6}  {jl:>9}  {tl:>7.1f}  {js:>8}  {ts:>7.1f}  {js / jl:>10.1f}  "
              f"{ts / tl:>10.2f}  {d:>12.1e}")


def _params(est):
    for name in ("temperature_", "coef_", "intercept_"):
        if hasattr(est, name):
            yield np.atleast_1d(np.asarray(getattr(est, name), dtype=np.float64))


if __name__ == "__main__":
    main()
