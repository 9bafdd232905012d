"""Matrix scaling and Dirichlet calibration: a full affine map of the (log-)logits."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils._param_validation import Interval, StrOptions

from .._backend import _matrix as mk
from ..base import BaseCalibrator, SOLVER_CONSTRAINTS
from ..utils._docstrings import substitute_docstring
from .._backend._array import to_numpy
from ..utils._weights import weighted_rows
from ._affine import AffinePenalty, fit_affine, nll, start_scale
from ._temperature import warn_stopped
from ._vector import warn_absent_classes, warn_if_separated
from ..utils._params import store_params
from ..utils.validation import _caller_stacklevel

__all__ = ["MatrixScaler", "DirichletCalibrator"]

#: Penalty weight put on ``b`` instead of 0 when some class has no weight in
#: the calibration set (the unpenalised optimum has ``b_k -> -inf`` then).
ABSENT_CLASS_MU = 1e-6

#: Default candidates of ``reg="auto"``-style selection (``reg_lambda`` and
#: ``reg_mu`` set to ``"auto"``).
DEFAULT_REG_GRID = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)

#: A fitted entry of ``W`` beyond this multiple of the start ``1/T`` is taken
#: as a sign that the optimum is at infinity (an unpenalised direction).
DIVERGED_RATIO = 1e3


def affine_penalty(reg, structure, k, n, reg_lambda, reg_mu):
    """The :class:`AffinePenalty` of ``reg`` (the formulas of :class:`MatrixScaler`'s Notes).

    ``structure`` is "full", "diagonal" or "scalar"; ``k`` the number of
    classes; ``n`` the number of calibration rows (the summed weights in
    units of :func:`skcal.utils._weights.weight_unit`), used by "sms".
    """
    full = structure == "full"
    shape = (k, k) if full else (k,)
    R = np.zeros(shape)
    C = np.zeros(shape)
    eye = np.eye(k, dtype=bool) if full else np.ones(k, dtype=bool)
    cb = np.zeros(k)
    if reg == "odir":
        if full and k > 1:
            C[~eye] = reg_lambda / (k * (k - 1))
        cb[:] = reg_mu / k
    elif reg == "l2":
        C[...] = reg_lambda / k**2
        cb[:] = reg_mu / k
    elif reg == "sms":
        R[eye] = 1.0
        C[eye] = reg_lambda * k / n
        if full:
            C[~eye] = reg_lambda * k * (k - 1) / n
        cb[:] = reg_mu * k / n
    return AffinePenalty(C, R, cb)


class _AffineCalibrator(BaseCalibrator):
    """Shared ``__init__``, ``_fit`` and predict of the affine maps (subclasses set the options).

    This ``__init__`` has the parameters all of them share, with their
    defaults, exactly those of :class:`StructuredVectorScaler` (which inherits
    it); the others spell out their own signature and store their options.
    """

    _refuses_underflowing_logits = True

    def __init__(
        self, *, input_type="logits", classes=None, backend="auto", reg_lambda=None,
        reg_mu=None, reg_grid=None, n_splits=5, tol=1e-10, max_iter=100,
    ):
        store_params(self, locals())

    # subclass hooks ----------------------------------------------------
    _structure = "full"  # fit_affine's structure: or "diagonal", "scalar"
    _log_features = False  # W acts on log_softmax(z) (Dirichlet, SVS), not on z

    def _solver(self, k):
        return "auto"

    # fitting -----------------------------------------------------------
    def _solve(self, Z, y, sw, xp, reg_lambda, reg_mu, beta_ts, reg=None, info=None):
        k = Z.shape[1]
        reg = self.reg if reg is None else reg
        structure = self._structure
        if reg == "sms":
            # n counts rows (:ref:`sample-weights`): the summed weights in
            # units of one row, so that rescaling the weights changes nothing
            n = weighted_rows(sw, Z.shape[0])
            log_features, feature_beta, w_start = True, beta_ts, 1.0
        else:
            n = float(Z.shape[0])  # unused
            log_features, feature_beta, w_start = self._log_features, 1.0, beta_ts
        pen = affine_penalty(reg, structure, k, n, reg_lambda, reg_mu)
        return (
            fit_affine(
                Z, y, sw, xp,
                structure=structure, intercept=True, penalty=pen,
                log_features=log_features, feature_beta=feature_beta,
                w_start=w_start, tol=self.tol, max_iter=self.max_iter,
                solver=self._solver(k), info=info,
            ),
            pen,
            log_features,
            feature_beta,
        )

    def _fit(self, Z, y, sample_weight, xp):
        k = Z.shape[1]
        beta_ts, ts_status = start_scale(Z, y, sample_weight, xp)
        if ts_status == "upper":
            warnings.warn(
                f"{type(self).__name__}: the logits separate the calibration set "
                "(the true class has the largest logit in every row: temperature "
                "scaling's NLL keeps decreasing as T -> 0, down to its bound "
                f"T = {1.0 / beta_ts:.3g}). The map starts from, and with reg='sms' "
                "is fitted on, logits scaled by that bound, so on new rows it can "
                "give a class probability 0 (an infinite NLL). Calibrate on a set "
                "with errors, or use TemperatureScaler, which is set to the same "
                "bound and says so.",
                ConvergenceWarning,
                stacklevel=_caller_stacklevel(),
            )
        lam, mu = self.reg_lambda, self.reg_mu
        if lam == "auto" and mu is None:
            mu = "auto"  # tied
        lam = 1.0 if lam is None else lam
        if lam == "auto" or mu == "auto":
            lam, mu = self._select_reg(Z, y, sample_weight, xp, lam, mu, beta_ts)
        lam = float(lam)
        mu = lam if mu is None else float(mu)
        reg = self.reg
        if (mu == 0 or reg == "none") and warn_absent_classes(
            self.classes_, y, sample_weight, "intercept", f"reg_mu={ABSENT_CLASS_MU * k:g}"
        ):
            mu = ABSENT_CLASS_MU * k
            if reg == "none":
                reg, lam = "odir", 0.0
        self.reg_lambda_, self.reg_mu_ = lam, mu
        info = {}  # the solve's NLL, for the separation check
        (W, b, _, n_iter, status), pen, logf, fbeta = self._solve(
            Z, y, sample_weight, xp, lam, mu, beta_ts, reg, info
        )
        self._set_map(W, b, logf, fbeta, k)
        self.n_iter_ = n_iter
        warn_stopped(type(self).__name__, status, self.max_iter,
                     ", or the regularisation if the calibration set is separable")
        if not np.any(pen.C):
            f = info["nll"]
            if f is None:
                f = nll(Z, y, sample_weight, xp, self.coef_, self.intercept_, logf, fbeta)
            warn_if_separated(
                f, "(log-)logits", "without a penalty the NLL has no finite minimiser "
                "(W -> inf) and the fitted map is arbitrary; use reg_lambda > 0.")
        w_start = 1.0 if logf and fbeta != 1.0 else beta_ts
        if np.max(np.abs(self.coef_)) > DIVERGED_RATIO * max(abs(w_start), 1e-300):
            warnings.warn(
                f"{type(self).__name__}: an entry of W grew to "
                f"{np.max(np.abs(self.coef_)):.3g}, over {DIVERGED_RATIO:g} times the "
                "temperature-scaling start: along a direction the penalty leaves free "
                "(with reg='odir', the diagonal) the optimum is at infinity (a class "
                "is separated by the map). Use reg='l2' or 'sms', or a larger penalty.",
                ConvergenceWarning,
                stacklevel=_caller_stacklevel(),
            )

    def _set_map(self, W, b, log_features, feature_beta, k):
        if np.ndim(W) == 0:
            W = float(W) * np.eye(k)
        elif np.ndim(W) == 1:
            W = np.diag(W)
        self.coef_ = np.asarray(W, dtype=np.float64)
        self.intercept_ = np.asarray(b, dtype=np.float64)
        self.feature_scale_ = float(feature_beta) if log_features else None
        self._feat = mk.Features(bool(log_features), float(feature_beta), np.zeros(k), np.ones(k))

    def _select_reg(self, Z, y, sw, xp, lam, mu, beta_ts):
        """Internal K-fold cross-validation of ``reg_lambda`` / ``reg_mu``."""
        grid = np.asarray(
            DEFAULT_REG_GRID if self.reg_grid is None else self.reg_grid, dtype=float
        )
        y_np = to_numpy(y)
        counts = np.bincount(y_np)
        stratify = counts[counts > 0].min() >= self.n_splits
        splitter = (StratifiedKFold if stratify else KFold)(
            int(self.n_splits), shuffle=True, random_state=0
        )
        folds = list(splitter.split(np.zeros(len(y_np)), y_np))
        # (mu is not None here: _fit ties it to an "auto" lam)
        cands = [(g if lam == "auto" else float(lam), g if mu == "auto" else float(mu))
                 for g in grid]
        scores = []
        for lam_c, mu_c in cands:
            total, wtot = 0.0, 0.0
            for tr, te in folds:
                sw_tr = None if sw is None else xp.take_rows(sw, tr)
                sw_te = None if sw is None else xp.take_rows(sw, te)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    (W, b, feat, _, _), _, logf, fbeta = self._solve(
                        xp.take_rows(Z, tr), xp.take_rows(y, tr), sw_tr, xp, lam_c, mu_c,
                        beta_ts,
                    )
                f = nll(xp.take_rows(Z, te), xp.take_rows(y, te), sw_te, xp, W, b, logf, fbeta)
                wt = float(len(te) if sw is None else to_numpy(sw_te).sum())
                total += f * wt
                wtot += wt
            scores.append(total / wtot)
        scores = np.asarray(scores)
        best = int(np.argmin(np.where(np.isfinite(scores), scores, np.inf)))
        self.cv_results_ = {
            "reg_lambda": np.array([c[0] for c in cands]),
            "reg_mu": np.array([c[1] for c in cands]),
            "mean_test_nll": scores,
        }
        return cands[best]

    # predicting ----------------------------------------------------------
    def _predict_log_proba(self, Z, xp):
        return mk.affine_log_softmax(Z, xp, self._feat, self.coef_, self.intercept_)

    def _predict_proba(self, Z, xp):
        return mk.affine_log_softmax(
            Z, xp, self._feat, self.coef_, self.intercept_, proba=True
        )

    def _torch_spec(self):
        log_features = self.feature_scale_ is not None
        return {
            "kind": "affine",
            "matrix": self.coef_,
            "bias": self.intercept_,
            "features": "log_softmax" if log_features else "logits",
            "feature_scale": self.feature_scale_ if log_features else 1.0,
        }


_COMMON_CONSTRAINTS = {
    **BaseCalibrator._parameter_constraints,
    "reg_lambda": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"}), None],
    "reg_mu": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"}), None],
    "reg_grid": ["array-like", None],
    "n_splits": [Interval(Integral, 2, None, closed="left")],
    **SOLVER_CONSTRAINTS,
}

#: Docstring entries of MatrixScaler, DirichletCalibrator and
#: StructuredVectorScaler (``%(name)s``,
#: see :func:`skcal.utils._docstrings.substitute_docstring`).
_AFFINE_DOCS = {
    "solver_params": """\
reg_mu : float >= 0, "auto" or None, default=None
    Strength of the penalty on ``b``. None: equal to ``reg_lambda``.
reg_grid : array-like of float, default=None
    Candidates of ``"auto"``; default ``(1e-5, 1e-4, ..., 1, 10)``.
n_splits : int >= 2, default=5
    Folds of the internal cross-validation of ``"auto"`` (stratified,
    shuffled with a fixed seed).
tol : float, default=1e-10
    Stopping tolerance (see Notes).
max_iter : int, default=100
    Maximum number of Newton / trust-region iterations.""",
    "fitted_shared": """\
reg_lambda_, reg_mu_ : float
    The strengths used (after ``"auto"`` selection).
cv_results_ : dict
    Only after ``"auto"``: the candidates and their mean held-out NLL.
classes_ : ndarray of shape (n_classes,)
n_features_in_ : int""",
}

_SOLVER_NOTES = """
    Solver (see :mod:`skcal.scaling._affine`): the problem is convex. Up to
    420 parameters (a full ``W`` up to 20 classes) Newton's method with the
    exact Hessian, formed in float64 in one pass, a Jacobi-scaled
    pseudo-inverse step and Armijo backtracking; it stops when half the
    squared Newton decrement (the objective decrease the quadratic model
    still predicts, in nats) is at most ``tol``. Above, a trust-region
    Newton-CG method (Steihaug) with the exact
    objective and gradient (one pass each), stopping when the gradient norm
    in the standardised parameters is at most ``sqrt(tol) / 10`` (the
    ``K + 1`` directions along which the softmax is invariant, ``W + 1 c^T``
    and ``b + t 1``, are solved in closed form for the penalty, and CG is
    preconditioned by the per-class blocks of the Hessian); its
    quadratic model takes exact Hessian-vector products (never a
    ``K^2 x K^2`` matrix) on the rows held in memory, all of them up to
    32 MiB of features and probabilities, else a fixed random subset of that
    size (sub-sampled Newton: the subset shapes the steps, the exact
    objective accepts them and the exact gradient stops the solve). The parameters are
    those of the standardised features ``(phi(z) - mean) / std`` (an exact
    linear change of variables, for conditioning); the start is the
    temperature-scaling optimum (``W = I / T``, ``b = 0``). Every pass walks
    the data in row chunks and accumulates in float64 (float16/32 logits are
    processed in float32 per chunk), so the extra memory does not grow with
    ``n_samples``. A ``ConvergenceWarning`` reports stopping at ``max_iter``
    or a failed line search, and, without penalty on ``W``, a separable
    calibration set (fitted NLL < 1e-6: the optimum is at infinity).
"""


@substitute_docstring(entries=_AFFINE_DOCS)
class MatrixScaler(_AffineCalibrator):
    __doc__ = """Matrix scaling: a full affine map ``W z + b`` of the logits.

    The calibrated probabilities are ``softmax(W z + b)`` with a ``K x K``
    matrix ``W`` and a bias ``b``, fitted by penalised negative log-likelihood
    (NLL). It is the most flexible of the linear scalings (Guo et al. 2017)
    and needs a penalty for many classes: ``K (K + 1)`` parameters from a
    calibration set of a few thousand rows over-fit otherwise.

    Parameters
    ----------
    %(calibrator_params)s
    reg : {"sms", "odir", "l2", "none"}, default="sms"
        The penalty (see Notes). ``"sms"``, the default, is the structured
        matrix scaling of Berta et al. (2025): the map acts on the
        log-probabilities of the temperature-scaled logits and is shrunk
        towards the identity with strengths that grow with ``K`` and shrink
        with ``n``, which makes it safe from 2 to 1,000 classes without tuning.
    reg_lambda : float >= 0, "auto" or None, default=None
        Strength of the penalty on ``W`` (``"sms"``/``"odir"``: its
        off-diagonal, ``"sms"`` also its diagonal; ``"l2"``: all of it).
        None: 1.0 (the default of Berta et al. for ``"sms"``). ``"auto"``:
        chosen by internal ``n_splits``-fold cross-validation over ``reg_grid``.
    %(solver_params)s

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_classes), float64
        ``W``. For ``reg="sms"`` it acts on ``log_softmax(z / T)`` (see
        ``feature_scale_``), otherwise on ``z``.
    intercept_ : ndarray of shape (n_classes,), float64
        ``b``.
    feature_scale_ : float or None
        ``1/T`` of the temperature scaling applied before the map
        (``reg="sms"``), else None.
    %(fitted_shared)s
    n_iter_ : int
        Newton or trust-region iterations (each one pass over the data; the
        trust region's conjugate-gradient steps work on the rows held in
        memory).

    See Also
    --------
    DirichletCalibrator : the same map on log-probabilities, with ODIR.
    VectorScaler : a diagonal ``W``.

    Notes
    -----
    Objective, with sample weights ``s_i`` and ``a_i = W phi(z_i) + b``:

    ``F(W, b) = sum_i s_i [logsumexp(a_i) - a_{i,y_i}] / sum_i s_i + pen(W, b)``

    with ``phi(z) = z`` and, for ``reg``:

    - ``"odir"`` (off-diagonal and intercept regularisation, Kull et al. 2019):
      ``lambda / (K (K-1)) sum_{k != j} W_kj^2 + mu / K sum_k b_k^2``;
    - ``"l2"``: ``lambda / K^2 sum_{k,j} W_kj^2 + mu / K sum_k b_k^2``;
    - ``"sms"`` (Berta et al. 2025, ridge penalty, ``rho = tau = 1``):
      ``phi(z) = log_softmax(z / T)`` with ``T`` the temperature-scaling
      optimum, and ``lambda K / n sum_k (W_kk - 1)^2 + lambda K (K-1) / n
      sum_{k != j} W_kj^2 + mu K / n sum_k b_k^2`` (``n`` the number of
      rows: the total sample weight in units of one row, see
      :ref:`sample-weights`); the same model as probmetrics' ``SMSCalibrator``;
    - ``"none"``: no penalty (plain matrix scaling of Guo et al. 2017; the
      optimum is at infinity on separable data, which is warned about).

    ``F`` is convex in ``(W, b)``.
    """ + _SOLVER_NOTES + """
    References
    ----------
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger, "On Calibration of Modern
    Neural Networks", ICML 2017, Sec. 4.2.

    M. Kull, M. Perello-Nieto, M. Kängsepp, T. Silva Filho, H. Song, P. Flach,
    "Beyond temperature scaling: Obtaining well-calibrated multi-class
    probabilities with Dirichlet calibration", NeurIPS 2019, Sec. 4.2 (ODIR).

    E. Berta, D. Holzmüller, M. I. Jordan, F. Bach, "Structured Matrix
    Scaling for Multi-Class Calibration", 2025 (arXiv:2511.03685).

    Examples
    --------
    >>> from skcal import MatrixScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(3000, 3, scale=3.0)
    >>> ms = MatrixScaler().fit(X, y)
    >>> ms.coef_.shape, ms.intercept_.shape
    ((3, 3), (3,))
    >>> ms.predict_proba(X).sum(axis=1)[:2]
    array([1., 1.])
    """

    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "reg": [StrOptions({"sms", "odir", "l2", "none"})],
    }

    def __init__(
        self,
        *,
        input_type="logits",
        classes=None,
        backend="auto",
        reg="sms",
        reg_lambda=None,
        reg_mu=None,
        reg_grid=None,
        n_splits=5,
        tol=1e-10,
        max_iter=100,
    ):
        store_params(self, locals())


@substitute_docstring(entries=_AFFINE_DOCS)
class DirichletCalibrator(_AffineCalibrator):
    __doc__ = """Dirichlet calibration: an affine map of the log-probabilities.

    The calibrated probabilities are ``softmax(W log p + b)`` with
    ``p = softmax(z)`` (or the input probabilities), i.e. a multinomial
    logistic regression on the log-probabilities (Kull et al. 2019). It is
    matrix scaling on ``log_softmax(z)`` instead of ``z``; the two differ
    unless every row of ``W`` sums to the same value.

    Parameters
    ----------
    input_type : {"logits", "probabilities"}, default="logits"
        What ``X`` holds. For probabilities, ``log p`` is used (exact zeros
        become the dtype's smallest normal number, ``log = -708`` in float64).
    %(classes)s
    %(backend)s
    parametrization : {"full", "diagonal", "fixed_diagonal"}, default="full"
        ``W`` full (``K (K + 1)`` parameters), diagonal (``2K``: vector
        scaling of the log-probabilities) or ``w I`` (``K + 1``: temperature
        scaling of the log-probabilities plus a bias).
    reg : {"sms", "l2", "odir", "none"}, default="sms"
        The penalty; see :class:`MatrixScaler` (for a diagonal or fixed
        diagonal ``W`` only its diagonal terms, i.e. with ``"odir"`` only the
        intercept penalty, apply). ``"sms"``, the default, is exactly
        ``MatrixScaler(reg="sms")``: the structured matrix scaling of Berta
        et al. (2025) on the log-probabilities, shrunk towards the identity
        with strengths that grow with ``K`` and shrink with ``n``. It is the
        default because a full ``W`` with a fixed weak penalty over-fits
        badly with many classes: on the real 100-class sets (5,000 rows,
        10,100 parameters) ``reg="l2", reg_lambda=1e-2`` gives a test NLL of
        19.1 and 7.7 against 1.24 and 1.22 uncalibrated, ``"sms"`` 1.133 and
        0.87 (``benchmarks/README.md``). ``"odir"`` is Kull et al.'s choice,
        best with ``reg_lambda="auto"``, but it leaves the diagonal of ``W``
        free: when a class is separated by its own column (as class 1 of the
        real ``pathmnist_resnet50`` set) the optimum is at infinity (warned
        about). ``"l2"`` penalises every entry, so its optimum is finite and
        unique.
    reg_lambda : float >= 0, "auto" or None, default=None
        Strength of the penalty on ``W``; None: 1.0. ``"auto"``:
        chosen by internal ``n_splits``-fold cross-validation of the held-out NLL
        over ``reg_grid`` (with ``reg_mu`` tied to it when both are
        ``"auto"``); it fits ``n_splits * len(reg_grid) + 1`` maps, and, its folds
        being drawn over rows, integer sample weights then no longer fit
        exactly like repeated rows. Recommended with many classes, where the
        ODIR penalty per entry, ``lambda / (K (K - 1))``, is small.
    %(solver_params)s

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_classes), float64
        ``W`` acting on ``log_softmax(z)`` (diagonal, or ``w I``, for those
        parametrisations); for ``reg="sms"`` on ``log_softmax(z / T)``.
    intercept_ : ndarray of shape (n_classes,), float64
    feature_scale_ : float
        The scale applied to the logits before ``log_softmax`` (1.0, or
        ``1/T`` for ``reg="sms"``).
    %(fitted_shared)s
    n_iter_ : int
        As in :class:`MatrixScaler`.

    Notes
    -----
    Objective: :class:`MatrixScaler`'s with ``phi(z) = log_softmax(z)``.
    Everything is searchable by ``GridSearchCV`` (``score`` is the mean
    log-likelihood); ``"auto"`` is the same search built in.
    """ + _SOLVER_NOTES + """
    References
    ----------
    M. Kull, M. Perello-Nieto, M. Kängsepp, T. Silva Filho, H. Song, P. Flach,
    "Beyond temperature scaling: Obtaining well-calibrated multi-class
    probabilities with Dirichlet calibration", NeurIPS 2019 (Eq. 3, the
    Dirichlet map ``softmax(W ln q + b)``; Sec. 4.2, ODIR).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import DirichletCalibrator
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(3000, 3, scale=3.0)
    >>> dc = DirichletCalibrator(reg_lambda=1e-3).fit(X, y)
    >>> dc.coef_.shape  # a full matrix on the log-probabilities
    (3, 3)
    >>> bool(np.allclose(dc.predict_proba(X).sum(axis=1), 1.0))
    True
    """

    _log_features = True

    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "parametrization": [StrOptions({"full", "diagonal", "fixed_diagonal"})],
        "reg": [StrOptions({"sms", "odir", "l2", "none"})],
    }

    def __init__(
        self,
        *,
        input_type="logits",
        classes=None,
        backend="auto",
        parametrization="full",
        reg="sms",
        reg_lambda=None,
        reg_mu=None,
        reg_grid=None,
        n_splits=5,
        tol=1e-10,
        max_iter=100,
    ):
        store_params(self, locals())

    @property
    def _structure(self):
        p = self.parametrization
        return "scalar" if p == "fixed_diagonal" else p

