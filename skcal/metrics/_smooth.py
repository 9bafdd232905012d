"""Smooth ECE and the smoothed reliability diagram (Błasiok & Nakkiran, 2023).

The computation follows the reference implementation (``relplot``) step by
step (see the Notes of :func:`smooth_calibration_error`), so the values agree
with ``relplot.smECE`` to rounding.
"""

import numpy as np
from sklearn.utils import Bunch

from ._events import single_event
from ._params import event_params, validated

__all__ = ["smooth_calibration_error", "smooth_reliability_curve"]

#: Mesh points of the smECE integral (relplot's ``config.smECE_mesh_pts``).
_MESH_POINTS = 200
#: Density floor added before dividing (relplot's ``eps`` of ``smooth``).
_DENSITY_EPS = 1e-4
#: Smallest bandwidth searched (relplot's ``eps`` of ``smECE``).
_MIN_BANDWIDTH = 1e-3
_BISECTION_STEPS = 10


def _to_grid(f, v, m):
    """Spread values ``v`` at points ``f`` in [0, 1] linearly onto ``m`` grid points."""
    pos = f * (m - 1)
    bins = np.clip(pos.astype(np.int64), 0, m - 2)
    frac = pos - bins
    return (np.bincount(bins, (1 - frac) * v, m)
            + np.bincount(bins + 1, frac * v, m))


def _reflected_smooth(values, sigma):
    """Convolve grid ``values`` with a Gaussian reflected at both ends of [0, 1]."""
    m = values.shape[0]
    t = np.linspace(0.0, 1.0, m)
    ker = np.exp(-(t - 0.5) * (t - 0.5) / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)
    ext = np.concatenate([values[::-1][:-1], values, values[::-1][1:]])
    if m > 1500:
        from scipy.signal import oaconvolve

        out = oaconvolve(ext, ker, mode="valid")
    else:
        out = np.convolve(ext, ker, "valid")
    return out[m // 2: m // 2 + m]


def _apply(f, v, t, sigma):
    """The kernel sums of ``v`` on relplot's grid, linearly interpolated onto ``t``."""
    m = max(2000, round(20 / sigma)) // 2 + 1
    y = _reflected_smooth(_to_grid(f, v, m), sigma)
    inds = np.clip((t * (m - 1)).astype(np.int64), 0, m - 2)
    r = (t - inds / (m - 1)) * (m - 1)
    return y[inds] * (1 - r) + y[inds + 1] * r


def _smooth_ece_sigma(f, o, w, sigma):
    """smECE at ``sigma``: the smoothed residual ``r(t)``, weighted by the density."""
    t = np.linspace(0.0, 1.0, max(round(10 / sigma), _MESH_POINTS))
    ones = np.ones_like(f) if w is None else w
    resid = (f - o) if w is None else w * (f - o)
    dens = _apply(f, ones, t, sigma) + _DENSITY_EPS
    r = _apply(f, resid, t, sigma) / dens
    return float(np.sum(np.abs(r) * dens) / np.sum(dens))


def _smooth_ece_rows(f, o, w):
    """``(smECE, bandwidth)`` of scores ``f``, outcomes ``o``, frequency weights ``w``."""
    def fixed(sigma):
        return sigma < _MIN_BANDWIDTH or sigma < _smooth_ece_sigma(f, o, w, sigma)

    sigma, lo = 1.0, 0.0  # bisection on [lo, sigma] unless 1 is a fixed point
    if not fixed(sigma):
        for _ in range(_BISECTION_STEPS):
            mid = (sigma + lo) / 2
            lo, sigma = (mid, sigma) if fixed(mid) else (lo, mid)
    return _smooth_ece_sigma(f, o, w, sigma), sigma


_PARAMS = event_params("""
        Non-negative frequency weights (a weight of 2 is the same as the row
        repeated; the density floor of the reference code is absolute, so the
        weights' scale matters, as the number of rows does there).""")


@validated("kind", "class_index", "input_type", "return_bandwidth",
           docs={"params": _PARAMS})
def smooth_calibration_error(
    y_true,
    y_prob,
    *,
    kind="top-label",
    class_index=None,
    sample_weight=None,
    input_type="probabilities",
    labels=None,
    pos_label=None,
    return_bandwidth=False,
):
    """Smooth ECE (smECE) of Błasiok & Nakkiran (2023).

    A binning-free calibration error: the residuals ``o_i - s_i`` are
    smoothed over the scores with a Gaussian kernel reflected at 0 and 1, and
    the bandwidth is chosen as the fixed point where it equals the error.
    It is a consistent calibration measure (within a constant factor of the
    distance to the nearest calibrated predictor), has no bin count to tune,
    and is continuous in the predictions.

    Parameters
    ----------
    %(params)s
    return_bandwidth : bool, default=False
        Also return the bandwidth :math:`\\sigma^*`.

    Returns
    -------
    error : float
        The smooth ECE, in [0, 1].
    bandwidth : float
        Only with ``return_bandwidth=True``: :math:`\\sigma^*`.

    Raises
    ------
    ValueError
        As :func:`calibration_error`, and for ``kind="classwise"`` without
        ``class_index``.

    See Also
    --------
    smooth_reliability_curve : The smoothed reliability diagram.
    expected_calibration_error : The binned ECE.

    Notes
    -----
    With the reflected Gaussian kernel :math:`K_\\sigma` on [0, 1], the
    smoothed residual and density on a mesh :math:`t`

    .. math::

        \\hat r_\\sigma(t) = \\frac{\\sum_i w_i K_\\sigma(t, s_i) (s_i - o_i)}
        {\\sum_i w_i K_\\sigma(t, s_i) + \\epsilon}, \\qquad
        \\hat\\delta_\\sigma(t) = \\sum_i w_i K_\\sigma(t, s_i) + \\epsilon,

    give :math:`\\mathrm{smECE}_\\sigma = \\sum_t |\\hat r_\\sigma(t)|
    \\hat\\delta_\\sigma(t) / \\sum_t \\hat\\delta_\\sigma(t)`, and the result
    is :math:`\\mathrm{smECE}_{\\sigma^*}` with :math:`\\sigma^*` the fixed
    point :math:`\\mathrm{smECE}_{\\sigma^*} = \\sigma^*` (Błasiok &
    Nakkiran 2023, Definition 4 and Theorem 6), found by bisection (10 steps
    on [0, 1], floor 0.001). The kernel sums are computed as in the reference
    implementation ``relplot``: scores are spread linearly onto a grid of
    :math:`\\max(2000, 20/\\sigma)/2 + 1` points, convolved with the kernel
    reflected at both ends (FFT overlap-add above 1500 points), and
    interpolated onto a mesh of :math:`\\max(200, 10/\\sigma)` points;
    :math:`\\epsilon = 10^{-4}`. The values equal ``relplot.smECE`` to
    about 1e-12. The cost is about 11 evaluations of one grid convolution,
    plus an ``(n_samples,)`` float64 score, outcome and weight vector.

    References
    ----------
    .. [1] J. Błasiok and P. Nakkiran, "Smooth ECE: Principled Reliability
       Diagrams via Kernel Smoothing", ICLR 2024 (arXiv:2309.12236, 2023).
    .. [2] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran, "A Unifying Theory of
       Distance from Calibration", STOC 2023.

    Examples
    --------
    >>> from skcal.metrics import smooth_calibration_error
    >>> y = [0, 1, 1, 0, 1, 1]
    >>> p = [0.1, 0.8, 0.7, 0.3, 0.9, 0.6]
    >>> round(smooth_calibration_error(y, p, kind="binary"), 4)
    0.18
    """
    f, o, w = single_event(
        y_true, y_prob, kind, class_index, sample_weight, input_type, labels,
        what="The smooth ECE", pos_label=pos_label,
    )
    value, sigma = _smooth_ece_rows(f, o, w)
    return (value, sigma) if return_bandwidth else value


@validated("kind", "class_index", "input_type", "bandwidth", "n_points",
           docs={"params": _PARAMS})
def smooth_reliability_curve(
    y_true,
    y_prob,
    *,
    kind="top-label",
    class_index=None,
    sample_weight=None,
    input_type="probabilities",
    labels=None,
    pos_label=None,
    bandwidth=None,
    n_points=201,
):
    """Smoothed reliability diagram data (Błasiok & Nakkiran, 2023).

    The kernel regression of the outcomes on the scores, with the smooth
    ECE's reflected Gaussian kernel and bandwidth, evaluated on a uniform
    mesh of [0, 1], and the kernel density of the scores.

    Parameters
    ----------
    %(params)s
    bandwidth : float, default=None
        Kernel bandwidth; by default the smooth ECE's fixed point
        :math:`\\sigma^*`.
    n_points : int, default=201
        Mesh size.

    Returns
    -------
    curve : :class:`sklearn.utils.Bunch`
        - ``x`` (n_points,): the mesh;
        - ``prob_true`` (n_points,): smoothed observed frequency at ``x``;
        - ``density`` (n_points,): kernel density of the scores (integrates to
          about 1 over [0, 1]);
        - ``bandwidth`` (float) and ``smooth_ece`` (float);
        - ``score_range`` (tuple of 2 floats): the smallest and largest score
          (of positive weight).

    Raises
    ------
    ValueError
        As :func:`smooth_calibration_error`, or for a bandwidth outside
        (0, 1] or ``n_points < 2``.

    See Also
    --------
    smooth_calibration_error
    skcal.display.ReliabilityDisplay : ``smooth=True`` draws this curve.

    Notes
    -----
    ``prob_true`` is the Nadaraya-Watson regression of the outcomes on the
    scores with the reflected Gaussian kernel,
    :math:`\\hat y_\\sigma(t) = \\sum_i w_i K_\\sigma(t, s_i) o_i /
    (\\sum_i w_i K_\\sigma(t, s_i) + \\epsilon)`, the curve of the paper's
    diagrams (and of ``relplot``'s, without its bootstrap bagging); its
    distance to the diagonal, weighted by the density, is close to the smooth
    ECE (which smooths the residuals :math:`s_i - o_i` instead of the
    outcomes, so the scores' own smoothing cancels).

    References
    ----------
    .. [1] J. Błasiok and P. Nakkiran, "Smooth ECE: Principled Reliability
       Diagrams via Kernel Smoothing", ICLR 2024 (arXiv:2309.12236, 2023).

    Examples
    --------
    >>> from skcal.metrics import smooth_reliability_curve
    >>> curve = smooth_reliability_curve([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4],
    ...                                  kind="binary", n_points=5)
    >>> curve.x.tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    f, o, w = single_event(
        y_true, y_prob, kind, class_index, sample_weight, input_type, labels,
        what="The smooth ECE", pos_label=pos_label,
    )
    value, sigma = _smooth_ece_rows(f, o, w)
    if bandwidth is not None:
        sigma = float(bandwidth)
    t = np.linspace(0.0, 1.0, int(n_points))
    ones = np.ones_like(f) if w is None else w
    mass = _apply(f, ones, t, sigma)
    prob_true = _apply(f, ones * o, t, sigma) / (mass + _DENSITY_EPS)
    density = mass / max(np.trapezoid(mass, t), 1e-300)
    pos = f if w is None else f[w > 0]
    return Bunch(x=t, prob_true=np.clip(prob_true, 0.0, 1.0), density=density,
                 bandwidth=sigma, smooth_ece=value,
                 score_range=(float(np.min(pos)), float(np.max(pos))))
