"""Time reading a large logit table as ``skcal fit/apply/report`` do.

Writes a CSV of ``--rows`` x ``--classes`` float32 logits plus a label column
(and the same table as Parquet and .npy), then times
:func:`skcal.datasets._tables.read_logit_table` on each, and the benchmark's
row-by-row CSV reader (:func:`skcal.datasets.load_logits_file`) on a slice for
comparison (extrapolated linearly). Prints a table.

Usage::

    python benchmarks/bench_io.py                       # 1,000,000 x 100 (the target)
    python benchmarks/bench_io.py --rows 100000 --classes 10

Target (issue 18): a 1,000,000 x 100 CSV loads in seconds, not minutes. The
machine is shared (2 cores, other jobs running): numbers are noisy.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's skcal
from _common import make_logits  # noqa: E402


def _time(f):
    """Wall-clock and CPU seconds (this process, all threads) of one call."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = f()
    return (time.perf_counter() - t0, time.process_time() - c0), out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--classes", type=int, default=100)
    p.add_argument("--slow-rows", type=int, default=20_000,
                   help="rows read by the row-by-row CSV reader (extrapolated)")
    p.add_argument("--dir", default=None, help="scratch folder (default: a temp dir)")
    args = p.parse_args(argv)

    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from skcal.datasets import load_logits_file
    from skcal.datasets._tables import read_logit_table

    n, k = args.rows, args.classes
    tmp = Path(args.dir or tempfile.mkdtemp(prefix="skcal_bench_io_"))
    Z, y = make_logits(n, k)
    cols = {f"c{j}": Z[:, j] for j in range(k)}
    cols["label"] = y
    table = pa.table(cols)
    csv, parquet = tmp / "big.csv", tmp / "big.parquet"
    npy = tmp / "big_logits.npy"
    (t_write, _), _ = _time(lambda: pacsv.write_csv(table, csv))
    pq.write_table(table, parquet)
    np.save(npy, Z)
    np.save(tmp / "big_labels.npy", y)
    del table, cols
    size_mb = os.path.getsize(csv) / 2**20
    print(f"{n:,} x {k} float32 logits + label; CSV {size_mb:,.0f} MiB "
          f"(written in {t_write:.1f} s) in {tmp}")

    rows = []
    for name, path, kw in [
        ("CSV  (pyarrow, float64)", csv, {}),
        ("CSV  (pyarrow, float32)", csv, {"dtype": np.float32}),
        ("Parquet (pyarrow)", parquet, {}),
        (".npy (memory-mapped)", npy, {}),
    ]:
        t, tab = _time(lambda: read_logit_table(path, **kw))
        assert tab.logits.shape == (n, k)
        np.testing.assert_allclose(tab.logits[-1], Z[-1], rtol=1e-6)
        rows.append((name, n, t))
        del tab

    # the benchmark's row-by-row reader, on a slice, extrapolated
    m = min(args.slow_rows, n)
    small = tmp / "small.csv"
    with open(csv, "rb") as src, open(small, "wb") as dst:
        for i, line in enumerate(src):
            if i > m:
                break
            dst.write(line)
    t_slow, _ = _time(lambda: load_logits_file(small))
    rows.append((f"CSV  (load_logits_file, {m:,} rows)", m, t_slow))

    print(f"\n| reader | rows | wall s | CPU s | wall s per 1M rows |\n|---|---|---|---|---|")
    for name, r, (w, c) in rows:
        print(f"| {name} | {r:,} | {w:.2f} | {c:.2f} | {w * 1e6 / r:.1f} |")
    fast = rows[0][2][0] * 1e6 / n
    slow = t_slow[0] * 1e6 / m
    print(f"\nCSV wall time per 1M rows: pyarrow {fast:.1f} s vs row-by-row {slow:.1f} s "
          f"({slow / fast:.1f}x). CPU s above the wall s: pyarrow's threads; wall s "
          "far above CPU s: the machine is shared.")
    if not args.dir:
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
