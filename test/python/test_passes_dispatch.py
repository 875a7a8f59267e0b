"""Per-op tables are keyed by op class or op-table entry, never by name
strings: a misspelt name fails where the table is written, and lookups are
by identity."""

from __future__ import annotations

import pytest
from pyflame_mlir.dialects import OPS, ad
from pyflame_mlir.dialects.pyflame import OP_CLASSES, PyflameOp, op_class
from pyflame_mlir.passes import PASSES, algebraic, autodiff, cse, decompose, fusion
from pyflame_mlir.passes.common import IRBuilder
from pyflame_mlir.passes.decompose import decomposable


def test_op_class_by_name_or_entry() -> None:
    add = op_class("add")
    assert add is OP_CLASSES["add"] is op_class(OPS["add"])
    assert issubclass(add, PyflameOp) and add.OPDEF is OPS["add"]
    assert add.__name__ == "AddOp" and op_class("log_softmax").__name__ == "LogSoftmaxOp"
    with pytest.raises(KeyError, match="unknown pyflame op 'ad'"):
        op_class("ad")


def test_rule_tables_are_keyed_by_class_or_entry() -> None:
    assert all(isinstance(k, type) and issubclass(k, PyflameOp) for k in algebraic.RULES)
    assert all(isinstance(k, type) and issubclass(k, PyflameOp) for k in cse.COMMUTATIVE)
    assert all(isinstance(k, type) for pair in fusion.NAMED_PAIRS for k in pair)
    for table in (ad.VJP, ad.JVP, ad.NONDIFF):
        assert all(k is OPS[k.name] for k in table)


def test_misspelt_names_fail_at_registration() -> None:
    with pytest.raises(KeyError, match="'sbu'"):
        algebraic.rule("sbu")
    with pytest.raises(KeyError, match="'sbu'"):
        ad.defvjp("sbu", lambda *a, **k: [])
    with pytest.raises(KeyError, match="'sbu'"):
        ad.nondiff("sbu")


def test_decompose_resolves_names_to_entries() -> None:
    assert decomposable(("softmax", "log_softmax,logsumexp")) == \
        {OPS["softmax"], OPS["log_softmax"], OPS["logsumexp"]}
    assert decomposable() == {d for d in OPS.values() if d.decomposition is not None}
    with pytest.raises(ValueError, match="unknown op 'sofmax'"):
        decomposable(("sofmax",))


def test_one_ir_builder_serves_autodiff_and_decompositions() -> None:
    assert autodiff.IRBuilder is decompose.IRBuilder is IRBuilder
    assert {"decompose", "legalize-for-max", "unfuse"} <= set(PASSES)
