#!/usr/bin/env python3
"""Bundles the <attention-playground> element into one self-contained script.

    bundle_element.py ENTRY.js GLUE.js CSS_FILE OUT.js [NAME=MODEL.safetensors ...] [--playground-url=URL]

ENTRY.js and the modules it imports (relative imports only, no cycles) are
inlined in dependency order, each inside its own function scope. The module
web/embed-resources.js (which, unbundled, points at the separate files) is
replaced by one exporting `moduleFactory`, the Emscripten glue GLUE.js (the
browser flavour's, built with -sEXPORT_ES6) with the .wasm file it names, which
must lie beside it, inlined as base64 and handed to the glue; `cssText`,
CSS_FILE's text; `builtinModels`, the bytes of each named checkpoint (base64);
and `playgroundUrl`, the absolute http(s) URL of the full playground that links
lead to by default (null without --playground-url: index.html beside the script). The output needs no other file and makes no
network request for what it carries.

The project's modules follow a small subset of ES module syntax that this
script understands: `import { a, b as c } from './x.js';`, `import * as n from
'./x.js';`, `export function|async function|class|const|let NAME`, and
`export { a, b as c };`. Anything else (default exports, top-level await,
re-exports) is an error, so the bundle can never silently differ from the
modules.
"""
import base64
import json
import os
import re
import sys

IMPORT_RE = re.compile(r"^import\s+(\{[^}]*\}|\*\s+as\s+\w+)\s+from\s+(['\"])([^'\"]+)\2\s*;?[ \t]*$", re.M | re.S)
EXPORT_DECL_RE = re.compile(r"^export\s+(async\s+function\*?|function\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)", re.M)
EXPORT_LIST_RE = re.compile(r"^export\s*\{([^}]*)\}\s*;?[ \t]*$", re.M)
FORBIDDEN = [
    (re.compile(r"^export\s+default\b", re.M), "export default"),
    (re.compile(r"^export\s+\*", re.M), "export *"),
    (re.compile(r"^export\s*\{[^}]*\}\s*from\b", re.M), "re-export"),
    (re.compile(r"^import\s+[\w$]+\s*(,|from)", re.M), "default import"),
    (re.compile(r"^import\s+['\"]", re.M), "side-effect import"),
    (re.compile(r"^(const|let|var)?[^\n]*?\bawait\b", re.M), None),  # checked for top level below
]


def fail(msg):
    sys.stderr.write(f"bundle_element.py: {msg}\n")
    sys.exit(1)


def top_level_await(src):
    """True if `await` appears at brace depth 0 (outside any function)."""
    depth = 0
    for m in re.finditer(r"[{}]|\bawait\b|//[^\n]*|/\*.*?\*/|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|`(?:\\.|[^`\\])*`", src, re.S):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
        elif tok == "await" and depth == 0:
            return True
    return False


def parse_names(spec):
    """'{ a, b as c }' -> [(a, a), (b, c)] as (exported, local)."""
    out = []
    for part in spec.strip().strip("{}").split(","):
        part = part.strip()
        if not part:
            continue
        bits = part.split()
        if len(bits) == 1:
            out.append((bits[0], bits[0]))
        elif len(bits) == 3 and bits[1] == "as":
            out.append((bits[0], bits[2]))
        else:
            fail(f"cannot read import/export list '{part}'")
    return out


RESOURCES = "embed-resources.js"


class Bundle:
    def __init__(self, root, resources):
        self.root = root
        self.resources = resources
        self.order = []  # module ids in dependency order
        self.code = {}
        self.visiting = set()

    def module_id(self, path):
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def add(self, path):
        mid = self.module_id(path)
        if mid in self.code:
            return mid
        if mid == RESOURCES:
            self.code[mid] = self.resources
            self.order.append(mid)
            return mid
        if mid in self.visiting:
            fail(f"import cycle through {mid}")
        self.visiting.add(mid)
        with open(path, encoding="utf-8") as f:
            src = f.read()
        for pattern, what in FORBIDDEN:
            if what and pattern.search(src):
                fail(f"{mid}: {what} is not supported")
        if top_level_await(src):
            fail(f"{mid}: top-level await is not supported")

        def replace_import(m):
            spec, target = m.group(1), m.group(3)
            if not target.startswith("."):
                fail(f"{mid}: only relative imports are bundled ('{target}')")
            dep = self.add(os.path.normpath(os.path.join(os.path.dirname(path), target)))
            if spec.startswith("*"):
                return f"const {spec.split()[-1]} = __modules[{json.dumps(dep)}];"
            pairs = ", ".join(local if exp == local else f"{exp}: {local}" for exp, local in parse_names(spec))
            return f"const {{ {pairs} }} = __modules[{json.dumps(dep)}];"

        src = IMPORT_RE.sub(replace_import, src)
        if re.search(r"^import\s", src, re.M):
            fail(f"{mid}: an import statement was not understood")
        exports = []
        src = EXPORT_DECL_RE.sub(lambda m: (exports.append((m.group(2), m.group(2))), m.group(0)[len("export"):].lstrip())[1], src)
        src = EXPORT_LIST_RE.sub(lambda m: (exports.extend(parse_names(m.group(1))), "")[1], src)
        if re.search(r"^export\s", src, re.M):
            fail(f"{mid}: an export statement was not understood")
        getters = ", ".join(f"get {exp}() {{ return {local}; }}" for local, exp in exports)
        self.code[mid] = f"// ---- {mid}\n__modules[{json.dumps(mid)}] = (() => {{\n{src}\nreturn Object.freeze({{ {getters} }});\n}})();\n"
        self.visiting.discard(mid)
        self.order.append(mid)
        return mid


def main():
    if len(sys.argv) < 5:
        fail("usage: bundle_element.py ENTRY.js GLUE.js CSS_FILE OUT.js [NAME=MODEL.safetensors ...] [--playground-url=URL]")
    entry, glue_path, css_path, out_path = sys.argv[1:5]
    models = {}
    playground_url = None
    for arg in sys.argv[5:]:
        if arg.startswith("--playground-url="):
            playground_url = arg.partition("=")[2]
            if not re.fullmatch(r"https?://[^\s\"'<>\\`]+", playground_url):
                fail(f"--playground-url must be an absolute http(s) URL, got '{playground_url}'")
            continue
        name, sep, path = arg.partition("=")
        if not sep or not re.fullmatch(r"[a-z][a-z0-9-]*", name):
            fail(f"expected NAME=MODEL.safetensors, got '{arg}'")
        with open(path, "rb") as f:
            models[name] = base64.b64encode(f.read()).decode("ascii")
    root = os.path.dirname(os.path.abspath(entry))
    with open(glue_path, encoding="utf-8") as f:
        glue = f.read()
    glue, n = re.subn(r"export\s+default\s+createAttentionCore\s*;?\s*$", "", glue.rstrip())
    if n != 1:
        fail(f"{glue_path}: expected one 'export default createAttentionCore'")
    with open(css_path, encoding="utf-8") as f:
        css = f.read()
    # The wasm the glue would fetch(): inlined here, and handed to the glue as wasmBinary, so it
    # never fetches (a strict CSP's connect-src would block even a data: URI). A glue built with
    # -sSINGLE_FILE would bring a second copy, as a data: URI.
    if re.search(r'wasmBinaryFile\s*=\s*"data:', glue):
        fail(f"{glue_path}: the wasm is inlined in the glue (-sSINGLE_FILE): give the browser flavour's glue, its .wasm beside it")
    names = set(re.findall(r'wasmBinaryFile\s*=\s*"([A-Za-z0-9_.-]+\.wasm)"', glue))
    if len(names) != 1:
        fail(f"{glue_path}: expected the glue to name one .wasm file (wasmBinaryFile=\"NAME.wasm\"), found {sorted(names) or 'none'}")
    wasm_path = os.path.join(os.path.dirname(os.path.abspath(glue_path)), names.pop())
    if not os.path.isfile(wasm_path):
        fail(f"{glue_path}: its wasm, {wasm_path}, is missing")
    with open(wasm_path, "rb") as f:
        wasm_bytes = f.read()
    if not wasm_bytes.startswith(b"\0asm"):
        fail(f"{wasm_path}: not a WebAssembly module")
    wasm_base64 = base64.b64encode(wasm_bytes).decode("ascii")
    resources = (
        f"// ---- {RESOURCES}: the Emscripten glue, the wasm (base64) and the stylesheet\n"
        f"__modules[{json.dumps(RESOURCES)}] = (() => {{\n{glue}\n"
        f"const wasmBase64 = {json.dumps(wasm_base64)};\n"
        "const wasmBinary = () => Uint8Array.from(atob(wasmBase64), (c) => c.charCodeAt(0));\n"
        "// (locateFile: the glue then takes the wasm's name as it is, rather than a URL beside this script)\n"
        "const moduleFactory = (options = {}) => createAttentionCore({ locateFile: (name) => name, ...options, wasmBinary: wasmBinary() });\n"
        f"const cssText = {json.dumps(css)};\n"
        f"const modelBase64 = {json.dumps(models)};\n"
        "const builtinModels = Object.freeze(Object.fromEntries(Object.entries(modelBase64).map(([name, b64]) =>\n"
        "  [name, () => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))])));\n"
        f"const playgroundUrl = {json.dumps(playground_url)};\n"
        "return Object.freeze({ moduleFactory, cssText, bundled: true, baseUrl: __scriptUrl, builtinModels, playgroundUrl });\n})();\n")
    bundle = Bundle(root, resources)
    bundle.add(os.path.abspath(entry))
    # The output is a classic script (no import/export, no import.meta), so it
    # loads with <script src> (also from a file:// page, where browsers refuse
    # module scripts) as well as with <script type="module" src>. Its own URL
    # comes from document.currentScript, or from the <script> that names it.
    body = "\n".join(bundle.code[m] for m in bundle.order).replace("import.meta.url", "__scriptUrl")
    if "import.meta" in body:
        fail("import.meta is left in the bundle")
    entry_id = bundle.module_id(os.path.abspath(entry))
    out = (
        "// <attention-playground>: the Attention Playground as one self-contained script.\n"
        "// Generated by build_wasm.sh from web/ (src/tools/bundle_element.py); do not edit.\n"
        "// Load it with <script src=\"attention-playground.js\" defer></script> or as a module.\n"
        "(() => {\n\"use strict\";\n"
        "const __scriptUrl = (typeof document !== 'undefined' && (document.currentScript?.src\n"
        "  || [...document.querySelectorAll('script[src]')].map((s) => s.src).find((u) => /attention-playground[^/]*\\.js(\\?|#|$)/.test(u))))\n"
        "  || (typeof location !== 'undefined' ? location.href : '');\n"
        "const __modules = Object.create(null);\n"
        + body
        + f"globalThis.AttentionPlayground = __modules[{json.dumps(entry_id)}].AttentionPlayground;\n"
        "})();\n")
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(out)


if __name__ == "__main__":
    main()
