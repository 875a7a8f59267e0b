"""``pf.optim.LBFGS``: torch.optim.LBFGS's algorithm, iterate for iterate
(two-loop recursion over ``history_size`` curvature pairs, the first step
``min(1, 1/|g|_1) * lr``, optional strong-Wolfe line search with cubic
interpolation, the same stopping tests).

L-BFGS is driven by the host: every iteration decides from numbers (the
loss, ``g.d``, tolerances), so each closure call evaluates the loss and the
gradients (one graph: ``realize`` of both at once) and the direction
algebra runs on flat numpy vectors in the parameters' dtype. A parameter
update is recorded as ``p.add_(step)`` with the step a leaf (a graph
argument), so every closure call hits the compile cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..autodiff import enable_grad, no_grad
from ..core import Tensor, realize
from .optimizer import Optimizer

__all__ = ["LBFGS"]

Vec = np.ndarray


def _cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                       bounds: tuple[float, float] | None = None) -> float:
    """The minimizer of the cubic through two points with their slopes, in
    ``bounds`` (torch's ``_cubic_interpolate``)."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func: Callable[[Any, float, Vec], tuple[float, Vec]], x: Any, t: float,
                  d: Vec, f: float, g: Vec, gtd: Any, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9, max_ls: int = 25
                  ) -> tuple[float, Vec, float, int]:
    """torch's ``_strong_wolfe``: bracketing, then zoom by cubic interpolation."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[float] = []
    bracket_f: list[float] = []
    bracket_g: list[Vec] = []
    bracket_gtd: list[Any] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _to_tensor(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return Tensor._leaf(value.copy())  # noqa: SLF001
    if isinstance(value, list):
        return [_to_tensor(v) for v in value]
    return value


def _to_host(value: Any) -> Any:
    """A state value as the algorithm keeps it: vectors as numpy arrays, 0-d
    values as numpy scalars, lists element by element."""
    if isinstance(value, list):
        return [_to_host(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, Tensor) or (hasattr(value, "detach") and hasattr(value, "cpu")):
        arr = value.numpy() if isinstance(value, Tensor) else value.detach().cpu().numpy()
        arr = np.array(arr, copy=True)
        return arr[()] if arr.ndim == 0 else arr
    return value


class LBFGS(Optimizer):
    """torch.optim.LBFGS: one parameter group; ``step(closure)`` runs up to
    ``max_iter`` iterations, calling ``closure`` (which zeroes the gradients,
    computes the loss, calls ``backward`` and returns the loss)."""

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor):
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            lr = float(lr.item())
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError(f"LBFGS: only 'strong_wolfe' is supported as line_search_fn, "
                               f"got {line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]
        self._dtype = np.result_type(*(p.dtype.np for p in self._params))

    def state_dict(self) -> dict[str, Any]:
        """torch's layout: the state under the first parameter's index; the
        vectors as tensors (``d``, ``prev_flat_grad``, the history lists)."""
        sd = super().state_dict()
        sd["state"] = {k: {name: _to_tensor(v) for name, v in st.items()}
                       for k, st in sd["state"].items()}
        return sd

    @staticmethod
    def _unpack(key: str, value: Any, p: Tensor) -> Any:
        """State values back to host form: numpy vectors, Python numbers
        (ours or torch's tensors alike)."""
        return _to_host(value)

    def _gather_flat_grad(self) -> Vec:
        return np.concatenate([
            np.zeros(p.numel(), self._dtype) if p.grad is None
            else np.asarray(p.grad.numpy(), dtype=self._dtype).reshape(-1)
            for p in self._params])

    def _add_grad(self, step_size: float, update: Vec) -> None:
        """``p += step_size * update`` per parameter, recorded: the scaled
        step enters as a leaf, so the graph is the same at every call."""
        offset = 0
        with no_grad():
            for p in self._params:
                n = p.numel()
                step = (update[offset:offset + n] * step_size).astype(p.dtype.np)
                p.add_(Tensor._leaf(step.reshape(p.shape)))  # noqa: SLF001
                offset += n

    def _clone_param(self) -> list[np.ndarray]:
        return [p.numpy().copy() for p in self._params]

    def _set_param(self, params_data: Sequence[np.ndarray]) -> None:
        with no_grad():
            for p, data in zip(self._params, params_data, strict=True):
                p.copy_(Tensor._leaf(data.copy()))  # noqa: SLF001

    def _evaluate(self, closure: Callable[[], Any]) -> tuple[Any, float, Vec]:
        """Call the closure; its loss and the gradients in one evaluation."""
        with enable_grad():
            loss = closure()
        realize([loss] + [p.grad for p in self._params if p.grad is not None])
        return loss, float(loss), self._gather_flat_grad()

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[np.ndarray], t: float,
                              d: Vec) -> tuple[float, Vec]:
        self._add_grad(t, d)
        _, loss, flat_grad = self._evaluate(closure)
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[override]
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that reevaluates the model and "
                               "returns the loss")
        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss, loss, flat_grad = self._evaluate(closure)
        current_evals = 1
        state["func_evals"] += 1
        opt_cond = np.abs(flat_grad).max() <= tolerance_grad
        if opt_cond:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                al = state.setdefault("al", [None] * history_size)
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                d = r = (q * h_diag).astype(self._dtype)
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(np.abs(flat_grad).sum())) * lr if state["n_iter"] == 1 \
                else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x: list[np.ndarray], t: float, d: Vec) -> tuple[float, Vec]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    _, loss, flat_grad = self._evaluate(closure)
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update({"d": d, "t": t, "old_dirs": old_dirs, "old_stps": old_stps, "ro": ro,
                      "H_diag": h_diag, "prev_flat_grad": prev_flat_grad,
                      "prev_loss": prev_loss})
        return orig_loss
