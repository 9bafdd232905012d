"""Speed and objective of the issue-26 calibrators against their probmetrics equivalents.

Issue-26 target: each new calibrator at least 10x faster than the probmetrics
(1.3) equivalent, at an equal or lower objective, in one run:

- ``StructuredVectorScaler`` vs ``SVSCalibrator`` (torchmin BFGS) at
  100,000 x 100 float32 logits (``_common.make_logits``); objective: the SVS
  objective of Berta et al. (train NLL + ``lambda K / n (|v - 1|^2 + |b|^2)``,
  each on its own temperature scaling);
- ``QuadraticScaler(target_smoothing=False)`` vs
  ``BinaryLogisticCalibrator(type="quadratic")`` (scikit-learn's unpenalised
  lbfgs ``LogisticRegression`` on ``(1, s, s^2)``) on 100,000 binary scores;
  objective: the train NLL (both minimise exactly it);
- ``CenteredIsotonicScaler(clip=None)`` vs ``CenteredIsotonicRegressionCalibrator``
  (the ``cir-model`` package; not a dependency of probmetrics, so it may be
  absent: the row then says so) on the same binary scores; CIR minimises no
  objective: the row gives the train Brier score and the largest difference
  between the two maps' probabilities; with ``--only cir-ovr`` also one-vs-rest
  at ``--n x --k`` float32 logits against probmetrics' ``cir``;
- ``SmoothedCalibrator(IsotonicScaler(clip=None))`` vs ``isotonic-mix``
  (``--only smoothed``): fit + predict at ``--n x --k`` float32 logits,
  objective the NLL on the same rows (``meta_peers.py`` has the real sets).

Each fit is timed twice, ours and the peer's alike (the faster of the two is
shown: a process's first large fit pays page faults its later ones do not);
the binary rows ``--repeat`` times. The quadratic, CIR and smoothed rows are followed by the
process CPU time of the same runs (``time.process_time``), the fairer figure
on a loaded machine. probmetrics takes probabilities: the peer's
time includes its own conversion to logits, not ours of the inputs.

Command (from the repository root; single-threaded BLAS/torch, as the other
benchmarks on the shared machine)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_new_methods.py \\
        [--n 100000] [--k 100] [--n-binary 100000] [--skip-svs-peer] [--repeat 2] \\
        [--only svs,quadratic,cir,cir-ovr,smoothed]
"""

import argparse
import time
import warnings

import numpy as np
from scipy.special import expit, log_softmax

from _common import make_logits
from skcal import CenteredIsotonicScaler, QuadraticScaler, StructuredVectorScaler


def nll(P, y):
    return float(-np.mean(np.log(np.clip(P[np.arange(len(y)), y], 1e-300, None))))


#: process CPU time of the last ``timed`` call (its fastest run)
LAST_CPU = {}


def timed(fn, repeat=2):
    """``(fn(), fastest wall time)``; the fastest run's process CPU time goes to ``LAST_CPU``."""
    best, best_cpu, out = np.inf, np.inf, None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    LAST_CPU[fn] = best_cpu
    return out, best


def row(name, t_ours, t_peer, obj_ours, obj_peer, what, cpu=None):
    ratio = f"{t_peer / t_ours:6.1f}x" if t_peer is not None else "   n/a"
    peer = f"{t_peer:8.3f} s" if t_peer is not None else "     n/a  "
    po = f"{obj_peer:.6f}" if obj_peer is not None else "n/a"
    print(f"{name:24s} {t_ours:8.3f} s  {peer}  {ratio}   {what}: ours {obj_ours:.6f}, peer {po}",
          flush=True)
    if cpu is not None and cpu[1] is not None:
        print(f"{'':24s} CPU time (process): {cpu[0]:8.3f} s  {cpu[1]:8.3f} s  "
              f"{cpu[1] / cpu[0]:6.1f}x", flush=True)


def svs(args):
    Z, y = make_logits(args.n, args.k)
    n, k = Z.shape
    est, t = timed(lambda: StructuredVectorScaler().fit(Z, y))
    v, b = np.diag(est.coef_), est.intercept_
    obj = nll(est.predict_proba(Z.astype(np.float64)), y) + k / n * (np.sum((v - 1) ** 2) + np.sum(b**2))
    t_peer = obj_peer = None
    if not args.skip_svs_peer:
        import torch
        from probmetrics.calibrators import SVSCalibrator
        from probmetrics.distributions import CategoricalLogits

        def fit_peer():
            m = SVSCalibrator(print_init_info=False)
            m.fit_torch(CategoricalLogits(torch.as_tensor(Z.astype(np.float64))), torch.as_tensor(y))
            return m

        peer, t_peer = timed(fit_peer)
        P = peer.predict_proba_torch(CategoricalLogits(torch.as_tensor(Z.astype(np.float64))))
        P = P.get_probs().numpy()
        obj_peer = nll(P, y) + k / n * (np.sum((peer.v_ - 1) ** 2) + np.sum(peer.b_**2))
    row(f"SVS {n}x{k} f32", t, t_peer, obj, obj_peer, "objective (each its own features)")
    if obj_peer is not None:
        # the peer's (v, b) on skcal's features log_softmax(z / T): skcal's objective
        A = log_softmax(est.feature_scale_ * Z.astype(np.float64), axis=1) * peer.v_ + peer.b_
        cross = nll(np.exp(log_softmax(A, axis=1)), y) + k / n * (
            np.sum((peer.v_ - 1) ** 2) + np.sum(peer.b_**2))
        print(f"{'':24s} skcal's objective: at skcal's optimum {obj:.7f}, at the peer's (v, b) {cross:.7f}")


def binary_scores(n, seed=0):
    """Binary log-odds whose calibration map bends: ``P(y=1|s) = sigmoid(0.6 s + 0.1 s^2 - 0.3)``."""
    rng = np.random.default_rng(seed)
    s = rng.normal(scale=2.5, size=n)
    y = (rng.random(n) < expit(0.6 * s + 0.1 * s * s - 0.3)).astype(np.int64)
    return s, y


def quadratic(args, s, y):
    P2 = np.column_stack([1 - expit(s), expit(s)])
    est, t = timed(f := lambda: QuadraticScaler(target_smoothing=False).fit(s, y), args.repeat)
    c = LAST_CPU[f]
    obj = nll(est.predict_proba(s), y)
    from probmetrics.calibrators import BinaryLogisticCalibrator

    peer, t_peer = timed(f := lambda: BinaryLogisticCalibrator(type="quadratic").fit(P2, y), args.repeat)
    row(f"quadratic {len(s)} binary", t, t_peer, obj, nll(peer.predict_proba(P2), y), "train NLL",
        cpu=(c, LAST_CPU[f]))


def quadratic_ovr(args):
    """One-vs-rest quadratic scaling at n x k float32 logits against the peer's binary
    quadratic fitted class by class on the same one-vs-rest probabilities (probmetrics
    has no one-vs-rest wrapper for it); objective: the summed per-class train NLL of
    the one-vs-rest problems, which both minimise."""
    from probmetrics.calibrators import BinaryLogisticCalibrator
    from skcal._backend._ovr import ovr_log_odds

    Z, y = make_logits(args.n, args.k)
    n, k = Z.shape
    est, t = timed(f := lambda: QuadraticScaler(target_smoothing=False).fit(Z, y))
    c = LAST_CPU[f]
    S = ovr_log_odds(Z)

    def per_class_nll(Q):
        """Summed train NLL of the one-vs-rest problems, from their probabilities (n, k)."""
        Q = np.clip(Q, 1e-300, 1 - 1e-15)
        return float(sum(-np.mean(np.where(y == j, np.log(Q[:, j]), np.log1p(-Q[:, j])))
                         for j in range(k)))

    obj = per_class_nll(expit((est.q_ * S + est.a_) * S + est.b_))

    def fit_peer():
        out = []
        for j in range(k):
            p = expit(S[:, j])
            out.append(BinaryLogisticCalibrator(type="quadratic").fit(
                np.column_stack([1 - p, p]), (y == j).astype(np.int64)))
        return out

    peers, t_peer = timed(f := fit_peer)
    Qp = np.column_stack([m.predict_proba(np.column_stack([1 - expit(S[:, j]), expit(S[:, j])]))[:, 1]
                          for j, m in enumerate(peers)])
    row(f"quadratic ovr {n}x{k} f32", t, t_peer, obj, per_class_nll(Qp),
        "summed per-class NLL", cpu=(c, LAST_CPU[f]))


def cir(args, s, y):
    est, t = timed(f := lambda: CenteredIsotonicScaler(clip=None).fit(s, y), args.repeat)
    c = LAST_CPU[f]
    p = est.predict_proba(s)[:, 1]
    brier = float(np.mean((p - y) ** 2))
    try:
        from probmetrics.calibrators import CenteredIsotonicRegressionCalibrator

        CenteredIsotonicRegressionCalibrator()
    except ImportError as exc:
        print(f"{'CIR ' + str(len(s)) + ' binary':24s} {t:8.3f} s  peer not run: {exc}")
        return
    P2 = np.column_stack([1 - expit(s), expit(s)])
    peer, t_peer = timed(f := lambda: CenteredIsotonicRegressionCalibrator().fit(P2, y), args.repeat)
    pp = peer.predict_proba(P2)[:, 1]
    row(f"CIR {len(s)} binary", t, t_peer, brier, float(np.mean((pp - y) ** 2)), "train Brier",
        cpu=(c, LAST_CPU[f]))
    print(f"{'':24s} largest |p_ours - p_peer| = {np.max(np.abs(p - pp)):.2e} (centres in log-odds vs "
          "probabilities)")
    from skcal.ovr._centered_isotonic import centered_isotonic_knots

    xk, yk = centered_isotonic_knots(P2[:, 1], y)  # the same definition on the peer's scale
    print(f"{'':24s} skcal's CIR on the probabilities: largest difference "
          f"{np.max(np.abs(np.interp(P2[:, 1], xk, yk) - pp)):.2e}")


def cir_multiclass(args):
    """CIR one-vs-rest at ``--n x --k`` float32 logits, against probmetrics' ``cir`` (its OvR wrapper)."""
    Z, y = make_logits(args.n, args.k)
    est, t = timed(f := lambda: CenteredIsotonicScaler(clip=None).fit(Z, y))
    c = LAST_CPU[f]
    P = est.predict_proba(Z)
    brier = float(np.mean(np.sum((P - np.eye(args.k)[y]) ** 2, axis=1)))
    try:
        from probmetrics.calibrators import get_calibrator

        get_calibrator("cir")
    except ImportError as exc:
        print(f"{'CIR OvR':24s} {t:8.3f} s  peer not run: {exc}")
        return
    from scipy.special import softmax

    Pin = softmax(Z.astype(np.float64), axis=1)
    peer, t_peer = timed(f := lambda: get_calibrator("cir").fit(Pin, y))
    Pp = peer.predict_proba(Pin)
    bp = float(np.mean(np.sum((Pp - np.eye(args.k)[y]) ** 2, axis=1)))
    row(f"CIR OvR {args.n}x{args.k} f32", t, t_peer, brier, bp, "train Brier", cpu=(c, LAST_CPU[f]))


def smoothed(args):
    """``SmoothedCalibrator(IsotonicScaler(clip=None))`` vs probmetrics' ``isotonic-mix``: fit + predict.

    The same pair as ``meta_peers.py`` (which also scores the real sets), at
    ``--n x --k`` float32 logits; the peer takes softmax probabilities (made
    outside its timing). Objective: the NLL on the same rows (both apply
    the "-mix" rule ``lam = 1 / (n + 1)``).
    """
    from scipy.special import softmax

    from meta_peers import ours, peer

    Z, y = make_logits(args.n, args.k)
    P_in = softmax(Z.astype(np.float64), axis=1)
    P, t = timed(f := lambda: ours().fit(Z, y).predict_proba(Z))
    c = LAST_CPU[f]
    Pp, t_peer = timed(f := lambda: peer().fit(P_in, y).predict_proba(P_in))
    row(f"Smoothed {args.n}x{args.k} f32", t, t_peer, nll(np.asarray(P, np.float64), y),
        nll(np.asarray(Pp, np.float64), y), "fit + predict; NLL", cpu=(c, LAST_CPU[f]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--n-binary", type=int, default=100_000)
    ap.add_argument("--skip-svs-peer", action="store_true")
    ap.add_argument("--repeat", type=int, default=2,
                    help="runs of each binary fit, ours and the peer's alike (the fastest is shown)")
    ap.add_argument("--only", default="svs,quadratic,cir",
                    help="comma-separated subset of svs,quadratic,quadratic-ovr,cir,cir-ovr,smoothed")
    args = ap.parse_args()
    only = set(args.only.split(","))
    print(f"{'method':24s} {'skcal':>10s}  {'probmetrics':>10s}  ratio")
    s, y = binary_scores(args.n_binary)
    if "quadratic" in only:
        quadratic(args, s, y)
    if "quadratic-ovr" in only:
        quadratic_ovr(args)
    if "cir" in only:
        cir(args, s, y)
    if "svs" in only:
        svs(args)
    if "cir-ovr" in only:
        cir_multiclass(args)
    if "smoothed" in only:
        smoothed(args)


if __name__ == "__main__":
    main()
