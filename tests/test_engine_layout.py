"""The engine's shape, read from its source: imports run one way, and torch's private
state is read in `capture/internals.py` only (patched in `capture/hooks.py` only).

These parse `capture/` with `ast` rather than importing it, so they see every import
and attribute read, including those inside functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "capture"
MODULES = {p.stem: ast.parse(p.read_text(encoding="utf-8"), str(p))
           for p in sorted(CAPTURE.glob("*.py"))}
# the front ends: read torch's private state through capture's seam too
WIDGETS = {p.relative_to(ROOT).as_posix(): ast.parse(p.read_text(encoding="utf-8"), str(p))
           for p in sorted((ROOT / "widgets").rglob("*.py"))}


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    """ids of the nodes under `if TYPE_CHECKING:` (imports for type checkers, never run)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
                (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
                or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")):
            for child in node.body:
                inside.update(id(n) for n in ast.walk(child))
    return inside


def capture_imports(name: str) -> set[str]:
    """The capture modules `name` imports, at its top or inside a function."""
    tree = MODULES[name]
    skip = _type_checking_blocks(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is None:  # from . import a, b
                out.update(a.name for a in node.names)
            elif node.level == 1:  # from .a import b
                out.add(node.module.split(".")[0])
            elif node.level == 0 and node.module and node.module.split(".")[0] == "capture":
                parts = node.module.split(".")
                out.update([parts[1]] if len(parts) > 1 else [a.name for a in node.names])
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "capture" and len(parts) > 1:
                    out.add(parts[1])
    return {m for m in out if m in MODULES and m != name}


def test_the_graph_reader_sees_imports_in_every_form():
    tree = ast.parse("from . import a, b\nfrom .c import d\ndef f():\n    from .e import g\n"
                     "    import capture.h\nif TYPE_CHECKING:\n    from .i import j\n")
    MODULES["_probe"] = tree
    try:
        for m in "abcdeghij":
            MODULES.setdefault(m, ast.Module(body=[], type_ignores=[]))
        assert capture_imports("_probe") == {"a", "b", "c", "e", "h"}
    finally:
        for m in ["_probe", *"abcdeghij"]:
            if MODULES.get(m) is not None and m not in {p.stem for p in CAPTURE.glob("*.py")}:
                del MODULES[m]


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph, as a path that returns to its start, or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_capture_has_no_import_circle():
    graph = {m: capture_imports(m) for m in MODULES}
    cycle = _cycle(graph)
    assert cycle is None, "import circle in capture/: " + " -> ".join(cycle)


RECORD_MODULES = {"recording", "records", "steps", "codec", "shapes"}


def test_records_import_no_reader():
    """The records are data: the modules that hold them (the records, the steps, their
    JSON, the recording) need only each other and the text policy, never a module that
    reads Dynamo or code objects, nor a view (`str()` finds its view in TEXT_VIEWS)."""
    for module in sorted(RECORD_MODULES):
        assert capture_imports(module) <= RECORD_MODULES | {"text"}, module


# -- torch's private state ---------------------------------------------------------

SEAM = "internals"   # the one module that reads torch's private state
PATCHER = "hooks"    # the one module that patches: it may import what it patches

# Names only Dynamo's objects answer to (translators, trackers, the output graph, guards,
# Dynamo's exceptions and torch's loggers): reading one outside the seam is a private
# read, however the object was reached. Added to below by every name the seam itself
# reads that capture's own code never defines.
# (A name capture also gives one of its own records, `Compile.restart_reason`, is left to
# the seam's rules below: reading our own field is no private read.)
DYNAMO_NAMES = {
    "instruction_pointer", "symbolic_locals", "proxy", "tracers", "tracing_context",
    "guards_context", "dynamo_guards", "user_stack", "guarded_code", "guard_manager",
    "skip_reason", "restart_reason", "gb_type", "real_stack", "global_scope", "logged",
    "artifact_name", "set_name_hint", "current_trace_id", "current_compile_id", "sym_num",
    "_bytecode_hooks", "_len", "_root", "_dict",
}
# Dynamo's methods: calling one outside the seam is a private read even where a record
# of ours has a field of that name (`Var.python_type` is read, never called).
DYNAMO_METHODS = {
    "python_type", "is_realized", "peek_type", "peek_value", "unwrap", "realize",
    "as_python_constant", "create_fn_name", "get_child_managers", "get_leaf_guards",
    "verbose_code_parts", "check_verbose",
}
# What hooks.py wraps: it reads these private names of torch's to patch them.
PATCH_TARGETS = {"_MultiProcessingDataLoaderIter"}
# Public attributes of the Python and FX objects capture reads everywhere (a code
# object's, a `dis.Instruction`'s, a frame's, an FX node's and graph's): never private.
PUBLIC_NAMES = {
    "name", "lineno", "line", "offset", "opname", "arg", "argval", "argrepr", "starts_line",
    "positions", "is_jump_target", "target", "meta", "op", "args", "kwargs", "nodes", "graph",
    "code", "shape", "dtype", "node", "stack", "source", "value", "items", "get", "keys",
    "values", "handlers", "level", "propagate", "disabled", "inner", "msg", "parent",
    "f_code", "tb_frame",
}
# Underscore names that are public API of what they are read on.
PUBLIC_UNDERSCORED = {"_replace", "_make", "_asdict", "_fields",  # NamedTuple's
                      "_repr_mimebundle_"}                         # IPython's display protocol
# Modules of Python itself whose private helpers a module may use, with the reason:
# these are not torch.
NOT_TORCH = {"dis", "sys", "os", "linecache", "logging", "inspect", "types", "gc", "functools"}


def _own_names() -> set[str]:
    """Every name capture itself defines: functions, classes, their fields and methods,
    and attributes it assigns on its own objects (`self.x = ...`); not the seam's
    accessors, which are named after what they read."""
    names: set[str] = set()
    for module, tree in MODULES.items():
        if module == SEAM:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
    return names


def _seam_reads() -> set[str]:
    """The attribute names the seam reads on what it is handed (its parameters)."""
    names: set[str] = set()
    for node in ast.walk(MODULES[SEAM]):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = {a.arg for a in [*node.args.posonlyargs, *node.args.args,
                                      *node.args.kwonlyargs]}
            for sub in ast.walk(node):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                        and sub.value.id in params:
                    names.add(sub.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("attrgetter", "methodcaller") and node.args \
                and isinstance(node.args[0], ast.Constant):
            names.add(node.args[0].value)
    return names


def private_names() -> set[str]:
    derived = {n for n in _seam_reads() if not n.startswith("__")} - PUBLIC_NAMES
    return (DYNAMO_NAMES | derived) - _own_names()


def _methods(tree: ast.AST) -> set[int]:
    """ids of the functions defined directly in a class of capture's own."""
    return {id(f) for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
            for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _read_names(node: ast.AST) -> list[tuple[str, ast.AST | None]]:
    """(attribute name, receiver) of an attribute read, or of getattr/hasattr with a name;
    a method called is named with `()`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in DYNAMO_METHODS:
        return [(node.func.attr + "()", node.func.value)]
    if isinstance(node, ast.Attribute):
        return [(node.attr, node.value)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
        return [(node.args[1].value, node.args[0])]
    return []


def _passthrough_accessors() -> set[str]:
    """The seam's accessors that hand out a live part of a torch object (every `return`
    is an attribute or item of a parameter: `tx.symbolic_locals`, `v.__dict__`): keys read
    on what they return are read on torch's own object."""
    found = set()
    for node in MODULES[SEAM].body:
        if not isinstance(node, ast.FunctionDef):
            continue
        params = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
        returns = [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]

        def rooted(e: ast.AST) -> bool:
            while isinstance(e, (ast.Attribute, ast.Subscript)):
                e = e.value
            return isinstance(e, ast.Name) and e.id in params

        if returns and all(isinstance(r, (ast.Attribute, ast.Subscript)) and rooted(r)
                           for r in returns):
            found.add(node.name)
    return found


def _seam_keys() -> set[str]:
    """The keys the seam reads on torch's objects and their mappings (`meta["example_value"]`,
    Dynamo's `counters["stats"]`): a constant key read on something it was handed or on
    a name it imported from torch."""
    keys: set[str] = set()
    for fn in ast.walk(MODULES[SEAM]):
        if not isinstance(fn, ast.FunctionDef):
            continue
        roots = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
        for sub in ast.walk(fn):
            if isinstance(sub, ast.ImportFrom) and sub.module and sub.module.startswith("torch"):
                roots.update(a.asname or a.name for a in sub.names)
        for sub in ast.walk(fn):
            for key, receiver in _key_reads(sub):
                while isinstance(receiver, (ast.Attribute, ast.Subscript, ast.Call)):
                    receiver = receiver.func if isinstance(receiver, ast.Call) else receiver.value
                if isinstance(receiver, ast.Name) and receiver.id in roots:
                    keys.add(key)
    return keys


def _key_reads(node: ast.AST) -> list[tuple[str, ast.AST]]:
    """(key, mapping) of a read by a constant key: `m["k"]`, `m.get("k")`, `"k" in m`."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return [(node.slice.value, node.value)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("get", "pop", "setdefault") and node.args \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return [(node.args[0].value, node.func.value)]
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) \
            and isinstance(node.left.value, str) and len(node.ops) == 1 \
            and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        return [(node.left.value, node.comparators[0])]
    return []


def private_keys() -> set[str]:
    """Keys of torch's own mappings: the keys the seam reads on them (a record of ours may
    have a key named like an attribute of Dynamo's: explain's `gb_type`)."""
    return _seam_keys() - PUBLIC_NAMES - _own_names()


# getattr/hasattr with a name computed at run time, outside the seam: allowed only here,
# each with what it reads (a name from a literal list is checked as if written out).
COMPUTED_READS = {
    ("codec", "getattr(c, f.name)"): "a Compile's own dataclass fields",
    ("compare", "getattr(s, n)"): "a Step's fields, named as STEP_FIELDS names them",
    ("codec", "getattr(r, name)"): "a Recording's own dataclass fields",
    ("steps", "getattr(self, f.step_attr)"): "a Step's own fields, as declared",
    ("steps", "getattr(step, f.step_attr)"): "a Step's own fields, as declared",
    ("targets", "getattr(value, attr, None)"): "the user's dotted name, in the user's namespace",
    ("widgets/course/steps.py", "hasattr(steps[0], k)"): "a Step's field the lesson names",
    ("widgets/course/steps.py", "getattr(s, k, None)"): "a Step's field the lesson names",
}


def _literal_loops(tree: ast.AST) -> dict[int, list[str]]:
    """getattr/hasattr calls whose name is bound by a loop over a literal tuple or list of
    strings: id(call) -> the strings."""
    out: dict[int, list[str]] = {}
    for node in ast.walk(tree):   # outer loops first: an inner one binding the name wins
        if isinstance(node, ast.For):
            loops = [(node.target, node.iter)]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            loops = [(g.target, g.iter) for g in node.generators]
        else:
            continue
        for target, it in loops:
            if not (isinstance(target, ast.Name) and isinstance(it, (ast.Tuple, ast.List))
                    and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                            for e in it.elts)):
                continue
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and len(sub.args) >= 2 \
                        and isinstance(sub.args[1], ast.Name) and sub.args[1].id == target.id:
                    out[id(sub)] = [e.value for e in it.elts]
    return out


def private_reads(name: str, tree: ast.AST, private: set[str],
                  keys: set[str] | None = None) -> list[str]:
    """Every read of torch's private state in one module of capture, as `line: what`."""
    found: list[str] = []
    methods = _methods(tree)
    imported_own: set[str] = set()  # local names bound to capture's modules
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            imported_own.update(a.asname or a.name for a in node.names if node.module is None)

    # 1. torch's private modules, imported (hooks may import the modules it patches)
    for node in ast.walk(tree):
        mods = []
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for m in mods:
            parts = m.split(".")
            if parts[0] == "torch" and any(p.startswith("_") for p in parts[1:]) \
                    and name != PATCHER:
                found.append(f"{node.lineno}: imports {m}")

    # 2. `torch._something`, 3. `x._something` on what is not capture's own,
    # 4. a name only Dynamo's objects have
    own_names = _own_names()

    keys = private_keys() if keys is None else keys
    passthrough = _passthrough_accessors()
    loops = _literal_loops(tree)
    # names bound to what a pass-through accessor returned (`d = tracker_fields(v)`)
    handed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and _called(node.value) in passthrough:
            handed.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def computed(node: ast.AST) -> list[tuple[str, ast.AST]]:
        """The reads a getattr/hasattr with a computed name makes (reported when unknown)."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
                and not isinstance(node.args[1], ast.Constant)) or name == PATCHER:
            return []
        arg = node.args[1]
        if id(node) in loops:
            return [(n, node.args[0]) for n in loops[id(node)]]
        if (name, ast.unparse(node)) not in COMPUTED_READS:
            found.append(f"{node.lineno}: {ast.unparse(node)} (a name computed at run time)")
        return []

    def walk(node: ast.AST, in_method: bool) -> None:
        for key, receiver in _key_reads(node):
            line = getattr(node, "lineno", "?")
            if key in keys:
                found.append(f"{line}: {ast.unparse(receiver)}[{key!r}]")
            elif (isinstance(receiver, ast.Call) and _called(receiver) in passthrough) or \
                    (isinstance(receiver, ast.Name) and receiver.id in handed):
                found.append(f"{line}: {ast.unparse(receiver)}[{key!r}] (a torch object's own)")
        for attr, receiver in _read_names(node) + computed(node):
            line = getattr(node, "lineno", "?")
            base = receiver.id if isinstance(receiver, ast.Name) else None
            ours = (base in ("self", "cls") and in_method) or base in imported_own
            if attr.endswith("()"):
                if not ours:
                    found.append(f"{line}: {ast.unparse(receiver)}.{attr}")
            elif base == "torch" and attr.startswith("_") and not attr.startswith("__"):
                found.append(f"{line}: torch.{attr}")
            elif attr.startswith("_") and not attr.startswith("__") and not ours \
                    and attr not in own_names and attr not in PUBLIC_UNDERSCORED \
                    and base not in NOT_TORCH \
                    and not (name == PATCHER and attr in PATCH_TARGETS):
                found.append(f"{line}: {ast.unparse(receiver)}.{attr}")
            elif attr in private and not ours:
                found.append(f"{line}: {ast.unparse(receiver)}.{attr}")
            elif attr in private and base == "self" and in_method is False:
                found.append(f"{line}: self.{attr} (a patched method's self)")
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in DYNAMO_METHODS:  # reported as a call: its receiver only
            children = [node.func.value, *node.args, *node.keywords]
        for child in children:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                walk(child, id(child) in methods)
            else:
                walk(child, in_method)

    walk(tree, False)
    return found


def _called(call: ast.Call) -> str | None:
    """The name of the function a call calls: `f(...)` or `module.f(...)`."""
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def test_the_private_read_finder_catches_each_kind():
    probe = ast.parse(
        "import torch._dynamo.config\n"
        "from torch._guards import CompileContext\n"
        "from . import internals\n"
        "def f(tx, v, graph, lg):\n"
        "    torch._dynamo.reset()\n"
        "    n = graph._len\n"
        "    v.is_realized()\n"
        "    getattr(lg, 'artifact_name', None)\n"
        "    tx.symbolic_locals\n"
        "    internals._private_helper()\n"      # capture's own module: allowed
        "    r = point._replace(x=1)\n"          # NamedTuple API: allowed
        "def make(original):\n"
        "    def step(self):\n"
        "        return self.instruction_pointer\n"
        "class Own:\n"
        "    def m(self):\n"
        "        return self._mine\n")           # our own object: allowed
    found = private_reads("probe", probe, private_names())
    assert [f.split(": ", 1)[1] for f in found] == [
        "imports torch._dynamo.config", "imports torch._guards",
        "imports torch._guards.CompileContext", "torch._dynamo", "graph._len",
        "v.is_realized()", "lg.artifact_name", "tx.symbolic_locals", "self.instruction_pointer"]


def test_the_private_read_finder_catches_keys_and_computed_names():
    probe = ast.parse(
        "from . import internals\n"
        "def f(tx, node, t, name, counters):\n"
        "    d = internals.symbolic_locals(tx)\n"
        "    d['x']\n"                                # a key of Dynamo's own dict, by name
        "    internals.symbolic_locals(tx).get('y')\n"  # ... and read where it is handed out
        "    'z' in d\n"
        "    node.meta['example_value']\n"           # a key the seam reads on torch's objects
        "    counters['stats']\n"
        "    getattr(t, name)\n"                      # a name computed at run time
        "    hasattr(t, name.upper())\n"
        "    [getattr(node, a) for a in ('op', 'target')]\n"   # literal names: each checked
        "    [getattr(node, a) for a in ('op', '_prev')]\n"
        "    mine = {'value': 1}\n"
        "    mine['value']\n")                        # our own dict: allowed
    found = private_reads("probe", probe, private_names())
    assert [f.split(": ", 1)[1] for f in found] == [
        "d['x'] (a torch object's own)", "internals.symbolic_locals(tx)['y'] (a torch object's own)",
        "d['z'] (a torch object's own)", "node.meta['example_value']", "counters['stats']",
        "getattr(t, name) (a name computed at run time)",
        "hasattr(t, name.upper()) (a name computed at run time)", "node._prev"]


def test_every_allowed_computed_read_is_still_there():
    """An entry of COMPUTED_READS whose call is gone would allow a new one unseen."""
    trees = {**MODULES, **WIDGETS}
    calls = {(module, ast.unparse(node)) for module, tree in trees.items()
             for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert set(COMPUTED_READS) <= calls, set(COMPUTED_READS) - calls


def test_the_seams_own_reads_are_guarded_elsewhere():
    """Every name the seam reads on Dynamo's objects, and that capture never defines, is
    refused elsewhere: a new accessor extends the rule by itself."""
    names = private_names()
    assert {"tracers", "symbolic_locals", "instruction_pointer", "create_fn_name",
            "guards_context", "dynamo_guards"} <= names
    assert not names & {"instructions", "name", "lineno", "source"}  # also capture's own


@pytest.mark.parametrize("module", sorted(set(MODULES) - {SEAM}))
def test_no_private_torch_read_outside_the_seam(module):
    found = private_reads(module, MODULES[module], private_names())
    assert not found, (f"capture/{module}.py reads torch's private state; add a named "
                       f"accessor to capture/internals.py and call it:\n  " + "\n  ".join(found))


@pytest.mark.parametrize("module", sorted(WIDGETS))
def test_no_private_torch_read_in_the_front_ends(module):
    found = private_reads(module, WIDGETS[module], private_names())
    assert not found, (f"{module} reads torch's private state; add a named accessor to "
                       f"capture/internals.py and call it:\n  " + "\n  ".join(found))
