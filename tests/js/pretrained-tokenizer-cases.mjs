// Texts for the GPT-2 tokenizer tests (not a test file itself): hand-picked
// cases and random texts built from pieces of many kinds, with a fixed seed.
// Left out on purpose, where the JavaScript reference (gpt-3-encoder, /\s/u)
// and GPT-2's Python encoder (`regex`, \s = White_Space) disagree: U+FEFF and
// U+0085; and characters assigned after Unicode 14 (our tables' version).

import { prng } from './helpers.mjs';

export const CASES = [
  'Hello world', ' Hello world', 'hello world', 'HELLO WORLD', 'Hello, world!',
  "I'm sure they'll say it's what we've done, isn't it? We'd known; you're right.",
  "DON'T SHOUT: 'S 'T 'RE", "rock'n'roll ''s 's",
  'a  b   c    d', '   leading spaces', 'trailing spaces   ', ' ', '  ', '\t', '\n', '\n\n\n',
  'line one\nline two\r\nline three', 'tab\tseparated\tvalues', 'mixed \t\n whitespace \n\t here',
  '12345 678 9.99 1,000,000 0x1F 3rd 2nd', '½ ¾ ² ³ ٣ ४ ๕', '3.14159265358979',
  'Ünïcödé àccénts çà et là', 'Le cafe\u0301 est nai\u0308ve', 'ÆØÅ æøå ß ẞ',
  'Привет, мир! Как дела?', 'Γειά σου Κόσμε', 'שלום עולם', 'مرحبا بالعالم', 'नमस्ते दुनिया',
  '你好，世界！我喜欢猫。', '猫が好きです。東京タワー', '나는 고양이를 좋아해', 'สวัสดีครับ',
  '😀 😃 😄 😁', 'The 🐈‍⬛ met 👩‍👩‍👧‍👦', 'Nice 👍🏽!', 'Flags 🇫🇷🇩🇪', 'I ❤️ tea ☕️',
  '𝐀𝐁𝐂 𐌰𐌱𐌲', '𠮷野家', 'a\u200Db', 'non\u00A0breaking\u3000space\u2003em',
  '!!!???...', '(parens) [brackets] {braces} <angles>', '"double" “curly” ‘single’ «guillemets»',
  '#hashtag @mention $100 %50 ^caret &amp *star', 'email@example.com https://example.com/path?q=1',
  'snake_case camelCase PascalCase kebab-case', '----====____', '    def f(x):\n        return x',
  'x = {"a": [1, 2, 3]}', '\u0000\u0001\u0007\u001b', 'ctrl\u007fdel', '\u2028\u2029',
];

const PIECES = [
  'hello', 'World', 'the', ' ', '  ', '   ', '\t', '\n', '\r\n', "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'",
  "n't", '0', '42', '3.14', '1,000', '½', 'é', 'e\u0301', 'ß', 'Ω', 'Привет', 'мир', 'γεια', 'שלום', 'مرحبا',
  '你好', '世界', '猫', 'が', 'カタカナ', '한국어', 'ไทย', '😀', '👍🏽', '🐈‍⬛', '🇫🇷', '❤️', '𝐀', '𠮷', '!', '?',
  '.', ',', '...', '-', '—', '(', ')', '"', '“', '”', '#', '@', '$', '%', '&', '*', '_', '/', '\\', '|', '~', '`',
  '\u00A0', '\u3000', '\u2003', '\u200D', 'ABC', 'xyz', 'Zürich', 'naïve', 'ﬁ', 'Ⅻ', '①', '٣',
];

/** `count` random texts of 1 to 12 pieces, the same on every run (seed 2202). */
export function randomTexts(count, seed = 2202) {
  const rand = prng(seed);
  const texts = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rand() * 12);
    let s = '';
    for (let k = 0; k < n; k++) s += PIECES[Math.floor(rand() * PIECES.length)];
    texts.push(s);
  }
  return texts;
}
