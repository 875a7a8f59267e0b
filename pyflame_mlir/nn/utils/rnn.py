"""``pf.nn.utils.rnn``: torch's variable-length sequence utilities.

A ``PackedSequence`` holds the time-major concatenation of the sequences'
steps, longest first (``data``: ``(sum(lengths), *)``), with ``batch_sizes``
(how many sequences are still running at each step) and the sorting
permutations. The lengths are host data, as in torch (they must be on the
CPU there): packing and unpacking are one ``index_select`` each with a host
index, so gradients flow through them and the graphs are cache-stable for
the same lengths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ...core import Tensor
from ...creation import full
from ...indexing import index_select
from ...ops import cat, stack

__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpack_sequence", "unpad_sequence"]


def _ints(values: Any) -> np.ndarray:
    if isinstance(values, Tensor):
        return values.numpy().astype(np.int64).reshape(-1)
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _index(values: np.ndarray) -> Tensor:
    return Tensor._leaf(np.ascontiguousarray(values, dtype=np.int64))  # noqa: SLF001


class PackedSequence(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data`` converted (dtype); the index tensors stay int64."""
        return self._replace(data=self.data.to(*args, **kwargs))

    def double(self) -> PackedSequence:
        return self._replace(data=self.data.double())

    def float(self) -> PackedSequence:
        return self._replace(data=self.data.float())


def _layout(batch_sizes: np.ndarray) -> np.ndarray:
    """Row offset in ``data`` of each time step."""
    return np.concatenate([[0], np.cumsum(batch_sizes)[:-1]]).astype(np.int64)


def _lengths_of(batch_sizes: np.ndarray) -> np.ndarray:
    """The length of each sorted slot: how many steps have it running."""
    slots = np.arange(batch_sizes[0])
    return (batch_sizes[None, :] > slots[:, None]).sum(1).astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``)
    of sequences of the given ``lengths``."""
    lens = _ints(lengths)
    x = input.transpose(0, 1) if batch_first else input
    if x.ndim < 2 or lens.shape[0] != x.shape[1]:
        raise ValueError(f"pack_padded_sequence: expected {x.shape[1] if x.ndim > 1 else '?'}"
                         f" lengths (one per sequence of the batch), got {lens.shape[0]} for "
                         f"input of shape {list(input.shape)}")
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if lens.max(initial=0) > x.shape[0]:
        raise RuntimeError(f"pack_padded_sequence: a length of {lens.max()} exceeds the "
                           f"{x.shape[0]} time steps of the input")
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        order = np.arange(lens.shape[0])
        sorted_indices = unsorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices, unsorted_indices = _index(order), _index(np.argsort(order))
    return _pack(x, lens, order, sorted_indices, unsorted_indices)


def _pack(x: Tensor, lens: np.ndarray, order: np.ndarray, sorted_indices: Tensor | None,
          unsorted_indices: Tensor | None) -> PackedSequence:
    steps, batch = int(lens.max()), x.shape[1]
    sorted_lens = lens[order]
    batch_sizes = (sorted_lens[None, :] > np.arange(steps)[:, None]).sum(1)
    rows = np.concatenate([t * batch + order[:n] for t, n in enumerate(batch_sizes)])
    flat = x.reshape(x.shape[0] * batch, *x.shape[2:])
    return PackedSequence(index_select(flat, 0, _index(rows)), _index(batch_sizes),
                          sorted_indices, unsorted_indices)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """The inverse of ``pack_padded_sequence``: the padded batch in the
    original order, and the lengths (int64)."""
    data = sequence.data
    batch_sizes = _ints(sequence.batch_sizes)
    steps, batch = len(batch_sizes), int(batch_sizes[0])
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps_out = total_length
    else:
        steps_out = steps
    order = (_ints(sequence.sorted_indices) if sequence.sorted_indices is not None
             else np.arange(batch))
    slot_of = np.argsort(order)  # original batch position -> sorted slot
    offsets = _layout(batch_sizes)
    pad_row = data.shape[0]
    rows = np.full((steps_out, batch), pad_row, dtype=np.int64)
    for t in range(steps):
        running = slot_of < batch_sizes[t]
        rows[t, running] = offsets[t] + slot_of[running]
    pad = full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    padded = index_select(cat([data, pad], 0), 0, _index(rows.reshape(-1)))
    padded = padded.reshape(steps_out, batch, *data.shape[1:])
    lengths = _lengths_of(batch_sizes)[slot_of]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, Tensor._leaf(lengths)  # noqa: SLF001


def pack_like(padded: Tensor, like: PackedSequence) -> PackedSequence:
    """``padded`` (``(T, B, *)``, original batch order) packed with the
    layout of ``like`` (the RNN modules pack their outputs so)."""
    batch_sizes = _ints(like.batch_sizes)
    batch = int(batch_sizes[0])
    order = (_ints(like.sorted_indices) if like.sorted_indices is not None
             else np.arange(batch))
    rows = np.concatenate([t * batch + order[:n] for t, n in enumerate(batch_sizes)])
    flat = padded.reshape(padded.shape[0] * batch, *padded.shape[2:])
    return PackedSequence(index_select(flat, 0, _index(rows)), like.batch_sizes,
                          like.sorted_indices, like.unsorted_indices)


def pad_sequence(sequences: Sequence[Tensor] | Tensor, batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of shapes ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)``
    with ``batch_first``), padded with ``padding_value`` on ``padding_side``."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    seqs = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    tail = seqs[0].shape[1:]
    for s in seqs:
        if s.shape[1:] != tail:
            raise RuntimeError(f"pad_sequence: every sequence must have the trailing shape "
                               f"{list(tail)}, got {list(s.shape)}")
    steps = max(s.shape[0] for s in seqs)
    dt = seqs[0].dtype
    padded = []
    for s in seqs:
        missing = steps - s.shape[0]
        if missing:
            pad = full((missing, *tail), padding_value, dtype=dt)
            s = cat([s, pad], 0) if padding_side == "right" else cat([pad, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """The list of sequences ``pad_sequence`` was given."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(_ints(lengths))]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)





def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a 1-d permutation (torch's, for a PackedSequence's
    sorted/unsorted indices); None stays None."""
    if permutation is None:
        return None
    perm = _ints(permutation)
    if np.sort(perm).tolist() != list(range(perm.size)):
        raise RuntimeError(f"invert_permutation: {perm.tolist()} is not a permutation of "
                           f"0..{perm.size - 1}")
    out = np.empty_like(perm)
    out[perm] = np.arange(perm.size)
    return Tensor._leaf(out.astype(np.dtype(permutation.dtype.np)))  # noqa: SLF001


__all__ += ["invert_permutation"]
