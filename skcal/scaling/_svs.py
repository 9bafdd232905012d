"""Structured vector scaling (SVS): a diagonal affine map of temperature-scaled log-probabilities.

The diagonal member of the structured matrix scaling family of Berta,
Holzmüller, Jordan & Bach (2025). It is fitted by the shared affine solver of
:mod:`skcal.scaling._affine` (the same code as :class:`~skcal.MatrixScaler`
with its default ``reg="sms"``, restricted to a diagonal ``W``).
"""

from ..utils._docstrings import substitute_docstring
from ._matrix import _AFFINE_DOCS, _COMMON_CONSTRAINTS, _SOLVER_NOTES, _AffineCalibrator

__all__ = ["StructuredVectorScaler"]

#: Above this many classes the fit uses the trust-region Newton-CG solver
#: instead of Newton's method with the exact Hessian.
TRUST_REGION_MIN_CLASSES = 32


@substitute_docstring(entries=_AFFINE_DOCS)
class StructuredVectorScaler(_AffineCalibrator):
    __doc__ = """Structured vector scaling (SVS) of Berta et al. (2025).

    The calibrated probabilities are ``softmax(v * phi(z) + b)`` with
    ``phi(z) = log_softmax(z / T)``: the logits are first temperature-scaled
    (``T`` the temperature-scaling optimum, fitted without penalty) and turned
    into log-probabilities, then every class gets its own scale ``v_k`` and
    bias ``b_k``, shrunk towards the temperature-scaling map (``v = 1``,
    ``b = 0``) by a ridge penalty whose strength grows with the number of
    classes ``K`` and shrinks with the number of rows ``n``. It is the
    structured matrix scaling of Berta et al. without the off-diagonal
    (``2K`` parameters instead of ``K (K + 1)``), and needs no tuning from 2
    to 1,000 classes.

    Parameters
    ----------
    %(calibrator_params)s
    reg_lambda : float >= 0, "auto" or None, default=None
        ``lambda``, the strength of the penalty on ``v`` (see Notes). None:
        1.0, the default of Berta et al. ``"auto"``: chosen by internal
        ``n_splits``-fold cross-validation of the held-out NLL over
        ``reg_grid``.
    %(solver_params)s

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_classes), float64
        ``diag(v)``, acting on ``log_softmax(z / T)``.
    intercept_ : ndarray of shape (n_classes,), float64
        ``b``.
    feature_scale_ : float
        ``1 / T``, the temperature-scaling pre-processing.
    %(fitted_shared)s
    n_iter_ : int
        Newton or trust-region iterations of the final fit.

    See Also
    --------
    MatrixScaler : the full structured matrix scaling (SMS), ``K (K + 1)``
        parameters.
    VectorScaler : vector scaling ``w * z + b`` of the raw logits, with a
        fixed penalty.
    TemperatureScaler : the map SVS is shrunk towards.

    Notes
    -----
    With sample weights ``s_i`` (1 by default), ``n`` the number of rows
    (``sum_i s_i`` in units of one row, :ref:`sample-weights`),
    ``phi_i = log_softmax(z_i / T)`` and ``a_i = v * phi_i + b``, SVS
    minimises (Berta et al. 2025, Sec. 3, ridge penalty with ``rho = tau = 1``)

    ``F(v, b) = sum_i s_i [logsumexp(a_i) - a_{i,y_i}] / sum_i s_i
    + lambda K / n sum_k (v_k - 1)^2 + mu K / n sum_k b_k^2``.

    ``T`` minimises the unpenalised NLL of ``softmax(z / T)`` first
    (:class:`TemperatureScaler`'s fit); ``F`` is strictly convex for
    ``lambda, mu > 0``, so ``(v, b)`` is unique. The same map is
    ``DirichletCalibrator(parametrization="diagonal", reg="sms")``.

    probmetrics 1.3's ``SVSCalibrator`` writes the same model as
    ``(1 + diag(v')) x + b`` with the same penalty on ``v'`` and ``b``, but
    its features are the log of its ``"ts-mix"`` output: the
    temperature-scaled probabilities mixed with ``1 / (n + 1)`` of the
    uniform distribution, which bounds them below by ``1 / (K (n + 1))``.
    skcal uses the plain ``log_softmax(z / T)``; on the same split the test
    NLLs agree to about 1e-4, and at 100,000 x 100 the two optima (each of
    its own objective) differ by 4e-5 nats (``benchmarks/bench_new_methods.py``).

    Because of the log-softmax, ``v_k = 1`` and ``b = 0`` is exactly
    temperature scaling; ``v`` different from ``1`` may change the
    predicted class. The penalty is a prior, not a tie-breaker: on
    uninformative (constant) logits the fitted probabilities are the base
    rates shrunk towards the temperature-scaled constant, by an amount of
    the order of ``K / n``.
    Above 32 classes the solve always uses the trust-region method (the
    Newton Hessian of a diagonal ``W`` costs ``O(n K^2)`` per pass).
    """ + _SOLVER_NOTES + """
    References
    ----------
    E. Berta, D. Holzmüller, M. I. Jordan, F. Bach, "Structured Matrix
    Scaling for Multi-Class Calibration", AISTATS 2026 (arXiv:2511.03685).

    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger, "On Calibration of Modern
    Neural Networks", ICML 2017 (temperature and vector scaling).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import StructuredVectorScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(3000, 3, scale=3.0)
    >>> svs = StructuredVectorScaler().fit(X, y)
    >>> svs.coef_.shape, svs.intercept_.shape
    ((3, 3), (3,))
    >>> bool(np.allclose(svs.predict_proba(X).sum(axis=1), 1.0))
    True
    """

    #: The penalty of Berta et al.; not a parameter (the class *is* that choice).
    reg = "sms"
    _structure = "diagonal"
    _log_features = True
    # the parameters, MatrixScaler's without ``reg``, are those of
    # _AffineCalibrator.__init__ (inherited)
    _parameter_constraints: dict = dict(_COMMON_CONSTRAINTS)

    def _solver(self, k):
        # Newton's exact Hessian of a diagonal W costs O(n K^2) per pass, the
        # trust region's Hessian-vector products O(n K)
        return "trust-ncg" if k > TRUST_REGION_MIN_CLASSES else "auto"
