#!/usr/bin/env python3
"""Rewrites a wasm module's pre-standard relaxed-SIMD FMA into f32x4.relaxed_madd.

    relaxed_opcodes.py IN.wasm OUT.wasm

Emscripten 3.1.6 (Debian 12) compiles __builtin_wasm_fma_f32x4 to the relaxed-SIMD
proposal's old opcode 0xfd 0xaf 0x01, which engines stopped accepting when the
proposal was finished; the same instruction is now f32x4.relaxed_madd, 0xfd 0x85
0x02 (three bytes too), computing a*b + c. Only the code section is rewritten, and
the result is checked: every rewritten site must disassemble as relaxed_madd
(wasm-objdump; a match inside an immediate or a constant would not) and the module
must validate with relaxed SIMD (wasm-validate). Exits non-zero otherwise.
"""
import subprocess
import sys

OLD = b'\xfd\xaf\x01'
NEW = b'\xfd\x85\x02'


def leb_u32(data, i):
    """Reads an unsigned LEB128 at i: (value, next index)."""
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def code_section(data):
    """The code section's (begin, end) byte range."""
    if data[:8] != b'\0asm\x01\0\0\0':
        sys.exit('relaxed_opcodes.py: not a wasm module (version 1)')
    i = 8
    while i < len(data):
        sid = data[i]
        size, j = leb_u32(data, i + 1)
        if sid == 10:
            return j, j + size
        i = j + size
    sys.exit('relaxed_opcodes.py: the module has no code section')


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    data = bytearray(open(src, 'rb').read())
    begin, end = code_section(data)
    sites = []
    i = data.find(OLD, begin, end)
    while i != -1:
        sites.append(i)
        data[i:i + 3] = NEW
        i = data.find(OLD, i + 3, end)
    if not sites:
        sys.exit(f'relaxed_opcodes.py: {src} has no fused multiply-add to rewrite (built without -mrelaxed-simd?)')
    open(dst, 'wb').write(data)
    subprocess.run(['wasm-validate', '--enable-exceptions', '--enable-relaxed-simd', dst], check=True)
    listing = subprocess.run(['wasm-objdump', '-d', dst], check=True, capture_output=True, text=True).stdout
    found = set()
    for line in listing.splitlines():
        if line.rstrip().endswith('f32x4.relaxed_madd'):
            found.add(int(line.split(':')[0].strip(), 16))
    if found != set(sites):
        sys.exit(f'relaxed_opcodes.py: {len(sites)} sites rewritten, {len(found)} disassemble as relaxed_madd, '
                 f'{len(set(sites) ^ found)} differ: a match was not an instruction')
    print(f'relaxed_opcodes.py: {dst}: {len(sites)} relaxed_madd')


if __name__ == '__main__':
    main()
