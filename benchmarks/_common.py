"""Shared helpers of the skcal benchmarks: synthetic logits, the reference pass, timing."""

import time

import numpy as np

#: Sizes of the speed targets of issue 4 (rows, classes).
TARGET_SIZES = [(1_000_000, 10), (100_000, 100), (200_000, 1_000)]


def make_logits(n, k, *, seed=0, dtype=np.float32, scale=4.0, accuracy=0.7):
    """Over-confident synthetic logits: ``scale * (margin * onehot(c) + N(0, 1))``.

    The predicted class ``c`` is the true label with probability ``accuracy``,
    else a uniformly random class, so the NLL-optimal temperature is finite
    and > 1 (like a modern network). Built in row blocks to bound memory.

    Returns
    -------
    Z : ndarray of shape (n, k), ``dtype``
    y : ndarray of shape (n,), int64
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    Z = np.empty((n, k), dtype=dtype)
    step = max(1, (1 << 24) // k)
    margin = 2.0 + 0.5 * np.log(k)
    for s in range(0, n, step):
        e = min(n, s + step)
        m = e - s
        block = rng.standard_normal((m, k), dtype=np.float32)
        wrong = rng.random(m) > accuracy
        c = np.where(wrong, rng.integers(0, k, size=m), y[s:e])
        block[np.arange(m), c] += margin
        block *= scale
        Z[s:e] = block
    return Z, y


#: Row-chunk sizes (bytes) tried for the reference pass; :func:`pass_time`
#: keeps the fastest, so the pass is as cheap as this machine allows.
PASS_CHUNK_BYTES = (1 << 19, 1 << 20, 1 << 21, 1 << 22)


def numpy_pass(Z, y, chunk_bytes=1 << 20):
    """One stable log-softmax + NLL evaluation over ``Z`` (numpy, in ``Z``'s dtype).

    The cheapest honest pass: per row chunk, max, shift, exp, sum, log, and the
    true-class entry; float64 only for the sum over rows.
    """
    n, k = Z.shape
    step = max(1, chunk_bytes // (4 * k))
    total = 0.0
    for s in range(0, n, step):
        A = Z[s:s + step]
        m = A.max(axis=1, keepdims=True)
        A = A - m
        np.exp(A, out=A)
        lse = np.log(A.sum(axis=1)) + m[:, 0]
        total += float(np.sum(lse - Z[s:s + step][np.arange(A.shape[0]), y[s:s + step]],
                              dtype=np.float64))
    return total / n


def torch_pass(Z, y, chunk_bytes=None):
    """One stable log-softmax + NLL evaluation with torch, in chunks on ``Z``'s device.

    ``torch.nn.functional.cross_entropy`` over row chunks (float32 compute for
    16-bit input), float64 sum over rows. ``chunk_bytes`` defaults to 1 MiB on
    the CPU and 256 MiB on an accelerator.
    """
    import torch

    n, k = Z.shape
    budget = chunk_bytes or ((1 << 20) if Z.device.type == "cpu" else (1 << 28))
    step = max(1, budget // (4 * k))
    total = torch.zeros((), dtype=torch.float64, device=Z.device)
    with torch.no_grad():
        for s in range(0, n, step):
            A = Z[s:s + step]
            if A.dtype in (torch.float16, torch.bfloat16):
                A = A.float()
            total += torch.nn.functional.cross_entropy(
                A, y[s:s + step], reduction="sum").double()
    return float(total) / n


def pass_time(Z, y, *, repeat=3, device="cpu"):
    """Time of one reference pass over ``Z``: the best over :data:`PASS_CHUNK_BYTES`.

    Uses :func:`torch_pass` for a tensor and :func:`numpy_pass` otherwise; on
    an accelerator only the default chunk is timed.

    Returns
    -------
    seconds : float
    chunk_bytes : int
        The fastest chunk size.
    """
    is_tensor = not isinstance(Z, np.ndarray)
    fn = torch_pass if is_tensor else numpy_pass
    chunks = PASS_CHUNK_BYTES if str(device) == "cpu" else ((1 << 28),)
    best = min(
        (best_time(lambda: fn(Z, y, c), repeat=repeat, device=device)[0], c)
        for c in chunks
    )
    return best


def sync(device):
    """Wait for queued work on ``device`` (no-op on the CPU)."""
    if str(device).startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def best_time(fn, *, repeat=3, device="cpu"):
    """Best wall time in seconds of ``fn()`` over ``repeat`` calls, and its last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        sync(device)
        t0 = time.perf_counter()
        out = fn()
        sync(device)
        best = min(best, time.perf_counter() - t0)
    return best, out


def clipped_nll(P, y):
    """Mean NLL of the true-class probabilities, each clipped at 1e-300 (finite for a 0)."""
    p = np.clip(P[np.arange(len(y)), y].astype(np.float64), 1e-300, None)
    return float(-np.mean(np.log(p)))
