"""Every reason code the code can send a client, found in the source.

A rejection's reason comes from an error class (its ``code`` attribute, a
reason fixed in its ``__init__``, or a default) or from the first string
argument where it is raised. This walks every module of ``engine_core`` and
``services`` with ``ast`` and collects them, with where each was found; what
the walker cannot resolve (a reason computed at run time) is reported so a
test can insist it stays resolvable.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections import defaultdict
from pathlib import Path

from engine_core.errors import EngineError
from services.common.errors import ServiceError, status_of

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("engine_core", "services")
ERROR_MODULES = (
    "engine_core.errors",
    "services.common.errors",
    "services.match.errors",
    "services.matchmaking.errors",
    "services.rules.client",
)


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_subclasses(sub)}
    return out


def _known() -> set[type]:
    for module_name in ERROR_MODULES:
        importlib.import_module(module_name)
    return _subclasses(ServiceError) | _subclasses(EngineError) | {ServiceError, EngineError}


def error_classes() -> dict[str, type]:
    """Name -> error class, by the class's own name."""
    return {cls.__name__: cls for cls in _known()}


def _file_classes(tree: ast.Module, module_name: str) -> dict[str, type]:
    """The error classes a file's names stand for: its own classes and what
    it imports (``BadRequest`` is the match service's class in one file and
    an alias of ``InvalidArgument`` in another)."""
    known = _known()
    names = dict(error_classes())

    def take(module: object, name: str, alias: str) -> None:
        value = getattr(module, name, None)
        if isinstance(value, type) and value in known:
            names[alias] = value

    try:
        own = importlib.import_module(module_name)
    except Exception:  # e.g. __main__ modules: their imports still count
        own = None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            try:
                module = importlib.import_module(node.module)
            except Exception:
                continue
            for a in node.names:
                take(module, a.name, a.asname or a.name)
        if own is not None and isinstance(node, ast.ClassDef | ast.Assign):
            for name in (
                [node.name]
                if isinstance(node, ast.ClassDef)
                else [t.id for t in node.targets if isinstance(t, ast.Name)]
            ):
                take(own, name, name)
    return names


def _reason_param(cls: type) -> tuple[int | None, str | None, str | None]:
    """(position, name, default) of the reason parameter of ``cls(...)``."""
    params = [p for p in inspect.signature(cls.__init__).parameters.values()][1:]
    for i, p in enumerate(params):
        if p.name in ("reason", "code"):
            default = p.default if isinstance(p.default, str) else None
            return i, p.name, default
    return None, None, None


def _fixed_reason(cls: type) -> str | None:
    """The reason of a class that fixes it (``MatchNotFound("...")``)."""
    params = [p for p in inspect.signature(cls.__init__).parameters.values()][1:]
    required = [p for p in params if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    try:
        exc = cls(*["0"] * len(required))
    except Exception:
        return None
    return getattr(exc, "reason", None) or getattr(exc, "code", None)


def status_name(cls: type) -> str | None:
    """The gRPC status an error class leaves the server with."""
    if issubclass(cls, EngineError):
        return status_of(cls())[0].name
    status = cls.__dict__.get("status") or getattr(cls, "status", None)
    if "status" in getattr(cls.__init__, "__code__", ()).co_varnames:
        return None  # chosen per instance (RulesError passes the rules service's on)
    return status.name if status is not None else None


class Found:
    """Where each reason was found, and with which statuses."""

    def __init__(self) -> None:
        self.where: dict[str, set[str]] = defaultdict(set)
        self.statuses: dict[str, set[str]] = defaultdict(set)

    def add(self, code: str, where: str, cls: type | None) -> None:
        self.where[code].add(where)
        status = status_name(cls) if cls is not None else None
        if status:
            self.statuses[code].add(status)


def collect() -> tuple[Found, list[str]]:
    """Every reason with where it is raised and its statuses, and the call
    sites whose reason the walker could not resolve."""
    from engine_core.errors import IllegalMove

    found = Found()
    unresolved: list[str] = []
    for cls in _known():  # every class, also two of the same name in different services
        code = cls.__dict__.get("code")
        name = f"{cls.__module__}.{cls.__name__}"
        if isinstance(code, str) and cls is not EngineError:
            found.add(code, name, cls)
        _i, _n, default = _reason_param(cls)
        if default:
            found.add(default, f"{name} (default)", cls)
        if _i is None:
            fixed = _fixed_reason(cls)
            if fixed:
                found.add(fixed, name, cls)
    # what status_of itself answers for errors that are not ours
    from engine_core.registry import UnknownGame

    for exc in (UnknownGame("x", []), ValueError()):
        code, reason, _m, _md = status_of(exc)
        found.where[reason].add("services.common.errors.status_of")
        found.statuses[reason].add(code.name)

    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            tree = ast.parse(path.read_text(), str(rel))
            module_name = ".".join(rel.with_suffix("").parts)
            file_classes = _file_classes(tree, module_name)
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and node.name.startswith("diagnose"):
                    for code, where in _collect_diagnose(node, rel):
                        found.add(code, where, IllegalMove)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    for code, where in _collect_code_defaults(node, rel):
                        found.add(code, where, IllegalMove)
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name == "require_legal":  # Game.require_legal(state, seat, move, code)
                    pos, kw, cls = 3, "code", IllegalMove
                else:
                    cls = file_classes.get(name or "")
                    if cls is None:
                        continue
                    pos, kw, _default = _reason_param(cls)
                if pos is None:
                    continue
                arg = None
                if len(node.args) > pos:
                    arg = node.args[pos]
                for k in node.keywords:
                    if k.arg == kw:
                        arg = k.value
                where = f"{rel}:{node.lineno}"
                if arg is None:
                    continue  # the class's default (collected above)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value, where, cls)
                else:
                    unresolved.append(f"{where} {ast.unparse(node)[:80]}")
    return found, unresolved


def _collect_diagnose(fn: ast.FunctionDef, rel: Path) -> list[tuple[str, str]]:
    """``diagnose`` functions return ``(code, message)`` for an IllegalMove."""
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            first = node.value.elts[0] if node.value.elts else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                out.append((first.value, f"{rel}:{node.lineno}"))
    return out


def _collect_code_defaults(fn: ast.AST, rel: Path) -> list[tuple[str, str]]:
    """A helper's ``code="..."`` default parameter (``require_legal``)."""
    args = fn.args  # type: ignore[attr-defined]
    positional = args.posonlyargs + args.args
    defaults = (
        dict(zip([a.arg for a in positional[-len(args.defaults) :]], args.defaults, strict=True))
        if args.defaults
        else {}
    )
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if d is not None:
            defaults[a.arg] = d
    value = defaults.get("code")
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [(value.value, f"{rel}:{fn.lineno}")]  # type: ignore[attr-defined]
    return []


if __name__ == "__main__":
    found, unresolved = collect()
    for code in sorted(found.where):
        statuses = sorted(found.statuses.get(code, ()))
        print(f"{code:28} {statuses} {sorted(found.where[code])[:3]}")
    print("UNRESOLVED")
    print("\n".join(unresolved))
