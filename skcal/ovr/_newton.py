"""One batched Newton core for the per-class family (Platt, quadratic, beta, spline).

:func:`newton_batched` minimises ``K`` independent smooth convex objectives of
``p`` parameters each (``K`` one-vs-rest problems, or ``K = 1``) by Newton's
method with an Armijo backtracking line search per problem, optional
non-negativity bounds (a primal active-set method) and one shared stopping
rule. Every round evaluates the trial points of all problems still in a line
search in ONE call of the caller's ``evaluate(cols, theta)``, so a caller that
walks its data once per call (row chunks, all classes at a time) pays one pass
per round whatever ``K``. The core holds no data, no global state and no
caches: the caller owns the objective, the core owns the iteration.

Constants shared by every per-class solver: :data:`RIDGE`, :data:`ARMIJO_C`,
:data:`MIN_STEP`, :data:`PRECISION_ULPS`; by the batched one-vs-rest solvers'
warm starts: :data:`WARM_START_MIN_ROWS`, :data:`WARM_START_ROWS`; and by the
float32 ones (Platt's, beta's): :data:`F32_LOSS_RESOLUTION`, :data:`F32_MIN_TOL`,
:data:`F32_CLIP`, :data:`F32_CHUNK_BYTES`.
"""

import numpy as np

__all__ = ["ARMIJO_C", "F32_CHUNK_BYTES", "F32_CLIP", "F32_LOSS_RESOLUTION",
           "F32_MIN_TOL", "MIN_STEP", "PRECISION_ULPS", "RIDGE", "WARM_START_MIN_ROWS",
           "WARM_START_ROWS", "at_precision_limit", "newton_batched"]

#: Ridge added to the Hessian's diagonal before solving for a step. It changes
#: the step, never the stationary point.
RIDGE = 1e-12
#: Armijo sufficient-decrease constant.
ARMIJO_C = 1e-4
#: Smallest backtracking step (halving from 1).
MIN_STEP = 1e-10
#: A line search that fails while the predicted decrease (half the squared
#: Newton decrement) is below this many ulps of the objective is at the
#: precision limit of the objective itself: the problem counts as converged.
PRECISION_ULPS = 100.0
#: The batched one-vs-rest solvers (Platt's, beta's float32 one) first solve
#: all classes on a systematic subsample of about ``WARM_START_ROWS`` rows
#: (every ``s``-th row) when there are at least ``WARM_START_MIN_ROWS``.
WARM_START_MIN_ROWS = 40_000
WARM_START_ROWS = 8_000
#: float32 solvers: a Newton step whose predicted decrease (half the squared
#: Newton decrement) is at most this may be below what the float32 loss
#: resolves (its rounding is ~1e-9 of ordinary losses, ~1e-6 when many entries
#: have large |f|); such a step is accepted when it decreases the Newton
#: decrement (quadratic-convergence region), larger ones by Armijo.
F32_LOSS_RESOLUTION = 1e-5
#: float32 solvers: the smallest ``tol`` they are used for (their gradients
#: carry float32 rounding of ~1e-9; a smaller tol goes to the float64 solver).
F32_MIN_TOL = 1e-14
#: float32 solvers: ``f`` is clipped to +-this before ``exp(-f)``.
F32_CLIP = 87.0
#: float32 solvers: bytes of one work array's row chunk (four fit in a 2 MiB L2 cache).
F32_CHUNK_BYTES = 1 << 19


def at_precision_limit(decrease, F):
    """Whether a predicted decrease of the objective ``F`` is below its resolution."""
    return decrease <= PRECISION_ULPS * np.spacing(np.maximum(np.abs(F), 1.0))


def _directions(g, H, free):
    """Newton directions ``-H_ff^{-1} g_f`` of many problems (0 on held coordinates).

    ``g`` (m, p), ``H`` (m, p, p) (ridge included), ``free`` (m, p) bool. The
    held coordinates' rows and columns are replaced by the identity (and their
    gradient by 0), so one batched solve serves every working set. A singular
    system (only possible through rounding) gets the diagonal step.
    """
    m, p = g.shape
    if free.all():  # the common case: no masks to build
        gf, Hf = g, H
    else:
        gf = np.where(free, g, 0.0)
        both = free[:, :, None] & free[:, None, :]
        Hf = np.where(both, H, np.eye(p))
    if p == 1:
        return -gf / Hf[:, 0, :]
    if p == 2:  # closed form (faster than a batched LAPACK call)
        a, b, d = Hf[:, 0, 0], Hf[:, 0, 1], Hf[:, 1, 1]
        det = a * d - b * b
        ok = det > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            x0 = np.where(ok, -(d * gf[:, 0] - b * gf[:, 1]) / det, -gf[:, 0] / a)
            x1 = np.where(ok, -(a * gf[:, 1] - b * gf[:, 0]) / det, -gf[:, 1] / d)
        return np.stack([x0, x1], axis=1)
    try:
        return -np.linalg.solve(Hf, gf[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        out = np.empty_like(gf)
        for i in range(m):
            try:
                out[i] = -np.linalg.solve(Hf[i], gf[i])
            except np.linalg.LinAlgError:
                out[i] = -gf[i] / np.diagonal(Hf[i])
        return out


def newton_batched(evaluate, theta, *, start=None, nonneg=None, tol=1e-12, max_iter=100,
                   trial=None, failed_status=None, full_output=False):
    """Minimise ``K`` convex objectives by Newton's method, one evaluation call per round.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(cols, theta_c) -> (F, g, H)``: the objectives (m,), gradients
        (m, p) and Hessians (m, p, p) of the problems ``cols`` (int array of
        length m) at ``theta_c`` (m, p). The ridge :data:`RIDGE` is added here,
        not by the caller.
    theta : ndarray of shape (K, p)
        Start points (feasible: bounded entries ``>= 0``; negative ones are set
        to 0). Not modified.
    start : tuple (F, g, H), optional
        The objectives, gradients and Hessians at ``theta`` when the caller has
        them (e.g. from moments); evaluated otherwise.
    nonneg : ndarray of bool of shape (p,) or (K, p), optional
        Coefficients constrained to be ``>= 0``.
    tol : float, default=1e-12
        A problem stops when half its squared Newton decrement on the free
        coefficients, ``-g' d / 2``, is at most ``tol`` and no held
        coefficient could lower the objective by more than ``tol`` by moving
        alone (``g_j < 0`` and ``g_j^2 / (2 H_jj) > tol``); it then takes
        that last (full) Newton step without evaluating it.
    max_iter : int, default=100
        Largest number of Newton directions per problem.
    trial : callable, optional
        ``trial(cols, theta_c, step, d, slope, theta, F, H) -> (ok, F_c, g_c, H_c)``:
        evaluates the line-search candidates ``theta_c`` (m, p) of problems
        ``cols``, reached by ``step`` (m,) along the directions ``d`` (m, p)
        whose directional derivatives are ``slope`` (m,), from the current
        points ``theta[cols]`` with objectives ``F[cols]`` and the Hessians
        ``H[cols]`` (ridge included) the directions were computed with
        (``theta``, ``F``, ``H``: the core's arrays of all problems; a trial
        may fill a NaN ``F`` it needs), and says which are accepted. A row of ``H_c`` that is NaN
        keeps the current Hessian (a solver may skip recomputing it near the
        optimum); an ``F_c`` that is NaN leaves the objective unknown there. Default: ``evaluate`` and
        Armijo's test ``F_c <= F + ARMIJO_C step slope``. A solver with its
        own acceptance rules (e.g. float32 evaluations that skip the loss of
        certified steps) supplies it.
    failed_status : callable, optional
        ``failed_status(slope, F) -> status array`` of problems whose step fell
        below :data:`MIN_STEP`; default: "converged" at the precision limit
        (:func:`at_precision_limit` of ``-slope / 2``), else "line_search".
    full_output : bool, default=False
        Also return the gradients and Hessians (ridge included) at the last
        evaluated points.

    Returns
    -------
    theta : ndarray of shape (K, p)
    n_iter : ndarray of shape (K,), int64
        Newton directions computed per problem.
    status : ndarray of shape (K,), object
        ``"converged"``, ``"max_iter"`` or ``"line_search"`` (no step down to
        :data:`MIN_STEP` decreased the objective while the predicted decrease
        was above :data:`PRECISION_ULPS` ulps of it; below that the problem
        is at the precision limit and counts as converged).
    F : ndarray of shape (K,)
        Objectives at the last evaluated point of each problem.
    g, H : ndarrays of shape (K, p), (K, p, p)
        Only with ``full_output``.

    Notes
    -----
    The active-set rules are those of a primal method: ``active`` holds the
    bounded coefficients fixed at 0; a step that would make a free bounded
    coefficient negative is cut at the first bound (ratio test), and the
    coefficients reached join ``active``; at a point whose decrement test
    holds, the held coefficient with the largest one-dimensional gain leaves
    ``active`` if that gain exceeds ``tol``. Without bounds this is plain
    damped Newton. The decrement test is affine invariant, so the stopping
    rule does not depend on the scale of the parameters.
    """
    theta = np.array(theta, dtype=np.float64, copy=True)
    K, p = theta.shape
    if nonneg is None:
        nonneg = np.zeros((K, p), dtype=bool)
    else:
        nonneg = np.broadcast_to(np.asarray(nonneg, dtype=bool), (K, p))
    theta[nonneg & (theta < 0)] = 0.0
    allc = np.arange(K)
    F, g, H = evaluate(allc, theta) if start is None else start
    F = np.array(F, dtype=np.float64)
    g = np.array(g, dtype=np.float64)
    H = np.array(H, dtype=np.float64)
    diag = np.arange(p)
    H[:, diag, diag] += RIDGE
    active = np.zeros((K, p), dtype=bool)
    n_iter = np.zeros(K, dtype=np.int64)
    status = np.full(K, "max_iter", dtype=object)
    todo = allc  # problems that need a direction at their current point
    # line-search state of the problems in a line search
    ls = np.zeros(0, dtype=np.intp)
    d = np.zeros((K, p))
    slope = np.zeros(K)
    step = np.zeros(K)
    ratio = np.full((K, p), np.inf)
    while todo.size or ls.size:
        while todo.size:  # directions (no evaluation needed)
            todo = todo[n_iter[todo] < max_iter]
            if not todo.size:
                break
            n_iter[todo] += 1
            free = ~active[todo]
            gt = g[todo]
            dk = _directions(gt, H[todo], free)  # 0 on held coordinates
            sl = np.einsum("ij,ij->i", gt, dk)
            small = -sl / 2.0 <= tol
            nxt = []
            if small.any():
                c = todo[small]
                gc, Hd = g[c], H[c][:, diag, diag]
                gain = np.where(active[c] & (gc < 0), gc * gc / (2.0 * Hd), 0.0)
                j = gain.argmax(axis=1)
                release = gain[np.arange(c.size), j] > tol
                done = c[~release]
                th = theta[done] + dk[small][~release]
                th[nonneg[done] & (th < 0)] = 0.0
                theta[done] = th
                status[done] = "converged"
                rel = c[release]
                active[rel, j[release]] = False
                nxt.append(rel)
            big = ~small
            c, dc, sc = todo[big], dk[big], sl[big]
            if c.size:
                blocking = nonneg[c] & (dc < 0) & ~active[c]
                r = np.full(dc.shape, np.inf)
                if blocking.any():
                    r[blocking] = -theta[c][blocking] / dc[blocking]
                amax = r.min(axis=1)
                stuck = amax <= 0.0
                cs = c[stuck]
                active[cs] |= r[stuck] <= 0.0
                nxt.append(cs)
                go = ~stuck
                cg = c[go]
                d[cg], slope[cg], ratio[cg] = dc[go], sc[go], r[go]
                step[cg] = np.minimum(1.0, amax[go])
                ls = np.concatenate([ls, cg])
            todo = np.concatenate(nxt) if nxt else todo[:0]
        if not ls.size:
            break
        ls = np.sort(ls)
        st = step[ls]
        hit = ratio[ls] <= (st * (1.0 + 1e-12))[:, None]
        th = theta[ls] + st[:, None] * d[ls]
        th[hit] = 0.0
        if trial is None:
            F_c, g_c, H_c = evaluate(ls, th)
            F_c = np.asarray(F_c, dtype=np.float64)
            ok = F_c <= F[ls] + ARMIJO_C * st * slope[ls]
        else:
            ok, F_c, g_c, H_c = trial(ls, th, st, d[ls], slope[ls], theta, F, H)
            ok = np.asarray(ok, dtype=bool)
        acc = ls[ok]
        theta[acc], F[acc] = th[ok], F_c[ok]
        g[acc] = g_c[ok]
        Hn = np.array(H_c[ok], dtype=np.float64)
        Hn[:, diag, diag] += RIDGE
        keep = np.isnan(Hn[:, 0, 0])
        if keep.any():
            Hn[keep] = H[acc[keep]]
        H[acc] = Hn
        active[acc] |= hit[ok]
        rej = ls[~ok]
        if not rej.size:
            ls, todo = rej, acc
            continue
        step[rej] /= 2.0
        failed = rej[step[rej] < MIN_STEP]
        if failed.size:
            status[failed] = (
                np.where(at_precision_limit(-slope[failed] / 2.0, F[failed]),
                         "converged", "line_search")
                if failed_status is None else failed_status(slope[failed], F[failed]))
        ls = rej[step[rej] >= MIN_STEP]
        todo = acc
    return (theta, n_iter, status, F, g, H) if full_output else (theta, n_iter, status, F)
