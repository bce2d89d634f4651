// The command line the pretrained benchmarks share (bench/pretrained_node.mjs,
// bench/pretrained_page.mjs): the checkpoint folder first, then
// --lengths 16,128,512 --repeat 3 --skip a,b and each script's own --name value.

/** {dir, lengths, repeat, skip: Set, opt(name, fallback)} from process.argv. */
export function benchArgs(argv = process.argv.slice(2)) {
  const opt = (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
  return {
    dir: argv[0] ?? '/tmp/attn-gpt2-small',
    lengths: opt('lengths', '16,128,512').split(',').map(Number),
    repeat: Number(opt('repeat', '3')),
    skip: new Set(opt('skip', '').split(',').filter(Boolean)),
    opt,
  };
}
