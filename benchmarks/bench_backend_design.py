"""Kernels written once against the array API vs skcal's tuned per-library kernels.

Decides how ``skcal/_backend`` writes its kernels once (issue 10): the
whole-vector kernels -- ``temperature_nll_derivs`` (with and without the
third derivative) and the vector-scaling ``vector_nll_grad`` /
``vector_nll_hess`` -- are written here a single time against the Python
array API standard through ``array_api_compat`` (the route scikit-learn and
SciPy take; scikit-learn vendors it as ``sklearn.externals.array_api_compat``,
so no new dependency would be needed), with the same row chunks, the same
working precision (float32 for float32 logits) and the same float64
accumulation as the tuned kernels. Both are timed on NumPy and on torch (CPU)
at 1,000,000 x 10 and 100,000 x 100 float32 logits; the script prints the
time of each and the ratio ``array API / tuned`` (> 1: the generic version is
slower), and checks that both give the same numbers.

Run (from the repository root)::

    python benchmarks/bench_backend_design.py [--repeat 3] [--sizes 1000000x10,100000x100]
                                              [--torch-threads 1]
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_logits  # noqa: E402

try:
    import array_api_compat as aac
except ImportError:  # scikit-learn's vendored copy
    from sklearn.externals import array_api_compat as aac

CHUNK_BYTES = 1 << 20


def _chunks(n, k, itemsize):
    step = max(1, CHUNK_BYTES // max(1, k * itemsize))
    for s in range(0, n, step):
        yield slice(s, min(s + step, n))


# ---------------------------------------------------------------- array API
def api_row_max_and_true(Z, y):
    xp = aac.array_namespace(Z)
    n, k = Z.shape
    m = xp.empty(n, dtype=xp.float64, device=aac.device(Z))
    zy = xp.empty(n, dtype=xp.float64, device=aac.device(Z))
    for sl in _chunks(n, k, 8):
        Zc = Z[sl, ...]
        m[sl] = xp.astype(xp.max(Zc, axis=1), xp.float64)
        zy[sl] = xp.astype(xp.take_along_axis(Zc, y[sl, None], axis=1)[:, 0], xp.float64)
    return m, zy


def _wsum(xp, v, w):
    return xp.sum(v) if w is None else xp.vecdot(w, v)


def api_temperature_nll_derivs(Z, y, sample_weight, beta, row_stats=None, third=False):
    xp = aac.array_namespace(Z)
    n, k = Z.shape
    m_all, zy_all = api_row_max_and_true(Z, y) if row_stats is None else row_stats
    wd = xp.float64 if Z.dtype == xp.float64 else xp.float32
    wsum = float(n) if sample_weight is None else float(xp.sum(sample_weight))
    acc = [0.0] * 4
    for sl in _chunks(n, k, 8 if wd == xp.float64 else 4):
        m = m_all[sl]
        D = xp.astype(Z[sl, ...], wd) - xp.astype(m, wd)[:, None]
        E = xp.exp(D * beta)
        s0 = xp.astype(xp.sum(E, axis=1), xp.float64)
        E = E * D
        s1 = xp.astype(xp.sum(E, axis=1), xp.float64)
        E = E * D
        s2 = xp.astype(xp.sum(E, axis=1), xp.float64)
        mu = s1 / s0
        m2 = s2 / s0
        var = xp.clip(m2 - mu * mu, min=0.0)
        dy = zy_all[sl] - m
        terms = [xp.log(s0) - beta * dy, mu - dy, var]
        if third:
            E = E * D
            s3 = xp.astype(xp.sum(E, axis=1), xp.float64)
            terms.append(s3 / s0 - mu * (3.0 * m2 - 2.0 * mu * mu))
        w = None if sample_weight is None else sample_weight[sl]
        for j, v in enumerate(terms):
            acc[j] += float(_wsum(xp, v, w))
    return tuple(a / wsum for a in acc[: 4 if third else 3])


def api_vector_pass(Z, y, sample_weight, w, b, hessian):
    xp = aac.array_namespace(Z)
    dev = aac.device(Z)
    n, k = Z.shape
    f64 = xp.float64
    wd = f64 if Z.dtype == f64 else xp.float32
    w = xp.asarray(w, dtype=f64, device=dev)
    b = xp.asarray(b, dtype=f64, device=dev)
    wsum = float(n) if sample_weight is None else float(xp.sum(sample_weight))
    cls = xp.arange(k, device=dev)
    f = 0.0
    g_w = xp.zeros(k, dtype=f64, device=dev)
    g_b = xp.zeros(k, dtype=f64, device=dev)
    if hessian:
        s_pz = xp.zeros(k, dtype=f64, device=dev)
        s_p = xp.zeros(k, dtype=f64, device=dev)
        s_pzz = xp.zeros(k, dtype=f64, device=dev)
        QQ = xp.zeros((2 * k, 2 * k), dtype=f64, device=dev)
    for sl in _chunks(Z.shape[0], k, 8 if wd == f64 else 4):
        Zc = xp.astype(Z[sl, ...], wd)
        yc = y[sl]
        A = Zc * xp.astype(w, wd) + xp.astype(b, wd)
        A = A - xp.max(A, axis=1, keepdims=True)
        a_y = xp.astype(xp.take_along_axis(A, yc[:, None], axis=1)[:, 0], f64)
        E = xp.exp(A)
        s = xp.sum(xp.astype(E, f64), axis=1)
        P = E * xp.astype(1.0 / s, wd)[:, None]
        wc = (xp.ones(P.shape[0], dtype=f64, device=dev) if sample_weight is None
              else sample_weight[sl])
        f += float(xp.vecdot(wc, xp.log(s) - a_y))
        G = xp.where(yc[:, None] == cls[None, :], P - 1.0, P)  # p - e_y
        g_b = g_b + xp.matmul(wc, xp.astype(G, f64))
        g_w = g_w + xp.matmul(wc, xp.astype(G * Zc, f64))
        if hessian:
            PZ = P * Zc
            s_p = s_p + xp.matmul(wc, xp.astype(P, f64))
            s_pz = s_pz + xp.matmul(wc, xp.astype(PZ, f64))
            s_pzz = s_pzz + xp.matmul(wc, xp.astype(PZ, f64) * xp.astype(Zc, f64))
            Q = xp.concat([PZ, P], axis=1)
            if sample_weight is not None:
                Q = Q * xp.astype(xp.sqrt(wc), wd)[:, None]
            QQ = QQ + xp.astype(xp.matmul(Q.T, Q), f64)
    gw = np.asarray(aac.to_device(g_w / wsum, "cpu"))
    gb = np.asarray(aac.to_device(g_b / wsum, "cpu"))
    if not hessian:
        return f / wsum, gw, gb, None
    H = -np.asarray(aac.to_device(QQ, "cpu"))
    s_pzz, s_pz, s_p = (np.asarray(aac.to_device(v, "cpu")) for v in (s_pzz, s_pz, s_p))
    idx = np.arange(k)
    H[idx, idx] += s_pzz
    H[idx + k, idx + k] += s_p
    H[idx, idx + k] += s_pz
    H[idx + k, idx] += s_pz
    return f / wsum, gw, gb, H / wsum


# ------------------------------------------------------------------- timing
def best(fn, repeat):
    fn()  # warm-up (first touch of buffers)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), out


def _close(a, b):
    fa = np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in a if x is not None])
    fb = np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in b if x is not None])
    return float(np.max(np.abs(fa - fb) / np.maximum(1e-12, np.abs(fb))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000x10,100000x100")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--backends", default="numpy,torch")
    ap.add_argument("--torch-threads", type=int, default=None)
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    print(f"# array API vs tuned kernels (numpy {np.__version__}, array_api_compat "
          f"{aac.__version__}, {os.cpu_count()} CPUs, load average {load:.1f})")
    backends = args.backends.split(",")
    if "torch" in backends:
        import torch

        if args.torch_threads:
            torch.set_num_threads(args.torch_threads)
        from skcal._backend import _torch
    from skcal._backend import _numpy

    rows = []
    for size in args.sizes.split(","):
        n, k = (int(v) for v in size.lower().split("x"))
        Z, y = make_logits(n, k)
        w = np.full(k, 0.3) + 0.01 * np.arange(k) / k
        b = 0.01 * np.arange(k) / k
        for be in backends:
            if be == "torch":
                Zb, yb, tuned = torch.from_numpy(Z), torch.from_numpy(y), _torch
            else:
                Zb, yb, tuned = Z, y, _numpy
            st_t = tuned.row_max_and_true(Zb, yb)
            st_a = api_row_max_and_true(Zb, yb)
            cases = [
                ("row_max_and_true", lambda: tuned.row_max_and_true(Zb, yb),
                 lambda: api_row_max_and_true(Zb, yb)),
                ("temperature_nll_derivs",
                 lambda: tuned.temperature_nll_derivs(Zb, yb, None, 0.3, row_stats=st_t),
                 lambda: api_temperature_nll_derivs(Zb, yb, None, 0.3, row_stats=st_a)),
                ("temperature_nll_derivs(third)",
                 lambda: tuned.temperature_nll_derivs(Zb, yb, None, 0.3, st_t, True),
                 lambda: api_temperature_nll_derivs(Zb, yb, None, 0.3, st_a, True)),
                ("vector_nll_grad",
                 lambda: tuned.vector_nll_grad(Zb, yb, None, w, b),
                 lambda: api_vector_pass(Zb, yb, None, w, b, False)[:3]),
            ]
            if k <= 256:
                cases.append(("vector_nll_hess",
                              lambda: tuned.vector_nll_hess(Zb, yb, None, w, b),
                              lambda: api_vector_pass(Zb, yb, None, w, b, True)))
            for name, f_t, f_a in cases:
                t_t, o_t = best(f_t, args.repeat)
                t_a, o_a = best(f_a, args.repeat)
                if be == "torch":
                    o_t = [x.numpy() if hasattr(x, "numpy") else x for x in o_t]
                    o_a = [x.numpy() if hasattr(x, "numpy") else x for x in o_a]
                err = _close(o_a, o_t)
                rows.append([f"{n:,}x{k:,}", be, name, f"{t_t:.4f}", f"{t_a:.4f}",
                             f"**{t_a / t_t:.2f}**", f"{err:.0e}"])
                print(" | ".join(rows[-1]), flush=True)
    print("\n| size | backend | kernel | tuned s | array API s | array API / tuned | max rel. diff |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
