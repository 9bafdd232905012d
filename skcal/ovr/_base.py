"""The one-vs-rest machinery shared by every per-class calibrator.

A per-class method maps one score to one probability. :class:`OneVsRestCalibrator`
turns that into a multiclass calibrator:

- **scores**: a binary problem has one score per row, the log-odds
  ``s = z_1 - z_0`` of ``classes_[1]``; a multiclass problem has, per class
  ``k``, the one-vs-rest log-odds ``s_ik = log p_ik - log(1 - p_ik)`` of
  ``p_i = softmax(z_i)`` (:func:`skcal._backend._ovr.ovr_log_odds`), computed
  without cancellation and invariant to adding a constant to a row;
- **fit**: one 1-D fit per class on ``(s_k, y == k)`` with the sample weights,
  each score column computed from four per-row statistics so that the fit
  never holds an (n_samples, n_classes) matrix;
- **combine**: the per-class probabilities ``q_ik`` are renormalised,
  ``P_ik = q_ik / sum_j q_ij``; a row whose ``q_ij`` are all 0 gets the uniform
  distribution. Maps that output log-odds ``f_ik`` are combined in log space,
  ``log P_ik = log sigmoid(f_ik) - logsumexp_j log sigmoid(f_ij)``, so no row is
  ever ``0 / 0``;
- **predict** walks the rows in chunks, on the device of a tensor input.

What a per-class method implements: :class:`OneVsRestCalibrator`.
"""

import warnings

import numpy as np

from .._backend import _numpy
from .._backend import _ovr as ops
from ..base import BaseCalibrator
from .._backend._array import to_numpy
from .._backend._steps import step_lookup_columns
from ..utils.validation import _caller_stacklevel

__all__ = ["OneVsRestCalibrator"]

#: Largest block of float64 score columns held by the per-class fit (at
#: least one column is always taken).
FIT_BLOCK_BYTES = 1 << 26


#: Rows judged by :func:`_warn_if_logits_below_ovr_resolution` (the first ones).
OVR_RESOLUTION_CHECK_ROWS = 1000

#: Within-row logit spread below which the one-vs-rest log-odds lose digits.
OVR_MIN_LOGIT_SPREAD = 1e-6


def warn(message, category=UserWarning):
    """``warnings.warn`` pointing at the first frame outside skcal (the user's call)."""
    warnings.warn(message, category, stacklevel=_caller_stacklevel())


def warn_constant_scores(method, label):
    """The ``UserWarning`` of a map fitted on constant scores: the base rate."""
    warn(f"{method} of {label}: constant scores; the map is the base rate.")


def _warn_if_logits_below_ovr_resolution(est, Z):
    """Warn when the logits of K > 2 classes span too little for the one-vs-rest log-odds.

    The log-odds ``z_k - log sum_{j != k} exp(z_j)`` are a difference of
    numbers of size ``log(K - 1)``, rounded at about ``1e-16``: logits
    spanning ``d`` within a row keep about ``-log10(1e-16 / d)`` digits.
    Judged on the first :data:`OVR_RESOLUTION_CHECK_ROWS` rows.

    Warns
    -----
    UserWarning
        Naming the spread and the remedy (multiply the logits).
    """
    head = np.asarray(to_numpy(Z[:OVR_RESOLUTION_CHECK_ROWS]), dtype=np.float64)
    spread = float(np.max(head.max(axis=1) - head.min(axis=1)))
    if 0 < spread < OVR_MIN_LOGIT_SPREAD:
        warn(
            f"The logits span at most {spread:.3g} within a row: their one-vs-rest "
            f"log-odds, which {est.__class__.__name__} calibrates, are rounded by "
            "float64 at ~1e-16 and keep fewer than 10 significant digits, so the "
            "per-class maps are fitted to rounding noise. Multiply the logits by a "
            "constant (e.g. 1 / their spread) before calibrating."
        )


def class_label(c):
    """``class 'a'`` / ``class 3`` for messages (NumPy scalars shown as Python ones)."""
    return f"class {(c.item() if isinstance(c, np.generic) else c)!r}"


def label_positions(labels, cols, n_classes):
    """Rows ``r`` and positions ``j`` of the entries ``labels[r] == cols[j]``.

    ``cols``: increasing class indices (all ``n_classes`` of them, or some).
    """
    if cols.size == n_classes:
        return np.arange(labels.size), labels
    pos = np.full(n_classes, -1)
    pos[cols] = np.arange(cols.size)
    j = pos[labels]
    r = np.flatnonzero(j >= 0)
    return r, j[r]


def row_stats_buffers(n, n_float):
    """Empty per-row statistics of ``n`` rows: one intp vector, then ``n_float`` float32 ones."""
    return (np.empty(n, dtype=np.intp),
            *(np.empty(n, dtype=np.float32) for _ in range(n_float)))


def unzip_maps(maps, n_float=0):
    """The fields of the fitted maps: a list per field (the one map's values if binary).

    The first ``n_float`` fields are parameters: floats when binary, float64
    arrays otherwise.
    """
    one = len(maps) == 1
    fields = [v[0] if one else list(v) for v in zip(*maps)]
    for i in range(n_float):
        fields[i] = float(fields[i]) if one else np.asarray(fields[i], dtype=np.float64)
    return fields


class OneVsRestCalibrator(BaseCalibrator):
    """Base class of calibrators made of one 1-D map per class, combined one-vs-rest.

    Subclasses implement:

    ``_fit_map(s, t, sample_weight, label)``
        Fit the map of one class. ``s``: float64 ndarray of shape (n_samples,),
        the class's scores; ``t``: bool ndarray, True where the row belongs to
        the class; ``sample_weight``: float64 ndarray or None; ``label``: the
        class label, for messages. Returns the fitted map (any picklable
        object).
    ``_map_scores(S)``
        Apply the fitted maps column-wise: ``S`` of shape (n_rows, m), m = 1
        for a binary problem (the map of ``classes_[1]``) and ``n_classes``
        otherwise, a float64 NumPy array or a tensor on any device. Returns
        an array of the same shape and kind: probabilities when
        ``_map_output == "proba"``, log-odds when ``"log_odds"``.

    and may override ``_set_maps(maps)`` (default: ``self.calibrators_ = maps``)
    to store the fitted maps under their own attribute names, and
    ``_fit_multiclass(Z, y, sample_weight)`` to fit all classes together.

    Notes
    -----
    Binary outputs are ``[1 - q, q]`` (``[sigmoid(-f), sigmoid(f)]`` for
    log-odds maps), with ``q`` the map of ``classes_[1]``; multiclass outputs
    are renormalised as described in :mod:`skcal.ovr._base`.
    """

    #: Not a calibrator of its own (skipped by :func:`skcal.utils.discovery.all_calibrators`).
    _abstract = True
    #: dask arrays: one pass per class gathers its 1-D score column (``fit_ovr_maps``
    #: of :mod:`skcal._backend._dask`).
    _dask_fit = True
    #: What ``_map_scores`` returns: "proba" or "log_odds".
    _map_output = "proba"
    #: Bytes (float64) of one row chunk at prediction; None: the kernels' default.
    _predict_chunk_bytes = None
    #: Evaluate a CPU tensor through NumPy (for maps with many small operations
    #: per chunk, which torch's CPU kernels run several times slower).
    _predict_on_host = False
    #: ``_fit_map`` only reads its scores, in one or two passes: a binary fit
    #: gets the score column of the logits ``[0, s]`` of a 1-D score itself,
    #: a view (:func:`~skcal._backend._ovr.binary_score_view`), not a copy.
    _fit_reads_score_view = False

    # -------------------------------------------------------------- fitting
    def _fit(self, Z, y, sample_weight, xp):
        self._set_maps(xp.fit_ovr_maps(self, Z, y, sample_weight))

    def _fit_in_memory(self, Z, y, sample_weight):
        """The maps of NumPy or torch logits (``fit_ovr_maps`` of those kernels)."""
        y = ops.to_host(y)
        sw = ops.to_host(sample_weight)
        if Z.shape[1] == 2:
            s = ops.binary_score_view(Z) if self._fit_reads_score_view else to_numpy(ops.binary_score(Z))
            return [self._fit_class(s, y == 1, sw, 1)]
        _warn_if_logits_below_ovr_resolution(self, Z)
        return self._fit_multiclass(Z, y, sw)

    def _fit_class(self, s, t, sample_weight, k):
        """``_fit_map`` of class ``classes_[k]``."""
        return self._fit_map(s, t, sample_weight, class_label(self.classes_[k]))

    def _fit_multiclass(self, Z, y, sample_weight):
        """One ``_fit_map`` per class, on contiguous score columns computed a block of classes at a time.

        The blocks (:func:`skcal._backend._ovr.ovr_score_blocks`, at most
        :data:`FIT_BLOCK_BYTES`) hold exactly :func:`~skcal._backend._ovr.ovr_column`'s
        scores; every block reads only its own columns of ``Z``.
        """
        stats = ops.ovr_row_stats(Z)
        maps = []
        for c0, c1, S in ops.ovr_score_blocks(Z, stats, FIT_BLOCK_BYTES):
            for k in range(c0, c1):
                maps.append(self._fit_class(S[k - c0], y == k, sample_weight, k))
        return maps

    def _set_maps(self, maps):
        self.calibrators_ = list(maps)

    # ----------------------------------------------------------- prediction
    def _scores(self, Zc):
        """Scores of a row chunk: (rows, 1) binary log-odds or (rows, K) one-vs-rest."""
        if Zc.shape[1] == 2 and self._is_binary():
            return ops.binary_score(Zc)[:, None]
        return ops.ovr_log_odds(Zc)

    def _is_binary(self):
        return len(self.classes_) == 2

    def _chunk(self, Zc, log):
        """Calibrated (log-)probabilities of one row chunk."""
        V = self._map_scores(self._scores(Zc))
        if self._map_output == "log_odds":
            if V.shape[1] == 1:
                f = V[:, 0]
                g = ops.log_sigmoid if log else ops.sigmoid
                return ops.stack_columns([g(-f), g(f)])
            return ops.log_proba_from_log_odds(V) if log else ops.proba_from_log_odds(V)
        if V.shape[1] == 1:
            P = ops.stack_columns([1.0 - V[:, 0], V[:, 0]])
        else:
            P = ops.renormalise(V)
        return ops.log_or_neg_inf(P) if log else P

    def _map_rows(self, Z, chunk, widths):
        """Outputs of ``widths`` columns, written from ``chunk(Zc)`` of every row chunk."""
        n, k = Z.shape
        outs = [ops.empty_out(Z, n, m) for m in widths]
        on_host = self._predict_on_host and ops.is_cpu_tensor(Z)
        for sl in _numpy.chunk_rows(n, k, chunk_bytes=self._predict_chunk_bytes):
            for out, v in zip(outs, chunk(ops.host64(Z[sl]) if on_host else Z[sl])):
                ops.write_rows(out, sl, v)
        return outs

    def _predict_rows(self, Z, log):
        return self._map_rows(Z, lambda Zc: [self._chunk(Zc, log)], [Z.shape[1]])[0]

    def _predict_proba(self, Z, xp):
        return self._predict_rows(Z, log=False)

    def _predict_log_proba(self, Z, xp):
        return self._predict_rows(Z, log=True)


class HostStepMapCalibrator(OneVsRestCalibrator):
    """Base class of the one-vs-rest calibrators whose maps are step functions of the score.

    Histogram-like maps (a probability per score interval) looked up by
    ``searchsorted`` on the host: a CPU tensor is evaluated through NumPy in
    row chunks of 16 MiB.
    """

    _abstract = True
    #: A step function of the score (see ``check_dtypes``).
    _piecewise_constant = True
    _predict_on_host = True
    _predict_chunk_bytes = 1 << 24

    def _map_scores(self, S):
        edges, values = self.bin_edges_, self.bin_probabilities_
        if not isinstance(edges, list):  # binary: one map
            edges, values = [edges], [values]
        return step_lookup_columns(S, edges, values)
