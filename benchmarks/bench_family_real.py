"""Fit time and convergence of every MatrixScaler / DirichletCalibrator choice on the real sets.

For each set in ``../shared/data`` (``logits_val`` / ``y_val`` as stored,
float32) and each regularisation x parametrisation choice, with the class
defaults otherwise (``MatrixScaler``: ``reg_lambda=None`` -> 1.0;
``DirichletCalibrator``: ``reg_lambda=1e-2``), prints one row: fit seconds,
``n_iter_``, whether the fit converged (no ``ConvergenceWarning``; otherwise
the warning's kind), the conjugate-gradient steps (Hessian-vector products)
of the trust-region solver summed over its iterations ("-" for Newton's
method) and the test NLL (``logits_test`` / ``y_test``). ``--trace`` prints
the objective, gradient norm, radius, CG steps and rho of every trust-region
iteration to stderr.

Warning kinds: ``max_iter`` (stopped before tol), ``no-decrease`` (failed
line search / trust region), ``separated`` (no penalty and the NLL reaches 0:
the optimum is at infinity, a correct warning), ``infinity`` (an entry of
``W`` diverged along a direction the penalty leaves free, e.g. the ODIR
diagonal: also a property of the problem), ``absent`` (a class without
calibration rows), ``timeout`` (``--timeout`` seconds passed; the row then
gives that bound).

Command (from the repository root; single-threaded BLAS as in the README)::

    OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 OMP_NUM_THREADS=1 \\
        SKCAL_SHARED_DATA=/path/to/shared/data PYTHONPATH=. \\
        python benchmarks/bench_family_real.py [--sets a,b] [--methods m1,m2] [--timeout 120] [--trace]
"""

import argparse
import functools
import os
import signal
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _common import clipped_nll
from sklearn.exceptions import ConvergenceWarning

from skcal import DirichletCalibrator, MatrixScaler
from skcal.scaling import _affine

DATA = Path(
    os.environ.get(
        "SKCAL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
)

METHODS = {
    "MS-sms": lambda: MatrixScaler(),
    "MS-odir": lambda: MatrixScaler(reg="odir"),
    "MS-l2": lambda: MatrixScaler(reg="l2"),
    "MS-none": lambda: MatrixScaler(reg="none"),
}
for _reg in ("l2", "odir", "sms", "none"):
    for _par, _short in (("full", "full"), ("diagonal", "diag"), ("fixed_diagonal", "fixdiag")):
        METHODS[f"Dir-{_reg}-{_short}"] = (
            lambda r=_reg, p=_par: DirichletCalibrator(reg=r, parametrization=p)
        )


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _kind(message):
    m = message.lower()
    for key, kind in (
        ("max_iter", "max_iter"),
        ("no decrease", "no-decrease"),
        ("infinity", "infinity"),
        ("separate", "separated"),
        ("no weight", "absent"),
    ):
        if key in m:
            return kind
    return "warn"


#: The library's trust region; main() swaps in a wrapper that collects its per-iteration
#: trace for each fit (the library keeps no trace of its own).
_TR = _affine._trust_region_newton_cg


def _tr_traced(*args, collect, **kwargs):
    kwargs["trace"] = collect
    return _TR(*args, **kwargs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default=None)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--timeout", type=float, default=0.0)
    ap.add_argument("--trace", action="store_true", help="per-iteration log on stderr")
    args = ap.parse_args()
    sets = sorted(p.stem for p in DATA.glob("*.npz")) if args.sets is None else args.sets.split(",")
    methods = args.methods.split(",")
    print("| set | K | method | seconds | n_iter_ | CG steps | converged | test NLL |")
    print("|---|---|---|---|---|---|---|---|")
    total, bad = 0.0, []
    old = signal.signal(signal.SIGALRM, _alarm) if args.timeout else None
    for name in sets:
        with np.load(DATA / f"{name}.npz") as d:
            Zv, yv, Zt, yt = d["logits_val"], d["y_val"], d["logits_test"], d["y_test"]
        k = Zv.shape[1]
        for m in methods:
            est = METHODS[m]()
            trace = []  # per trust-region iteration (Newton fits: none)
            _affine._trust_region_newton_cg = functools.partial(_tr_traced, collect=trace)
            t = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                try:
                    if args.timeout:
                        signal.setitimer(signal.ITIMER_REAL, args.timeout)
                    est.fit(Zv, yv)
                    timed_out = False
                except _Timeout:
                    timed_out = True
                finally:
                    if args.timeout:
                        signal.setitimer(signal.ITIMER_REAL, 0)
            sec = time.perf_counter() - t
            _affine._trust_region_newton_cg = _TR
            cg = str(sum(r["cg"] for r in trace)) if trace else "-"
            if args.trace:
                for r in trace:
                    print(f"    it {r['it']}: f {r['f']:.9g} |g| {r['gnorm']:.3g} radius "
                          f"{r['radius']:.3g} CG {r['cg']} rho {r['rho']:.3g}", file=sys.stderr)
            total += sec
            kinds = sorted(
                {_kind(str(w.message)) for w in caught if issubclass(w.category, ConvergenceWarning)}
            )
            if timed_out:
                conv, n_iter, nll = "no (timeout)", "-", "-"
                sec_s = f">{args.timeout:.0f}"
            else:
                conv = "yes" if not kinds else "no (" + ", ".join(kinds) + ")"
                n_iter = str(est.n_iter_)
                nll = f"{clipped_nll(est.predict_proba(Zt), yt):.4f}"
                sec_s = f"{sec:.2f}"
            if conv != "yes":
                bad.append(f"{name}/{m}: {conv}")
            print(f"| {name} | {k} | {m} | {sec_s} | {n_iter} | {cg} | {conv} | {nll} |", flush=True)
    if old is not None:
        signal.signal(signal.SIGALRM, old)
    print(f"\ntotal fit time: {total:.1f} s; not converged: {len(bad)}")
    for b in bad:
        print("  " + b)


if __name__ == "__main__":
    sys.exit(main())
