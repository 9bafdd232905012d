"""Small real logit sets bundled with skcal, and a loader for your own files.

Each loader returns a :class:`sklearn.utils.Bunch` with a calibration split
(``logits_val``, ``y_val``), a test split (``logits_test``, ``y_test``),
``n_classes``, ``name``, ``info`` and ``DESCR`` (source and licence).
"""

from ._base import (
    list_datasets,
    load_agnews_gpt2,
    load_cifar10_resnet20,
    load_logits,
    load_logits_file,
    load_sst2_gpt2,
)

__all__ = [
    "list_datasets",
    "load_logits",
    "load_cifar10_resnet20",
    "load_agnews_gpt2",
    "load_sst2_gpt2",
    "load_logits_file",
]
