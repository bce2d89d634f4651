#!/usr/bin/env python3
"""The language model's training text: WordNet's example sentences, each twice.

    models/make_corpus.py > models/wordnet-examples.txt          every example once (committed)
    models/make_corpus.py --twice > /tmp/wordnet-twice.txt        the training text: each line "S S"
    models/make_corpus.py --twice --from models/wordnet-examples.txt > /tmp/wordnet-twice.txt
    options: --wordnet DIR (default /usr/share/wordnet, Debian package wordnet-base)

WordNet 3.0 glosses end in quoted usage examples: `| a gloss; "she was able to
program her computer"; "able to swim"`. This script reads data.noun, data.verb,
data.adj and data.adv, takes every double-quoted example of every gloss (one
per line, inner whitespace collapsed), keeps the first copy of each (some
examples serve several senses) and writes them in a fixed pseudo-random order,
sorted by the SHA-1 of the sentence. The order matters: the text task
(src/train/tasks_text.cpp) holds out the last 10% of the words, so the part-of-speech
order would hold out only adverbs.

--twice writes each example twice on its line ("able to swim able to swim"):
a phrase said twice, so that a small model learns within minutes to copy (the
induction head the playground shows: the second copy looks at what followed the
first). Nothing else changes: case and punctuation are left to the task's
tokenizer. The output depends only on the input files. WordNet's licence
(permissive; keep its notice with any copy) is in models/WORDNET-LICENSE.
"""
import argparse
import hashlib
import os
import re
import sys

QUOTED = re.compile(r'"([^"]+)"')


def examples(path):
    with open(path, encoding="utf-8", errors="strict") as f:
        for line in f:
            if line.startswith("  "):  # the licence header
                continue
            bar = line.find(" | ")
            if bar < 0:
                continue
            for m in QUOTED.finditer(line[bar + 3:]):
                text = " ".join(m.group(1).split())
                if text:
                    yield text


def from_wordnet(root):
    seen = set()
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        path = os.path.join(root, "data." + pos)
        if not os.path.exists(path):
            sys.exit(f"make_corpus.py: {path} not found (apt-get install wordnet-base)")
        for text in examples(path):
            if text not in seen:
                seen.add(text)
                out.append(text)
    out.sort(key=lambda s: hashlib.sha1(s.encode("utf-8")).hexdigest())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wordnet", default="/usr/share/wordnet", help="WordNet's dict directory")
    ap.add_argument("--from", dest="source", help="read the examples, one per line, from this file instead")
    ap.add_argument("--twice", action="store_true", help="write each example twice on its line")
    args = ap.parse_args()
    if args.source:
        with open(args.source, encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
    else:
        lines = from_wordnet(args.wordnet)
    sys.stdout.write("".join((f"{s} {s}" if args.twice else s) + "\n" for s in lines))
    sys.stderr.write(f"make_corpus.py: {len(lines)} example sentences, {sum(len(s.split()) for s in lines)} words"
                     f"{', each twice' if args.twice else ''}\n")


if __name__ == "__main__":
    main()
