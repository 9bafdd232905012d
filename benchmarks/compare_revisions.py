"""Fit and predict_proba time of every calibrator, in passes, for two source trees.

Runs the same measurement on two checkouts of skcal, alternating between
them in child processes so that both see the same machine load, and prints
one table with the ratio after / before. Used for refactors that must not
change speed (issue 10: at most 10 % regression).

    git worktree add /tmp/skcal-before <old commit>
    python benchmarks/compare_revisions.py /tmp/skcal-before . --sizes 1000000x10,100000x100

A "pass" is one stable log-softmax + NLL evaluation over the matrix
(``_common.pass_time``), measured in the same child process.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, warnings
sys.path.insert(0, {tree!r})
sys.path.insert(1, {bench!r})
import skcal
from _common import best_time, make_logits, pass_time
assert skcal.__file__.startswith({tree!r}), skcal.__file__
n, k = {n}, {k}
Z, y = make_logits(n, k, seed=0)
t_pass, _ = pass_time(Z, y, repeat={repeat})
out = {{}}
for name in {names!r}:
    cls = getattr(skcal, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_fit, est = best_time(lambda: cls().fit(Z, y), repeat={repeat})
        t_pred, _ = best_time(lambda: est.predict_proba(Z), repeat={repeat})
    out[name] = (t_fit / t_pass, t_pred / t_pass)
print(json.dumps(out))
"""


def _size(text):
    n, k = text.lower().split("x")
    return int(n), int(k)


def measure(tree, n, k, names, repeat):
    code = CHILD.format(tree=str(Path(tree).resolve()), bench=str(HERE), n=n, k=k,
                        names=names, repeat=repeat)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", help="source tree of the old revision")
    ap.add_argument("after", help="source tree of the new revision")
    ap.add_argument("--sizes", default="1000000x10,100000x100")
    ap.add_argument("--calibrators",
                    default="TemperatureScaler,VectorScaler,PlattScaler,IsotonicScaler")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument("--rounds", type=int, default=2,
                    help="alternate before/after this many times; keep the best")
    args = ap.parse_args(argv)
    names = args.calibrators.split(",")
    print("| size | calibrator | fit/pass before | after | ratio | "
          "predict/pass before | after | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes.split(","):
        n, k = _size(size)
        best = {"before": {}, "after": {}}
        for _ in range(args.rounds):
            for label, tree in (("before", args.before), ("after", args.after)):
                for name, (f, p) in measure(tree, n, k, names, args.repeat).items():
                    old = best[label].get(name, (float("inf"), float("inf")))
                    best[label][name] = (min(old[0], f), min(old[1], p))
        for name in names:
            (fb, pb), (fa, pa) = best["before"][name], best["after"][name]
            print(f"| {n:,}x{k:,} | {name} | {fb:.2f} | {fa:.2f} | {fa / fb:.2f} | "
                  f"{pb:.2f} | {pa:.2f} | {pa / pb:.2f} |", flush=True)


if __name__ == "__main__":
    main()
