"""Compare calibration methods (skcal's and peer libraries') on real logits.

This is the logic behind ``skcal benchmark``; it is usable from Python::

    from skcal.benchmark import run_benchmark, format_table
    from skcal.datasets import load_logits
    rows = run_benchmark([load_logits("agnews_gpt2_zeroshot")])
    print(format_table(rows))

Each method is fitted on the calibration split (``logits_val``, ``y_val``) and
evaluated on the test split (``logits_test``, ``y_test``). All metrics come
from :mod:`skcal.metrics`, so the table agrees with what a user computes with
the library.
"""

import math
import sys
import textwrap
import time
import warnings
from collections import Counter

import numpy as np

from ..metrics import brier_score, expected_calibration_error, negative_log_likelihood
from ..metrics._intervals import _build, _Difference, _interval
from ..utils.discovery import all_calibrators, method_name
from . import _decide
from ._decide import _aligned, _write_rows, add_uncalibrated_comparison
from ._peers import PEERS, PeerUnavailable, _probs

__all__ = [
    "add_intervals",
    "available_methods",
    "run_benchmark",
    "format_table",
    "write_csv",
    "plot_reliability",
    "failed_datasets",
]


#: skcal's own calibrators: method name -> class name in :mod:`skcal`; the
#: whole-vector maps first, then the per-class maps, each in name order
#: (calibrators of other kinds, e.g. label-free ones, are not benchmarked).
SKCAL_METHODS = {method_name(cls): name
                 for name, cls in all_calibrators("scaling") + all_calibrators("ovr")}

#: skcal's wrappers over one of the calibrators above, benchmarked as named
#: configurations (``--full``, or by name in ``methods``): method name ->
#: (wrapper class name, inner class name).
WRAPPED_METHODS = {
    "smoothed-isotonic": ("SmoothedCalibrator", "IsotonicScaler"),
    "top-versus-all-platt": ("TopVersusAllCalibrator", "PlattScaler"),
    "top-versus-all-isotonic": ("TopVersusAllCalibrator", "IsotonicScaler"),
}

#: ``skcal fit``'s names of the wrappers at their default inner calibrator
#: (SmoothedCalibrator's IsotonicScaler, TopVersusAllCalibrator's PlattScaler),
#: accepted by ``skcal benchmark --methods`` as the rows of
#: :data:`WRAPPED_METHODS` they fit: alias -> method name.
METHOD_ALIASES = {"smoothed": "smoothed-isotonic", "top-versus-all": "top-versus-all-platt"}

#: Peers so slow (netcal's 1000-epoch vector scaling: minutes at K=100) that
#: they run only when named in ``methods``; otherwise they get a "skipped" row.
OPT_IN = {"netcal-vector", "splinecalib-spline"}

#: Note of a row whose test NLL is infinite: the method output an exact 0
#: (isotonic regression does, on bins with no sample of a class).
INF_NLL_NOTE = "NLL inf: a true class got probability 0"

#: Number of equal-width bins of both ECEs in the table.
N_BINS = 15

#: Metrics that get a bootstrap interval and a paired comparison with the
#: best method (lower is better, except accuracy).
INTERVAL_METRICS = ("nll", "ece", "brier", "accuracy")

#: Coverage of the intervals and of the paired comparisons.
CONFIDENCE_LEVEL = 0.95

#: The keys of every interval metric's columns, ``<metric>_<key>``.
_INTERVAL_KEYS = tuple(f"{m}_{s}" for m in INTERVAL_METRICS
                       for s in ("low", "high", "best", "beyond"))

COLUMNS = (
    "dataset", "method", "library", "nll", "ece", "classwise_ece", "brier", "accuracy",
    "fit_time_s", "predict_time_s", "status", *_INTERVAL_KEYS,
    "nll_change", "nll_change_low", "nll_change_high", "worse",
)


#: The methods of the default ``skcal benchmark`` run (``--full``: all of
#: them): no calibration, the whole-vector maps CalArena found strongest on
#: proper scores (structured vector and structured matrix scaling), the
#: classic per-class maps with quadratic scaling (first or near first on
#: binary log-loss in CalArena) and centered isotonic regression (isotonic
#: without its ties), one binning method, and the peers' temperature scaling
#: and isotonic regression for reference. Every default candidate of
#: :class:`~skcal.AutoCalibrator` is among them (``smoothed-isotonic``
#: included), so that its recommendation has its row. (``dirichlet`` is left
#: out: by default it is the map of ``matrix``; the top-versus-all wrappers
#: of :data:`WRAPPED_METHODS` run with ``--full``.)
DEFAULT_METHODS = (
    "uncalibrated", "temperature", "vector", "structured-vector", "matrix",
    "platt", "beta", "quadratic", "isotonic", "smoothed-isotonic",
    "centered-isotonic", "histogram", "sklearn-isotonic", "probmetrics-temperature",
)


def default_methods(peers=True):
    """The methods of the default ``skcal benchmark`` run that are known here.

    Parameters
    ----------
    peers : bool, default=True
        Keep the peer-library methods of :data:`DEFAULT_METHODS`.

    Returns
    -------
    names : list of str
    """
    known = available_methods(peers=peers)
    return [m for m in DEFAULT_METHODS if m in known]


def available_methods(peers=True):
    """Names of the methods the benchmark knows, in table order.

    Parameters
    ----------
    peers : bool, default=True
        Include the peer-library methods.

    Returns
    -------
    names : list of str
        ``"uncalibrated"`` first, then skcal's calibrators and wrappers
        (:data:`WRAPPED_METHODS`), then the peers.
    """
    names = ["uncalibrated", *SKCAL_METHODS, *WRAPPED_METHODS]
    if peers:
        names += list(PEERS)
    return names


class _Uncalibrated:
    def fit(self, logits, y):
        return self

    def predict_proba(self, logits):
        return _probs(logits)


class _Skcal:
    def __init__(self, class_name, random_state, inner=None):
        found = dict(all_calibrators())
        missing = [n for n in (class_name, inner) if n is not None and n not in found]
        if missing:
            raise PeerUnavailable(f"skcal.{missing[0]} is not available")
        cls = found[class_name]
        self.est = cls() if inner is None else cls(found[inner]())
        if "random_state" in self.est.get_params():
            self.est.set_params(random_state=random_state)

    def fit(self, logits, y):
        self.est.fit(logits, y)
        return self

    def predict_proba(self, logits):
        # exp of the calibrated log-probabilities in float64: float32 logits give
        # float32 probabilities, in which a true-class probability below ~1e-45
        # would flush to 0 and make the test NLL infinite.
        return np.exp(np.asarray(self.est.predict_log_proba(logits), dtype=np.float64))


def _make(method, random_state):
    """Return (library, adapter); adapter may raise PeerUnavailable."""
    if method == "uncalibrated":
        return "-", _Uncalibrated
    if method in SKCAL_METHODS:
        return "skcal", lambda: _Skcal(SKCAL_METHODS[method], random_state)
    if method in WRAPPED_METHODS:
        wrapper, inner = WRAPPED_METHODS[method]
        return "skcal", lambda: _Skcal(wrapper, random_state, inner=inner)
    library, factory = PEERS[method]
    return library, lambda: factory(random_state)


def _metrics(y, proba, n_bins=N_BINS):
    """Test-split metrics of ``proba``, all from :mod:`skcal.metrics`."""
    labels = np.arange(proba.shape[1])
    ece_kw = dict(n_bins=n_bins, labels=labels)
    return {
        "nll": float(negative_log_likelihood(y, proba, labels=labels)),
        "ece": float(expected_calibration_error(y, proba, kind="top-label", **ece_kw)),
        "classwise_ece": float(expected_calibration_error(y, proba, kind="classwise",
                                                          **ece_kw)),
        "brier": float(brier_score(y, proba, labels=labels)),
        "accuracy": float(np.mean(np.argmax(proba, axis=1) == y)),
    }


def _row(data, method, library, status="ok", **extra):
    """A row of ``method`` on ``data``: the ``COLUMNS`` keys (NaN), then ``extra``."""
    row = dict.fromkeys(COLUMNS, math.nan)
    row.update(dataset=data.name, method=method, library=library, status=status,
               **extra)
    return row


#: Longest error message kept in a row's status (the note column); the
#: compact table shortens the column and prints the whole note under the table.
_ERROR_CHARS = 400


def _one_line(exc):
    """``"<Type>: <message>"`` on one line; a message of more than
    ``_ERROR_CHARS`` characters (a peer's dump of an array) is cut there."""
    msg = " ".join(str(exc).split()) or exc.__class__.__name__
    msg = f"{exc.__class__.__name__}: {msg}"
    return msg if len(msg) <= _ERROR_CHARS else msg[:_ERROR_CHARS - 3] + "..."


#: A method whose warm-up fit + predict takes longer than this (seconds) is
#: timed once more only, not ``n_repeats`` times (slow peers).
SLOW_METHOD_S = 5.0


def timing_note(n_repeats):
    """The sentence that explains the time columns of the table."""
    runs = "one timed run" if n_repeats == 1 else f"the median of {n_repeats} timed runs"
    return (
        f"Times in milliseconds: {runs} after one untimed warm-up (a fresh "
        f"calibrator each; methods slower than {SLOW_METHOD_S:g} s are timed once)."
    )


def _timed_run(make, data):
    """Fit a fresh adapter and predict; return ``(proba, fit_s, predict_s)``."""
    adapter = make()
    t0 = time.perf_counter()
    adapter.fit(data.logits_val, data.y_val)
    t1 = time.perf_counter()
    proba = np.asarray(adapter.predict_proba(data.logits_test))
    t2 = time.perf_counter()
    return proba, t1 - t0, t2 - t1


def _summarise_warnings(caught, data, log):
    """One line per cause (category and message) of the warnings ``caught`` on ``data``.

    With ``log`` (the CLI's stderr logger) each is logged as ``warning: NAME:
    MESSAGE (N times)``; without it, re-issued once as a warning of its own
    category. Categories listed in ``data.info["warned"]`` (said already when
    the set was loaded, e.g. the probabilities-as-logits warning) are dropped.
    """
    name = data.name
    info = getattr(data, "info", None)
    said = tuple(info.get("warned", ())) if isinstance(info, dict) else ()
    counts = Counter((w.category, str(w.message)) for w in caught
                     if not (said and issubclass(w.category, said)))
    for (category, message), n in counts.items():
        times = f" ({n} times)" if n > 1 else ""
        if log is not None:
            log(f"warning: {name}: {message}{times}")
        else:
            warnings.warn(f"{name}: {message}{times}", category, stacklevel=3)


def _run_method(data, method, random_state, keep_proba, skip=False, n_repeats=3):
    library, make = _make(method, random_state)
    row = _row(data, method, library)
    if skip:
        row["status"] = f"skipped (slow); run it with --methods {method}"
        return row
    try:
        make()
    except PeerUnavailable as exc:
        row["status"] = str(exc)
        return row
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # warm-up (imports, caches, JIT): its output is scored, not timed
            proba, fit_s, pred_s = _timed_run(make, data)
        reps = n_repeats if fit_s + pred_s <= SLOW_METHOD_S else 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            times = [_timed_run(make, data)[1:] for _ in range(reps)]
        t_fit, t_pred = (float(t) for t in np.median(times, axis=0))
        if proba.shape != (len(data.y_test), data.n_classes):
            raise ValueError(
                f"predict_proba returned shape {proba.shape}, expected "
                f"{(len(data.y_test), data.n_classes)}")
        row.update(_metrics(data.y_test, proba), fit_time_s=t_fit,
                   predict_time_s=t_pred)
        notes = []
        if any("converge" in str(w.message).lower() for w in caught):
            notes.append("convergence warning")
        if any("never occur" in str(w.message) for w in caught):
            notes.append("classes absent from the calibration split")
        if math.isinf(row["nll"]):
            notes.append(INF_NLL_NOTE)
        if notes:
            row["status"] = f"ok ({'; '.join(notes)})"
        if keep_proba:
            row["proba"] = proba
    except Exception as exc:  # a crashing method is reported, not fatal
        row["status"] = "error: " + _one_line(exc)
    return row


#: Bootstrap interval method of ``skcal benchmark``'s metric intervals and
#: paired comparisons with the best method, and of ``skcal report``: BCa
#: (bias-corrected and accelerated), not percentile (the benchmark's NLL change
#: to the uncalibrated model is a percentile paired bootstrap:
#: :func:`skcal.benchmark._decide.add_uncalibrated_comparison`). The binned ECE of a
#: resample is biased upwards, so the percentile interval of a well-calibrated
#: model's ECE can lie entirely above its point estimate (a BBQ ECE of
#: 1.26 % had the percentile interval [1.34, 3.23] %).
INTERVAL_METHOD = "BCa"


def interval_statistic(y, proba, metric, n_bins=N_BINS):
    """The resampleable statistic of one metric (see skcal.metrics._intervals).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels encoded as column indices of ``proba``.
    proba : ndarray of shape (n_samples, n_classes)
        Probabilities.
    metric : {"nll", "ece", "brier", "accuracy"}
        ``"ece"`` is the top-label ECE with ``n_bins`` equal-width bins.
    n_bins : int, default=N_BINS

    Returns
    -------
    statistic : callable
        Maps an array of row indices to the metric of those rows, with an
        O(n) ``jackknife`` for the BCa acceleration.
    """
    labels = np.arange(proba.shape[1])
    params = {"kind": "top-label", "n_bins": n_bins} if metric == "ece" else {}
    stat, _ = _build(metric, y, proba, None, "probabilities", labels, params)
    return stat


def bootstrap_interval(statistic, n, *, n_resamples, random_state,
                       confidence_level=CONFIDENCE_LEVEL):
    """The ``INTERVAL_METHOD`` (BCa) bootstrap interval of ``statistic`` over n rows.

    The intervals of ``skcal report`` and of ``skcal benchmark``'s tables
    (every metric, and the paired differences to the best method behind the
    ``*``). Rows are resampled with :func:`scipy.stats.bootstrap`; the BCa
    acceleration comes from the statistic's jackknife (Efron & Tibshirani
    1993, eq. 14.9-14.15). Calls with the same ``random_state`` draw the same
    resamples (paired comparisons).

    Parameters
    ----------
    statistic : callable
        From :func:`interval_statistic`, or a difference of two of them.
    n : int
        Number of rows.
    n_resamples : int
        Bootstrap resamples (>= 2).
    random_state : int
        Seed of the resampling.
    confidence_level : float, default=0.95

    Returns
    -------
    low, high : float
        NaN when the BCa correction is undefined (a degenerate resampling
        distribution).
    beyond : bool
        Whether the interval is not backed by the resamples
        (``beyond_resamples`` of :func:`skcal.metrics.confidence_interval`):
        marked :data:`BEYOND_MARK` in the tables.
    """
    r = _interval(
        statistic, n, 1, method=INTERVAL_METHOD, n_resamples=n_resamples,
        confidence_level=confidence_level, rng=np.random.default_rng(random_state),
        batch=None,
    )
    return r.low, r.high, r.beyond_resamples


def add_intervals(rows, y_test, *, n_resamples=1000, random_state=0,
                  confidence_level=CONFIDENCE_LEVEL):
    """Add bootstrap intervals and the paired comparison with the best method.

    For each metric of ``INTERVAL_METRICS`` and each row with test
    probabilities (key ``"proba"``) and a finite value, ``<metric>_low``,
    ``<metric>_high`` and ``<metric>_beyond`` get the interval of
    :func:`bootstrap_interval` and its flag, and ``<metric>_best`` is True
    for the best method and for every method whose paired bootstrap
    interval of the difference to the best one contains 0 (the test split
    cannot tell them apart), False otherwise. Every interval of one data set
    uses the same resampled rows (same seed), so the comparisons are paired.

    Parameters
    ----------
    rows : list of dict
        Rows of one data set from ``run_benchmark(..., keep_proba=True)``;
        modified in place.
    y_test : ndarray of shape (n_samples,)
        True test labels.
    n_resamples : int, default=1000
        Bootstrap resamples.
    random_state : int, default=0
        Seed of the resampling.
    confidence_level : float, default=0.95
        Coverage of the intervals.

    Returns
    -------
    rows : list of dict
        The same rows.
    """
    y_test = np.asarray(y_test)
    n = y_test.shape[0]

    def boot(stat):
        return bootstrap_interval(stat, n, n_resamples=n_resamples,
                                  random_state=random_state,
                                  confidence_level=confidence_level)

    for metric in INTERVAL_METRICS:
        ok = [r for r in rows if "proba" in r and np.isfinite(r.get(metric, np.nan))]
        for r in rows:
            r.update({f"{metric}_low": math.nan, f"{metric}_high": math.nan,
                      f"{metric}_best": "", f"{metric}_beyond": False})
        if not ok:
            continue
        stats = [interval_statistic(y_test, r["proba"], metric) for r in ok]
        sign = -1.0 if metric == "accuracy" else 1.0
        best = int(np.argmin([sign * r[metric] for r in ok]))
        for i, (r, st) in enumerate(zip(ok, stats)):  # boot: the same rows each call
            r[f"{metric}_low"], r[f"{metric}_high"], r[f"{metric}_beyond"] = boot(st)
            if i != best:
                low, high, _ = boot(_Difference(st, stats[best]))
            r[f"{metric}_best"] = i == best or bool(low <= 0.0 <= high)
    return rows


class _NoBar:
    """The progress bar without ``progress`` (or without tqdm): does nothing."""

    def set_description(self, *args):
        pass

    update = close = set_description


def run_benchmark(
    datasets, methods=None, *, peers=True, random_state=0, progress=False,
    keep_proba=False, n_resamples=0, n_repeats=3, recommend=False, log=None,
):
    """Fit every method on each data set's calibration split, score the test split.

    Parameters
    ----------
    datasets : iterable of Bunch
        Data sets as returned by :func:`skcal.datasets.load_logits` or
        :func:`skcal.datasets.load_logits_file` (attributes ``logits_val``,
        ``y_val``, ``logits_test``, ``y_test``, ``n_classes``, ``name``).
    methods : list of str or None, default=None
        Method names from :func:`available_methods`; None means all of them,
        except that the slow peers in ``OPT_IN`` get a "skipped" row.
        ``"uncalibrated"`` is always included and always first.
    peers : bool, default=True
        Whether to run the peer-library methods (ignored for methods listed
        explicitly in ``methods``).
    random_state : int, default=0
        Passed to every skcal calibrator that has a ``random_state``.
    progress : bool, default=False
        Show a tqdm progress bar on stderr (no bar if tqdm is missing).
    keep_proba : bool, default=False
        Store the test probabilities of each method under the key ``"proba"``.
    n_repeats : int, default=3
        Each method is fitted and applied once untimed (warm-up: imports,
        caches, JIT compilation; its probabilities are scored), then
        ``n_repeats`` more times on fresh instances, and the median fit and
        predict times are reported (one timed run for methods whose warm-up
        took over :data:`SLOW_METHOD_S` seconds).
    n_resamples : int, default=0
        If > 0, add bootstrap intervals and the paired comparison with the
        best method to every row (see :func:`add_intervals`), and the paired
        interval of the NLL change against the uncalibrated model
        (:func:`skcal.benchmark._decide.add_uncalibrated_comparison`), with
        this many resamples. The point NLL change (``nll_change``) is added
        whatever the value.
    recommend : bool, default=False
        Also fit :class:`skcal.AutoCalibrator` on each calibration split: its
        test scores become a row of method ``"auto"`` (second, after
        ``"uncalibrated"``), whose ``"recommendation"`` key holds the line of
        :func:`skcal.benchmark._decide.format_recommendation` and
        ``"recommended"`` the chosen method.
    log : callable or None, default=None
        Called with one line of text after each data set (its name, number
        of methods and seconds), e.g. ``print`` to stderr.

    Returns
    -------
    rows : list of dict
        One dict per (data set, method), with the keys of ``COLUMNS``:
        ``nll`` (mean negative log-likelihood, nats), ``ece`` (top-label ECE,
        15 equal-width bins, a fraction), ``classwise_ece`` (classwise ECE,
        15 bins), ``brier`` (Brier score), ``accuracy`` (fraction),
        ``fit_time_s`` and ``predict_time_s`` (seconds, wall clock, median
        of ``n_repeats`` runs after a warm-up), and
        ``status`` (``"ok"``, ``"ok (NOTES)"``, ``"not installed"``,
        ``"skipped ..."`` or ``"error: ..."``; metric values are NaN unless
        ``status`` starts with ``"ok"``). Notes are ``"convergence warning"``,
        ``"classes absent from the calibration split"`` and, when the test NLL is infinite because the method gave a true
        class probability exactly 0, ``INF_NLL_NOTE``. With ``n_resamples``
        also ``<metric>_low``, ``<metric>_high``, ``<metric>_best`` and
        ``<metric>_beyond`` (see :func:`add_intervals`) for the metrics of
        ``INTERVAL_METRICS``.

    Raises
    ------
    ValueError
        If ``methods`` contains an unknown name.

    Notes
    -----
    A method that raises during fit or predict becomes an error row; the
    other methods still run.
    """
    known = available_methods(peers=True)
    explicit = methods is not None
    if methods is None:
        methods = available_methods(peers=peers)
    unknown = [m for m in methods if m not in known]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {', '.join(known)}")
    methods = ["uncalibrated"] + [m for m in methods if m != "uncalibrated"]
    datasets = list(datasets)
    bar = _NoBar()
    if progress:
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(datasets) * len(methods), file=sys.stderr, unit="fit",
                       leave=False)
        except ImportError:
            pass
    rows = []
    try:
        for i_data, data in enumerate(datasets):
            t_data = time.perf_counter()
            these = []
            for method in methods:
                bar.set_description(f"{data.name}: {method}")
                skip = not explicit and method in OPT_IN
                these.append(_run_method(data, method, random_state, keep_proba
                                         or n_resamples > 0, skip, n_repeats))
                bar.update()
            if recommend:
                bar.set_description(f"{data.name}: AutoCalibrator")
                try:
                    # its inner fits (every candidate, every fold) would repeat
                    # one warning dozens of times: one line per cause instead
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        rec = _decide.recommend(data, n_resamples=n_resamples,
                                                random_state=random_state)
                    _summarise_warnings(caught, data, log)
                    chose = f"ok (chose {rec['method']})"
                    row = _row(data, _decide.AUTO, "skcal", chose,
                               fit_time_s=rec["fit_time_s"], proba=rec["proba"],
                               recommendation=_decide.format_recommendation(rec),
                               recommended=rec["method"],
                               within_noise=rec["within_noise"])
                    row.update(_metrics(np.asarray(data.y_test), rec["proba"]))
                except Exception as exc:  # reported like a failing method
                    row = _row(data, _decide.AUTO, "skcal", "error: " + _one_line(exc),
                               recommendation="Recommended: - (AutoCalibrator failed "
                               f"with a {exc.__class__.__name__}: see the auto row's "
                               "note)")
                these.insert(1, row)
            if n_resamples > 0:
                bar.set_description(f"{data.name}: intervals")
                # AutoCalibrator's probabilities are those of the method it
                # chose: where that method has its own row, auto's intervals
                # and ties are that row's (comparing two identical outputs
                # would be a degenerate bootstrap); where it has none (a
                # --methods list without it), auto is compared like any row
                auto = next((r for r in these if r["method"] == "auto" and "proba" in r),
                            None)
                twin = None
                if auto is not None:
                    chosen = auto.get("recommended")
                    chosen = "uncalibrated" if chosen == "identity" else chosen
                    twin = next((r for r in these if r["method"] == chosen
                                 and "proba" in r
                                 and np.array_equal(r["proba"], auto["proba"])), None)
                add_intervals([r for r in these if twin is None or r is not auto],
                              data.y_test, n_resamples=n_resamples,
                              random_state=random_state)
                if twin is not None:
                    auto.update({k: twin[k] for k in _INTERVAL_KEYS})
            # the point NLL change needs no resampling (n_resamples=0 leaves
            # only its interval and ``worse`` empty)
            add_uncalibrated_comparison(these, data.y_test, n_resamples=n_resamples,
                                        random_state=random_state)
            if not keep_proba:
                for r in these:
                    r.pop("proba", None)
            rows.extend(these)
            if log is not None:
                log(f"[{i_data + 1}/{len(datasets)}] {data.name}: {len(these)} methods "
                    f"in {time.perf_counter() - t_data:.1f} s")
    finally:
        bar.close()
    return rows


def failed_datasets(rows):
    """Data sets on which every calibration method that ran raised an error.

    Parameters
    ----------
    rows : list of dict
        Output of :func:`run_benchmark`.

    Returns
    -------
    failed : dict
        Data set name -> status of its first error row (an skcal method's if
        any), for each data set where at least one method other than
        ``"uncalibrated"`` and ``"auto"`` (AutoCalibrator, which falls back
        to no calibration) ran (status ``"ok..."`` or ``"error: ..."``, not
        skipped or unavailable) and all of those raised. Such a data set is
        bad input rather than a bug of one method.
    """
    failed = {}
    for name in dict.fromkeys(r["dataset"] for r in rows):
        ran = [r for r in rows if r["dataset"] == name
               and r["method"] not in ("uncalibrated", "auto")
               and r["status"].startswith(("ok", "error:"))]
        if ran and all(r["status"].startswith("error:") for r in ran):
            ours = [r for r in ran if r["library"] == "skcal"]
            failed[name] = (ours or ran)[0]["status"]
    return failed


def _fmt(value, scale=1.0, digits=4, sign=False):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value * scale:{'+' if sign else ''}.{digits}f}"


_HEADERS = (
    "method", "library", "NLL", "dNLL", "ECE %", "cw-ECE %", "Brier", "acc %",
    "fit ms", "predict ms", "note",
)


#: Mark of a method that is the best or not distinguishable from it.
BEST_MARK = "*"

#: Mark of an interval not backed by the resamples (``beyond_resamples``).
BEYOND_MARK = "~"

#: The footnote of :data:`BEYOND_MARK` (``skcal benchmark`` and ``skcal report``).
BEYOND_NOTE = (
    f"{BEYOND_MARK}: BCa puts an end beyond the resamples (its corrected level is below "
    "1 / resamples) or the estimate outside its quantiles, so that side is too narrow: "
    "more resamples help the first; the second is typical of the binned ECE of a "
    "well-calibrated model, whose resamples are biased upwards (read it as a rough range)."
)


def _with_interval(row, metric, scale=1.0, digits=4):
    value = _fmt(row[metric], scale, digits)
    low, high = row.get(f"{metric}_low"), row.get(f"{metric}_high")
    if value == "-" or low is None or not np.isfinite(low):
        return value
    mark = (BEYOND_MARK if row.get(f"{metric}_beyond") else "") \
        + (BEST_MARK if row.get(f"{metric}_best") is True else "")
    return f"{value} [{_fmt(low, scale, digits)}, {_fmt(high, scale, digits)}]{mark}"


def _note(status):
    """The note column of a row: its status, without the ``ok (...)`` around notes."""
    if status.startswith("ok (") and status.endswith(")"):
        return status[4:-1]
    return "" if status == "ok" else status


_COMPACT_HEADERS = ("method", "NLL", "dNLL", "ECE %", "Brier", "acc %", "fit ms", "note")

#: Widest note of the compact table (it fits 120 columns).
_COMPACT_NOTE = 24


def _short(row, metric, scale=1.0, digits=4):
    text = _fmt(row[metric], scale, digits)
    best = text != "-" and row.get(f"{metric}_best") is True
    return text + BEST_MARK if best else text


def _dnll(row):
    """The dNLL cell: NLL - NLL(uncalibrated), ``!`` when worse beyond noise."""
    change = row.get("nll_change", math.nan)
    dnll = "-" if math.isnan(change) else f"{change:+.4f}"  # "+inf" for an inf NLL
    return dnll + "!" if row.get("worse") is True else dnll


def _cells(row, wide=True):
    """The cells of ``_HEADERS`` or (not ``wide``) of ``_COMPACT_HEADERS``."""
    ok = row["status"].startswith("ok")
    note = _note(row["status"])
    if not wide and len(note) > _COMPACT_NOTE:
        note = note[:_COMPACT_NOTE - 3] + "..."
    metric = _with_interval if wide else _short
    cells = [
        row["method"], row["library"], _with_interval(row, "nll"), _dnll(row),
        metric(row, "ece", 100, 2), _fmt(row["classwise_ece"], 100, 2),
        metric(row, "brier"), metric(row, "accuracy", 100, 2),
        _fmt(row["fit_time_s"], 1000, 1) if ok else "-",
        _fmt(row["predict_time_s"], 1000, 1) if ok else "-", note,
    ]
    return cells if wide else [cells[i] for i in (0, 2, 3, 4, 6, 7, 8, 10)]


def format_table(rows, fmt="text", datasets=None, *, wide=True, recommendations=None):
    """Render benchmark rows as one table per data set.

    Parameters
    ----------
    rows : list of dict
        Output of :func:`run_benchmark`.
    fmt : {"text", "markdown"}, default="text"
        Aligned plain text for a terminal, or GitHub Markdown.
    datasets : dict or None, default=None
        Optional mapping name -> Bunch, used to print the class count and
        split sizes in each heading.
    wide : bool, default=True
        Every column (library, classwise ECE, predict time, intervals of
        every metric); False: the compact table of ``skcal benchmark``
        (method, NLL with its interval, the NLL change against the
        uncalibrated model -- ``!`` where it is worse beyond noise --, ECE,
        Brier, accuracy, fit time, a shortened note), which fits 120 columns.
    recommendations : dict or None, default=None
        Data set name -> recommendation line
        (:func:`skcal.benchmark._decide.format_recommendation`), printed
        right under the heading of its table.

    Returns
    -------
    table : str
        ECE and accuracy are shown in percent, times in milliseconds. Rows
        with intervals (:func:`add_intervals`) show ``value [low, high]``,
        followed by ``*`` for the best method and the methods a paired
        bootstrap cannot tell from it (and, before it, :data:`BEYOND_MARK`
        for an interval the resamples do not back); lines under each table
        say so.
    """
    if fmt not in ("text", "markdown"):
        raise ValueError(f"fmt must be 'text' or 'markdown', got {fmt!r}")
    out = []
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    for name in names:
        heading = name
        if datasets and name in datasets:
            d = datasets[name]
            heading += (f" (K={d.n_classes}, {len(d.y_val)} calibration / "
                        f"{len(d.y_test)} test rows)")
        mine = [r for r in rows if r["dataset"] == name]
        headers, left = (_HEADERS, (0, 1, 10)) if wide else (_COMPACT_HEADERS, (0, 7))
        cells = [_cells(r, wide) for r in mine]
        rec = (recommendations or {}).get(name)
        out.append(f"### {heading}\n" if fmt == "markdown" else heading)
        if rec:
            out.append(f"**{rec}**\n" if fmt == "markdown"
                       else textwrap.fill(rec, 120, subsequent_indent="    "))
        out.extend(_aligned(headers, cells, left, fmt))
        if not wide:  # the full text of every shortened note
            for r in mine:
                note = _note(r["status"])
                if len(note) > _COMPACT_NOTE:
                    out.append(f"  {r['method']}: {note}")
        if any(r.get("nll_best") in (True, False) for r in mine):
            out.append("")
            out.append(textwrap.fill(
                f"[low, high]: {100 * CONFIDENCE_LEVEL:.0f}% BCa bootstrap "
                f"interval on the test split. {BEST_MARK}: the best method, or one "
                "that a paired bootstrap on the test split cannot tell apart from it "
                "(the interval of the difference contains 0)."
                + " dNLL: NLL - NLL(uncalibrated); !: worse beyond "
                "noise (its paired interval lies above 0, and the change does not print "
                "as +0.0000); that interval, like the "
                f"recommendation's, is a {100 * CONFIDENCE_LEVEL:.0f}% percentile "
                "paired bootstrap."
                # the note only where a shown interval carries the mark
                + (" " + BEYOND_NOTE if any("]" + BEYOND_MARK in c for row in cells
                                            for c in row) else ""),
                width=10**6 if fmt == "markdown" else 120,
            ))
        out.append("")
    return "\n".join(out)


def write_csv(rows, path):
    """Write benchmark rows to a CSV file (raw values, SI units, fractions).

    The columns are ``COLUMNS``: with intervals, ``<metric>_beyond`` (next to
    ``<metric>_best``) is True where the interval is not backed by the
    resamples, the intervals the tables mark :data:`BEYOND_MARK`.

    Parameters
    ----------
    rows : list of dict
        Output of :func:`run_benchmark`.
    path : str or path-like
        Destination file; overwritten.
    """
    _write_rows(rows, path, COLUMNS)


def plot_reliability(
    rows, y_test, path, title=None, n_bins=N_BINS, libraries=None
):
    """Save a top-label reliability diagram comparing the methods of one data set.

    Parameters
    ----------
    rows : list of dict
        Rows of a single data set from ``run_benchmark(..., keep_proba=True)``;
        rows without ``"proba"`` are skipped.
    y_test : ndarray of shape (n_samples,)
        True test labels.
    path : str or path-like
        PNG file to write.
    title : str or None, default=None
        Figure title.
    n_bins : int, default=15
        Equal-width confidence bins.
    libraries : tuple of str or None, default=None
        Draw only the rows whose ``library`` is listed (``"-"`` is the
        uncalibrated model); None draws every method, the peers' too.

    Returns
    -------
    fig : matplotlib.figure.Figure
        The saved figure (not attached to pyplot).

    Notes
    -----
    Uses matplotlib's object API (no pyplot, no global backend change). The
    uncalibrated model is a dashed grey line, skcal's calibrators solid
    lines and the peers thinner dotted ones, each with its own marker. The
    lower panel shows the fraction of test samples per bin: bars with the
    bin counts written on them for the uncalibrated model, a step line per
    method. The legend, with each method's top-label ECE, sits below the
    axes so that it never covers the curves.
    """
    from ..display import ReliabilityDisplay

    shown = [r for r in rows
             if "proba" in r and (libraries is None or r["library"] in libraries)]
    fig = _decide._figure((6.4, 8.6))
    ax, hist_ax = fig.subplots(2, 1, sharex=True, height_ratios=[3.2, 1])
    colors = ["0.35", "tab:blue", "tab:orange", "tab:green", "tab:red",
              "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan",
              "navy", "gold", "black", "magenta", "teal", "lime"]
    y_test = np.asarray(y_test)
    for i, r in enumerate(shown):
        uncal = r["method"] == "uncalibrated"
        peer = r["library"] not in ("-", "skcal")
        color = colors[i % len(colors)]
        disp = ReliabilityDisplay.from_predictions(
            y_test, r["proba"], kind="top-label", n_bins=n_bins,
            labels=np.arange(r["proba"].shape[1]), ax=ax, ref_line=i == 0,
            name=f"{r['method']} (ECE {100 * r['ece']:.2f}%)", color=color,
            markersize=4, linewidth=2 if uncal else (1.0 if peer else 1.5),
            linestyle="--" if uncal else (":" if peer else "-"),
        )
        edges = np.asarray(disp.bin_edges, dtype=float)
        weight = np.zeros(edges.shape[0] - 1)
        weight[disp.bin_index] = disp.bin_weight
        if uncal:
            bars = hist_ax.bar(edges[:-1], weight, width=np.diff(edges),
                               align="edge", color=color, alpha=0.25)
            counts = np.zeros(edges.shape[0] - 1, dtype=np.int64)
            counts[disp.bin_index] = disp.bin_count
            hist_ax.bar_label(bars, labels=[str(c) if c else "" for c in counts],
                              fontsize=6, rotation=90, padding=1, color="0.25")
        else:
            hist_ax.stairs(weight, edges, color=color, linewidth=1.0 if peer else 1.4,
                           linestyle=":" if peer else "-")
    # no equal aspect: the two panels keep the same width, so a bin's bar
    # lies exactly under its point
    ax.set(xlim=(0, 1), ylim=(0, 1), title=title or "", xlabel="")
    hist_ax.set(xlim=(0, 1), xlabel="Confidence (mean top-label probability)",
                ylabel="Fraction of samples")
    hist_ax.set_ylim(0, hist_ax.get_ylim()[1] * 1.3)
    if shown:
        if ax.get_legend() is not None:  # the display's own, inside the axes
            ax.get_legend().remove()
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center",
                   ncol=2, fontsize=8, frameon=False)
    fig.savefig(path, dpi=100)
    return fig
