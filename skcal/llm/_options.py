"""From a causal language model's next-token logits to class logits over answer options."""

import numpy as np

from .._backend._array import to_numpy
from .._backend._dispatch import get_backend

__all__ = ["option_log_probs", "score_options"]


def _check_options(option_token_ids, vocab_size=None):
    """Validate the options' token ids; return a list of tuples of int."""
    if isinstance(option_token_ids, (str, bytes)) or not hasattr(option_token_ids, "__len__"):
        raise ValueError(
            "option_token_ids must be a sequence with one entry per answer option "
            "(a token id, or a sequence of token ids)."
        )
    options = []
    for i, opt in enumerate(option_token_ids):
        ids = np.atleast_1d(to_numpy(opt))
        if ids.ndim != 1 or ids.size == 0:
            raise ValueError(f"Option {i} has no token ids (got {opt!r}).")
        if not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"Option {i} must hold integer token ids, got {opt!r}.")
        if ids.min() < 0 or (vocab_size is not None and ids.max() >= vocab_size):
            raise ValueError(
                f"Option {i} has token ids {ids.tolist()} outside the vocabulary "
                f"[0, {vocab_size})."
            )
        options.append(tuple(int(t) for t in ids))
    if len(options) < 2:
        raise ValueError(f"At least 2 answer options are needed, got {len(options)}.")
    seen = {}
    for i, opt in enumerate(options):
        if opt in seen:
            raise ValueError(
                f"Options {seen[opt]} and {i} have the same token ids {list(opt)}: two "
                "classes would get identical scores. Each answer option must be distinct."
            )
        seen[opt] = i
    return options


def option_log_probs(logits, option_token_ids):
    """Log-probabilities of the answer options from next-token logits.

    Parameters
    ----------
    logits : array-like or torch.Tensor
        Either of shape ``(n_samples, vocab_size)``: the next-token logits at
        the position where the answer starts (every option must then be a
        single token); or of shape ``(n_samples, n_options, max_len,
        vocab_size)``: for each option ``o`` the logits obtained by feeding the
        prompt followed by the option's tokens (teacher forcing), where
        ``logits[:, o, j]`` predicts token ``j`` of option ``o`` (entries past
        an option's length are ignored). Any float dtype; computed in float64
        (NumPy) or at least float32 (torch).
    option_token_ids : sequence of int or of sequences of int, length n_options
        The token ids of each answer option, as the tokenizer encodes the text
        that follows the prompt (e.g. ``" positive"`` with its leading space
        for GPT-2's tokenizer).

    Returns
    -------
    log_probs : ndarray or torch.Tensor of shape (n_samples, n_options)
        ``sum_j log softmax(logits[..., j, :])[token_j]`` for each option:
        the log-probability that the model continues the prompt with the
        option. Not normalised over the options (a per-row constant does not
        matter to skcal's calibrators, which take them as logits). float64
        for NumPy input; a tensor on the input's device for tensor input.

    Raises
    ------
    ValueError
        If ``logits`` is not 2-D or 4-D, has NaN, fewer than 2 options are
        given, an option is empty or has ids outside the vocabulary, a
        multi-token option is given with 2-D logits, or the 4-D shape does
        not match the options.

    Notes
    -----
    For an option with tokens ``t_1..t_m`` and prompt ``x``,
    ``log p(t_1..t_m | x) = sum_j log p(t_j | x, t_1..t_{j-1})`` (the chain
    rule of the autoregressive model). The zero-shot and few-shot class
    scores of Brown et al. (2020) and Zhao et al. (2021) are these sums.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.llm import option_log_probs
    >>> logits = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    >>> np.round(np.exp(option_log_probs(logits, [0, 2])), 3)
    array([[0.5 , 0.25],
           [0.1 , 0.8 ]])
    """
    xp = get_backend(logits)
    L = xp.working_logits(logits)
    if xp.any_nan(L):
        raise ValueError("logits contain NaN.")
    log_softmax = xp.log_softmax_last

    if L.ndim not in (2, 4):
        raise ValueError(
            "logits must be 2-D (n_samples, vocab_size) or 4-D (n_samples, n_options, "
            f"max_len, vocab_size); got shape {tuple(L.shape)}."
        )
    options = _check_options(option_token_ids, vocab_size=L.shape[-1])
    if L.ndim == 2:
        long = [i for i, o in enumerate(options) if len(o) > 1]
        if long:
            raise ValueError(
                f"Options {long} have several tokens: 2-D next-token logits only score "
                "single-token options. Pass the 4-D teacher-forced logits, or use "
                "score_options with the model."
            )
        ids = [o[0] for o in options]
        return log_softmax(L)[:, ids]
    n, n_opt, max_len, _ = L.shape
    if n_opt != len(options) or max(map(len, options)) > max_len:
        raise ValueError(
            f"logits of shape {tuple(L.shape)} do not match {len(options)} options of "
            f"up to {max(map(len, options))} tokens."
        )
    cols = []
    for o, toks in enumerate(options):
        LP = log_softmax(L[:, o, : len(toks)])  # (n, m, V)
        cols.append(sum(LP[:, j, t] for j, t in enumerate(toks)))
    return xp.stack_columns(cols)


def _model_logits(model, ids, i):
    try:
        out = model(input_ids=ids)
    except IndexError as exc:  # an embedding lookup past the vocabulary
        raise ValueError(
            f"Prompt {i}: the model could not embed its token ids (ids from "
            f"{int(ids.min())} to {int(ids.max())}; are they from this model's "
            f"tokenizer?): {exc}") from exc
    if hasattr(out, "logits"):
        return out.logits
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def score_options(model, prompts, option_token_ids):
    """Class logits of a causal language model: the log-probability of each answer option.

    Parameters
    ----------
    model : callable
        A causal language model, e.g. a ``transformers`` ``AutoModelForCausalLM``:
        ``model(input_ids=ids)`` with ``ids`` a ``torch.LongTensor`` of shape
        ``(batch, length)`` returns logits of shape ``(batch, length,
        vocab_size)`` (or an object with a ``logits`` attribute, or a tuple
        whose first entry is them). It is called in ``torch.no_grad`` mode on
        the device of its first parameter (CPU for a plain callable).
    prompts : sequence of sequences of int, length n_samples
        Token ids of each prompt (at least one token each), e.g. from
        ``tokenizer(text)["input_ids"]``.
    option_token_ids : sequence of int or of sequences of int, length n_options
        Token ids of each answer option's text as it follows the prompt.

    Returns
    -------
    log_probs : ndarray of shape (n_samples, n_options), float64
        ``log p(option | prompt)`` summed over the option's tokens; use as the
        logits ``X`` of any skcal calibrator.

    Raises
    ------
    ValueError
        For no prompts, an empty prompt, a negative token id, a token id the model cannot
        embed (its ``IndexError``, e.g. an id past the vocabulary) or invalid
        options (see :func:`option_log_probs`).

    Notes
    -----
    When every option is one token, the model runs once per prompt and the
    options are read from the last position's next-token distribution. Else
    it runs once per prompt on the batch of ``prompt + option`` sequences
    (right-padded; a causal model's logits at a position do not depend on
    later tokens, so padding changes nothing) and sums the options' token
    log-probabilities (teacher forcing). Prompts are not batched together, so
    no attention mask is needed.

    References
    ----------
    T. Brown et al., "Language Models are Few-Shot Learners", NeurIPS 2020.
    Z. Zhao, E. Wallace, S. Feng, D. Klein, S. Singh, "Calibrate Before Use:
    Improving Few-Shot Performance of Language Models", ICML 2021.
    """
    import torch

    options = _check_options(option_token_ids)
    if len(prompts) == 0:
        raise ValueError("prompts is empty: pass at least one prompt's token ids.")
    try:
        device = next(model.parameters()).device
    except (AttributeError, StopIteration, TypeError):
        device = torch.device("cpu")
    single = all(len(o) == 1 for o in options)
    max_opt = max(map(len, options))
    rows = []
    with torch.no_grad():
        for i, prompt in enumerate(prompts):
            p = [int(t) for t in to_numpy(prompt)]
            if not p:
                raise ValueError(f"Prompt {i} is empty: a causal model needs a context.")
            if min(p) < 0:
                bad = sorted({t for t in p if t < 0})[:5]
                raise ValueError(f"Prompt {i} has negative token ids {bad}.")
            if single:
                ids = torch.tensor([p], dtype=torch.long, device=device)
                L = _model_logits(model, ids, i)[:, -1]  # (1, V)
                rows.append(to_numpy(option_log_probs(L, options).double())[0])
                continue
            length = len(p) + max_opt
            ids = torch.zeros((len(options), length), dtype=torch.long, device=device)
            for o, toks in enumerate(options):
                ids[o, : len(p) + len(toks)] = torch.tensor(p + list(toks))
            L = _model_logits(model, ids, i)  # (n_opt, length, V)
            # position len(p) - 1 + j predicts token j of the option
            Lo = L[:, len(p) - 1 : len(p) - 1 + max_opt][None]  # (1, n_opt, max_opt, V)
            rows.append(to_numpy(option_log_probs(Lo, options).double())[0])
    return np.vstack(rows)
