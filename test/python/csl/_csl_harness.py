"""Helpers of the csl backend tests."""

from __future__ import annotations

import numpy as np


def assert_close(ref: list[np.ndarray], got: list[np.ndarray], rtol: float = 2e-5,
                 atol: float = 2e-6) -> None:
    assert len(ref) == len(got)
    for i, (r, g) in enumerate(zip(ref, got)):
        assert r.shape == g.shape, f"output #{i}: shape {g.shape} != {r.shape}"
        assert r.dtype == g.dtype, f"output #{i}: dtype {g.dtype} != {r.dtype}"
        if r.dtype == np.bool_:
            np.testing.assert_array_equal(g, r, err_msg=f"output #{i}")
        else:
            np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg=f"output #{i}")
