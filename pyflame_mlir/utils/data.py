"""torch.utils.data's loading API on pyflame tensors: ``Dataset``,
``TensorDataset``, ``Subset``, ``random_split``, ``DataLoader`` with
``default_collate``. Batches of a ``TensorDataset`` are cut from its host
arrays in one indexing step (not one op per sample); each batch enters the
compiled graph as new data, so a training loop still compiles once."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .. import creation
from ..core import Tensor
from ..ops import stack


class Dataset:
    """A map-style dataset: ``__getitem__`` and ``__len__``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the rows (first index) of tensors of one length."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].shape else None
        if any(not t.shape or t.shape[0] != n for t in tensors):
            raise ValueError(f"Size mismatch between tensors: first dims "
                             f"{[t.shape[0] if t.shape else None for t in tensors]}")
        self.tensors = tuple(tensors)

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def batch(self, indices: np.ndarray) -> tuple[Tensor, ...]:
        """The rows ``indices`` of every tensor, cut from the host values at once."""
        return tuple(creation.tensor(t.numpy()[indices]) for t in self.tensors)


class Subset(Dataset):
    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = list(datasets)
        self.ends = np.cumsum([len(d) for d in self.datasets])  # type: ignore[arg-type]

    def __len__(self) -> int:
        return int(self.ends[-1]) if len(self.ends) else 0

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"index {index} out of range for a dataset of {len(self)}")
        k = int(np.searchsorted(self.ends, index, side="right"))
        start = int(self.ends[k - 1]) if k else 0
        return self.datasets[k][index - start]


def _permutation(generator: Any, n: int) -> np.ndarray:
    """A permutation drawn from ``generator``: a ``pf.Generator`` (torch's
    kind), a numpy Generator, or None for ``pf.manual_seed``'s default."""
    if isinstance(generator, np.random.Generator):
        return generator.permutation(n)
    return creation._draws(generator).permutation(n)


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: creation.Generator | np.random.Generator | None = None) -> list[Subset]:
    """Disjoint random subsets of the given lengths (or fractions summing to 1)."""
    n = len(dataset)  # type: ignore[arg-type]
    if all(isinstance(x, float) for x in lengths) and math.isclose(sum(lengths), 1.0):
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):  # torch: the remainder round-robin
            counts[i % len(counts)] += 1
    else:
        counts = [int(x) for x in lengths]
    if sum(counts) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _permutation(generator, n)
    out, at = [], 0
    for c in counts:
        out.append(Subset(dataset, perm[at:at + c].tolist()))
        at += c
    return out


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples: tensors along a new first dim, numbers and
    numpy arrays into tensors, tuples/lists/dicts element by element."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))
    if isinstance(first, np.ndarray | np.number):
        return creation.tensor(np.stack(batch))
    if isinstance(first, bool | int | float):
        return creation.tensor(list(batch))
    if isinstance(first, str | bytes):
        return list(batch)
    if isinstance(first, Mapping):
        return {k: default_collate([b[k] for b in batch]) for k in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # namedtuple
        return type(first)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(first, Sequence):
        if any(len(b) != len(first) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(first).__name__}")


class DataLoader:
    """Iterate over a dataset in batches (torch's arguments; one process:
    ``num_workers`` and ``pin_memory`` are accepted and change nothing)."""

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool = False,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False,
                 generator: creation.Generator | np.random.Generator | None = None,
                 **_: Any) -> None:
        del num_workers, pin_memory
        if batch_size is not None and batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.collate_fn, self.drop_last, self.generator = collate_fn, drop_last, generator

    def _order(self) -> list[int]:
        if self.sampler is not None:
            return list(self.sampler)
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            return _permutation(self.generator, n).tolist()
        return list(range(n))

    def _batches(self) -> Iterator[list[int]]:
        if self.batch_sampler is not None:
            yield from (list(b) for b in self.batch_sampler)
            return
        order = self._order()
        if self.batch_size is None:
            yield from ([i] for i in order)
            return
        for at in range(0, len(order), self.batch_size):
            idx = order[at:at + self.batch_size]
            if len(idx) < self.batch_size and self.drop_last:
                return
            yield idx

    def __iter__(self) -> Iterator[Any]:
        for idx in self._batches():
            if self.batch_size is None and self.batch_sampler is None:
                yield self.dataset[idx[0]]
            elif type(self.dataset) is TensorDataset and self.collate_fn is None:
                yield self.dataset.batch(np.asarray(idx, dtype=np.int64))
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[i] for i in idx])

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)  # type: ignore[arg-type]
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
