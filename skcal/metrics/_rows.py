"""Row-chunked float64 passes over a validated ``y_prob`` (NumPy and torch).

Every metric reads ``y_prob`` through these helpers, so a 16- or 32-bit
matrix is never up-cast as a whole: :func:`proba_chunks` walks it in row
chunks of the calibrators' size (:func:`skcal._backend._numpy.chunk_rows`)
converted to float64 probabilities (and log-probabilities for logits). The
per-row quantities of the metrics are ``(n_samples,)`` float64 vectors, and
binning accumulates per-bin sums chunk by chunk; nothing of shape
``(n_samples, n_classes)`` is allocated. The same code runs on NumPy arrays
and on torch tensors (on their device) through the ``xp`` namespace
(``metric_ops`` of :mod:`skcal._backend._numpy` / ``_torch``).
"""

import numpy as np

from .._backend._dispatch import get_backend
from ._params import _class_index


def ops(inp):
    """The ``xp`` namespace (``metric_ops`` of the kernel module) for validated inputs ``inp``."""
    return get_backend(inp.scores).metric_ops(inp.scores)


def n_columns(inp):
    return 2 if inp.binary_1d else inp.scores.shape[1]


def proba_chunks(inp, xp):
    """Yield ``(rows, proba, log_proba)`` for each row chunk of ``inp.scores``.

    Float64 ``(chunk_rows, n_classes)`` (2 columns for 1-D input); ``log_proba``
    is the stable log-softmax (log-sigmoid pair) of logits, None for probabilities.
    """
    X = inp.scores
    for sl in xp.chunk_rows(X.shape[0], n_columns(inp)):
        x = xp.f64(X[sl])
        if inp.binary_1d:
            if inp.logits:
                lp = xp.log_sigmoid_pair(x)
                yield sl, xp.exp(lp), lp
            else:
                yield sl, xp.pair(1.0 - x, x), None
        elif inp.logits:
            lp = xp.log_softmax(x)
            yield sl, xp.exp(lp), lp
        else:
            yield sl, x, None


def logit_shift(inp, xp):
    """Per-row max ``m`` and ``lse = log sum_k exp(z_k - m)`` of 2-D logits (float64)."""
    X = inp.scores
    m, lse = xp.empty(X.shape[0]), xp.empty(X.shape[0])
    for sl in xp.chunk_rows(X.shape[0], X.shape[1]):
        x = xp.f64(X[sl])
        mx = xp.row_max(x)
        m[sl] = mx
        lse[sl] = xp.log(xp.row_sum(xp.exp(x - mx[:, None])))
    return m, lse


def nll_terms(inp, xp):
    """``-log p_{i, y_i}`` for every row (``inf`` for a 0), float64 ``(n_samples,)``;
    0 where the weight is 0 (not ``0 * inf``)."""
    X = inp.scores
    if not inp.logits and not inp.binary_1d:
        loss = -xp.log(xp.f64(xp.pick(X, inp.y)))
    else:
        loss = xp.empty(X.shape[0])
        for sl, p, lp in proba_chunks(inp, xp):
            y = inp.y[sl]
            loss[sl] = -(xp.pick(lp, y) if lp is not None else xp.log(xp.pick(p, y)))
    return loss if inp.weight is None else xp.zero_unweighted(loss, inp.weight)


def halved(scale_by_half, n_classes):
    """Whether a Brier sum is halved: ``scale_by_half``, ``"auto"`` for 2 classes."""
    return n_classes == 2 if scale_by_half == "auto" else scale_by_half


def brier_terms(inp, xp):
    """``sum_k (p_ik - 1[y_i = k])^2`` for every row, float64 ``(n_samples,)``."""
    out = xp.empty(inp.scores.shape[0])
    for sl, p, _ in proba_chunks(inp, xp):
        d = xp.minus_one_at(p, inp.y[sl])
        out[sl] = xp.row_sum(d * d)
    return out


class _BinSums:
    """Per-bin ``count``, ``weight``, ``score_sum``, ``target_sum`` of ``n_groups`` groups.

    :meth:`add` takes one chunk of bin indices, scores and 0/1 targets of
    shape ``(rows,)`` (one group) or ``(rows, n_groups)``.
    """

    def __init__(self, xp, n_groups, nb):
        self.xp, self.nb, self.size = xp, nb, n_groups * nb
        self.count = xp.zeros(self.size, integer=True)
        self.weight = xp.zeros(self.size)
        self.score = xp.zeros(self.size)
        self.target = xp.zeros(self.size)

    def add(self, ids, x, t, w):
        xp = self.xp
        if ids.ndim == 2:
            ids = ids + xp.arange(ids.shape[1]).reshape(1, -1) * self.nb
            if w is not None:
                w = xp.broadcast_rows(w, ids.shape).reshape(-1)
            ids, x, t = ids.reshape(-1), x.reshape(-1), t.reshape(-1)
        count = xp.bincount(ids, None, self.size)
        self.count += count
        if w is None:
            self.weight += count
            self.score += xp.bincount(ids, x, self.size)
            self.target += xp.bincount(ids, t, self.size)
        else:
            self.weight += xp.bincount(ids, w, self.size)
            self.score += xp.bincount(ids, w * x, self.size)
            self.target += xp.bincount(ids, w * t, self.size)

    def groups(self, edges, ids=None, targets=None):
        """One dict per group: NumPy ``edges``, ``ids`` and ``targets`` (given or
        None), and per-bin ``count`` (int64), ``weight``, ``score_sum``,
        ``target_sum``."""
        xp, nb = self.xp, self.nb
        edges, ids, targets = (None if a is None else xp.to_numpy(a)
                               for a in (edges, ids, targets))
        count, weight, score, target = (
            xp.to_numpy(a) for a in (self.count, self.weight, self.score, self.target)
        )
        return [
            {"edges": edges, "ids": ids, "targets": targets,
             "count": count[sl].astype(np.int64), "weight": weight[sl],
             "score_sum": score[sl], "target_sum": target[sl]}
            for sl in (slice(g * nb, (g + 1) * nb) for g in range(self.size // nb))
        ]


def _weight(inp, sl):
    return None if inp.weight is None else inp.weight[sl]


def binned_event(inp, xp, event_chunks, n, n_bins, strategy, keep=False):
    """The per-bin sums of one event (a :meth:`_BinSums.groups` dict).

    ``event_chunks`` yields ``(rows, score, target)`` float64 chunks of ``n``
    rows; equal-mass bins need the ``(n,)`` scores for their edges. With
    ``keep=True`` the ``(n,)`` bin indices and targets (``"ids"``, ``"targets"``)
    are kept for the bootstrap of ``reliability_curve``.
    """
    if strategy == "uniform":
        edges = xp.uniform_edges(n_bins)
        binned = ((sl, xp.uniform_bin_ids(x, n_bins), x, t)
                  for sl, x, t in event_chunks)
    else:
        scores, hits = xp.empty(n), xp.zeros_bool(n)  # 0/1 targets kept as bool
        for sl, x, t in event_chunks:
            scores[sl], hits[sl] = x, t > 0
        edges = xp.quantile_edges(scores, inp.weight, n_bins)
        binned = ((sl, xp.quantile_ids(edges, scores[sl]), scores[sl], xp.f64(hits[sl]))
                  for sl in xp.chunk_rows(n, 1))
    acc = _BinSums(xp, 1, edges.shape[0] - 1)
    ids_all = xp.zeros(n, integer=True) if keep else None
    tgt_all = xp.empty(n) if keep else None
    for sl, ids, x, t in binned:
        acc.add(ids, x, t, _weight(inp, sl))
        if keep:
            ids_all[sl], tgt_all[sl] = ids, t
    return acc.groups(edges, ids_all, tgt_all)[0]


def class_chunks(inp, xp, k, column=None):
    """``(rows, p_k, 1[y = k])`` float64 chunks of class ``k`` (or of ``column``)."""
    X, y = inp.scores, inp.y
    if column is not None:
        for sl in xp.chunk_rows(X.shape[0], 1):
            yield sl, column[sl], xp.f64(y[sl] == k)
    elif not inp.binary_1d and not inp.logits:
        for sl in xp.chunk_rows(X.shape[0], X.shape[1]):
            yield sl, xp.f64(X[sl, k]), xp.f64(y[sl] == k)
    else:
        for sl, p, _ in proba_chunks(inp, xp):
            yield sl, p[:, k], xp.f64(y[sl] == k)


def each_class_chunks(inp, xp):
    """Yield ``(k, chunks of class k)`` for every class, as :func:`class_chunks`.

    For 2-D logits each class reads its ``(n,)`` probabilities ``exp((z_k - m)
    - lse)``, from the :func:`logit_shift` of one pass (two more ``(n,)`` vectors).
    """
    shift = logit_shift(inp, xp) if inp.logits and not inp.binary_1d else None
    for k in range(n_columns(inp)):
        column = None
        if shift is not None:
            m, lse = shift
            column = xp.exp((xp.f64(inp.scores[:, k]) - m) - lse)
        yield k, class_chunks(inp, xp, k, column)


def event_chunks(inp, xp, kind, class_index=None):
    """The ``(rows, score, outcome)`` chunks of one event: ``"top-label"``, the
    float64 ``max_k p_ik`` and ``1[argmax = y]`` (argmax of the log-probabilities
    for logits, ties to the lowest column), else :func:`class_chunks` of its column."""
    if kind == "top-label":
        return ((sl, xp.row_max(p), xp.f64(xp.row_argmax(p if lp is None else lp)
                                           == inp.y[sl]))
                for sl, p, lp in proba_chunks(inp, xp))
    k = _class_index(kind, class_index, n_columns(inp), inp.pos_index)
    return class_chunks(inp, xp, k)


def binned_all_classes(inp, xp, n_bins, strategy):
    """Per-bin sums of every class column (``kind="classwise"``, all classes).

    Uniform bins: all classes in one pass; equal-mass bins: one class at a time.
    """
    n, K = inp.scores.shape[0], n_columns(inp)
    if strategy == "uniform":
        acc = _BinSums(xp, K, n_bins)
        classes = xp.arange(K).reshape(1, -1)
        for sl, p, _ in proba_chunks(inp, xp):
            target = xp.f64(inp.y[sl].reshape(-1, 1) == classes)
            acc.add(xp.uniform_bin_ids(p, n_bins), p, target, _weight(inp, sl))
        return acc.groups(xp.uniform_edges(n_bins))
    return [binned_event(inp, xp, chunks, n, n_bins, strategy)
            for _, chunks in each_class_chunks(inp, xp)]
