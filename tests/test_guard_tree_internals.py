"""The accessors of a cache entry's guard tree (capture.internals, recompiles section) on the
installed torch: each reads what it says, and none changes what Dynamo holds."""

from __future__ import annotations

import torch
from torch._dynamo.eval_frame import _debug_get_cache_entry_list

from capture import internals, recompiles


class Box:
    def __init__(self, t):
        self.t = t


def boxed(x, box, d, n):
    return x * n + box.t + d["k"]


def entry():
    torch._dynamo.reset()
    compiled = torch.compile(boxed, backend="eager")
    compiled(torch.randn(3), Box(torch.randn(3)), {"k": torch.randn(3)}, 2)
    [e] = _debug_get_cache_entry_list(boxed.__code__)
    return e


def order(manager):
    """The tree's state a check would change: every manager's accessors and fail count."""
    out = []

    def go(mgr):
        out.append((internals.manager_source(mgr), mgr.fail_count(),
                    [a for a, _ in internals.child_managers(mgr)]))
        for _, child in internals.child_managers(mgr):
            go(child)

    go(internals.guard_root(manager))
    return out


def test_cache_entry_fields_and_the_scope_dynamo_evaluates_guards_in():
    e = entry()
    compile_id, manager = internals.cache_entry_fields(e)
    assert str(compile_id) == "0/0" and manager is e.guard_manager
    f_locals = {"x": torch.randn(3), "n": 2}
    global_scope, scope = internals.guard_scope(manager, f_locals)
    assert scope["L"] is f_locals and scope["G"] is boxed.__globals__
    assert "___check_obj_id" in scope or "___check_obj_id" in global_scope
    torch._dynamo.reset()


def test_the_tree_walks_in_the_order_it_prints():
    e = entry()
    manager = e.guard_manager
    root = internals.guard_root(manager)
    sources = [internals.manager_source(c) for _, c in internals.child_managers(root)]
    assert {"L['x']", "L['box']", "L['d']", "L['n']"} <= set(sources)
    accessor, _ = internals.child_managers(root)[0]
    assert "GuardAccessor" in accessor
    leaves = internals.leaf_guards(root)
    assert {internals.leaf_kind(g) for g in leaves} >= {"GLOBAL_STATE"}
    assert all(isinstance(p, str) for g in leaves for p in internals.leaf_parts(g))
    # one printed leaf line per code part, in print order: the same count, kinds in order
    from capture.guards import guard_tree_leaves

    printed = guard_tree_leaves(str(manager))
    keys = recompiles.rendered_leaf_keys(manager)
    assert len(keys) == len(printed)
    torch._dynamo.reset()


def test_leaves_run_on_values_without_changing_the_tree():
    e = entry()
    manager = e.guard_manager
    before = order(manager)
    box_manager = next(c for _, c in internals.child_managers(internals.guard_root(manager))
                       if internals.manager_source(c) == "L['box']")
    assert internals.manager_type(box_manager) is Box
    [type_match] = [g for g in internals.leaf_guards(box_manager)
                    if internals.leaf_kind(g) == "TYPE_MATCH"]
    assert internals.leaf_check(type_match, Box(None)) is True
    assert internals.leaf_check(type_match, object()) is False
    relational = [g for _, c in internals.child_managers(internals.guard_root(manager))
                  for g in internals.leaf_guards(c) if internals.is_relational(g)]
    assert relational and all(internals.leaf_kind(g) == "NO_TENSOR_ALIASING" for g in relational)
    # every failure of a call that breaks four guards, and the tree exactly as it was
    found = recompiles.failing_guards(
        manager, {"x": torch.randn(4), "box": Box(torch.randn(3, dtype=torch.float64)),
                  "d": {"k": torch.randn(3)}, "n": 5}, "0/0", None)
    assert {(fg.source, fg.what) for fg in found} == {
        ("L['x']", "size"), ("L['box'].t", "dtype"), ("L['n']", "value")}
    assert order(manager) == before
    torch._dynamo.reset()


def test_dict_managers_epilogue_guards_and_dispatch_keys():
    e = entry()
    root = internals.guard_root(e.guard_manager)
    assert isinstance(internals.epilogue_guards(root), list)
    assert internals.dict_entry_managers(root) == []  # the root is no dict manager
    assert "CPU" in str(internals.dispatch_keys(torch.randn(2)))

    class Frame:
        f_locals = {"a": 1}

    assert internals.frame_locals(Frame()) == {"a": 1}
    assert internals.guard_manager_of(None) is None
    torch._dynamo.reset()


def test_the_graph_break_registry_of_the_installed_torch():
    registry = internals.graph_break_registry()
    assert len(registry) > 400
    [variant, *_] = registry["GB0059"]
    assert variant["Gb_type"] == "Failed to trace builtin operator"
    assert {"Explanation", "Hints"} <= set(variant)
