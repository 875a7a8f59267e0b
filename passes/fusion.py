"""``fuse``: group ops into fused kernels, and ``unfuse``: undo it.

Named fusions (``named=true``)::

    relu(matmul(a, b))   -> fused_matmul_relu(a, b)
    gelu(matmul(a, b))   -> fused_matmul_gelu(a, b)
    relu(add(a, b))      -> fused_add_relu(a, b)
    sigmoid(mul(a, b))   -> fused_mul_sigmoid(a, b)
    add(mul(a, b), c)    -> fused_fma(a, b, c)          (either operand order of add)

General fusion (``regions=true``): a chain (a tree, in fact) of elementwise
ops, with the ``broadcast_to`` views and small constants it uses, becomes one
``pyflame.fused`` region op; with ``reductions=true`` an elementwise chain
feeding a reduction (``sum mean max min logsumexp``) joins it as a prologue.
A group of exactly two ops that is a named pattern becomes the named op.

A producer is absorbed only when its consumer is its only user, so nothing
is computed twice and no intermediate has to leave a region; with
``recompute=true`` a single elementwise op whose other users keep it alive is
copied into each consuming region instead (it then reads its inputs twice).

One forward sweep builds the groups (each producer is looked at once, when
its consumer is), a second emits them: linear in the size of the module.
These stay hand-written sweeps, not xDSL's pattern walker: a group spans
many ops, so grouping is not a local rewrite of one. ``unfuse`` is local and
uses the pattern rewriter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from ..dialects import OPS
from ..dialects.fused import CHAINS, REDUCTIONS
from ..dialects.opdef import numel
from ..dialects.pyflame import (  # type: ignore[attr-defined]  (generated op classes)
    AddOp,
    BroadcastToOp,
    ConstantOp,
    FusedOp,
    GeluOp,
    MatmulOp,
    MulOp,
    PermuteOp,
    PyflameOp,
    ReluOp,
    SigmoidOp,
    YieldOp,
    op_class,
)
from .common import PyflamePass, attr, blocks_of, erase_if_dead, new_op, spec
from .decompose import DecomposePattern

# (consumer, producer) op classes with a named fused op
NAMED_PAIRS = {(ReluOp, AddOp): "fused_add_relu", (SigmoidOp, MulOp): "fused_mul_sigmoid",
               (AddOp, MulOp): "fused_fma"}
MATMUL_EPILOGUES = {ReluOp: "fused_matmul_relu", GeluOp: "fused_matmul_gelu"}
REDUCTION_CLASSES = frozenset(op_class(n) for n in REDUCTIONS)


@dataclass(eq=False)
class Group:
    """Ops to be fused, as a tree: ``op`` is the root, ``children`` the groups
    of the producers it absorbed (``cloned``: copied, not moved)."""

    op: PyflameOp
    children: list[Group] = field(default_factory=list)
    size: int = 1
    absorbed: bool = False
    cloned: bool = False

    def members(self) -> list[tuple[PyflameOp, bool]]:
        """(op, cloned) in an order where producers come before their users."""
        out: list[tuple[PyflameOp, bool]] = []
        stack: list[tuple[Group, bool, bool]] = [(self, False, False)]
        while stack:
            g, expanded, cloned = stack.pop()
            if expanded:
                out.append((g.op, cloned))
                continue
            stack.append((g, True, cloned or g.cloned))
            for child in reversed(g.children):
                stack.append((child, False, cloned or g.cloned))
        return out


def _only_user(value: SSAValue, op: Operation) -> bool:
    """``op`` is the one user of ``value`` (it may use it more than once)."""
    return value.first_use is not None and all(u.operation is op for u in value.uses)


def _elementwise(op: Operation) -> bool:
    return isinstance(op, PyflameOp) and op.OPDEF.elementwise


@dataclass(frozen=True)
class Fusion(PyflamePass):
    """Fuse elementwise chains (and their reductions) into named ops and
    pyflame.fused regions."""

    name = "fuse"

    named: bool = True
    """Emit the named fused ops (fused_add_relu, ..., fused_matmul_gelu)."""

    regions: bool = True
    """Fuse longer elementwise chains into pyflame.fused region ops."""

    reductions: bool = True
    """Fuse an elementwise prologue into the reduction it feeds."""

    recompute: bool = False
    """Copy a multi-use elementwise op into each consuming region."""

    max_region_ops: int = 64
    """Largest number of ops in one region."""

    constant_limit: int = 1024
    """Constants of at most this many elements are copied into regions."""

    row_major_products: bool = True
    """Compute ``permute(matmul(a, b), [1, 0])`` (2-D, the product's only
    use) as ``matmul(permute(b), permute(a))``: the same sums, laid out row
    major, so the elementwise ops that read it (a weight's gradient, computed
    transposed by the linear layer's VJP, in its optimizer update and the
    gradient norm) read memory in order instead of across it. The operands'
    transposes are views that BLAS takes as flags."""

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        counts = {"fused": 0, "ops_fused": 0}
        for block in list(blocks_of(module)):
            if isinstance(block.parent_op(), FusedOp):
                continue
            if self.row_major_products:
                self.transpose_products(block, counts)
            if self.named:
                self.matmul_epilogues(block, counts)
            if self.named or self.regions:
                for group in self.groups(block):
                    self.emit(group, counts)
        return counts

    # ---- products computed in the layout their users read ----

    def transpose_products(self, block: Block, counts: dict[str, int]) -> None:
        for op in list(block.ops):
            if not isinstance(op, PermuteOp) or tuple(attr(op, "perm")) != (1, 0):
                continue
            mm = op.operands[0].owner
            if not isinstance(mm, MatmulOp) or not _only_user(op.operands[0], op) or \
                    any(len(spec(v)[0]) != 2 for v in mm.operands):
                continue
            a, b = mm.operands
            bt, at = (new_op("permute", [v], {"perm": (1, 0)},
                             [(spec(v)[0][::-1], spec(v)[1])], op).results[0] for v in (b, a))
            product = new_op("matmul", [bt, at], {}, [spec(op.results[0])], op)
            op.results[0].replace_all_uses_with(product.results[0])
            block.erase_op(op)
            block.erase_op(mm)
            counts["row_major_products"] = counts.get("row_major_products", 0) + 1

    # ---- named: matmul epilogues ----

    def matmul_epilogues(self, block: Block, counts: dict[str, int]) -> None:
        op = block.first_op
        while op is not None:
            nxt = op.next_op
            fused_name = MATMUL_EPILOGUES.get(type(op))  # type: ignore[call-overload]
            if fused_name is not None:
                assert isinstance(op, PyflameOp)
                mm = op.operands[0].owner
                if isinstance(mm, MatmulOp) and _only_user(op.operands[0], op):
                    fused = new_op(fused_name, list(mm.operands), op.py_attrs(),
                                   [spec(op.results[0])], op)
                    op.results[0].replace_all_uses_with(fused.results[0])
                    block.erase_op(op)
                    block.erase_op(mm)
                    counts["fused"] += 1
                    counts["ops_fused"] += 2
            op = nxt

    # ---- grouping ----

    def candidate(self, op: Operation) -> bool:
        if not isinstance(op, PyflameOp):
            return False
        return op.OPDEF.elementwise or isinstance(op, BroadcastToOp) or \
            (self.reductions and self.regions and type(op) in REDUCTION_CLASSES)

    def can_absorb(self, g: Group, pg: Group) -> bool:
        """May ``g``'s root absorb the producer group ``pg``?"""
        producer = type(pg.op)
        if producer in REDUCTION_CLASSES:
            return False  # a reduction ends a region
        if type(g.op) in REDUCTION_CLASSES and not _elementwise(pg.op):
            return False  # a reduction's prologue is elementwise
        if not self.regions:  # only the named pairs
            return g.size == 1 and pg.size == 1 and (type(g.op), producer) in NAMED_PAIRS
        return g.size + pg.size <= self.max_region_ops

    def groups(self, block: Block) -> list[Group]:
        """Roots of the groups of at least two ops, in block order."""
        group_of: dict[Operation, Group] = {}
        order: list[Group] = []
        for op in block.ops:
            if not self.candidate(op):
                continue
            assert isinstance(op, PyflameOp)
            g = Group(op)
            group_of[op] = g
            order.append(g)
            seen: set[Operation] = set()
            for v in op.operands:
                producer = v.owner
                pg = group_of.get(producer)  # type: ignore[arg-type]
                if pg is None or producer in seen or pg.absorbed:
                    continue
                seen.add(producer)  # type: ignore[arg-type]
                if _only_user(v, op):
                    if self.can_absorb(g, pg):
                        g.children.append(pg)
                        g.size += pg.size
                        pg.absorbed = True
                elif self.recompute and self.regions and pg.size == 1 \
                        and _elementwise(pg.op) and self.can_absorb(g, pg):
                    g.children.append(Group(pg.op, cloned=True))
                    g.size += 1
        return [g for g in order if not g.absorbed and g.size >= 2
                and not isinstance(g.op, BroadcastToOp)]

    # ---- emission ----

    def named_op(self, g: Group) -> tuple[str, list[SSAValue]] | None:
        """The named fused op a two-op group is, with its operands."""
        if g.size != 2 or len(g.children) != 1:
            return None
        root, producer = g.op, g.children[0].op
        name = NAMED_PAIRS.get((type(root), type(producer)))
        if name is None:
            return None
        operands = list(producer.operands)
        if isinstance(root, AddOp):  # fused_fma: add(mul(a, b), c), either order
            a, b = root.operands
            if a is b:
                return None  # add(m, m): the product is needed twice
            operands.append(b if a is producer.results[0] else a)
        return name, operands

    def emit(self, g: Group, counts: dict[str, int]) -> None:
        root = g.op
        block = root.parent
        assert block is not None
        named = self.named_op(g) if self.named else None
        if named is not None:
            name, operands = named
            fused = new_op(name, operands, {}, [spec(root.results[0])], root)
            root.results[0].replace_all_uses_with(fused.results[0])
            producer = g.children[0].op
            block.erase_op(root)
            if not g.children[0].cloned:  # a recomputed producer has other users
                block.erase_op(producer)
            for v in operands:
                if isinstance(v.owner, Operation):
                    erase_if_dead(v.owner)
            counts["fused"] += 1
            counts["ops_fused"] += 2
            return
        if not self.regions:
            return
        self.emit_region(g, counts)

    def emit_region(self, g: Group, counts: dict[str, int]) -> None:
        root = g.op
        outer = root.parent
        assert outer is not None
        members = g.members()
        moved = {op for op, cloned in members if not cloned}
        local: set[SSAValue] = set()  # values the region computes itself
        inputs_seen: set[SSAValue] = set()
        inputs: list[SSAValue] = []  # the region's operands, in order of first use
        constants: dict[SSAValue, PyflameOp] = {}  # small constants copied in
        for op, _ in members:
            for v in op.operands:
                if v in local or v in constants or v in inputs_seen:
                    continue
                owner = v.owner
                if isinstance(owner, ConstantOp) \
                        and numel(spec(v)[0]) <= self.constant_limit:
                    constants[v] = owner
                    continue
                inputs_seen.add(v)
                inputs.append(v)
            local.update(op.results)
        body = Block(arg_types=[v.type for v in inputs])
        mapping: dict[SSAValue, SSAValue] = {v: body.args[i] for i, v in enumerate(inputs)}
        for v, const in constants.items():
            copy = const.clone()
            body.add_op(copy)
            mapping[v] = copy.results[0]
        fused = FusedOp.create(operands=inputs, result_types=[root.results[0].type],
                               regions=[Region(body)])
        outer.insert_op_before(fused, root)
        root.results[0].replace_all_uses_with(fused.results[0])
        for op, cloned in members:
            if cloned:  # a copy; the clone maps the op's results to its own
                body.add_op(op.clone(value_mapper=mapping))
                continue
            outer.detach_op(op)
            op.operands = [mapping.get(v, v) for v in op.operands]
            body.add_op(op)
        body.add_op(YieldOp.create(operands=[root.results[0]]))
        # constants copied in and recomputed producers may have no user left
        leftovers = [v.owner for v in constants] + [op for op, cloned in members if cloned]
        for owner in leftovers:
            if isinstance(owner, Operation) and owner not in moved:
                erase_if_dead(owner)
        counts["fused"] += 1
        counts["ops_fused"] += len(members)


# ---- unfuse ----

class InlineFusedRegion(RewritePattern):
    """A ``pyflame.fused`` op becomes the ops of its body, in place."""

    def __init__(self) -> None:
        self.count = 0

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, FusedOp):
            return
        terminator = op.yield_op
        results = list(terminator.operands)
        rewriter.erase(terminator)
        rewriter.inline_block(op.body.block, InsertPoint.before(op), list(op.operands))
        for r, v in zip(op.results, results):
            rewriter.replace_all_uses_with(r, v)
        rewriter.erase(op)
        self.count += 1


@dataclass(frozen=True)
class Unfuse(PyflamePass):
    """Expand named fused ops into their chains (their decompositions) and
    inline pyflame.fused regions (for backends without fused kernels)."""

    name = "unfuse"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        inline = InlineFusedRegion()
        chains = DecomposePattern(frozenset(OPS[name] for name in CHAINS))
        PatternRewriteWalker(GreedyRewritePatternApplier([inline, chains])).rewrite_module(module)
        return {"unfused": inline.count + chains.count}


def unfuse_if_fused(ctx: Context, module: ModuleOp) -> None:
    """``unfuse`` when ``module`` holds a fused op: the transforms' rules
    (derivatives, batching) are written for the basic ops (fusion, a later
    pass, fuses the transformed code again)."""
    if any(isinstance(o, FusedOp) or (isinstance(o, PyflameOp) and o.OPDEF.family == "fused")
           for o in module.walk()):
        Unfuse().apply(ctx, module)
