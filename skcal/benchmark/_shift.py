"""Distribution shift for ``skcal benchmark``: a shifted test file, or simulated label shift.

A calibrator is fitted on a set's calibration split, as always, and scored on
a test set drawn from another distribution:

- :func:`with_shift_data`: the test set is every row of another logits file
  (the same model's outputs on shifted inputs, e.g. CIFAR-10-C);
- :func:`with_label_shift`: the test split is subsampled, without
  replacement, so that its class proportions follow priors drawn from a
  symmetric Dirichlet distribution (Lipton et al. 2018; Alexandari et al.
  2020); the inputs of each class are unchanged (``p(x | y)`` fixed).

:func:`format_shift_table` then shows, per method, the test metrics without
and with the shift and their difference. Temperature scaling is known to
degrade under shift (Ovadia et al., NeurIPS 2019); label shift in particular
moves the class priors, which a per-class bias (vector scaling) fitted on the
calibration split cannot know.
"""

import math

import numpy as np
from sklearn.utils import Bunch

from ._benchmark import _fmt
from ._decide import _aligned

__all__ = ["with_label_shift", "with_shift_data", "format_shift_table", "label_shift_indices"]


def label_shift_indices(y, alpha, random_state=0, n_classes=None):
    """Rows of a label-shifted subsample of ``y``.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels in ``0..n_classes-1``.
    alpha : float > 0
        Concentration of the symmetric Dirichlet prior of the target class
        proportions: small values (0.1-1) give strong shifts, large values
        proportions close to uniform.
    random_state : int, default=0
        Seeds the drawn proportions and the subsample.
    n_classes : int or None
        Number of classes (default ``y.max() + 1``).

    Returns
    -------
    idx : ndarray of int64
        Sorted row indices: ``round(n * pi_k)`` rows of class ``k``, drawn
        without replacement, where ``n`` is the largest size for which every
        class has enough rows (``n = min_k count_k / pi_k``).
    priors : ndarray of shape (n_classes,)
        The drawn target proportions ``pi``.

    Raises
    ------
    ValueError
        If ``alpha <= 0`` or the subsample would be empty.
    """
    if not alpha > 0:
        raise ValueError(f"the label-shift concentration must be > 0, got {alpha}.")
    y = np.asarray(y)
    K = int(y.max()) + 1 if n_classes is None else int(n_classes)
    rng = np.random.default_rng(random_state)
    priors = rng.dirichlet(np.full(K, float(alpha)))
    counts = np.bincount(y, minlength=K)
    # the largest n for which every class has its share (classes of prior 0 need none)
    n = np.min(np.where(priors > 0, counts / np.where(priors > 0, priors, 1), np.inf))
    take = np.minimum(np.floor(n * priors + 1e-9).astype(np.int64), counts)
    if take.sum() == 0:
        raise ValueError("the label-shifted test split would be empty.")
    idx = [rng.choice(np.flatnonzero(y == k), size=t, replace=False)
           for k, t in enumerate(take) if t]
    return np.sort(np.concatenate(idx)), priors


def with_label_shift(data, alpha, random_state=0, draw=0):
    """A copy of ``data`` whose test split is label-shifted.

    Parameters
    ----------
    data : Bunch
        A data set from :func:`skcal.datasets.load_logits` or
        :func:`~skcal.datasets.load_logits_file`.
    alpha : float > 0
        Dirichlet concentration (see :func:`label_shift_indices`).
    random_state : int, default=0
    draw : int, default=0
        Index of the draw: draws ``0, 1, ...`` with the same ``random_state``
        are independent (seeded by ``SeedSequence([random_state, draw])``).

    Returns
    -------
    shifted : Bunch
        Same calibration split; ``logits_test``/``y_test`` subsampled; name
        ``"<name> | label shift a=<alpha> #<draw>"``; ``shift`` describes it
        (``kind``, ``alpha``, ``priors``, ``n_test``, ``base``, ``draw``).
    """
    seed = np.random.SeedSequence([int(random_state), int(draw)])
    idx, priors = label_shift_indices(data.y_test, alpha, seed, data.n_classes)
    out = Bunch(**data)
    out.logits_test = np.asarray(data.logits_test)[idx]
    out.y_test = np.asarray(data.y_test)[idx]
    out.name = f"{data.name} | label shift a={alpha:g} #{draw}"
    out.shift = {"kind": "label", "alpha": float(alpha), "priors": priors,
                 "n_test": int(len(idx)), "base": data.name, "draw": int(draw)}
    return out


def with_shift_data(data, shifted):
    """A copy of ``data`` whose test split is every row of another file's data.

    Parameters
    ----------
    data : Bunch
        The set whose calibration split the calibrators are fitted on.
    shifted : Bunch
        The shifted data (e.g. from :func:`~skcal.datasets.load_logits_file`);
        its calibration and test splits together form the shifted test set.

    Returns
    -------
    out : Bunch
        Name ``"<name> | shift <shifted name>"``.

    Raises
    ------
    ValueError
        If the two sets have different numbers of classes.
    """
    if shifted.n_classes != data.n_classes:
        raise ValueError(
            f"the shift data {shifted.name} has {shifted.n_classes} classes but "
            f"{data.name} has {data.n_classes}.")
    out = Bunch(**data)
    out.logits_test = np.concatenate(
        [np.asarray(shifted.logits_val), np.asarray(shifted.logits_test)]
    )
    out.y_test = np.concatenate([np.asarray(shifted.y_val), np.asarray(shifted.y_test)])
    out.name = f"{data.name} | shift {shifted.name}"
    out.shift = {"kind": "file", "source": shifted.info.get("source", shifted.name),
                 "n_test": int(len(out.y_test)), "base": data.name}
    return out


def format_shift_table(rows, shifted_sets, fmt="text"):
    """Per method: NLL and ECE on the test split, on the shifted test set(s), and the change.

    Parameters
    ----------
    rows : list of dict
        Output of :func:`skcal.benchmark.run_benchmark` over the base data
        sets and their shifted copies.
    shifted_sets : list of Bunch
        The shifted copies (each has ``shift["base"]``). Several label-shift
        draws of one base set are averaged: the shifted columns are the
        means over the draws and ``sd`` the standard deviation of the NLL
        change across them.
    fmt : {"text", "markdown"}, default="text"

    Returns
    -------
    table : str
    """
    by = {(r["dataset"], r["method"]): r for r in rows}
    headers = ("method", "NLL", "NLL shift", "change", "sd", "ECE %", "ECE % shift",
               "change", "acc %", "acc % shift")
    groups = {}
    for s in shifted_sets:
        groups.setdefault((s.shift["base"], s.shift["kind"]), []).append(s)
    out = []
    for (base, kind), sets in groups.items():
        n_rows = int(np.mean([s.shift["n_test"] for s in sets]))
        if kind == "label":
            a = sets[0].shift["alpha"]
            desc = (f"{len(sets)} draw(s) of Dirichlet(a={a:g}) class priors, "
                    f"mean {n_rows} rows")
            if len(sets) == 1:
                desc += f", priors {np.round(sets[0].shift['priors'], 3).tolist()}"
        else:
            desc = f"every row of {sets[0].shift['source']}, {n_rows} rows"
        title = f"{base}: fitted on its calibration split; shifted test set: {desc}"
        cells = []
        for (d, m), r in by.items():
            qs = [by.get((s.name, m)) for s in sets]
            if d != base or any(q is None or not q["status"].startswith("ok")
                                for q in [r, *qs]):
                continue
            mean = {k: float(np.mean([q[k] for q in qs])) for k in ("nll", "ece", "accuracy")}
            sd = float(np.std([q["nll"] for q in qs], ddof=1)) if len(qs) > 1 else math.nan
            cells.append([
                m, _fmt(r["nll"]), _fmt(mean["nll"]),
                _fmt(mean["nll"] - r["nll"], sign=True), _fmt(sd),
                _fmt(r["ece"], 100, 2), _fmt(mean["ece"], 100, 2),
                _fmt(mean["ece"] - r["ece"], 100, 2, sign=True),
                _fmt(r["accuracy"], 100, 2), _fmt(mean["accuracy"], 100, 2),
            ])
        out.append(f"### {title}\n" if fmt == "markdown" else title)
        out.extend(_aligned(headers, cells, (0,), fmt))
        out.append("")
    return "\n".join(out)
