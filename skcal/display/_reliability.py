"""Reliability diagrams in scikit-learn's Display style."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..metrics import reliability_curve

__all__ = ["ReliabilityDisplay"]

_DIAGONAL_GID = "skcal-perfect-calibration"


def _check_matplotlib(caller):
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{caller} requires matplotlib: pip install 'skcal[plot]'."
        ) from exc
    return plt


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
        A confidence band for ``prob_true`` (e.g. the bootstrap interval of
        :func:`~skcal.metrics.reliability_curve`), drawn when given.
    estimator_name : str, default=None
        Legend label of the curve.
    kind : {"top-label", "classwise", "binary"}, default="top-label"
        What the curve shows; only changes the axis labels. ``"class"`` is
        another name for ``"classwise"``.
    class_label : object, default=None
        The class shown when ``kind`` is ``"classwise"`` or ``"binary"``.

    Attributes
    ----------
    line_ : matplotlib.lines.Line2D
        The reliability curve.
    ax_ : matplotlib.axes.Axes
        Axes of the curve.
    figure_ : matplotlib.figure.Figure
        Figure holding ``ax_``.
    ref_line_ : matplotlib.lines.Line2D or None
        The perfect-calibration diagonal (shared by all curves on ``ax_``).
    band_ : matplotlib.collections.PolyCollection or None
        The confidence band, when one is drawn.
    hist_ax_ : matplotlib.axes.Axes or None
        Axes of the histogram of bin weights, when shown.
    hist_ : matplotlib.container.BarContainer or None
        Bars of the histogram, when shown (heights = ``bin_weight``).

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
    ):
        self.prob_true = prob_true
        self.prob_pred = prob_pred
        self.bin_weight = bin_weight
        self.bin_edges = bin_edges
        self.bin_index = bin_index
        self.prob_true_low = prob_true_low
        self.prob_true_high = prob_true_high
        self.estimator_name = estimator_name
        self.kind = kind
        self.class_label = class_label

    def _axis_labels(self):
        if self.kind == "top-label":
            return "Confidence (mean top-label probability)", "Accuracy"
        c = "" if self.class_label is None else f" (class {self.class_label})"
        return f"Mean predicted probability{c}", f"Fraction of positives{c}"

    def plot(
        self,
        ax=None,
        *,
        name=None,
        ref_line=True,
        show_histogram=False,
        hist_ax=None,
        **kwargs,
    ):
        """Draw the diagram.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on; a new figure and axes are created when None.
            Reuse an axes to overlay several calibrators.
        name : str, default=None
            Legend label; defaults to ``estimator_name``.
        ref_line : bool, default=True
            Draw the perfect-calibration diagonal (once per axes).
        show_histogram : bool, default=False
            Also draw the fraction of samples per bin as bars in a panel
            below ``ax`` (or in ``hist_ax``).
        hist_ax : matplotlib.axes.Axes, default=None
            Axes for the histogram; by default a new panel is appended below
            ``ax``. Pass the ``hist_ax_`` of a previous display to stack
            histograms of several calibrators in one panel.
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
            ``bin_weight``, ``bin_edges`` and ``bin_index``.
        """
        plt = _check_matplotlib("ReliabilityDisplay.plot")
        if show_histogram and (
            self.bin_weight is None or self.bin_edges is None or self.bin_index is None
        ):
            raise ValueError(
                "show_histogram=True needs bin_weight, bin_edges and bin_index."
            )
        if ax is None:
            _, ax = plt.subplots()
        name = self.estimator_name if name is None else name

        self.ref_line_ = None
        if ref_line:
            existing = [ln for ln in ax.get_lines() if ln.get_gid() == _DIAGONAL_GID]
            if existing:
                self.ref_line_ = existing[0]
            else:
                (self.ref_line_,) = ax.plot(
                    [0, 1], [0, 1], "k:", label="Perfectly calibrated",
                    gid=_DIAGONAL_GID,
                )
        line_kwargs = {"marker": "s"}
        if name is not None:
            line_kwargs["label"] = name
        line_kwargs.update(kwargs)
        (self.line_,) = ax.plot(self.prob_pred, self.prob_true, **line_kwargs)
        color = self.line_.get_color()

        self.band_ = None
        if self.prob_true_low is not None and self.prob_true_high is not None:
            self.band_ = ax.fill_between(
                self.prob_pred, self.prob_true_low, self.prob_true_high,
                color=color, alpha=0.2, linewidth=0,
            )

        xlabel, ylabel = self._axis_labels()
        ax.set(xlabel=xlabel, ylabel=ylabel, xlim=(-0.02, 1.02), ylim=(-0.02, 1.02))
        if ax.get_legend_handles_labels()[1]:
            ax.legend(loc="upper left")

        self.hist_ax_ = None
        self.hist_ = None
        if show_histogram:
            if hist_ax is None:
                from mpl_toolkits.axes_grid1 import make_axes_locatable

                hist_ax = make_axes_locatable(ax).append_axes(
                    "bottom", size="30%", pad=0.5, sharex=ax
                )
            edges = np.asarray(self.bin_edges, dtype=float)
            idx = np.asarray(self.bin_index)
            self.hist_ = hist_ax.bar(
                edges[idx], self.bin_weight, width=np.diff(edges)[idx],
                align="edge", color=color, alpha=0.4, edgecolor=color,
                label=name,
            )
            hist_ax.set(xlabel=xlabel, ylabel="Fraction of samples")
            self.hist_ax_ = hist_ax

        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
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
        name=None,
        ref_line=True,
        ax=None,
        show_histogram=False,
        hist_ax=None,
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
        kind : {"top-label", "classwise", "binary"}, default="top-label"
            Top-label confidence, one column (``class_index``), or the
            positive class of a binary problem; the names of
            :func:`~skcal.metrics.calibration_error` (``"class"`` is another
            name for ``"classwise"``).
        class_index : int, default=None
            Column shown for ``kind="classwise"``.
        n_bins : int, default=15
            Number of bins.
        strategy : {"uniform", "quantile"}, default="uniform"
            Equal-width or equal-mass bins.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.
        input_type : {"probabilities", "logits"}, default="probabilities"
            How to read ``y_prob``.
        labels : array-like of shape (n_classes,), default=None
            Class of each column (see :func:`~skcal.metrics.reliability_curve`).
        pos_label : int, float, bool or str, default=None
            Positive class of ``kind="binary"`` or a 1-D ``y_prob``; required
            (or ``labels``) when the labels are not {0, 1}, {-1, 1} or
            booleans (see :func:`~skcal.metrics.reliability_curve`).
        n_bootstrap : int, default=0
            If > 0, draw a bootstrap confidence band with this many resamples.
        confidence_level : float, default=0.95
            Coverage of the band.
        random_state : int, RandomState instance or None, default=None
            Seed of the bootstrap.
        name : str, default=None
            Legend label.
        ref_line : bool, default=True
            Draw the perfect-calibration diagonal.
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on.
        show_histogram : bool, default=False
            Add a panel with the fraction of samples per bin.
        hist_ax : matplotlib.axes.Axes, default=None
            Axes for that panel.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot`.

        Returns
        -------
        display : ReliabilityDisplay

        Raises
        ------
        ValueError
            As :func:`skcal.metrics.reliability_curve`.
        """
        curve = reliability_curve(
            y_true, y_prob, kind=kind, class_index=class_index, n_bins=n_bins,
            strategy=strategy, sample_weight=sample_weight, input_type=input_type,
            labels=labels, pos_label=pos_label, n_bootstrap=n_bootstrap,
            confidence_level=confidence_level, random_state=random_state,
        )
        class_label = None
        if kind != "top-label":
            column = 1 if kind == "binary" else class_index
            if kind == "binary" and pos_label is not None:
                class_label = pos_label
            elif labels is not None:
                class_label = np.asarray(labels)[column]
            else:
                class_label = column
        disp = cls(
            prob_true=curve.prob_true,
            prob_pred=curve.prob_pred,
            bin_weight=curve.bin_weight,
            bin_edges=curve.bin_edges,
            bin_index=curve.bin_index,
            prob_true_low=curve.get("prob_true_low"),
            prob_true_high=curve.get("prob_true_high"),
            estimator_name=name,
            kind=kind,
            class_label=class_label,
        )
        return disp.plot(
            ax=ax, ref_line=ref_line, show_histogram=show_histogram,
            hist_ax=hist_ax, **kwargs,
        )

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        kind="top-label",
        class_index=None,
        n_bins=15,
        strategy="uniform",
        sample_weight=None,
        pos_label=None,
        n_bootstrap=0,
        confidence_level=0.95,
        random_state=None,
        name=None,
        ref_line=True,
        ax=None,
        show_histogram=False,
        hist_ax=None,
        **kwargs,
    ):
        """Reliability diagram of a fitted classifier or calibrator.

        Uses ``estimator.predict_proba(X)`` with the column order
        ``estimator.classes_``.

        Parameters
        ----------
        estimator : fitted classifier
            Any estimator with ``predict_proba`` and ``classes_`` (a skcal
            calibrator, a scikit-learn classifier, a pipeline).
        X : array-like of shape (n_samples, n_features)
            Input of ``predict_proba`` (logits for a skcal calibrator).
        y : array-like of shape (n_samples,)
            True labels.
        kind : {"top-label", "classwise", "binary"}, default="top-label"
            Top-label confidence, one column (``class_index``), or the
            positive class ``classes_[1]`` of a binary problem; the names of
            :func:`~skcal.metrics.calibration_error` (``"class"`` is another
            name for ``"classwise"``).
        class_index : int, default=None
            Column (index into ``classes_``) for ``kind="classwise"``.
        n_bins : int, default=15
            Number of bins.
        strategy : {"uniform", "quantile"}, default="uniform"
            Equal-width or equal-mass bins.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.
        pos_label : int, float, bool or str, default=None
            Positive class of ``kind="binary"`` (default ``classes_[1]``).
        n_bootstrap : int, default=0
            If > 0, draw a bootstrap confidence band with this many resamples.
        confidence_level : float, default=0.95
            Coverage of the band.
        random_state : int, RandomState instance or None, default=None
            Seed of the bootstrap.
        name : str, default=None
            Legend label; defaults to the estimator's class name.
        ref_line : bool, default=True
            Draw the perfect-calibration diagonal.
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on.
        show_histogram : bool, default=False
            Add a panel with the fraction of samples per bin.
        hist_ax : matplotlib.axes.Axes, default=None
            Axes for that panel.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot`.

        Returns
        -------
        display : ReliabilityDisplay

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If ``estimator`` is not fitted.
        ValueError
            As :func:`skcal.metrics.reliability_curve`.
        """
        _check_matplotlib("ReliabilityDisplay.from_estimator")
        check_is_fitted(estimator)
        if not hasattr(estimator, "predict_proba"):
            raise ValueError(
                f"{type(estimator).__name__} has no predict_proba method."
            )
        y_prob = estimator.predict_proba(X)
        name = type(estimator).__name__ if name is None else name
        return cls.from_predictions(
            y, y_prob, kind=kind, class_index=class_index, n_bins=n_bins,
            strategy=strategy, sample_weight=sample_weight,
            labels=getattr(estimator, "classes_", None), pos_label=pos_label,
            n_bootstrap=n_bootstrap,
            confidence_level=confidence_level, random_state=random_state,
            name=name, ref_line=ref_line, ax=ax, show_histogram=show_histogram,
            hist_ax=hist_ax, **kwargs,
        )
