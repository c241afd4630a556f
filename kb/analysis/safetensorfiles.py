"""``safetensors.torch`` in a converted file: the same file format, written and read for MindSpore tensors.

``import safetensors.torch`` imports torch, so a converted project that keeps it does not import without torch.
The names it binds are bound to ``MsSafetensors`` instead, a class written once into the file whose functions take
torch's parameters (``save_file``, ``load_file``, ``save``, ``load``, ``save_model``, ``load_model``)::

    import safetensors.torch as st                 ->  st = MsSafetensors
    from safetensors.torch import save_file, load_file as lf
                                                   ->  save_file, lf = MsSafetensors.save_file, MsSafetensors.load_file
    import safetensors.torch                       ->  (removed; safetensors.torch.X -> MsSafetensors.X)

The format is the published one (a little-endian u64 header size, a JSON header of dtype, shape and data offsets per
tensor, the raw little-endian data), so torch's ``safetensors.torch`` reads what the helper writes and the other way
round; bfloat16 is kept bit for bit (NumPy has no bfloat16: its 16 bits are carried as uint16). A name the class does
not have (``st.storage_ptr``) raises AttributeError when reached. (MindSpore 2.10's
``load_checkpoint(path, format='safetensors')`` reads such a file too, as named Parameters; its
``save_checkpoint(dict, path, format='safetensors')`` fails on a dict of tensors (UnboundLocalError), both checked by
running them; so the helper keeps both directions to itself.)
"""
from __future__ import annotations

from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.stepparts import removal
from kb.analysis.text import TextEdit

MODULE = "safetensors.torch"
RECORD: dict[str, Any] = {
    "torch": MODULE, "kind": "module", "namespace": "safetensors", "source": "curated", "targets": [], "caveats": [],
    "torch_signature": None,
    "advice": "Write and read the safetensors format for MindSpore tensors (MsSafetensors, written into the file).",
}
TITLE = "Bind the safetensors.torch names to MsSafetensors (the same file format for MindSpore tensors)"
NAME = "MsSafetensors"
HELPER = '''\
class MsSafetensors(object):
    """safetensors.torch (written by msmap convert) for MindSpore tensors, in the same file format: torch's
    safetensors reads what this writes and the other way round (bfloat16 bit for bit)."""

    CODES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "bfloat16", "I64": "<i8", "I32": "<i4", "I16": "<i2",
             "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?"}

    @staticmethod
    def save(tensors, metadata=None):
        import json
        import struct

        import numpy as np

        header, chunks, offset = {}, [], 0
        if metadata is not None:
            header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
        for name, tensor in tensors.items():
            if isinstance(tensor, {ms}.Tensor) and tensor.dtype == {ms}.bfloat16:
                code, array = "BF16", (tensor.astype({ms}.float32).asnumpy().view(np.uint32) >> 16).astype("<u2")
            else:
                array = tensor.asnumpy() if isinstance(tensor, {ms}.Tensor) else np.asarray(tensor)
                code = next((k for k, v in MsSafetensors.CODES.items()
                             if v != "bfloat16" and np.dtype(v) == array.dtype.newbyteorder("<")), None)
                if code is None:
                    raise NotImplementedError(f"safetensors has no dtype for {array.dtype} ({name})")
                array = array.astype(MsSafetensors.CODES[code])
            data = np.ascontiguousarray(array).tobytes()
            header[name] = {"dtype": code, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
            chunks.append(data)
            offset += len(data)
        text = json.dumps(header, separators=(",", ":")).encode("utf-8")
        text += b" " * (-len(text) % 8)
        return struct.pack("<Q", len(text)) + text + b"".join(chunks)

    @staticmethod
    def load(data):
        import json
        import struct

        import numpy as np

        size = struct.unpack("<Q", data[:8])[0]
        header = json.loads(data[8:8 + size].decode("utf-8"))
        body = memoryview(data)[8 + size:]
        out = {}
        for name, spec in header.items():
            if name == "__metadata__":
                continue
            begin, end = spec["data_offsets"]
            shape = tuple(spec["shape"])
            if spec["dtype"] == "BF16":
                bits = np.frombuffer(body[begin:end], dtype="<u2").astype(np.uint32) << 16
                out[name] = {ms}.Tensor(bits.view(np.float32).reshape(shape)).astype({ms}.bfloat16)
            elif spec["dtype"] in MsSafetensors.CODES:
                array = np.frombuffer(body[begin:end], dtype=MsSafetensors.CODES[spec["dtype"]]).reshape(shape)
                out[name] = {ms}.Tensor(array.astype(array.dtype.newbyteorder("=")))
            else:
                raise NotImplementedError(f"safetensors dtype {spec['dtype']} ({name}) has no MindSpore tensor here")
        return out

    @staticmethod
    def save_file(tensors, filename, metadata=None):
        import os

        with open(os.fspath(filename), "wb") as f:
            f.write(MsSafetensors.save(tensors, metadata))

    @staticmethod
    def load_file(filename, device="cpu"):
        import os

        with open(os.fspath(filename), "rb") as f:
            return MsSafetensors.load(f.read())

    @staticmethod
    def save_model(model, filename, metadata=None, force_contiguous=True):
        MsSafetensors.save_file(dict(model.parameters_and_names()), filename, metadata)

    @staticmethod
    def load_model(model, filename, strict=True, device="cpu"):
        result = model.load_state_dict(MsSafetensors.load_file(filename), strict=strict)
        return list(result.missing_keys), list(result.unexpected_keys)
'''


def safetensor_imports(root: Any, source: bytes, alias: str) -> list[tuple[Any, list[TextEdit]]]:
    """(import statement, the edits binding its names to MsSafetensors) for each import of ``safetensors.torch``."""
    found: list[tuple[Any, list[TextEdit]]] = []
    definition = HELPER.replace("{ms}", alias)
    at = source.find(b"safetensors")
    while at >= 0:
        node = root.named_descendant_for_byte_range(at, at + len(b"safetensors"))
        statement = node
        while statement is not None and statement.type not in ("import_statement", "import_from_statement"):
            statement = statement.parent if statement.type in ("identifier", "dotted_name", "aliased_import") else None
        if statement is not None and not any(s.id == statement.id for s, _ in found):
            edits = _rebinding(statement, root, source)
            if edits is not None and not found:  # the class is written once, before the first of them
                edits = _defined_first(statement, edits, source, definition)
            if edits is not None:
                found.append((statement, edits))
        at = source.find(b"safetensors", at + 1)
    return found


def _rebinding(statement: Any, root: Any, source: bytes) -> list[TextEdit] | None:
    """The edits replacing one import statement of ``safetensors.torch`` (None for any other import)."""
    if statement.type == "import_from_statement":
        module = statement.child_by_field_name("module_name")
        if module is None or module.text != MODULE.encode():
            return None
        pairs = []
        for item in statement.children_by_field_name("name"):
            name = item.child_by_field_name("name") if item.type == "aliased_import" else item
            bound = item.child_by_field_name("alias") if item.type == "aliased_import" else item
            pairs.append((bound.text.decode(), f"{NAME}.{name.text.decode()}"))
        if not pairs:  # from safetensors.torch import *
            return None
        text = f"{', '.join(b for b, _ in pairs)} = {', '.join(v for _, v in pairs)}"
        return [TextEdit(statement.start_byte, statement.end_byte, text)]
    items = [c for c in statement.named_children if c.type in ("dotted_name", "aliased_import")]
    if len(items) != 1:
        return None  # import safetensors.torch, os: left as written
    item = items[0]
    dotted = item.child_by_field_name("name") if item.type == "aliased_import" else item
    if dotted is None or dotted.text != MODULE.encode():
        return None
    if item.type == "aliased_import":
        return [TextEdit(statement.start_byte, statement.end_byte, f"{item.child_by_field_name('alias').text.decode()}"
                                                                    f" = {NAME}")]
    # import safetensors.torch: every ``safetensors.torch`` goes to the class; the statement goes unless
    # ``safetensors`` is used for something else
    edits, other = [], False
    at = source.find(b"safetensors")
    while at >= 0:
        node = root.named_descendant_for_byte_range(at, at + len(b"safetensors"))
        attribute = node.parent if node is not None and node.type == "identifier" else None
        if attribute is not None and attribute.type == "attribute" and attribute.text == MODULE.encode():
            edits.append(TextEdit(attribute.start_byte, attribute.end_byte, NAME))
        elif node is not None and node.type == "identifier" and not _in_import(node):
            other = True
        at = source.find(b"safetensors", at + 1)
    edits.append(TextEdit(statement.start_byte, statement.end_byte, "import safetensors") if other
                 else removal(statement, source))
    return edits


def _in_import(node: Any) -> bool:
    while node is not None and node.type in ("identifier", "dotted_name", "aliased_import"):
        node = node.parent
    return node is not None and node.type in ("import_statement", "import_from_statement")


def _defined_first(statement: Any, edits: list[TextEdit], source: bytes, definition: str) -> list[TextEdit]:
    """``edits`` with the class defined before the statement: a module-level import becomes the definition
    followed by its own replacement (an insertion of its own could meet the MindSpore import the engine adds at
    the top of the file); one in a function gets it before the module-level statement that holds it."""
    if statement.parent is not None and statement.parent.type == "module":
        mine = next((e for e in edits if e.start <= statement.start_byte and e.end >= statement.end_byte), None)
        if mine is not None:  # (a removal: the whole line)
            text = mine.new_text if mine.new_text.strip() not in ("", "pass") else ""
            replaced = TextEdit(mine.start, mine.end, definition.rstrip("\n") + ("\n\n\n" + text if text else "\n"))
            return [e for e in edits if e is not mine] + [replaced]
    added = insertion(statement, source, NAME, definition)
    return edits + ([added] if added is not None else [])
