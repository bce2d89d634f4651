// When free training stops by itself ("Stop at" in the transport): a pure rule over
// the live held-out checks since ▶ was pressed. It never applies while a link
// retrains to its step (that has its own target).
//
//   const why = stopReason(checks, 'plateau'); // checks: [{step, accuracy, loss}], oldest first
//   if (why) pause(); // "held-out accuracy 100% for the last 5 checks"

/** Checks at 100% held-out accuracy that stop a run at its goal. */
export const GOAL_CHECKS = 5;
/** Checks without a new best held-out accuracy or loss that count as a plateau. */
export const PLATEAU_CHECKS = 30;
/** A new best: accuracy up by this much, or loss down by this share. */
const ACC_GAIN = 0.005;
const LOSS_GAIN = 0.01;

/** Why training should stop now (a phrase for "Stopped at step N: …"), or null. rule: 'plateau' | 'goal' | 'off'. */
export function stopReason(checks, rule) {
  if (rule === 'off' || !Array.isArray(checks)) return null;
  const n = checks.length;
  if (n >= GOAL_CHECKS && checks.slice(n - GOAL_CHECKS).every((c) => c.accuracy >= 1)) {
    return `held-out accuracy 100% for the last ${GOAL_CHECKS} checks`;
  }
  if (rule !== 'plateau' || n <= PLATEAU_CHECKS) return null;
  const before = checks.slice(0, n - PLATEAU_CHECKS);
  const recent = checks.slice(n - PLATEAU_CHECKS);
  const bestAcc = Math.max(...before.map((c) => c.accuracy));
  const bestLoss = Math.min(...before.map((c) => c.loss));
  const accUp = recent.some((c) => c.accuracy >= bestAcc + ACC_GAIN);
  const lossDown = recent.some((c) => c.loss <= bestLoss * (1 - LOSS_GAIN));
  if (accUp || lossDown) return null;
  return `held-out accuracy and loss have not improved for the last ${PLATEAU_CHECKS} checks`;
}

/** Held-out checks the overfitting line looks back over. */
export const OVERFIT_CHECKS = 5;

/** The overfitting line over the last checks ({step, held, train}: held-out loss, mean training-batch
 * loss since the check before), or null: held-out loss rose (by 5%, at most one dip) while training loss fell (by 5%). */
export function overfitNote(history) {
  if (!Array.isArray(history) || history.length < OVERFIT_CHECKS) return null;
  const w = history.slice(-OVERFIT_CHECKS);
  const first = w[0];
  const last = w[w.length - 1];
  let dips = 0;
  for (let i = 1; i < w.length; i++) if (w[i].held < w[i - 1].held) dips += 1;
  const heldUp = last.held > first.held * 1.05 && dips <= 1;
  const trainDown = last.train < first.train * 0.95;
  if (!heldUp || !trainDown) return null;
  const f = (x) => x.toPrecision(2);
  return `Overfitting: held-out loss rose ${f(first.held)} \u2192 ${f(last.held)} over the last ${OVERFIT_CHECKS} checks while training loss fell ${f(first.train)} \u2192 ${f(last.train)}.`;
}
