"""termnorm: knowledge-infused medical term embeddings and concept normalization.

The public API is a set of thin functions over lazily built objects (see :mod:`termnorm.api`),
the main classes they return and the errors they raise, every one a :class:`TermnormError`
(all in :mod:`termnorm.errors`); importing this package does no work (no model, index or
terminology is loaded: every name but the errors resolves on first use, and
``dir(termnorm)`` lists them all). Static checkers read ``__init__.pyi``, written from
``_LAZY`` (``python tests/test_public_errors.py``; a test keeps the two in step).
"""

from __future__ import annotations

import termnorm.annotate as _annotate_package
from termnorm._lazy import lazy_dir, lazy_getattr
from termnorm._version import __version__
from termnorm.errors import *  # noqa: F403  (light: every error, raised by any room)
from termnorm.errors import __all__ as _ERRORS

# ``termnorm.annotate`` is the function :func:`termnorm.api.annotate`, and termnorm/annotate/
# is a package. Python sets a package as its parent's attribute once, when it first loads it:
# loaded above, its attribute dropped here, the name resolves to the function (lazily, below)
# whatever is imported later. ``from termnorm.annotate import batch`` (or ``... import
# Annotator``) reads ``sys.modules`` and works; ``import termnorm.annotate.batch as batch``
# reads this attribute, the function, and fails: write the ``from`` form.
del globals()["annotate"], _annotate_package

# the module under termnorm that defines each public name besides the errors
_LAZY = {
    "api": "add_synonyms annotate build_index load_index load_kg load_ranker lookup normalize "
    "normalize_file train",
    "index.lookup": "ConceptInfo",
    "index.term_index": "TermIndex",
    "kg.graph": "KnowledgeGraph",
    "search.candidate": "Candidate",
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names.split()}

__all__ = ["__version__", *_ERRORS, *_WHERE]
__getattr__ = lazy_getattr(__name__, _WHERE)
__dir__ = lazy_dir(__all__)
