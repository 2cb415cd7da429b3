"""Query → ranked concepts: the normalizer, search strategies, sieves and baselines."""

from termnorm.search.candidate import Candidate, Matcher

__all__ = ["Candidate", "Matcher"]
