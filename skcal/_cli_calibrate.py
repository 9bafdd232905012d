"""``skcal fit``, ``skcal apply`` and ``skcal report``: calibration as batch jobs.

::

    skcal fit --data cal.csv --method temperature --output model.skops
    skcal apply model.skops --data new.parquet --output calibrated.parquet
    skcal report --data test.npz --model model.skops --output report/

Files are read by :func:`skcal.datasets._tables.read_logit_table` (NumPy for
``.npz`` / memory-mapped ``.npy``, pyarrow for CSV and Parquet); models are
stored with ``skops.io`` and loaded trusting only skcal's types
(:mod:`skcal.io`). Every user error is one line on stderr and exit code 2.
"""

import argparse
import ast
import contextlib
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from .datasets._base import _scores_to_logits
from .datasets._tables import check_boolean_labels, encode_labels, read_logit_table
from .datasets._tables import write_table
from .exceptions import _UserError
from .io import dump, load

__all__ = ["add_subcommands", "run"]


# ------------------------------------------------------------------ parsing
def num_arg(lo, hi=None, *, allowed, skip=(), kind=int):
    """An argparse type: a ``kind`` number, to be in ``lo .. hi`` (None: no bound)
    and not in ``skip`` (NaN is in no range), a check that :func:`check_num_args`
    runs; ``allowed`` names the accepted values in both messages.
    """
    def parse(text):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be {allowed}, got {text!r}"
            ) from None

    def check(value):
        if not (lo <= value and (hi is None or value <= hi)) or value in skip:
            return f"must be {allowed}, got {value}"
        return None

    parse.check = check
    return parse


def check_num_args(parser, args):
    """The range of every :func:`num_arg` option given to ``args.command``.

    argparse only parses the numbers (text that is no number is its error,
    after its usage line); the first value out of its range is, once the
    command line is parsed and before any work, the one-line ``_UserError``
    ``"--option must be {allowed}, got {value}"``, as ``--n-bins`` is refused
    (:func:`_check_n_bins_arg`). ``parser`` is the ``skcal`` parser.
    """
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for action in sub.choices[args.command]._actions:
        check = getattr(action.type, "check", None)
        value = getattr(args, action.dest, None)
        if check is None or value is None:  # None: the option's default, unset
            continue
        message = check(value)
        if message is not None:
            flag = max(action.option_strings, key=len)
            raise _UserError(f"{flag} {message}")


def _n_bins(text):
    """argparse type of ``--n-bins``: an integer, checked by the metrics' rule in the command."""
    from .metrics._validation import n_bins_rule

    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(n_bins_rule(text)) from None


def _check_n_bins_arg(n_bins, n_samples=None):
    """``--n-bins`` by the metrics' rule and message (one line, before any work).

    With ``n_samples`` (once the data are read, the rule already checked),
    the metrics' limit of bins to rows, as the one-line error of the command.
    """
    from .metrics._validation import _check_n_bins, n_bins_rule

    try:
        _check_n_bins(n_bins, n_samples)
    except ValueError as exc:
        detail = n_bins_rule(n_bins) if n_samples is None else f"{n_bins}: {exc}"
        raise _UserError(f"--n-bins {detail}") from None


def columns_arg(allow_empty=False):
    """An argparse type: a comma-separated list of column names.

    With ``allow_empty``, an empty name is the header's unnamed column (as
    pandas writes its index): ``--ignore-columns ""``.
    """
    def parse(text):
        names = [c.strip() for c in text.split(",")]
        if not allow_empty and not all(names):
            raise argparse.ArgumentTypeError(f"empty name in {text!r}")
        return names

    return parse


_bootstrap_count = num_arg(0, allowed="0 (no intervals) or an integer >= 2", skip=(1,))
_non_negative_int = num_arg(0, allowed="an integer >= 0")


def _add_table_args(p, labels_help, data=True):
    """``--data`` (unless ``data`` is False) and the column options of
    :func:`~skcal.datasets._tables.read_logit_table`, for every command."""
    if data:
        p.add_argument("--data", required=True, metavar="FILE",
                       help="logits file: .npz, .npy (memory-mapped), .csv or .parquet")
    p.add_argument("--label-column", metavar="NAME",
                   help=f"label column (CSV/Parquet) or key (.npz); {labels_help}")
    p.add_argument("--logit-columns", metavar="C1,C2,...", type=columns_arg(),
                   help="logit columns in class order (CSV/Parquet; default: every "
                   "column but the label and split columns; when given, any other "
                   "column is an error) or the logits key (.npz)")
    p.add_argument("--ignore-columns", metavar="C1,C2,...", type=columns_arg(True),
                   help="CSV/Parquet: columns to skip (a row index, ids, metadata such "
                   "as a margin column); '' names an unnamed column, as pandas writes "
                   "its index")


def add_subcommands(sub):
    """Add ``fit``, ``apply`` and ``report`` to the ``skcal`` argument parser."""
    f = sub.add_parser(
        "fit", help="fit a calibrator on labelled logits and save it (.skops)",
        description="Fit a calibration method on a calibration set and save the "
        "fitted calibrator with skops.io.",
        # a function: listing the methods imports them, only for `skcal fit --help`
        epilog=lambda: f"Methods: {', '.join(sorted(_methods()))} (or a calibrator "
        "class name). Labels: integer class indices 0..K-1 (column k of the logits is "
        "class k), or text labels that name the logit columns, or text labels mapped "
        "to the columns in sorted order (with a warning). A column that no label "
        "selects is an error (skip it with --ignore-columns).",
    )
    _add_table_args(f, "default: 'label' or 'y'")
    _input_type_arg(f, "the calibrator's input_type (default: logits, with a warning "
                    "when the scores look like probabilities)")
    f.add_argument("--method", required=True, metavar="NAME",
                   help="a method name or calibrator class name (listed below)")
    f.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of the calibrator, e.g. --param max_iter=200; "
                   "values are Python literals (else text); the calibrators of "
                   "calibrator= and candidates= by method name, e.g. --param "
                   "calibrator=beta, --param \"candidates=['temperature', "
                   "'isotonic']\"; repeatable")
    f.add_argument("--output", required=True, metavar="MODEL.skops",
                   help="where to write the fitted calibrator (an existing file is "
                   "overwritten)")

    a = sub.add_parser(
        "apply", help="calibrate logits with a saved calibrator",
        description="Write calibrated probabilities (one column per class, named "
        "after the class) for the logits of FILE. The logit columns of a CSV/Parquet "
        "file are matched by name to those of the file the model was fitted on "
        "(reordered if needed; other names are an error), unless --logit-columns lists "
        "names none of which the model knows (then they are taken in class order). A "
        "file with a calibration and a test split (a 'split' column, or an .npz with "
        "the _val and _test keys) gives its test rows only, in file order; the output "
        "holds the class columns and the label, not the skipped (--ignore-columns) "
        "columns: rows match the input's rows by position.",
    )
    a.add_argument("model", metavar="MODEL.skops", help="a calibrator saved by skcal fit")
    _add_table_args(a, "optional; copied to the output when present")
    a.add_argument("--output", required=True, metavar="FILE",
                   help="calibrated.npz (keys 'proba', or 'log_proba' with "
                   "--log-proba; 'classes', the model's classes_ in their dtype, text "
                   "for an object array of mixed types; the labels, when present, in "
                   "their dtype), .csv or .parquet; an existing file is overwritten "
                   "(unless it is the --data file)")
    a.add_argument("--log-proba", action="store_true",
                   help="write log-probabilities (calibrated logits) instead "
                        "(.npz key 'log_proba')")

    r = sub.add_parser(
        "report", help="calibration metrics with intervals and reliability diagrams",
        description="NLL, Brier score, top-label ECE and accuracy with bootstrap "
        "intervals, and a reliability diagram, of the uncalibrated logits (softmax) "
        "and, with --model, of the calibrated probabilities.",
    )
    _add_table_args(r, "default: 'label' or 'y'")
    _input_type_arg(r, "default: the model's with --model, else logits (an error "
                    "when the scores look like probabilities)")
    r.add_argument("--model", metavar="MODEL.skops", help="a calibrator saved by skcal fit")
    r.add_argument("--output", required=True, metavar="DIR",
                   help="folder for report.md, metrics.csv, metrics.json, reliability.png "
                   "(created if needed; existing files of these names are overwritten)")
    r.add_argument("--n-bins", type=_n_bins, default=15,
                   help="equal-width bins of the ECE and the diagram (default 15)")
    r.add_argument("--n-bootstrap", type=_bootstrap_count, default=200,
                   help="bootstrap resamples of the intervals; 0: none (default 200)")
    r.add_argument("--seed", type=_non_negative_int, default=0, help="bootstrap seed")


def _methods():
    """Method name -> calibrator class (or factory): short names (``temperature``),
    class names, and the names ``skcal benchmark`` and AutoCalibrator give the
    wrappers over one inner calibrator (``smoothed-isotonic``: SmoothedCalibrator
    over IsotonicScaler, :data:`skcal.benchmark._benchmark.WRAPPED_METHODS`)."""
    from .benchmark._benchmark import WRAPPED_METHODS
    from .utils.discovery import all_calibrators, method_name

    found = dict(all_calibrators())
    out = {key: cls for name, cls in found.items() for key in (name, method_name(cls))}
    for key, (wrapper, inner) in WRAPPED_METHODS.items():
        if wrapper in found and inner in found:
            out[key] = _wrapped(found[wrapper], found[inner])
    return out


def _wrapped(wrapper, inner):
    """A factory of ``wrapper(inner())``, named after ``wrapper`` (the fit line's name)."""
    def make():
        return wrapper(inner())

    make.__name__ = wrapper.__name__
    make.wrapper, make.inner = wrapper, inner
    return make


def _parse_params(items):
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise _UserError(f"--param {item!r}: expected KEY=VALUE")
        if key in params:
            raise _UserError(f"--param {key} is given more than once")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


#: The parameters of skcal's meta-estimators that hold calibrators
#: (SmoothedCalibrator / TopVersusAllCalibrator, AutoCalibrator).
_CALIBRATOR_PARAMS = {"calibrator": False, "candidates": True}


def _calibrator_params(params, methods):
    """``params`` with the method names of :data:`_CALIBRATOR_PARAMS` made calibrators."""
    out = dict(params)
    for key, many in _CALIBRATOR_PARAMS.items():
        value = out.get(key)
        names = value if many and isinstance(value, (list, tuple)) else [value]
        if value is None or not all(isinstance(v, str) for v in names):
            continue
        unknown = [v for v in names if v not in methods]
        if unknown:
            raise _UserError(
                f"--param {key}: unknown method {unknown[0]!r}; choose from "
                f"{', '.join(sorted(methods))}")
        made = [methods[v]() for v in names]
        out[key] = made if many else made[0]
    return out


def _check_nested_params(est, params):
    """Refuse ``--param P__KEY=...`` where ``P`` holds no estimator to set ``KEY`` on.

    ``P`` is its value in ``params`` if given (``set_params`` sets it first),
    else the default of ``est``: None for an inner calibrator chosen in fit
    (``calibrator`` of SmoothedCalibrator / TopVersusAllCalibrator,
    ``candidates`` of AutoCalibrator), a list for ``candidates``.
    """
    values = {**est.get_params(deep=False), **params}
    for key in params:
        outer, sep, _ = key.partition("__")
        if not sep or outer not in values or hasattr(values[outer], "set_params"):
            continue  # not nested, unknown (set_params names it), or an estimator
        value = values[outer]
        if value is None:
            example = (f"{outer}=isotonic" if outer == "calibrator"
                       else f"\"{outer}=['temperature', 'isotonic']\"")
            raise _UserError(
                f"--param {key}: {outer} is None (its default, chosen in fit), so it "
                f"has no parameters to set; name it as well, e.g. --param {example} "
                "(methods: skcal fit --help)")
        raise _UserError(
            f"--param {key}: {outer} is a {type(value).__name__}, not one calibrator, "
            f"so it has no parameters to set by name; give {outer} whole")


# ------------------------------------------------------------------- tables
def _read(args, role, need_labels):
    with cli_messages(role, (OSError, ValueError)):
        return read_logit_table(
            args.data, role=role, label_column=args.label_column,
            logit_columns=args.logit_columns, ignore_columns=args.ignore_columns,
            need_labels=need_labels)


def _one_line(exc):
    text = str(exc).strip() or exc.__class__.__name__
    return " ".join(text.split())


def _cli_text(exc, source=None):
    """An error of the library as one line in the CLI's words: its
    ``cli_message`` where it has one (scores read as probabilities that are
    none: ``--input-type``, not ``input_type=``), prefixed by ``source``
    (the file) when given and the message does not already name it."""
    text = getattr(exc, "cli_message", None)
    if text is None:
        return _one_line(exc)
    if source is not None and not text.startswith(f"{source}: "):
        text = f"{source}: {text}"
    return _one_line(text)


@contextlib.contextmanager
def cli_messages(command, errors=(ValueError,), text=None, source=None):
    """Run a block with the command's error and warning reporting.

    An exception of ``errors`` becomes a one-line ``_UserError`` (in the CLI's
    words, naming ``source``, where the error has them: :func:`_cli_text`); the block's
    warnings are printed after it (none when it raised) as ``skcal COMMAND:
    warning: TEXT``, TEXT being ``text(w)`` (default: the message) on one line.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except errors as exc:
            raise _UserError(_cli_text(exc, source)) from None
    for w in caught:
        message = w.message if text is None else text(w)
        print(f"skcal {command}: warning: {_one_line(message)}", file=sys.stderr)


def _input_type_arg(p, default_help):
    p.add_argument(
        "--input-type", choices=("logits", "probabilities"), default=None,
        help="what the scores are: logits (or log-probabilities) or probabilities "
        "(rows in [0, 1] summing to 1, read as their logarithms, as the calibrators' "
        f"input_type='probabilities' reads them); {default_help}",
    )


#: When scores look like probabilities (the calibrators' rule).
_PROBA_RULE = ("every value in [0, 1] and, with two or more columns, every row "
               "summing to 1")

_PROBA_WARNING = (
    f"the scores look like probabilities ({_PROBA_RULE}; one column is the "
    "probability of the second class) but are read as logits, because --input-type was "
    "not given; pass --input-type probabilities (or --input-type logits to keep this "
    "reading and silence this warning)"
)


def scores_as_logits(Z, input_type, source):
    """``(logits, flagged)``: the scores ``Z`` read as ``input_type``.

    ``Z`` is ``table.scores``, read by :func:`skcal.utils.validation.check_scores`
    (the calibrators' rule); ``input_type=None`` (``--input-type`` not given) reads
    logits, and ``flagged`` says whether the scores looked like probabilities (the
    caller words the warning). Bad probabilities are a one-line ``_UserError``
    naming ``source``.
    """
    from .utils.validation import ProbabilitiesAsLogitsWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProbabilitiesAsLogitsWarning)
        try:
            out = _scores_to_logits(Z, input_type, source, name="scores")
        except ValueError as exc:
            raise _UserError(_cli_text(exc)) from None
    flagged = any(issubclass(w.category, ProbabilitiesAsLogitsWarning) for w in caught)
    return out, flagged


def _load_model(path):
    from .base import BaseCalibrator

    path = Path(path)
    if not path.exists():
        raise _UserError(f"no such model file: {path}")
    if path.is_dir():
        raise _UserError(f"{path} is a directory, expected a .skops model file")
    try:
        model = load(path)
    except ImportError as exc:
        raise _UserError(_one_line(exc)) from None
    except Exception as exc:  # zip errors, untrusted types, bad JSON ...
        raise _UserError(f"{path}: not a loadable skcal model ({_one_line(exc)})") from None
    if not isinstance(model, BaseCalibrator):
        raise _UserError(
            f"{path}: holds a {model.__class__.__name__}, not a skcal calibrator")
    return model


def _column_order(model, table):
    """Indices of the table's logit columns in the model's input order, or None.

    Columns are matched by name: to the model's ``feature_names_in_`` (kept
    by ``skcal fit`` from a CSV/Parquet file), else to its classes; other
    names are an error. Taken by position: a file without column names
    (.npz, .npy), or ``--logit-columns`` naming none of the fitted names.
    """
    fitted = getattr(model, "feature_names_in_", None)
    names = [str(c) for c in (_input_classes(model) if fitted is None else fitted)]
    return column_order(table, names, named=fitted is not None,
                        one_score=model.n_features_in_ == 1)


def column_order(table, names, *, named, one_score=False, fitted="the model was fitted"):
    """The name check of :func:`_column_order`, for a model or a data set.

    ``names`` are the fitted column names (``named``) or, for data without
    column names, the classes in input order; ``one_score``: fitted on one
    binary score column; ``fitted`` starts the messages (``skcal benchmark
    --shift-data`` says "the calibrators were fitted"). Returns the indices
    of the table's columns in the order of ``names``, or None (the table's
    own order, or taken by position).
    """
    if table.columns is None:
        return None
    cols = [str(c) for c in table.columns]
    if sorted(cols) == sorted(names):
        return None if cols == names else [cols.index(n) for n in names]
    if table.explicit_columns and (not named or not set(cols) & set(names)):
        return None  # explicit positional use, checked for the count later
    if named:
        missing = [c for c in names if c not in cols]
        extra = [c for c in cols if c not in names]
        raise _UserError(
            f"{table.path}: the logit columns do not match those {fitted} on "
            f"({names[:10]}): missing {missing[:10]}, extra "
            f"{extra[:10]}; rename them, skip extra columns with --ignore-columns, "
            "pass --label-column for a label column, or list the logit columns in "
            "class order with --logit-columns (names not among the fitted ones are "
            "then taken by position)")
    fitted_on = (
        # one score column: its name is not kept (no class columns to match)
        "on a 1-D binary score (one score column" if one_score
        else "without column names (on an .npz / .npy file"
    )
    raise _UserError(
        f"{table.path}: {fitted} {fitted_on}; classes {names[:10]}), so "
        f"the logit columns {cols[:10]} cannot be "
        "matched to its classes by name; list them in class order with --logit-columns "
        "(they are then taken by position), or name them after the classes")


def _two_columns(table, input_type):
    """The table's scores with one column per class: a one-column binary score
    ``s`` is ``[1 - s, s]`` read as probabilities and ``[0, s]`` (its log-odds
    reading, ``table.logits``) read as logits; other scores as they are."""
    if input_type == "probabilities" and table.scores.ndim == 1:
        p = np.asarray(table.scores, dtype=np.float64)
        return np.column_stack([1 - p, p])
    return table.logits


def _model_input(model, table, command):
    """``(Z, order)``: the table's scores in the model's input order, and that
    order (indices of the table's columns, None for the table's own order).
    A model fitted on one column gets the 1-D score as the file holds it. A
    model fitted on logits warns (``skcal COMMAND``) of probability-like ``Z``."""
    Z = _two_columns(table, model.input_type)
    n_in = model.n_features_in_ if model.n_features_in_ != 1 else 2
    names = [str(c) for c in model.classes_]
    if getattr(model, "feature_names_in_", None) is None and (
        Z.shape[1] != n_in and table.columns is not None
    ):
        extra = [c for c in table.columns if c not in names]
        if extra and len(table.columns) - len(extra) == n_in:
            raise _UserError(
                f"{table.path}: column {extra[0]!r} is neither the label column nor "
                f"a class of the model ({names[:10]}); skip it with --ignore-columns "
                f"{extra[0]}, or pass --label-column or --logit-columns")
    order = _column_order(model, table)
    if Z.shape[1] != n_in:
        classes = np.asarray(model.classes_)[:10].tolist()
        if model.n_features_in_ == 1:  # the Python API's words
            raise _UserError(
                f"{table.path}: {Z.shape[1]} logit columns but the model was fitted "
                f"on a 1-D binary score for 2 classes {classes}; pass one score "
                "column, as in fit, or 2 columns in class order")
        raise _UserError(
            f"{table.path}: {Z.shape[1]} logit columns but the model was fitted on "
            f"{n_in} (classes {classes})")
    if order is not None:
        Z = Z[:, order]
    if model.n_features_in_ == 1:
        if table.scores.ndim == 1:
            Z = np.asarray(table.scores, dtype=np.float64)
        elif model.input_type == "probabilities":
            Z = np.asarray(Z[:, 1], dtype=np.float64)
        else:
            Z = np.asarray(Z[:, 1], dtype=np.float64) - Z[:, 0]
    if model.input_type == "logits" and scores_as_logits(Z, None, table.path)[1]:
        rule = ("every value in [0, 1], every row summing to 1" if np.ndim(Z) == 2
                and np.shape(Z)[1] > 1 else "one score column, every value in [0, 1]")
        print(f"skcal {command}: warning: {table.path}: the scores look like "
              f"probabilities ({rule}) but the model was fitted on logits "
              "(input_type='logits') and reads them as logits; fit it with "
              "--input-type probabilities if they are probabilities", file=sys.stderr)
    return Z, order


def _predict(model, Z, path, log=False):
    """``predict_proba`` / ``predict_log_proba`` of ``Z`` (errors name ``path``),
    silencing the warnings said already: its columns were matched by name (no
    feature names is moot), and the probabilities-as-logits one by _model_input."""
    from .utils.validation import ProbabilitiesAsLogitsWarning

    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="X does not have valid feature names", category=UserWarning
        )
        warnings.filterwarnings("ignore", category=ProbabilitiesAsLogitsWarning)
        try:
            return model.predict_log_proba(Z) if log else model.predict_proba(Z)
        except ValueError as exc:
            raise _UserError(f"{path}: {_one_line(exc)}") from None


def _input_classes(model):
    """The model's classes in its input column order (``classes_`` is sorted)."""
    f = getattr(model, "_classes_in_input_order", None)
    return model.classes_ if f is None else f()


def _encode(y, classes, path):
    """The column of each label ``y`` among the model's ``classes``."""
    from .utils._labels import encode_labels

    classes = np.asarray(classes)
    key = classes.astype(str) if y.dtype.kind in "OUS" else classes
    if y.dtype.kind in "iu" and classes.dtype.kind not in "iu":
        # integer labels of a model with text classes: column indices
        key = np.arange(len(classes))
    try:
        return encode_labels(key, y)
    except ValueError:
        bad = y[~np.isin(y, key)][0]
        bad = bad.item() if hasattr(bad, "item") else bad  # no numpy repr in the message
        raise _UserError(
            f"{path}: label {bad!r} is not one of the model's classes "
            f"{classes[:10].tolist()}") from None


# -------------------------------------------------------------------- fit
def _cmd_fit(args):
    methods = _methods()
    if args.method not in methods:
        raise _UserError(
            f"unknown method {args.method!r}; choose from {', '.join(sorted(methods))}")
    out = _check_output_file(args.output, (".skops",),
                             "the model file must end in .skops")
    params = _parse_params(args.param)
    if args.input_type is not None:
        if params.get("input_type", args.input_type) != args.input_type:
            raise _UserError(
                f"--input-type {args.input_type} contradicts --param "
                f"input_type={params['input_type']}")
        params["input_type"] = args.input_type
    cls = methods[args.method]
    if getattr(cls, "inner", None) is not None and "calibrator" in params:
        from .utils.discovery import method_name

        raise _UserError(
            f"--method {args.method} is {cls.__name__} over {cls.inner.__name__}, "
            f"its calibrator fixed: --param calibrator does not apply to it; use "
            f"--method {method_name(cls.wrapper)} with --param calibrator")
    if params.get("n_extra_features", 0) not in (0, None):
        # every column the reader keeps is the logit of a class
        raise _UserError(
            "--param n_extra_features: skcal fit reads every column as a class logit, "
            "so it cannot pass extra features; fit LocalTemperatureScaler with extra "
            "features in Python")
    try:
        params = _calibrator_params(params, methods)
        est = cls()
        _check_nested_params(est, params)
        est.set_params(**params)
    except (ValueError, TypeError) as exc:
        raise _UserError(f"--param: {_one_line(exc)}") from None
    table = _read(args, "fit", need_labels=True)
    with cli_messages("fit"):  # the loader's label rules, warnings in the CLI's words
        y, classes = encode_labels(table)
    if len(np.unique(y)) < 2:
        raise _UserError(
            f"{table.path}: the labels hold one class only "
            f"({classes[np.unique(y)[0]].item()!r}); "
            "calibration needs at least 2 classes")
    if "classes" in est.get_params() and "classes" not in params:
        est.set_params(classes=classes)
    elif "classes" in params and table.columns is not None and classes.dtype.kind in "US":
        given = [str(c) for c in np.asarray(params["classes"]).ravel()]
        names = [str(c) for c in classes]
        if sorted(given) == sorted(names) and given != names:
            raise _UserError(
                f"--param classes={given} names the logit columns {names} in another "
                "order: the columns are matched to the labels by name; drop the classes "
                "parameter, or reorder the columns (--logit-columns)")
    from .utils.validation import ProbabilitiesAsLogitsWarning
    from .utils.validation import probabilities_as_logits_message

    def text(w):  # the calibrator's warning naming the option, not input_type
        if not issubclass(w.category, ProbabilitiesAsLogitsWarning):
            return w.message
        return probabilities_as_logits_message(est.n_features_in_ == 1,
                                               name=str(table.path), cli=True)

    with cli_messages("fit", (ValueError, TypeError), text, source=table.path):
        t0 = time.perf_counter()
        # the scores as the file holds them (one column stays 1-D): the
        # calibrator reads them by its input_type, with its warnings
        est.fit(table.scores, classes[y])  # the labels, as the file names them
        elapsed = time.perf_counter() - t0
    n_in = getattr(est, "n_features_in_", None)
    if table.columns is not None and len(table.columns) == n_in:
        # keep the logit columns' names, as a fit on a DataFrame does: apply and
        # report match a file's columns to them by name
        est.feature_names_in_ = np.asarray(table.columns, dtype=object)
    try:
        dump(est, out)
    except ImportError as exc:
        raise _UserError(_one_line(exc)) from None
    except OSError as exc:
        raise _UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    n, K = table.logits.shape
    print(f"fitted {cls.__name__} on {n} rows, {K} classes in {elapsed:.3g} s"
          f"{_summary(est)}; wrote {out}")
    note = _labels_unused_note(est)
    if note:
        print(f"note: {note}")
    return 0


def _labels_unused_note(est):
    """Why the labels did not shape ``est`` (a prior correction), or None.

    Contextual and batch calibration take their bias from unlabelled logits:
    the file's labels only set ``classes_``.
    """
    from .llm import BatchCalibrator, ContextualCalibrator

    if isinstance(est, ContextualCalibrator):
        if est.content_free_logits is not None:
            return ("ContextualCalibrator took its bias from --param content_free_logits; "
                    "the calibration rows (logits and labels) only set the classes")
        return ("ContextualCalibrator without --param content_free_logits=... takes "
                "the calibration logits as its content-free inputs (batch calibration) "
                "and ignores the labels (they only set the classes)")
    if isinstance(est, BatchCalibrator):
        return ("BatchCalibrator takes its bias from the mean prediction on the "
                "calibration logits and ignores the labels (they only set the classes)")
    return None


def _summary(est):
    if hasattr(est, "best_name_"):  # AutoCalibrator: the candidate it chose
        return f" (best_name_ = {est.best_name_})"
    if hasattr(est, "temperature_"):
        return f" (temperature_ = {est.temperature_:.6g})"
    n_iter = getattr(est, "n_iter_", None)
    return "" if n_iter is None else f" (n_iter_ = {n_iter})"


# ------------------------------------------------------------------ apply
def _check_output_file(path, suffixes, wrong_suffix=None):
    out = Path(path)
    if out.suffix.lower() not in suffixes:
        raise _UserError(f"--output {out}: " + (wrong_suffix or (
            f"unsupported output type {out.suffix!r}; use {', '.join(suffixes)}")))
    if out.is_dir():
        raise _UserError(f"--output {out} is a directory")
    if not out.parent.exists():
        raise _UserError(f"--output {out}: folder {out.parent} does not exist")
    return out


def _cmd_apply(args):
    out = _check_output_file(args.output, (".npz", ".csv", ".parquet"))
    if out.exists() and Path(args.data).exists() and os.path.samefile(out, args.data):
        raise _UserError(
            f"--output {out} is the --data file {args.data}: it would overwrite its "
            "input; write to another file")
    model = _load_model(args.model)
    table = _read(args, "apply", need_labels=False)
    Z, _ = _model_input(model, table, "apply")
    res = _predict(model, Z, table.path, log=args.log_proba)
    extra = {}
    if table.y is not None:
        # a CSV / Parquet file's own label column name (also for one score
        # column); NumPy files' labels are "y"
        named = Path(table.path).suffix.lower() in (".csv", ".parquet")
        extra[table.label_column if named else "y"] = table.y
    try:
        write_table(out, model.classes_, res, npz_key="log_proba" if args.log_proba else "proba",
                    extra=extra)
    except OSError as exc:
        raise _UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise _UserError(_one_line(exc)) from None
    kind = "log-probabilities" if args.log_proba else "probabilities"
    rows = f"{res.shape[0]} rows"
    if table.split_read is not None:  # a file with both splits: say which rows
        rows += f" ({_split_rows(table)} in {Path(table.path).name}, in file order)"
    print(f"wrote calibrated {kind} of {rows}, {res.shape[1]} classes to {out}")
    return 0


def _split_rows(table):
    """"the 'test' rows of N" (or "the 'test' split" of an .npz): the rows a file
    with both splits gave."""
    if table.n_file_rows is None:
        return f"the {table.split_read!r} split"
    return f"the {table.split_read!r} rows of {table.n_file_rows}"


# ----------------------------------------------------------------- report
def _with_intervals(y, P, n_bins, n_bootstrap, seed):
    """Point estimates and 95% BCa bootstrap intervals (rows resampled): those
    of ``skcal benchmark`` (:func:`skcal.benchmark._benchmark.bootstrap_interval`,
    whose ``INTERVAL_METHOD`` says why BCa), with the full sample's ECE bins."""
    from .benchmark._benchmark import _metrics, bootstrap_interval, interval_statistic

    out = {}
    with np.errstate(divide="ignore"):
        point = _metrics(y, P, n_bins)
        for name in ("nll", "brier", "ece", "accuracy"):
            low, high, beyond = bootstrap_interval(
                interval_statistic(y, P, name, n_bins=n_bins), len(y),
                n_resamples=n_bootstrap, random_state=seed,
            ) if n_bootstrap else (np.nan, np.nan, False)
            out[name] = (point[name], float(low), float(high), beyond)
    return out


def _fmt(v):
    return "inf" if np.isinf(v) else ("" if np.isnan(v) else f"{v:.4f}")


def check_output_folder(path):
    """``--output DIR`` of ``report`` and ``benchmark`` as a Path, checked before
    any work: an existing path that is not a folder is a one-line ``_UserError``."""
    out_dir = Path(path)
    if out_dir.exists() and not out_dir.is_dir():
        raise _UserError(f"--output {out_dir} exists and is not a folder")
    return out_dir


def _cmd_report(args):
    out_dir = check_output_folder(args.output)
    _check_n_bins_arg(args.n_bins)
    model = _load_model(args.model) if args.model else None
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise _UserError(
            "skcal report needs matplotlib for the reliability diagram; install it "
            "(pip install 'skcal[plot]')") from None
    table = _read(args, "report", need_labels=True)
    _check_n_bins_arg(args.n_bins, len(table.y))
    if args.n_bootstrap and len(table.y) < 2:
        raise _UserError(
            f"{table.path}: {len(table.y)} row; a bootstrap interval needs at least 2 "
            "(pass --n-bootstrap 0 for no intervals)")
    from scipy.special import softmax

    kind = args.input_type if model is None else model.input_type
    if model is not None:
        if args.input_type not in (None, model.input_type):
            raise _UserError(
                f"--input-type {args.input_type}: the model was fitted with "
                f"input_type={model.input_type!r}")
        Z, order = _model_input(model, table, "report")
        with cli_messages("report"):
            check_boolean_labels(table)
        # labels and uncalibrated scores in the model's input column order, then
        # in classes_ (sorted) order, the order of its predict_proba columns
        y = _encode(np.asarray(table.y), _input_classes(model), table.path)
        Z2 = np.asarray(_two_columns(table, kind), dtype=np.float64)
        if order is not None:
            Z2 = Z2[:, order]
        sort = getattr(model, "_column_order_", None)
        if sort is not None:
            y = np.argsort(sort)[y]
            Z2 = Z2[:, sort]
        # float64 logits: float32 probabilities would round small ones to 0
        # and give an infinite NLL where score() is finite (16-bit
        # probabilities are checked in their dtype, as in fit)
        wide = kind == "logits" or np.asarray(Z).dtype.itemsize >= 4
        P1 = np.asarray(_predict(model, np.asarray(Z, dtype=np.float64) if wide else Z,
                                 table.path), dtype=np.float64)
        name = model.__class__.__name__
        if hasattr(model, "best_name_"):  # AutoCalibrator: the candidate it chose
            name += f" ({model.best_name_})"
        rows = [(name, P1)]
    else:
        with cli_messages("report"):
            y, _ = encode_labels(table)
        # checked in their own dtype (16-bit probabilities have a wider row-sum
        # tolerance, as in fit and the calibrators)
        _, flagged = scores_as_logits(table.scores, kind, table.path)
        if flagged:  # a report of probabilities read as logits would be nonsense
            raise _UserError(
                f"{table.path}: the scores look like probabilities ({_PROBA_RULE}); "
                "a report needs to know how to read them: pass --input-type "
                "probabilities, or --input-type logits if they are logits")
        Z2, rows = np.asarray(_two_columns(table, kind), dtype=np.float64), []
    # probabilities as given, rows renormalised: the logits read from them are
    # floored at the dtype's tiny, which would turn a true class's probability 0
    # into a finite NLL
    rows.insert(0, ("uncalibrated", Z2 / Z2.sum(axis=1, keepdims=True)
                    if kind == "probabilities" else softmax(Z2, axis=1)))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _UserError(f"cannot create output folder {out_dir}: {exc.strerror or exc}") from None
    from .benchmark._benchmark import BEYOND_MARK, BEYOND_NOTE

    results = {name: _with_intervals(y, P, args.n_bins, args.n_bootstrap, args.seed)
               for name, P in rows}
    level = "" if not args.n_bootstrap else f" [95% BCa bootstrap interval, {args.n_bootstrap} resamples]"
    head = "| model | NLL | Brier | ECE | accuracy |\n|---|---|---|---|---|\n"

    def cell(v, lo, hi, beyond):  # res holds nll, brier, ece, accuracy in this order
        return (_fmt(v) + ("" if np.isnan(lo) else f" [{_fmt(lo)}, {_fmt(hi)}]")
                + (BEYOND_MARK if beyond else ""))

    lines = [f"| {name} | " + " | ".join(cell(*v) for v in res.values()) + " |"
             for name, res in results.items()]
    note = ""
    if args.n_bootstrap and any(np.isnan(lo) for res in results.values()
                                for _, lo, _, _ in res.values()):
        note = ("\n\nA value without an interval has no bootstrap interval: an "
                "infinite value (NLL when a true class has probability 0) or a "
                "degenerate resampling distribution.")
    if any(beyond for res in results.values() for *_, beyond in res.values()):
        note += "\n\n" + BEYOND_NOTE
    md = (
        f"# skcal report\n\nData: {table.path} ({len(y)} row{'' if len(y) == 1 else 's'}"
        + ("" if table.split_read is None else f", {_split_rows(table)}")
        + f", {rows[0][1].shape[1]} "
        f"classes). Top-label ECE with {args.n_bins} equal-width bins{level}.\n\n"
        + head + "\n".join(lines) + note + "\n\n![reliability](reliability.png)\n"
    )
    (out_dir / "report.md").write_text(md, encoding="utf-8")
    with open(out_dir / "metrics.csv", "w", encoding="utf-8") as fh:
        fh.write("model,metric,value,low,high,beyond_resamples\n")
        for name, res in results.items():
            for k, (v, lo, hi, beyond) in res.items():
                fh.write(f"{name},{k},{v!r},{lo!r},{hi!r},{beyond}\n")
    def _json(v):  # JSON has no NaN / inf: no interval (or an infinite NLL) is null
        return float(v) if np.isfinite(v) else None

    (out_dir / "metrics.json").write_text(json.dumps(
        {name: {k: {"value": _json(v), "low": _json(lo), "high": _json(hi),
                    "beyond_resamples": beyond}
                for k, (v, lo, hi, beyond) in res.items()}
         for name, res in results.items()}, indent=2, allow_nan=False),
        encoding="utf-8")
    from .benchmark._decide import plot_reliability_panels

    panels = [(name, P, results[name]["nll"][0], results[name]["ece"][0],
               name == "uncalibrated") for name, P in rows]
    plot_reliability_panels(panels, y, out_dir / "reliability.png",
                            f"{Path(table.path).name}: top-label reliability",
                            n_bins=args.n_bins)
    print(head + "\n".join(lines) + note)
    print(f"wrote report.md, metrics.csv, metrics.json, reliability.png to {out_dir}")
    return 0


# -------------------------------------------------------------------- run
_COMMANDS = {"fit": _cmd_fit, "apply": _cmd_apply, "report": _cmd_report}


def run(args):
    """Run one of ``fit`` / ``apply`` / ``report``: 0 on success.

    Bad input (path, format, shape, parameter) raises ``_UserError``, which
    :func:`skcal.cli.main` reports as one line on stderr with exit code 2.
    """
    return _COMMANDS[args.command](args)
