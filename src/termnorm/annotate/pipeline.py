"""Text in, concepts out: the annotation pipeline (in progress on this branch).

The record is :class:`termnorm.annotate.annotation.Annotation`, re-exported here.
"""

from __future__ import annotations

from termnorm.annotate.annotation import Annotation, RankedConcept

__all__ = ["Annotation", "RankedConcept"]
