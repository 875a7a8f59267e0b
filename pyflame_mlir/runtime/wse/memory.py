"""A PE's SRAM: one byte array; globals are typed numpy views placed by a bump allocator.

Views alias the byte array, so pointer casts between element types see the
same bits, and the budget check is a plain comparison against the SRAM size
minus the reserve for code, stack and memcpy buffers.
"""

from __future__ import annotations

import numpy as np

from .errors import SramOverflowError


class Sram:
    def __init__(self, where: str, capacity: int, reserve: int):
        self.where, self.capacity, self.reserve = where, capacity, reserve
        self.bytes = np.zeros(capacity, np.uint8)
        self.top = 0
        self.allocations: list[tuple[str, int]] = []

    @property
    def budget(self) -> int:
        return self.capacity - self.reserve

    def alloc(self, name: str, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        start = -(-self.top // 4) * 4  # word aligned, like the 32-bit memory ports
        self.allocations.append((name, nbytes))
        if start + nbytes > self.budget:
            biggest = sorted(self.allocations, key=lambda a: -a[1])[:4]
            listing = ", ".join(f"{n}: {b} B" for n, b in biggest)
            raise SramOverflowError(
                f"{self.where}: globals need {start + nbytes} bytes of SRAM ({listing}, ...) "
                f"but the budget is {self.budget} bytes ({self.capacity}-byte SRAM minus "
                f"{self.reserve} bytes reserved for code, stack and memcpy)"
            )
        self.top = start + nbytes
        return self.bytes[start : start + nbytes].view(dtype).reshape(shape)
