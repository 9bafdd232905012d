"""Calibration tests with p-values: Spiegelhalter's Z, cumulative KS and Kuiper.

All three test the null hypothesis "the scores are calibrated":
``P(o = 1 | s) = s`` for the event's scores ``s`` and 0/1 outcomes ``o``.
"""

import numpy as np
from scipy.special import ndtr
from sklearn.utils import Bunch

from ._events import single_event
from ._params import event_params, validated

__all__ = [
    "kolmogorov_smirnov_calibration_test",
    "kuiper_calibration_test",
    "spiegelhalter_test",
]


_PARAMS = event_params("""
        Non-negative frequency weights: a weight of 2 is the same as the row
        repeated (the weights' scale sets the sample size of the test).""")

#: The reference of the two cumulative tests, ``%(arrieta_ibarra)s``.
_ARRIETA_IBARRA = """\
.. [1] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu,
   "Metrics of calibration for probabilistic predictions", JMLR 23(351),
   2022."""

#: The docstring the three tests share; :func:`_calibration_test` fills it.
_DOC = """{summary}

    Parameters
    ----------
    %(params)s

    Returns
    -------
    result : :class:`sklearn.utils.Bunch`
        ``statistic`` (float) and ``pvalue`` (float, in [0, 1]).
        ``statistic`` is {statistic}.

    Raises
    ------
    ValueError
        As :func:`calibration_error`; also when every score is 0 or 1{raises}.

    See Also
    --------
    {see_also}

    Notes
    -----
{doc}"""


def _calibration_test(statistic, name, doc, *, summary, statistic_doc, raises=""):
    """The public test ``name``: ``statistic(s, o, w)`` is its statistic and p-value.

    Its docstring is :data:`_DOC` filled with the texts given (``doc``: from
    the Notes on).
    """

    def test(
        y_true,
        y_prob,
        *,
        kind="top-label",
        class_index=None,
        sample_weight=None,
        input_type="probabilities",
        labels=None,
        pos_label=None,
    ):
        s, o, w = single_event(
            y_true, y_prob, kind, class_index, sample_weight, input_type, labels,
            what="A calibration test", pos_label=pos_label, unit_weights=True,
        )
        stat, pvalue = statistic(s, o, w)
        return Bunch(statistic=stat, pvalue=pvalue)

    test.__name__ = test.__qualname__ = name
    test.__doc__ = _DOC.format(
        summary=summary, statistic=statistic_doc, raises=raises,
        see_also=", ".join(other for other in __all__ if other != name), doc=doc,
    )
    return validated("kind", "class_index", "input_type",
                     docs={"params": _PARAMS, "arrieta_ibarra": _ARRIETA_IBARRA})(test)


def _spiegelhalter(s, o, w):
    num = np.sum(w * (o - s) * (1 - 2 * s))
    var = np.sum(w * (1 - 2 * s) ** 2 * s * (1 - s))
    if not var > 0:
        raise ValueError(
            "Spiegelhalter's Z is undefined: every score is 0, 1/2 or 1, so its "
            "variance under calibration is 0."
        )
    z = float(num / np.sqrt(var))
    return z, float(2 * ndtr(-abs(z)))


spiegelhalter_test = _calibration_test(
    _spiegelhalter, "spiegelhalter_test",
    summary="""Spiegelhalter's Z test of calibration (two-sided).

    Under calibration the Brier score's deviation from its expectation,
    standardised by its standard deviation, is asymptotically standard
    normal. Over- and under-confidence both move it away from 0, so the
    p-value is two-sided.""",
    statistic_doc=":math:`Z`; ``pvalue`` is :math:`2(1 - \\Phi(|Z|))`",
    raises=""" (the
        variance of the statistic is 0)""", doc="""\
    .. math::

        Z = \\frac{\\sum_i w_i (o_i - s_i)(1 - 2 s_i)}
        {\\sqrt{\\sum_i w_i (1 - 2 s_i)^2 s_i (1 - s_i)}}

    (Spiegelhalter 1986, eq. 3, with frequency weights :math:`w_i`).
    MAPIE's ``spiegelhalter_p_value`` returns the one-sided
    :math:`1 - \\Phi(Z)`, which calls under-confident models (negative
    :math:`Z`) calibrated with p-values near 1; the statistic is the same.
    Scores all equal to 1/2 make the statistic undefined too.

    References
    ----------
    .. [1] D. J. Spiegelhalter, "Probabilistic prediction in patient
       management and clinical trials", Statistics in Medicine 5(5), 1986.

    Examples
    --------
    >>> from skcal.metrics import spiegelhalter_test
    >>> res = spiegelhalter_test([0, 1, 1, 0, 1], [0.1, 0.8, 0.7, 0.4, 0.9],
    ...                          kind="binary")
    >>> round(res.statistic, 4), round(res.pvalue, 4)
    (-1.0328, 0.3017)
    """)


def _cumulative(s, o, w):
    """Cumulative differences at the ends of tie groups, and the scale sigma."""
    order = np.argsort(s, kind="stable")
    s, o, w = s[order], o[order], w[order]
    W = np.sum(w)
    c = np.cumsum(w * (o - s)) / W
    last = np.ones(s.shape[0], dtype=bool)
    last[:-1] = s[1:] != s[:-1]  # only the last row of each run of ties
    c = np.concatenate([[0.0], c[last]])
    sigma = np.sqrt(np.sum(w * s * (1 - s))) / W
    if not sigma > 0:
        raise ValueError(
            "The cumulative calibration tests are undefined when every score is "
            "0 or 1 (their scale sum_i s_i (1 - s_i) is 0)."
        )
    return c, sigma


def _sup_abs_bm_sf(x):
    """P(sup_[0,1] |B| >= x) for standard Brownian motion B."""
    if x <= 0:
        return 1.0
    if x < 1.0:  # theta series, fast for small x (as in MAPIE / Feller)
        k = np.arange(0, 60) + 0.5
        cdf = 2 / np.pi * np.sum((-1) ** np.arange(60) / k
                                 * np.exp(-(k**2) * np.pi**2 / (2 * x * x)))
        return float(min(max(1.0 - cdf, 0.0), 1.0))
    k = np.arange(0, 60)  # reflection series, accurate in the tail
    return float(min(4 * np.sum((-1) ** k * ndtr(-(2 * k + 1) * x)), 1.0))


def _bm_range_sf(x):
    """P(max B - min B >= x) over [0, 1] for standard Brownian motion B."""
    if x <= 0:
        return 1.0
    if x < 1.5:  # Feller's small-x series for the CDF (as in MAPIE)
        k = np.arange(0, 60) + 0.5
        cdf = np.sum((8 / x**2 + 2 / (k**2 * np.pi**2))
                     * np.exp(-2 * k**2 * np.pi**2 / x**2))
        return float(min(max(1.0 - cdf, 0.0), 1.0))
    # 8 sum (-1)^(k-1) k Phi_bar(k x), from the density 8 sum (-1)^(k-1) k^2 phi(k x)
    k = np.arange(1, 80)
    return float(min(8 * np.sum((-1.0) ** (k - 1) * k * ndtr(-k * x)), 1.0))


def _ks(s, o, w):
    c, sigma = _cumulative(s, o, w)
    stat = float(np.max(np.abs(c)) / sigma)
    return stat, _sup_abs_bm_sf(stat)


kolmogorov_smirnov_calibration_test = _calibration_test(
    _ks, "kolmogorov_smirnov_calibration_test",
    summary="""Kolmogorov-Smirnov test of calibration on cumulative differences.

    Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu (2022): sort the rows by
    score and accumulate the differences between outcomes and scores; under
    calibration the path, scaled by its standard deviation, behaves like a
    standard Brownian motion on [0, 1]. The statistic is its maximum absolute
    value. No bins and no bandwidth.""",
    statistic_doc=":math:`\\max_k |C_k| / \\sigma`", doc="""\
    With rows sorted by score and frequency weights :math:`w_i`,
    :math:`W = \\sum_i w_i`:

    .. math::

        C_k = \\frac1W \\sum_{j \\le k} w_j (o_j - s_j),\\qquad
        \\sigma = \\frac1W \\sqrt{\\sum_i w_i s_i (1 - s_i)},\\qquad
        \\mathrm{KS} = \\max_k |C_k| / \\sigma .

    The p-value is :math:`P(\\sup_{t \\le 1} |B_t| \\ge \\mathrm{KS})`,
    from the series :math:`1 - \\frac4\\pi \\sum_{k \\ge 0} \\frac{(-1)^k}{2k+1}
    e^{-(2k+1)^2\\pi^2 / (8x^2)}` for :math:`x < 1` and the reflection series
    :math:`4 \\sum_{k \\ge 0} (-1)^k \\bar\\Phi((2k+1)x)` above (accurate in
    the tail, where ``1 - cdf`` loses all digits).

    Differences with MAPIE (``kolmogorov_smirnov_statistic`` /
    ``kolmogorov_smirnov_p_value``): MAPIE breaks ties in the scores by
    adding random relative noise of 1e-8 before sorting (seeded); here the
    path is read only at the end of each group of tied scores, which is
    exactly invariant to the order of the rows and to repeating rows (and
    equals MAPIE's statistic when the scores have no ties). MAPIE computes
    the p-value as ``1 - cdf``, which is 0 below about 1e-16; here it keeps
    its relative accuracy.

    References
    ----------
    %(arrieta_ibarra)s

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.metrics import kolmogorov_smirnov_calibration_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> y = (rng.uniform(size=1000) < p ** 2).astype(int)  # over-confident
    >>> kolmogorov_smirnov_calibration_test(y, p, kind="binary").pvalue < 1e-6
    True
    """)


def _kuiper(s, o, w):
    c, sigma = _cumulative(s, o, w)
    stat = float((np.max(c) - np.min(c)) / sigma)
    return stat, _bm_range_sf(stat)


kuiper_calibration_test = _calibration_test(
    _kuiper, "kuiper_calibration_test",
    summary="""Kuiper test of calibration on cumulative differences.

    As :func:`kolmogorov_smirnov_calibration_test`, with the range of the
    cumulative path (maximum minus minimum) as the statistic, which is
    sensitive to miscalibration confined to a middle range of scores.""",
    statistic_doc=":math:`(\\max_k C_k - \\min_k C_k) / \\sigma`", doc="""\
    :math:`C_0 = 0` is part of the path. The p-value is :math:`P(\\max B -
    \\min B \\ge x)` for a standard Brownian motion on [0, 1] (Feller 1951):
    ``1 - cdf`` from the series :math:`\\sum_{k \\ge 0} (8/x^2 + 2/(\\pi^2
    (k+1/2)^2)) e^{-2(k+1/2)^2\\pi^2/x^2}` for :math:`x < 1.5` and
    :math:`8 \\sum_{k \\ge 1} (-1)^{k-1} k \\bar\\Phi(kx)` above (the tail
    of the density :math:`8 \\sum_k (-1)^{k-1} k^2 \\varphi(kx)`). MAPIE's
    ``kuiper_statistic`` omits :math:`C_0`, so for a path that never changes
    sign its statistic is the range of :math:`C_1..C_n` only (smaller by at
    most one row's term); ties are handled as in
    :func:`kolmogorov_smirnov_calibration_test`.

    References
    ----------
    %(arrieta_ibarra)s
    .. [2] W. Feller, "The asymptotic distribution of the range of sums of
       independent random variables", Annals of Mathematical Statistics 22,
       1951.

    Examples
    --------
    >>> from skcal.metrics import kuiper_calibration_test
    >>> res = kuiper_calibration_test([0, 1, 1, 0, 1], [0.1, 0.8, 0.7, 0.4, 0.9],
    ...                               kind="binary")
    >>> round(res.statistic, 4)
    0.6751
    """)
