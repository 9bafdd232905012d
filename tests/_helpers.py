"""References and helpers shared by the test files (``from _helpers import nll``).

(``tests/`` is on ``sys.path`` as the root of the test packages, as for
``from conftest import load_shared``.)
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

__all__ = ["csv_frame", "multiclass_brier", "nll", "quiet", "quiet_fit", "softmax",
           "temperature_reference"]


def softmax(Z):
    """Row softmax of logits ``Z``, in float64."""
    Z = np.asarray(Z, dtype=np.float64)
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def nll(Z, y, T=1.0, sample_weight=None):
    """Mean negative log-likelihood of ``y`` under ``softmax(Z / T)``, in float64.

    ``T``: one temperature, or one per row; ``sample_weight``: a weighted mean.
    """
    LP = log_softmax(np.asarray(Z, dtype=np.float64) / np.reshape(T, (-1, 1)), axis=1)
    return float(np.average(-LP[np.arange(len(y)), y], weights=sample_weight))


def temperature_reference(Z, y, sample_weight=None):
    """The NLL-optimal temperature of logits ``Z``: SciPy's bounded search on log T.

    An independent reference for temperature scaling (``T`` in
    ``exp(-5) .. exp(5)``, log T to 1e-10).
    """
    Z = np.asarray(Z, dtype=np.float64)
    res = minimize_scalar(lambda log_t: nll(Z, y, np.exp(log_t), sample_weight),
                          bounds=(-5, 5), method="bounded", options={"xatol": 1e-10})
    return float(np.exp(res.x))


def inverse_temperature_reference(Z, y, sample_weight=None):
    """``1/T`` of temperature scaling, by SciPy's bounded search on ``beta`` itself.

    The centre of the VS / BCTS / NBVS penalties (which act after the
    temperature): ``beta`` in ``1e-6 .. 1e3``, to 1e-13.
    """
    Z = np.asarray(Z, dtype=np.float64)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    res = minimize_scalar(lambda beta: nll(Z, y, 1.0 / beta, w), bounds=(1e-6, 1e3),
                          method="bounded", options={"xatol": 1e-13})
    return res.x


def multiclass_brier(y, P, K):
    """Multiclass Brier score ``sum_k (1[y = k] - P_k)^2``, averaged over rows."""
    return float(np.sum((np.eye(K)[y] - P) ** 2) / len(y))


def csv_frame(n=300, seed=0):
    """3-class logits (columns ``a, b, c``) and text ``label``s as a pandas frame.

    Skips the calling test without pandas.
    """
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    L = 3.0 * np.eye(3)[y] + 1.5 * rng.normal(size=(n, 3))
    df = pd.DataFrame(L, columns=["a", "b", "c"])
    df["label"] = np.array(["a", "b", "c"])[y]
    return df


def quiet(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with every warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def quiet_fit(est, *args, **kwargs):
    """``est.fit(*args, **kwargs)`` with every warning silenced."""
    return quiet(est.fit, *args, **kwargs)


def exportable_calibrators():
    """Public skcal calibrators (the registry) that override ``_torch_spec``."""
    from skcal.base import BaseCalibrator
    from skcal.utils.discovery import all_calibrators

    return [
        cls for _, cls in all_calibrators()
        if cls._torch_spec is not BaseCalibrator._torch_spec
    ]


#: The exportable calibrators and their test ids (tests/export).
EXPORTABLE = exportable_calibrators()
IDS = [c.__name__ for c in EXPORTABLE]

#: Isotonic maps (SmoothedCalibrator wraps IsotonicScaler by default): a
#: one-ulp change of a score next to a jump moves the output by ~1e-5.
STEP_MAPS = ("IsotonicScaler", "CenteredIsotonicScaler", "SmoothedCalibrator")
