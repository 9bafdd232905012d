"""Scaling-binning calibration (Kumar, Liang & Ma, NeurIPS 2019)."""

import math
from numbers import Integral

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from .._backend._ovr import param_like
from ..base import BaseCalibrator
from ..utils._docstrings import substitute_docstring
from ._base import HostStepMapCalibrator, unzip_maps, warn, warn_constant_scores
from ._binning import bin_sums, cut_edges, distinct_scores, equal_mass_cuts
from ..utils._weights import weight_unit
from ._logistic import base_rate_log_odds, fit_logistic_bounded
from ._platt import fit_platt, fit_platt_ovr, platt_targets
from ..utils._params import store_params

__all__ = ["ScalingBinningCalibrator", "fit_scaling_binning"]


def fit_scaling_binning(s, y, sample_weight=None, *, n_bins=10, scaling="platt"):
    """Fit a scaling map ``g(s) = sigmoid(A s + B)``, then bin ``g`` and average it per bin.

    Parameters
    ----------
    s, y, sample_weight, n_bins
        As in :func:`skcal.ovr._histogram.fit_histogram` (the bins are on ``A s + B``).
    scaling : {"platt", "temperature"}, default="platt"
        ``"platt"``: ``A, B`` by maximum likelihood with Platt's smoothed
        targets; ``"temperature"``: ``B = 0`` and ``A`` likewise.

    Returns
    -------
    A, B : float
    edges : ndarray
        Equal-mass bin edges on ``f = A s + B``.
    values : ndarray of shape (len(edges) + 1,)
        Weighted mean of ``g = sigmoid(f)`` over the calibration rows of each bin.
    status : {"converged", "max_iter", "constant"}
        The scaling fit's status; ``"constant"``: constant scores, the map is
        the base rate (clipped to ``[1e-6, 1 - 1e-6]``).
    """
    s = np.asarray(s, dtype=np.float64)
    y = np.asarray(y, dtype=bool)
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, np.float64)
    wsum = float(w.sum())
    if scaling == "platt":
        mu = float((w * s).sum() / wsum)
        sd = math.sqrt(float((w * (s - mu) ** 2).sum() / wsum))
        if not sd > 1e-13 * abs(mu):  # constant scores: the base rate
            A, B = 0.0, float(base_rate_log_odds(float(w[y].sum()), wsum))
            status = "constant"
        else:
            A, B, _, status = fit_platt(s, y, sample_weight, max_iter=200)
            status = "converged" if status == "converged" else "max_iter"
    else:
        t, _, _ = platt_targets(y, w, weight_unit(sample_weight))  # counting rows
        theta, _, ok = fit_logistic_bounded(s[:, None], t, w, theta0=np.ones(1))
        A, B, status = float(theta[0]), 0.0, "converged" if ok else "max_iter"
    edges, values = _bin_scaled(s, y, sample_weight, A, B, n_bins)
    return float(A), float(B), edges, values, status


def _bin_scaled(s, y, sample_weight, A, B, n_bins, distinct=None):
    """Equal-mass bins of ``f = A s + B`` and the weighted mean of ``sigmoid(f)`` in each.

    ``distinct``: :func:`distinct_scores` of ``f``, when the caller has it.
    Returns ``edges, values``.
    """
    if distinct is None:
        distinct = distinct_scores(A * s + B, y, sample_weight)
    u, W, _ = distinct
    edges = cut_edges(u, equal_mass_cuts(W, n_bins))
    n, g = bin_sums(u, edges, W, W * expit(u))
    return edges, g / n


@substitute_docstring
class ScalingBinningCalibrator(HostStepMapCalibrator):
    """Scaling-binning calibration: Platt (or temperature) scaling, then the bin mean of the scaled values.

    Parameters
    ----------
    %(calibrator_params)s
    n_bins : int, default=10
        Number of equal-mass bins of the scaled values.
    scaling : {"platt", "temperature"}, default="platt"
        The scaling map of each class: ``g(s) = sigmoid(A s + B)`` (Platt) or
        ``sigmoid(A s)`` (one-vs-rest temperature).

    Attributes
    ----------
    a_, b_ : float or ndarray of shape (n_classes,)
        The scaling maps (``b_ = 0`` for temperature).
    bin_edges_ : ndarray or list of ndarray
        Edges on ``A s + B``.
    bin_probabilities_ : ndarray or list of ndarray
        Output of each bin: the mean of ``g`` over its calibration rows.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    skcal.PlattScaler : the scaling step alone.
    skcal.HistogramCalibrator : binning of the raw scores, with bin frequencies.

    Notes
    -----
    Kumar et al. (2019, Section 4) fit a scaling function ``g`` (Platt),
    choose equal-mass bins of ``g``'s values, and output in each bin the mean
    of ``g`` -- not the frequency of the class -- over the bin's calibration
    rows. The output takes ``n_bins`` values, so its calibration error can be
    measured reliably (a binned estimator of ECE is unbiased for a map with
    finitely many values), while averaging ``g`` instead of the labels keeps
    the variance of the scaling method: the sample complexity is
    ``O(B + 1/eps^2)`` instead of histogram binning's ``O(B / eps^2)``.

    The paper splits the calibration set in three (scaling fit, bin edges,
    bin means); like the authors' ``calibration`` package
    (``PlattBinnerCalibrator``), skcal uses the whole set for all three
    steps. The bins are equal-mass on ``f = A s + B`` (the same bins as on
    ``g = sigmoid(f)``, which is increasing, but not merged by ``g``
    rounding to 1 in floating point), with the tie and edge rules of
    :class:`~skcal.HistogramCalibrator`. With ``A >= 0`` the map is
    non-decreasing; on anti-informative scores Platt's optimum has ``A < 0``
    and the map decreases (it reverses the ranking of the scores), which is
    kept -- it is the better-calibrated map on such data -- with a
    ``UserWarning``. Every output lies strictly inside ``(0, 1)`` unless ``g``
    itself reaches 0 or 1, so the log loss stays finite.

    The scaling step is Platt's method with its smoothed targets
    ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``, solved by Newton's method on
    standardised scores to ``tol=1e-12`` (:func:`skcal.ovr._platt.fit_platt`,
    at most 200 iterations), so its optimum is finite even for scores that
    separate the classes (the reference implementation's nearly
    unregularised logistic regression has none there). The smoothed targets
    count the rows ``N+, N-`` of each label. A ``ConvergenceWarning``
    reports a failed fit; constant scores (Platt scaling) give the base rate,
    with a ``UserWarning``. Unweighted multiclass Platt steps are solved for
    all classes in the same passes over the logits
    (:func:`skcal.ovr._platt.fit_platt_ovr`; float32 evaluations for
    float32 logits with at least 40,000 rows, within ~1e-7 relative of the
    float64 solve), then each class is binned.

    %(weight_unit)s

    References
    ----------
    A. Kumar, P. Liang, T. Ma, "Verified uncertainty calibration", NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import ScalingBinningCalibrator
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 2)
    >>> sb = ScalingBinningCalibrator(n_bins=10).fit(X, y)
    >>> len(np.unique(sb.predict_proba(X)[:, 1]))  # one probability per bin
    10
    """

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "scaling": [StrOptions({"platt", "temperature"})],
    }

    def __init__(self, *, input_type="logits", classes=None, backend="auto", n_bins=10,
                 scaling="platt"):
        store_params(self, locals())

    def _fit_map(self, s, t, sample_weight, label):
        A, B, edges, values, status = fit_scaling_binning(
            s, t, sample_weight, n_bins=self.n_bins, scaling=self.scaling
        )
        if status == "constant":
            warn_constant_scores("Scaling-binning", label)
        if status == "max_iter":
            warn(f"The {self.scaling} scaling of {label} did not converge ({status}).",
                 ConvergenceWarning)
        if A < 0:
            warn(f"Scaling-binning of {label}: the scores are anti-informative on the "
                 f"calibration set (fitted slope A={A:.3g} < 0), so the map decreases "
                 "with the score: it reverses the ranking of the scores. Check the sign "
                 "or the column order of the scores.")
        return A, B, edges, values

    def _fit_multiclass(self, Z, y, sample_weight):
        """Platt steps of all classes in the same passes (:func:`fit_platt_ovr`), then one binning per class.

        Unweighted Platt scaling only (see the class Notes); a class whose
        batched fit did not converge or has ``A <= 0`` goes through
        :func:`fit_scaling_binning` (which also tells constant scores).
        """
        if sample_weight is not None or self.scaling != "platt":
            return super()._fit_multiclass(Z, y, sample_weight)
        self._platt_ovr = fit_platt_ovr(Z, y, None, target_smoothing=True, tol=1e-12,
                                        max_iter=200)
        try:  # the base class's loop over the score columns, through _fit_class
            return super()._fit_multiclass(Z, y, sample_weight)
        finally:
            del self._platt_ovr

    def _fit_class(self, s, t, sample_weight, k):
        A, B, _, status = getattr(self, "_platt_ovr", (None,) * 4)
        if A is None or not (status[k] == "converged" and A[k] > 0 and np.isfinite(B[k])):
            return super()._fit_class(s, t, sample_weight, k)
        # unweighted: the weight of a distinct f is its count
        u, cnt = np.unique(A[k] * s + B[k], return_counts=True)
        edges, values = _bin_scaled(s, t, None, A[k], B[k], self.n_bins,
                                    (u, cnt.astype(np.float64), None))
        return float(A[k]), float(B[k]), edges, values

    def _set_maps(self, maps):
        self.a_, self.b_, self.bin_edges_, self.bin_probabilities_ = unzip_maps(maps, 2)

    def _map_scores(self, S):
        F = S * param_like(self.a_, S)
        F += param_like(self.b_, S)
        return super()._map_scores(F)
