"""Storing an estimator's constructor arguments (scikit-learn's ``__init__`` rule)."""

__all__ = ["store_params"]


def store_params(obj, params):
    """Store each argument of an ``__init__`` as the attribute of the same name.

    scikit-learn's ``get_params`` reads the parameters back as the attributes
    named by the ``__init__`` signature, and ``__init__`` must do nothing else
    (no validation, no derived attributes). ``params`` is ``locals()`` taken as
    the first statement of that ``__init__``, so it holds exactly its
    arguments (``self`` is left out, and the ``__class__`` cell of a method
    that calls ``super()``).
    """
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(obj, name, value)
