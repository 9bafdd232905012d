"""Adapters that let ``skcal benchmark`` run peer calibration libraries.

Every adapter has the same two methods, ``fit(logits, y)`` and
``predict_proba(logits) -> (n_samples, n_classes)``, and receives the same
logits as skcal's own calibrators. What each peer is actually given:

- scikit-learn ``CalibratedClassifierCV``: the logits, through a frozen
  pass-through classifier whose ``decision_function`` returns them (for two
  classes, the log-odds ``z1 - z0``, as sklearn expects of binary models).
- netcal: softmax probabilities computed from the logits in float64, because
  netcal's classification calibrators take confidences, not logits.
- betacal, splinecalib (ml-insights' SplineCalib), venn-abers and
  uncertainty-calibration (Kumar et al.'s ``calibration``): softmax
  probabilities; the binary peers are fitted one-vs-rest on each class's
  probability and their outputs renormalised, as skcal does.
- probmetrics: the logits, through its torch API
  (``fit_torch(CategoricalLogits(logits), labels)``), so nothing is lost by a
  round-trip through probabilities (its Dirichlet calibrator needs dirichletcal,
  which no skcal extra installs: ``pip install dirichletcal``, Python >= 3.12).
- torch-uncertainty: the float32 logits as one full-batch ``DataLoader``
  (its ``MatrixScaler`` / ``DirichletScaler`` with default LBFGS settings;
  the Dirichlet scaler with ODIR ``lambda = mu = 1e-2``).

An adapter whose library is missing raises :class:`PeerUnavailable` when it is
built; the benchmark shows that as "not installed" instead of failing.
"""

import importlib.util
import logging
import sys
import types
import warnings

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_array, check_is_fitted
from ..utils._params import store_params


def _probs(logits):
    """Softmax of the logits, in float64."""
    return softmax(np.asarray(logits, dtype=np.float64), axis=1)


def _renormalised(Q):
    """The rows of ``Q`` divided by their sums (uniform where a row sums to 0)."""
    s = Q.sum(1, keepdims=True)
    return np.divide(Q, s, out=np.full_like(Q, 1.0 / Q.shape[1]), where=s > 0)


class PeerUnavailable(Exception):
    """Raised when a peer library (or one of its imports) is not installed."""


#: Status of ``probmetrics-dirichlet`` without dirichletcal: no extra of skcal
#: installs it (its releases for Python < 3.12 do not build; later ones need
#: Python >= 3.12 and pull jax).
DIRICHLETCAL_MISSING = (
    "needs dirichletcal, not installed (pip install dirichletcal, on "
    "Python >= 3.12; it pulls jax)"
)


def _import(module, library):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if missing and missing.split(".")[0] != library.split(".")[0]:
            raise PeerUnavailable(
                f"unusable: {module} needs {missing} (not installed)") from None
        raise PeerUnavailable("not installed") from None


class LogitPassthroughClassifier(ClassifierMixin, BaseEstimator):
    """A classifier whose decision function is its input: ``X`` are logits.

    It lets scikit-learn's :class:`~sklearn.calibration.CalibratedClassifierCV`
    calibrate precomputed logits: wrap a fitted instance in
    :class:`~sklearn.frozen.FrozenEstimator` and pass the logits as ``X``.

    Parameters
    ----------
    n_classes : int or None, default=None
        Number of classes; when None it is taken from the number of columns
        of ``X`` in :meth:`fit`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        ``0 .. n_classes - 1``.
    n_features_in_ : int
        Number of logit columns.

    Examples
    --------
    >>> import numpy as np
    >>> clf = LogitPassthroughClassifier().fit(np.eye(3), [0, 1, 2])
    >>> clf.decision_function(np.array([[1.0, 2.0, 0.5]]))
    array([[1. , 2. , 0.5]])
    """

    def __init__(self, n_classes=None):
        store_params(self, locals())

    def fit(self, X, y=None):
        """Record the number of classes; nothing is learned.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes)
            Logits.
        y : ignored

        Returns
        -------
        self : object
        """
        X = check_array(X)
        k = self.n_classes if self.n_classes is not None else X.shape[1]
        self.classes_ = np.arange(k)
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """Return the logits (binary: the log-odds of class 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            ``X`` itself; for two classes ``X[:, 1] - X[:, 0]``.
        """
        check_is_fitted(self)
        X = check_array(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} columns, expected {self.n_features_in_}")
        if len(self.classes_) == 2:
            return X[:, 1] - X[:, 0]
        return X

    def predict_proba(self, X):
        """Softmax of the logits, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        return softmax(check_array(X, dtype=np.float64), axis=1)

    def predict(self, X):
        """Arg-max of the logits."""
        check_is_fitted(self)
        return self.classes_[np.argmax(check_array(X), axis=1)]


class _SklearnCalibrated:
    def __init__(self, method):
        import sklearn  # >= 1.6, a dependency of skcal: it has FrozenEstimator
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.frozen import FrozenEstimator

        self._CCV, self._Frozen, self.method = CalibratedClassifierCV, FrozenEstimator, method
        if method == "temperature":
            try:
                self._CCV(method="temperature")._validate_params()
            except Exception:
                raise PeerUnavailable(
                    f"scikit-learn {sklearn.__version__} lacks method='temperature'"
                ) from None

    def fit(self, logits, y):
        base = LogitPassthroughClassifier().fit(logits)
        self.model_ = self._CCV(self._Frozen(base), method=self.method)
        self.model_.fit(logits, y)
        return self

    def predict_proba(self, logits):
        return self.model_.predict_proba(logits)


class _Netcal:
    """netcal's calibrators; its HistogramBinning and BBQ outputs renormalised."""

    _CLASSES = {
        "temperature": ("scaling", "TemperatureScaling"),
        "vector": ("scaling", "LogisticCalibration"),
        "isotonic": ("binning", "IsotonicRegression"),
        "histogram": ("binning", "HistogramBinning"),
        "bbq": ("binning", "BBQ"),
    }

    def __init__(self, kind):
        module, name = self._CLASSES[kind]
        self._cls = getattr(_import(f"netcal.{module}", "netcal"), name)
        self.kind = kind

    def fit(self, logits, y):
        self.model_ = self._cls()
        # tensorboard=False: netcal's scalers otherwise write log folders to disk.
        kw = {"tensorboard": False} if self._CLASSES[self.kind][0] == "scaling" else {}
        self.model_.fit(_probs(logits), np.asarray(y), **kw)
        return self

    def predict_proba(self, logits):
        p = np.asarray(self.model_.transform(_probs(logits)), dtype=np.float64)
        if p.ndim == 1:  # binary: netcal returns P(class 1)
            p = np.column_stack([1.0 - p, p])
        return _renormalised(p) if self.kind in ("histogram", "bbq") else p


class _Probmetrics:
    _CLASSES = {
        "temperature": "TemperatureScalingCalibrator",
        "vector": "VectorScalingCalibrator",
        "matrix": "MatrixScalingCalibrator",
        "sms": "SMSCalibrator",
        "dirichlet": "DirichletCalibrator",
    }

    def __init__(self, kind):
        cal = _import("probmetrics.calibrators", "probmetrics")
        dist = _import("probmetrics.distributions", "probmetrics")
        self._torch = _import("torch", "torch")
        if kind == "dirichlet":  # probmetrics wraps dirichletcal, which no skcal extra holds
            try:
                _import("dirichletcal", "dirichletcal")
            except PeerUnavailable as exc:
                if str(exc) != "not installed":  # dirichletcal lacks one of its imports
                    raise
                raise PeerUnavailable(DIRICHLETCAL_MISSING) from None
        self._cls = getattr(cal, self._CLASSES[kind])
        self._Logits = dist.CategoricalLogits

    def _dist(self, logits):
        return self._Logits(self._torch.as_tensor(np.asarray(logits, dtype=np.float64)))

    def fit(self, logits, y):
        self.model_ = self._cls()
        self.model_.fit_torch(
            self._dist(logits), self._torch.as_tensor(np.asarray(y), dtype=self._torch.long)
        )
        return self

    def predict_proba(self, logits):
        out = self.model_.predict_proba_torch(self._dist(logits))
        return out.get_probs().detach().cpu().numpy().astype(np.float64)


class _OneVsRestPeer:
    """A binary peer calibrator on probabilities, one-vs-rest and renormalised."""

    def __init__(self, make, fit, predict):
        self._make, self._fit, self._predict = make, fit, predict

    def fit(self, logits, y):
        P = _probs(logits)
        y = np.asarray(y)
        cols = [1] if P.shape[1] == 2 else range(P.shape[1])
        self.models_ = [self._make() for _ in cols]
        for k, m in zip(cols, self.models_):
            self._fit(m, P[:, k], (y == k).astype(int))
        return self

    def predict_proba(self, logits):
        P = _probs(logits)
        cols = [1] if P.shape[1] == 2 else range(P.shape[1])
        Q = np.column_stack([np.clip(np.asarray(self._predict(m, P[:, k]), float), 0, 1)
                             for k, m in zip(cols, self.models_)])
        if P.shape[1] == 2:
            return np.column_stack([1 - Q[:, 0], Q[:, 0]])
        return _renormalised(Q)


def _betacal():
    lib = _import("betacal", "betacal")

    def fit(m, p, t):
        with warnings.catch_warnings():  # betacal switches warnings off globally
            m.fit(p, t)

    return _OneVsRestPeer(lambda: lib.BetaCalibration(parameters="abm"), fit,
                          lambda m, p: m.predict(p))


def _splinecalib():
    lib = _import("splinecalib", "splinecalib")
    return _OneVsRestPeer(lib.SplineCalib, lambda m, p, t: m.fit(p, t),
                          lambda m, p: m.calibrate(p))


def _venn_abers():
    lib = _import("venn_abers", "venn_abers")

    def fit(m, p, t):
        m.fit(np.column_stack([1 - p, p]), t)

    def predict(m, p):
        return m.predict_proba(np.column_stack([1 - p, p]))[0][:, 1]

    return _OneVsRestPeer(lib.VennAbers, fit, predict)


class _KumarScalingBinning:
    """Kumar et al.'s ``calibration.PlattBinnerMarginalCalibrator`` (10 bins), renormalised."""

    def __init__(self):
        self._lib = _import("calibration", "calibration")

    def fit(self, logits, y):
        P = _probs(logits)
        self.model_ = self._lib.PlattBinnerMarginalCalibrator(len(P), num_bins=10)
        self.model_.train_calibration(P, np.asarray(y))
        return self

    def predict_proba(self, logits):
        return _renormalised(self.model_.calibrate(_probs(logits)))


def _torch_uncertainty_calibration(module):
    """A module of ``torch_uncertainty.post_processing.calibration``.

    Imported normally when torch-uncertainty imports; otherwise (its package
    ``__init__`` needs lightning and torchvision, which the scalers do not use)
    the calibration modules are loaded under stub parent packages, so that a
    ``pip install --no-deps torch-uncertainty`` suffices.
    """
    name = f"torch_uncertainty.post_processing.calibration.{module}"
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    spec = importlib.util.find_spec("torch_uncertainty")
    if spec is None or not spec.submodule_search_locations:
        raise PeerUnavailable("not installed")
    _import("torch", "torch")
    root = spec.submodule_search_locations[0]
    for mod in [m for m in sys.modules if m.startswith("torch_uncertainty")]:
        del sys.modules[mod]
    for pkg, path in (
        ("torch_uncertainty", root),
        ("torch_uncertainty.post_processing", f"{root}/post_processing"),
        ("torch_uncertainty.post_processing.calibration", f"{root}/post_processing/calibration"),
    ):
        stub = types.ModuleType(pkg)
        stub.__path__ = [path]
        sys.modules[pkg] = stub
    try:
        abstract = importlib.import_module("torch_uncertainty.post_processing.abstract")
        sys.modules["torch_uncertainty.post_processing"].PostProcessing = abstract.PostProcessing
        return importlib.import_module(name)
    except ImportError as exc:
        raise PeerUnavailable(f"unusable: {exc}") from None


class _TorchUncertainty:
    """torch-uncertainty's matrix / Dirichlet scalers (LBFGS, lr 0.1, 200 iterations)."""

    def __init__(self, kind, reg=None):
        mod = _torch_uncertainty_calibration(
            "dirichlet_scaler" if kind == "dirichlet" else "matrix_scaler"
        )
        self._torch = _import("torch", "torch")
        self._cls = mod.DirichletScaler if kind == "dirichlet" else mod.MatrixScaler
        self.kind, self.reg = kind, reg

    def fit(self, logits, y):
        torch = self._torch
        z = torch.as_tensor(np.asarray(logits, dtype=np.float32))
        kw = {}
        if self.kind == "dirichlet" and self.reg is not None:
            kw = {"lambda_reg": self.reg, "mu_reg": self.reg}
        self.model_ = self._cls(num_classes=z.shape[1], device="cpu", **kw)
        data = torch.utils.data.TensorDataset(z, torch.as_tensor(np.asarray(y)).long())
        loader = torch.utils.data.DataLoader(data, batch_size=len(z))
        level = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)
        try:
            self.model_.fit(loader, progress=False)
        finally:
            logging.getLogger().setLevel(level)
        return self

    def predict_proba(self, logits):
        torch = self._torch
        with torch.no_grad():
            out = self.model_(torch.as_tensor(np.asarray(logits, dtype=np.float32)))
        return torch.softmax(out.double(), dim=1).numpy()


def _peer(library, make, *args):
    """A :data:`PEERS` entry: ``library`` and a factory of ``make(*args)``."""
    return library, lambda random_state: make(*args)


#: Peer methods: name -> (library shown in the table, factory(random_state)).
PEERS = {
    "sklearn-sigmoid": _peer("scikit-learn", _SklearnCalibrated, "sigmoid"),
    "sklearn-isotonic": _peer("scikit-learn", _SklearnCalibrated, "isotonic"),
    "sklearn-temperature": _peer("scikit-learn", _SklearnCalibrated, "temperature"),
    "netcal-temperature": _peer("netcal", _Netcal, "temperature"),
    "netcal-vector": _peer("netcal", _Netcal, "vector"),
    "netcal-isotonic": _peer("netcal", _Netcal, "isotonic"),
    "probmetrics-temperature": _peer("probmetrics", _Probmetrics, "temperature"),
    "probmetrics-vector": _peer("probmetrics", _Probmetrics, "vector"),
    "netcal-histogram": _peer("netcal", _Netcal, "histogram"),
    "netcal-bbq": _peer("netcal", _Netcal, "bbq"),
    "betacal-beta": _peer("betacal", _betacal),
    "splinecalib-spline": _peer("splinecalib", _splinecalib),
    "venn-abers-ivap": _peer("venn-abers", _venn_abers),
    "calibration-scaling-binning": _peer("uncertainty-calibration",
                                         _KumarScalingBinning),
    "probmetrics-matrix": _peer("probmetrics", _Probmetrics, "matrix"),
    "probmetrics-sms": _peer("probmetrics", _Probmetrics, "sms"),
    "probmetrics-dirichlet": _peer("probmetrics", _Probmetrics, "dirichlet"),
    "torch-uncertainty-matrix": _peer("torch-uncertainty", _TorchUncertainty, "matrix"),
    "torch-uncertainty-dirichlet": _peer("torch-uncertainty", _TorchUncertainty,
                                         "dirichlet", 1e-2),
}
