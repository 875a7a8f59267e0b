"""The machine the simulator models: re-exported from the WSE target description.

Every figure of the cycle model, the archs and the reserved ids live in
``pyflame_mlir.dialects.wse_target`` (one description of the target, read by
the lowerings and the simulator alike); this module keeps the simulator's names.
"""

from __future__ import annotations

from ...dialects.wse_target import (
    ARCH,
    ARCHS,
    DOCS,
    ESTIMATE,
    FIGURES,
    RESERVED_IDS,
    ROUTABLE_COLORS,
    SDK_TIMING,
    SECONDARY,
    UNVERIFIED,
    ArchRules,
    CycleModel,
)

__all__ = ["ARCH", "ARCHS", "DOCS", "ESTIMATE", "FIGURES", "RESERVED_IDS", "ROUTABLE_COLORS",
           "SDK_TIMING", "SECONDARY", "UNVERIFIED", "ArchRules", "CycleModel"]
