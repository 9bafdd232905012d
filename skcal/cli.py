"""The ``skcal`` console script.

``skcal fit``, ``skcal apply`` and ``skcal report`` fit a calibrator on
labelled logits, apply a saved one to new logits, and report calibration
metrics (see :mod:`skcal._cli_calibrate`).

``skcal benchmark`` answers "which calibration method should I use on my
model's outputs, and how much does it help?": it fits the calibrators of
``DEFAULT_METHODS`` (every calibrator with ``--full``; the peer libraries'
that are installed among them) on a calibration split of real logits
and prints NLL, top-label ECE, Brier score, accuracy and fit time on the test
split (``--wide`` adds classwise ECE and predict time).

Examples
--------
::

    skcal benchmark                         # DEFAULT_METHODS on the bundled sets
    skcal benchmark --full                  # every method and installed peer
    skcal benchmark --data my_logits.npz    # your own logits
    skcal benchmark --output results/       # also Markdown, CSV, PNG diagrams
    skcal benchmark --resamples 0           # no bootstrap intervals (faster)
    skcal benchmark --label-shift 1.0       # also on label-shifted test splits
    skcal benchmark --data a.npz --shift-data a_corrupted.npz
"""

import argparse
import contextlib
import functools
import os
import sys
from pathlib import Path

import numpy as np

from ._cli_calibrate import _PROBA_WARNING, _add_table_args, _input_type_arg
from ._cli_calibrate import add_subcommands, check_num_args, check_output_folder, cli_messages
from ._cli_calibrate import column_order, num_arg
from ._cli_calibrate import run
from .exceptions import _UserError

__all__ = ["main"]

#: Data set used by ``--fast`` when none is given.
FAST_DATASET = "cifar10_resnet20_chenyaofo"
INF = float("inf")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose ``epilog`` may be a function, called only when
    the help is printed: listing the methods imports every calibrator (and
    scikit-learn), which ``skcal --version`` and ``skcal --help`` must not pay.
    """

    def format_help(self):
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()


def _benchmark_epilog():
    from .benchmark._benchmark import available_methods

    return (
        "File formats for --data: .npz with keys logits_val, y_val, logits_test, "
        "y_test (or logits, y: split 50/50 with --seed); NAME_logits.npy with "
        "NAME_labels.npy beside it (split with --seed); .csv with a header, a 'label' "
        "column, an optional 'split' column (val/test) and one column per class logit; "
        "labels are class indices 0..K-1 or text labels, matched to the logit columns "
        "by header name (else in sorted order, with a warning); a column that no label "
        "selects is an error (skip it with --ignore-columns); .parquet with the same "
        "columns as .csv. "
        f"Methods: {', '.join(available_methods())}."
    )


def _parser():
    from . import __version__
    from .datasets import list_datasets

    parser = _Parser(prog="skcal", description="Post-hoc probability calibration tools.")
    parser.add_argument("--version", action="version", version=f"skcal {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    b = sub.add_parser(
        "benchmark",
        help="compare calibration methods on real logits",
        description=(
            "Fit each calibration method on the calibration split and report NLL, "
            "top-label ECE (15 bins), Brier score, accuracy and fit time on the test "
            "split; --wide adds the library, classwise ECE, predict time and the "
            "intervals of ECE, Brier score and accuracy (the benchmark.md and "
            "benchmark.csv of --output hold every column). Without --data, --dataset "
            "or --sklearn-sets, runs on every bundled data set."
        ),
        epilog=_benchmark_epilog,
    )
    b.add_argument(
        "--data", action="append", metavar="FILE", default=[],
        help="your own logits file (.npz, .npy, .csv or .parquet); repeatable",
    )
    _add_table_args(b, "default: 'label' or 'y'", data=False)
    _input_type_arg(
        b, "applies to every --data and --shift-data file (default: logits, with a "
        "warning for a file whose scores look like probabilities)"
    )
    b.add_argument(
        "--dataset", action="append", metavar="NAME", default=[],
        choices=list_datasets(),
        help=f"a bundled data set; repeatable ({', '.join(list_datasets())})",
    )
    b.add_argument(
        "--methods", metavar="M1,M2,...",
        help="comma-separated methods to run (default: those of DEFAULT_METHODS; "
        "all with --full); 'uncalibrated' and 'auto' (AutoCalibrator, whose "
        "choice is the Recommended line) are always shown first, so naming them "
        "changes nothing; skcal fit's names 'smoothed' and 'top-versus-all' run "
        "the rows smoothed-isotonic and top-versus-all-platt",
    )
    b.add_argument(
        "--no-peers", action="store_true",
        help="skip the peer libraries (scikit-learn, netcal, probmetrics)",
    )
    b.add_argument(
        "--output", metavar="DIR",
        help="write benchmark.md, benchmark.csv, benchmark_summary.csv, per data "
        "set reliability_<data>.png (uncalibrated, the recommended method and those "
        "within noise of it) and nll_change_<data>.png, and win_rates.png across "
        "data sets, to DIR (created if needed; existing files of these names are "
        "overwritten)",
    )
    b.add_argument(
        "--seed", type=num_arg(0, 2**32 - 1, allowed="an integer in 0..2**32-1"),
        default=0,
        help="seed for splitting single-set files and for randomised methods: "
        "an integer in 0..2**32-1 (default: 0)",
    )
    b.add_argument(
        "--fast", action="store_true",
        help=f"quick run: no peers and, unless data is given, only {FAST_DATASET}",
    )
    b.add_argument(
        "--repeats", type=num_arg(1, 100, allowed="an integer in 1..100"),
        default=None, metavar="N",
        help="timed runs per method after one untimed warm-up; the table shows "
        "the median (default: 1; 3 with --full)",
    )
    b.add_argument(
        "--resamples", type=num_arg(0, allowed="0 or an integer >= 2", skip=(1,)),
        default=None, metavar="N",
        help="bootstrap resamples for the 95%% intervals of NLL, ECE, Brier and "
        "accuracy and for the paired comparisons with the best method, whose "
        "ties are marked '*', and with the uncalibrated model (default: 200; "
        "1000 with --full; 0: no intervals)",
    )
    b.add_argument(
        "--shift-data", metavar="FILE",
        help="also score the calibrators, fitted on the calibration split of the "
        "one data set given (--data or --dataset), on every row of FILE (same "
        "model and classes, shifted inputs; same formats and column options as "
        "--data; its logit columns are matched to those of --data by name, as in "
        "skcal apply), and print how each method's NLL and ECE change",
    )
    b.add_argument(
        "--label-shift", metavar="ALPHA",
        type=num_arg(0, INF, allowed="a positive number", skip=(0, INF), kind=float),
        help="also score each data set on its test split subsampled to class "
        "proportions drawn from a symmetric Dirichlet(ALPHA) (drawn with --seed; "
        "smaller ALPHA, stronger shift, e.g. 1.0 or 0.3), and print how each "
        "method's NLL and ECE change, averaged over --shift-draws draws",
    )
    b.add_argument(
        "--shift-draws", metavar="N", type=num_arg(1, allowed="an integer >= 1"),
        default=None,
        help="number of --label-shift draws averaged per data set (default: 5)",
    )
    b.add_argument(
        "--sklearn-sets", action="store_true",
        help="benchmark out-of-fold predict_proba of gradient boosting, random "
        "forest, naive Bayes and an SVC on scikit-learn's breast cancer and digits "
        "data (8 sets; built without network on first use, then cached in ~/.cache/skcal) "
        "instead of the bundled sets; with --data or --dataset, in addition to those",
    )
    for flag, text in (
        ("--full", "the full sweep: every method and every installed peer, 1000 "
         "bootstrap resamples, 3 timed runs per method (minutes); the default "
         "runs the methods of DEFAULT_METHODS with 200 resamples and 1 timed run"),
        ("--wide", "print every column (library, classwise ECE, predict time, every "
         "interval); the default table fits 120 columns"),
        ("--quiet", "no progress bars (neither skcal's nor the peer libraries'); the "
         "default when stderr is not a terminal"),
    ):
        b.add_argument(flag, action="store_true", help=text)
    add_subcommands(sub)
    return parser


def _load(args):
    from .datasets import list_datasets, load_logits

    for flag, given, keys in (("--data", args.data, [Path(p).resolve() for p in args.data]),
                              ("--dataset", args.dataset, args.dataset)):
        twice = next((g for i, g in enumerate(given) if keys[i] in keys[:i]), None)
        if twice is not None:
            raise _UserError(f"{flag} names {twice} more than once (a data set counts once)")
    datasets = [_load_file(path, random_state=args.seed, label_column=args.label_column,
                           logit_columns=args.logit_columns, input_type=args.input_type,
                           ignore_columns=args.ignore_columns) for path in args.data]
    names = list(args.dataset)
    if not names and not args.data and not args.sklearn_sets:
        names = [FAST_DATASET] if args.fast else list_datasets()
    datasets.extend(load_logits(n) for n in names)
    if args.sklearn_sets:
        from .benchmark._sklearn_sets import sklearn_sets

        datasets.extend(sklearn_sets(random_state=args.seed))
    for d in datasets:
        classes = np.unique(d.y_val)
        if len(classes) < 2:
            names = d.info.get("classes")  # a file's text labels, by column
            label = int(classes[0]) if names is None else repr(names[int(classes[0])])
            raise _UserError(
                f"{d.info.get('source', d.name)}: the calibration split holds "
                f"labels of one class only ({label}); calibration needs "
                "at least 2 classes")
    seen = set()
    for d in datasets:  # make names unique for the table and the PNG files
        base, i = d.name, 2
        while d.name in seen:
            d.name = f"{base}_{i}"
            i += 1
        seen.add(d.name)
    return datasets


def _load_file(path, **kwargs):
    """:func:`skcal.datasets.load_logits_file`, its errors and warnings one line
    each; its scores read as ``input_type`` (``--input-type``), the
    probabilities-as-logits warning in the words of the other commands."""
    from .datasets import load_logits_file
    from .utils.validation import ProbabilitiesAsLogitsWarning

    def text(w):
        if not issubclass(w.category, ProbabilitiesAsLogitsWarning):
            return w.message
        # said once, here: the benchmark's fits on this set do not repeat it
        d.info["warned"] = [*d.info.get("warned", []), ProbabilitiesAsLogitsWarning]
        return f"{path}: {_PROBA_WARNING}"

    with cli_messages("benchmark", (OSError, ValueError), text):
        d = load_logits_file(path, **kwargs)
    return d


def _file_name(name):
    """A data set name made safe for a file name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip("_")


def _matched_to(data, shifted, explicit):
    """``shifted`` with its logit columns (and labels) in the order of
    ``data``'s, matched by name with the check of ``skcal apply``: a file
    without column names is taken by position, other names are an error."""
    from sklearn.utils import Bunch

    names = data.info.get("columns")
    named = names is not None
    if not named:  # matched to the classes: text labels, else 0..K-1
        names = [str(c) for c in data.info.get("classes", range(data.n_classes))]
    source = Path(data.info.get("source", data.name))
    table = Bunch(columns=shifted.info.get("columns"), explicit_columns=explicit,
                  path=Path(shifted.info.get("source", shifted.name)).name)
    if table.columns is not None and len(table.columns) != len(names):
        return shifted  # with_shift_data refuses the class count
    order = column_order(
        table, names, named=named, fitted="the calibrators were fitted",
        one_score=not named and source.suffix.lower() in (".csv", ".parquet"))
    if order is None:
        return shifted
    inverse = np.argsort(order)  # old column -> new column
    out = Bunch(**shifted)
    out.info = {**shifted.info, "columns": [table.columns[i] for i in order]}
    if "classes" in out.info:
        out.info["classes"] = [shifted.info["classes"][i] for i in order]
    for split in ("val", "test"):
        out[f"logits_{split}"] = np.asarray(shifted[f"logits_{split}"])[:, order]
        out[f"y_{split}"] = inverse[np.asarray(shifted[f"y_{split}"])]
    return out


def _shifted(args, datasets):
    """Shifted copies of the data sets asked for by --shift-data / --label-shift."""
    from .benchmark._shift import with_label_shift, with_shift_data

    out = []
    if args.shift_data:
        if len(datasets) != 1:
            raise _UserError("--shift-data needs exactly one data set to fit on "
                             f"(--data or --dataset), got {len(datasets)}")
        sd = _load_file(args.shift_data, random_state=args.seed,
                        label_column=args.label_column, logit_columns=args.logit_columns,
                        input_type=args.input_type, ignore_columns=args.ignore_columns)
        sd = _matched_to(datasets[0], sd, args.logit_columns is not None)
        with cli_messages("benchmark"):
            out.append(with_shift_data(datasets[0], sd))
    if args.label_shift is not None:
        for d in datasets:
            try:
                out.extend(with_label_shift(d, args.label_shift, args.seed, draw)
                           for draw in range(args.shift_draws))
            except ValueError as exc:
                raise _UserError(f"{d.name}: {exc}") from None
    return out


@contextlib.contextmanager
def _peer_bars_silenced(silence):
    """Disable every tqdm bar while the benchmark runs, when ``silence``.

    Peer libraries (netcal's fits) draw their own tqdm bars on stderr, one
    per fit: with ``--quiet`` or a non-terminal stderr (a CI log) they would
    fill screens. ``tqdm.std.tqdm`` is the base of every tqdm class, so its
    ``__init__`` gets ``disable=True``; restored on exit.
    """
    try:
        import tqdm.std
    except ImportError:
        tqdm = None
    if not silence or tqdm is None:
        yield
        return
    cls = tqdm.std.tqdm
    raw = cls.__dict__["__init__"]  # a descriptor (tqdm wraps it): restored as is
    original = cls.__init__

    @functools.wraps(original)
    def init(self, *args, **kwargs):
        kwargs["disable"] = True
        original(self, *args, **kwargs)

    cls.__init__ = init
    try:
        yield
    finally:
        cls.__init__ = raw


def _refuse_unused_options(args):
    """Refuse benchmark options that the other options leave nothing to act on.

    An option that cannot be honoured is a usage error, never ignored: the
    column options and --input-type read --data and --shift-data files (the
    bundled sets have no columns), --shift-draws counts --label-shift draws,
    and --fast (no peers, one set) contradicts --full (every method and peer).
    """
    if args.fast and args.full:
        raise _UserError("--fast and --full contradict each other (--fast: no peers, "
                         "one data set; --full: every method and installed peer); drop "
                         "one of them")
    for flag, value, reads in (
        ("--label-column", args.label_column, args.data or args.shift_data),
        ("--logit-columns", args.logit_columns, args.data or args.shift_data),
        ("--ignore-columns", args.ignore_columns, args.data or args.shift_data),
        ("--input-type", args.input_type, args.data or args.shift_data),
    ):
        if value is not None and not reads:
            scores = flag == "--input-type"
            raise _UserError(
                f"{flag} applies to the files of --data or --shift-data, and none is "
                "given (the bundled and --sklearn-sets data sets "
                f"{'hold logits' if scores else 'have no columns to choose'}); "
                f"drop {flag} or give a file")
    if args.shift_draws is not None and args.label_shift is None:
        raise _UserError("--shift-draws counts the draws of --label-shift, which is "
                         "not given; add --label-shift ALPHA or drop --shift-draws")
    args.shift_draws = 5 if args.shift_draws is None else args.shift_draws


def _benchmark(args):
    from .benchmark import _benchmark as bm
    from .benchmark import _decide
    from .benchmark._shift import format_shift_table

    _refuse_unused_options(args)
    out_dir = check_output_folder(args.output) if args.output else None
    peers = not (args.no_peers or args.fast)
    if args.resamples is None:
        args.resamples = 1000 if args.full else 200
    if args.repeats is None:
        args.repeats = 3 if args.full else 1
    methods = None if args.full else bm.default_methods(peers=peers)
    if args.methods is not None:
        given = [m.strip() for m in args.methods.split(",")]
        known = bm.available_methods(peers=True)
        if not any(given):
            raise _UserError(f"--methods is empty; choose from {', '.join(known)}")
        if not all(given):
            raise _UserError(f"--methods has an empty name in {args.methods!r}")
        # skcal fit's names of the wrappers (smoothed) name their rows here
        methods = [bm.METHOD_ALIASES.get(m, m) for m in given]
        repeated = sorted({m for m in methods if methods.count(m) > 1})
        if repeated:
            aliases = sorted({a for a in given if bm.METHOD_ALIASES.get(a) in repeated})
            raise _UserError(
                f"--methods names {', '.join(repeated)} more than once" + "".join(
                    f" ({a} is skcal fit's name of {bm.METHOD_ALIASES[a]})"
                    for a in aliases))
        unknown = [m for m in methods if m not in known and m != "auto"]
        if unknown:
            raise _UserError(f"unknown method(s) {', '.join(unknown)}; choose from "
                             f"{', '.join(known)}")
        methods = [m for m in methods if m != "auto"]  # always run (recommend=True)
        if not peers:
            own = bm.available_methods(peers=False)
            excluded = [m for m in methods if m not in own]
            if excluded:
                flag = "--no-peers" if args.no_peers else "--fast"
                raise _UserError(f"{flag} excludes the peer method(s) "
                                 f"{', '.join(excluded)} named in --methods; drop "
                                 f"{flag} or those methods")
    has_matplotlib = True
    if args.output:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            has_matplotlib = False
    datasets = _load(args)
    if out_dir is not None:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _UserError(f"cannot create output folder {out_dir}: {exc}") from None
    for d in datasets:
        if args.resamples and len(d.y_test) < 2:
            raise _UserError(
                f"{d.name}: the test split has {len(d.y_test)} row; a bootstrap interval "
                "needs at least 2 (pass --resamples 0 for no intervals)")
        absent = np.setdiff1d(np.unique(d.y_test), np.unique(d.y_val))
        if len(absent):
            print(f"skcal benchmark: warning: {d.name}: class(es) "
                  f"{absent[:10].tolist()} of the test split never occur in the "
                  "calibration split; the calibrators fit them without examples",
                  file=sys.stderr)
    shifted = _shifted(args, datasets)
    show_bar = not args.quiet and sys.stderr.isatty()

    def log(line):
        if not args.quiet:
            print(f"skcal benchmark: {line}", file=sys.stderr, flush=True)

    with _peer_bars_silenced(not show_bar):
        rows = bm.run_benchmark(
            datasets + shifted, methods, peers=peers, random_state=args.seed,
            progress=show_bar, keep_proba=out_dir is not None,
            n_resamples=args.resamples, n_repeats=args.repeats, recommend=True, log=log)
    by_name = {d.name: d for d in datasets + shifted}
    base_names = {d.name for d in datasets}
    recs = {r["dataset"]: r["recommendation"] for r in rows if "recommendation" in r}
    base_rows = [r for r in rows if r["dataset"] in base_names]
    summary = _decide.summarize(base_rows, n_resamples=max(args.resamples, 200),
                                random_state=args.seed)
    # the shifted copies are summarised below (all rows go to the CSV/Markdown)
    print(bm.format_table(base_rows, "text", by_name, wide=args.wide,
                          recommendations=recs))
    if len(base_names) > 1:
        print(f"Across the {len(base_names)} data sets (proper scores first)\n")
        print(_decide.format_summary(summary))
        print()
    if shifted:
        print("Under shift (change = shifted - unshifted test split; the NLL change "
              "also reflects the new class mix, the ECE change the calibration)\n")
        print(format_shift_table(rows, shifted))
    print(bm.timing_note(args.repeats))
    failed = bm.failed_datasets(rows)
    if failed:  # no method could calibrate it: bad input, not a method bug
        name, status = next(iter(failed.items()))
        more = f" (and {len(failed) - 1} more data set(s))" if len(failed) > 1 else ""
        raise _UserError(f"no calibration method could be fitted on {name}{more}: "
                         f"{status[len('error: '):]}")
    if out_dir is not None:
        intervals = (f" Intervals: {args.resamples} bootstrap resamples of the test "
                     "split." if args.resamples else "")
        md = (
            "# skcal benchmark\n\nFitted on the calibration split, scored on "
            "the test split. ECE: 15 equal-width bins. "
            + bm.timing_note(args.repeats)
            + f"{intervals} Seed: {args.seed}.\n\n"
            + bm.format_table(rows, "markdown", by_name, wide=True, recommendations=recs)
        )
        if len(base_names) > 1:
            md += "\n## Across data sets\n\n" + _decide.format_summary(summary, "markdown") + "\n"
        if shifted:
            md += "\n## Under shift\n\n" + format_shift_table(rows, shifted, "markdown")
        (out_dir / "benchmark.md").write_text(md, encoding="utf-8")
        bm.write_csv(rows, out_dir / "benchmark.csv")
        _decide.write_summary_csv(summary, out_dir / "benchmark_summary.csv")
        written = ["benchmark.md", "benchmark.csv", "benchmark_summary.csv"]
        # per set: the recommended method and those within noise of it, the
        # NLL change of every method; across sets: the win rates
        first = [s for s in shifted if s.shift.get("draw", 0) == 0]
        for d in datasets + first if has_matplotlib else []:
            mine = [r for r in rows if r["dataset"] == d.name]
            png = f"reliability_{_file_name(d.name)}.png"
            _decide.plot_recommended_reliability(
                mine, d.y_test, out_dir / png, title=f"{d.name}: test split",
                n_bins=bm.N_BINS)  # the bins of the ECE in the panel titles
            written.append(png)
            if any(np.isfinite(r.get("nll_change_low", np.nan)) for r in mine):
                png = f"nll_change_{_file_name(d.name)}.png"
                _decide.plot_nll_change(mine, out_dir / png,
                                        title=f"{d.name}: test NLL change vs uncalibrated")
                written.append(png)
        if has_matplotlib and len(base_names) > 1:
            _decide.plot_win_rates(summary, out_dir / "win_rates.png",
                                   title=f"Win rates across {len(base_names)} data sets")
            written.append("win_rates.png")
        print(f"wrote {', '.join(written)} to {out_dir}{os.sep}")
        if not has_matplotlib:
            print("skcal benchmark: notice: matplotlib is not installed, so the "
                  "reliability diagrams (PNG) were skipped; pip install 'skcal[plot]' "
                  "to get them", file=sys.stderr)
    return 0


def _repeated_option(parser, command, argv):
    """The first single-value option of ``command`` that ``argv`` gives twice, or None.

    argparse keeps the last of repeated ``--opt value`` pairs without a word;
    options that collect several values (``--param``, ``--data``) may repeat.
    """
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    tokens = list(argv)
    if "--" in tokens:
        tokens = tokens[:tokens.index("--")]
    for action in sub.choices[command]._actions:
        if type(action) is not argparse._StoreAction or not action.option_strings:
            continue
        n = sum(t in action.option_strings or t.split("=", 1)[0] in action.option_strings
                for t in tokens if t.startswith("-"))
        if n > 1:
            return action.option_strings[-1]
    return None


def main(argv=None):
    """Run the ``skcal`` command line.

    Parameters
    ----------
    argv : list of str or None, default=None
        Arguments without the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, including when some methods (e.g. a peer library)
        raise: they become error rows of the table; 2 for a usage error or
        bad input (missing file, bad format, shape mismatch, a calibration
        split with a single class, a data set on which every method raised),
        reported as one line on stderr
        without a traceback; 141 (128 + SIGPIPE), silently, when the reader
        of stdout closes it (``skcal benchmark | head``).
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage + message
        return int(exc.code or 0)
    repeated = _repeated_option(parser, args.command, sys.argv[1:] if argv is None else argv)
    if repeated:
        print(f"skcal {args.command}: error: {repeated} is given more than once (it takes "
              "one value)", file=sys.stderr)
        return 2
    try:
        check_num_args(parser, args)
        status = _benchmark(args) if args.command == "benchmark" else run(args)
        sys.stdout.flush()  # a broken pipe here, not in the interpreter's exit
        return status
    except _UserError as exc:
        print(f"skcal {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("skcal: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of stdout went away (``skcal benchmark | head``): stop
        # quietly, as Unix tools do; stdout points at devnull so that the
        # interpreter's final flush does not raise again (Python's signal docs)
        with contextlib.suppress(OSError, ValueError, AttributeError):  # a test's capture
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, a shell's status for a tool killed by it


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
