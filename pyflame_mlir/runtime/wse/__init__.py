"""A functional simulator of the Cerebras Wafer-Scale Engine for `csl`-dialect programs.

`Simulator` interprets the IR our CSL text is printed from on a rectangle of
PEs with a cycle model (`machine.CycleModel`); `sdkruntime` is a stand-in for
the SDK's host runtime so that SDK host scripts run against it unchanged.
"""

from .errors import (
    DeadlockError,
    HostError,
    ProgramError,
    ReservedIdError,
    RouteError,
    SramOverflowError,
    StaleWaveletError,
    UnsupportedError,
    WseError,
)
from .machine import CycleModel
from .program import load_module, parse_program
from .report import CycleReport
from .simulator import Simulator

__all__ = [
    "CycleModel",
    "CycleReport",
    "DeadlockError",
    "HostError",
    "ProgramError",
    "ReservedIdError",
    "RouteError",
    "Simulator",
    "SramOverflowError",
    "StaleWaveletError",
    "UnsupportedError",
    "WseError",
    "load_module",
    "parse_program",
]
