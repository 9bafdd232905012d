"""Shared pytest fixtures for skcal's test suite."""

import os
from pathlib import Path

if os.environ.get("PYTEST_XDIST_WORKER"):
    # one thread per xdist worker: `pytest -n 2` on a 2-core machine with
    # torch's OpenMP pool of 2 per worker spin-waits (a 0.1 s torch predict
    # measured 4 s under load). Set before numpy / torch are imported.
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(
    os.environ.get("SKCAL_SHARED_DATA", REPO_ROOT.parent / "shared" / "data")
)

#: Every real logit set described in ``../shared/data/README.md``.
SHARED_SETS = [
    "cifar10_densenet40_guo",
    "cifar10_resnet20_chenyaofo",
    "cifar10_vgg16_kumar",
    "cifar10_lenet5_netcal",
    "cifar100_resnet20_chenyaofo",
    "cifar100_densenetbc100_netcal",
    "pathmnist_resnet50",
    "agnews_gpt2_zeroshot",
    "20news_cv_labelerrors",
    "imdb_cv_labelerrors",
    "sst2_gpt2_zeroshot",
    "pneumoniamnist_resnet50",
]


def load_shared(name):
    """Load ``../shared/data/<name>.npz`` or skip the calling test if absent."""
    path = SHARED_DATA / f"{name}.npz"
    if not path.exists():
        pytest.skip(f"shared data set {path} is not available")
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


@pytest.fixture(params=SHARED_SETS)
def shared_set(request):
    """Each real logit set of ``../shared/data`` as a dict of arrays (skips if absent)."""
    data = load_shared(request.param)
    data["name"] = request.param
    return data


@pytest.fixture
def rng():
    """A fresh, seeded NumPy generator."""
    return np.random.default_rng(0)


def close_threshold_logits(n_classes):
    """Logits whose scores lie 1e-9 apart (far below float32 resolution) with
    alternating labels, so that step maps put thresholds between them.

    Returns ``(Z, y)``: float64 ``(300, n_classes)`` logits (the binary problem
    as ``(300, 2)`` with log-odds ``z_1``) and int labels, every class present.
    """
    rng = np.random.default_rng(5)
    base = rng.normal(size=(30, n_classes)) * 3.0
    base[np.arange(30), np.arange(30) % n_classes] += 3.0
    Z = np.repeat(base, 10, axis=0)
    Z[:, 0] += np.tile(np.arange(10) * 1e-9, 30)
    if n_classes == 2:
        Z[:, 1] += np.tile(np.arange(10) * 1e-9, 30) * (1 + np.abs(Z[:, 1]))
    y = np.tile(np.arange(10), 30) % n_classes
    return Z, y


@pytest.fixture(params=[2, 4], ids=["binary", "multiclass"])
def close_thresholds(request):
    """:func:`close_threshold_logits` for a binary and a 4-class problem."""
    return close_threshold_logits(request.param)
