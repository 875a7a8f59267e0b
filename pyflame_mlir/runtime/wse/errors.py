"""Errors of the WSE simulator; each names the PE, color, task or budget at fault."""


class WseError(Exception):
    """Base class of every simulator error."""


class UnsupportedError(WseError):
    """The program uses an op or builtin the simulator does not model."""


class ProgramError(WseError):
    """The program is ill-formed or misbehaves at run time (bad DSD, missing param, ...)."""


class DsdBoundsError(ProgramError):
    """A memory DSD reaches outside its array (the DSD unit adds the PE and the builtin)."""


class SramOverflowError(ProgramError):
    """A PE's globals do not fit in its SRAM budget."""


class ReservedIdError(ProgramError):
    """A color, task id or queue reserved for memcpy/the runtime is used by the program."""


class RouteError(ProgramError):
    """A route is illegal, or a wavelet reaches a router with no route for it."""


class DeadlockError(WseError):
    """The host waits on the command stream but no PE can make progress."""


class StaleWaveletError(WseError):
    """Wavelets were delivered to a core that never read them (reported at the next
    launch or at ``stop()``, naming color and PEs)."""


class HostError(WseError):
    """The host script misuses the SdkRuntime API (bad symbol, bad memcpy shape, ...)."""


class ArchRuleError(ProgramError):
    """The program breaks a rule of its architecture that ``cslc`` enforces (task id
    ranges, queues that do not exist, route shapes, DSD field types): the rule
    table is ``dialects/wse_target.py: ARCH``."""


class AsyncRaceError(WseError):
    """The core wrote a source of a running asynchronous DSD op before the op read it,
    and the wavelets the op sent were already used by a receiver: the simulator
    cannot replay the race (hardware would have sent the new values)."""


class AsyncRaceWarning(UserWarning):
    """The core wrote a source of a running asynchronous DSD op before the op read
    it: the op sees the new value, as hardware would (a race in the program)."""
