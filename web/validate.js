// The one validator of the JS API's own inputs (engine.js and trainer.js both
// use it): numbers, booleans, choices and text, each checked by one rule and
// refused with a coded error (err.code, one of the C++ attn::Error::Code names,
// ENGINE_CONSTANTS.errorCodes). Every text that goes to wasm passes checkText
// first: Emscripten's string conversion would otherwise encode a lone UTF-16
// surrogate together with the next character ("\udc00was" → "𐁷as").

/** An error of class Type with err.code = code: what every JS-side check of the engine throws. */
export function codedError(Type, code, message) {
  const error = new Type(message);
  error.code = code;
  return error;
}

/** 'null', 'an array' or typeof: the word an error message uses for a wrong value. */
export function typeName(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

/** A whole number from min to max (bad_input). */
export function checkInteger(value, name, min, max) {
  if (typeof value !== 'number') throw codedError(TypeError, 'bad_input', `${name} must be a number, got ${typeName(value)}`);
  if (!Number.isInteger(value)) throw codedError(RangeError, 'bad_input', `${name} must be a whole number, got ${value}`);
  if (value < min || value > max) throw codedError(RangeError, 'bad_input', `${name} ${value} is outside the range ${min} to ${max}`);
  return value;
}

/** A finite number from min to max (bad_input). */
export function checkNumber(value, name, min, max) {
  if (typeof value !== 'number') throw codedError(TypeError, 'bad_input', `${name} must be a number, got ${typeName(value)}`);
  if (!Number.isFinite(value) || value < min || value > max) throw codedError(RangeError, 'bad_input', `${name} ${value} is outside the range ${min} to ${max}`);
  return value;
}

export function checkBoolean(value, name) {
  if (typeof value !== 'boolean') throw codedError(TypeError, 'bad_input', `${name} must be true or false, got ${typeName(value)}`);
  return value;
}

/** One of the strings in choices (code: bad_input unless given). */
export function checkChoice(value, name, choices, code = 'bad_input') {
  if (typeof value !== 'string') throw codedError(TypeError, code, `${name} must be a string, got ${typeName(value)}`);
  if (!choices.includes(value)) throw codedError(RangeError, code, `${name} "${value}" is not one of ${choices.join(', ')}`);
  return value;
}

/**
 * A string of valid Unicode (no lone UTF-16 surrogate: TypeError bad_text, naming
 * the index) of at most maxChars UTF-16 code units and maxBytes UTF-8 bytes
 * (RangeError too_many_tokens), checked before anything is copied into wasm
 * memory (which never shrinks). Returns the text.
 */
export function checkText(text, what, { maxChars = Infinity, maxBytes = Infinity } = {}) {
  if (typeof text !== 'string') throw codedError(TypeError, 'bad_input', `${what} must be a string, got ${typeName(text)}`);
  if (text.length > maxChars) throw codedError(RangeError, 'too_many_tokens', `${what} has ${text.length.toLocaleString('en-US')} characters, above the limit of ${maxChars.toLocaleString('en-US')}`);
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      bytes += 1;
    } else if (c < 0x800) {
      bytes += 2;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) throw loneSurrogate(what, i);
      bytes += 4;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      throw loneSurrogate(what, i);
    } else {
      bytes += 3;
    }
  }
  if (bytes > maxBytes) throw codedError(RangeError, 'too_many_tokens', `${what} is ${bytes} bytes of UTF-8, above the limit of ${maxBytes} bytes`);
  return text;
}

function loneSurrogate(what, i) {
  return codedError(TypeError, 'bad_text', `${what} has an unpaired UTF-16 surrogate at index ${i}, which is not valid Unicode`);
}
