"""Vocabulary extension (ext-BERT): new WordPiece tokens for a language the base model splits badly.

Casola et al. (contrastive-kge-italian, §3) extend BERT's vocabulary with tokens trained on the
target language and initialise each new embedding as the mean of the old sub-tokens it was
split into ("polmonare" = mean of "pol", "##mona", "##re"). :func:`extend_vocabulary` does that
to a :class:`~termnorm.encoders.TermEncoder` in place:

1. train a WordPiece vocabulary of ``size`` tokens on ``texts`` with the ``tokenizers``
   library, using the base tokenizer's own normalizer and pre-tokenizer (so a new token is
   spelled the way the base model sees text: lower-cased, accents stripped, CJK characters
   split, for an uncased BERT);
2. append the trained tokens the base vocabulary lacks, shortest first (then by spelling), after
   the last old id: every old token keeps its id, so old texts that contain no new token tokenize as
   before;
3. grow the input embedding matrix by one row per new token: the mean of the rows of the old
   WordPiece pieces of the token (greedy longest match, BERT's algorithm, ``##`` tokens
   decomposed as continuations), or, when the old vocabulary cannot spell the token at all
   (a character it lacks: it was ``[UNK]``), a draw from N(0, initializer_range²), BERT's own
   initialisation, seeded by ``seed`` and the token.

The ``tokenizers`` trainer breaks ties between pairs of equal frequency in no fixed order, so
on a tiny corpus two runs may keep different tokens; on the ICD-10 terms (8,000 tokens) two
runs gave the same set.

:func:`tokenization_stats` compares how many pieces each term takes before and after, per
language (the paper's "fewer pieces" figure). The encoder is then saved as a normal model
folder (:meth:`TermEncoder.save`), which termnorm and sentence-transformers load.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from termnorm.errors import ArtifactMismatchError, EmptyResultError

if TYPE_CHECKING:  # pragma: no cover
    from transformers import PreTrainedTokenizerBase

    from termnorm.encoders.transformer import TermEncoder

__all__ = [
    "CARD_NAME",
    "TokenizationStats",
    "VocabularyExtension",
    "extend_model_folder",
    "extend_vocabulary",
    "old_pieces",
    "tokenization_stats",
    "train_wordpiece",
]

logger = logging.getLogger(__name__)

CARD_NAME = "vocabulary_extension.json"
"""The card :func:`extend_vocabulary`'s callers write into the extended model folder."""


@dataclass
class VocabularyExtension:
    """What :func:`extend_vocabulary` added: ``added[i]`` has id ``base_size + i``;
    ``composed`` rows are the mean of the token's old pieces, ``random`` ones (the old
    vocabulary cannot spell the token) are drawn from ``seed`` and the token's spelling."""

    base_size: int  # tokens before (= the first new id)
    trained_size: int  # size of the trained WordPiece vocabulary
    added: list[str]
    composed: int
    random: int
    min_frequency: int  # the trainer's minimum pair frequency
    seed: int
    stats: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_card(self) -> dict[str, Any]:
        """JSON-ready summary (the added tokens included)."""
        return {**asdict(self), "new_size": self.base_size + len(self.added)}


@dataclass
class TokenizationStats:
    """Pieces per term before and after the extension, over one group of terms."""

    terms: int
    fewer: int  # terms that take fewer pieces after
    same: int
    more: int  # greedy longest match can, rarely, take more
    pieces_before: int
    pieces_after: int
    unk_before: int  # [UNK] pieces
    unk_after: int

    def to_dict(self) -> dict[str, float]:
        """Counts plus ``fewer_share`` and mean pieces per term before/after."""
        n = max(self.terms, 1)
        return {
            **{k: float(v) for k, v in asdict(self).items()},
            "fewer_share": self.fewer / n,
            "mean_pieces_before": self.pieces_before / n,
            "mean_pieces_after": self.pieces_after / n,
        }


def _fast(tokenizer: PreTrainedTokenizerBase) -> tuple[Any, dict[str, Any]]:
    """The ``tokenizers.Tokenizer`` behind a fast WordPiece tokenizer and its model's JSON
    state, or a clear error."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ArtifactMismatchError(
            "vocabulary extension needs a fast tokenizer (tokenizer.json); save the model's "
            "tokenizer with a current transformers first"
        )
    model = json.loads(backend.to_str())["model"]
    if model.get("type") != "WordPiece":
        raise ArtifactMismatchError(
            f"vocabulary extension supports WordPiece tokenizers (BERT family); this one is "
            f"{model.get('type')}"
        )
    return backend, model


def train_wordpiece(
    texts: Iterable[str],
    tokenizer: PreTrainedTokenizerBase,
    size: int,
    min_frequency: int = 2,
) -> list[str]:
    """A WordPiece vocabulary of at most ``size`` tokens trained on ``texts`` with the base
    tokenizer's normalizer, pre-tokenizer, unknown token and ``##`` prefix; tokens in id
    order, the unknown token first."""
    from tokenizers import Tokenizer, models, trainers

    backend, base_model = _fast(tokenizer)
    unk = base_model.get("unk_token", "[UNK]")
    prefix = base_model.get("continuing_subword_prefix", "##")
    new = Tokenizer(models.WordPiece(unk_token=unk, continuing_subword_prefix=prefix))
    new.normalizer = backend.normalizer
    new.pre_tokenizer = backend.pre_tokenizer
    trainer = trainers.WordPieceTrainer(
        vocab_size=size,
        min_frequency=min_frequency,
        special_tokens=[unk],
        continuing_subword_prefix=prefix,
        show_progress=False,
    )
    new.train_from_iterator(texts, trainer=trainer)
    vocab = new.get_vocab()
    return sorted(vocab, key=vocab.__getitem__)


def old_pieces(
    token: str, vocab: Mapping[str, int], prefix: str = "##", max_chars: int = 100
) -> list[str] | None:
    """The pieces BERT's greedy longest-match WordPiece splits ``token`` into with ``vocab``;
    a ``##`` token is split as a continuation (every piece ``##``-prefixed). ``None`` when the
    vocabulary cannot spell it (the tokenizer would give ``[UNK]``)."""
    continuation = token.startswith(prefix) and len(token) > len(prefix)
    word = token[len(prefix) :] if continuation else token
    if len(word) > max_chars:
        return None
    pieces: list[str] = []
    start = 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            piece = word[start:end]
            if start > 0 or continuation:
                piece = prefix + piece
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return None
        pieces.append(found)
        start = end
    return pieces


def _random_row(token: str, seed: int, dim: int, std: float) -> torch.Tensor:
    """A N(0, std²) row drawn from a generator seeded by ``seed`` and the token's spelling, so
    a token gets the same row whatever else was added."""
    digest = hashlib.sha256(f"{seed}\0{token}".encode()).digest()
    generator = torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)
    return torch.randn(dim, generator=generator) * std


def _replace_vocabulary(
    tokenizer: PreTrainedTokenizerBase, added: Sequence[str], start: int
) -> PreTrainedTokenizerBase:
    """A copy of ``tokenizer`` whose WordPiece vocabulary has ``added`` at ids ``start, ...``."""
    from transformers import AutoTokenizer

    with tempfile.TemporaryDirectory(prefix="termnorm-vocab-") as tmp:
        folder = Path(tmp)
        tokenizer.save_pretrained(str(folder))
        state = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
        vocab: dict[str, int] = state["model"]["vocab"]
        for i, token in enumerate(added):
            vocab[token] = start + i
        (folder / "tokenizer.json").write_text(json.dumps(state, ensure_ascii=False), "utf-8")
        if (folder / "vocab.txt").is_file():
            ordered = sorted(vocab, key=vocab.__getitem__)
            if [vocab[t] for t in ordered] != list(range(len(ordered))):
                raise ArtifactMismatchError("the extended vocabulary has gaps in its ids")
            (folder / "vocab.txt").write_text("".join(f"{t}\n" for t in ordered), "utf-8")
        out = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    if len(out) != start + len(added):
        raise ArtifactMismatchError(
            f"the extended tokenizer has {len(out)} tokens, expected {start + len(added)}"
        )
    return out


def extend_vocabulary(
    encoder: TermEncoder,
    texts: Sequence[str],
    size: int,
    min_frequency: int = 2,
    seed: int = 0,
) -> VocabularyExtension:
    """Extend ``encoder``'s tokenizer and input embeddings in place (see the module doc).

    Raises:
        ArtifactMismatchError: not a fast WordPiece tokenizer, or a tokenizer whose size
            differs from the embedding matrix (ids could not be appended safely).
        EmptyResultError: no texts, or the trained vocabulary adds nothing.
    """
    if not texts:
        raise EmptyResultError("no texts to train a vocabulary on (check --kg and --lang)")
    tokenizer = encoder.tokenizer
    base_vocab = tokenizer.get_vocab()
    base_size = len(base_vocab)
    embeddings = encoder.model.get_input_embeddings()
    if not isinstance(embeddings, torch.nn.Embedding):
        raise ArtifactMismatchError(
            f"the model's input embeddings are a {type(embeddings).__name__}, not an Embedding"
        )
    rows = int(embeddings.weight.shape[0])
    if rows != base_size or sorted(base_vocab.values()) != list(range(base_size)):
        raise ArtifactMismatchError(
            f"the tokenizer has {base_size} tokens but the embedding matrix {rows} rows (or "
            "its ids have gaps); vocabulary extension appends ids after the last one and "
            "needs the two to agree"
        )
    prefix = _fast(tokenizer)[1].get("continuing_subword_prefix", "##")
    trained = train_wordpiece(texts, tokenizer, size, min_frequency)
    # the trainer orders tokens of equal frequency differently from run to run: sort them so
    # the new ids (and the seeded random rows) are reproducible
    added = sorted((t for t in trained if t not in base_vocab), key=lambda t: (len(t), t))
    if not added:
        raise EmptyResultError(
            f"the {len(trained)} trained tokens are all in the base vocabulary already; "
            "raise --size or pass texts of another language"
        )
    std = float(getattr(encoder.model.config, "initializer_range", 0.02))
    old = embeddings.weight.detach()
    new_rows = torch.empty(len(added), old.shape[1], dtype=old.dtype)
    composed = 0
    for i, token in enumerate(added):
        pieces = old_pieces(token, base_vocab, prefix)
        if pieces:
            new_rows[i] = old[[base_vocab[p] for p in pieces]].mean(dim=0)
            composed += 1
        else:
            new_rows[i] = _random_row(token, seed, old.shape[1], std).to(old.dtype)
    encoder.tokenizer = _replace_vocabulary(tokenizer, added, base_size)
    resized = encoder.model.resize_token_embeddings(base_size + len(added), mean_resizing=False)
    with torch.no_grad():
        resized.weight[base_size:] = new_rows.to(resized.weight.device)
    encoder.model.config.vocab_size = base_size + len(added)
    encoder._fingerprint = None  # the weights changed: the old folder's identity is stale
    logger.info(
        "vocabulary: %d trained, %d new (%d composed from old pieces, %d random)",
        len(trained),
        len(added),
        composed,
        len(added) - composed,
    )
    return VocabularyExtension(
        base_size=base_size,
        trained_size=len(trained),
        added=added,
        composed=composed,
        random=len(added) - composed,
        min_frequency=min_frequency,
        seed=seed,
    )


def tokenization_stats(
    before: PreTrainedTokenizerBase,
    after: PreTrainedTokenizerBase,
    groups: Mapping[str, Sequence[str]],
) -> dict[str, TokenizationStats]:
    """Per group (e.g. language): how many texts take fewer, as many or more pieces with
    ``after`` than with ``before`` (no special tokens, no truncation), and the ``[UNK]``s."""
    out: dict[str, TokenizationStats] = {}
    for name, texts in groups.items():
        texts = list(texts)
        old = before(texts, add_special_tokens=False)["input_ids"] if texts else []
        new = after(texts, add_special_tokens=False)["input_ids"] if texts else []
        fewer = same = more = 0
        for a, b in zip(old, new, strict=True):
            fewer += len(b) < len(a)
            same += len(b) == len(a)
            more += len(b) > len(a)
        out[name] = TokenizationStats(
            terms=len(texts),
            fewer=fewer,
            same=same,
            more=more,
            pieces_before=sum(map(len, old)),
            pieces_after=sum(map(len, new)),
            unk_before=sum(ids.count(before.unk_token_id) for ids in old),
            unk_after=sum(ids.count(after.unk_token_id) for ids in new),
        )
    return out


def extend_model_folder(
    model: str | Path | None,
    groups: Mapping[str, Sequence[str]],
    size: int,
    out: str | Path,
    min_frequency: int = 2,
    seed: int = 0,
    overwrite: bool = False,
    source: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Extend the vocabulary of the model folder ``model`` (``None``: the default model) with
    a WordPiece vocabulary trained on all ``groups``' texts, and write the result to ``out``
    (atomically) with :data:`CARD_NAME`: the extension, the base model and its fingerprint,
    ``source`` (e.g. the KG and languages) and :func:`tokenization_stats` per group. Returns
    that card.
    """
    from termnorm._artifacts import atomic_dir, prepare_output, write_card
    from termnorm.encoders.transformer import TermEncoder

    prepare_output(out, overwrite, {"--model": model}, "model")
    encoder = TermEncoder.load(model, device="cpu")
    base_path, base_fingerprint = encoder.path, encoder.fingerprint
    before = encoder.tokenizer
    texts = [t for group in groups.values() for t in group]
    extension = extend_vocabulary(encoder, texts, size, min_frequency, seed)
    stats = tokenization_stats(before, encoder.tokenizer, groups)
    extension.stats = {name: s.to_dict() for name, s in stats.items()}
    card = {
        "base_model": str(base_path),
        "base_fingerprint": base_fingerprint,
        "size": size,
        "texts": len(texts),
        "source": dict(source or {}),
        **extension.to_card(),
    }
    with atomic_dir(out) as tmp:
        encoder.save(tmp)
        write_card(tmp, CARD_NAME, card)
    return card
