"""What a torch function called between modules is in the graph: its op's name, and whether it is a node, the
same tensor under another name (folded into the edge), a new tensor that owes its input nothing but a shape, or a
read of the data's values that makes the rest of the forward depend on them. Rules by name only (torch-free):
the recorder (`recorder`) applies them to what its TorchFunctionMode sees.

Decisions, and why:
- `contiguous`, `detach`, `clone` and a `.to()` / `.float()` / `.cuda()` that keeps the dtype change neither values
  nor shape: folded, so the edge goes on from the tensor's maker (a detector's `.to(device)` calls would be nodes
  otherwise). A `.to()` that changes the dtype is a node: the edges around it carry different dtypes.
- `zeros_like`, `new_zeros`, ... read only their input's shape: their output comes from nowhere, as a
  parameter's or `torch.arange`'s does, and no edge leads to it.
- Reading values into Python (`item`, `tolist`, `bool(t)`) and ops whose output shape depends on the values
  (`nonzero`, `unique`, `nms`, a boolean mask) make the graph that of this input's forward.
"""

from __future__ import annotations

#: Dunder arithmetic and comparison methods, by the op they are (`x + y`, `y + x` and `x += y` are all `add`).
_DUNDER = {"truediv": "div", "floordiv": "floor_divide", "and": "bitwise_and", "or": "bitwise_or",
           "xor": "bitwise_xor", "invert": "bitwise_not", "lshift": "bitwise_left_shift",
           "rshift": "bitwise_right_shift", "mod": "remainder"}
_REFLECTED = {"radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmatmul", "rpow", "rmod", "rand", "ror", "rxor",
              "rlshift", "rrshift"}
_IN_PLACE_DUNDER = {"iadd", "isub", "imul", "itruediv", "ifloordiv", "imatmul", "ipow", "imod", "iand", "ior",
                    "ixor", "ilshift", "irshift"}

#: Same values, same shape, same dtype (a `.to()` is folded only when it keeps the dtype: `recorder` checks).
FOLDED = frozenset({"contiguous", "detach", "detach_", "clone", "to", "type", "cpu", "cuda", "float", "double",
                    "half", "bfloat16", "requires_grad", "pin_memory", "coalesce", "_to_copy", "alias",
                    "lift_fresh_copy", "data"})
#: Tensors made from another's shape (and dtype, device) only.
SHAPE_ONLY = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                        "randint_like", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
                        "new_empty_strided", "empty_strided"})
#: Reading a tensor's values into Python: what follows may depend on them.
VALUE_READS = frozenset({"item", "tolist", "bool", "int", "float", "index", "complex", "numpy", "array",
                         "is_nonzero", "equal", "allclose"})
#: Ops whose output's shape depends on the input's values.
DATA_SHAPED = frozenset({"nonzero", "nonzero_static", "argwhere", "masked_select", "unique", "unique_consecutive",
                         "unique_dim", "_unique2", "nms", "batched_nms", "repeat_interleave"})
#: Calls that are no data flow whatever they are given (autograd state, assertions, formatting).
NOT_FLOW = frozenset({"_set_grad_enabled", "_assert", "_assert_async", "repr", "format", "len", "iter", "str",
                      "register_hook", "retain_grad", "dim", "size", "numel", "stride", "storage_offset",
                      "data_ptr", "element_size", "is_contiguous", "is_floating_point", "is_complex", "get_device",
                      "untyped_storage", "_version", "deepcopy", "reduce_ex"})


def op_name(raw: str, attribute: str | None = None) -> tuple[str, bool]:
    """The op a function is, from its `__name__` (`attribute`: the attribute's name when it is a property's
    getter, `__get__`), and whether its name says it works in place: `__iadd__` -> ("add", True), `__radd__` ->
    ("add", False), `relu_` -> ("relu", True), `add.Tensor` (a `torch.ops.aten` overload, as `.pt2` programs call
    them) -> ("add", False), `__getitem__` -> ("getitem", False), `__setitem__` -> ("setitem", True)."""
    if raw == "__get__" and attribute:
        return attribute, False
    name = raw.split(".", 1)[0]  # aten overloads: `add.Tensor`, `view.default`
    if name.startswith("__") and name.endswith("__") and len(name) > 4:
        bare = name[2:-2]
        if bare == "setitem":
            return "setitem", True
        if bare in _IN_PLACE_DUNDER:
            return _DUNDER.get(bare[1:], bare[1:]), True
        if bare in _REFLECTED:
            bare = bare[1:]
        return _DUNDER.get(bare, bare), False
    if name.endswith("_") and not name.startswith("_") and len(name) > 1:
        return name[:-1], True
    return name, False
