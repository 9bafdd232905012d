"""CPU-time passes of fit / predict_proba, before and after, alternated (robust to machine load).

    python benchmarks/cpu_time_compare.py 100000x100 PlattScaler,IsotonicScaler 2 BEFORE_TREE AFTER_TREE

Each child process times ``fit`` (best of 2) and ``predict_proba`` (1) with
``time.process_time`` against the reference pass (best over three chunk sizes)
timed the same way, with BLAS and OpenMP on one thread, so that other
processes on a shared machine change the figures much less than wall-clock
ratios. Arguments: size, calibrators, rounds, and the two source trees.
"""
import os
import subprocess
import sys

CHILD = r'''
import sys, time, warnings, json
sys.path.insert(0, {tree!r}); sys.path.insert(1, {bench!r})
import numpy as np, skcal
from _common import make_logits, numpy_pass
assert skcal.__file__.startswith({tree!r})
n, k = {n}, {k}
Z, y = make_logits(n, k, seed=0)
def cpu(f, r):
    b = 1e9
    for _ in range(r):
        t = time.process_time(); f(); b = min(b, time.process_time() - t)
    return b
tp = min(cpu(lambda: numpy_pass(Z, y, c), 2) for c in (1 << 19, 1 << 20, 1 << 21))
out = {{}}
for name in {names!r}:
    cls = getattr(skcal, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls().fit(Z, y)
        tf = cpu(lambda: cls().fit(Z, y), 2)
        tpr = cpu(lambda: est.predict_proba(Z), 1)
    out[name] = (tf / tp, tpr / tp)
print(json.dumps(out))
'''

n, k = map(int, sys.argv[1].split("x"))
names = sys.argv[2].split(",")
before, after = (os.path.abspath(t) for t in sys.argv[4:6])
bench = os.path.dirname(os.path.abspath(__file__))
for rnd in range(int(sys.argv[3])):
    for label, tree in (("before", before), ("after", after)):
        code = CHILD.format(tree=tree, bench=bench, n=n, k=k, names=names)
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        print(sys.argv[1], label, r.stdout.strip() or r.stderr[-500:], flush=True)
