"""Many dask fits in lockstep: one distributed job per round for all of them.

:class:`skcal.GroupedCalibrator` fits one calibrator per group. On dask
arrays, fitting them one after the other would cost one job per pass *and
per group*. Here every fit (the global one and one per group) runs its own,
unchanged client code (``est.fit``) in a *participant* thread; the threads
run strictly one at a time, each until it needs a dask result. The
coordinator (the calling thread) then serves the requests of all waiting
fits with **one** dask computation, and resumes them:

- a kernel pass (:func:`skcal._backend._dask._reduce`: the
  temperature derivatives, the vector-scaling gradient, Hessian or
  Hessian-vector product, the NLL of a line-search trial) on a fit's own
  calibration set becomes part of **one blockwise map over the row blocks of
  the full arrays**: each block task sorts its rows by group code once and
  runs every requesting group's block kernel on that group's rows (with
  that fit's parameters), and the packed float64 sums of all groups are
  tree-reduced together. A pass costs one task per row block, whatever the
  number of groups;
- any other computation a fit asks for (its label and weight checks, the
  copy of a warm-start subsample, the per-class columns gathered by the
  one-vs-rest calibrators) is merged, graph by graph, into the same job.

So the number of dask computations is the largest number of passes of one
fit (plus the group-id pass), not their sum. Groups whose fits have
converged leave; the others go on. Each fit's code, parameters, stopping
rule and sums are those of its sequential dask fit (only the order of the
float64 sums can differ).

Local copies (:data:`skcal._backend._dask.LOCAL_MAX_BYTES`) share one budget
of that size across all participants, so the client never holds more than
the sequential path would.
"""

import threading

import dask
import numpy as np
from dask.base import get_scheduler

from . import _dask

__all__ = ["fit_lockstep"]


class _Abort(BaseException):
    """Unwinds the other participants after one fit failed."""


class Participant:
    """One fit, run in its own thread; ``code`` is its group code (-1: all rows)."""

    def __init__(self, coordinator, code, fn):
        self.coordinator = coordinator
        self.code = code
        self.fn = fn
        #: names of the fit's validated (Z, y, sample_weight) arrays
        self.key = None
        #: the weights' divisor (relative weights) or None
        self.weight_top = None
        self.cache = {}
        self.local_bytes = 0
        self.request = None
        self.result = None
        self.error = None
        self.done = False
        self._go = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    # ------------------------------------------------ in the participant thread
    def _run(self):
        _dask._STATE.participant = self
        self._go.wait()
        self._go.clear()
        try:
            self.fn(self)
        except _Abort:
            pass
        except BaseException as e:  # handed to the coordinator, re-raised there
            self.error = e
        finally:
            self.done = True
            self.coordinator.release(self)
            self.coordinator.ready.set()

    def call(self, request):
        """Post a request, wait for the coordinator's round, return its result."""
        self.request = request
        self.coordinator.ready.set()
        self._go.wait()
        self._go.clear()
        if self.result is _ABORT:
            raise _Abort()
        result, self.result = self.result, None
        return result

    def owns(self, Z, y, sw):
        """Whether (Z, y, sw) are this fit's validated calibration arrays."""
        return self.key is not None and self.key == _dask._key(Z, y, sw)

    def reserve(self, nbytes):
        """Take ``nbytes`` of the shared local-copy budget (False: not available)."""
        return self.coordinator.reserve(self, nbytes)

    # ------------------------------------------------- in the coordinator thread
    def resume(self, result=None):
        self.result = result
        self.request = None
        self.coordinator.ready.clear()
        self._go.set()
        self.coordinator.ready.wait()


_ABORT = object()


class Coordinator:
    """Runs participants in lockstep; one dask computation per round."""

    def __init__(self, Z, y, sw, codes, real_get):
        self.arrays = (Z, y, sw, codes)
        self.real_get = real_get
        self.ready = threading.Event()
        self.budget = _dask.LOCAL_MAX_BYTES
        self.n_rounds = 0
        self._lock = threading.Lock()

    def reserve(self, p, nbytes):
        with self._lock:
            if nbytes > self.budget:
                return False
            self.budget -= nbytes
            p.local_bytes += nbytes
            return True

    def release(self, p):
        with self._lock:
            self.budget += p.local_bytes
            p.local_bytes = 0
            p.cache.clear()

    def run(self, participants):
        for p in participants:
            p.thread.start()
        live = list(participants)
        results = [None] * len(live)
        while live:
            for p, r in zip(live, results):
                p.resume(r)  # runs p until its next request or its end
            failed = [p for p in live if p.error is not None]
            if failed:
                for p in live:
                    if not p.done:
                        p.resume(_ABORT)
                raise failed[0].error
            live = [p for p in live if not p.done]
            if not live:
                break
            results = self._round([p.request for p in live], live)

    def _round(self, requests, participants):
        """Serve every request with one dask computation."""
        graph, keys, slots = {}, [], []
        passes = [
            (p, req) for p, req in zip(participants, requests) if req[0] == "pass"
        ]
        for p, req in zip(participants, requests):
            if req[0] == "graph":
                _, expr, k = req
                graph.update(dict(expr.__dask_graph__()))
                slots.append(len(keys))
                keys.append(k)
            else:
                slots.append(None)
        if passes:
            expr, k = _captured(self._pass_array([(p.code, p.weight_top, req[1:])
                                                  for p, req in passes]))
            graph.update(dict(expr.__dask_graph__()))
            pass_slot = len(keys)
            keys.append(k)
        self.n_rounds += 1
        out = self.real_get(graph, keys)
        results, at = [], 0
        offsets = {}
        if passes:
            flat = np.asarray(out[pass_slot][0], dtype=np.float64)
            for p, req in passes:
                size = req[3]
                offsets[id(p)] = flat[at:at + size]
                at += size
        for p, req, slot in zip(participants, requests, slots):
            results.append(out[slot] if slot is not None else offsets[id(p)])
        return results

    def _pass_array(self, requests):
        import dask.array as da

        Z, y, sw, codes = self.arrays
        size = sum(r[2][2] for r in requests)
        plan = tuple((code, top, fn, args) for code, top, (fn, args, _) in requests)
        arrays = [Z, "ij", y, "i", codes, "i"] + ([] if sw is None else [sw, "i"])
        rows = da.blockwise(
            _grouped_block, "ic", *arrays, plan=plan, new_axes={"c": size},
            adjust_chunks={"i": 1}, concatenate=True, dtype=np.float64,
            meta=np.empty((0, 0)),
        )
        return rows.sum(axis=0, split_every=_dask.SPLIT_EVERY)


def _captured(collection):
    """The optimised (expression, keys) that ``dask.compute`` would schedule."""
    got = []

    def capture(expr, keys, **kwargs):
        got.append((expr, keys))
        return [None] * len(keys)

    dask.compute(collection, scheduler=capture)
    return got[0]


def _grouped_block(Zb, yb, cb, wb=None, *, plan):
    """One row block: every requesting fit's block sums on its group's rows, packed."""
    order = np.argsort(cb, kind="stable")  # rows of a group keep their order
    sorted_codes = cb[order]
    out = []
    for code, top, block_fn, args in plan:
        if code < 0:
            Zg, yg, wg = Zb, yb, wb
        else:
            lo, hi = np.searchsorted(sorted_codes, [code, code + 1])
            idx = order[lo:hi]
            Zg, yg, wg = Zb[idx], yb[idx], None if wb is None else wb[idx]
        if wg is not None and top is not None:
            wg = wg / top
        out.append(_dask._packed(Zg, yg, wg, block_fn=block_fn, args=args)[0])
    return np.concatenate(out)[None]


def fit_lockstep(fits, Z, y, sw, codes, like):
    """Run ``fits`` (``(code, fn)`` pairs) in lockstep; return the number of rounds.

    Parameters
    ----------
    fits : list of (int, callable)
        ``fn(participant)`` runs one fit; ``code`` is its group code in
        ``codes`` (-1: all rows).
    Z, y, sw : dask arrays
        The validated logits, encoded labels and *unscaled* checked weights
        (or None) of all rows, with equal row chunks.
    codes : dask array of shape (n_samples,), int64
        Each row's group code (-1: a group not fitted on its own).
    like : dask array
        A collection whose default scheduler runs the rounds.
    """
    real_get = get_scheduler(collections=[like])
    coord = Coordinator(Z, y, sw, codes, real_get)

    def hook(expr, keys, **kwargs):
        p = getattr(_dask._STATE, "participant", None)
        if p is None:
            return real_get(expr, keys, **kwargs)
        return p.call(("graph", expr, keys))

    participants = [Participant(coord, code, fn) for code, fn in fits]
    with dask.config.set(scheduler=hook):
        coord.run(participants)
    return coord.n_rounds
