# Written from _LAZY in __init__.py by `python tests/test_public_errors.py`: the root
# names, for static checkers and IDEs (the package imports them on first use).
from termnorm._version import __version__ as __version__
from termnorm.api import add_synonyms as add_synonyms
from termnorm.api import annotate as annotate
from termnorm.api import build_index as build_index
from termnorm.api import load_index as load_index
from termnorm.api import load_kg as load_kg
from termnorm.api import load_ranker as load_ranker
from termnorm.api import lookup as lookup
from termnorm.api import normalize as normalize
from termnorm.api import normalize_file as normalize_file
from termnorm.api import train as train
from termnorm.errors import *  # noqa: F403
from termnorm.index.lookup import ConceptInfo as ConceptInfo
from termnorm.index.term_index import TermIndex as TermIndex
from termnorm.kg.graph import KnowledgeGraph as KnowledgeGraph
from termnorm.search.candidate import Candidate as Candidate
