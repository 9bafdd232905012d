"""Input validation shared by every skcal estimator (NumPy, torch and dask input).

All array checks of the package live here, so that every estimator raises the
same clear ``ValueError`` for the same problem; what depends on the array
library (conversion, reductions, the logs of probabilities) is done by the
kernel module of the input (:func:`skcal._backend._dispatch.get_backend`).
"""

import contextlib
import functools
import math
import numbers
import os
import sys
import warnings

import numpy as np
from sklearn.utils.validation import check_array

from .._backend._array import host_array, like_input, probability_log_dtype
from .._backend._dispatch import get_backend
from .._backend._numpy import FLOAT_DTYPES, min_max, reject_non_numeric
from .._backend._shared import DEFERRED_RANGE_CHECKS
from ._weights import is_whole_number_weights

__all__ = [
    "DEFAULT_INPUT_TYPE",
    "PREDICT_PROBABILITY_CHECK_ROWS",
    "ProbabilitiesAsLogitsWarning",
    "check_scores",
    "check_sample_weight",
    "probability_log_dtype",
    "probability_row_tolerance",
    "INPUT_TYPES",
    "MAX_ABS_LOGIT",
    "max_abs_logit",
    "min_max",
    "normalize_probabilities",
]

INPUT_TYPES = ("logits", "probabilities")


#: Default of the calibrators' ``input_type``. A plain value, compared by
#: value: whether input that looks like probabilities is reported is decided
#: by the caller of :func:`check_scores` (``warn_probabilities``), not by the
#: identity of this string.
DEFAULT_INPUT_TYPE = "logits"


class ProbabilitiesAsLogitsWarning(UserWarning):
    """Input that looks like probabilities was read as logits (``input_type="logits"``).

    Issued by every calibrator's ``fit`` when an ``X`` read as logits has
    every value in [0, 1] and rows summing to 1 (for a 1-D or one-column
    binary score, whose two-column form ``[1 - s, s]`` always sums to 1:
    every value in [0, 1]), and by ``predict_proba``, ``predict_log_proba``,
    ``transform``, ``predict`` and ``score`` by the same rule applied to the
    first :data:`PREDICT_PROBABILITY_CHECK_ROWS` rows of ``X``; pass
    ``input_type="probabilities"`` if they are, or filter this warning if the
    logits really look so.
    """


def _caller_stacklevel():
    """``stacklevel`` of the first frame outside skcal, for the caller of ``warnings.warn``."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(2), 2
    while frame is not None and (
        frame.f_code.co_filename.startswith(package)
        # scikit-learn's validate_params wrapper of the public metrics
        or frame.f_code.co_filename.endswith("_param_validation.py")
        # and its _fit_context wrapper of the meta-estimators' fit
        or (frame.f_code.co_name == "wrapper"
            and frame.f_code.co_filename.endswith(os.path.join("sklearn", "base.py")))
    ):
        frame, level = frame.f_back, level + 1
    return level


#: A binary score in [0, 1] is reported as probabilities only when its largest
#: value is at least this: every value within 1e-3 of 0 is far more likely a
#: tiny log-odds than a probability (of every row being the negative class).
BINARY_PROBABILITY_MIN_MAX = 1e-3


def probabilities_as_logits_message(binary, *, name="X", cli=False):
    """The text of :class:`ProbabilitiesAsLogitsWarning`, in the Python API's or the CLI's words.

    Parameters
    ----------
    binary : bool
        For a 1-D (or one-column) binary score, read as log-odds.
    name : str, default="X"
        The argument holding the scores.
    cli : bool, default=False
        Name the ``skcal`` option (``--input-type probabilities``) instead of
        the ``input_type`` argument.
    """
    what, read, it = (
        ("a binary score with every value in [0, 1], i.e. the positive class's "
         "probability", "log-odds", "it is a probability") if binary
        else ("every value in [0, 1], every row summing to 1", "logits",
              "they are probabilities")
    )
    fix, keep = (
        ("Pass --input-type probabilities", "pass --input-type logits") if cli
        else ("Pass input_type='probabilities'",
              "filter skcal.utils.validation.ProbabilitiesAsLogitsWarning")
    )
    why = "the input type is logits" if cli else "input_type is 'logits'"
    return (
        f"{name} looks like probabilities ({what}) but is read as {read}, because "
        f"{why}. {fix} if {it}, or {keep} if these really are {read}."
    )


def _warn_if_probabilities(X, lo, hi, *, name="X"):
    """Warn when logits ``X`` (values in ``lo..hi``) look like probabilities.

    The rule of :class:`ProbabilitiesAsLogitsWarning`; a binary score must also
    reach :data:`BINARY_PROBABILITY_MIN_MAX`.
    """
    if lo < 0 or hi > 1:
        return
    binary = X.ndim == 1 or X.shape[1] == 1
    if binary and hi < BINARY_PROBABILITY_MIN_MAX:
        return
    tol = probability_row_tolerance(X.dtype)
    if binary or get_backend(X).row_sum_deviation(X, tol) <= tol:
        warnings.warn(
            probabilities_as_logits_message(binary, name=name),
            ProbabilitiesAsLogitsWarning,
            stacklevel=_caller_stacklevel(),
        )


#: Rows judged by the probabilities-as-logits check at predict time
#: (``predict_proba``, ``predict_log_proba``, ``transform``, ``predict``,
#: ``score`` of a calibrator with ``input_type="logits"``): the first rows
#: only, so that the check costs no pass over a large input.
PREDICT_PROBABILITY_CHECK_ROWS = 1000


def _warn_if_probabilities_sample(X, n_rows):
    """:func:`_warn_if_probabilities` judged on the first ``n_rows`` rows of ``X``."""
    head = X[:n_rows]
    lo, hi = get_backend(head).min_max(head)
    if math.isfinite(lo) and math.isfinite(hi):  # NaN / inf: the range check reports
        _warn_if_probabilities(head, lo, hi)


def probability_row_tolerance(dtype):
    """Absolute tolerance on ``|sum(row) - 1|`` for probability input.

    Parameters
    ----------
    dtype : numpy or torch dtype
        The floating dtype of the probabilities.

    Returns
    -------
    float
        ``1e-2`` for 16-bit floats (float16 / bfloat16), ``1e-4`` otherwise.
    """
    return 1e-2 if "16" in str(dtype) else 1e-4


def normalize_probabilities(P, *, atol=1e-2):
    """Divide each row of rounded probabilities by its sum, explicitly.

    Probabilities stored in a low precision and cast to a wider one (e.g.
    float16 read back as float32) have rows that sum to 1 only within the
    low precision's rounding (a 10-class float16 row: ``0.99967``), which the
    float32 / float64 tolerance of ``input_type="probabilities"``
    (:func:`probability_row_tolerance`, ``1e-4``) refuses. skcal never
    renormalises silently; this function is the explicit way to do it.

    Parameters
    ----------
    P : array-like or torch.Tensor of shape (n_samples, n_classes)
        Probabilities, ``n_classes >= 2``, every value in [0, 1].
    atol : float, default=1e-2
        Largest accepted ``|sum(row) - 1|``: a larger deviation is not a
        rounding error, and raises. The default is the row-sum tolerance of
        16-bit floats (float16 rounds each value to a relative ``2**-11``,
        bfloat16 to ``2**-8``).

    Returns
    -------
    P : ndarray or torch.Tensor of shape (n_samples, n_classes)
        ``P / P.sum(axis=1)`` (the sums taken and the division done in
        float64), in float64 for float64 input and float32 otherwise (16-bit
        input is widened, see :func:`probability_log_dtype`); a tensor on the
        input's device for tensor input.

    Raises
    ------
    ValueError
        If ``P`` is not 2-D with at least 2 columns, holds NaN, infinity or
        values outside [0, 1], a row sums to 0, or a row sum differs from 1
        by more than ``atol``; or if ``atol`` is not in (0, 0.5).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.utils.validation import normalize_probabilities
    >>> P = np.array([[0.7, 0.2, 0.0997]], dtype=np.float32)
    >>> Q = normalize_probabilities(P)
    >>> Q.dtype, bool(abs(Q.sum(dtype=np.float64) - 1) < 1e-7)
    (dtype('float32'), True)
    """
    if not (isinstance(atol, numbers.Real) and 0 < atol < 0.5):
        raise ValueError(f"atol must be a number in (0, 0.5), got {atol!r}.")
    A = host_array(P)
    reject_non_numeric(A, "P", "probabilities")
    A = check_array(A, dtype=list(FLOAT_DTYPES), ensure_all_finite=True, input_name="P")
    out_dtype = np.float64 if A.dtype == np.float64 else np.float32
    A = A.astype(np.float64)
    if A.shape[1] < 2:
        raise ValueError(
            f"P must have at least 2 columns (one probability per class), got {A.shape[1]}."
        )
    _check_range("P", float(A.min()), float(A.max()), A.dtype, "probabilities")
    sums = A.sum(axis=1)
    dev = np.abs(sums - 1.0)
    if (dev > atol).any():
        i = int(np.argmax(dev))
        raise ValueError(
            f"Row {i} of P sums to {sums[i]:.6g}, further from 1 than atol={atol:g}: "
            "not a rounding error of probabilities, so it is not renormalised."
        )
    return like_input((A / sums[:, None]).astype(out_dtype, copy=False), P)


#: Largest accepted logit magnitude. Beyond it, products such as ``w * z`` or
#: ``z ** 2`` in the calibration objectives overflow float64.
MAX_ABS_LOGIT = 1e100
#: Largest accepted logit magnitude for float32 / float16 / bfloat16 input.
MAX_ABS_LOGIT_LOW_PRECISION = 1e15


def max_abs_logit(dtype):
    """Largest accepted logit magnitude for logits of ``dtype``.

    Parameters
    ----------
    dtype : numpy or torch dtype

    Returns
    -------
    float
        :data:`MAX_ABS_LOGIT` (1e100) for float64 and
        :data:`MAX_ABS_LOGIT_LOW_PRECISION` (1e15) for the other dtypes, which
        are processed in float32: there, sums over classes of squared logit
        differences (the curvature of the temperature objective) must stay
        below float32's largest value (3.4e38).
    """
    return MAX_ABS_LOGIT if "float64" in str(dtype) else MAX_ABS_LOGIT_LOW_PRECISION


def _check_range(name, lo, hi, dtype, input_type="logits", check_underflow=False):
    """Refuse values ``lo..hi`` of ``name`` that are not finite; logits too large
    (or, ``check_underflow``, too small); probabilities outside [0, 1]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        what = "NaN" if math.isnan(lo) or math.isnan(hi) else "infinity"
        raise ValueError(
            f"Input {name} contains {what}. skcal calibrators need finite "
            f"{'logits' if name == 'X' else 'values'}; remove or impute these rows "
            "first."
        )
    if input_type != "logits":
        if lo < 0 or hi > 1:
            values = f"values outside [0, 1] (min {lo:.6g}, max {hi:.6g})"
            raise _BadProbabilitiesError(
                f"Input {name} holds probabilities (input_type='probabilities') but "
                f"has {values}.",
                f"the scores are read as probabilities (--input-type probabilities) "
                f"but have {values}; pass --input-type logits if they are logits",
            )
        return
    bound = max_abs_logit(dtype)
    largest = max(-lo, hi)
    if largest > bound:
        raise ValueError(
            f"Input {name} has logits of magnitude {largest:.3g}; skcal accepts "
            f"|logit| <= {bound:.3g} for {dtype} input (beyond it the calibration "
            "objectives overflow). Rescale the scores."
        )
    # (whole-vector fits failed from ~1e-160 in float64, ~1e-25 in float32);
    # all-zero logits (tied rows) are accepted
    if check_underflow and 0 < largest < 1.0 / bound:
        raise ValueError(
            f"Input {name} has logits of magnitude at most {largest:.3g}; skcal fits "
            f"on logits whose largest magnitude is at least {1.0 / bound:.3g} for "
            f"{dtype} input (below it the calibration objectives underflow and the "
            "softmax is uniform to the dtype's precision). Rescale the scores, e.g. "
            "multiply them by 1 / their largest magnitude."
        )


class _BadProbabilitiesError(ValueError):
    """Scores read as probabilities that are none: the Python API's message,
    and ``cli_message``, the same in the CLI's words (``--input-type``, as
    :func:`probabilities_as_logits_message` words its warning for the CLI).

    Raised as ``_BadProbabilitiesError(message, cli_message)``: both are in
    ``args``, so that the error pickles (a dask worker's).
    """

    def __str__(self):
        return self.args[0]

    @property
    def cli_message(self):
        return self.args[1]

    def with_prefix(self, prefix):
        """The same error with ``prefix`` (e.g. a file's name) before both messages."""
        return type(self)(prefix + self.args[0], prefix + self.args[1])


def check_scores(
    X, *, input_type="logits", name="X", warn_probabilities=False, check_underflow=False
):
    """Validate classifier outputs and return them as a 2-D logit array.

    Parameters
    ----------
    X : array-like or torch.Tensor of shape (n_samples, n_classes), (n_samples, 1) or (n_samples,)
        Classifier outputs. With ``input_type="logits"`` these are logits (any
        real numbers; a per-row constant does not matter) or, for a binary
        problem given as one column or a 1-D vector, the log-odds of the second
        class. With ``input_type="probabilities"`` they are probabilities
        (rows summing to one; a single column or 1-D vector is the probability
        of the second class).
    input_type : {"logits", "probabilities"}, default="logits"
        What ``X`` holds. It is never guessed from the values (see
        ``warn_probabilities``).
    name : str, default="X"
        Name used in error messages.
    warn_probabilities : bool or int, default=False
        With ``input_type="logits"``, issue a
        :class:`ProbabilitiesAsLogitsWarning` when ``X`` looks like
        probabilities (every value in [0, 1] and every row summing to 1 within
        :func:`probability_row_tolerance`; for a 1-D or one-column binary
        score, whose two-column form ``[1 - s, s]`` always sums to 1, every
        value in [0, 1]). True judges every row; a positive int ``n`` judges
        only the first ``n`` rows (for a dask array, the first ``n`` rows of
        each block), the same rule at a bounded cost. Calibrators pass True
        in ``fit`` and :data:`PREDICT_PROBABILITY_CHECK_ROWS` at predict time.
    check_underflow : bool, default=False
        Also refuse logits whose largest magnitude is positive but below
        ``1 / max_abs_logit(dtype)`` (1e-100 for float64, 1e-15 for the other
        dtypes): the whole-vector calibrators pass True in ``fit``, whose
        objectives' curvature (sums of squared logit differences) underflows
        there. For a dask array the rule is applied to each row block. Not
        used for probabilities.

    Returns
    -------
    Z : ndarray or torch.Tensor of shape (n_samples, n_columns)
        Logits, with ``n_columns = 2`` for binary 1-column / 1-D input and
        ``n_columns = n_classes`` otherwise. The dtype of floating input is kept
        (float16, bfloat16, float32, float64); other numeric input becomes
        float64. A 2-D logit input is returned without a copy. Probabilities
        become ``log(p)``, computed in float32 for 16-bit floats (see
        :func:`probability_log_dtype`) and in their own dtype otherwise,
        where an exact 0 is first replaced by the smallest positive normal
        number of that dtype (``finfo.tiny``), so that every logit is finite.
    n_input_columns : int
        The number of columns of ``X`` as given (1 for 1-D input).

    Notes
    -----
    A ``dask.array.Array`` is checked lazily: its shape and dtype at once,
    its values block by block (by this same function, on each NumPy block)
    when the returned dask array is computed, so that validation costs no
    pass of its own (see ``skcal._backend._dask.check_scores``).

    Raises
    ------
    ValueError
        If ``X`` is empty, not 1-D or 2-D, contains NaN or infinity, holds
        logits larger in magnitude than :func:`max_abs_logit` (1e100 for
        float64, 1e15 for the other dtypes) or, with ``check_underflow=True``, logits
        all smaller in magnitude than its reciprocal but not all zero, or (for
        probabilities) has values outside [0, 1] or rows whose sum differs from
        1 by more than :func:`probability_row_tolerance`.
    """
    if input_type not in INPUT_TYPES:
        raise ValueError(
            f"input_type must be one of {INPUT_TYPES}, got {input_type!r}."
        )
    check_block = functools.partial(
        _check_scores, warn_probabilities=warn_probabilities,
        check_underflow=check_underflow,
    )
    return get_backend(X).check_scores(X, input_type, name, check_block=check_block)


def _check_scores(X, input_type, name, warn_probabilities, check_underflow=False):
    """:func:`check_scores` of a NumPy array (or array-like) or a tensor, at once."""
    xp = get_backend(X)
    X = xp.as_scores(X, name)
    n_input_columns = 1 if X.ndim == 1 else X.shape[1]
    # the deferred checks of the innermost deferred_range_check block (None
    # outside one: every check runs at once); the kernels report to it
    deferred = DEFERRED_RANGE_CHECKS.get()
    if (
        deferred is not None
        and input_type == "logits"
        and warn_probabilities is not True
        and xp.defers_range_check(X)
    ):
        if warn_probabilities:
            _warn_if_probabilities_sample(X, warn_probabilities)
        deferred.append(_DeferredRangeCheck(X, name))
        return X, n_input_columns
    lo, hi = xp.min_max(X)
    _check_range(name, lo, hi, X.dtype, input_type, check_underflow)
    if input_type == "logits":
        if warn_probabilities is True:
            _warn_if_probabilities(X, lo, hi)
        elif warn_probabilities:
            _warn_if_probabilities_sample(X, warn_probabilities)
        if n_input_columns == 1:
            return xp.binary_logits(X.reshape(-1)), 1
        return X, n_input_columns
    if n_input_columns > 1:  # every row sum (in float64) 1 within the dtype's tolerance
        sums, tol = host_array(xp.row_sums64(X)), probability_row_tolerance(X.dtype)
        dev = np.abs(sums - 1.0)
        if (dev > tol).any():
            i = int(np.argmax(dev))
            sums = f"sums to {sums[i]:.6g}; every row must sum to 1 (tolerance {tol:g})"
            raise _BadProbabilitiesError(
                f"Input {name} holds probabilities (input_type='probabilities') but "
                f"row {i} {sums}. Pass input_type='logits' if these are scores, or "
                "renormalise probabilities rounded to low precision (e.g. stored as "
                "float16) explicitly with "
                "skcal.utils.validation.normalize_probabilities.",
                "the scores are read as probabilities (--input-type probabilities) "
                f"but score row {i} (counting from 0) {sums}; pass "
                "--input-type logits if they are logits, or renormalise probabilities "
                "rounded to low precision (e.g. stored as float16) with "
                "skcal.utils.validation.normalize_probabilities",
            )
    return xp.probability_logits(X), n_input_columns


class _DeferredRangeCheck:
    """The finiteness and magnitude check of one logit tensor, run after the prediction.

    A predict kernel that sweeps the tensor in row chunks reports each chunk's
    minimum and maximum (:func:`skcal._backend._shared.observe_chunk_range`) while the chunk is in
    cache, which spares the separate read of the whole input that
    ``torch.aminmax`` costs (~0.3 of a pass on the CPU). :meth:`finish` raises
    the same errors as the immediate check, from the observed range when the
    kernel saw every row, else from one ``aminmax`` of the tensor.
    """

    def __init__(self, X, name):
        self.X, self.name, self.min_max = X, name, get_backend(X).min_max
        self.lo, self.hi, self.rows = math.inf, -math.inf, 0

    def observe(self, Z, Zc):
        if Z is not self.X:
            return
        lo, hi = self.min_max(Zc)
        if math.isnan(lo) or math.isnan(hi):  # Python's min / max drop a NaN
            self.lo = self.hi = math.nan
        elif not math.isnan(self.lo):
            self.lo, self.hi = min(self.lo, lo), max(self.hi, hi)
        self.rows += Zc.shape[0]

    def finish(self):
        if self.rows >= self.X.shape[0]:  # every row seen (some kernels sweep twice)
            lo, hi = self.lo, self.hi
        else:
            lo, hi = self.min_max(self.X)
        _check_range(self.name, lo, hi, self.X.dtype)


@contextlib.contextmanager
def deferred_range_check():
    """Let the range check of large 2-D CPU logit tensors run after the prediction.

    Inside the block, :func:`check_scores` on a 2-D CPU ``torch.Tensor`` of
    logits (``input_type="logits"``, at least 4 MiB) records the check
    instead of running it; predict kernels report the range of each chunk
    they read (:func:`skcal._backend._shared.observe_chunk_range`). On leaving the block without an
    exception, every recorded check runs and raises the usual ``ValueError``
    for NaN, infinity or logits too large for the dtype. The result computed
    inside the block must therefore not be used when the block raises.
    """
    checks = []
    token = DEFERRED_RANGE_CHECKS.set(checks)
    try:
        yield
    finally:
        DEFERRED_RANGE_CHECKS.reset(token)
    for check in checks:
        check.finish()


def check_sample_weight(sample_weight, n_samples, *, like=None, relative=False):
    """Validate ``sample_weight`` and return it as a float64 array (or tensor).

    Parameters
    ----------
    sample_weight : array-like or torch.Tensor of shape (n_samples,), float or None
        Non-negative finite weights; ``None`` means unit weights and a scalar
        is broadcast.
    n_samples : int
        Expected length.
    like : ndarray or torch.Tensor, optional
        When a torch tensor, the weights are returned as a float64 tensor on
        its device.
    relative : bool, default=False
        Divide the weights by their maximum, unless they are whole numbers
        (at most ``2**53``: they neither underflow nor overflow, and
        :func:`skcal.utils._weights.weight_unit` reads them as repetition
        counts). For objectives and metrics that are weighted means (only
        the ratios of the weights matter), so that weights of any magnitude,
        subnormal or near the float64 maximum, neither underflow nor overflow
        in their products with the data.

    Returns
    -------
    sample_weight : ndarray or torch.Tensor of shape (n_samples,), float64, or None
        ``None`` when ``sample_weight`` is None.

    Raises
    ------
    ValueError
        If the length differs from ``n_samples``, a weight is negative, NaN or
        infinite, all weights are zero, or their sum overflows float64.
    """
    if sample_weight is None:
        return None
    sample_weight = host_array(sample_weight)  # a tensor is checked as its NumPy copy
    if isinstance(sample_weight, numbers.Number):
        sw = np.full(n_samples, float(sample_weight))
    else:
        reject_non_numeric(sample_weight, "sample_weight", "weights")
        sw = check_array(
            sample_weight, ensure_2d=False, dtype=np.float64,
            ensure_all_finite=False, input_name="sample_weight",
        )
    if sw.ndim != 1:
        raise ValueError(
            f"sample_weight must be 1-D (one weight per sample), got shape {sw.shape}."
        )
    if sw.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has {sw.size} entries (shape {sw.shape}) but there are "
            f"{n_samples} samples; pass one weight per sample."
        )
    if not np.isfinite(sw).all():
        raise ValueError("sample_weight contains NaN or infinity.")
    if (sw < 0).any():
        raise ValueError("sample_weight has negative values; weights must be >= 0.")
    if not (sw > 0).any():
        raise ValueError("sample_weight sums to 0: every weight is zero.")
    with np.errstate(over="ignore"):
        total = sw.sum()
    if not np.isfinite(total):
        raise ValueError(
            f"sample_weight sums to {total} (float64 overflow); rescale the weights."
        )
    if relative and not is_whole_number_weights(sw):
        sw = sw / sw.max()
    return like_input(sw, like)
