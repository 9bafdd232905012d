"""Fixtures of the metric tests: small data sets and the three array backends.

``backend`` converts NumPy arrays to the array type a metric is run on:
``numpy`` (as is), ``torch`` (CPU tensors, read through a NumPy view of
their memory as skcal does on the CPU), ``torch-kernels`` (CPU tensors
through the torch kernels that an accelerator tensor takes) and ``dask``
(uneven row chunks, one of a single row, computed with the synchronous
scheduler so that no thread pool or cluster is started). Each backend's converter is applied to
``y_prob`` and to ``sample_weight``; ``y_true`` stays a NumPy array (the
metrics accept it in either form).
"""

import contextlib
from unittest import mock

import numpy as np
import pytest
from _helpers import softmax

BACKENDS = ("numpy", "torch", "torch-kernels", "dask")


def _to_torch(a):
    torch = pytest.importorskip("torch")
    return torch.as_tensor(np.ascontiguousarray(a))


def _to_dask(a):
    da = pytest.importorskip("dask.array")
    n = a.shape[0]
    rows = (1, 16, n - 17 - 20, 20) if n > 40 else (n,)
    chunks = (rows,) + tuple((s,) for s in a.shape[1:])
    return da.from_array(a, chunks=chunks)


class Backend:
    """One array library: ``convert(a)`` and a ``context()`` to compute in."""

    def __init__(self, name):
        self.name = name

    def convert(self, a):
        if a is None or self.name == "numpy":
            return a
        if self.name == "dask":
            return _to_dask(np.asarray(a))
        return _to_torch(a)

    def context(self):
        if self.name == "torch-kernels":
            # no NumPy view of CPU tensors: the path of accelerator tensors
            from skcal._backend import _torch

            return mock.patch.object(_torch, "numpy_view", lambda a: None)
        if self.name != "dask":
            return contextlib.nullcontext()
        import dask

        return dask.config.set(scheduler="synchronous")

    def __repr__(self):
        return self.name


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Each backend (numpy, torch, dask) in turn."""
    return Backend(request.param)


@pytest.fixture(scope="session")
def metric_data():
    """Small over-confident data: a binary and a 3-class problem, logits and probabilities.

    ``multi``: 3 classes, ``y`` in 0..2, ``P`` (probabilities), ``Z`` (logits);
    ``binary``: text labels ``"neg"`` / ``"pos"`` (so a binary view needs
    ``pos_label``), ``p`` the probability of ``"pos"``, ``P2`` both columns;
    ``w``: integer weights 0..3 (the rows repeated that many times are
    ``rep``).
    """
    rng = np.random.default_rng(7)
    n = 61
    Z = rng.normal(scale=2.5, size=(n, 3))
    y = np.array([rng.choice(3, p=q) for q in softmax(Z / 2.0)])
    p = 1.0 / (1.0 + np.exp(-rng.normal(scale=2.0, size=n)))
    yb = np.where(rng.uniform(size=n) < 0.8 * p + 0.1, "pos", "neg")
    w = rng.integers(0, 4, size=n).astype(np.float64)
    w[:2] = [1.0, 2.0]
    return {
        "y": y, "Z": Z, "P": softmax(Z),
        "yb": yb, "p": p, "P2": np.stack([1.0 - p, p], axis=1),
        "w": w, "rep": np.repeat(np.arange(n), w.astype(int)),
    }
