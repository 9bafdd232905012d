"""Warnings and errors specific to skcal."""

__all__ = ["InconsistentVersionWarning", "LabelsInSortedOrderWarning"]


class InconsistentVersionWarning(UserWarning):
    """An skcal estimator is unpickled with a skcal version other than the one that pickled it.

    Like :class:`sklearn.exceptions.InconsistentVersionWarning`: fitted
    attributes and their meaning may differ between versions, so the
    unpickled estimator may predict differently or break. Refit it, or use
    the version it was pickled with.

    Parameters
    ----------
    estimator_name : str
        Class name of the estimator.
    current_skcal_version : str
        The installed skcal version.
    original_skcal_version : str
        The version recorded in the pickle (``"unknown"`` for pickles written
        before skcal recorded it).

    Attributes
    ----------
    estimator_name, current_skcal_version, original_skcal_version : str
        As given.
    """

    def __init__(self, *, estimator_name, current_skcal_version, original_skcal_version):
        self.estimator_name = estimator_name
        self.current_skcal_version = current_skcal_version
        self.original_skcal_version = original_skcal_version

    def __str__(self):
        return (
            f"Trying to unpickle estimator {self.estimator_name} from skcal version "
            f"{self.original_skcal_version} when using version "
            f"{self.current_skcal_version}. This might lead to breaking code or "
            "invalid results. Use at your own risk."
        )


class LabelsInSortedOrderWarning(UserWarning):
    """Text labels that name no score column are matched to the columns in sorted order.

    Issued by the calibrators' ``fit`` (``classes=None``, two or more score
    columns, text labels) and by ``skcal fit``: the ``k``-th label in sorted
    order is taken as the class of column ``k``, which is right only when
    the model's columns happen to be in that order. Name the columns (a
    DataFrame whose column names are the labels, or ``classes=[...]`` in
    column order) to silence it.
    """


class _UserError(Exception):
    """An error in the user's input to the ``skcal`` console script.

    Raised by :mod:`skcal.cli` and :mod:`skcal._cli_calibrate`; reported as
    one line on stderr with exit code 2, never as a traceback.
    """
