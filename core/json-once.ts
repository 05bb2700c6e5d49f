const texts = new WeakMap<object, string>();

/**
 * `JSON.stringify(value)`, computed once per object: for what the engine builds and never changes afterwards (a run's
 * system prompt, a round's tool definitions), which a round otherwise serialized up to three times (its context
 * estimate, its prompt digest, its calibration). The caller vouches that `value` is not changed after the first call.
 */
export function jsonOnce(value: object): string {
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    texts.set(value, text);
  }
  return text;
}

/** `JSON.stringify([first, second]).length`, from the two parts' cached texts (`jsonOnce`). */
export function pairJsonLength(first: object, second: object): number {
  return jsonOnce(first).length + jsonOnce(second).length + 3;
}
