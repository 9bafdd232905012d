"""Benchmark sets from scikit-learn's own tabular data: out-of-fold ``predict_proba``.

The scikit-learn user's case: a fitted classifier's probabilities on data it
was not trained on. For each of the data sets that ship with scikit-learn
(breast cancer: binary; digits: 10 classes) and each model (gradient boosting,
random forest, Gaussian naive Bayes, an RBF SVC), the outputs are out-of-fold
predictions of 5 stratified folds (seeded), split 50/50 (stratified, seeded)
into a calibration and a test split. ``predict_proba`` is stored as
log-probabilities, ``log(max(p, 1e-12))``, so that the calibrators read it as
logits; the SVC's ``decision_function`` (one-vs-rest margins; for two classes
the margin of class 1, as ``[0, margin]``) is stored as is. Nothing is downloaded; the arrays are
cached in ``$XDG_CACHE_HOME/skcal`` (default ``~/.cache/skcal``).
"""

import os
from pathlib import Path

import numpy as np

__all__ = ["sklearn_sets", "SKLEARN_SETS"]

#: (data set, model) pairs, as ``<data>_<model>`` names.
SKLEARN_SETS = tuple(
    f"{d}_{m}" for d in ("breast_cancer", "digits") for m in ("gb", "rf", "nb", "svc")
)

#: Floor of the probabilities before the log (an exact 0 of a random forest).
PROBA_FLOOR = 1e-12


def _cache_dir():
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "skcal"


def _model(name, seed):
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    return {
        "gb": lambda: HistGradientBoostingClassifier(max_iter=30, random_state=seed),
        "rf": lambda: RandomForestClassifier(n_estimators=50, random_state=seed, n_jobs=1),
        "nb": GaussianNB,
        "svc": lambda: make_pipeline(StandardScaler(), SVC(random_state=seed)),
    }[name]()


def _build(name, seed):
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.model_selection import StratifiedKFold, cross_val_predict, train_test_split

    data, model = name.rsplit("_", 1)
    X, y = (load_breast_cancer if data == "breast_cancer" else load_digits)(return_X_y=True)
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    if model == "svc":
        L = cross_val_predict(_model(model, seed), X, y, method="decision_function", cv=cv)
        if L.ndim == 1:
            L = np.column_stack([np.zeros_like(L), L])
    else:
        P = cross_val_predict(_model(model, seed), X, y, method="predict_proba", cv=cv)
        L = np.log(np.maximum(P, PROBA_FLOOR))
    idx = np.arange(len(y))
    i_val, i_test = train_test_split(idx, test_size=0.5, stratify=y, random_state=seed)
    return {"logits_val": L[i_val], "y_val": y[i_val], "logits_test": L[i_test],
            "y_test": y[i_test]}


def sklearn_sets(names=None, *, random_state=0, cache=True):
    """The scikit-learn benchmark sets, built (seconds each) or read from the cache.

    Parameters
    ----------
    names : list of str or None, default=None
        Names from :data:`SKLEARN_SETS`; None for all eight.
    random_state : int, default=0
        Seed of the folds, the models and the split.
    cache : bool, default=True
        Read and write ``<cache>/sklearn_<name>_<seed>_v1.npz``.

    Returns
    -------
    sets : list of Bunch
        ``name``, ``logits_val``, ``y_val``, ``logits_test``, ``y_test``,
        ``n_classes`` and ``info``, like :func:`skcal.datasets.load_logits`.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    from sklearn.utils import Bunch

    names = list(SKLEARN_SETS if names is None else names)
    unknown = [n for n in names if n not in SKLEARN_SETS]
    if unknown:
        raise ValueError(f"unknown scikit-learn set(s) {unknown}; choose from "
                         f"{', '.join(SKLEARN_SETS)}")
    out = []
    for name in names:
        path = _cache_dir() / f"sklearn_{name}_{random_state}_v1.npz"
        arrays = None
        if cache and path.exists():
            with np.load(path) as f:
                arrays = {k: f[k] for k in f.files}
        if arrays is None:
            arrays = _build(name, random_state)
            if cache:
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    np.savez(path, **arrays)
                except OSError:  # a read-only home: build again next time
                    pass
        out.append(Bunch(
            name=f"sklearn_{name}", n_classes=int(arrays["logits_val"].shape[1]),
            info={"source": f"scikit-learn {name}: out-of-fold outputs (seed {random_state})"},
            **arrays,
        ))
    return out
