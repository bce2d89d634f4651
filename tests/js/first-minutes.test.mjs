// The pure pieces behind issue #40's open items: the Hub mirror's address
// (source.js parseHubMirror, the link's hub= field), what the page says of a
// pretrained model's weights (hub.js weightsAbout), and the head and query a
// loaded model opens on (featured.js).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHubMirror, DEFAULT_HUB_BASE } from '../../web/app/hub/source.js';
import { weightsAbout } from '../../web/app/hub/hub.js';
import { parseHash, serializeState, normalizeState } from '../../web/app/playground/state.js';
import { featuredHead } from '../../web/app/playground/featured.js';

test('parseHubMirror: https anywhere, http only on this computer, a plain address; empty is the Hub', () => {
  assert.deepEqual(parseHubMirror(''), { base: DEFAULT_HUB_BASE });
  assert.deepEqual(parseHubMirror(' https://hf-mirror.example/ '), { base: 'https://hf-mirror.example' });
  assert.deepEqual(parseHubMirror('https://example.org/hub/'), { base: 'https://example.org/hub' });
  assert.deepEqual(parseHubMirror('http://localhost:8080'), { base: 'http://localhost:8080' });
  assert.deepEqual(parseHubMirror('http://127.0.0.1:9/'), { base: 'http://127.0.0.1:9' });
  assert.deepEqual(parseHubMirror('http://[::1]:9'), { base: 'http://[::1]:9' });
  for (const bad of ['http://example.org', 'ftp://x.org', 'javascript:alert(1)', 'hub.example', 'https://u:p@x.org', 'https://x.org/?a=1', 'https://x.org/#a']) {
    assert.match(parseHubMirror(bad).error ?? '', /address/, bad);
  }
});

test('the link keeps a Hub mirror (hub=) and refuses one that is not https or local, with a notice', () => {
  const { state, problems } = parseHash('#model=hf:org/m&hub=https%3A%2F%2Fmirror.example%2F');
  assert.equal(state.hub, 'https://mirror.example');
  assert.deepEqual(problems, []);
  assert.match(serializeState(state), /(^|&)hub=https%3A%2F%2Fmirror\.example(&|$)/);
  assert.doesNotMatch(serializeState(normalizeState({})), /hub=/, 'the page\u2019s own Hub writes nothing');
  const bad = parseHash('#hub=http%3A%2F%2Fevil.example');
  assert.equal(bad.state.hub, '');
  assert.match(bad.problems[0], /^Hub mirror .* must be an https address .*; using the default$/);
  assert.equal(normalizeState({ hub: 'http://evil.example' }).hub, '');
});

test('weightsAbout: only a known trained checkpoint is said to be trained; any other says what is known', () => {
  assert.match(weightsAbout('hf:openai-community/gpt2'), /^openai-community\/gpt2: weights its authors trained on large amounts of text/);
  assert.match(weightsAbout('hf:distilgpt2'), /^distilgpt2: weights its authors trained/, 'a legacy id is its organisation\u2019s model');
  assert.match(weightsAbout('hf:HuggingFaceTB/SmolLM2-135M'), /weights its authors trained/);
  for (const name of ['hf:tiny/gpt2', 'url:http://127.0.0.1:1/m/', 'local:my model']) {
    const text = weightsAbout(name);
    assert.doesNotMatch(text, /learned by others|trained on large amounts/, name);
    assert.match(text, /do not say how they were made \(trained, or random as in a test checkpoint\)/, name);
  }
  assert.match(weightsAbout('hf:tiny/gpt2'), /\(tiny\/gpt2 on the Hub\)/);
  assert.match(weightsAbout('hf:openai-community/gpt2', 'http://127.0.0.1:9'), /^openai-community\/gpt2, read from http:\/\/127\.0\.0\.1:9, a copy of the Hub: .*whether this copy holds the same, its files do not say/);
  assert.match(weightsAbout('local:my model'), /\(your files\)/);
});

/** One head's T×T weights from rows. */
const head = (rows) => ({ weights: { rows: rows.length, cols: rows.length, data: Float32Array.from(rows.flat()) } });

test('featuredHead: the last word\u2019s row, in the head that puts the most on one earlier token past the first', () => {
  const sink = head([[1, 0, 0, 0], [1, 0, 0, 0], [0.9, 0.1, 0, 0], [0.97, 0.01, 0.01, 0.01]]);
  const self = head([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0.1, 0.1, 0.1, 0.7]]);
  const looks = head([[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.2, 0.3, 0.5, 0], [0.2, 0.6, 0.1, 0.1]]);
  const words = [0, 1, 2, 3].map((start) => ({ start }));
  assert.deepEqual(featuredHead([{ heads: [sink, self] }, { heads: [sink, looks] }], words), { layer: 1, head: 1, query: 3, key: 1, weight: Float32Array.of(0.6)[0] });
  // BERT's [SEP] (start −1) is not the query: the last word before it is
  const bert = [{ start: -1 }, { start: 0 }, { start: 4 }, { start: -1 }];
  const f = featuredHead([{ heads: [looks] }], bert);
  assert.equal(f.query, 2);
  assert.equal(f.key, 1);
  assert.equal(featuredHead([{ heads: [looks] }], words.slice(0, 2)), null, 'two tokens say nothing');
  assert.equal(featuredHead([{ heads: [{ weights: null }] }], words), null, 'a layer without weights');
});
