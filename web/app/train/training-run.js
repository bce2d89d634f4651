// One model in the training worker (worker.js) and everything about training it:
// the Trainer, whether it runs and to which step, the heads it ablates, the
// reports it has yet to send. worker.js makes a new TrainingRun for each model it
// adopts ('init', 'load') and drops the old one whole, so no value of one model's
// training can leak into the next.
//
// The loop trains in chunks of about CHUNK_MS and yields to the worker's message
// queue between chunks, so a pause takes effect after at most one chunk. It posts
// small messages a few times a second (never a whole trace per step); the
// messages are described in worker.js's header.

import { isSnapshotStep, nextSnapshotStep } from './timeline.js';
import { probeMessage, buffersOf } from './probe-messages.js';

const CHUNK_MS = 40;
const TICK_MS = 300;
const EARLY_STEPS = 300;
const RENDER_PAUSE_MS = 25;
const EARLY_EVERY = 10;
const LIVE_SAMPLES = 64;
/** Live evaluations take at most about 1/EVAL_SHARE of the worker's time. */
const EVAL_SHARE = 6;
/** The bigger evaluation when training pauses, and an ablation's while paused. */
export const FINAL_SAMPLES = 1024;
const SCORE_SAMPLES = 256;
/** Most steps between two reports when the pace is set ("watchable"): the maps change a little each frame. */
const WATCH_CHUNK = 3;

// A macrotask without the 4 ms clamp of nested timers: lets queued messages (pause) run.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldToQueue = () => new Promise((resolve) => {
  waiting.push(resolve);
  channel.port2.postMessage(0);
});

export class TrainingRun {
  /**
   * @param host the worker's own state: {gen, pace, nextEvalAt, post(msg, transfer), postError(where, e)}
   * @param trainer the model, already described to the page (its 'model' message)
   * @param probeOptions what it is probed on: {} (its task's probe) or {text} (a text model without its text)
   * @param cap the snapshot cap of its 'model' message
   */
  constructor(host, trainer, { probeOptions, cap }) {
    this.host = host;
    this.trainer = trainer;
    this.probeOptions = probeOptions;
    this.cap = cap;
    this.running = false;
    /** the step free training stops at (a link catching up), null = none */
    this.target = null;
    /** [[layer, head]] whose output the evaluations and predictions zero */
    this.ablate = [];
    this.perStepMs = 1;
    /** bumped to end the loop that is running: each loop knows its own id */
    this.loopId = 0;
    /** [[time, step]] of the last ~1.5 s, for the steps per second */
    this.rate = [];
    /** [time, step] the pace counts from */
    this.paceStart = null;
    this.pendingTrain = [];
    this.pendingSnapshots = [];
  }

  /** Training stops, a loop in flight ends without a report, and unsent reports are dropped. */
  stop() {
    this.running = false;
    this.loopId += 1;
    this.target = null;
    this.pendingTrain = [];
    this.pendingSnapshots = [];
  }

  // ---- probes, evaluations, reports ------------------------------------------------------

  /** The probe at the current step as a small message (+ the buffers to transfer). */
  probe(options = {}) {
    return probeMessage(this.trainer, { ...this.probeOptions, ...options });
  }

  evaluate(samples, heads = []) {
    const r = this.trainer.evaluate(heads.length ? { samples, ablate: heads } : { samples });
    return { step: this.trainer.stepCount, loss: r.loss, accuracy: r.accuracy, targets: r.targets, samples };
  }

  ablationReport(samples) {
    if (!this.ablate.length || !this.trainer.hasTask) return null;
    const r = this.evaluate(samples, this.ablate);
    const { msg } = this.probe({ ablate: this.ablate });
    return { step: r.step, heads: this.ablate, accuracy: r.accuracy, loss: r.loss, samples, predictions: Array.from(msg.predictions), correct: msg.correct };
  }

  /** The heads to ablate from now on; a head the model lacks is refused and the previous ones stay. */
  setAblate(heads) {
    const { layers, heads: perLayer } = this.trainer.config;
    for (const [l, h] of heads) {
      if (!(Number.isInteger(l) && Number.isInteger(h) && l >= 0 && h >= 0 && l < layers && h < perLayer)) {
        throw new RangeError(`head ${l}-${h} is not in this model of ${layers} layers \u00d7 ${perLayer} heads`);
      }
    }
    this.ablate = heads;
  }

  stepsPerSecond() {
    if (this.rate.length < 2) return 0;
    const [t0, s0] = this.rate[0];
    const [t1, s1] = this.rate[this.rate.length - 1];
    return t1 > t0 ? ((s1 - s0) * 1000) / (t1 - t0) : 0;
  }

  noteRate(now, step) {
    this.rate.push([now, step]);
    while (this.rate.length > 2 && now - this.rate[0][0] > 1500) this.rate.shift();
  }

  /** The live held-out evaluation, when it is due (its cost is bounded by EVAL_SHARE of the worker's time). */
  liveEvaluation() {
    const now = performance.now();
    if (now < this.host.nextEvalAt || !this.trainer.hasTask) return null;
    const heldout = this.evaluate(LIVE_SAMPLES);
    const ablation = this.ablationReport(LIVE_SAMPLES);
    const spent = performance.now() - now;
    this.host.nextEvalAt = performance.now() + Math.max(TICK_MS, EVAL_SHARE * spent) - TICK_MS / 2;
    return { heldout, ablation };
  }

  /** The step rows and snapshots gathered since the last report, handed over once. */
  takePending() {
    const snapshots = this.pendingSnapshots;
    this.pendingSnapshots = [];
    const train = this.pendingTrain;
    this.pendingTrain = [];
    return { snapshots, train };
  }

  sendProgress() {
    const { msg } = this.probe();
    const { snapshots, train } = this.takePending();
    const t = this.trainer;
    this.host.post({
      type: 'progress',
      gen: this.host.gen,
      step: t.stepCount,
      target: this.target,
      running: this.running,
      stepsPerSecond: this.stepsPerSecond(),
      train,
      ...this.liveEvaluation(),
      live: msg,
      snapshots,
      cap: this.cap,
    }, [...buffersOf(msg), ...snapshots.flatMap(buffersOf)]);
  }

  sendPaused() {
    const { msg } = this.probe();
    const t = this.trainer;
    let headScores = null;
    try {
      if (t.hasTask) headScores = t.headScores(SCORE_SAMPLES);
    } catch {
      headScores = null;
    }
    const { snapshots, train } = this.takePending();
    this.host.post({
      type: 'paused',
      gen: this.host.gen,
      step: t.stepCount,
      target: this.target,
      train,
      snapshots,
      heldout: t.hasTask ? this.evaluate(FINAL_SAMPLES) : null,
      ablation: this.ablationReport(FINAL_SAMPLES),
      headScores,
      live: msg,
      cap: this.cap,
    }, [...buffersOf(msg), ...snapshots.flatMap(buffersOf)]);
  }

  /** The 'ablation' reply to 'ablate' while paused. */
  sendAblation() {
    const report = this.ablationReport(FINAL_SAMPLES);
    this.host.post({ type: 'ablation', gen: this.host.gen, step: this.trainer.stepCount, ablation: report, heldout: this.evaluate(FINAL_SAMPLES) });
  }

  snapshotIfDue() {
    if (isSnapshotStep(this.trainer.stepCount, this.cap)) this.pendingSnapshots.push(this.probe().msg);
  }

  // ---- training ------------------------------------------------------------------------------

  /** n steps, cut at the next snapshot step (so every snapshot step is visited). */
  chunk(n) {
    const t = this.trainer;
    const s = t.stepCount;
    let k = Math.min(n, nextSnapshotStep(s, this.cap) - s);
    if (this.target != null) k = Math.min(k, this.target - s);
    if (k <= 0) return null;
    const t0 = performance.now();
    const report = t.step(k);
    const dt = performance.now() - t0;
    this.perStepMs = 0.7 * this.perStepMs + 0.3 * (dt / k);
    this.pendingTrain.push([report.step, report.loss, report.accuracy]);
    this.snapshotIfDue();
    return report;
  }

  /** After a failure: training stops, the page hears what failed and, when the model can
   * still be probed, gets the 'paused' report of where it stopped. */
  stopOnError(where, e) {
    this.running = false;
    this.target = null;
    this.host.postError(where, e);
    try {
      this.sendPaused();
    } catch {
      // the error reply has said what happened; the page stays usable without this report
    }
  }

  /** Free training (to `target` when given), unless it cannot train (no task) or already runs. */
  play(target = null) {
    if (!this.trainer.hasTask) return;
    this.target = target;
    if (this.running) return;
    this.running = true;
    this.loop();
  }

  pause() {
    this.running = false;
  }

  /** The pace counts again from now (the page changed it). */
  restartPace() {
    this.paceStart = null;
  }

  /** n steps at once while paused, then the 'paused' report. */
  stepBy(n) {
    if (this.running) return;
    this.target = null;
    try {
      const goal = this.trainer.stepCount + n;
      while (this.trainer.stepCount < goal) this.chunk(goal - this.trainer.stepCount);
    } catch (e) {
      this.stopOnError('train', e);
      return;
    }
    this.sendPaused();
  }

  async loop() {
    const id = ++this.loopId;
    const t = this.trainer;
    try {
      let lastTick = performance.now();
      let lastTickStep = t.stepCount;
      this.rate = [[lastTick, t.stepCount]];
      this.paceStart = null;
      while (this.running && id === this.loopId) {
        if (this.target != null && t.stepCount >= this.target) break;
        let want = Math.max(1, Math.min(5000, Math.round(CHUNK_MS / Math.max(this.perStepMs, 1e-3))));
        const pace = this.host.pace;
        const paced = pace > 0 && this.target == null;
        if (paced) {
          // watchable: the steps due at `pace` steps/s since the pace started, WATCH_CHUNK at most, then a report
          const time = performance.now();
          if (!this.paceStart) this.paceStart = [time, t.stepCount];
          const due = Math.floor(((time - this.paceStart[0]) * pace) / 1000) - (t.stepCount - this.paceStart[1]);
          if (due <= 0) {
            await new Promise((resolve) => setTimeout(resolve, 1000 / pace));
            continue;
          }
          want = Math.min(due, WATCH_CHUNK);
        } else this.paceStart = null;
        this.chunk(want);
        const now = performance.now();
        this.noteRate(now, t.stepCount);
        // early in a run the curves change fastest: report at least every EARLY_EVERY steps there
        const s = t.stepCount;
        if (paced || now - lastTick >= TICK_MS || (s < EARLY_STEPS && s - lastTickStep >= EARLY_EVERY)) {
          lastTick = now;
          lastTickStep = s;
          this.sendProgress();
          // leave the core to the page while it draws this report (on a 2-core machine the
          // page's frame otherwise waits for the CPU): costs RENDER_PAUSE_MS per TICK_MS
          await new Promise((resolve) => setTimeout(resolve, RENDER_PAUSE_MS));
        }
        await yieldToQueue();
      }
      if (id !== this.loopId) return;
      this.running = false;
      if (this.target != null && t.stepCount >= this.target) this.target = null;
      this.sendPaused();
    } catch (e) {
      if (id === this.loopId) this.stopOnError('train', e);
    }
  }
}
