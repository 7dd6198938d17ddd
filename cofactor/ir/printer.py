"""MLIR text for the IR, in generic operation form.

The generic form (``"dialect.op"(%a) <{props}> ({regions}) : (types) -> types``)
is uniform for every op, and both Enzyme-JAX and XLA parse it; the pass runner
pretty-prints it when a human wants to read it.
"""
from __future__ import annotations

from .core import Block, Function, Module, Operation, Value


class _Names:
    def __init__(self):
        self._names: dict[int, str] = {}

    def define(self, value: Value, prefix="%") -> str:
        name = f"{prefix}{len(self._names)}"
        self._names[id(value)] = name
        return name

    def __getitem__(self, value: Value) -> str:
        try:
            return self._names[id(value)]
        except KeyError:
            raise ValueError(f"value {value!r} used outside the scope that defines it") from None


def _types(values) -> str:
    return ", ".join(v.type.mlir() for v in values)


def _print_block(block: Block, names: _Names, indent: str, out: list, header: bool):
    if header:
        args = ", ".join(f"{names.define(a)}: {a.type.mlir()}" for a in block.arguments)
        out.append(f"{indent[:-2]}^bb0({args}):")
    for op in block.operations:
        _print_op(op, names, indent, out)


def _print_op(op: Operation, names: _Names, indent: str, out: list):
    results = ", ".join(names.define(r) for r in op.results)
    lhs = f"{results} = " if op.results else ""
    operands = ", ".join(names[v] for v in op.operands)
    # Inherent attributes are properties; dialect-prefixed (discardable) ones, such as
    # enzyme.enable_checkpointing, go in the attribute dictionary after the regions.
    inherent = {k: v for k, v in op.attributes.items() if "." not in k}
    discardable = {k: v for k, v in op.attributes.items() if "." in k}
    props = " <{" + ", ".join(f"{k} = {v}" for k, v in inherent.items()) + "}>" if inherent else ""
    attrs = " {" + ", ".join(f"{k} = {v}" for k, v in discardable.items()) + "}" if discardable else ""
    line = f'{indent}{lhs}"{op.name}"({operands}){props}'
    signature = f" : ({_types(op.operands)}) -> ({_types(op.results)})"
    if not op.regions:
        out.append(line + attrs + signature)
        return
    out.append(line + " (")
    for i, region in enumerate(op.regions):
        out.append(f"{indent}  {{")
        for block in region.blocks:
            _print_block(block, names, indent + "    ", out, header=True)
        out.append(f"{indent}  }}" + ("," if i + 1 < len(op.regions) else ""))
    out.append(f"{indent}){attrs}{signature}")


def _attribute_text(attrs) -> str:
    return " {" + ", ".join(f"{k} = {v}" for k, v in attrs.items()) + "}" if attrs else ""


def print_function(fn: Function) -> str:
    names = _Names()
    args = [f"{names.define(a, '%arg')}: {a.type.mlir()}{_attribute_text(fn.arg_attributes.get(i))}"
            for i, a in enumerate(fn.arguments)]
    results = ", ".join(t.mlir() + _attribute_text(fn.result_attributes.get(i)) for i, t in enumerate(fn.result_types))
    visibility = "" if fn.visibility == "public" else f"{fn.visibility} "
    out = [f"  func.func {visibility}@{fn.name}({', '.join(args)}) -> ({results}) {{"]
    _print_block(fn.body, names, "    ", out, header=False)
    out.append("  }")
    return "\n".join(out)


def print_module(module: Module) -> str:
    attrs = ""
    if module.attributes:
        attrs = " attributes {" + ", ".join(f"{k} = {v}" for k, v in module.attributes.items()) + "}"
    body = "\n".join([f"  {d}" for d in module.declarations] + [print_function(f) for f in module.functions])
    return f"module{attrs} {{\n{body}\n}}\n"
