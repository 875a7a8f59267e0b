"""The ``pyflame`` dialect as IRDL text, generated from the op table (one
source of truth: ``OPS``), so upstream MLIR can load it at run time
(``mlir.dialects.irdl.load_dialects``) and parse and verify our IR.

What IRDL checks: op names, operand and result counts (tensors), the
required attributes and their attribute kinds, and the region of
``pyflame.fused``. The shape/dtype rules stay in Python (``OpDef.infer``).

Limitations of MLIR 22's IRDL, which unifies each constraint variable over
all its uses: a variadic group must hold values of one type. Fixed-arity
ops get one constraint per operand and result; the variadic ones (``concat``
operands, ``split`` results, ``pyflame.fused``/``pyflame.yield``) verify
only when their values share a type. Optional attributes (``opt_*``) are not
declared (MLIR accepts them as discardable attributes); ``pyflame.vjp`` and
``pyflame.jvp`` (properties, two variadic groups) are not in the IRDL
dialect: expand them (``pyflame-autodiff``) before handing IR to MLIR.

Plain Python: importing this module must not import xDSL or MLIR.
"""

from __future__ import annotations

from .opdef import OPS, OpDef

# attribute kind -> IRDL constraint on the attribute
ATTR_CONSTRAINTS = {
    "int": 'irdl.base "#builtin.integer"',
    "bool": 'irdl.base "#builtin.integer"',
    "float": 'irdl.base "#builtin.float"',
    "str": 'irdl.base "#builtin.string"',
    "ints": 'irdl.base "#builtin.dense_array"',
    "dtype": 'irdl.base "#builtin.type"',
    "dense": 'irdl.base "#builtin.dense_int_or_fp_elements"',
}
_TENSOR = 'irdl.base "!builtin.tensor"'


def _operation(opdef: OpDef) -> list[str]:
    lines = [f"  irdl.operation @{opdef.name} {{"]
    n = 0

    def var(constraint: str) -> str:
        nonlocal n
        lines.append(f"    %{n} = {constraint}")
        n += 1
        return f"%{n - 1}"

    if opdef.num_inputs is None:
        operands = [f"inputs: variadic {var(_TENSOR)}"]
    else:
        operands = [f"in{i}: {var(_TENSOR)}" for i in range(opdef.num_inputs)]
    if opdef.num_results is None:
        results = [f"outputs: variadic {var(_TENSOR)}"]
    else:
        results = [f"out{i}: {var(_TENSOR)}" for i in range(opdef.num_results)]
    attrs = [f'"{name}" = {var(ATTR_CONSTRAINTS[kind])}'
             for name, kind in opdef.attrs.items() if kind in ATTR_CONSTRAINTS]
    lines.append(f"    irdl.operands({', '.join(operands)})")
    lines.append(f"    irdl.results({', '.join(results)})")
    if attrs:
        lines.append(f"    irdl.attributes {{{', '.join(attrs)}}}")
    lines.append("  }")
    return lines


def irdl_text() -> str:
    """The IRDL module defining ``pyflame`` (every op of ``OPS``, plus
    ``fused`` and ``yield``)."""
    lines = ["irdl.dialect @pyflame {"]
    for opdef in OPS.values():
        if "func" in opdef.attrs.values():  # frontend-only transform nodes
            continue
        lines += _operation(opdef)
    lines += [
        "  irdl.operation @fused {",
        f"    %0 = {_TENSOR}",
        f"    %1 = {_TENSOR}",
        "    %2 = irdl.region",
        "    irdl.operands(inputs: variadic %0)",
        "    irdl.results(outputs: variadic %1)",
        "    irdl.regions(body: %2)",
        "  }",
        "  irdl.operation @yield {",
        f"    %0 = {_TENSOR}",
        "    irdl.operands(values: variadic %0)",
        "    irdl.results()",
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"
