#pragma once
// Every exported function calls the core inside guarded(), which catches every
// C++ exception and returns {__attnError: {errorType, errorMessage}} instead.
// web/engine.js turns that record into a real JS error (RangeError / TypeError
// with the C++ message). The error is raised in JS, not thrown through the
// wasm frames, because a JS exception unwinding wasm frames skips their
// destructors: every argument string would leak.

#include "core/types.hpp"

#include <emscripten/val.h>

#include <exception>
#include <new>
#include <string>

namespace attn::js {

template <typename F>
emscripten::val guarded(F&& body) {
    // Every C++ object, the exception included, is destroyed before this
    // returns; the caller sees either the result or the error record.
    const char* type = "RangeError";
    std::string message;
    try {
        return body();
    } catch (const Error& e) {
        message = e.what();
        if (e.kind() == Error::Kind::type) type = "TypeError";
    } catch (const std::bad_alloc&) {
        message = "out of memory: the requested sizes are too large for this page";
    } catch (const std::exception& e) {
        message = std::string("internal error: ") + e.what();
        type = "Error";
    }
    emscripten::val failure = emscripten::val::object();
    failure.set("errorType", std::string(type));
    failure.set("errorMessage", message);
    emscripten::val out = emscripten::val::object();
    out.set("__attnError", failure);
    return out;
}

}  // namespace attn::js
