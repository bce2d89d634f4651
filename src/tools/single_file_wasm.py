#!/usr/bin/env python3
"""Writes out the wasm module that an Emscripten -sSINGLE_FILE=1 glue carries as base64.

    single_file_wasm.py GLUE.js OUT.wasm

The glue holds it as one data URI, wasmBinaryFile="data:application/octet-stream;base64,…"
(Emscripten 3.1.6). build_wasm.sh's scalar and relaxed flavours link only their Node glue
(the one the tests and the benchmarks load) and take the module out of it here, instead of a
second link for a browser glue and its .wasm. Exits non-zero unless the glue holds exactly one
such URI and it decodes to a wasm module (version 1).
"""
import base64
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    text = open(src, encoding='utf-8').read()
    found = re.findall(r'"data:application/octet-stream;base64,([A-Za-z0-9+/=]+)"', text)
    if len(found) != 1:
        sys.exit(f'single_file_wasm.py: {src} holds {len(found)} base64 wasm data URIs, not one (not a SINGLE_FILE glue?)')
    data = base64.b64decode(found[0], validate=True)
    if data[:8] != b'\0asm\x01\0\0\0':
        sys.exit(f'single_file_wasm.py: the data URI of {src} is not a wasm module (version 1)')
    open(dst, 'wb').write(data)


if __name__ == '__main__':
    main()
