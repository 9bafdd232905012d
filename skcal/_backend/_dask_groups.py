"""Many dask fits in lockstep: one distributed job per round for all of them.

:class:`skcal.GroupedCalibrator` fits one calibrator per group. On dask
arrays, fitting them one after the other would cost one job per pass *and
per group*. Here every fit (the global one and one per group) runs its own,
unchanged client code (``est.fit``) in a *participant* thread; the threads
run strictly one at a time, each until it needs a dask result. The
coordinator (the calling thread) then serves the requests of all waiting
fits with **one** dask computation, and resumes them.

Every data step of a fit on its own rows, or on a systematic subsample of
them (``Z[::s]``, as the warm starts take), is a *grouped request*, served
by **one task per row block of the full arrays** whatever the number of
groups: the task sorts its rows by group code once and runs every
requesting fit's block function on that fit's rows (with that fit's
parameters). The kinds of request:

- sums (:func:`skcal._backend._dask._reduce`: the temperature derivatives,
  the vector-scaling gradient, Hessian or Hessian-vector product, the NLL of
  a line-search trial, the label counts, the weight total) and maxima (the
  weights' maximum, the logit scale, the column ranges), packed into one
  float64 row per block and tree-reduced together (sums added, maxima
  maxed);
- row gathers (a subsample's local copy, the per-class score columns of the
  one-vs-rest calibrators), the pieces of all groups returned with the
  block's sums and concatenated on the client.

A fit's arrays are recognised by their dask names: the validated logits,
encoded labels and weights a fit hands to ``_fit`` are registered, and so
are their row slices ``[::s]`` (the fits take them with the backend's
``row_stride``, which records them for the fit's participant); the raw labels and weights of a group are registered for the
label and weight checks. Any other computation a fit asks for is merged,
graph by graph, into the same job (correct, but one set of tasks per group).

So the number of dask computations is the largest number of data steps of
one fit (plus the group-id job), and the number of tasks per computation
does not grow with the number of groups. Groups whose fits have converged
leave; the others go on. Each fit's code, parameters, stopping rule and sums
are those of its sequential dask fit (only the order of the float64 sums
can differ).

Local copies (:data:`skcal._backend._dask.LOCAL_MAX_BYTES`) share one budget
of that size across all participants, so the client never holds more than
the sequential path would.
"""

import threading

import dask
import dask.array as da
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
        #: dask name -> (n_rows, stride): the fit's validated (Z, y, sample_weight)
        #: (stride 1) and their row slices ``[::stride]``
        self.views = {}
        #: names of the group's raw labels and weights (label and weight checks)
        self.raw_y = self.raw_sw = None
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

    def register(self, Z, y, sw):
        """Record ``(Z, y, sw)`` as the fit's validated calibration arrays."""
        for a in (Z, y, sw):
            if a is not None:
                self.views[a.name] = (a.shape[0], 1)

    def derive(self, a, index, out):
        """Record ``out = a[index]`` when it is a row slice ``[::s]`` of a view."""
        got = self.views.get(getattr(a, "name", None))
        if got is None or not isinstance(out, da.Array):
            return
        n, stride = got
        if isinstance(index, tuple):
            if not index or any(
                not (isinstance(i, slice) and i == slice(None)) for i in index[1:]
            ):
                return
            index = index[0]
        if not isinstance(index, slice):
            return
        try:
            start, stop, step = index.indices(n)
        except TypeError:
            return
        if start != 0 or stop != n or step < 1 or out.shape[0] != -(-n // step):
            return
        self.views[out.name] = (out.shape[0], stride * step)

    def view(self, Z=None, y=None, sw=None):
        """The stride of ``(Z, y, sw)`` (None entries: not used), or None if not a view.

        Also None when weights are asked for but the fit has none.
        """
        stride = None
        for a in (Z, y, sw):
            if a is None:
                continue
            got = self.views.get(getattr(a, "name", None))
            if got is None or got[0] != a.shape[0] or stride not in (None, got[1]):
                return None
            stride = got[1]
        if sw is not None and self.coordinator.arrays[2] is None:
            return None
        return stride

    def grouped(self, kind, fn, args, stride, uses, scaled=True, size=0, is_max=None):
        """One grouped request (:meth:`Coordinator._grouped`); returns its result."""
        return self.call(
            ("grouped", kind, fn, args, stride, uses, scaled, size, is_max)
        )

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

    def __init__(self, Z, y, sw, codes, ranks, real_get, classes=None):
        self.arrays = (Z, y, sw, codes, ranks)
        self.classes = classes
        self.real_get = real_get
        self.ready = threading.Event()
        self.budget = _dask.LOCAL_MAX_BYTES
        self.n_rounds = 0
        #: the number of grouped requests served in each round
        self.grouped_per_round = []
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
        grouped = [
            (p, req) for p, req in zip(participants, requests) if req[0] == "grouped"
        ]
        for p, req in zip(participants, requests):
            if req[0] == "graph":
                _, expr, k = req
                graph.update(dict(expr.__dask_graph__()))
                slots.append(len(keys))
                keys.append(k)
            else:
                slots.append(None)
        if grouped:
            collection, unpack = self._grouped(grouped)
            expr, k = _captured(collection)
            graph.update(dict(expr.__dask_graph__()))
            g_at = len(keys)
            keys.extend(k)
        self.n_rounds += 1
        self.grouped_per_round.append(len(grouped))
        out = self.real_get(graph, keys)
        served = unpack(out[g_at:]) if grouped else {}
        return [
            out[slot] if slot is not None else served[id(p)]
            for p, slot in zip(participants, slots)
        ]

    def _grouped(self, grouped):
        """One task per row block for all grouped requests, and their unpacking.

        Returns ``(collection, unpack)``: the delayed objects to compute (the
        tree-reduced float64 row, then each block's gathered pieces when a
        request gathers rows) and a function of their computed values giving
        each participant's result.
        """
        Z, y, sw, codes, ranks = self.arrays
        plan, sizes, masks = [], [], []
        for p, req in grouped:
            _, kind, fn, args, stride, uses, scaled, size, is_max = req
            top = p.weight_top if scaled else None
            plan.append((p.code, top, stride, uses, fn, args, kind == "gather"))
            if kind != "gather":
                sizes.append(size)
                masks.append(np.zeros(size, bool) if is_max is None else is_max)
        mask = np.concatenate(masks) if masks else np.zeros(0, bool)
        plan = tuple(plan)
        gathering = any(step[-1] for step in plan)
        idx = da.arange(Z.shape[0], chunks=(Z.chunks[0],), dtype=np.int64)
        parts = [
            a.to_delayed().ravel()
            for a in (Z, y, codes, ranks, idx) + (() if sw is None else (sw,))
        ]
        block = dask.delayed(_grouped_block, pure=True, nout=2)
        sums, gathers = [], []
        for blocks in zip(*parts):
            s, g = block(*blocks, plan=plan)
            sums.append(s)
            gathers.append(g)
        combine = dask.delayed(_combine, pure=True)
        while len(sums) > 1:
            sums = [
                combine(mask, *sums[i:i + _dask.SPLIT_EVERY])
                for i in range(0, len(sums), _dask.SPLIT_EVERY)
            ]
        collection = [sums[0]] + (gathers if gathering else [])

        def unpack(values):
            flat, pieces = values[0], values[1:]
            served, at, j = {}, 0, 0
            for i, (p, req) in enumerate(grouped):
                kind = req[1]
                if kind == "gather":
                    outs = [piece[j] for piece in pieces]
                    served[id(p)] = tuple(
                        None if v[0] is None else np.concatenate(v)
                        for v in zip(*outs)
                    )
                    j += 1
                else:
                    size = req[7]
                    served[id(p)] = np.asarray(flat[at:at + size], dtype=np.float64)
                    at += size
            return served

        return collection, unpack


def _captured(collection):
    """The optimised (expression, keys) that ``dask.compute`` would schedule."""
    got = []

    def capture(expr, keys, **kwargs):
        got.append((expr, keys))
        return [None] * len(keys)

    dask.compute(*collection, scheduler=capture)
    return got[0]


def _combine(mask, *rows):
    """Sum of the rows, except the entries of ``mask``: their maximum."""
    total = np.sum(rows, axis=0)
    if mask.any():
        total[mask] = np.max(rows, axis=0)[mask]
    return total


def _grouped_block(Zb, yb, cb, rb, ib, wb=None, *, plan):
    """One row block: every request's block function on its fit's rows.

    Returns ``(row, gathers)``: the float64 sums and maxima of the reducing
    requests, packed, and the gathered arrays of the others (in plan order).
    """
    Zb, cb = np.asarray(Zb), np.asarray(cb)
    if Zb.ndim == 2 and Zb.shape[0] != cb.shape[0]:  # pragma: no cover
        raise ValueError("row blocks of unequal lengths")
    order = np.argsort(cb, kind="stable")  # rows of a group keep their order
    sorted_codes = cb[order]
    row, gathers = [], []
    for code, top, stride, (use_y, use_w), fn, args, gather in plan:
        if code < 0:
            rows = None if stride == 1 else np.flatnonzero(ib % stride == 0)
        else:
            lo, hi = np.searchsorted(sorted_codes, [code, code + 1])
            rows = order[lo:hi]
            if stride > 1:
                rows = rows[rb[rows] % stride == 0]
        take = (lambda v: v) if rows is None else (lambda v: v[rows])
        Zg = take(Zb)
        yg = take(yb) if use_y else None
        wg = take(wb) if use_w and wb is not None else None
        if wg is not None and top is not None:
            wg = wg / top
        if gather:
            gathers.append(fn(Zg, yg, wg, *args))
        else:
            row.append(_dask._packed(Zg, yg, wg, block_fn=fn, args=args)[0])
    return (np.concatenate(row) if row else np.zeros(0)), gathers


def _rank_block(cb, table):
    """Each row's rank within its group (over all rows), -1 for code -1.

    ``table``: the block's group codes ``c`` present, then the number of rows
    of each in the earlier blocks (both of length ``m``).
    """
    cb = np.asarray(cb)
    m = table.shape[0] // 2
    present, before = table[:m], table[m:]
    order = np.argsort(cb, kind="stable")
    sc = cb[order]
    first = np.searchsorted(sc, sc, side="left")
    rank = np.empty(cb.shape[0], dtype=np.int64)
    rank[order] = np.arange(cb.shape[0]) - first
    pos = np.clip(np.searchsorted(present, cb), 0, max(m - 1, 0))
    if m:
        rank += before[pos]
    rank[cb < 0] = -1
    return rank


def group_ranks(codes, block_code_counts):
    """Lazy rank of each row within its group, from the rows per block and code.

    ``block_code_counts[b]``: a dict code -> rows of that code in row block
    ``b`` (codes >= 0). The small per-block tables travel in the graph (two
    int64 per group present in a block).
    """
    tables, seen = [], {}
    for counts in block_code_counts:
        present = np.array(sorted(counts), dtype=np.int64)
        before = np.array([seen.get(c, 0) for c in present], dtype=np.int64)
        for c in present.tolist():
            seen[c] = seen.get(c, 0) + counts[c]
        tables.append(np.concatenate([present, before]))
    sizes = tuple(len(t) for t in tables)
    table = da.from_array(
        np.concatenate(tables) if tables else np.zeros(0, np.int64), chunks=(sizes,)
    )
    out = da.blockwise(
        _rank_block, "i", codes, "i", table, "i", align_arrays=False,
        dtype=np.int64, meta=np.empty(0, np.int64),
    )
    out._chunks = codes.chunks  # (the table's blocks pair with codes' by index)
    return out


def fit_lockstep(fits, Z, y, sw, codes, ranks, like, classes=None):
    """Run ``fits`` (``(code, fn)`` pairs) in lockstep; return the coordinator.

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
    ranks : dask array of shape (n_samples,), int64
        Each row's rank within its group (:func:`group_ranks`).
    like : dask array
        A collection whose default scheduler runs the rounds.
    classes : ndarray, optional
        The labels encoded in ``y`` (the groups' label checks).

    Returns
    -------
    coordinator : Coordinator
        With ``n_rounds``, the number of dask computations.
    """
    real_get = get_scheduler(collections=[like])
    coord = Coordinator(Z, y, sw, codes, ranks, real_get, classes)

    def hook(expr, keys, **kwargs):
        p = getattr(_dask._STATE, "participant", None)
        if p is None:
            return real_get(expr, keys, **kwargs)
        return p.call(("graph", expr, keys))

    participants = [Participant(coord, code, fn) for code, fn in fits]
    with dask.config.set(scheduler=hook):
        coord.run(participants)
    return coord
