"""What nodes/ and graphs/ reach on the stores, read from their source (no store is opened).

An expression gets a store type when it is ``<x>.stores`` or a name ``stores`` (``Stores``), a name
``archive`` (``ArchiveStore``), a parameter or variable annotated with a Protocol, a name or ``self.<x>``
assigned from a typed expression, a member of a typed expression whose Protocol annotates it with a
Protocol (``stores.archive.knowledge``), a conditional expression whose branches are of one type or None, a
call of a typed method whose return annotation is a Protocol, or a call of a stores/nodes/graphs function
annotated to return one. Every attribute read on a typed expression (and
every ``getattr``/``hasattr`` with a constant name) is a use of that member.

``python -m tests.store_contract_scan`` prints each Protocol's used members and the undeclared ones.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from lumina_memory.stores import protocols, protocols_collections, protocols_files, protocols_tables
from lumina_memory.stores.factory import Stores

ROOT = Path(__file__).resolve().parents[1]
CALLER_DIRS = ("nodes", "graphs")
PROTOCOL_MODULES = (protocols, protocols_tables, protocols_collections, protocols_files)
BY_NAME = {"stores": "Stores", "archive": "ArchiveStore", "turn_vectors": "TurnVectorStore"}
"""Names that mean one store wherever they appear (parameters included)."""


def universe() -> dict[str, type]:
    """Every store type a caller may hold: the Protocols of stores.protocols, and Stores."""
    found = {n: c for module in PROTOCOL_MODULES for n, c in vars(module).items()
             if inspect.isclass(c) and getattr(c, "_is_protocol", False) and c.__module__ == module.__name__}
    found["Stores"] = Stores
    return found


CONTAINERS = ("list", "Sequence", "Iterable", "Iterator", "tuple", "set", "frozenset", "AbstractContextManager")
LIST = "["
"""Prefix of a container of a store type (``'[PointCollection'``): iterating or indexing it gives the type, and
entering it (``with read_only_audit(d) as log``) when it is a context manager of one."""


def type_name(annotation: object) -> str | None:
    """``'ArchiveStore'``, ``'KnowledgeVectorStore | None'``, ``'Optional[X]'`` -> the one class name;
    ``'list[X]'`` (any of CONTAINERS, ``tuple[X, ...]`` too) -> ``'[X'``."""
    if not isinstance(annotation, str):
        annotation = getattr(annotation, "__name__", None) if inspect.isclass(annotation) else None
        if annotation is None:
            return None
    names = [n for n in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", annotation) if n not in ("None", "Optional")]
    if len(names) == 2 and names[0] in CONTAINERS:
        return LIST + names[1]
    return names[0] if len(names) == 1 else None


def annotations_of(cls: type) -> dict[str, object]:
    out: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        out.update(getattr(klass, "__annotations__", {}))
    return out


def declared(cls: type, member: str) -> bool:
    return member in annotations_of(cls) or any(member in vars(k) for k in cls.__mro__ if k is not object)


def member_type(cls: type, member: str, called: bool) -> str | None:
    """The store type of ``cls.member`` (an annotated attribute), or of what calling it returns."""
    if not called:
        return type_name(annotations_of(cls).get(member))
    fn = getattr(cls, member, None)
    if fn is None or not callable(fn):
        return None
    try:
        return type_name(inspect.signature(fn).return_annotation)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Use:
    store: str
    member: str
    where: str


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class _Scope(ast.NodeVisitor):
    """One function (or module) body: first its bindings, to a fixed point, then its uses."""

    def __init__(self, scan: "Scan", env: dict[str, str], path: str) -> None:
        self.scan, self.env, self.path = scan, env, path

    def resolve(self, node: ast.AST) -> str | None:
        key = _dotted(node)
        if key is not None and key in self.env:
            return self.env[key] or None
        if isinstance(node, ast.Name):
            return BY_NAME.get(node.id)
        if isinstance(node, ast.Attribute):
            if node.attr == "stores":
                return "Stores"
            owner = self.resolve(node.value)
            return self.scan.member(owner, node.attr, called=False) if owner else None
        if isinstance(node, ast.Call):
            if getattr(node.func, "id", None) == "getattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                owner = self.resolve(node.args[0])
                return self.scan.member(owner, str(node.args[1].value), called=False) if owner else None
            if isinstance(node.func, ast.Attribute):
                owner = self.resolve(node.func.value)
                if owner:
                    return self.scan.member(owner, node.func.attr, called=True)
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            return self.scan.returns.get(name)
        if isinstance(node, ast.BoolOp):
            kinds = {self.resolve(v) for v in node.values}
            return kinds.pop() if len(kinds) == 1 else None
        if isinstance(node, ast.IfExp):  # ``open_x(...) if policy else None``
            branches = [v for v in (node.body, node.orelse) if not (isinstance(v, ast.Constant) and v.value is None)]
            kinds = {self.resolve(v) for v in branches}
            return kinds.pop() if len(kinds) == 1 else None
        if isinstance(node, ast.Subscript):
            return self.element(node.value)
        return None

    def element(self, node: ast.AST) -> str | None:
        """The store type of an element of ``node``, when it is a container of one."""
        kind = self.resolve(node)
        return kind[len(LIST):] if kind and kind.startswith(LIST) else None

    def bind(self, body: list[ast.stmt]) -> None:
        untyped: set[str] = set()
        for _ in range(3):
            for node in ast.walk(ast.Module(body=body, type_ignores=[])):
                if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):  # for store in stores.vector_collections()
                    kind, key = self.element(node.iter), _dotted(node.target)
                    if key and kind:
                        self.env.setdefault(key, kind)
                    continue
                if isinstance(node, (ast.With, ast.AsyncWith)):  # with read_only_audit(data_dir) as log
                    for item in node.items:
                        kind = self.element(item.context_expr)
                        key = _dotted(item.optional_vars) if item.optional_vars is not None else None
                        if key and kind:
                            self.env.setdefault(key, kind)
                    continue
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    pairs, annotation = [(node.targets[0], node.value)], None
                    if isinstance(node.value, ast.Tuple) and isinstance(node.targets[0], ast.Tuple) \
                            and len(node.value.elts) == len(node.targets[0].elts):  # a, b = x.archive, x.midterm
                        pairs = list(zip(node.targets[0].elts, node.value.elts))
                elif isinstance(node, ast.AnnAssign):
                    pairs, annotation = [(node.target, node.value)], node.annotation
                else:
                    continue
                for target, value in pairs:
                    key = _dotted(target)
                    kind = self.scan.annotated(annotation) or (self.resolve(value) if value is not None else None)
                    if key and kind:
                        self.env.setdefault(key, kind)
                    elif key in BY_NAME and not self.env.get(key):
                        untyped.add(key)
        for key in untyped - set(self.env):  # ``archive = counts["archive"]``: not the store here
            self.env[key] = ""

    def visit_Attribute(self, node: ast.Attribute) -> None:
        owner = self.resolve(node.value)
        if owner and not owner.startswith(LIST):
            self.scan.record(owner, node.attr, f"{self.path}:{node.lineno}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        fn = getattr(node.func, "id", None)
        if fn in ("getattr", "hasattr", "setattr") and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            owner = self.resolve(node.args[0])
            if owner and not owner.startswith(LIST) and isinstance(node.args[1].value, str):
                self.scan.record(owner, node.args[1].value, f"{self.path}:{node.lineno}")
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scan.function(node, dict(self.env), self.path)

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = ast.NodeVisitor.generic_visit


class Scan:
    def __init__(self, types: dict[str, type] | None = None) -> None:
        self.types = types if types is not None else universe()
        self.uses: list[Use] = []
        self.returns: dict[str, str] = {}

    def known(self, kind: str | None) -> str | None:
        return kind if kind and kind.removeprefix(LIST) in self.types else None

    def annotated(self, annotation: ast.AST | None) -> str | None:
        return None if annotation is None else self.known(type_name(ast.unparse(annotation)))

    def member(self, owner: str, attr: str, called: bool) -> str | None:
        if owner.startswith(LIST):
            return None
        return self.known(member_type(self.types[owner], attr, called))

    def record(self, owner: str, attr: str, where: str) -> None:
        self.uses.append(Use(owner, attr, where))

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, env: dict[str, str], path: str) -> None:
        args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        for arg in args:
            kind = self.annotated(arg.annotation) if arg.annotation else BY_NAME.get(arg.arg)
            env[arg.arg] = kind or ""
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                _Scope(self, env, path).visit(default)
        scope = _Scope(self, env, path)
        scope.bind(node.body)
        for stmt in node.body:
            scope.visit(stmt)

    def module(self, tree: ast.Module, path: str) -> None:
        env: dict[str, str] = {}
        scope = _Scope(self, env, path)
        scope.bind([s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))])
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                self._class(stmt, env, path)
            else:
                scope.visit(stmt)

    def _class(self, node: ast.ClassDef, env: dict[str, str], path: str) -> None:
        own = dict(env)
        methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for method in methods:  # self.<x> = <typed> anywhere binds self.<x> in every method
            inner = dict(own)
            for arg in [*method.args.args, *method.args.kwonlyargs]:
                kind = self.annotated(arg.annotation) if arg.annotation else BY_NAME.get(arg.arg)
                inner[arg.arg] = kind or ""
            probe = _Scope(self, inner, path)
            probe.bind(method.body)
            own.update({k: v for k, v in inner.items() if k.startswith("self.")})
        for stmt in node.body:
            if isinstance(stmt, ast.ClassDef):
                self._class(stmt, own, path)
            else:
                _Scope(self, own, path).visit(stmt)


def caller_files() -> list[Path]:
    return sorted(p for d in CALLER_DIRS for p in (ROOT / d).rglob("*.py"))


def scan(types: dict[str, type] | None = None) -> Scan:
    """Every use of a store member in nodes/ and graphs/."""
    result = Scan(types)
    trees = {p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in caller_files()}
    factories = [ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in sorted((ROOT / "stores").rglob("*.py"))]
    for tree in [*factories, *trees.values()]:  # functions annotated to return a store (open_stores, kb_of, ...)
        for node in tree.body:  # module-level functions only: a method's name says nothing without its class
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kind = result.annotated(node.returns)
                if kind:
                    result.returns[node.name] = kind
    for path, tree in trees.items():
        result.module(tree, str(path.relative_to(ROOT)))
    return result


def scan_source(source: str, path: str = "<source>") -> Scan:
    """``scan`` of one module's text (the checker's own tests)."""
    result = Scan()
    result.module(ast.parse(source, path), path)
    return result


def undeclared(result: Scan) -> dict[tuple[str, str], list[str]]:
    """(store type, member) -> where, for members the type does not declare."""
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for use in result.uses:
        if not declared(result.types[use.store], use.member):
            out[(use.store, use.member)].append(use.where)
    return dict(out)


def main() -> int:
    result = scan()
    used: dict[str, set[str]] = defaultdict(set)
    for use in result.uses:
        used[use.store].add(use.member)
    for store in sorted(used):
        print(f"{store}: {', '.join(sorted(used[store]))}")
    missing = undeclared(result)
    for (store, member), where in sorted(missing.items()):
        print(f"UNDECLARED {store}.{member}: {', '.join(where[:4])}{' ...' if len(where) > 4 else ''}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
