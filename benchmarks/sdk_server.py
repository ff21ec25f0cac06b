"""The official MCP Python SDK serving the same prompt library as promptdeck, for the benchmarks.

    python benchmarks/sdk_server.py DIR                                        # stdio
    python benchmarks/sdk_server.py DIR --http PORT [--stateless] [--json-response]
    python benchmarks/sdk_server.py DIR --tools                                # each prompt as a tool too
    python benchmarks/sdk_server.py DIR --resources                            # material files as resources
    python benchmarks/sdk_server.py DIR --skills                               # skills/NAME/* as skill:// resources

reads every ``*.md`` file below DIR the way promptdeck does (front matter in YAML between two ``---``
lines, names from the path below DIR without ``.md`` and with ``.`` between folders, files and folders
starting with ``.`` or ``_`` skipped) and registers one SDK prompt per file with the same name,
description and arguments. Rendering is deliberately simple: ``{{ name }}`` placeholders in the body
are replaced with the argument values (defaults filled in, enum values checked) and the result is sent
as one user message. That is the server a developer would write with the SDK to serve such a folder;
it is not a general promptdeck replacement (no roles, embeds or Jinja).

Each prompt goes through ``Prompt.from_function`` -- the same path as ``@server.prompt()`` -- with a
keyword-only async function whose signature lists the prompt's arguments (async, so the SDK does not
hop to a worker thread per render; the cheaper of its two paths).

With ``--resources`` every file in a material folder (one whose name starts with ``_``, not hidden) is
also registered as a ``FileResource`` named ``promptdeck:///PATH``, as promptdeck names it, with the
MIME type ``mimetypes`` guesses (text files are read as text, others as a base64 blob): the server a
developer would write to serve those files (bench_resources.py).

With ``--skills`` every file of every skill (a folder ``skills/NAME`` with a ``SKILL.md``) is registered as a
``FileResource`` named ``skill://NAME/PATH``, as promptdeck names it (``text/markdown`` for ``SKILL.md``), and
no file below ``skills/`` is a prompt: the SDK has no skills extension (no ``skills/list``), so this is the
server a developer would write with it to serve the same files as resources (bench_skills.py).

With ``--http PORT`` the same server runs the SDK's Streamable HTTP transport (``MCPServer.run(
transport="streamable-http")``: Starlette on uvicorn, endpoint ``/mcp``) on 127.0.0.1 only, stateful
with SSE responses by default; ``--stateless`` and ``--json-response`` set the SDK's ``stateless_http``
and ``json_response``. Over HTTP the server logs at WARNING, so that (like promptdeck) it writes no
log line per request: no uvicorn access log, no "Processing request" line.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import yaml
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Prompt, PromptArgument
from mcp.server.mcpserver.resources import FileResource

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

RenderFn = Callable[..., Coroutine[Any, Any, str]]


class LibraryError(Exception):
    pass


def iter_prompt_files(root: Path) -> Iterator[tuple[str, Path]]:
    """Yield (relative posix path, absolute path) of every prompt file, sorted, skipping ``.``/``_``."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
        base = Path(dirpath)
        rel_dir = base.relative_to(root).as_posix()
        for fname in sorted(filenames):
            if fname.startswith((".", "_")) or not fname.endswith(".md"):
                continue
            rel = fname if rel_dir == "." else f"{rel_dir}/{fname}"
            yield rel, base / fname


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 3)
    if end < 0:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise LibraryError(f"{where}: front matter is not closed")
    meta = yaml.load(text[4 : end + 1], Loader=_Loader) or {}
    if not isinstance(meta, dict):
        raise LibraryError(f"{where}: front matter is not a mapping")
    return meta, text[end + 5 :]


def describe(arg: dict[str, Any]) -> str | None:
    """The argument description, with choices and default added as promptdeck does for clients."""
    parts: list[str] = []
    if arg.get("description"):
        parts.append(str(arg["description"]))
    extra: list[str] = []
    if arg.get("enum"):
        extra.append("one of: " + ", ".join(str(v) for v in arg["enum"]))
    if "default" in arg:
        extra.append(f"default: {arg['default']}")
    if extra:
        parts.append(f"({'; '.join(extra)})")
    return " ".join(parts) or None


def make_render(name: str, body: str, args: list[dict[str, Any]]) -> RenderFn:
    enums = {str(a["name"]): [str(v) for v in a["enum"]] for a in args if a.get("enum")}

    def substitute(values: dict[str, str | None]) -> str:
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1)) or "", body)

    async def render(**values: str | None) -> str:
        for key, allowed in enums.items():
            if values.get(key) is not None and values[key] not in allowed:
                raise ValueError(f"argument {key!r} must be one of {allowed}")
        return substitute(values)

    params: list[inspect.Parameter] = []
    for a in args:
        arg_name = str(a["name"])
        if not arg_name.isidentifier() or arg_name.startswith("_"):
            raise LibraryError(f"{name}: argument name {arg_name!r} cannot be a Python parameter")
        required = bool(a.get("required", False)) and "default" not in a
        default: Any = inspect.Parameter.empty if required else (str(a["default"]) if "default" in a else None)
        annotation: Any = str if required or default is not None else str | None
        params.append(
            inspect.Parameter(arg_name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        )
    # The SDK reads the signature (and pydantic the annotations) to build its argument model.
    render.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    render.__annotations__ = {p.name: p.annotation for p in params} | {"return": str}
    render.__name__ = render.__qualname__ = re.sub(r"\W", "_", name)
    return render


def load_prompt(rel: str, path: Path) -> Prompt:
    meta, body = split_front_matter(path.read_text(encoding="utf-8"), rel)
    name = str(meta.get("name") or rel.removesuffix(".md").replace("/", "."))
    args = meta.get("arguments") or []
    if not isinstance(args, list) or not all(isinstance(a, dict) and "name" in a for a in args):
        raise LibraryError(f"{rel}: arguments must be a list of mappings with a name")
    prompt = Prompt.from_function(
        make_render(name, body, args),
        name=name,
        title=meta.get("title"),
        description=str(meta.get("description") or ""),
    )
    # from_function knows only names and requiredness; give clients the same descriptions promptdeck does.
    prompt.arguments = [
        PromptArgument(
            name=str(a["name"]),
            description=describe(a),
            required=bool(a.get("required", False)) and "default" not in a,
        )
        for a in args
    ]
    return prompt


def iter_material(root: Path) -> Iterator[tuple[str, Path]]:
    """Yield (relative posix path, absolute path) of every file in a material (``_``) folder, sorted."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        if not any(part.startswith("_") for part in rel_dir.split("/")):
            continue
        for fname in sorted(f for f in filenames if not f.startswith(".")):
            yield f"{rel_dir}/{fname}", Path(dirpath) / fname


def iter_skill_files(root: Path) -> Iterator[tuple[str, str, Path]]:
    """Yield (skill name, relative posix path below the skill, absolute path) of every file of every skill."""
    folder = root / "skills"
    for skill in sorted(folder.iterdir()) if folder.is_dir() else ():
        if skill.name.startswith((".", "_")) or not (skill / "SKILL.md").is_file():
            continue
        for dirpath, dirnames, filenames in os.walk(skill):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fname in sorted(f for f in filenames if not f.startswith(".")):
                path = Path(dirpath) / fname
                yield skill.name, path.relative_to(skill).as_posix(), path


def build_server(root: Path, *, quiet: bool = False, tools: bool = False, resources: bool = False,
                 skills: bool = False) -> MCPServer:
    server = MCPServer(
        name="sdk-prompts-bench", warn_on_duplicate_prompts=False, log_level="WARNING" if quiet else "INFO"
    )
    seen: set[str] = set()
    for rel, path in iter_prompt_files(root):
        if skills and rel.startswith("skills/"):
            continue  # a skill's files are resources here
        prompt = load_prompt(rel, path)
        if prompt.name in seen:
            raise LibraryError(f"{rel}: a second prompt is named {prompt.name!r}")
        seen.add(prompt.name)
        server.add_prompt(prompt)
        if tools:
            # What a developer would write to offer each prompt as a tool too (bench_tools.py): the same
            # render function, under the name promptdeck --tools gives it.
            server.add_tool(prompt.fn, name=prompt.name.replace(".", "_"), description=prompt.description)
    if resources:
        import mimetypes

        for rel, path in iter_material(root):
            mime = mimetypes.guess_type(rel)[0] or "application/octet-stream"
            server.add_resource(FileResource(uri=f"promptdeck:///{rel}", name=path.name, path=path, mime_type=mime))
    if skills:
        import mimetypes

        for name, rel, path in iter_skill_files(root):
            mime = "text/markdown" if rel == "SKILL.md" else mimetypes.guess_type(rel)[0] or "text/plain"
            server.add_resource(FileResource(uri=f"skill://{name}/{rel}", name=path.name, path=path, mime_type=mime))
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sdk_server.py", description="The official MCP SDK serving a promptdeck-style prompt folder."
    )
    parser.add_argument("dir", type=Path, metavar="DIR", help="prompt library folder")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT (/mcp)")
    parser.add_argument("--stateless", action="store_true", help="HTTP: the SDK's stateless_http mode")
    parser.add_argument("--json-response", action="store_true", help="HTTP: answer POSTs with JSON, not SSE")
    parser.add_argument("--tools", action="store_true", help="also offer each prompt as a tool")
    parser.add_argument("--resources", action="store_true", help="also serve the material files as resources")
    parser.add_argument("--skills", action="store_true", help="serve each skill's files as skill:// resources")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.http is None and (args.stateless or args.json_response):
        parser.error("--stateless and --json-response go with --http")
    if args.http is not None and not 0 < args.http < 65536:
        parser.error(f"--http takes a port number, got {args.http}")
    root = args.dir.resolve()
    if not root.is_dir():
        print(f"not a folder: {root}", file=sys.stderr)
        return 2
    try:
        server = build_server(root, quiet=args.http is not None, tools=args.tools, resources=args.resources,
                              skills=args.skills)
    except (LibraryError, OSError, yaml.YAMLError) as exc:
        print(f"sdk_server: {exc}", file=sys.stderr)
        return 1
    if args.http is None:
        server.run(transport="stdio")
    else:
        server.run(
            transport="streamable-http",
            host="127.0.0.1",
            port=args.http,
            stateless_http=args.stateless,
            json_response=args.json_response,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
