"""Reliability diagrams in scikit-learn's Display style."""

import inspect
import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._backend._array import to_numpy
from ..metrics import reliability_curve, smooth_reliability_curve
from ..utils._docstrings import substitute_docstring
from ..utils._params import store_params

__all__ = ["ReliabilityDisplay"]

_DIAGONAL_GID = "skcal-perfect-calibration"
_CURVE_GID = "skcal-reliability-curve"
_MARKERS = ("s", "o", "^", "D", "v", "P", "X", "*")
#: The fields of :func:`~skcal.metrics.reliability_curve` a display takes.
_CURVE_FIELDS = ("prob_true", "prob_pred", "bin_weight", "bin_edges", "bin_index",
                 "prob_true_low", "prob_true_high", "bin_count")


#: The parameters ``from_predictions`` and ``from_estimator`` share, documented once.
_DOCS = {
    "kind": """\
kind : {"top-label", "classwise", "binary"}, default="top-label"
    Top-label confidence, one column (``class_index``), or the positive class
    of a binary problem; the names of :func:`~skcal.metrics.calibration_error`
    (``"class"`` is another name for ``"classwise"``). ``"classwise"`` without
    ``class_index`` draws a grid: one diagram for each of the
    ``n_classes_shown`` most frequent true classes. A 1-D ``y_prob`` (the
    probability of the positive class) is also drawn top-label by default, as
    the confidence ``max(p, 1 - p)`` against the accuracy; the view of
    scikit-learn's :class:`~sklearn.calibration.CalibrationDisplay` (the
    fraction of positives against ``p``) is ``kind="binary"``.
class_index : int, default=None
    Column shown for ``kind="classwise"`` (for :meth:`from_estimator`,
    an index into ``estimator.classes_``).""",
    "bins": """\
n_bins : int, default=15
    Number of bins.
strategy : {"uniform", "quantile"}, default="uniform"
    Equal-width or equal-mass bins.
sample_weight : array-like of shape (n_samples,), default=None
    Sample weights.""",
    "band": """\
n_bootstrap : int, default=0
    If > 0, draw a bootstrap confidence band with this many resamples.
confidence_level : float, default=0.95
    Coverage of the band.
random_state : int, RandomState instance or None, default=None
    Seed of the bootstrap.
interval : {"clopper-pearson", "wilson", "jeffreys"}, default=None
    Draw the band from per-bin binomial intervals instead
    (:func:`~skcal.metrics.binomial_interval`); unlike a bootstrap
    band it keeps its width on bins whose outcomes are all 0 or 1.
smooth : bool, default=False
    Draw the smoothed reliability curve of Błasiok & Nakkiran
    (:func:`~skcal.metrics.smooth_reliability_curve`, bandwidth of the smooth
    ECE) as the line, and the bins as markers; the legend label gets the
    smooth ECE. The line is drawn only between the smallest and largest score,
    where it averages about 10 rows or more (a kernel density of the scores of
    at least ``10 / (2 * bandwidth * n_samples)``), so it may have gaps or
    stop short of 0 and 1; the bin markers and the smooth ECE use every sample.
n_classes_shown : int, default=4
    Size of the class grid (``kind="classwise"`` without
    ``class_index``).""",
    "drawing": """\
ref_line : bool, default=True
    Draw the perfect-calibration diagonal.
ax : matplotlib.axes.Axes, default=None
    Axes to draw on. For a class grid: an array of at least
    ``n_classes_shown`` axes (e.g. from ``plt.subplots``), or None (new figure).
show_histogram : bool, default=False
    Add a panel with the fraction of samples per bin.
hist_ax : matplotlib.axes.Axes, default=None
    Axes for that panel.
show_counts : bool, default=False
    Write the number of samples of each bin.
**kwargs : dict
    Passed to :meth:`matplotlib.axes.Axes.plot`.""",
}


def _check_matplotlib(caller):
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{caller} requires matplotlib: pip install 'skcal[plot]'."
        ) from exc
    return plt


#: Rows the smoothed reliability curve must average (about) to be drawn.
SMOOTH_MIN_ROWS = 10


class ReliabilityDisplay:
    """Reliability diagram: observed frequency against mean predicted probability.

    Create it with :meth:`from_estimator` or :meth:`from_predictions`; both
    compute the points with :func:`skcal.metrics.reliability_curve` (the
    same bins as :func:`skcal.metrics.calibration_error`) and call
    :meth:`plot`. Pass the same ``ax`` to several calls to compare
    calibrators on one axes. Nothing is ever written to disk.

    Parameters
    ----------
    prob_true : ndarray of shape (n_nonempty,)
        Observed frequency (accuracy for top-label) per non-empty bin.
    prob_pred : ndarray of shape (n_nonempty,)
        Mean predicted probability (confidence) per non-empty bin.
    bin_weight : ndarray of shape (n_nonempty,), default=None
        Fraction of the total sample weight per bin (for the histogram).
    bin_edges : ndarray of shape (n_bins_effective + 1,), default=None
        Edges of all bins (for the histogram).
    bin_index : ndarray of shape (n_nonempty,), default=None
        Position of each non-empty bin among all bins (for the histogram).
    prob_true_low, prob_true_high : ndarray of shape (n_nonempty,), default=None
        A confidence band for ``prob_true`` (the binomial or bootstrap
        interval of :func:`~skcal.metrics.reliability_curve`), drawn when
        given.
    estimator_name : str, default=None
        Legend label of the curve.
    kind : {"top-label", "classwise", "binary"}, default="top-label"
        What the curve shows; only changes the axis labels. ``"class"`` is
        another name for ``"classwise"``.
    class_label : object, default=None
        The class shown when ``kind`` is ``"classwise"`` or ``"binary"``.
    bin_count : ndarray of shape (n_nonempty,), default=None
        Number of samples per bin (written on the diagram with
        ``show_counts=True``).
    smooth_x, smooth_prob_true : ndarray of shape (n_points,), default=None
        A smoothed reliability curve
        (:func:`~skcal.metrics.smooth_reliability_curve`); when given it is
        drawn as the line and the bins as unconnected markers. NaN values are
        not drawn (``from_predictions(smooth=True)`` sets them outside the
        scores' range and where the curve averages fewer than about 10 rows).

    Attributes
    ----------
    line_ : matplotlib.lines.Line2D
        The reliability curve (the smoothed one when given).
    points_ : matplotlib.lines.Line2D or None
        The bin markers, when a smoothed curve is the line.
    count_texts_ : list of matplotlib.text.Text
        The bin counts written with ``show_counts=True``.
    ax_ : matplotlib.axes.Axes
        Axes of the curve.
    figure_ : matplotlib.figure.Figure
        Figure holding ``ax_``.
    ref_line_ : matplotlib.lines.Line2D or None
        The perfect-calibration diagonal (shared by all curves on ``ax_``).
    band_ : matplotlib.collections.PolyCollection or None
        The confidence band, when one is drawn.
    interval_bars_ : matplotlib.collections.LineCollection or None
        Each bin's interval as a vertical bar, drawn with the band (the band
        alone tapers to nothing at an isolated bin).
    hist_ax_ : matplotlib.axes.Axes or None
        Axes of the histogram of bin weights, when shown.
    hist_ : matplotlib.container.BarContainer or None
        Bars of the histogram, when shown (heights = ``bin_weight``).
    displays_ : list of ReliabilityDisplay
        Only on the display returned by a class grid
        (``from_predictions(kind="classwise")`` without ``class_index``):
        one display per class drawn, this one first.
    axes_ : ndarray of matplotlib.axes.Axes
        Only on a class grid: the grid's axes.

    See Also
    --------
    skcal.metrics.reliability_curve : The plotted data.
    sklearn.calibration.CalibrationDisplay : The binary-only scikit-learn view.

    References
    ----------
    .. [1] M. H. DeGroot and S. E. Fienberg, "The Comparison and Evaluation
       of Forecasters", The Statistician 32, 1983.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On Calibration of
       Modern Neural Networks", ICML 2017.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skcal.display import ReliabilityDisplay
    >>> y_true = [0, 1, 1, 0, 1]
    >>> y_prob = [[0.9, 0.1], [0.2, 0.8], [0.4, 0.6], [0.3, 0.7], [0.5, 0.5]]
    >>> disp = ReliabilityDisplay.from_predictions(y_true, y_prob, n_bins=5)
    >>> disp.line_.get_xdata().tolist()
    [0.55, 0.75, 0.9]
    """

    def __init__(
        self,
        prob_true,
        prob_pred,
        *,
        bin_weight=None,
        bin_edges=None,
        bin_index=None,
        prob_true_low=None,
        prob_true_high=None,
        estimator_name=None,
        kind="top-label",
        class_label=None,
        bin_count=None,
        smooth_x=None,
        smooth_prob_true=None,
    ):
        store_params(self, locals())

    def plot(
        self,
        ax=None,
        *,
        name=None,
        ref_line=True,
        show_histogram=False,
        hist_ax=None,
        show_counts=False,
        **kwargs,
    ):
        """Draw the diagram.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on; a new figure and axes are created when None.
            Reuse an axes to overlay several calibrators: each curve on the
            same axes gets the next marker of ``("s", "o", "^", "D", "v",
            "P", "X", "*")`` unless ``marker`` is passed.
        name : str, default=None
            Legend label; defaults to ``estimator_name``, else to
            ``"calibration curve (top-label)"`` or ``"calibration curve
            (class <class_label>)"``.
        ref_line : bool, default=True
            Draw the perfect-calibration diagonal (once per axes).
        show_histogram : bool, default=False
            Also draw the fraction of samples per bin as bars in a panel
            below ``ax`` (or in ``hist_ax``), on the same x-range as ``ax``.
        hist_ax : matplotlib.axes.Axes, default=None
            Axes for the histogram; by default a new panel is appended below
            ``ax``. Pass the ``hist_ax_`` of a previous display to stack
            histograms of several calibrators in one panel.
        show_counts : bool, default=False
            Write the number of samples of each bin: above the histogram bars
            when the histogram is shown, otherwise next to the markers.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the curve.

        Returns
        -------
        display : ReliabilityDisplay
            ``self``, with ``line_``, ``ax_``, ``figure_`` and the other
            drawn artists set.

        Raises
        ------
        ValueError
            If ``show_histogram`` is set but the display was built without
            ``bin_weight``, ``bin_edges`` and ``bin_index``, or
            ``show_counts`` without ``bin_count``.
        """
        plt = _check_matplotlib("ReliabilityDisplay.plot")
        if show_histogram and (
            self.bin_weight is None or self.bin_edges is None or self.bin_index is None
        ):
            raise ValueError(
                "show_histogram=True needs bin_weight, bin_edges and bin_index."
            )
        if show_counts and self.bin_count is None:
            raise ValueError("show_counts=True needs bin_count.")
        if ax is None:
            _, ax = plt.subplots()
        if self.kind == "top-label":
            shown = " (top-label)"
            xlabel, ylabel = "Confidence (mean top-label probability)", "Accuracy"
        else:
            shown = "" if self.class_label is None else f" (class {self.class_label})"
            xlabel = f"Mean predicted probability{shown}"
            ylabel = f"Fraction of positives{shown}"
        name = self.estimator_name if name is None else name
        if name is None:  # the curve still gets a legend entry, naming what it shows
            name = f"calibration curve{shown}"

        self.ref_line_ = None
        if ref_line:
            existing = [ln for ln in ax.get_lines() if ln.get_gid() == _DIAGONAL_GID]
            self.ref_line_ = (existing or ax.plot(
                [0, 1], [0, 1], "k:", label="Perfectly calibrated", gid=_DIAGONAL_GID,
            ))[0]
        n_curves = sum(1 for ln in ax.get_lines() if ln.get_gid() == _CURVE_GID)
        marker = kwargs.pop("marker", _MARKERS[n_curves % len(_MARKERS)])
        smooth = self.smooth_x is not None and self.smooth_prob_true is not None
        (self.line_,) = ax.plot(
            *((self.smooth_x, self.smooth_prob_true) if smooth
              else (self.prob_pred, self.prob_true)),
            **{"gid": _CURVE_GID, "label": name,
               **({} if smooth else {"marker": marker}), **kwargs},
        )
        color = self.line_.get_color()
        self.points_ = ax.plot(
            self.prob_pred, self.prob_true, linestyle="none", marker=marker,
            markerfacecolor="none", color=color, alpha=0.8,
        )[0] if smooth else None

        self.band_ = self.interval_bars_ = None
        if self.prob_true_low is not None and self.prob_true_high is not None:
            band = (self.prob_pred, self.prob_true_low, self.prob_true_high)
            self.band_ = ax.fill_between(*band, color=color, alpha=0.2, linewidth=0)
            # each bin's interval as a bar too: the band between bins tapers to
            # nothing at an isolated bin (one row at 0 or 1 would look certain)
            self.interval_bars_ = ax.vlines(*band, color=color, alpha=0.5, linewidth=1)

        ax.set(xlabel=xlabel, ylabel=ylabel, xlim=(-0.02, 1.02), ylim=(-0.02, 1.02))
        if ax.get_legend_handles_labels()[1]:
            ax.legend(loc="upper left", fontsize="small")

        self.hist_ax_ = self.hist_ = None
        self.count_texts_ = []
        if show_histogram:
            if hist_ax is None:
                from mpl_toolkits.axes_grid1 import make_axes_locatable

                hist_ax = make_axes_locatable(ax).append_axes(
                    "bottom", size="30%", pad=0.1, sharex=ax
                )
                ax.set_xlabel("")
                ax.tick_params(labelbottom=False)
            edges = np.asarray(self.bin_edges, dtype=float)
            idx = np.asarray(self.bin_index)
            self.hist_ = hist_ax.bar(
                edges[idx], self.bin_weight, width=np.diff(edges)[idx],
                align="edge", color=color, alpha=0.35, edgecolor=color,
                label=name,
            )
            hist_ax.set(xlabel=xlabel, ylabel="Fraction of samples",
                        xlim=ax.get_xlim())
            if show_counts:
                self.count_texts_ = list(hist_ax.bar_label(
                    self.hist_, labels=[str(int(c)) for c in self.bin_count],
                    fontsize=6, color=color, rotation=90, padding=1,
                ))
                hist_ax.set_ylim(0, max(hist_ax.get_ylim()[1],
                                        1.35 * float(np.max(self.bin_weight))))
            self.hist_ax_ = hist_ax
        elif show_counts:
            self.count_texts_ = [
                ax.annotate(str(int(c)), (x, y), xytext=(3, -9),
                            textcoords="offset points", fontsize=6, color=color)
                for x, y, c in zip(self.prob_pred, self.prob_true, self.bin_count)
            ]

        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    @substitute_docstring(entries=_DOCS)
    def from_predictions(
        cls,
        y_true,
        y_prob,
        *,
        kind="top-label",
        class_index=None,
        n_bins=15,
        strategy="uniform",
        sample_weight=None,
        input_type="probabilities",
        labels=None,
        pos_label=None,
        n_bootstrap=0,
        confidence_level=0.95,
        random_state=None,
        interval=None,
        smooth=False,
        n_classes_shown=4,
        name=None,
        ref_line=True,
        ax=None,
        show_histogram=False,
        hist_ax=None,
        show_counts=False,
        **kwargs,
    ):
        """Reliability diagram from true labels and predicted probabilities.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True labels.
        y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
            Probabilities (or logits with ``input_type="logits"``); a
            ``torch.Tensor`` is accepted.
        %(kind)s
        %(bins)s
        input_type : {"probabilities", "logits"}, default="probabilities"
            How to read ``y_prob``.
        labels : array-like of shape (n_classes,), default=None
            Class of each column (see :func:`~skcal.metrics.reliability_curve`).
        pos_label : int, float, bool or str, default=None
            Positive class of ``kind="binary"`` or a 1-D ``y_prob``; required
            (or ``labels``) when the labels are not {0, 1}, {-1, 1} or
            booleans (see :func:`~skcal.metrics.reliability_curve`).
        %(band)s
        name : str, default=None
            Legend label (see :meth:`plot` for the default).
        %(drawing)s

        Returns
        -------
        display : ReliabilityDisplay
            For a class grid, the display of the first class, with
            ``displays_`` and ``axes_``.

        Raises
        ------
        ValueError
            As :func:`skcal.metrics.reliability_curve`, and for an invalid
            ``n_classes_shown`` or a class grid with ``hist_ax``.
        """
        if kind in ("classwise", "class") and class_index is None:
            return cls._class_grid(
                y_true, y_prob, n_classes_shown=n_classes_shown, ax=ax,
                hist_ax=hist_ax, kwargs=dict(
                    labels=labels, input_type=input_type, sample_weight=sample_weight,
                    n_bins=n_bins, strategy=strategy, n_bootstrap=n_bootstrap,
                    confidence_level=confidence_level, random_state=random_state,
                    interval=interval, smooth=smooth, name=name, ref_line=ref_line,
                    show_histogram=show_histogram, show_counts=show_counts, **kwargs,
                ),
            )
        event = dict(kind=kind, class_index=class_index, sample_weight=sample_weight,
                     input_type=input_type, labels=labels, pos_label=pos_label)
        curve = reliability_curve(
            y_true, y_prob, **event, n_bins=n_bins, strategy=strategy,
            n_bootstrap=n_bootstrap, confidence_level=confidence_level,
            random_state=random_state, interval=interval,
        )
        smooth_x = smooth_prob_true = None
        if smooth:
            sm = smooth_reliability_curve(y_true, y_prob, **event)
            # Drawn where it averages SMOOTH_MIN_ROWS rows or more (about
            # n * density(t) * 2 * bandwidth rows lie within one bandwidth of t),
            # from the mesh point at or below the smallest score to the one at or
            # above the largest (a wide kernel's tails pass the density rule there).
            lo, hi = sm.score_range
            step = sm.x[1] - sm.x[0]
            floor = SMOOTH_MIN_ROWS / (2.0 * sm.bandwidth * max(int(len(y_true)), 1))
            shown = (sm.density >= floor) & (sm.x > lo - step) & (sm.x < hi + step)
            smooth_x, smooth_prob_true = sm.x, np.where(shown, sm.prob_true, np.nan)
            label = f"smECE {100 * sm.smooth_ece:.2f}%"
            name = label if name is None else f"{name} ({label})"
        class_label = None
        if kind == "binary" and pos_label is not None:
            class_label = pos_label
        elif kind != "top-label":
            column = 1 if kind == "binary" else class_index
            class_label = column if labels is None else np.asarray(labels)[column]
        return cls(
            **{key: curve.get(key) for key in _CURVE_FIELDS},
            estimator_name=name,
            kind=kind,
            class_label=class_label,
            smooth_x=smooth_x,
            smooth_prob_true=smooth_prob_true,
        ).plot(
            ax=ax, ref_line=ref_line, show_histogram=show_histogram,
            hist_ax=hist_ax, show_counts=show_counts, **kwargs,
        )

    @classmethod
    def _class_grid(cls, y_true, y_prob, *, n_classes_shown, ax, hist_ax, kwargs):
        """One diagram per most frequent class of ``y_true``, on a grid of axes
        (``kwargs``: the other arguments of :meth:`from_predictions`)."""
        from ..metrics._validation import _check_inputs

        plt = _check_matplotlib("ReliabilityDisplay.from_predictions")
        if isinstance(n_classes_shown, bool) or not isinstance(
                n_classes_shown, numbers.Integral) or n_classes_shown < 1:
            raise ValueError(
                f"n_classes_shown must be an integer >= 1, got {n_classes_shown!r}."
            )
        if hist_ax is not None:
            raise ValueError("A class grid draws its own histogram panels; "
                             "pass class_index to use hist_ax.")
        inp = _check_inputs(y_true, y_prob, sample_weight=kwargs["sample_weight"],
                            input_type=kwargs["input_type"], labels=kwargs["labels"])
        n_classes = 2 if inp.binary_1d else inp.scores.shape[1]
        freq = np.bincount(to_numpy(inp.y), minlength=n_classes)
        shown = np.argsort(-freq, kind="stable")[: min(int(n_classes_shown), n_classes)]
        if ax is None:
            ncols = min(len(shown), 4)
            nrows = -(-len(shown) // ncols)
            _, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.9 * nrows),
                                   squeeze=False)
        else:
            axes = np.atleast_1d(np.asarray(ax, dtype=object))
            if axes.size < len(shown):
                raise ValueError(
                    f"ax holds {axes.size} axes but {len(shown)} classes are shown."
                )
        flat = axes.reshape(-1)
        displays = [
            cls.from_predictions(y_true, y_prob, kind="classwise", class_index=int(k),
                                 ax=flat[i], **kwargs)
            for i, k in enumerate(shown)
        ]
        for extra in flat[len(shown):]:
            extra.set_visible(False)
        ncols = axes.shape[-1] if axes.ndim > 1 else flat.size
        for i, d in enumerate(displays):
            d.ax_.set_title(f"class {d.class_label} (n={int(freq[shown[i]])})",
                            fontsize="medium")
            if i % ncols:  # y labels on the first column only
                d.ax_.set_ylabel("")
                if d.hist_ax_ is not None:
                    d.hist_ax_.set_ylabel("")
            elif d.hist_ax_ is not None:
                d.hist_ax_.set_ylabel("Fraction")
        first = displays[0]
        first.displays_, first.axes_ = displays, axes
        first.figure_.tight_layout()
        return first

    @classmethod
    @substitute_docstring(entries=_DOCS)
    def from_estimator(cls, estimator, X, y, *, name=None, **kwargs):
        """Reliability diagram of a fitted classifier or calibrator.

        Uses ``estimator.predict_proba(X)`` with the column order
        ``estimator.classes_``; every keyword but ``input_type`` and
        ``labels`` is that of :meth:`from_predictions`.

        Parameters
        ----------
        estimator : fitted classifier
            Any estimator with ``predict_proba`` and ``classes_`` (a skcal
            calibrator, a scikit-learn classifier, a pipeline).
        X : array-like of shape (n_samples, n_features)
            Input of ``predict_proba`` (logits for a skcal calibrator).
        y : array-like of shape (n_samples,)
            True labels.
        %(kind)s
        %(bins)s
        pos_label : int, float, bool or str, default=None
            Positive class of ``kind="binary"`` (default ``classes_[1]``).
        %(band)s
        name : str, default=None
            Legend label; defaults to the estimator's class name.
        %(drawing)s

        Returns
        -------
        display : ReliabilityDisplay

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If ``estimator`` is not fitted.
        TypeError
            If ``input_type`` or ``labels`` is passed (they come from the
            estimator).
        ValueError
            As :func:`skcal.metrics.reliability_curve`.
        """
        _check_matplotlib("ReliabilityDisplay.from_estimator")
        for key in _FROM_ESTIMATOR_SETS:
            if key in kwargs:
                raise TypeError(
                    f"from_estimator takes no {key}=: the probabilities of "
                    "estimator.predict_proba, columns in estimator.classes_ order, "
                    "are used; call from_predictions to pass it."
                )
        check_is_fitted(estimator)
        if not hasattr(estimator, "predict_proba"):
            raise ValueError(
                f"{type(estimator).__name__} has no predict_proba method."
            )
        y_prob = estimator.predict_proba(X)
        name = type(estimator).__name__ if name is None else name
        return cls.from_predictions(
            y, y_prob, labels=getattr(estimator, "classes_", None), name=name, **kwargs
        )


#: The keywords of ``from_predictions`` that ``from_estimator`` sets itself.
_FROM_ESTIMATOR_SETS = ("input_type", "labels")


def _estimator_signature():
    """``from_estimator``'s signature: (estimator, X, y), ``from_predictions``' keywords."""
    sig = inspect.signature(ReliabilityDisplay.from_predictions.__func__)
    P = inspect.Parameter
    head = [P(name, P.POSITIONAL_OR_KEYWORD) for name in ("cls", "estimator", "X", "y")]
    rest = [p for p in sig.parameters.values()
            if p.kind in (P.KEYWORD_ONLY, P.VAR_KEYWORD)
            and p.name not in _FROM_ESTIMATOR_SETS]
    return sig.replace(parameters=head + rest)


ReliabilityDisplay.from_estimator.__func__.__signature__ = _estimator_signature()
