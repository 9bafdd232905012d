"""GroupedCalibrator on dask: jobs and wall time of a fit, against the NumPy fit.

For ``G`` groups, fits :class:`skcal.GroupedCalibrator` on a dask array on a
LocalCluster of 2 single-threaded worker processes (the global fit, then
each group's fit on its lazily selected rows, one after the other) and on
the same data in memory. The arrays are persisted on the workers first (a
job ships its graph, not the data). Prints the dask jobs and the wall time
of the dask fit, the NumPy fit's wall time, and the largest relative
difference of the fitted parameters. Small arrays are forced onto the
cluster (``LOCAL_MAX_BYTES = 0``), as a calibration set too large for the
client would be.

Run (from the repository root)::

    python benchmarks/bench_dask_grouped.py     # 400,000 x 10, G = 2, 4, 16, 64
    python benchmarks/bench_dask_grouped.py --rows 2000000 --groups 4 16 64

Timings on a loaded machine are noisy.
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
            calls = []

            def counting(expr, keys, **kw):
                calls.append(1)
                return client.get(expr, keys, **kw)

            t = time.perf_counter()
            with dask.config.set(scheduler=counting):
                got = skcal.GroupedCalibrator(est, min_group_size=1).fit(
                    Zd, yd, groups=gd
                )
            t_dask = time.perf_counter() - t
            t = time.perf_counter()
            ref = skcal.GroupedCalibrator(est, min_group_size=1).fit(
                Zg.astype(np.float32), y, groups=g
            )
            t_numpy = time.perf_counter() - t
            diff = 0.0
            for key in ref.calibrators_:
                pairs = zip(_params(got.calibrators_[key]),
                            _params(ref.calibrators_[key]))
                for pa, pb in pairs:
                    rel = np.abs(pa - pb) / np.maximum(np.abs(pb), 1e-300)
                    diff = max(diff, float(np.max(rel)))
            rows.append((G, len(calls), t_dask, t_numpy, diff))
    finally:
        client.close()
        cluster.close()

    print(f"{args.method}, {n:,} x {k} float32, {args.chunk_rows:,}-row chunks, "
          f"2 workers x 1 thread; load {os.getloadavg()[0]:.1f}")
    print(f"{'groups':>6}  {'dask jobs':>9}  {'dask s':>7}  {'numpy s':>7}  "
          f"{'max rel diff':>12}")
    for G, jobs, td, tn, d in rows:
        print(f"{G:>6}  {jobs:>9}  {td:>7.1f}  {tn:>7.2f}  {d:>12.1e}")


def _params(est):
    for name in ("temperature_", "coef_", "intercept_"):
        if hasattr(est, name):
            yield np.atleast_1d(np.asarray(getattr(est, name), dtype=np.float64))


if __name__ == "__main__":
    main()
