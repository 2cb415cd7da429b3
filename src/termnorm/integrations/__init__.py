"""termnorm inside other toolkits: thin faces over the annotate room.

``spacy_component``: the ``termnorm`` spaCy pipeline component (extra ``spacy``),
registered through spaCy's ``spacy_factories`` entry point, so ``nlp.add_pipe("termnorm")``
works without importing termnorm. Nothing is imported here: importing the component
module needs spaCy.
"""

__all__: list[str] = []
