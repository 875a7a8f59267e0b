"""torch.utils.data's loading API on pyflame tensors: ``Dataset``,
``IterableDataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``,
``ChainDataset``, ``StackDataset``, ``random_split``, the samplers
(``DistributedSampler``'s shuffled order is torch's, index for index),
``DataLoader`` with ``default_collate``. Batches of a
``TensorDataset`` are cut from its host arrays in one indexing step (not one
op per sample); each batch enters the compiled graph as new data, so a
training loop still compiles once."""

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


class IterableDataset(Dataset):
    """A stream of samples: ``__iter__`` (the loader batches what it yields)."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


# ---- samplers: iterables of indices (of index lists, for BatchSampler) ----

class Sampler:
    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A permutation (or ``num_samples`` draws with ``replacement``) per pass."""

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        # drawn as iterated, in chunks (torch's: 32 draws, or one permutation, at a
        # time), so minGPT's RandomSampler(replacement=True, num_samples=int(1e10))
        # costs nothing up front
        n, left = len(self.data_source), self.num_samples
        while left > 0:
            if self.replacement:
                chunk = _draws(self.generator).integers(0, n, min(left, 32)).tolist()
            else:
                chunk = _permutation(self.generator, n)[:left].tolist()
            left -= len(chunk)
            yield from chunk

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        return (self.indices[i] for i in _permutation(self.generator, len(self.indices)))

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights: Any, num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        w = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights, np.float64)
        if w.ndim != 1 or (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError("weights should be a 1-d sequence of non-negative finite numbers "
                             "with a positive sum")
        if not replacement and num_samples > np.count_nonzero(w):
            raise RuntimeError("WeightedRandomSampler: cannot draw more samples than there are "
                               "non-zero weights without replacement")
        self.weights, self.num_samples = w, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self) -> Iterator[int]:
        rng = _draws(self.generator)
        p = self.weights / self.weights.sum()
        return iter(rng.choice(len(p), self.num_samples, replace=self.replacement,
                               p=p).tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter
    unless ``drop_last``)."""

    def __init__(self, sampler: Any, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def _draws(generator: Any) -> np.random.Generator:
    if isinstance(generator, np.random.Generator):
        return generator
    return creation._draws(generator)


def get_worker_info() -> None:
    """None: the loader runs in the calling process (no worker processes)."""
    return None


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

    def batch(self, indices: np.ndarray) -> list[Tensor]:
        """The rows ``indices`` of every tensor, cut from the host values at once
        (a list, as torch's default_collate makes of a batch of tuples)."""
        return list(creation.tensor(t.numpy()[indices]) for t in self.tensors)


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


class ChainDataset(IterableDataset):
    """The samples of several ``IterableDataset``s, one after the other."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class StackDataset(Dataset):
    """Samples assembled from several datasets of one length: a tuple (the
    datasets given positionally) or a dict (given by keyword)."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        datasets: Any = args or kwargs
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])  # type: ignore[arg-type]
        if any(self._length != len(d) for d in parts):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets")
        self.datasets = datasets

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list[int]) -> list[Any]:
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return self._length


_U32 = 0xFFFFFFFF


def torch_randperm(n: int, seed: int) -> np.ndarray:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed))``,
    index for index: torch's CPU generator is an mt19937 seeded with the low
    32 bits of ``seed`` (numpy's MT19937 legacy seeding is the same
    ``init_genrand``), and its randperm swaps ``r[i]`` with ``r[i + u % (n - i)]``
    for each 32-bit draw ``u`` (a Fisher-Yates shuffle from the front)."""
    if n >= _U32 // 20:
        raise NotImplementedError(f"torch_randperm: n={n}: torch draws 64-bit numbers from "
                                  "n >= 2**32 / 20 on, which this port does not follow")
    bits = np.random.MT19937()
    bits._legacy_seeding(seed & _U32)
    draws = bits.random_raw(max(n - 1, 0)).astype(np.int64)
    r = np.arange(n, dtype=np.int64)
    for i, u in enumerate(draws.tolist()):
        j = i + u % (n - i)
        r[i], r[j] = r[j], r[i]
    return r


class DistributedSampler(Sampler):
    """This process's share of a dataset: torch's ``DistributedSampler``
    (``num_replicas``/``rank`` default to the process group's, see
    ``pyflame_mlir.distributed``). Shuffled by a permutation seeded with
    ``seed + epoch`` (``set_epoch``), the same as torch's; padded by repeating
    the first indices to a multiple of ``num_replicas`` (or cut, with
    ``drop_last``); replica ``rank`` takes every ``num_replicas``-th index."""

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from .. import distributed  # torch.distributed: only for a process group's size
            if not distributed.dist.is_initialized():
                raise ValueError("DistributedSampler: num_replicas and rank default to the "
                                 "process group's, which has not been initialized (call "
                                 "pyflame_mlir.distributed.init(), or give both)")
            num_replicas = distributed.world_size() if num_replicas is None else num_replicas
            rank = distributed.rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.shuffle, self.seed, self.drop_last = 0, shuffle, seed, drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = torch_randperm(n, self.seed + self.epoch).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose permutation the next pass takes (call it before each)."""
        self.epoch = epoch


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
    """torch's default_collate: tensors stacked along a new first dim, numpy
    arrays and numbers made tensors (Python floats float64, ints int64, bools
    bool, as torch's), strings left as they come, mappings and namedtuples
    element by element, other sequences element by element into a list (a
    tuple's too, as torch's)."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))
    if isinstance(first, np.ndarray | np.number):
        return creation.tensor(np.stack(batch))
    if isinstance(first, float):
        return creation.tensor(list(batch), dtype=np.float64)
    if isinstance(first, bool | int):
        return creation.tensor(list(batch))
    if isinstance(first, str | bytes):
        return batch
    if isinstance(first, Mapping):
        return {k: default_collate([b[k] for b in batch]) for k in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # namedtuple
        return type(first)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(first, Sequence):
        if any(len(b) != len(first) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(s) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(first).__name__}")


def default_convert(data: Any) -> Any:
    """torch's default_convert (what DataLoader(batch_size=None) applies to each
    sample): numpy arrays and numpy scalars become tensors, mappings, namedtuples
    and sequences are converted element by element (a tuple into a list, as
    torch's); everything else is returned as it is."""
    if isinstance(data, np.ndarray | np.number):
        return data if data.dtype.kind in "SUO" else creation.tensor(data)
    if isinstance(data, Tensor | str | bytes):
        return data
    if isinstance(data, Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, Sequence):
        return [default_convert(d) for d in data]
    return data


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
        if isinstance(dataset, IterableDataset) and (shuffle or sampler is not None
                                                     or batch_sampler is not None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, "
                             "sampler and batch_sampler options")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.collate_fn, self.drop_last, self.generator = collate_fn, drop_last, generator

    def _order(self) -> Iterator[int] | list[int]:
        if self.sampler is not None:
            return iter(self.sampler)  # as it iterates: a sampler may be endless or huge
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            return _permutation(self.generator, n).tolist()
        return list(range(n))

    def _stream(self) -> Iterator[Any]:
        """An ``IterableDataset``'s samples in batches of ``batch_size``."""
        collate = self.collate_fn or (default_collate if self.batch_size is not None
                                      else default_convert)
        if self.batch_size is None:
            yield from (collate(s) for s in self.dataset)  # type: ignore[attr-defined]
            return
        batch: list[Any] = []
        for sample in self.dataset:  # type: ignore[attr-defined]
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield collate(batch)

    def _batches(self) -> Iterator[list[int]]:
        if self.batch_sampler is not None:
            yield from (list(b) for b in self.batch_sampler)
            return
        order = self._order()
        if self.batch_size is None:
            yield from ([i] for i in order)
            return
        if isinstance(order, list):  # the dataset's own order: cut in slices
            bs = self.batch_size
            for at in range(0, len(order), bs):
                if at + bs > len(order) and self.drop_last:
                    return
                yield order[at:at + bs]
            return
        yield from BatchSampler(order, self.batch_size, self.drop_last)

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self.dataset, IterableDataset):
            yield from self._stream()
            return
        for idx in self._batches():
            if self.batch_size is None and self.batch_sampler is None:
                yield (self.collate_fn or default_convert)(self.dataset[idx[0]])
            elif type(self.dataset) is TensorDataset and self.collate_fn is None:
                yield self.dataset.batch(np.asarray(idx, dtype=np.int64))
            else:
                collate = self.collate_fn or default_collate
                many = getattr(self.dataset, "__getitems__", None)  # a batch at once (torch's)
                yield collate(many(idx) if many else [self.dataset[i] for i in idx])

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # type: ignore[arg-type]  (TypeError if it has none)
            return n if self.batch_size is None else \
                n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)  # type: ignore[arg-type]
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
