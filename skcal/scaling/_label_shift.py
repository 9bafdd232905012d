"""Label-shift adaptation of calibrated probabilities by EM (Saerens et al. 2002)."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, validate_params
from sklearn.utils.validation import check_array

from .._backend._array import like_input, to_numpy
from ..utils.validation import _caller_stacklevel, check_sample_weight

__all__ = ["adapt_to_label_shift"]


@validate_params(
    {
        "proba": "no_validation",
        "source_priors": ["array-like"],
        "sample_weight": "no_validation",
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "return_n_iter": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def adapt_to_label_shift(
    proba, source_priors, *, sample_weight=None, tol=1e-8, max_iter=1000, return_n_iter=False
):
    """Estimate the class priors of an unlabelled target set and adapt the probabilities.

    Given calibrated posteriors ``p(k | x_i)`` of a model trained (or
    calibrated) where the classes have priors ``source_priors``, and the
    assumption that only the priors change on the target set (label shift:
    ``p(x | k)`` is unchanged), the EM algorithm of Saerens et al. (2002)
    finds the maximum-likelihood target priors ``pi`` and the adapted
    posteriors ``q_ik = p_ik pi_k / s_k / sum_j p_ij pi_j / s_j``.

    Parameters
    ----------
    proba : array-like or torch.Tensor of shape (n_samples, n_classes)
        Calibrated probabilities on the target set (rows sum to 1). Their
        calibration matters: EM is only as good as the posteriors (Alexandari
        et al. 2020 recommend :class:`~skcal.BiasCorrectedTemperatureScaler`
        or :class:`~skcal.VectorScaler`).
    source_priors : array-like of shape (n_classes,)
        Class priors of the data the probabilities are calibrated for (e.g.
        the label frequencies of the calibration set); positive, summing to 1
        (to within 1e-6; they are renormalised).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the target rows.
    tol : float, default=1e-8
        Stop when no prior changes by more than ``tol`` in one iteration.
    max_iter : int, default=1000
        The most EM iterations (at least 1).
    return_n_iter : bool, default=False
        Also return the number of EM iterations.

    Returns
    -------
    adapted_proba : ndarray or torch.Tensor of shape (n_samples, n_classes)
        ``q``; a float64 array, or a tensor on the input's device for tensor
        input.
    target_priors : ndarray of shape (n_classes,), float64
        The estimated target priors ``pi`` (the weighted mean of ``q``).
    n_iter : int
        Only with ``return_n_iter=True``.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        If ``tol`` is negative, ``max_iter`` is below 1 or not an integer, or
        ``return_n_iter`` is not a bool (a subclass of ``ValueError``).
    ValueError
        If ``proba`` is not 2-D with rows of non-negative finite values summing
        to 1 (within 1e-4), or ``source_priors`` does not have one positive
        entry per column summing to 1.

    Warns
    -----
    ConvergenceWarning
        If ``max_iter`` is reached.

    Notes
    -----
    EM iteration (Saerens et al. 2002, Eq. 2.4-2.5): from ``pi^0 = s``,
    ``q_ik^t ∝ p_ik pi_k^t / s_k`` (normalised per row) and
    ``pi^{t+1} = mean_i q_i^t``. Each iteration cannot decrease the
    likelihood of the target set under the adapted model; the fixed point is
    its maximiser over the priors (a convex problem).

    References
    ----------
    M. Saerens, P. Latinne, C. Decaestecker, "Adjusting the Outputs of a
    Classifier to New a Priori Probabilities: A Simple Procedure", Neural
    Computation 14(1), 2002.

    A. Alexandari, A. Kundaje, A. Shrikumar, "Maximum Likelihood with
    Bias-Corrected Calibration is Hard-To-Beat at Label Shift Adaptation",
    ICML 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import adapt_to_label_shift
    >>> p = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]])
    >>> q, pi = adapt_to_label_shift(p, [0.5, 0.5])
    >>> bool(np.allclose(q.sum(axis=1), 1.0)), pi.shape
    (True, (2,))
    """
    P = check_array(to_numpy(proba), dtype=np.float64)
    n, k = P.shape
    if not np.all(np.isfinite(P)) or np.any(P < 0):
        raise ValueError("proba must hold non-negative finite probabilities.")
    if np.any(np.abs(P.sum(axis=1) - 1.0) > 1e-4):
        raise ValueError("Each row of proba must sum to 1 (within 1e-4).")
    s = np.asarray(source_priors, dtype=np.float64).ravel()
    if s.shape != (k,):
        raise ValueError(
            f"source_priors has {s.size} entries, but proba has {k} columns."
        )
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        bad = int(np.flatnonzero(~(np.isfinite(s) & (s > 0)))[0])
        raise ValueError(
            f"source_priors must be positive and finite; entry {bad} is {float(s[bad])!r} "
            "(a class with zero prior cannot be re-weighted: drop its column)."
        )
    if abs(s.sum() - 1.0) > 1e-6:
        raise ValueError(
            f"source_priors must sum to 1 (within 1e-6); got sum {s.sum():.8g}."
        )
    s = s / s.sum()
    w = check_sample_weight(sample_weight, n)
    if w is not None:
        w = w / w.sum()
    pi = s.copy()
    Q = P.copy()
    for n_iter in range(1, max_iter + 1):
        np.multiply(P, pi / s, out=Q)
        Q /= Q.sum(axis=1, keepdims=True)
        new = Q.mean(axis=0) if w is None else w @ Q
        change = float(np.max(np.abs(new - pi)))
        pi = new
        if change <= tol:
            break
    else:
        warnings.warn(
            f"EM label-shift adaptation stopped after max_iter={max_iter} "
            f"iterations (last change of a prior {change:.3g} > tol={tol:g}).",
            ConvergenceWarning,
            stacklevel=_caller_stacklevel(),
        )
    np.multiply(P, pi / s, out=Q)
    Q /= Q.sum(axis=1, keepdims=True)
    Q = like_input(Q, proba)
    return (Q, pi, n_iter) if return_n_iter else (Q, pi)
