"""Storing an estimator's constructor arguments (scikit-learn's ``__init__`` rule)."""

import copy as copy_module
import types

__all__ = ["rename_inherited_init", "store_params"]


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


def rename_inherited_init(cls):
    """Give ``cls`` its own copy of an inherited ``__init__``, named after ``cls``.

    Python names the function in the ``TypeError`` of an unexpected keyword
    (``Base.__init__() got an unexpected keyword argument 'foo'``): for a
    class that inherits the ``__init__`` of a shared (often private) base, that
    names a class the user never wrote. The copy has the same code, globals,
    defaults, keyword defaults, closure (the ``__class__`` cell of ``super()``
    still names the defining class) and attributes, so ``inspect.signature``,
    ``get_params`` and ``clone`` see the same parameters; only its
    ``__qualname__`` (which the message reads, on Python 3.10 to 3.13) and,
    on Python 3.11+, its code's ``co_qualname`` (kept in agreement) are
    ``cls.__qualname__ + ".__init__"``. A
    class defining its own ``__init__``, or inheriting a non-function one (a
    wrapped or C ``__init__``), is left as it is.
    """
    if "__init__" in cls.__dict__:
        return
    init = cls.__init__
    if not isinstance(init, types.FunctionType):
        return
    qualname = f"{cls.__qualname__}.__init__"
    code = init.__code__
    if hasattr(code, "co_qualname"):  # Python 3.11+
        code = code.replace(co_qualname=qualname)
    copy = types.FunctionType(
        code, init.__globals__, init.__name__, init.__defaults__, init.__closure__
    )
    copy.__kwdefaults__ = copy_module.copy(init.__kwdefaults__)
    copy.__dict__.update(init.__dict__)
    copy.__doc__ = init.__doc__
    copy.__module__ = init.__module__
    copy.__annotations__ = dict(init.__annotations__)
    copy.__qualname__ = qualname
    cls.__init__ = copy
