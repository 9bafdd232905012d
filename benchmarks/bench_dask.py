"""Calibrators on a dask.distributed LocalCluster over a float32 store on disk.

Writes a float32 logit store (an ``.npy`` file, generated chunk by chunk, so
it never exists in memory as a whole) and its int8 labels, larger than one
worker's memory limit, then for each method:

- fits it on the LocalCluster (workers read row blocks from the store), and
  reports the number of cluster jobs (each job is one pass over the store,
  except the label pass of ``fit``, which reads only the labels), the wall
  time per job, and the peak resident memory of each worker (sampled every
  0.2 s with psutil);
- times one NumPy pass of the same kernel over a memory-mapped copy of the
  store (the single-machine baseline of a pass);
- fits the same method in memory with NumPy on all rows (no subsample: the
  reference) and prints the largest relative difference of the parameters.

Run (from the repository root; the default is modest for a small, shared
machine)::

    python benchmarks/bench_dask.py                              # 16,000,000 x 10
    python benchmarks/bench_dask.py --rows 100000000 --classes 10 \\
        --memory-limit 2GiB --chunk-rows 1000000 --dir /big/disk  # the issue's size

Timings on a loaded machine are noisy; read the ratios, not the seconds.
"""

import argparse
import os
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class NpyRows:
    """A picklable, lazily opened view of an ``.npy`` file for ``da.from_array``."""

    def __init__(self, path):
        m = np.load(path, mmap_mode="r")
        self.path, self.shape, self.dtype, self.ndim = path, m.shape, m.dtype, m.ndim

    def __getitem__(self, idx):
        return np.array(np.load(self.path, mmap_mode="r")[idx])


def write_store(directory, n, k, chunk, seed=0):
    """Write ``logits.npy`` (float32, n x k) and ``labels.npy`` (int8) chunk by chunk."""
    zp, yp = os.path.join(directory, "logits.npy"), os.path.join(directory, "labels.npy")
    if os.path.exists(zp) and np.load(zp, mmap_mode="r").shape == (n, k):
        return zp, yp
    Z = np.lib.format.open_memmap(zp, mode="w+", dtype=np.float32, shape=(n, k))
    Y = np.lib.format.open_memmap(yp, mode="w+", dtype=np.int8, shape=(n,))
    rng = np.random.default_rng(seed)
    bias = np.linspace(-0.5, 0.5, k)
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        y = rng.integers(0, k, m)
        z = 4.0 * (np.eye(k, dtype=np.float32)[y] + rng.normal(size=(m, k))) + bias
        Z[start:start + m] = z
        Y[start:start + m] = y
    Z.flush()
    Y.flush()
    del Z, Y
    return zp, yp


class JobCounter:
    """Counts and times the client's jobs (``Client.get`` calls)."""

    def __init__(self, client):
        self.client, self.n = client, 0
        self._get = client.get

        def get(*args, **kwargs):
            self.n += 1
            return self._get(*args, **kwargs)

        client.get = get


class PeakMemory:
    """Peak RSS of each worker, sampled in a background thread."""

    def __init__(self, client, period=0.2):
        self.client, self.period, self.peak = client, period, {}
        self._stop = threading.Event()

    @staticmethod
    def _rss():
        import psutil

        return psutil.Process().memory_info().rss

    def __enter__(self):
        self.peak = {}

        def loop():
            while not self._stop.is_set():
                try:
                    for w, v in self.client.run(self._rss).items():
                        self.peak[w] = max(self.peak.get(w, 0), v)
                except Exception:  # a worker restarting
                    pass
                self._stop.wait(self.period)

        self._stop.clear()
        self._t = threading.Thread(target=loop, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def params(est):
    name = type(est).__name__
    if name == "TemperatureScaler":
        return np.array([est.temperature_])
    if name == "PlattScaler":
        return np.concatenate([np.atleast_1d(est.a_), np.atleast_1d(est.b_)])
    return np.concatenate([est.coef_, est.intercept_])


def numpy_pass(method, Zm, y):
    """One NumPy pass of the method's main kernel over the memory-mapped store."""
    from skcal._backend import _numpy
    from skcal._backend._ovr import _ovr_columns, _ovr_row_stats

    k = Zm.shape[1]
    t = time.perf_counter()
    if method == "TemperatureScaler":
        _numpy.temperature_nll_derivs(Zm, y, None, 0.3, third=True)
    elif method == "VectorScaler":
        _numpy.vector_nll_hess(Zm, y, None, np.full(k, 0.3), np.zeros(k))
    else:  # one class's one-vs-rest column, as a Platt gather pass computes it
        for sl in _numpy.chunk_rows(Zm.shape[0], k):
            A = np.asarray(Zm[sl], dtype=np.float64)
            _ovr_columns(A[:, [0]], _ovr_row_stats(A), np.array([0]))
    return time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=16_000_000)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--chunk-rows", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="512MiB", help="per worker")
    ap.add_argument("--methods", default="TemperatureScaler,PlattScaler,VectorScaler")
    ap.add_argument("--dir", default=None, help="where the store is written")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the in-memory NumPy fit (for stores beyond RAM)")
    args = ap.parse_args(argv)

    import dask.array as da
    import distributed
    from dask.utils import parse_bytes

    import skcal

    directory = args.dir or tempfile.mkdtemp(prefix="skcal_dask_")
    n, k = args.rows, args.classes
    t = time.perf_counter()
    zp, yp = write_store(directory, n, k, args.chunk_rows)
    size = n * k * 4
    limit = parse_bytes(args.memory_limit)
    print(f"store: {zp}  {n:,} x {k} float32 = {size / 2**20:,.0f} MiB "
          f"(written in {time.perf_counter() - t:.1f} s); worker memory limit "
          f"{limit / 2**20:,.0f} MiB x {args.workers} workers, 1 thread each; "
          f"chunks of {args.chunk_rows:,} rows ({args.chunk_rows * k * 4 / 2**20:.1f} MiB)")
    if size <= limit:
        print("note: the store is not larger than one worker's memory limit")

    cluster = distributed.LocalCluster(
        n_workers=args.workers, threads_per_worker=1, memory_limit=args.memory_limit,
        dashboard_address=":0",
    )
    client = distributed.Client(cluster)
    jobs = JobCounter(client)
    Zd = da.from_array(NpyRows(zp), chunks=(args.chunk_rows, k),
                       meta=np.empty((0, 0), np.float32))
    yd = da.from_array(NpyRows(yp), chunks=(args.chunk_rows,),
                       meta=np.empty((0,), np.int8))
    Zm = np.load(zp, mmap_mode="r")
    y_np = np.load(yp).astype(np.int64)
    Z_mem = None if args.no_reference else np.load(zp)

    rows = []
    for name in args.methods.split(","):
        cls = getattr(skcal, name)
        jobs.n = 0
        with PeakMemory(client) as mem:
            t = time.perf_counter()
            est = cls().fit(Zd, yd)
            t_fit = time.perf_counter() - t
        n_jobs = jobs.n
        t_np = numpy_pass(name, Zm, y_np)
        diff = float("nan")
        t_ref = float("nan")
        if Z_mem is not None:
            t = time.perf_counter()
            ref = cls().fit(Z_mem, y_np)
            t_ref = time.perf_counter() - t
            a, b = params(est), params(ref)
            diff = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))
        peak = max(mem.peak.values()) if mem.peak else float("nan")
        rows.append((name, n_jobs, t_fit, t_fit / n_jobs, t_np, peak, t_ref, diff))
        # a lazy prediction pass: one more job, same row chunks
        P = est.predict_proba(Zd)
        assert P.chunks[0] == Zd.chunks[0]

    print()
    print(f"{'method':<18} {'jobs':>5} {'fit s':>8} {'s/job':>7} {'numpy s/pass':>13} "
          f"{'job/pass':>9} {'peak MiB/worker':>16} {'in-mem fit s':>13} {'max rel diff':>13}")
    for name, nj, tf, tj, tn, pk, tr, d in rows:
        print(f"{name:<18} {nj:>5d} {tf:>8.2f} {tj:>7.2f} {tn:>13.2f} {tj / tn:>9.2f} "
              f"{pk / 2**20:>16.0f} {tr:>13.2f} {d:>13.2e}")
    print("\njobs: cluster jobs of the fit (each a pass over the store, except one "
          "that reads only the labels); numpy s/pass: one pass of the same kernel "
          "over a memory-mapped copy on this machine; max rel diff: parameters vs "
          "the in-memory NumPy fit on all rows.")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
