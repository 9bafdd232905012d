"""What ``skcal benchmark`` concludes: a recommendation per data set, a summary across them.

The recommendation of a data set is :class:`skcal.AutoCalibrator`'s choice on
its calibration split (five stratified folds, the paired one-standard-error
rule on the mean NLL), scored on the test split against the uncalibrated model with a
paired bootstrap. The summary follows the comparisons of CalArena
(Holzmüller, Berta, Bach, Jordan, arXiv:2605.30188): win rates against a
reference with bootstrap intervals over data sets, and the Post-Hoc
Improvement (PHI) of proper scores, ``loss(uncalibrated) - loss(method)``
averaged over data sets.
"""

import math
import textwrap

import numpy as np

from ..utils._docstrings import substitute_docstring

__all__ = [
    "SUMMARY_COLUMNS",
    "add_uncalibrated_comparison",
    "plot_nll_change",
    "plot_recommended_reliability",
    "plot_reliability_panels",
    "plot_win_rates",
    "format_recommendation",
    "format_summary",
    "nll_change_side",
    "recommend",
    "summarize",
    "write_summary_csv",
]

#: Method name of AutoCalibrator's rows in the benchmark table.
AUTO = "auto"

#: The smallest NLL change (nats) that is ever "beyond noise": half the last
#: digit of the table's dNLL column (4 decimals), so that a change printed as
#: ``+0.0000`` or ``-0.0000`` is not flagged even when its bootstrap interval
#: has no width (perfectly separable logits: every row's change is the same).
NLL_CHANGE_RESOLUTION = 5e-5


def nll_change_side(change, low, high):
    """Whether an NLL change is beyond noise: ``1`` worse, ``-1`` better, ``0`` neither.

    The one rule of ``skcal benchmark`` (the table's ``!``, the summary's
    ``worse`` count, the colours of ``nll_change_<data>.png``): the paired
    bootstrap interval ``[low, high]`` lies entirely above (below) 0 *and*
    the change is at least :data:`NLL_CHANGE_RESOLUTION` in size, i.e. it
    shows at the printed precision.

    Parameters
    ----------
    change : float
        ``NLL(method) - NLL(uncalibrated)``.
    low, high : float
        Its interval (NaN without one: then ``0``).

    Returns
    -------
    side : {-1, 0, 1}
    """
    if not abs(change) >= NLL_CHANGE_RESOLUTION:  # also NaN
        return 0
    if low > 0:
        return 1
    return -1 if high < 0 else 0


def recommend(data, *, n_resamples=1000, random_state=0, confidence_level=0.95):
    """AutoCalibrator's choice on the calibration split, scored on the test split.

    Parameters
    ----------
    data : Bunch
        A data set with ``logits_val``, ``y_val``, ``logits_test``, ``y_test``.
    n_resamples : int, default=1000
        Bootstrap resamples of the test rows for the interval of the NLL
        change; 0 for none.
    random_state : int, default=0
        Seed of the folds and of the resampling.
    confidence_level : float, default=0.95

    Returns
    -------
    rec : dict
        ``method`` (the chosen candidate's name, ``"identity"`` for no
        calibration), ``within_noise`` (the other candidates whose mean
        cross-validated NLL exceeds the best one's by at most one standard
        error of their paired fold differences, as in
        :func:`skcal.meta._auto.one_se_choice`),
        ``nll`` and ``nll_uncalibrated`` (test NLL), ``delta``, ``low``,
        ``high`` (the change and its paired percentile bootstrap interval;
        NaN without resamples), ``proba`` (test probabilities, float64),
        ``fit_time_s`` and ``calibrator`` (the fitted AutoCalibrator).
    """
    import time

    from scipy.special import softmax

    from ..meta import AutoCalibrator
    from ..metrics import negative_log_likelihood, paired_difference_interval

    t0 = time.perf_counter()
    auto = AutoCalibrator(random_state=random_state).fit(data.logits_val, data.y_val)
    fit_s = time.perf_counter() - t0
    res = auto.cv_results_
    loss = -np.column_stack([res[f"split{j}_test_score"] for j in range(auto.n_splits_)])
    mean = loss.mean(axis=1)
    ok = np.isfinite(mean)
    within = []
    if ok.any():  # the rule of one_se_choice, for every candidate
        best = int(np.nanargmin(np.where(ok, mean, np.nan)))
        d = loss - loss[best]
        se = d.std(axis=1, ddof=1) / math.sqrt(loss.shape[1])
        within = [
            str(n) for i, n in enumerate(res["candidate"])
            if ok[i] and i != auto.best_index_ and d[i].mean() <= se[i]
        ]
    proba = np.exp(np.asarray(auto.predict_log_proba(data.logits_test), dtype=np.float64))
    base = softmax(np.asarray(data.logits_test, dtype=np.float64), axis=1)
    labels = np.arange(proba.shape[1])
    y = np.asarray(data.y_test)
    nll = float(negative_log_likelihood(y, proba, labels=labels))
    nll0 = float(negative_log_likelihood(y, base, labels=labels))
    low = high = math.nan
    if n_resamples > 0 and auto.best_name_ != "identity":
        d = paired_difference_interval(
            "nll", y, proba, base, labels=labels, n_resamples=n_resamples,
            random_state=random_state, confidence_level=confidence_level,
        )
        low, high = float(d.low), float(d.high)
    elif auto.best_name_ == "identity":
        low = high = 0.0
    return {
        "dataset": data.name, "method": auto.best_name_, "within_noise": within,
        "nll": nll, "nll_uncalibrated": nll0, "delta": nll - nll0, "low": low,
        "high": high, "proba": proba, "fit_time_s": fit_s, "calibrator": auto,
    }


def format_recommendation(rec):
    """The one-line recommendation of a data set.

    Parameters
    ----------
    rec : dict
        Output of :func:`recommend`.

    Returns
    -------
    line : str
        ``Recommended: <method> — test NLL <nll> vs <nll0> uncalibrated
        (<change> [<low>, <high>]); among AutoCalibrator's candidates, <others>
        are within one standard error in cross-validation on the calibration
        split`` (AutoCalibrator's own rule, not the table's test-split ``*``), or
        ``Recommended: no calibration — ...`` when the identity map wins.
    """
    others = rec["within_noise"]
    tail = ""
    if others:
        names = ", ".join("no calibration" if o == "identity" else o for o in others)
        tail = (f"; among AutoCalibrator's candidates, {names} "
                f"{'is' if len(others) == 1 else 'are'} within one standard error "
                "in cross-validation on the calibration split")
    if rec["method"] == "identity":
        return (f"Recommended: no calibration — test NLL {rec['nll']:.4f}; no candidate "
                f"beat it beyond noise in 5-fold cross-validation{tail}")
    interval = ""
    if np.isfinite(rec["low"]):
        interval = f" [{rec['low']:+.3f}, {rec['high']:+.3f}]"
    return (
        f"Recommended: {rec['method']} — test NLL {rec['nll']:.4f} vs "
        f"{rec['nll_uncalibrated']:.4f} uncalibrated ({rec['delta']:+.3f}{interval}){tail}"
    )


def add_uncalibrated_comparison(rows, y_test, *, n_resamples=1000, random_state=0,
                                confidence_level=0.95):
    """Add each method's paired NLL change against the uncalibrated model.

    For every row with a test NLL, ``nll_change`` is
    ``NLL(method) - NLL(uncalibrated)`` on the test split (``inf`` for a method
    whose NLL is infinite: a true class got probability 0); for rows with a
    finite NLL, test probabilities (key ``"proba"``) and ``n_resamples > 0``,
    ``nll_change_low`` / ``nll_change_high`` is its paired percentile bootstrap
    interval (NaN otherwise); ``worse`` is True when the whole interval lies above 0
    and the change shows at the table's precision (:func:`nll_change_side`: the
    method raised the test NLL beyond noise) or the NLL is infinite. Percentile
    (:func:`skcal.metrics.paired_difference_interval`'s default), like the
    interval of :func:`recommend`: not the BCa of
    :func:`skcal.benchmark._benchmark.bootstrap_interval`, which the table's
    other intervals and its ``*`` use; the table's dNLL column shows
    ``nll_change``, with ``!`` where ``worse``.

    Parameters
    ----------
    rows : list of dict
        Rows of one data set (with ``"proba"``), the uncalibrated row among
        them; modified in place.
    y_test : ndarray of shape (n_samples,)
    n_resamples : int, default=1000
    random_state : int, default=0
    confidence_level : float, default=0.95

    Returns
    -------
    rows : list of dict
    """
    from ..metrics import paired_difference_interval

    base = next((r for r in rows if r["method"] == "uncalibrated"
                 and np.isfinite(r.get("nll", math.nan))), None)
    y = np.asarray(y_test)
    for r in rows:
        r["nll_change"] = r["nll_change_low"] = r["nll_change_high"] = math.nan
        r["worse"] = ""
        if base is None or math.isnan(r.get("nll", math.nan)):
            continue
        r["nll_change"] = r["nll"] - base["nll"]  # inf for an infinite NLL
        if math.isinf(r["nll"]):  # worse whatever the noise: a true class at 0
            r["worse"] = True
            continue
        if r is base:
            r["nll_change_low"] = r["nll_change_high"] = 0.0
            r["worse"] = False
            continue
        if (n_resamples > 0 and "proba" in r and "proba" in base
                and math.isfinite(r["nll"])):
            labels = np.arange(r["proba"].shape[1])
            d = paired_difference_interval(
                "nll", y, r["proba"], base["proba"], labels=labels,
                n_resamples=n_resamples, random_state=random_state,
                confidence_level=confidence_level,
            )
            r["nll_change_low"], r["nll_change_high"] = float(d.low), float(d.high)
            r["worse"] = nll_change_side(r["nll_change"], r["nll_change_low"],
                                         r["nll_change_high"]) == 1
    return rows


#: Columns of ``benchmark_summary.csv``.
SUMMARY_COLUMNS = (
    "method", "n_datasets", "mean_rank_nll", "mean_rank_ece",
    "win_rate_vs_uncalibrated", "win_rate_vs_uncalibrated_low",
    "win_rate_vs_uncalibrated_high", "win_rate_vs_temperature",
    "win_rate_vs_temperature_low", "win_rate_vs_temperature_high",
    "phi_nll", "phi_nll_ci", "phi_brier", "phi_brier_ci", "n_worse_nll", "ece_flag",
)


def _win_rate(wins, n_boot, rng):
    """Mean of per-data-set wins (1, 0.5 for a tie, 0) and its percentile interval."""
    wins = np.asarray(wins, dtype=np.float64)
    if wins.size == 0:
        return math.nan, math.nan, math.nan
    boot = wins[rng.integers(0, wins.size, size=(n_boot, wins.size))].mean(axis=1)
    low, high = np.percentile(boot, [2.5, 97.5])
    return float(wins.mean()), float(low), float(high)


#: Relative tolerance of a tie in the win rates: two test NLLs ``a`` and ``b``
#: with ``|a - b| <= TIE_RTOL * max(|a|, |b|)`` (:func:`math.isclose`) are a tie,
#: half a win. Two solvers of one problem (skcal's and probmetrics' temperature
#: scaling) differ by 1e-9 to 1e-7 relative: numerical noise, not a win. The
#: same tolerance ties NLLs and ECEs in the ranks (:func:`_tied_ranks`).
TIE_RTOL = 1e-6


def _tie(a, b):
    """Whether NLLs ``a`` and ``b`` tie (:data:`TIE_RTOL`; inf ties inf, not a finite value)."""
    return math.isclose(a, b, rel_tol=TIE_RTOL)


def _wins(a, b):
    """1 when NLL ``a`` is lower than ``b``, 0.5 for a tie (:func:`_tie`), else 0."""
    if _tie(a, b):
        return 0.5
    return 1.0 if a < b else 0.0


def _tied_ranks(values):
    """Ranks of the values (1 = lowest), neighbours within :data:`TIE_RTOL` sharing their mean rank.

    The ranks of the NLLs and of the ECEs of one data set, and the places of
    the methods by mean rank (:func:`summarize`'s ECE note).
    """
    from scipy.stats import rankdata

    v = np.asarray(values, dtype=np.float64)
    order = np.argsort(v, kind="stable")
    group = np.zeros(v.size, dtype=np.int64)  # a new group where the sorted values part
    for i in range(1, v.size):
        group[i] = group[i - 1] + (not _tie(v[order[i - 1]], v[order[i]]))
    out = np.empty(v.size)
    out[order] = rankdata(group)
    return out


def summarize(rows, *, n_resamples=1000, random_state=0):
    """Per-method summary across data sets (CalArena's comparisons).

    Only data sets on which the method ran (a finite test NLL) count for it.

    Parameters
    ----------
    rows : list of dict
        Benchmark rows of several data sets (from :func:`run_benchmark`, with
        :func:`add_uncalibrated_comparison` for ``n_worse_nll``).
    n_resamples : int, default=1000
        Bootstrap resamples *of data sets* for the win-rate intervals.
    random_state : int, default=0

    Returns
    -------
    summary : list of dict
        One dict per method (keys ``SUMMARY_COLUMNS``), sorted by mean NLL rank:

        - ``mean_rank_nll`` / ``mean_rank_ece``: mean rank of the method's
          test NLL / top-label ECE (15 bins) among the methods that ran on a
          data set (1 = best; ties share the mean rank, NLLs or ECEs within
          :data:`TIE_RTOL` being ties, :func:`_tied_ranks`);
        - ``win_rate_vs_uncalibrated`` / ``_vs_temperature``: fraction of data
          sets where its test NLL is lower than the reference's (a tie counts
          one half; NLLs within a relative :data:`TIE_RTOL` = 1e-6 of each
          other are a tie, so that numerical noise is no win), with a 95%
          percentile bootstrap interval over data sets (NaN for the reference
          itself);
        - ``phi_nll`` / ``phi_brier``: Post-Hoc Improvement, the mean over data
          sets of ``loss(uncalibrated) - loss(method)`` (positive: better), and
          ``phi_*_ci`` the half-width ``1.96 sd / sqrt(n_datasets)``, as CalArena
          reports it;
        - ``n_worse_nll``: data sets where the paired bootstrap interval of
          its NLL change lies entirely above 0;
        - ``ece_flag``: ``"ECE: higher"`` / ``"ECE: lower"`` (binned ECE ranks it higher / lower)
          where its place by mean ECE rank differs from its place by mean NLL
          rank by 3 or more (methods with equal mean ranks share their place).
    """
    rng = np.random.default_rng(random_state)
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    table = {}
    for d in names:
        # an infinite NLL (a true class got probability 0) ranks last, not dropped
        ran = {r["method"]: r for r in rows
               if r["dataset"] == d and not math.isnan(r.get("nll", math.nan))}
        if not ran:
            continue
        ms = list(ran)
        rk_nll = _tied_ranks([ran[m]["nll"] for m in ms])
        ece = [ran[m]["ece"] for m in ms]
        rk_ece = _tied_ranks(ece) if not np.isnan(ece).any() else np.full(len(ms), np.nan)
        for m, a, b in zip(ms, rk_nll, rk_ece):
            table[d, m] = (ran[m], a, b)
    out = []
    for m in methods:
        sets = [d for d in names if (d, m) in table]
        if not sets:
            continue
        cells = [table[d, m] for d in sets]
        s = {"method": m, "n_datasets": len(sets),
             "mean_rank_nll": float(np.mean([c[1] for c in cells])),
             "mean_rank_ece": float(np.mean([c[2] for c in cells]))}
        for ref in ("uncalibrated", "temperature"):
            wins = [] if m == ref else [  # no win rate against itself
                _wins(table[d, m][0]["nll"], table[d, ref][0]["nll"])
                for d in sets if (d, ref) in table
            ]
            key = f"win_rate_vs_{ref}"
            s[key], s[f"{key}_low"], s[f"{key}_high"] = _win_rate(wins, n_resamples, rng)
        for metric in ("nll", "brier"):
            diffs = np.array([table[d, "uncalibrated"][0][metric] - table[d, m][0][metric]
                              for d in sets if (d, "uncalibrated") in table])
            ci = math.nan  # also for a -inf mean (an infinite loss)
            if diffs.size > 1 and np.isfinite(diffs).all():
                ci = float(1.96 * diffs.std(ddof=1) / math.sqrt(diffs.size))
            s[f"phi_{metric}"] = float(diffs.mean()) if diffs.size else math.nan
            s[f"phi_{metric}_ci"] = ci
        s["n_worse_nll"] = int(sum(c[0].get("worse") is True for c in cells))
        s["ece_flag"] = ""
        out.append(s)
    out.sort(key=lambda s: (s["mean_rank_nll"], s["method"]))
    # places by mean rank, equal mean ranks sharing their place as equal NLLs
    # share a rank (not broken by the method's name)
    place_nll = _tied_ranks([s["mean_rank_nll"] for s in out])
    place_ece = _tied_ranks([np.nan_to_num(s["mean_rank_ece"], nan=np.inf) for s in out])
    for s, a, b in zip(out, place_nll, place_ece):
        shift = a - b
        if abs(shift) >= 3 and np.isfinite(s["mean_rank_ece"]):
            s["ece_flag"] = "ECE: higher" if shift > 0 else "ECE: lower"
    return out


def _pct(v):
    return "-" if not np.isfinite(v) else f"{100 * v:.0f}"


def _interval(s, key):
    v, lo, hi = s[key], s[f"{key}_low"], s[f"{key}_high"]
    if not np.isfinite(v):
        return "-"
    return f"{_pct(v)} [{_pct(lo)},{_pct(hi)}]"


def _phi(s, key, scale=100.0):
    v, ci = s[key], s[f"{key}_ci"]
    if math.isnan(v):
        return "-"
    if math.isinf(v):
        return f"{v:+}"
    return f"{scale * v:+.2f}" + (f"±{scale * ci:.2f}" if np.isfinite(ci) else "")


_SUMMARY_HEADERS = ("method", "n", "rank", "win% uncal", "win% temp",
                    "PHI NLL", "PHI Brier", "worse", "ECE rank", "note")


def format_summary(summary, fmt="text"):
    """Render :func:`summarize` as a table (text fits 120 columns, or Markdown).

    Parameters
    ----------
    summary : list of dict
    fmt : {"text", "markdown"}, default="text"

    Returns
    -------
    table : str
    """
    cells = [[
        s["method"], str(s["n_datasets"]), f"{s['mean_rank_nll']:.1f}",
        _interval(s, "win_rate_vs_uncalibrated"), _interval(s, "win_rate_vs_temperature"),
        _phi(s, "phi_nll"), _phi(s, "phi_brier"), str(s["n_worse_nll"]),
        "-" if not np.isfinite(s["mean_rank_ece"]) else f"{s['mean_rank_ece']:.1f}",
        s["ece_flag"],
    ] for s in summary]
    lines = _aligned(_SUMMARY_HEADERS, cells, (0, 9), fmt)
    lines += ["", textwrap.fill(
        "n: data sets. rank / ECE rank: mean rank by test NLL / top-label ECE (1 = best); "
        f"NLLs (and ECEs) equal to a relative {TIE_RTOL:g} share a rank; an infinite NLL "
        "ranks last. "
        "win%: share of data sets with a lower test NLL than the uncalibrated model / "
        "temperature scaling, such a tie counting one half "
        "[95% bootstrap interval over data sets]. PHI: Post-Hoc Improvement (CalArena), "
        "mean over data sets of loss(uncalibrated) - loss(method), x100, ±1.96 sd/sqrt(n). "
        "worse: data sets where it raised the test NLL beyond noise (paired bootstrap). "
        "note: where binned ECE ranks the method 3 or more places higher / lower than NLL "
        "does (equal mean ranks share a place).",
        width=120,
    )]
    return "\n".join(lines)


def write_summary_csv(summary, path):
    """Write :func:`summarize` to a CSV file (raw values; win rates and PHI as fractions/nats).

    Parameters
    ----------
    summary : list of dict
    path : str or path-like
    """
    _write_rows(summary, path, SUMMARY_COLUMNS)


# ----------------------------------------------------------------- pictures
def _figure(figsize):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path, title, ax=None):
    """Title ``ax`` (the figure if None) when ``title`` is given, write ``path``, return ``fig``."""
    if title:
        (fig.suptitle if ax is None else ax.set_title)(title, fontsize=10)
    fig.savefig(path, dpi=110)
    return fig


_PNG = """\
path : str or path-like
    PNG file to write.
title : str or None, default=None"""
_FIG = """\
Returns
-------
fig : matplotlib.figure.Figure"""
#: The last parameters and the Returns section of the plots (substitute_docstring);
#: the reliability plots also take ``n_bins``.
_DOCS = {
    "png_returns": f"{_PNG}\n\n{_FIG}",
    "png_bins_returns": f"{_PNG}\nn_bins : int, default=10\n\n{_FIG}",
}

#: Most panels of the reliability small multiples (uncalibrated included).
MAX_RELIABILITY_PANELS = 6


def _shown_panels(rows):
    """The reliability panels: ``(row, label)`` of uncalibrated, the recommended
    method and those within noise of it.

    The recommended method is its own row; where it has none with test
    probabilities (``--methods`` without it), the ``auto`` row, labelled
    ``"auto: <method> (recommended)"``. "Within noise" is the table's ``*``
    for NLL (``nll_best`` True: the test split's paired bootstrap cannot tell
    the method from the best one), ``auto`` included unless the recommended
    method has its own row (``auto`` is that model: one panel); without bootstrap
    intervals, AutoCalibrator's own ``within_noise`` candidates. Each row at
    most once, at most :data:`MAX_RELIABILITY_PANELS` panels: uncalibrated,
    the recommended one, then the others in table order.
    """
    by_name = {r["method"]: r for r in rows if "proba" in r}
    auto = next((r for r in rows if r["method"] == AUTO), None)
    rec = auto.get("recommended") if auto is not None else None
    rec = "uncalibrated" if rec == "identity" else rec
    names = ["uncalibrated"]
    if rec:
        # no row of its own: AutoCalibrator's row is the recommended model
        names.append(rec if rec in by_name else AUTO)
    if any(r.get("nll_best") in (True, False) for r in rows):
        names += [r["method"] for r in rows if r.get("nll_best") is True
                  # auto is the recommended method's model: one panel for both
                  and not (r["method"] == AUTO and rec in by_name)]
    elif auto is not None:
        names += list(auto.get("within_noise", ()))
    names = ["uncalibrated" if n == "identity" else n for n in names]
    out = []
    for n in dict.fromkeys(names):
        if n not in by_name:
            continue
        label = n
        if rec and n == rec:
            label += " (recommended)"
        elif rec and n == AUTO and rec not in by_name:
            label = f"{AUTO}: {rec} (recommended)"
        out.append((by_name[n], label))
    return out[:MAX_RELIABILITY_PANELS]


@substitute_docstring(entries=_DOCS)
def plot_recommended_reliability(rows, y_test, path, title=None, n_bins=10):
    """Small multiples of reliability diagrams: uncalibrated, recommended, within noise.

    One panel per method (the uncalibrated model, the method AutoCalibrator
    recommends -- AutoCalibrator's own ``auto`` row, labelled
    ``auto: <method> (recommended)``, where that method has no row -- and the
    methods within noise of it by the table's NLL ``*`` rule, ``auto``
    included, at most :data:`MAX_RELIABILITY_PANELS` panels), each a top-label
    reliability diagram with equal-width bins, 95% Wilson intervals per bin,
    the number of test rows of each bin written under the axis, and the
    method's test NLL and ECE in its title.

    Parameters
    ----------
    rows : list of dict
        Rows of one data set from ``run_benchmark(..., keep_proba=True,
        recommend=True)``.
    y_test : ndarray of shape (n_samples,)
    %(png_bins_returns)s
    """
    panels = [(label, r["proba"], r["nll"], r["ece"], r["method"] == "uncalibrated")
              for r, label in _shown_panels(rows)]
    return plot_reliability_panels(panels, y_test, path, title, n_bins)


@substitute_docstring(entries=_DOCS)
def plot_reliability_panels(panels, y, path, title=None, n_bins=10):
    """Small multiples of top-label reliability diagrams, one panel per model.

    The figure of :func:`plot_recommended_reliability` and of ``skcal report``:
    up to 3 panels per row, each a top-label reliability diagram
    (:class:`~skcal.display.ReliabilityDisplay`) with equal-width bins, 95%
    Wilson intervals per bin, a histogram of the rows per bin (log scale,
    each bar labelled with its count) under it, and the model's NLL and ECE
    in its title; the histograms share one scale.

    Parameters
    ----------
    panels : list of tuple
        ``(label, proba, nll, ece, uncalibrated)`` per panel: ``proba`` of
        shape (n_samples, n_classes), its columns the classes ``0..K-1``;
        ``uncalibrated`` True draws it grey.
    y : array-like of shape (n_samples,)
        Labels, column indices of ``proba``.
    %(png_bins_returns)s
    """
    from ..display import ReliabilityDisplay

    n_cols = min(max(len(panels), 1), 3)  # more panels wrap onto a second row
    n_rows = -(-max(len(panels), 1) // n_cols)
    fig = _figure((3.3 * n_cols, 4.3 * n_rows))
    axes = np.atleast_1d(fig.subplots(2 * n_rows, n_cols, sharex=True,
                                      height_ratios=[3, 1] * n_rows, squeeze=False))
    for k in range(len(panels), n_rows * n_cols):  # unused cells of the last row
        axes[2 * (k // n_cols), k % n_cols].set_visible(False)
        axes[2 * (k // n_cols) + 1, k % n_cols].set_visible(False)
    y = np.asarray(y)
    top, hists = 1, []
    for i, (label, proba, nll, ece, uncalibrated) in enumerate(panels):
        j = i % n_cols
        ax, hax = axes[2 * (i // n_cols), j], axes[2 * (i // n_cols) + 1, j]
        color = "0.35" if uncalibrated else "tab:blue"
        disp = ReliabilityDisplay.from_predictions(
            y, proba, kind="top-label", n_bins=n_bins,
            labels=np.arange(proba.shape[1]), ax=ax, interval="wilson",
            color=color, markersize=4, name=label,
        )
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        ax.set_title(f"{label}\nNLL {nll:.4f}, ECE {100 * ece:.1f}%", fontsize=9)
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="")
        if j:
            ax.set_ylabel("")
        edges = np.asarray(disp.bin_edges, dtype=float)
        counts = np.zeros(edges.shape[0] - 1, dtype=np.int64)
        counts[disp.bin_index] = disp.bin_count
        bars = hax.bar(edges[:-1], counts, width=np.diff(edges), align="edge",
                       color=color, alpha=0.35, edgecolor="white")
        # vertical: 15 bins of a 3.3-inch panel leave no room for 3-4 digits side by side
        hax.bar_label(bars, labels=[str(c) if c else "" for c in counts], fontsize=6,
                      padding=1, rotation=90)
        hax.set_yscale("log")
        top = max(top, counts.max())
        # every histogram keeps its confidence ticks (sharex would show only
        # the bottom row's, leaving a panel above an empty cell without any)
        hax.xaxis.set_tick_params(labelbottom=True)
        hax.set_xlabel("confidence", fontsize=9)
        hax.set_ylabel("rows" if j == 0 else "", fontsize=9)
        hists.append(hax)
    for hax in hists:  # one row-count scale, so that panels compare
        hax.set_ylim(0.8, top * 60)  # head room for the vertical counts (log scale)
    return _save(fig, path, title)


@substitute_docstring(entries=_DOCS)
def plot_nll_change(rows, path, title=None):
    """Ranked interval plot of each method's test NLL change against uncalibrated.

    Parameters
    ----------
    rows : list of dict
        Rows of one data set after :func:`add_uncalibrated_comparison`.
    %(png_returns)s

    Notes
    -----
    Every method of the table appears, one per y tick, sorted by the change
    (best at the top): a horizontal 95% paired bootstrap interval with its
    point, red where worse beyond noise (the interval lies above 0 and the
    change is at least ``NLL_CHANGE_RESOLUTION``: :func:`nll_change_side`),
    blue where better beyond noise, grey otherwise. The uncalibrated model is the
    black reference point at 0. A method without an interval (no test
    probabilities, no resamples, or an undefined bootstrap) is a hollow point
    labelled "no interval"; a method with an infinite test NLL (a true class
    got probability 0) is at the bottom, a red arrow at the right edge
    labelled "NLL inf". Methods without a test NLL (skipped, not installed,
    failed) are named in a footnote under the axis.
    """
    shown = [r for r in rows if not math.isnan(r.get("nll_change", math.nan))]
    missing = [r["method"] for r in rows
               if math.isnan(r.get("nll_change", math.nan))]
    shown.sort(key=lambda r: -r["nll_change"])  # an infinite change first (at the bottom)
    footnote = ""
    if missing:
        footnote = "\n" + textwrap.fill(
            "Not drawn (no test NLL; see the table's note): " + ", ".join(missing), 90)
    fig = _figure((6.4, 0.9 + 0.28 * max(len(shown), 1) + 0.15 * footnote.count("\n")))
    ax = fig.subplots()
    ends = [0.0]
    for r in shown:
        ends += [v for v in (r["nll_change"], r.get("nll_change_low", math.nan),
                             r.get("nll_change_high", math.nan)) if np.isfinite(v)]
    left, right = min(ends), max(ends)
    span = (right - left) or 1e-3
    inf_rows = any(math.isinf(r["nll_change"]) for r in shown)
    left, right = left - 0.05 * span, right + (0.3 if inf_rows else 0.05) * span
    for i, r in enumerate(shown):
        change = r["nll_change"]
        if math.isinf(change):  # a true class got probability 0
            ax.annotate("NLL inf", (right, i), xytext=(-34, 0),
                        textcoords="offset points", color="tab:red", fontsize=8,
                        va="center", ha="right",
                        arrowprops=dict(arrowstyle="->", color="tab:red"))
            continue
        if r["method"] == "uncalibrated":
            ax.plot([change], [i], "D", color="black", markersize=4)
            ax.annotate("reference", (change, i), xytext=(6, 0), fontsize=7,
                        textcoords="offset points", va="center", color="0.25")
            continue
        lo, hi = r.get("nll_change_low", math.nan), r.get("nll_change_high", math.nan)
        if not (np.isfinite(lo) and np.isfinite(hi)):
            ax.plot([change], [i], "o", markerfacecolor="white", color="0.45",
                    markersize=5)
            ax.annotate("no interval", (change, i), xytext=(6, 0), fontsize=7,
                        textcoords="offset points", va="center", color="0.35")
            continue
        side = nll_change_side(change, lo, hi)
        color = "tab:red" if side == 1 else "tab:blue" if side == -1 else "0.45"
        ax.plot([lo, hi], [i, i], color=color, linewidth=2.2, solid_capstyle="butt")
        ax.plot([change], [i], "o", color=color, markersize=4)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_xlim(left, right)
    ax.set_ylim(-0.6, len(shown) - 0.4)
    ax.set_yticks(range(len(shown)), [r["method"] for r in shown], fontsize=8)
    ax.set_xlabel("test NLL change vs uncalibrated (nats; < 0 is better)" + footnote,
                  fontsize=9)
    ax.grid(axis="x", linestyle=":", alpha=0.6)
    return _save(fig, path, title, ax)


@substitute_docstring(entries=_DOCS)
def plot_win_rates(summary, path, title=None):
    """Win rates across data sets against uncalibrated and against temperature scaling.

    Parameters
    ----------
    summary : list of dict
        Output of :func:`summarize`.
    %(png_returns)s

    Notes
    -----
    Every method of ``summary``, top to bottom in its order (that of
    :func:`format_summary`'s table), with its two win rates as markers with
    their 95% bootstrap intervals over data sets: against the uncalibrated
    model (blue) and against temperature scaling (orange). A comparison of a
    method with itself has no marker: ``uncalibrated`` shows only its win
    rate against temperature scaling, ``temperature`` only the one against
    the uncalibrated model.
    """
    shown = list(summary)
    at = np.arange(len(shown))[::-1]  # the first row at the top
    fig = _figure((6.4, 1.2 + 0.3 * max(len(shown), 1)))
    ax = fig.subplots()
    for key, color, dy, label in (("win_rate_vs_uncalibrated", "tab:blue", 0.14,
                                   "vs uncalibrated"),
                                  ("win_rate_vs_temperature", "tab:orange", -0.14,
                                   "vs temperature")):
        labelled = False
        for y, s in zip(at, shown):
            v, lo, hi = s[key], s[f"{key}_low"], s[f"{key}_high"]
            if not np.isfinite(v):
                continue
            ax.plot([100 * lo, 100 * hi], [y + dy, y + dy], color=color, linewidth=2,
                    alpha=0.6)
            ax.plot([100 * v], [y + dy], "o", color=color, markersize=4,
                    label=None if labelled else label)
            labelled = True
    ax.axvline(50, color="0.5", linewidth=0.8, linestyle="--")
    ax.set_yticks(at, [s["method"] for s in shown], fontsize=8)
    ax.set_ylim(-0.5, len(shown) - 0.5)  # room for the markers beside the end ticks
    ax.set_xlim(-2, 102)
    ax.set_xlabel(f"win rate over {max((s['n_datasets'] for s in summary), default=0)} "
                  "data sets, % (lower test NLL; 95% bootstrap over sets)", fontsize=9)
    fig.legend(loc="outside upper center", ncol=2, fontsize=8, frameon=False)
    return _save(fig, path, title, ax)


def _aligned(headers, cells, left, fmt):
    """The header, rule and cell lines of a table: GitHub Markdown, or text
    columns left-aligned at the indices ``left`` and right-aligned elsewhere."""
    if fmt == "markdown":
        rule = ["---" if i in left else "---:" for i in range(len(headers))]
        return ["| " + " | ".join(c) + " |" for c in (headers, rule, *cells)]
    widths = [max([len(h), *(len(c[i]) for c in cells)]) for i, h in enumerate(headers)]

    def line(c):
        return "  ".join(x.ljust(widths[i]) if i in left else x.rjust(widths[i])
                         for i, x in enumerate(c)).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *map(line, cells)]


def _write_rows(rows, path, columns):
    """The ``columns`` of ``rows`` as CSV: NaN an empty cell, a float its repr."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ("" if math.isnan(v) else repr(float(v)))
                             if isinstance(v, (float, np.floating)) else v
                             for k, v in r.items() if k in columns})
