"""The stdio floor: a stdlib-only MCP prompts server, the least a Python server can do to start.

    python benchmarks/floor_stdio.py DIR

``bench_start.py`` starts it with the interpreter that starts promptdeck and compares their cold
start (spawn -> initialize answered) and first ``prompts/get``. It answers ``initialize``,
``prompts/list`` (one page) and ``prompts/get`` for the ``*.md`` files of DIR (libgen.py's library),
filling ``{{ name }}`` with the arguments sent or the front matter's ``default:``. No validation, no
Jinja, no YAML: a floor, not a server anyone should run.
"""

import json
import os
import re
import sys

FIELD = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def load(folder):
    prompts = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".md"):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                _, head, body = fh.read().split("---\n", 2)
            desc = head.split("description:", 1)[1].split("\n", 1)[0].strip()
            defaults = {}
            for arg in head.split("- name: ")[1:]:
                if "default: " in arg:
                    defaults[arg.split("\n", 1)[0]] = arg.split("default: ", 1)[1].split("\n", 1)[0]
            prompts[name[:-3]] = (desc, body.strip(), defaults)
    return prompts


def answer(prompts, method, params):
    if method == "initialize":
        return {"protocolVersion": params["protocolVersion"], "capabilities": {"prompts": {}},
                "serverInfo": {"name": "floor", "version": "0"}}
    if method == "prompts/list":
        return {"prompts": [{"name": n, "description": p[0]} for n, p in sorted(prompts.items())]}
    if method == "prompts/get":
        desc, body, values = prompts[params["name"]]
        values = {**values, **params.get("arguments", {})}
        text = FIELD.sub(lambda m: str(values.get(m.group(1), "")), body)
        return {"description": desc, "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
    return {}


def main():
    prompts = load(sys.argv[1])
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "id" not in msg:
            continue  # a notification
        result = answer(prompts, msg["method"], msg.get("params") or {})
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
